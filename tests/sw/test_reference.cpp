// test_reference.cpp: the reference tier of the sw family against hand-checked golden cases and an
// exhaustive enumeration of alignments of tiny sequences; traceback and coordinate invariants.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sw/pairwise.hpp"
#include "sw/reference.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::sw {
namespace {

std::vector<std::uint8_t> encode(std::string_view text, AlphabetKind kind = AlphabetKind::kProtein) {
  const Alphabet a(kind);
  std::vector<std::uint8_t> v;
  for (char c : text) v.push_back(*a.code(c));
  return v;
}

// Durbin, Eddy, Krogh & Mitchison, "Biological Sequence Analysis" (1998), figures 2.5 and 2.9:
// HEAGAWGHEE vs PAWHEAE, BLOSUM50, linear gap penalty 8 (open 0, extend 8 in our convention).
// Global score 1; best local alignment AWGHE / AW-HE with score 28.
TEST(Reference, DurbinGoldenGlobal) {
  const PassModel m = PassModel::make(ScoringMatrix::builtin("BLOSUM50"), GapCosts{0, 8}, Mode::kGlobal);
  const auto q = encode("HEAGAWGHEE"), t = encode("PAWHEAE");
  EXPECT_EQ(reference::pass(m, q, t), (EndPoint{1, 9, 6}));
  const align::Result r = reference::align_pair(m, q, t, true);
  EXPECT_EQ(r.score, 1);
  EXPECT_EQ(r.query_begin, 0u);
  EXPECT_EQ(r.query_end, 10u);
  EXPECT_EQ(r.target_end, 7u);
  EXPECT_EQ(r.length, 11u);  // HEAGAWGHE-E / --P-AW-HEAE
}

TEST(Reference, DurbinGoldenLocal) {
  const PassModel m = PassModel::make(ScoringMatrix::builtin("BLOSUM50"), GapCosts{0, 8}, Mode::kLocal);
  const auto q = encode("HEAGAWGHEE"), t = encode("PAWHEAE");
  EXPECT_EQ(reference::pass(m, q, t), (EndPoint{28, 8, 4}));
  const align::Result r = reference::align_pair(m, q, t, true);
  EXPECT_EQ(r.score, 28);
  EXPECT_EQ(r.query_begin, 4u);  // AWGHE
  EXPECT_EQ(r.query_end, 9u);
  EXPECT_EQ(r.target_begin, 1u);  // AW-HE
  EXPECT_EQ(r.target_end, 5u);
  EXPECT_EQ(r.cigar, "2=1I2=");
  EXPECT_EQ(r.matches, 4u);
  EXPECT_EQ(r.length, 5u);
}

TEST(Reference, EmptyLocalAlignment) {
  const PassModel m = PassModel::make(ScoringMatrix::dna(2, -3), GapCosts{5, 2}, Mode::kLocal);
  const auto q = encode("AAAA", AlphabetKind::kDna), t = encode("CCC", AlphabetKind::kDna);
  EXPECT_EQ(reference::pass(m, q, t), (EndPoint{0, -1, -1}));
  const align::Result r = reference::align_pair(m, q, t, true);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.score, 0);
  EXPECT_EQ(r.cigar, "");
}

TEST(Reference, TieRuleIsFirstInColumnMajorOrder) {
  // Target ACGT twice: two equal local maxima; the end is in the first copy (smaller target end).
  const PassModel m = PassModel::make(ScoringMatrix::dna(2, -3), GapCosts{5, 2}, Mode::kLocal);
  const auto q = encode("ACGT", AlphabetKind::kDna), t = encode("ACGTTTACGT", AlphabetKind::kDna);
  EXPECT_EQ(reference::pass(m, q, t), (EndPoint{8, 3, 3}));
  // Query with two copies vs one target copy: smallest query end in the winning column.
  const auto q2 = encode("ACGTTTACGT", AlphabetKind::kDna), t2 = encode("ACGT", AlphabetKind::kDna);
  EXPECT_EQ(reference::pass(m, q2, t2), (EndPoint{8, 3, 3}));
}

TEST(Reference, SemiglobalIsFreeAtTargetEndsOnly) {
  const PassModel m = PassModel::make(ScoringMatrix::dna(2, -3), GapCosts{5, 2}, Mode::kSemiGlobal);
  const auto q = encode("ACGT", AlphabetKind::kDna), t = encode("GGGACGTGGG", AlphabetKind::kDna);
  EXPECT_EQ(reference::pass(m, q, t), (EndPoint{8, 3, 6}));
  const align::Result r = reference::align_pair(m, q, t, true);
  EXPECT_EQ(r.target_begin, 3u);
  EXPECT_EQ(r.target_end, 7u);
  EXPECT_EQ(r.cigar, "4=");
  // A query residue left over costs: the query must be aligned end to end.
  const auto q2 = encode("TACGT", AlphabetKind::kDna);
  EXPECT_EQ(reference::pass(m, q2, encode("ACGT", AlphabetKind::kDna)).score, 8 - 7);
}

// Exhaustive enumeration of all alignments (sequences of M/I/D columns) of tiny sequences, scored by
// the gap convention directly: the independent definition the DP must match.
struct Brute {
  const PassModel& m;
  std::span<const std::uint8_t> q, t;
  std::int64_t best = std::numeric_limits<std::int64_t>::min();

  // Alignment of q[i..] and t[j..] given the previous column op; acc = score so far.
  void extend(std::size_t i, std::size_t j, char prev, std::int64_t acc, std::size_t qend, std::size_t tend) {
    if (i == qend && j == tend) {
      best = std::max(best, acc);
      return;
    }
    if (i < qend && j < tend) extend(i + 1, j + 1, 'M', acc + m.score(q[i], t[j]), qend, tend);
    if (i < qend) extend(i + 1, j, 'I', acc - (prev == 'I' ? 0 : m.open) - m.extend, qend, tend);
    if (j < tend) extend(i, j + 1, 'D', acc - (prev == 'D' ? 0 : m.open) - m.extend, qend, tend);
  }

  std::int64_t solve() {
    switch (m.mode) {
      case Mode::kGlobal: extend(0, 0, 0, 0, q.size(), t.size()); break;
      case Mode::kSemiGlobal:
        for (std::size_t tb = 0; tb <= t.size(); ++tb)
          for (std::size_t te = tb; te <= t.size(); ++te) extend(0, tb, 0, 0, q.size(), te);
        break;
      case Mode::kLocal:
        best = 0;
        for (std::size_t qb = 0; qb < q.size(); ++qb)
          for (std::size_t qe = qb + 1; qe <= q.size(); ++qe)
            for (std::size_t tb = 0; tb < t.size(); ++tb)
              for (std::size_t te = tb + 1; te <= t.size(); ++te) extend(qb, tb, 0, 0, qe, te);
        break;
    }
    return best;
  }
};

TEST(Reference, MatchesExhaustiveEnumeration) {
  std::mt19937 rng(7);
  const ScoringMatrix blosum = ScoringMatrix::builtin("BLOSUM62");
  const ScoringMatrix dna = ScoringMatrix::dna(1, -2);
  for (int iter = 0; iter < 300; ++iter) {
    const bool protein = iter % 2 == 0;
    const GapCosts gaps{static_cast<int>(rng() % 6), 1 + static_cast<int>(rng() % 3)};
    const Mode mode = static_cast<Mode>(iter % 3);
    const PassModel m = PassModel::make(protein ? blosum : dna, gaps, mode);
    const int alpha = protein ? 20 : 4;
    std::vector<std::uint8_t> q(1 + rng() % 4), t(1 + rng() % 5);
    for (auto& c : q) c = static_cast<std::uint8_t>(rng() % alpha);
    for (auto& c : t) c = static_cast<std::uint8_t>(rng() % alpha);
    Brute brute{m, q, t};
    const std::int64_t expected = brute.solve();
    const align::Result r = reference::align_pair(m, q, t, true);  // traceback re-scores internally
    ASSERT_EQ(r.score, expected) << "iter " << iter;
  }
}

// Coordinates and CIGAR agree: the CIGAR consumes exactly the reported ranges; the start is an optimal
// start for the chosen end (forward pass over the region from the start reproduces the score).
TEST(Reference, CoordinatesConsistentWithCigarOnRandomPairs) {
  std::mt19937 rng(11);
  const ScoringMatrix blosum = ScoringMatrix::builtin("BLOSUM62");
  for (int iter = 0; iter < 200; ++iter) {
    const Mode mode = static_cast<Mode>(iter % 3);
    const PassModel m = PassModel::make(blosum, GapCosts{static_cast<int>(rng() % 12), 1}, mode);
    std::vector<std::uint8_t> q(1 + rng() % 120), t(1 + rng() % 150);
    for (auto& c : q) c = static_cast<std::uint8_t>(rng() % 20);
    for (auto& c : t) c = static_cast<std::uint8_t>(rng() % 20);
    if (iter % 4 == 0 && t.size() > 10) std::copy_n(t.begin(), std::min(q.size(), t.size()), q.begin());
    const align::Result r = reference::align_pair(m, q, t, true);
    std::uint64_t qn = 0, tn = 0, len = 0;
    std::size_t pos = 0;
    while (pos < r.cigar.size()) {
      std::size_t end = pos;
      while (std::isdigit(static_cast<unsigned char>(r.cigar[end]))) ++end;
      const std::uint64_t run = std::stoull(r.cigar.substr(pos, end - pos));
      const char op = r.cigar[end];
      if (op != 'D') qn += run;
      if (op != 'I') tn += run;
      len += run;
      pos = end + 1;
    }
    ASSERT_EQ(qn, r.query_end - r.query_begin) << iter;
    ASSERT_EQ(tn, r.target_end - r.target_begin) << iter;
    ASSERT_EQ(len, r.length) << iter;
    if (mode == Mode::kGlobal) {
      EXPECT_EQ(r.query_begin, 0u);
      EXPECT_EQ(r.target_end, t.size());
    }
    if (mode == Mode::kSemiGlobal) {
      EXPECT_EQ(r.query_end - r.query_begin, q.size());
    }
  }
}

TEST(Reference, RejectsEmptyAndOverlongPairs) {
  const PassModel m = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, Mode::kLocal);
  EXPECT_THROW(check_pair(m, 0, 5), Error);
  EXPECT_THROW(check_pair(m, 5, 0), Error);
  EXPECT_THROW(check_pair(m, std::size_t{1} << 30, std::size_t{1} << 30), Error);
  EXPECT_NO_THROW(check_pair(m, 100000, 100000));
}

TEST(Reference, Int16BoundIsConservative) {
  const PassModel m = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, Mode::kLocal);
  // 11 is BLOSUM62's largest score (W/W): 2000 residues can reach 22000.
  EXPECT_TRUE(fits_int16(m, 2000, 5000));
  EXPECT_FALSE(fits_int16(m, 3000, 3000));
  const PassModel g = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, Mode::kGlobal);
  EXPECT_FALSE(fits_int16(g, 1000, 5000));
}

}  // namespace
}  // namespace warpsearch::sw
