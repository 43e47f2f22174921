// test_simd_pass.cpp: the CPU fast tier (src/sw/simd/pass.hpp) against sw::reference::pass, bit for bit
// (score and end cell), for every instruction set this machine runs.
//
// Contents: random protein and DNA pairs (lengths 1..300, unrelated and related by mutation) under
// BLOSUM62/BLOSUM45/match-mismatch scoring with several gap settings (open 0, extend 0, defaults) in
// local, global and semiglobal mode; long pairs up to 3000; pairs forced into 32-bit lanes (including
// scores beyond int16) and pairs at the edge of the 16-bit bound; edge cases (length 1, every query
// length around the lane counts, all-mismatch local -> no cell, identical sequences, X/N residues,
// repeats with many tied maxima); real pairs from mmseqs_QUERY500.fasta and BioMarKs50k.fa; the
// instruction-set selection (WARPSEARCH_SIMD) and the precondition errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scoped_env.hpp"
#include "sw/model.hpp"
#include "sw/reference.hpp"
#include "sw/simd/pass.hpp"
#include "sw_test_inputs.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::sw {
namespace {

using namespace warpsearch::sw::test;  // NOLINT: shared inputs (tests/support/sw_test_inputs.hpp)
using warpsearch::test::ScopedEnv;

// Debug + ASan runs the O(m n) reference about 20x slower: the random and real-data sweeps then take
// every 4th pair (the long and edge-case tests are unchanged).
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kThin = 4;
#else
constexpr std::size_t kThin = 1;
#endif
std::vector<simd::Isa> available_isas() {
  std::vector<simd::Isa> isas;
  for (const simd::Isa isa : {simd::Isa::kScalar, simd::Isa::kSse41, simd::Isa::kAvx2})
    if (simd::isa_supported(isa)) isas.push_back(isa);
  return isas;
}

// Runs every available Isa on one pair and compares with the reference; counts pairs, cells and pairs
// that took the 32-bit lanes. Reports the first few mismatches in detail.
class Checker {
 public:
  EndPoint check(const PassModel& model, std::span<const std::uint8_t> q, std::span<const std::uint8_t> t,
                 const std::string& label) {
    const EndPoint ref = reference::pass(model, q, t);
    for (const simd::Isa isa : isas_) {
      const EndPoint got = simd::pass(model, q, t, workspace_, isa);
      if (!(got == ref) && ++failures_ <= 8)
        ADD_FAILURE() << label << " mode " << mode_label(model.mode) << " isa " << simd::isa_name(isa)
                      << " m " << q.size() << " n " << t.size() << ": got " << describe(got) << ", reference "
                      << describe(ref);
      // The same pass told its score (local mode, as the start-finding pass is): same end point.
      if (model.mode == Mode::kLocal && ref.score > 0) {
        const EndPoint known = simd::pass(model, q, t, workspace_, isa, ref.score);
        if (!(known == ref) && ++failures_ <= 8)
          ADD_FAILURE() << label << " isa " << simd::isa_name(isa) << " m " << q.size() << " n " << t.size()
                        << " with its score known: got " << describe(known) << ", reference "
                        << describe(ref);
      }
    }
    ++pairs_;
    cells_ += q.size() * t.size();
    if (!fits_int16(model, static_cast<std::int64_t>(q.size()), static_cast<std::int64_t>(t.size()))) ++wide_;
    return ref;
  }
  std::size_t failures() const { return failures_; }
  std::size_t pairs() const { return pairs_; }
  std::size_t wide() const { return wide_; }

 private:
  std::vector<simd::Isa> isas_ = available_isas();
  simd::Workspace workspace_;  // one for everything: reuse across sizes is part of the test
  std::size_t failures_ = 0, pairs_ = 0, cells_ = 0, wide_ = 0;
};

void run_random(const std::vector<Scoring>& scorings, const Alphabet& alphabet, std::size_t pairs_per_setting,
                std::size_t max_len, std::uint64_t seed) {
  Checker checker;
  std::mt19937_64 rng(seed);
  for (const Scoring& sc : scorings)
    for (const Mode mode : kModes) {
      const PassModel model = PassModel::make(sc.matrix, sc.gaps, mode);
      for (std::size_t p = 0; p < pairs_per_setting / kThin; ++p) {
        auto [q, t] = random_pair(rng, 1, max_len, alphabet);
        checker.check(model, q, t, sc.name + " pair " + std::to_string(p));
      }
    }
  EXPECT_EQ(checker.failures(), 0u);
  EXPECT_EQ(checker.pairs(), scorings.size() * 3 * (pairs_per_setting / kThin));
}

TEST(SimdPass, MachineHasAnIsa) {
  // Not an assertion on the machine: records which tiers the rest of this suite exercised.
  std::string names;
  for (const simd::Isa isa : available_isas()) names += std::string(simd::isa_name(isa)) + " ";
  RecordProperty("isas", names);
  EXPECT_TRUE(simd::isa_supported(simd::Isa::kScalar));
  EXPECT_TRUE(simd::isa_supported(simd::best_isa()));
}

TEST(SimdPass, RandomProteinPairs) {
  run_random(protein_scorings(), Alphabet::protein(), 120, 300, 0x5eed01);
}

TEST(SimdPass, RandomShortProteinPairs) {
  // Lengths 1..40 cover every padding shape of 4, 8 and 16 lanes, many times.
  run_random(protein_scorings(), Alphabet::protein(), 150, 40, 0x5eed02);
}

TEST(SimdPass, RandomDnaPairs) { run_random(dna_scorings(), Alphabet::dna(), 120, 300, 0x5eed03); }

TEST(SimdPass, LongPairs) {
  Checker checker;
  std::mt19937_64 rng(0x5eed04);
  const Alphabet prot = Alphabet::protein();
  const Alphabet dna = Alphabet::dna();
  const Seq p3000 = random_seq(rng, 3000, prot);
  const Seq p_rel = mutate(rng, p3000, prot, 20, 4);
  const Seq p1000 = random_seq(rng, 1000, prot);
  const Seq d2500 = random_seq(rng, 2500, dna);
  const Seq d_rel = mutate(rng, d2500, dna, 10, 3);
  for (const Mode mode : kModes) {
    const PassModel b62 = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode);
    checker.check(b62, p3000, p_rel, "protein 3000 related");
    checker.check(b62, p1000, p3000, "protein 1000 vs 3000 unrelated");
    checker.check(b62, p_rel, p1000, "protein ~3000 vs 1000");
    const PassModel d = PassModel::make(ScoringMatrix::dna(2, -3), {5, 2}, mode);
    checker.check(d, d2500, d_rel, "dna 2500 related");
    checker.check(d, Seq(d2500.begin(), d2500.begin() + 700), d_rel, "dna 700 vs 2500 related");
  }
  EXPECT_EQ(checker.failures(), 0u);
  EXPECT_GT(checker.wide(), 0u);  // 3000 x 3000 protein and the global DNA pairs exceed the 16-bit bound
}

TEST(SimdPass, WideLanesBeyondInt16) {
  // Scores and gap penalties far outside int16: only correct if the 32-bit lanes are taken.
  Checker checker;
  std::mt19937_64 rng(0x5eed05);
  const Alphabet dna = Alphabet::dna();
  const Seq a = random_seq(rng, 1200, dna);
  const Seq b = mutate(rng, a, dna, 5, 2);
  const Seq shortq = random_seq(rng, 3, dna);
  for (const Mode mode : kModes) {
    const PassModel big = PassModel::make(ScoringMatrix::dna(100, -100), {50, 40}, mode);
    const EndPoint same = checker.check(big, a, a, "identical 1200, +100/-100");
    EXPECT_GT(same.score, 32767);
    checker.check(big, a, b, "related 1200, +100/-100");
    checker.check(big, b, a, "related 1200 swapped, +100/-100");
    if (mode != Mode::kLocal) {  // local 3 x 1200 fits int16
      const EndPoint gapped = checker.check(big, shortq, a, "3 vs 1200, +100/-100");
      if (mode == Mode::kGlobal) {
        EXPECT_LT(gapped.score, -32768);
      }
    }
    // Protein, long identical sequences: fits_int16 is false although scores stay moderate.
    const Seq p = random_seq(rng, 2950, Alphabet::protein());
    const PassModel b62 = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode);
    ASSERT_FALSE(fits_int16(b62, 2950, 2950));
    checker.check(b62, p, p, "identical protein 2950");
  }
  EXPECT_EQ(checker.failures(), 0u);
  EXPECT_EQ(checker.wide(), checker.pairs());
}

TEST(SimdPass, NarrowLanesAtTheBound) {
  // Pairs that just fit int16: values within a few hundred of +-32000 in 16-bit lanes.
  Checker checker;
  std::mt19937_64 rng(0x5eed06);
  const Alphabet dna = Alphabet::dna();
  const PassModel high = PassModel::make(ScoringMatrix::dna(100, -100), {30, 20}, Mode::kLocal);
  const Seq a = random_seq(rng, 319, dna, 0);
  ASSERT_TRUE(fits_int16(high, 319, 319));
  const EndPoint top = checker.check(high, a, a, "identical 319, +100/-100");
  EXPECT_GT(top.score, 31000);
  const Seq mid = random_seq(rng, 250, dna);
  checker.check(high, mid, concat(random_seq(rng, 30, dna), mid, random_seq(rng, 39, dna)), "embedded 250");
  for (const Mode mode : {Mode::kGlobal, Mode::kSemiGlobal}) {
    const PassModel low = PassModel::make(ScoringMatrix::dna(1, -1), {0, 12}, mode);
    const Seq one = random_seq(rng, 1, dna);
    const Seq longt = random_seq(rng, 2600, dna);
    ASSERT_TRUE(fits_int16(low, 1, 2600));
    const EndPoint low_end = checker.check(low, one, longt, "1 vs 2600, gaps 0/12");
    if (mode == Mode::kGlobal) {
      EXPECT_LT(low_end.score, -31000);
    }
    const Seq longq = random_seq(rng, 2600, dna);
    checker.check(low, longq, one, "2600 vs 1, gaps 0/12");
  }
  EXPECT_EQ(checker.failures(), 0u);
  EXPECT_EQ(checker.wide(), 0u);
}

TEST(SimdPass, EdgeCases) {
  Checker checker;
  const Alphabet prot = Alphabet::protein();
  const Alphabet dna = Alphabet::dna();
  const PassModel b62[] = {PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal),
                           PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kGlobal),
                           PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kSemiGlobal)};
  const PassModel d11[] = {PassModel::make(ScoringMatrix::dna(1, -1), {0, 1}, Mode::kLocal),
                           PassModel::make(ScoringMatrix::dna(1, -1), {0, 1}, Mode::kGlobal),
                           PassModel::make(ScoringMatrix::dna(1, -1), {0, 1}, Mode::kSemiGlobal)};

  // Every pair of single residues (all codes, X and * included).
  for (const PassModel& model : b62)
    for (std::uint8_t a = 0; a < kProteinCodes; ++a)
      for (std::uint8_t b = 0; b < kProteinCodes; b = static_cast<std::uint8_t>(b + 5))
        checker.check(model, Seq{a}, Seq{b}, "1 x 1");

  // All mismatches in local mode: no cell.
  for (const auto& [q, t] : {std::pair{"AAAA", "CCCCCC"}, std::pair{"A", "C"}, std::pair{"GGGG", "T"}}) {
    const EndPoint none = checker.check(d11[0], encode(q, dna), encode(t, dna), "all mismatch");
    EXPECT_TRUE(none == EndPoint{}) << q << " vs " << t << ": " << describe(none);
  }
  EXPECT_TRUE(checker.check(b62[0], encode("W", prot), encode("P", prot), "W/P") == EndPoint{});

  // Identical sequences of every length around the lane counts, and X / N runs.
  std::mt19937_64 rng(0x5eed07);
  for (std::size_t len = 1; len <= 40; ++len) {
    const Seq p = random_seq(rng, len, prot);
    const Seq d = random_seq(rng, len, dna);
    Seq xs = p, ns = d;
    for (std::size_t i = 0; i < len; i += 3) xs[i] = kProteinUnknown;
    for (std::size_t i = 0; i < len; i += 2) ns[i] = kDnaUnknown;
    for (int mi = 0; mi < 3; ++mi) {
      checker.check(b62[mi], p, p, "identical " + std::to_string(len));
      checker.check(b62[mi], xs, p, "X-masked " + std::to_string(len));
      checker.check(b62[mi], Seq(len, kProteinUnknown), p, "all X " + std::to_string(len));
      checker.check(d11[mi], d, d, "identical dna " + std::to_string(len));
      checker.check(d11[mi], ns, d, "N-masked dna " + std::to_string(len));
      checker.check(d11[mi], Seq(len, kDnaUnknown), Seq(len + 3, kDnaUnknown),
                    "all N " + std::to_string(len));
    }
  }

  // Repeats: the maximum is reached at many cells; the tie rule picks one.
  const char* repeats[][2] = {{"AC", "ACACACACACACAC"},
                              {"ACACACACACACAC", "AC"},
                              {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA"},
                              {"ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT", "ACGTACGTACGT"},
                              {"GATTACA", "GATTACAGATTACAGATTACA"},
                              {"AAAACAAAAC", "CAAAACAAAACAAAA"}};
  for (const auto& r : repeats)
    for (int mi = 0; mi < 3; ++mi) {
      checker.check(d11[mi], encode(r[0], dna), encode(r[1], dna), std::string("dna repeat ") + r[0]);
      checker.check(b62[mi], encode(r[0], prot), encode(r[1], prot), std::string("protein repeat ") + r[0]);
    }
  // Long low-complexity repeats across many lanes and segments.
  for (int mi = 0; mi < 3; ++mi) {
    checker.check(b62[mi], Seq(257, 0), Seq(300, 0), "poly-A 257 x 300");
    Seq period(200), period_t(333);
    for (std::size_t i = 0; i < period.size(); ++i) period[i] = static_cast<std::uint8_t>(i % 3);
    for (std::size_t i = 0; i < period_t.size(); ++i) period_t[i] = static_cast<std::uint8_t>(i % 3);
    checker.check(b62[mi], period, period_t, "period-3 200 x 333");
    checker.check(d11[mi], period_t, period, "period-3 333 x 200");
  }
  EXPECT_EQ(checker.failures(), 0u);
}

TEST(SimdPass, RealProteinPairs) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const std::vector<Seq> seqs = read_records("prot/mmseqs_QUERY500.fasta", AlphabetKind::kProtein, 500);
  ASSERT_GE(seqs.size(), 100u);
  Checker checker;
  std::mt19937_64 rng(0x5eed08);
  const Alphabet prot = Alphabet::protein();
  const Scoring settings[] = {{"BLOSUM62 11/1", ScoringMatrix::builtin("BLOSUM62"), {11, 1}},
                              {"BLOSUM45 0/2", ScoringMatrix::builtin("BLOSUM45"), {0, 2}}};
  for (const Scoring& sc : settings)
    for (const Mode mode : kModes) {
      const PassModel model = PassModel::make(sc.matrix, sc.gaps, mode);
      for (std::size_t i = 0; i + 1 < seqs.size(); i += 12 * kThin) {
        const Seq& q = seqs[i];
        const Seq& t = seqs[i + 1];
        if (q.size() * t.size() > 4'000'000) continue;
        checker.check(model, q, t, sc.name + " record " + std::to_string(i) + " vs next");
        if (q.size() <= 1500)
          checker.check(model, q, mutate(rng, q, prot, 30, 6), sc.name + " record vs relative");
      }
    }
  EXPECT_EQ(checker.failures(), 0u);
  EXPECT_GT(checker.pairs(), 200u / kThin);
}

TEST(SimdPass, RealDnaPairs) {
  WS_REQUIRE_TESTDATA("dna/BioMarKs50k.fa");
  const std::vector<Seq> seqs = read_records("dna/BioMarKs50k.fa", AlphabetKind::kDna, 240);
  ASSERT_GE(seqs.size(), 100u);
  Checker checker;
  for (const Scoring& sc : dna_scorings())
    for (const Mode mode : kModes) {
      const PassModel model = PassModel::make(sc.matrix, sc.gaps, mode);
      for (std::size_t i = 0; i + 7 < seqs.size(); i += 8 * kThin)
        checker.check(model, seqs[i], seqs[i + 7], sc.name);
    }
  EXPECT_EQ(checker.failures(), 0u);
  EXPECT_GT(checker.pairs(), 300u / kThin);
}

TEST(SimdPass, IsaSelection) {
  EXPECT_EQ(simd::isa_name(simd::Isa::kScalar), "scalar");
  EXPECT_EQ(simd::isa_name(simd::Isa::kSse41), "sse41");
  EXPECT_EQ(simd::isa_name(simd::Isa::kAvx2), "avx2");
  {
    ScopedEnv env("WARPSEARCH_SIMD", "");
    const simd::Isa best = simd::best_isa();
    // The default is the widest supported one.
    for (const simd::Isa isa : available_isas()) EXPECT_LE(static_cast<int>(isa), static_cast<int>(best));
  }
  for (const simd::Isa isa : {simd::Isa::kScalar, simd::Isa::kSse41, simd::Isa::kAvx2}) {
    ScopedEnv env("WARPSEARCH_SIMD", std::string(simd::isa_name(isa)).c_str());
    if (simd::isa_supported(isa)) {
      EXPECT_EQ(simd::best_isa(), isa);
    } else {
      try {
        (void)simd::best_isa();
        ADD_FAILURE() << "unsupported " << simd::isa_name(isa) << " accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      }
    }
  }
  ScopedEnv env("WARPSEARCH_SIMD", "avx512");
  try {
    (void)simd::best_isa();
    ADD_FAILURE() << "unknown WARPSEARCH_SIMD value accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("avx512"), std::string::npos);
  }
}

ErrorKind error_kind_of(const PassModel& model, std::span<const std::uint8_t> q,
                        std::span<const std::uint8_t> t) {
  simd::Workspace ws;
  try {
    (void)simd::pass(model, q, t, ws, simd::Isa::kScalar);
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::kInternal;  // no error: reported by the callers' expectation as a wrong kind
}

TEST(SimdPass, Preconditions) {
  const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kGlobal);
  const Seq one{0};
  EXPECT_EQ(error_kind_of(model, Seq{}, one), ErrorKind::kInput);
  EXPECT_EQ(error_kind_of(model, one, Seq{}), ErrorKind::kInput);
  PassModel free_gaps = model;
  free_gaps.open = 0;
  free_gaps.extend = 0;
  EXPECT_EQ(error_kind_of(free_gaps, one, one), ErrorKind::kUsage);
  PassModel huge = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {127, 127}, Mode::kGlobal);
  const Seq long_t(5'000'000, 0);
  ASSERT_FALSE(fits_int32(huge, 1, 5'000'000));
  EXPECT_EQ(error_kind_of(huge, one, long_t), ErrorKind::kInput);
}

TEST(SimdPass, WorkspaceIsReusableAndMovable) {
  std::mt19937_64 rng(0x5eed09);
  const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal);
  const Alphabet prot = Alphabet::protein();
  simd::Workspace shared;
  for (int k = 0; k < 30; ++k) {
    auto [q, t] = random_pair(rng, 1, k % 2 == 0 ? 400 : 20, prot);  // grow and shrink
    for (const simd::Isa isa : available_isas()) {
      simd::Workspace fresh;
      const EndPoint a = simd::pass(model, q, t, shared, isa);
      const EndPoint b = simd::pass(model, q, t, fresh, isa);
      EXPECT_TRUE(a == b) << describe(a) << " vs " << describe(b);
    }
  }
  EXPECT_GT(shared.capacity(), 0u);
  simd::Workspace moved(std::move(shared));
  EXPECT_EQ(shared.capacity(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  const Seq q = random_seq(rng, 100, prot);
  EXPECT_TRUE(simd::pass(model, q, q, moved) == reference::pass(model, q, q));
}

}  // namespace
}  // namespace warpsearch::sw
