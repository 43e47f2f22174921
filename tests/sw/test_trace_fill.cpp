// test_trace_fill.cpp: the traceback's direction fill (src/sw/simd/trace_fill.hpp): the AVX2 row sweep
// against the scalar loop, byte for byte over the whole direction matrix and in the returned score, on
// random protein and DNA regions (lengths 1..300, unrelated, related, two-letter alphabets with many
// ties) under every scoring of sw_test_inputs.hpp (open 0, extend 0 included), with global boundaries and
// with free leading target residues; every region width around the vector width; long regions; real
// sequences; the range limit that sends wide-valued regions to the scalar loop; and the whole traceback
// (CIGARs) under WARPSEARCH_SIMD=scalar and avx2.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "scoped_env.hpp"
#include "sw/model.hpp"
#include "sw/pairwise.hpp"
#include "sw/reference.hpp"
#include "sw/simd/pass.hpp"
#include "sw/simd/trace_fill.hpp"
#include "sw_test_inputs.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::sw {
namespace {

using namespace warpsearch::sw::test;  // NOLINT: shared inputs (tests/support/sw_test_inputs.hpp)
using warpsearch::test::ScopedEnv;

class FillChecker {
 public:
  // Compares the AVX2 sweep with the scalar loop; returns false (after reporting) on a difference.
  bool check(const PassModel& model, const Seq& q, const Seq& t, bool free_start, const std::string& label) {
    const std::size_t cells = q.size() * t.size();
    std::vector<std::uint8_t> ref(cells + simd::kTraceFillPad), got(cells + simd::kTraceFillPad, 0xFF);
    const std::int64_t ref_score =
        simd::trace_fill(model, q, t, free_start, ref.data(), ws_, simd::Isa::kScalar);
    const std::int64_t got_score =
        simd::trace_fill(model, q, t, free_start, got.data(), ws_, simd::Isa::kAvx2);
    ++regions_;
    if (simd::trace_fill_fits_vector(model, q.size(), t.size())) ++vector_;
    if (simd::trace_fill_fits_int16(model, q.size(), t.size())) ++narrow_;
    std::size_t first = cells;
    for (std::size_t k = 0; k < cells && first == cells; ++k)
      if (ref[k] != got[k]) first = k;
    if (got_score == ref_score && first == cells) return true;
    if (++failures_ <= 8) {
      ADD_FAILURE() << label << " a " << q.size() << " b " << t.size() << " free_start " << free_start
                    << ": score " << got_score << " vs scalar " << ref_score
                    << (first < cells ? " first differing cell (" + std::to_string(first / t.size() + 1) +
                                            "," + std::to_string(first % t.size() + 1) + "): " +
                                            std::to_string(got[first]) + " vs " + std::to_string(ref[first])
                                      : std::string());
    }
    return false;
  }
  std::size_t regions() const { return regions_; }
  std::size_t vector_regions() const { return vector_; }
  std::size_t narrow_regions() const { return narrow_; }

 private:
  simd::Workspace ws_;
  std::size_t regions_ = 0, vector_ = 0, narrow_ = 0, failures_ = 0;
};

bool have_avx2() { return simd::isa_supported(simd::Isa::kAvx2); }

PassModel model_of(const Scoring& s) { return PassModel::make(s.matrix, s.gaps, Mode::kGlobal); }

TEST(TraceFill, RandomRegionsMatchTheScalarLoop) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(0x7ACEF111);
  FillChecker checker;
  for (const auto& [alphabet, scorings] :
       {std::pair{Alphabet::protein(), protein_scorings()}, std::pair{Alphabet::dna(), dna_scorings()}}) {
    for (const Scoring& s : scorings) {
      const PassModel model = model_of(s);
      for (int n = 0; n < 60; ++n) {
        const auto [q, t] = random_pair(rng, 1, 300, alphabet);
        for (const bool free_start : {false, true}) checker.check(model, q, t, free_start, s.name);
      }
    }
  }
  EXPECT_EQ(checker.vector_regions(), checker.regions());
  EXPECT_GE(checker.regions(), 1200u);
}

TEST(TraceFill, EveryWidthAroundTheVector) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(42);
  const Alphabet protein = Alphabet::protein();
  FillChecker checker;
  for (const Scoring& s : protein_scorings()) {
    const PassModel model = model_of(s);
    for (std::size_t a = 1; a <= 4; ++a)
      for (std::size_t b = 1; b <= 34; ++b) {
        const Seq q = random_seq(rng, a, protein), t = random_seq(rng, b, protein);
        for (const bool free_start : {false, true}) checker.check(model, q, t, free_start, s.name);
        // A region that is one residue repeated: every H ties between the diagonal and the gaps.
        checker.check(model, Seq(a, q[0]), Seq(b, q[0]), false, s.name + " repeat");
      }
  }
  EXPECT_EQ(checker.regions(), 6u * 4 * 34 * 3);
}

TEST(TraceFill, LongAndRealRegions) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(7);
  FillChecker checker;
  const Alphabet protein = Alphabet::protein();
  const Alphabet dna = Alphabet::dna();
  const PassModel b62 = model_of(protein_scorings()[0]);
  const PassModel nt = model_of(dna_scorings()[0]);
  for (int n = 0; n < 6; ++n) {
    const auto [q, t] = random_pair(rng, 1000, 3000, protein);
    checker.check(b62, q, t, n % 2 == 1, "long protein");
    const auto [dq, dt] = random_pair(rng, 1000, 3000, dna);
    checker.check(nt, dq, dt, n % 2 == 0, "long dna");
  }
  const std::vector<Seq> proteins = read_records("prot/mmseqs_QUERY500.fasta", AlphabetKind::kProtein, 24);
  for (std::size_t k = 0; k + 1 < proteins.size(); k += 2)
    checker.check(b62, proteins[k], proteins[k + 1], false, "mmseqs");
  const std::vector<Seq> amplicons = read_records("dna/BioMarKs50k.fa", AlphabetKind::kDna, 24);
  for (std::size_t k = 0; k + 1 < amplicons.size(); k += 2)
    checker.check(nt, amplicons[k], amplicons[k + 1], true, "BioMarKs");
  EXPECT_EQ(checker.regions(), 12u + proteins.size() / 2 + amplicons.size() / 2);
  // Both lane widths ran: the long random regions exceed the 16-bit bound, the real pairs do not.
  EXPECT_GT(checker.narrow_regions(), 0u);
  EXPECT_LT(checker.narrow_regions(), checker.vector_regions());
}

TEST(TraceFill, LargeGapCostsTakeThe32BitLanes) {
  // 16 gap steps beyond the 16-bit constants (and values beyond int16) on short regions.
  if (!have_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(5);
  const Alphabet protein = Alphabet::protein();
  FillChecker checker;
  for (const GapCosts gaps : {GapCosts{3000, 100}, GapCosts{0, 2500}, GapCosts{2100, 0}}) {
    const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), gaps, Mode::kGlobal);
    for (int n = 0; n < 40; ++n) {
      const auto [q, t] = random_pair(rng, 1, 120, protein);
      checker.check(model, q, t, n % 2 == 0, "large gaps");
    }
  }
  EXPECT_EQ(checker.narrow_regions(), 0u);
  EXPECT_EQ(checker.vector_regions(), checker.regions());
}

TEST(TraceFill, WideValuedRegionsTakeTheScalarLoop) {
  // Gap costs this large put values beyond +-2^27: the sweep is not eligible and trace_fill falls back.
  const Scoring s{"dna huge gaps", ScoringMatrix::dna(2, -3), {1 << 24, 1 << 22}};
  const PassModel model = model_of(s);
  EXPECT_FALSE(simd::trace_fill_fits_vector(model, 40, 40));
  EXPECT_TRUE(simd::trace_fill_fits_vector(model_of(dna_scorings()[0]), 3000, 3000));
  std::mt19937_64 rng(3);
  const Alphabet dna = Alphabet::dna();
  const Seq q = random_seq(rng, 40, dna), t = random_seq(rng, 40, dna);
  FillChecker checker;
  EXPECT_TRUE(checker.check(model, q, t, false, s.name));
}

TEST(TraceFill, TracebackIsTheSameUnderEveryIsa) {
  // The whole pipeline (passes, region, fill, walk, re-score) gives the same CIGARs with the scalar
  // fill and with the sweep.
  if (!have_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(11);
  const Alphabet protein = Alphabet::protein();
  for (const Mode mode : kModes) {
    const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode);
    for (int n = 0; n < 40; ++n) {
      const auto [q, t] = random_pair(rng, 1, 400, protein);
      align::Result scalar, avx2;
      {
        const ScopedEnv env("WARPSEARCH_SIMD", "scalar");
        scalar = reference::align_pair(model, q, t, true);
      }
      {
        const ScopedEnv env("WARPSEARCH_SIMD", "avx2");
        avx2 = reference::align_pair(model, q, t, true);
      }
      EXPECT_EQ(avx2.cigar, scalar.cigar) << mode_label(mode) << " pair " << n;
      EXPECT_EQ(avx2.score, scalar.score);
      EXPECT_EQ(avx2.matches, scalar.matches);
      EXPECT_EQ(avx2.length, scalar.length);
      EXPECT_EQ(avx2.target_begin, scalar.target_begin);
    }
  }
}

}  // namespace
}  // namespace warpsearch::sw
