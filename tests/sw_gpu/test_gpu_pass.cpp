// test_gpu_pass.cpp: the CUDA pass engine (sw/gpu_engine.hpp) on a device against sw::reference::pass,
// bit for bit (score and end cell). CUDA builds only; every test is skipped without a usable GPU.
//
// Contents: random protein (BLOSUM62, BLOSUM45, gap open 0 included) and DNA pairs in local, global
// and semiglobal mode, forward and reversed jobs; long pairs up to 5000; pairs forced into 32-bit
// lanes and pairs at the edge of the 16-bit bound; edge cases (length 1, all mismatch -> no cell,
// identical, X/N, tie-heavy repeats); real pairs from mmseqs_QUERY500.fasta and BioMarKs50k.fa; mixed
// batches split into many launches (small max_pairs_per_launch), permuted and regrouped (results must
// not depend on batch composition); calls queued with submit(), from two threads, one of them failing;
// stats, describe and the errors.
#include <gtest/gtest.h>

#ifdef WARPSEARCH_HAVE_CUDA

#include <algorithm>
#include <cstdint>
#include <future>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "pass_test_support.hpp"
#include "sw/gpu_engine.hpp"
#include "sw/gpu_plan.hpp"
#include "sw/model.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::sw::gpu::test {
namespace {

class GpuPass : public ::testing::Test {
 protected:
  void SetUp() override {
    const DeviceProbe probe = probe_devices();
    if (probe.devices.empty()) GTEST_SKIP() << probe.unavailable_reason;
    device_ = probe.devices.front().id;
  }

  // Runs the set with every query tiled by each kernel shape in turn; compares with the reference.
  // Local mode: also with the reference scores as known scores (PassJob::score), same results.
  void check_shapes(const JobSet& set, const std::string& context) {
    const std::vector<PassJob> jobs = set.jobs();
    const std::vector<PassJob> known = set.jobs(true);
    for (std::size_t s = 0; s < kPassShapes.size(); ++s) {
      PassPolicy policy;
      policy.max_rows.fill(0);
      policy.long_shape = static_cast<int>(s);
      policy.known_max_rows = policy.max_rows;
      policy.known_long_shape = policy.long_shape;
      PassEngine engine(set.model(), device_, 0, policy);
      std::vector<EndPoint> got(jobs.size());
      engine.run(jobs, got);
      const std::string shape = std::to_string(kPassShapes[s].g) + "x" + std::to_string(kPassShapes[s].r);
      EXPECT_EQ(set.compare(got, context + ", tiles of " + shape), 0u);
      if (set.model().mode == Mode::kLocal) {
        engine.run(known, got);
        EXPECT_EQ(set.compare(got, context + ", known scores, tiles of " + shape), 0u);
      }
    }
    PassPolicy single;  // one tile per query up to 256 rows
    for (std::size_t s = 0; s < 4; ++s) single.max_rows[s] = kPassShapes[s].g * kPassShapes[s].r;
    single.long_shape = 3;
    PassEngine engine(set.model(), device_, 0, single);
    std::vector<EndPoint> got(jobs.size());
    engine.run(jobs, got);
    EXPECT_EQ(set.compare(got, context + ", single tiles"), 0u);
  }

  // Runs the set on a fresh engine (and, with max_pairs, once more split into small launches);
  // compares with the reference. Returns the engine's stats of the first run.
  PassEngine::Stats check(const JobSet& set, const std::string& context, std::size_t max_pairs = 0) {
    const std::vector<PassJob> jobs = set.jobs();
    PassEngine engine(set.model(), device_, 0);
    std::vector<EndPoint> got(jobs.size());
    engine.run(jobs, got);
    EXPECT_EQ(set.compare(got, context), 0u) << context;
    const PassEngine::Stats stats = engine.stats();
    if (set.model().mode == Mode::kLocal) {  // known scores (default policy: single tiles)
      std::vector<EndPoint> stopped(jobs.size());
      engine.run(set.jobs(true), stopped);
      EXPECT_EQ(set.compare(stopped, context + ", known scores"), 0u) << context;
    }
    EXPECT_EQ(stats.cells16 + stats.cells32, set.cells()) << context;
    if (max_pairs != 0) {
      PassEngine small(set.model(), device_, max_pairs);
      std::vector<EndPoint> split(jobs.size());
      small.run(jobs, split);
      EXPECT_EQ(set.compare(split, context + ", " + std::to_string(max_pairs) + " pairs per launch"), 0u);
      EXPECT_GE(small.stats().launches, (jobs.size() + max_pairs - 1) / max_pairs);
    }
    return stats;
  }

  int device_ = 0;
};

void add_random(JobSet& set, std::mt19937_64& rng, std::size_t pairs, std::size_t min_len,
                std::size_t max_len, const Alphabet& alphabet, const std::string& label) {
  for (std::size_t p = 0; p < pairs; ++p) {
    auto [q, t] = random_pair(rng, min_len, max_len, alphabet);
    set.add(std::move(q), std::move(t), p % 3 == 2, label + " pair " + std::to_string(p));
  }
}

TEST_F(GpuPass, RandomProteinPairs) {
  std::mt19937_64 rng(0x9f01);
  for (const Scoring& sc : protein_scorings())
    for (const Mode mode : kModes) {
      JobSet set(PassModel::make(sc.matrix, sc.gaps, mode));
      add_random(set, rng, 60, 1, 120, Alphabet::protein(), sc.name + " short");
      add_random(set, rng, 40, 20, 600, Alphabet::protein(), sc.name + " medium");
      check(set, sc.name + " " + mode_label(mode), 7);
      check_shapes(set, sc.name + " " + mode_label(mode));
    }
}

TEST_F(GpuPass, RandomDnaPairs) {
  std::mt19937_64 rng(0x9f02);
  for (const Scoring& sc : dna_scorings())
    for (const Mode mode : kModes) {
      JobSet set(PassModel::make(sc.matrix, sc.gaps, mode));
      add_random(set, rng, 60, 1, 120, Alphabet::dna(), sc.name + " short");
      add_random(set, rng, 40, 150, 700, Alphabet::dna(), sc.name + " medium");
      check(set, sc.name + " " + mode_label(mode), 11);
      check_shapes(set, sc.name + " " + mode_label(mode));
    }
}

TEST_F(GpuPass, AdeptShapedPairs) {
  // The benchmark's shapes: protein queries 20..600 vs targets 200..1664, DNA 150..300 vs up to 1131.
  std::mt19937_64 rng(0x9f03);
  const Alphabet prot = Alphabet::protein();
  const Alphabet dna = Alphabet::dna();
  for (const Mode mode : kModes) {
    JobSet ps(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
    std::uniform_int_distribution<std::size_t> qlen(20, 600), tlen(200, 1664);
    for (int p = 0; p < 40; ++p) {
      const Seq q = random_seq(rng, qlen(rng), prot);
      Seq t = random_seq(rng, tlen(rng), prot);
      if (p % 2 == 0) {  // embed a relative of the query
        const Seq rel = mutate(rng, q, prot, 25, 5);
        const std::size_t at = rng() % (t.size() + 1);
        t.insert(t.begin() + static_cast<std::ptrdiff_t>(at), rel.begin(), rel.end());
      }
      ps.add(q, std::move(t), p % 4 == 3, "adept protein " + std::to_string(p));
    }
    check(ps, std::string("adept protein ") + mode_label(mode));
    JobSet ds(PassModel::make(ScoringMatrix::dna(2, -3), {5, 2}, mode));
    std::uniform_int_distribution<std::size_t> dq(150, 300), dt(150, 1131);
    for (int p = 0; p < 60; ++p) {
      const Seq q = random_seq(rng, dq(rng), dna);
      Seq t = random_seq(rng, dt(rng), dna);
      if (p % 2 == 0)
        t = concat(Seq(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2)),
                   mutate(rng, q, dna, 8, 3),
                   Seq(t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end()));
      ds.add(q, std::move(t), p % 4 == 3, "adept dna " + std::to_string(p));
    }
    check(ds, std::string("adept dna ") + mode_label(mode));
  }
}

// The Aligner's start-finding passes: reversed prefixes up to the forward end with the forward score
// known, under the default policy (single tiles up to 256 rows) and 8 x 8 tiles; queries up to 700.
TEST_F(GpuPass, KnownScoresOnReversePrefixes) {
  std::mt19937_64 rng(0x9f06);
  const JobSet set = reverse_prefix_set(rng, 300, 680, 1500);
  const PassModel& model = set.model();
  const std::vector<PassJob> known = set.jobs(true);
  PassPolicy tiled;
  tiled.known_max_rows.fill(0);
  tiled.known_long_shape = 1;
  for (const PassPolicy& policy : {PassPolicy{}, tiled}) {
    PassEngine engine(model, device_, 0, policy);
    std::vector<EndPoint> got(known.size());
    engine.run(known, got);
    EXPECT_EQ(set.compare(got, "known scores"), 0u);
  }
}

TEST_F(GpuPass, LongPairs) {
  std::mt19937_64 rng(0x9f04);
  const Alphabet prot = Alphabet::protein();
  const Alphabet dna = Alphabet::dna();
  const Seq p3000 = random_seq(rng, 3000, prot);
  const Seq p_rel = mutate(rng, p3000, prot, 20, 4);
  const Seq p600 = random_seq(rng, 600, prot);
  const Seq p5000 = concat(random_seq(rng, 2000, prot), p600, random_seq(rng, 2400, prot));
  const Seq d5000 = random_seq(rng, 5000, dna);
  const Seq d_rel = mutate(rng, d5000, dna, 10, 3);
  for (const Mode mode : kModes) {
    JobSet ps(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
    ps.add(p3000, p_rel, false, "protein 3000 related");
    ps.add(p600, p5000, true, "protein 600 in 5000, reversed");
    ps.add(p5000, p600, false, "protein 5000 vs 600");
    ps.add(Seq(p3000.begin(), p3000.begin() + 1000), p3000, false, "protein 1000 vs 3000");
    check(ps, std::string("long protein ") + mode_label(mode));
    JobSet ds(PassModel::make(ScoringMatrix::dna(2, -3), {5, 2}, mode));
    ds.add(d5000, d_rel, false, "dna 5000 related");
    ds.add(Seq(d5000.begin(), d5000.begin() + 700), d_rel, true, "dna 700 vs 5000 related, reversed");
    check(ds, std::string("long dna ") + mode_label(mode));
  }
}

TEST_F(GpuPass, WideLanesBeyondInt16) {
  std::mt19937_64 rng(0x9f05);
  const Alphabet dna = Alphabet::dna();
  const Alphabet prot = Alphabet::protein();
  const Seq a = random_seq(rng, 1200, dna);
  const Seq b = mutate(rng, a, dna, 5, 2);
  const Seq shortq = random_seq(rng, 3, dna);
  const Seq p = random_seq(rng, 2950, prot);
  for (const Mode mode : kModes) {
    JobSet big(PassModel::make(ScoringMatrix::dna(100, -100), {50, 40}, mode));
    big.add(a, a, false, "identical 1200, +100/-100");
    big.add(a, b, false, "related 1200, +100/-100");
    big.add(b, a, true, "related 1200 swapped, reversed, +100/-100");
    if (mode != Mode::kLocal) big.add(shortq, a, false, "3 vs 1200, +100/-100");
    const PassEngine::Stats stats = check(big, std::string("wide dna ") + mode_label(mode));
    EXPECT_GT(stats.cells32, 0u);
    EXPECT_GT(big.expected()[0].score, 32767);
    JobSet prot_set(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
    ASSERT_FALSE(fits_int16(prot_set.model(), 2950, 2950));
    prot_set.add(p, p, false, "identical protein 2950");
    const PassEngine::Stats ps = check(prot_set, std::string("wide protein ") + mode_label(mode));
    EXPECT_EQ(ps.cells16, 0u);
  }
}

TEST_F(GpuPass, NarrowLanesAtTheBound) {
  // Pairs that just fit int16 (virtual rows included): values within a few hundred of +-32000.
  std::mt19937_64 rng(0x9f06);
  const Alphabet dna = Alphabet::dna();
  JobSet high(PassModel::make(ScoringMatrix::dna(100, -100), {30, 20}, Mode::kLocal));
  const Seq a = random_seq(rng, 319, dna, 0);
  ASSERT_TRUE(fits_int16(high.model(), 319, 319));
  high.add(a, a, false, "identical 319, +100/-100");
  high.add(a, a, true, "identical 319, +100/-100, reversed");
  const Seq mid = random_seq(rng, 250, dna);
  high.add(mid, concat(random_seq(rng, 30, dna), mid, random_seq(rng, 39, dna)), false, "embedded 250");
  const PassEngine::Stats hs = check(high, "narrow high local");
  EXPECT_EQ(hs.cells32, 0u);
  EXPECT_GT(high.expected()[0].score, 31000);
  for (const Mode mode : {Mode::kGlobal, Mode::kSemiGlobal}) {
    JobSet low(PassModel::make(ScoringMatrix::dna(1, -1), {0, 12}, mode));
    const Seq longt = random_seq(rng, 2590, dna);
    for (std::size_t m = 1; m <= 9; ++m) {
      const Seq q = random_seq(rng, m, dna);
      low.add(q, longt, m % 2 == 0, "short vs 2590, gaps 0/12, m " + std::to_string(m));
    }
    low.add(random_seq(rng, 2590, dna), Seq(1, 2), false, "2590 vs 1, gaps 0/12");
    check(low, std::string("narrow low ") + mode_label(mode));
  }
}

TEST_F(GpuPass, EdgeCases) {
  for (const Mode mode : kModes) {
    const auto [b62, d11] =
        edge_case_sets(mode, {.seed = 0x9f07, .a_step = 1, .c_step = 3, .max_len = 70, .len_step = 1});
    check(b62, std::string("edge protein ") + mode_label(mode), 5);
    check(d11, std::string("edge dna ") + mode_label(mode), 5);
    check_shapes(b62, std::string("edge protein ") + mode_label(mode));
    check_shapes(d11, std::string("edge dna ") + mode_label(mode));
  }
}

TEST_F(GpuPass, RealProteinPairs) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const std::vector<Seq> seqs = read_records("prot/mmseqs_QUERY500.fasta", AlphabetKind::kProtein, 500);
  ASSERT_GE(seqs.size(), 100u);
  std::mt19937_64 rng(0x9f08);
  const Alphabet prot = Alphabet::protein();
  const Scoring settings[] = {{"BLOSUM62 11/1", ScoringMatrix::builtin("BLOSUM62"), {11, 1}},
                              {"BLOSUM45 0/2", ScoringMatrix::builtin("BLOSUM45"), {0, 2}}};
  for (const Scoring& sc : settings)
    for (const Mode mode : kModes) {
      JobSet set(PassModel::make(sc.matrix, sc.gaps, mode));
      for (std::size_t i = 0; i + 1 < seqs.size(); i += 6) {
        const Seq& q = seqs[i];
        const Seq& t = seqs[i + 1];
        if (q.size() * t.size() > 4'000'000) continue;
        set.add(q, t, i % 12 == 0, sc.name + " record " + std::to_string(i) + " vs next");
        if (q.size() <= 1500) set.add(q, mutate(rng, q, prot, 30, 6), false, sc.name + " record vs relative");
      }
      ASSERT_GT(set.size(), 100u);
      check(set, sc.name + " real " + mode_label(mode), 64);
    }
}

TEST_F(GpuPass, RealDnaPairs) {
  WS_REQUIRE_TESTDATA("dna/BioMarKs50k.fa");
  const std::vector<Seq> seqs = read_records("dna/BioMarKs50k.fa", AlphabetKind::kDna, 480);
  ASSERT_GE(seqs.size(), 100u);
  for (const Scoring& sc : dna_scorings())
    for (const Mode mode : kModes) {
      JobSet set(PassModel::make(sc.matrix, sc.gaps, mode));
      for (std::size_t i = 0; i + 7 < seqs.size(); i += 4) set.add(seqs[i], seqs[i + 7], i % 8 == 4, sc.name);
      check(set, sc.name + " real " + mode_label(mode), 33);
    }
}

TEST_F(GpuPass, ResultsDoNotDependOnBatchComposition) {
  std::mt19937_64 rng(0x9f09);
  const Alphabet prot = Alphabet::protein();
  for (const Mode mode : kModes) {
    JobSet set(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
    add_random(set, rng, 400, 1, 80, prot, "short");
    add_random(set, rng, 150, 60, 700, prot, "mixed");
    add_random(set, rng, 6, 1400, 1500, prot, "wide");  // global: 32-bit lanes
    const std::vector<PassJob> jobs = set.jobs();
    PassEngine engine(set.model(), device_, 0);
    for (const std::size_t max_pairs : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{50}}) {
      PassEngine split(set.model(), device_, max_pairs);
      std::vector<EndPoint> got(jobs.size());
      split.run(jobs, got);
      EXPECT_EQ(set.compare(got, "max pairs " + std::to_string(max_pairs)), 0u);
    }
    // A permutation of the jobs, run in chunks of varying size on one engine (reused across calls).
    std::vector<std::size_t> perm(jobs.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<EndPoint> got(jobs.size());
    for (std::size_t begin = 0, chunk = 1; begin < perm.size(); begin += chunk, chunk = chunk * 3 + 1) {
      const std::size_t end = std::min(perm.size(), begin + chunk);
      std::vector<PassJob> part;
      for (std::size_t i = begin; i < end; ++i) part.push_back(jobs[perm[i]]);
      std::vector<EndPoint> out(part.size());
      engine.run(part, out);
      for (std::size_t i = begin; i < end; ++i) got[perm[i]] = out[i - begin];
    }
    EXPECT_EQ(set.compare(got, std::string("permuted chunks ") + mode_label(mode)), 0u);
    std::vector<EndPoint> none;
    engine.run({}, none);
  }
}

// Calls queued with submit() run back to back (launches of consecutive calls in flight together) and
// give the results of separate run() calls; a call whose job breaks the preconditions fails alone;
// calls may come from several threads at once.
TEST_F(GpuPass, QueuedCallsFailAloneAndGiveTheSameResults) {
  std::mt19937_64 rng(0x9f0a);
  const Alphabet prot = Alphabet::protein();
  JobSet set(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal));
  add_random(set, rng, 3000, 1, 80, prot, "short");
  add_random(set, rng, 900, 60, 700, prot, "mixed");
  const std::vector<PassJob> jobs = set.jobs();
  const std::vector<PassJob> known = set.jobs(true);
  PassEngine engine(set.model(), device_, 301);  // several launches per call
  const Seq q(40, 2);
  const std::vector<PassJob> bad = {{q.data(), 40, q.data(), 40, false}, {q.data(), 0, q.data(), 40, false}};
  std::vector<EndPoint> bad_out(bad.size());
  // Chunks of growing size, alternately the plain and the known-score jobs, the bad call in the middle.
  std::vector<EndPoint> got(jobs.size()), got_known(jobs.size());
  std::vector<std::future<void>> done;
  std::vector<std::size_t> bounds = {0};
  for (std::size_t chunk = 1; bounds.back() < jobs.size(); chunk = chunk * 2 + 3)
    bounds.push_back(std::min(jobs.size(), bounds.back() + chunk));
  std::future<void> failed;
  for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
    const std::size_t begin = bounds[c], n = bounds[c + 1] - begin;
    const bool use_known = c % 2 == 1;
    const std::span<const PassJob> part =
        std::span<const PassJob>(use_known ? known : jobs).subspan(begin, n);
    done.push_back(engine.submit(part, std::span<EndPoint>(use_known ? got_known : got).subspan(begin, n)));
    done.push_back(engine.submit(std::span<const PassJob>(use_known ? jobs : known).subspan(begin, n),
                                 std::span<EndPoint>(use_known ? got : got_known).subspan(begin, n)));
    if (c == bounds.size() / 2) failed = engine.submit(bad, bad_out);
  }
  for (auto& d : done) EXPECT_NO_THROW(d.get());
  ASSERT_TRUE(failed.valid());
  try {
    failed.get();
    FAIL() << "no error for an empty job";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("job 1 "), std::string::npos) << e.what();
  }
  EXPECT_EQ(set.compare(got, "queued calls"), 0u);
  EXPECT_EQ(set.compare(got_known, "queued calls, known scores"), 0u);
  EXPECT_EQ(engine.stats().cells16 + engine.stats().cells32, 2 * set.cells());  // the bad call ran nothing

  // Two threads submitting at once, each its half in chunks.
  std::vector<EndPoint> both(jobs.size());
  const auto submitter = [&](std::size_t begin, std::size_t end) {
    std::vector<std::future<void>> mine;
    for (std::size_t at = begin; at < end; at += 97) {
      const std::size_t n = std::min<std::size_t>(97, end - at);
      mine.push_back(engine.submit(std::span<const PassJob>(jobs).subspan(at, n),
                                   std::span<EndPoint>(both).subspan(at, n)));
    }
    for (auto& d : mine) d.get();
  };
  std::thread other(submitter, jobs.size() / 2, jobs.size());
  submitter(0, jobs.size() / 2);
  other.join();
  EXPECT_EQ(set.compare(both, "two submitting threads"), 0u);
}

TEST_F(GpuPass, StatsDescribeAndErrors) {
  const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal);
  PassEngine engine(model, device_, 0);
  EXPECT_NE(engine.describe().find("GPU " + std::to_string(device_)), std::string::npos) << engine.describe();
  const Seq q(300, 3), t(500, 3), long_q(3000, 3);
  const std::vector<PassJob> jobs = {{q.data(), 300, t.data(), 500, false},
                                     {long_q.data(), 3000, long_q.data(), 3000, false}};
  std::vector<EndPoint> out(2);
  engine.run(jobs, out);
  const PassEngine::Stats s = engine.stats();
  EXPECT_EQ(s.cells16, 300u * 500u);
  EXPECT_EQ(s.cells32, 3000u * 3000u);
  EXPECT_EQ(s.launches, 1u);
  EXPECT_GT(s.kernel_s, 0.0);
  EXPECT_GT(s.transfer_s, 0.0);
  EXPECT_EQ(out[0], reference::pass(model, q, t));

  std::vector<EndPoint> wrong(1);
  EXPECT_THROW(engine.run(jobs, wrong), Error);
  const std::vector<PassJob> empty_job = {{q.data(), 0, t.data(), 5, false}};
  try {
    engine.run(empty_job, wrong);
    FAIL() << "no error for an empty job";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
  // The engine still works after refusing a call.
  engine.run(jobs, out);
  EXPECT_EQ(out[1], reference::pass(model, long_q, long_q));
  try {
    PassEngine bad(model, 1 << 20, 0);
    FAIL() << "no error for a missing device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kGpu);
  }
}

}  // namespace
}  // namespace warpsearch::sw::gpu::test

#endif  // WARPSEARCH_HAVE_CUDA
