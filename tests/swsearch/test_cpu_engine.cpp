// test_cpu_engine.cpp: the swsearch CPU score engine (make_cpu_engine, src/swsearch/engine.hpp) against
// the definition, sw::reference::pass(...).score in local mode, bit for bit:
//   - random protein and DNA batches (unrelated, related and two-letter sequences; lengths 0..300) under
//     every built-in matrix and several gap costs, including sequences of length 0 and 1 and 1-residue
//     queries;
//   - real proteins (a subset of mmseqs DB20k against mmseqs QUERY500 queries);
//   - pairs whose scores need 32-bit lanes (long identical sequences);
//   - the same scores for 1 and 3 threads, a database reset with set_database, cells counted, an empty
//     batch, and misuse (empty query, wrong output size, non-local model) refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "sw/model.hpp"
#include "sw/reference.hpp"
#include "sw_test_inputs.hpp"
#include "swsearch/engine.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::swsearch {
namespace {

using sw::test::Seq;

// A batch owning its memory.
struct OwnedBatch {
  std::vector<std::uint8_t> residues;
  std::vector<std::uint64_t> offsets{0};
  void add(const Seq& s) {
    residues.insert(residues.end(), s.begin(), s.end());
    offsets.push_back(residues.size());
  }
  DbBatch view() const { return DbBatch{residues, offsets}; }
};

std::vector<std::int32_t> reference_scores(const sw::PassModel& model, const Seq& query,
                                           const OwnedBatch& batch) {
  const DbBatch b = batch.view();
  std::vector<std::int32_t> out(b.size());
  for (std::size_t k = 0; k < b.size(); ++k)
    out[k] = b.length(k) == 0 ? 0 : sw::reference::pass(model, query, b.sequence(k)).score;
  return out;
}

std::vector<std::int32_t> engine_scores(ScoreEngine& engine, const Seq& query, std::size_t n) {
  std::vector<std::int32_t> out(n, -1);
  engine.scores(query, out);
  return out;
}

// Random sequences of lengths [0, max_len], with every few a relative of the query (so high scores and
// ties occur), and explicit 0- and 1-residue entries.
OwnedBatch random_batch(std::mt19937_64& rng, const Seq& query, const Alphabet& alphabet, std::size_t n,
                        std::size_t max_len) {
  OwnedBatch batch;
  std::uniform_int_distribution<std::size_t> len(0, max_len);
  batch.add({});
  batch.add(sw::test::random_seq(rng, 1, alphabet));
  batch.add(Seq{query.front()});
  for (std::size_t k = 0; k < n; ++k) {
    if (k % 4 == 0 && query.size() > 1)
      batch.add(sw::test::mutate(rng, query, alphabet, 20, 6));
    else if (k % 9 == 0)
      batch.add(sw::test::random_pair(rng, 1, max_len, alphabet).second);
    else
      batch.add(sw::test::random_seq(rng, len(rng), alphabet));
  }
  batch.add({});
  return batch;
}

void check_random(const std::vector<sw::test::Scoring>& scorings, const Alphabet& alphabet,
                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ThreadPool pool(2);
  for (const sw::test::Scoring& s : scorings) {
    SCOPED_TRACE(s.name);
    const sw::PassModel model = sw::PassModel::make(s.matrix, s.gaps, sw::Mode::kLocal);
    auto engine = make_cpu_engine(model, pool);
    for (int round = 0; round < 3; ++round) {
      const Seq query = round == 0 ? sw::test::random_seq(rng, 1, alphabet)
                                   : sw::test::random_seq(rng, round == 1 ? 37 : 180, alphabet);
      const OwnedBatch batch = random_batch(rng, query, alphabet, 40, 250);
      engine->set_database(batch.view());
      ASSERT_EQ(engine_scores(*engine, query, batch.view().size()), reference_scores(model, query, batch))
          << "query length " << query.size();
    }
  }
}

TEST(SwsearchCpuEngine, RandomProteinEveryBuiltinMatrix) {
  std::vector<sw::test::Scoring> scorings;
  for (const std::string_view name : ScoringMatrix::builtin_names()) {
    const ScoringMatrix m = ScoringMatrix::builtin(name);
    scorings.push_back({std::string(name), m, m.default_gaps()});
  }
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  scorings.push_back({"BLOSUM62 0/1", b62, {0, 1}});
  scorings.push_back({"BLOSUM62 1/0", b62, {1, 0}});
  check_random(scorings, Alphabet::protein(), 0x5ea1);
}

TEST(SwsearchCpuEngine, RandomDna) { check_random(sw::test::dna_scorings(), Alphabet::dna(), 0x5ea2); }

TEST(SwsearchCpuEngine, RealProteins) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const std::vector<Seq> db = sw::test::read_records("prot/mmseqs_DB20k.fasta", AlphabetKind::kProtein, 60);
  const std::vector<Seq> queries =
      sw::test::read_records("prot/mmseqs_QUERY500.fasta", AlphabetKind::kProtein, 3);
  ASSERT_EQ(db.size(), 60u);
  OwnedBatch batch;
  for (const Seq& s : db) batch.add(s);
  ThreadPool pool(2);
  const sw::PassModel model =
      sw::PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, sw::Mode::kLocal);
  auto engine = make_cpu_engine(model, pool);
  engine->set_database(batch.view());
  std::uint64_t cells = 0;
  for (const Seq& q : queries) {
    ASSERT_EQ(engine_scores(*engine, q, db.size()), reference_scores(model, q, batch));
    cells += q.size() * batch.residues.size();
  }
  // A query from the database itself scores its own sequence highest.
  const std::vector<std::int32_t> self = engine_scores(*engine, db[7], db.size());
  ASSERT_EQ(self, reference_scores(model, db[7], batch));
  cells += db[7].size() * batch.residues.size();
  for (std::size_t k = 0; k < db.size(); ++k) EXPECT_LE(self[k], self[7]);
  EXPECT_EQ(engine->stats().cells, cells);
}

TEST(SwsearchCpuEngine, WideScoresAndThreadCounts) {
  std::mt19937_64 rng(0x5ea3);
  const sw::PassModel model =
      sw::PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, sw::Mode::kLocal);
  // A 3000-residue query against itself and relatives: scores above 10^4 (the 16-bit bound is exceeded).
  const Seq query = sw::test::random_seq(rng, 3000, Alphabet::protein(), 0);
  OwnedBatch batch;
  batch.add(query);
  batch.add(sw::test::mutate(rng, query, Alphabet::protein(), 5, 1));
  for (int k = 0; k < 30; ++k)
    batch.add(sw::test::random_seq(rng, 100 + 7 * static_cast<std::size_t>(k), Alphabet::protein()));
  ASSERT_FALSE(sw::fits_int16(model, static_cast<std::int64_t>(query.size()),
                              static_cast<std::int64_t>(query.size())));
  const std::vector<std::int32_t> ref = reference_scores(model, query, batch);
  EXPECT_GT(ref[0], 10000);
  for (const unsigned threads : {1u, 3u}) {
    ThreadPool pool(threads);
    auto engine = make_cpu_engine(model, pool);
    engine->set_database(batch.view());
    EXPECT_EQ(engine_scores(*engine, query, batch.view().size()), ref) << threads << " threads";
    EXPECT_NE(engine->describe().find(std::to_string(threads) + " thread"), std::string::npos)
        << engine->describe();
  }
}

TEST(SwsearchCpuEngine, ResetEmptyBatchAndMisuse) {
  std::mt19937_64 rng(0x5ea4);
  ThreadPool pool(2);
  const sw::PassModel model =
      sw::PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, sw::Mode::kLocal);
  auto engine = make_cpu_engine(model, pool);
  const Seq query = sw::test::random_seq(rng, 50, Alphabet::protein());
  // Empty batch (no sequences) and a batch of only empty sequences.
  engine->set_database(DbBatch{});
  EXPECT_TRUE(engine_scores(*engine, query, 0).empty());
  OwnedBatch empties;
  for (int k = 0; k < 5; ++k) empties.add({});
  engine->set_database(empties.view());
  EXPECT_EQ(engine_scores(*engine, query, 5), std::vector<std::int32_t>(5, 0));
  EXPECT_EQ(engine->stats().cells, 0u);
  // A second database replaces the first.
  const OwnedBatch batch = random_batch(rng, query, Alphabet::protein(), 20, 100);
  engine->set_database(batch.view());
  EXPECT_EQ(engine_scores(*engine, query, batch.view().size()), reference_scores(model, query, batch));
  EXPECT_EQ(engine->stats().cells, query.size() * batch.residues.size());
  // Misuse.
  std::vector<std::int32_t> wrong(batch.view().size() + 1);
  EXPECT_THROW(engine->scores(query, wrong), Error);
  std::vector<std::int32_t> out(batch.view().size());
  EXPECT_THROW(engine->scores(std::span<const std::uint8_t>{}, out), Error);
  const sw::PassModel global =
      sw::PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, sw::Mode::kGlobal);
  EXPECT_THROW(make_cpu_engine(global, pool), Error);
}

}  // namespace
}  // namespace warpsearch::swsearch
