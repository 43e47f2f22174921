// test_swsearch_gpu.cpp: the swsearch GPU score engine (src/swsearch/cuda) against the definition,
// sw::reference::pass's local score (src/sw/reference.hpp), bit for bit: random sequences of every length
// class (each kernel shape, its width boundaries, multi-tile lengths), zero-length and one-residue
// sequences, real proteins (DB20k x QUERY500 sequences), DNA scoring, every built-in matrix with gap
// costs down to 0/1, 16-bit saturation (rescored wider), engine reuse across databases and engines on every
// visible device. Label gpu; skipped without a usable GPU (always in builds without CUDA).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "protein_fasta.hpp"
#include "sw/model.hpp"
#include "sw/reference.hpp"
#include "sw/simd/pass.hpp"
#include "swsearch/engine.hpp"
#include "swsearch/gpu_plan.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::swsearch {
namespace {

int first_gpu(std::string* why) {
  const DeviceProbe probe = probe_devices();
  if (probe.devices.empty()) {
    *why = probe.unavailable_reason;
    return -1;
  }
  return probe.devices.front().id;
}

#define REQUIRE_GPU(dev)                 \
  std::string dev##_why;                 \
  const int dev = first_gpu(&dev##_why); \
  if (dev < 0) GTEST_SKIP() << "no usable GPU: " << dev##_why

struct Db {
  std::vector<std::uint8_t> residues;
  std::vector<std::uint64_t> offsets{0};
  void add(std::span<const std::uint8_t> s) {
    residues.insert(residues.end(), s.begin(), s.end());
    offsets.push_back(residues.size());
  }
  DbBatch batch() const { return DbBatch{residues, offsets}; }
};

std::vector<std::uint8_t> random_seq(std::mt19937_64& rng, std::size_t n, int codes) {
  std::uniform_int_distribution<int> d(0, codes - 1);
  std::vector<std::uint8_t> s(n);
  for (auto& c : s) c = static_cast<std::uint8_t>(d(rng));
  return s;
}

// A mutated copy of s (substitutions and short indels), so scores are high and alignments gapped.
std::vector<std::uint8_t> homolog(std::mt19937_64& rng, std::span<const std::uint8_t> s, int codes) {
  std::uniform_int_distribution<int> pct(0, 99), code(0, codes - 1), len(1, 6);
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int r = pct(rng);
    if (r < 15) {
      out.push_back(static_cast<std::uint8_t>(code(rng)));
    } else if (r < 17) {
      for (int k = len(rng); k > 0; --k) out.push_back(static_cast<std::uint8_t>(code(rng)));
      out.push_back(s[i]);
    } else if (r < 19) {
      i += static_cast<std::size_t>(len(rng));
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

int reference_score(const sw::PassModel& model, std::span<const std::uint8_t> q,
                    std::span<const std::uint8_t> t) {
  if (q.empty() || t.empty()) return 0;
  return sw::reference::pass(model, q, t).score;
}

// Scores every query against db on the engine and compares with the reference (SIMD pass for speed on
// long pairs; the SIMD tier is itself held to the reference by tests/sw).
void expect_engine_exact(ScoreEngine& engine, const sw::PassModel& model, const Db& db,
                         const std::vector<std::vector<std::uint8_t>>& queries, bool use_simd = true) {
  engine.set_database(db.batch());
  const DbBatch batch = db.batch();
  sw::simd::Workspace ws;
  std::vector<std::int32_t> got(batch.size());
  std::vector<std::vector<std::int32_t>> wants(queries.size());
  for (std::size_t qi = 0; qi < queries.size(); ++qi) {
    engine.scores(queries[qi], got);
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const auto t = batch.sequence(k);
      const int want = t.empty()  ? 0
                       : use_simd ? sw::simd::pass(model, queries[qi], t, ws).score
                                  : reference_score(model, queries[qi], t);
      wants[qi].push_back(want);
      ASSERT_EQ(got[k], want) << "query " << qi << " (length " << queries[qi].size() << ") vs sequence " << k
                              << " (length " << t.size() << ")";
    }
  }
  // Two queries at once (the query-stationary kernels): every query once in each half, paired with the
  // next one (mixed lengths: the shorter query's rows past its end are padding).
  std::vector<std::int32_t> got_b(batch.size());
  for (std::size_t qa = 0; qa < queries.size(); ++qa) {
    const std::size_t qb = (qa + 1) % queries.size();
    engine.scores2(queries[qa], queries[qb], got, got_b);
    for (std::size_t k = 0; k < batch.size(); ++k) {
      ASSERT_EQ(got[k], wants[qa][k])
          << "pair (" << qa << ", " << qb << "): query " << qa << " (length " << queries[qa].size()
          << ") vs sequence " << k << " (length " << batch.length(k) << ")";
      ASSERT_EQ(got_b[k], wants[qb][k])
          << "pair (" << qa << ", " << qb << "): query " << qb << " (length " << queries[qb].size()
          << ") vs sequence " << k << " (length " << batch.length(k) << ")";
    }
  }
}

sw::PassModel protein_model(const char* matrix = "BLOSUM62", int open = 11, int extend = 1) {
  return sw::PassModel::make(ScoringMatrix::builtin(matrix), GapCosts{open, extend}, sw::Mode::kLocal);
}

TEST(SwsearchGpu, RandomLengthsCoverEveryShapeAndBoundary) {
  REQUIRE_GPU(dev);
  const sw::PassModel model = protein_model();
  std::mt19937_64 rng(7);
  Db db;
  std::vector<std::size_t> lengths = {0, 1, 2, 3, 0, 1};
  for (const gpu::Shape s : gpu::kShapes)
    for (int d : {-1, 0, 1}) lengths.push_back(static_cast<std::size_t>(s.width() + d));
  for (std::size_t L : {2047u, 2048u, 2049u, 3000u, 4100u}) lengths.push_back(L);
  std::uniform_int_distribution<std::size_t> any(1, 1500);
  for (int k = 0; k < 300; ++k) lengths.push_back(any(rng));
  const auto base = random_seq(rng, 5000, 20);
  for (std::size_t L : lengths) {
    if (L > 0 && (L % 3) == 0) {  // a third related to the base sequence: high, gapped scores
      auto h = homolog(rng, std::span<const std::uint8_t>(base).subspan(0, std::min(L, base.size())), 20);
      db.add(h);
    } else {
      db.add(random_seq(rng, L, 25));
    }
  }
  std::vector<std::vector<std::uint8_t>> queries;
  for (std::size_t m : {1u, 2u, 5u, 31u, 32u, 33u, 144u, 375u, 1000u})
    queries.push_back(random_seq(rng, m, 25));
  queries.push_back(std::vector<std::uint8_t>(base.begin(), base.begin() + 700));
  auto engine = make_gpu_engine(model, dev);
  expect_engine_exact(*engine, model, db, queries);
  EXPECT_GT(engine->stats().cells, 0u);
}

TEST(SwsearchGpu, BorderBudgetRunsFewerBlocksWithTheSameScores) {
  // The multi-tile kernels (queries longer than one tile) keep a border column per resident group; with
  // a budget below the whole grid's need they run on fewer blocks, looping over the work: one block
  // (a budget of 1 byte) and a few (64 KiB) give the same scores as the full grid.
  REQUIRE_GPU(dev);
  const sw::PassModel model = protein_model();
  std::mt19937_64 rng(17);
  Db db;
  const auto base = random_seq(rng, 6000, 20);
  std::uniform_int_distribution<std::size_t> any(1, 800);
  for (int k = 0; k < 600; ++k) db.add(random_seq(rng, any(rng), 25));
  for (std::size_t L : {1500u, 3000u, 6000u})
    db.add(homolog(rng, std::span<const std::uint8_t>(base).subspan(0, L), 20));
  std::vector<std::vector<std::uint8_t>> queries;
  queries.push_back(std::vector<std::uint8_t>(base.begin(), base.begin() + 2500));  // multi-tile, homolog
  queries.push_back(random_seq(rng, 1300, 25));
  queries.push_back(random_seq(rng, 700, 25));
  for (const std::size_t budget : {std::size_t{1}, std::size_t{64} << 10}) {
    auto engine = make_gpu_engine(model, dev, budget);
    expect_engine_exact(*engine, model, db, queries);
  }
}

TEST(SwsearchGpu, SmallPairsMatchTheReferenceItself) {
  REQUIRE_GPU(dev);
  const sw::PassModel model = protein_model("BLOSUM62", 0, 1);  // O = 0: the longest gap chains
  std::mt19937_64 rng(11);
  Db db;
  for (int k = 0; k < 400; ++k) db.add(random_seq(rng, static_cast<std::size_t>(k % 97), 27));
  std::vector<std::vector<std::uint8_t>> queries;
  for (std::size_t m : {1u, 7u, 64u, 90u}) queries.push_back(random_seq(rng, m, 27));
  auto engine = make_gpu_engine(model, dev);
  expect_engine_exact(*engine, model, db, queries, /*use_simd=*/false);
}

TEST(SwsearchGpu, EveryBuiltinMatrixAndGapCosts) {
  REQUIRE_GPU(dev);
  std::mt19937_64 rng(3);
  Db db;
  const auto base = random_seq(rng, 800, 20);
  for (int k = 0; k < 200; ++k) {
    std::uniform_int_distribution<std::size_t> len(1, 800);
    if (k % 2 == 0)
      db.add(homolog(rng, std::span<const std::uint8_t>(base).subspan(0, len(rng)), 20));
    else
      db.add(random_seq(rng, len(rng), 25));
  }
  const std::vector<std::vector<std::uint8_t>> queries = {
      std::vector<std::uint8_t>(base.begin(), base.begin() + 300), random_seq(rng, 120, 25)};
  const std::pair<int, int> gaps[] = {{11, 1}, {10, 2}, {0, 1}, {1, 0}, {5, 5}};
  int g = 0;
  for (const std::string_view name : ScoringMatrix::builtin_names()) {
    const auto [open, extend] = gaps[g++ % 5];
    const sw::PassModel model = protein_model(std::string(name).c_str(), open, extend);
    auto engine = make_gpu_engine(model, dev);
    SCOPED_TRACE(std::string(name) + " " + std::to_string(open) + "/" + std::to_string(extend));
    expect_engine_exact(*engine, model, db, queries);
  }
}

TEST(SwsearchGpu, DnaScoring) {
  REQUIRE_GPU(dev);
  const sw::PassModel model =
      sw::PassModel::make(ScoringMatrix::dna(2, -3), GapCosts{5, 2}, sw::Mode::kLocal);
  std::mt19937_64 rng(5);
  const Alphabet dna(AlphabetKind::kDna);
  Db db;
  const auto base = random_seq(rng, 3000, 4);
  for (int k = 0; k < 150; ++k) {
    std::uniform_int_distribution<std::size_t> len(1, 3000);
    if (k % 2 == 0)
      db.add(homolog(rng, std::span<const std::uint8_t>(base).subspan(0, len(rng)), 4));
    else
      db.add(random_seq(rng, len(rng), dna.size()));
  }
  const std::vector<std::vector<std::uint8_t>> queries = {
      std::vector<std::uint8_t>(base.begin() + 100, base.begin() + 1600), random_seq(rng, 200, dna.size())};
  auto engine = make_gpu_engine(model, dev);
  expect_engine_exact(*engine, model, db, queries);
}

TEST(SwsearchGpu, SaturationIsRescoredWider) {
  REQUIRE_GPU(dev);
  const sw::PassModel model = protein_model();
  std::mt19937_64 rng(9);
  // W scores 11 against itself: 4000 W's score 44000 > 32767, and 2900 score 31900 (just below kSat16).
  const std::uint8_t w = *Alphabet(AlphabetKind::kProtein).code('W');
  Db db;
  db.add(std::vector<std::uint8_t>(4000, w));
  db.add(std::vector<std::uint8_t>(2900, w));
  db.add(std::vector<std::uint8_t>(2910, w));
  db.add(random_seq(rng, 4000, 20));
  const std::vector<std::vector<std::uint8_t>> queries = {std::vector<std::uint8_t>(4500, w)};
  auto engine = make_gpu_engine(model, dev);
  expect_engine_exact(*engine, model, db, queries);
  // 4000 and 2910 W's (32010 >= kSat16): 2 by scores(), then 4 by scores2() with the query in both halves.
  EXPECT_EQ(engine->stats().overflow_rescored, 6u);
}

TEST(SwsearchGpu, RealProteinsAndEngineReuse) {
  REQUIRE_GPU(dev);
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const auto records = test::read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 3000);
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const auto qrecs = test::read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), 4, 100);
  std::vector<std::vector<std::uint8_t>> queries;
  for (const auto& r : qrecs) queries.push_back(r.codes);
  const sw::PassModel model = protein_model();
  auto engine = make_gpu_engine(model, dev);
  Db first, second;
  for (std::size_t k = 0; k < records.size(); ++k) (k < 2000 ? first : second).add(records[k].codes);
  expect_engine_exact(*engine, model, first, queries);
  expect_engine_exact(*engine, model, second, queries);  // replaces the resident database
}

TEST(SwsearchGpu, EveryVisibleDevice) {
  // Engines on devices other than the current one (its stream and events must live on its device).
  const DeviceProbe probe = probe_devices();
  if (probe.devices.empty()) GTEST_SKIP() << "no usable GPU: " << probe.unavailable_reason;
  const sw::PassModel model = protein_model();
  std::mt19937_64 rng(21);
  Db db;
  for (int k = 0; k < 300; ++k) db.add(random_seq(rng, static_cast<std::size_t>(1 + k * 7 % 900), 25));
  const std::vector<std::vector<std::uint8_t>> queries = {random_seq(rng, 200, 25), random_seq(rng, 33, 25)};
  for (auto it = probe.devices.rbegin(); it != probe.devices.rend(); ++it) {
    SCOPED_TRACE("GPU " + std::to_string(it->id));
    auto engine = make_gpu_engine(model, it->id);
    expect_engine_exact(*engine, model, db, queries);
  }
}

}  // namespace
}  // namespace warpsearch::swsearch
