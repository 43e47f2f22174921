// test_ungapped.cpp: blastp's two-hit seeding and ungapped X-drop extension (src/blast/ungapped.hpp).
//
// Suites:
//   UngappedParams     bit -> raw conversions against hand values of BLAST+'s formulas
//   UngappedExtend     hand-made extensions: X-drop stopping points (the >= rule), the running score <= 0
//                      stop on the right, sequence ends, left extension not reaching the first hit
//   UngappedTwoHit     hand-made hit streams: window rule, overlapping hits, the post-extension flag
//   UngappedRandom     TwoHitFinder against a brute-force re-implementation of the documented rules on
//                      random sequences and hit streams, many subjects per finder (diagonal offsets,
//                      masked diagonals sharing entries, table clears)
//   UngappedBlast      against blastp 2.12 -ungapped on real pairs (globins45, mmseqs_DB20k), word hits
//                      from a brute-force neighbourhood scan (see the comment there)
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "blast/ungapped.hpp"
#include "blastp_oracle.hpp"
#include "stats/blast_stats.hpp"
#include "stats/karlin.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {
using test::have_blastp;

std::vector<std::uint8_t> codes(const std::string& letters) {
  std::vector<std::uint8_t> out;
  for (char c : letters) out.push_back(*Alphabet::protein().code(c));
  return out;
}

// A protein matrix scoring +5 for identical letters and -4 otherwise (X, * and the left-out codes score
// the minimum, -4, against everything): easy hand arithmetic.
const ScoringMatrix& match_matrix() {
  static const ScoringMatrix m = [] {
    const std::string letters = "ARNDCQEGHILKMFPSTWYV";
    std::string text = " ";
    for (char c : letters) text += std::string(" ") + c;
    text += "\n";
    for (char a : letters) {
      text += a;
      for (char b : letters) text += a == b ? " 5" : " -4";
      text += "\n";
    }
    return ScoringMatrix::from_ncbi_text(text, "match5");
  }();
  return m;
}

// Query and subject of equal length on diagonal 0: subject[i] = query[i] where pattern[i] == 'm', a
// different letter where it is 'x'. Under match_matrix each position scores +5 or -4.
std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>> diagonal_pair(const std::string& pattern) {
  std::string q;
  std::string s;
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = letters[(i * 7) % 20];
    q += c;
    s += pattern[i] == 'm' ? c : letters[(i * 7 + 3) % 20];
  }
  return {codes(q), codes(s)};
}

UngappedParams params_of(int x_dropoff, int cutoff, int window = 40, int word_size = 3) {
  UngappedParams p;
  p.x_dropoff = x_dropoff;
  p.cutoff_score = cutoff;
  p.window = window;
  p.word_size = word_size;
  return p;
}

// ---------------------------------------------------------------------------------------------------
// Parameters.

TEST(UngappedParams, BitConversionsFollowBlastFormulas) {
  stats::KarlinParams k;
  k.lambda = 0.3176;
  k.K = 0.134;
  k.H = 0.4012;
  // 7 bits: 7 ln2 / 0.3176 = 15.277... -> ceil 16.
  EXPECT_EQ(ungapped_x_dropoff(7.0, k.lambda), 16);
  // Exactly integral values stay (ceil): 2 ln2 / (ln2 / 4) = 8.
  EXPECT_EQ(ungapped_x_dropoff(2.0, std::log(2.0) / 4.0), 8);
  // 22 bits: (22 ln2 + ln 0.134) / 0.3176 = (15.249 - 2.010) / 0.3176 = 41.68 -> truncated 41.
  EXPECT_EQ(gap_trigger_score(22.0, k), 41);
  // Truncation toward zero, not rounding: 41.68 does not become 42.
  EXPECT_EQ(gap_trigger_score(22.0, k),
            static_cast<int>(std::floor((22.0 * std::log(2.0) + std::log(0.134)) / 0.3176)));
  // E-value cutoffs: ceil(ln(K * ss / E) / lambda), at least 1.
  EXPECT_EQ(evalue_cutoff_score(10.0, k, 1000000),
            static_cast<int>(std::ceil(std::log(0.134 * 1e6 / 10) / 0.3176)));
  EXPECT_EQ(evalue_cutoff_score(1e10, k, 1000000), 1);  // ln < 0: the initial 1 wins
  // Gap decay 0.5 halves E first.
  EXPECT_EQ(evalue_cutoff_score(10.0, k, 1000000, 0.5),
            static_cast<int>(std::ceil(std::log(0.134 * 1e6 / 5) / 0.3176)));
  // E = 1e-300 (ungapped blastp's word cutoff) is far above the gap trigger.
  EXPECT_GT(evalue_cutoff_score(1e-300, k, 300 * 300, 0.5), 2000);

  const UngappedParams gapped = blastp_ungapped_params(k, true, 300, 400);
  EXPECT_EQ(gapped.x_dropoff, 16);
  EXPECT_EQ(gapped.cutoff_score, 41);
  EXPECT_EQ(gapped.window, 40);
  EXPECT_EQ(gapped.word_size, 3);
  EXPECT_EQ(blastp_ungapped_params(k, true, 300, 400, 30).cutoff_score, 30);  // capped by the E-value cutoff
  EXPECT_EQ(blastp_ungapped_params(k, false, 300, 400).cutoff_score, 41);
  EXPECT_EQ(blastp_ungapped_params(k, false, 300, 400, 1).cutoff_score, 1);
}

TEST(UngappedParams, Blosum62QueryParameters) {
  // The per-query ungapped block of a globin under BLOSUM62: x_dropoff = 16 and gap trigger around 41
  // (lambda ~0.31-0.33, K ~0.12-0.14), the values blastp prints for its ungapped runs.
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  const auto q = codes(
      "VLSDAEWQLVLNIWAKVEADVAGHGQDILIRLFKGHPETLEKFDKFKHLKTEAEMKASEDLKKHGNTVLTALGGILKKKGHHEAELKPLAQSHATKH"
      "KIPIKYLEFISDAIIHVLHSRHPGDFGADAQAAMNKALELFRKDIAAKYKELGFQG");
  const auto kbp = stats::query_ungapped_params(m, q);
  ASSERT_TRUE(kbp.has_value());
  const UngappedParams p = blastp_ungapped_params(*kbp, true, static_cast<int>(q.size()), 150);
  EXPECT_EQ(p.x_dropoff, static_cast<int>(std::ceil(7.0 * std::log(2.0) / kbp->lambda)));
  EXPECT_GE(p.x_dropoff, 15);
  EXPECT_LE(p.x_dropoff, 17);
  EXPECT_GE(p.cutoff_score, 38);
  EXPECT_LE(p.cutoff_score, 44);
}

// ---------------------------------------------------------------------------------------------------
// Single extensions.

TEST(UngappedExtend, XDropStopsAtTheFirstDropOfAtLeastX) {
  // positions: 0-9 match, 10-12 mismatch, 13-17 match, 18-23 mismatch.
  const auto [q, s] = diagonal_pair("mmmmmmmmmmxxxmmmmmxxxxxx");
  const std::int8_t* t = match_matrix().row(0);
  // First hit at 0 (word end 3), second at 4. The second word (4-6) scores 5, 10, 15: point p = 7.
  // Left from 6 to 0: 7 matches = 35 (stops at the sequence start), length 7 >= 7 - 3: right runs.
  // Right from 7 at 35: 40, 45, 50 (best, offset 9), 46, 42, 38: 50 - 38 = 12 >= 12 -> stop at 12.
  TwoHitExtension e = extend_two_hit(q, s, t, 3, 4, 4, 12, 3);
  EXPECT_EQ(e.score, 50);
  EXPECT_EQ(e.query_start, 0);
  EXPECT_EQ(e.subject_start, 0);
  EXPECT_EQ(e.length, 10);
  EXPECT_TRUE(e.right_extended);
  EXPECT_EQ(e.subject_last, 12);
  // X = 13: a drop of 12 is not enough; 13-17 climb to 63 (offset 17); 18-21 fall 59, 55, 51, 47:
  // 63 - 51 = 12 < 13, 63 - 47 = 16 >= 13 -> stop at 21.
  e = extend_two_hit(q, s, t, 3, 4, 4, 13, 3);
  EXPECT_EQ(e.score, 63);
  EXPECT_EQ(e.length, 18);
  EXPECT_EQ(e.subject_last, 21);
  // X = 40: the right side runs to the end (sum stays > 0: 63 - 6 * 4 = 39): subject_last = length.
  e = extend_two_hit(q, s, t, 3, 4, 4, 40, 3);
  EXPECT_EQ(e.score, 63);
  EXPECT_EQ(e.length, 18);
  EXPECT_EQ(e.subject_last, 24);
}

TEST(UngappedExtend, RightStopsWhenTheRunningScoreReachesZero) {
  // Second word at 1: "mxx" scores 5, 1, -3: the best prefix is 1 letter (p = 2). Left from 1: offset 1
  // matches (5), offset 0 mismatch (1): left score 5, length 1 (>= p - s_first_end = 2 - 1).
  // Right from 2 at 5: offset 2 mismatch -> 1, offset 3 mismatch -> -3 <= 0: stop at 3 although the
  // X-drop (100) is far; the long match run after it is never reached.
  const auto [q, s] = diagonal_pair("xmxxmmmmmmmmmm");
  const std::int8_t* t = match_matrix().row(0);
  const TwoHitExtension e = extend_two_hit(q, s, t, 1, 1, 1, 100, 3);
  EXPECT_EQ(e.score, 5);
  EXPECT_EQ(e.query_start, 1);
  EXPECT_EQ(e.length, 1);
  EXPECT_TRUE(e.right_extended);
  EXPECT_EQ(e.subject_last, 3);
}

TEST(UngappedExtend, LeftNotReachingTheFirstHitStopsTheExtension) {
  // First hit at 0 (word 0-2 matches), 3-7 mismatch, second hit at 8, 8-15 match.
  const auto [q, s] = diagonal_pair("mmmxxxxxmmmmmmmm");
  const std::int8_t* t = match_matrix().row(0);
  // p = 11; left from 10: 5, 10, 15 (offset 8), 11, 7, 3: drop 12 >= 10 -> stop. Length 3 < 11 - 3 = 8:
  // no right extension; the HSP is the left part, [8, 11) with 15; subject_last = p.
  TwoHitExtension e = extend_two_hit(q, s, t, 3, 8, 8, 10, 3);
  EXPECT_EQ(e.score, 15);
  EXPECT_EQ(e.query_start, 8);
  EXPECT_EQ(e.length, 3);
  EXPECT_FALSE(e.right_extended);
  EXPECT_EQ(e.subject_last, 11);
  // With X = 100 the left side runs to the start: 15 - 20 + 15 = 10 never beats 15, so its length stays
  // 3 and the right side still does not run: reaching means the best left extension covers the gap.
  e = extend_two_hit(q, s, t, 3, 8, 8, 100, 3);
  EXPECT_EQ(e.score, 15);
  EXPECT_EQ(e.length, 3);
  EXPECT_FALSE(e.right_extended);
}

TEST(UngappedExtend, LeftStopsAtTheShorterSequenceStart) {
  // Query shorter on the left: diagonal q - s = -2 (query offset 0 faces subject offset 2).
  const auto q = codes("WWWWWWWW");
  const auto s = codes("AAWWWWWWWW");
  const std::int8_t* t = match_matrix().row(0);
  // Second hit (q 3, s 5); the first word ended at s 5 (first hit at s 2).
  const TwoHitExtension e = extend_two_hit(q, s, t, 5, 5, 3, 16, 3);
  // p = s 8 / q 6; left covers q 5..0 (6 letters, 30) and stops at the query start; right q 6, 7 (40).
  EXPECT_EQ(e.score, 40);
  EXPECT_EQ(e.query_start, 0);
  EXPECT_EQ(e.subject_start, 2);
  EXPECT_EQ(e.length, 8);
  EXPECT_EQ(e.subject_last, 10);  // ran out of both sequences
}

// ---------------------------------------------------------------------------------------------------
// Hit streams.

TEST(UngappedTwoHit, WindowIsExclusive) {
  const auto [q, s] = diagonal_pair(std::string(120, 'm'));
  std::vector<UngappedHsp> out;
  TwoHitFinder f(q, match_matrix(), params_of(16, 1));
  // 0 and 40: distance 40 = window: not a pair; 40 becomes the first hit.
  std::vector<WordHit> hits = {{0, 0}, {40, 40}};
  UngappedCounts c = f.run(s, hits, out);
  EXPECT_EQ(c.hits, 2);
  EXPECT_EQ(c.extended, 0);
  EXPECT_TRUE(out.empty());
  // 0 and 39: a pair. The whole diagonal matches, so the extension covers all of it.
  hits = {{0, 0}, {39, 39}};
  c = f.run(s, hits, out);
  EXPECT_EQ(c.extended, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (UngappedHsp{600, 0, 120, 0, 120, 39, 39}));
  // 0, 40, 79: 40 replaces 0 as the first hit and pairs with 79.
  out.clear();
  hits = {{0, 0}, {40, 40}, {79, 79}};
  c = f.run(s, hits, out);
  EXPECT_EQ(c.extended, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].hit_subject_offset, 79);
}

TEST(UngappedTwoHit, OverlappingHitsAreIgnoredAndKeepTheFirstHit) {
  const auto [q, s] = diagonal_pair(std::string(60, 'm'));
  std::vector<UngappedHsp> out;
  TwoHitFinder f(q, match_matrix(), params_of(16, 1));
  // 1 and 2 overlap the word at 0 (distance < 3): ignored, 0 stays the first hit, so 3 pairs with 0.
  std::vector<WordHit> hits = {{10, 10}, {11, 11}, {12, 12}, {13, 13}};
  UngappedCounts c = f.run(s, hits, out);
  EXPECT_EQ(c.hits, 4);
  EXPECT_EQ(c.extended, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].hit_subject_offset, 13);
  // Word size 4: distance 3 overlaps too.
  TwoHitFinder f4(q, match_matrix(), params_of(16, 1, 40, 4));
  out.clear();
  hits = {{10, 10}, {13, 13}, {14, 14}};
  c = f4.run(s, hits, out);
  EXPECT_EQ(c.extended, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].hit_subject_offset, 14);
}

TEST(UngappedTwoHit, HitsInsideAnExtensionAreSkippedThenRestart) {
  // Diagonal 0: 0-9 match, 10-12 mismatch, then matches. X = 12: the extension from hits 0 and 4 stops
  // at subject 12 (see UngappedExtend), so the diagonal's last hit becomes 12 - 2 = 10 with the flag.
  const auto [q, s] = diagonal_pair("mmmmmmmmmmxxx" + std::string(40, 'm'));
  std::vector<UngappedHsp> out;
  TwoHitFinder f(q, match_matrix(), params_of(12, 1));
  // 9: before 10, skipped. 10: at the mark: becomes a first hit (no extension). 12: too close to 10
  // (overlap), ignored. 13: pairs with 10 -> the second extension.
  std::vector<WordHit> hits = {{0, 0}, {4, 4}, {9, 9}, {10, 10}, {12, 12}, {13, 13}};
  const UngappedCounts c = f.run(s, hits, out);
  EXPECT_EQ(c.extended, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (UngappedHsp{50, 0, 10, 0, 10, 4, 4}));
  // Second extension: p = 16, left from 15: 5, 10, 15 (13-15), then 12-10 mismatch: 11, 7, 3 (drop 12)
  // -> stop; length 3 >= 16 - 13 = 3: reaches the first word's end, so the right side runs to the end:
  // 15 + 37 * 5 = 200 over [13, 53).
  EXPECT_EQ(out[1], (UngappedHsp{200, 13, 53, 13, 53, 13, 13}));
}

TEST(UngappedTwoHit, FailedLeftExtensionMakesTheSecondHitTheFirst) {
  // As in UngappedExtend.LeftNotReachingTheFirstHitStopsTheExtension, then a third hit at 12.
  const auto [q, s] = diagonal_pair("mmmxxxxxmmmmmmmmmmmm");
  std::vector<UngappedHsp> out;
  TwoHitFinder f(q, match_matrix(), params_of(10, 15));
  std::vector<WordHit> hits = {{0, 0}, {8, 8}, {12, 12}};
  const UngappedCounts c = f.run(s, hits, out);
  EXPECT_EQ(c.extended, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (UngappedHsp{15, 8, 11, 8, 11, 8, 8}));  // left part only, saved (15 >= 15)
  // 12 pairs with 8 (not 0): p = 15, left from 14 to 8 = 35, then 7, 6, 5 -> 31, 27, 23: stop; length 7
  // >= 15 - 11: the right side runs to the end: 35 + 5 * 5 = 60 over [8, 20).
  EXPECT_EQ(out[1], (UngappedHsp{60, 8, 20, 8, 20, 12, 12}));
}

TEST(UngappedTwoHit, CutoffIsInclusive) {
  const auto [q, s] = diagonal_pair("mmmxxxxxmmmmmmmm");
  for (int cutoff : {15, 16}) {
    std::vector<UngappedHsp> out;
    TwoHitFinder f(q, match_matrix(), params_of(10, cutoff));
    const std::vector<WordHit> hits = {{0, 0}, {8, 8}};
    const UngappedCounts c = f.run(s, hits, out);
    EXPECT_EQ(c.extended, 1);
    EXPECT_EQ(c.saved, cutoff == 15 ? 1 : 0);
    EXPECT_EQ(out.size(), cutoff == 15 ? 1u : 0u);
  }
}

TEST(UngappedTwoHit, SortFollowsBlastOrder) {
  std::vector<UngappedHsp> h = {{10, 5, 9, 7, 11, 0, 0}, {20, 0, 3, 4, 7, 0, 0}, {10, 1, 6, 7, 12, 0, 0},
                                {10, 0, 5, 7, 12, 0, 0}, {10, 3, 8, 2, 7, 0, 0}, {10, 0, 5, 7, 12, 1, 1}};
  sort_ungapped_hsps(h);
  const std::vector<UngappedHsp> want = {{20, 0, 3, 4, 7, 0, 0},  {10, 3, 8, 2, 7, 0, 0},
                                         {10, 0, 5, 7, 12, 0, 0}, {10, 0, 5, 7, 12, 1, 1},
                                         {10, 1, 6, 7, 12, 0, 0}, {10, 5, 9, 7, 11, 0, 0}};
  EXPECT_EQ(h, want);
}

// ---------------------------------------------------------------------------------------------------
// Brute-force reference: the documented rules, written directly (an unbounded map of diagonals per
// subject, explicit position lists along the diagonal).

struct RefResult {
  std::vector<UngappedHsp> hsps;
  std::int64_t extended = 0;
};

RefResult reference(const std::vector<std::uint8_t>& q, const std::vector<std::uint8_t>& s,
                    const std::vector<WordHit>& hits, const ScoringMatrix& m, const UngappedParams& p) {
  struct State {
    bool any = false;
    int last = 0;
    bool flag = false;
  };
  std::map<int, State> diag;
  RefResult r;
  const int qn = static_cast<int>(q.size());
  const int sn = static_cast<int>(s.size());
  for (const WordHit& h : hits) {
    State& st = diag[h.query_offset - h.subject_offset];
    const int so = h.subject_offset;
    const int qo = h.query_offset;
    if (st.flag) {
      if (so < st.last) continue;
      st = {true, so, false};
      continue;
    }
    if (!st.any || so - st.last >= p.window) {
      st = {true, so, false};
      continue;
    }
    const int diff = so - st.last;
    if (diff < p.word_size) continue;
    const int first_end = st.last + p.word_size;
    ++r.extended;
    auto sc = [&](int qi, int si) {
      return m.score(q[static_cast<std::size_t>(qi)], s[static_cast<std::size_t>(si)]);
    };
    // Best prefix of the second word.
    int k_best = 0;
    int v_best = 0;
    for (int k = 1, acc = 0; k <= p.word_size; ++k) {
      acc += sc(qo + k - 1, so + k - 1);
      if (acc > v_best) v_best = acc, k_best = k;
    }
    const int qp = qo + k_best;
    const int sp = so + k_best;
    // Left: sums over lengths 1, 2, ... ; best length is the shortest reaching the maximum (> 0).
    int left_len = 0;
    int left_score = 0;
    for (int len = 1, acc = 0; len <= std::min(qp, sp); ++len) {
      acc += sc(qp - len, sp - len);
      if (acc > left_score) left_score = acc, left_len = len;
      if (left_score - acc >= p.x_dropoff) break;
    }
    int right_len = 0;
    int right_score = 0;
    bool right = false;
    int stop = sp;
    if (left_len >= sp - first_end) {
      right = true;
      int acc = left_score;
      int best = left_score;
      const int avail = std::min(qn - qp, sn - sp);
      int len = 1;
      for (; len <= avail; ++len) {
        acc += sc(qp + len - 1, sp + len - 1);
        if (acc > best) best = acc, right_len = len;
        if (acc <= 0 || best - acc >= p.x_dropoff) break;
      }
      stop = sp + len - 1;  // the stopping position, or sp + avail when it ran out
      right_score = best;
    }
    const int score = std::max(left_score, right_score);
    if (score >= p.cutoff_score) {
      r.hsps.push_back({score, qp - left_len, qp + right_len, sp - left_len, sp + right_len, qo, so});
    }
    if (right) {
      st = {true, stop - (p.word_size - 1), true};
    } else {
      st = {true, so, false};
    }
  }
  return r;
}

using HspKey = std::tuple<int, int, int, int, int, int, int>;
std::vector<HspKey> keys(const std::vector<UngappedHsp>& v) {
  std::vector<HspKey> k;
  for (const auto& h : v) {
    k.emplace_back(h.score, h.query_start, h.query_end, h.subject_start, h.subject_end, h.hit_query_offset,
                   h.hit_subject_offset);
  }
  std::sort(k.begin(), k.end());
  return k;
}

std::vector<std::uint8_t> random_protein(std::mt19937& rng, int n) {
  // Mostly canonical residues, a few B/Z/X/*.
  std::uniform_int_distribution<int> d(0, 99);
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n));
  for (auto& c : v) {
    const int r = d(rng);
    c = static_cast<std::uint8_t>(r < 97 ? r % 20 : (r == 97 ? 20 : r == 98 ? 25 : 26));
  }
  return v;
}

// A subject made of mutated copies of query pieces (long-scoring diagonals) and random stretches.
std::vector<std::uint8_t> related_subject(std::mt19937& rng, const std::vector<std::uint8_t>& q, int n) {
  std::vector<std::uint8_t> s;
  std::uniform_int_distribution<int> pct(0, 99);
  while (static_cast<int>(s.size()) < n) {
    if (pct(rng) < 50) {
      const auto r = random_protein(rng, 1 + pct(rng) % 30);
      s.insert(s.end(), r.begin(), r.end());
    } else {
      const int len = 5 + pct(rng) % 60;
      const int start = static_cast<int>(rng() % q.size());
      const int mut = pct(rng) % 50;
      for (int i = 0; i < len && start + i < static_cast<int>(q.size()); ++i) {
        s.push_back(pct(rng) < mut ? static_cast<std::uint8_t>(pct(rng) % 20)
                                   : q[static_cast<std::size_t>(start + i)]);
      }
    }
  }
  s.resize(static_cast<std::size_t>(n));
  return s;
}

// Word hits in scanner order: every (i, j) whose words score >= threshold, plus random extra hits on a
// few busy diagonals; ascending subject offset, within one offset in a shuffled order.
std::vector<WordHit> random_hits(std::mt19937& rng, const std::vector<std::uint8_t>& q,
                                 const std::vector<std::uint8_t>& s, const ScoringMatrix& m, int word,
                                 int threshold) {
  std::vector<WordHit> hits;
  const int qn = static_cast<int>(q.size());
  const int sn = static_cast<int>(s.size());
  for (int j = 0; j + word <= sn; ++j) {
    for (int i = 0; i + word <= qn; ++i) {
      int sc = 0;
      for (int k = 0; k < word; ++k)
        sc += m.score(q[static_cast<std::size_t>(i + k)], s[static_cast<std::size_t>(j + k)]);
      if (sc >= threshold) hits.push_back({i, j});
    }
  }
  std::uniform_int_distribution<int> pct(0, 99);
  for (int d = 0; d < 4; ++d) {
    const int diag = static_cast<int>(rng() % static_cast<unsigned>(qn + sn)) - sn;  // q - s
    for (int j = 0; j + word <= sn; ++j) {
      const int i = j + diag;
      if (i >= 0 && i + word <= qn && pct(rng) < 15) hits.push_back({i, j});
    }
  }
  std::shuffle(hits.begin(), hits.end(), rng);
  std::stable_sort(hits.begin(), hits.end(),
                   [](const WordHit& a, const WordHit& b) { return a.subject_offset < b.subject_offset; });
  hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
  return hits;
}

TEST(UngappedRandom, MatchesBruteForceRules) {
  std::mt19937 rng(20261121);
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  std::int64_t total_ext = 0;
  std::int64_t total_saved = 0;
  std::int64_t ending_in_word = 0;
  for (int round = 0; round < 60; ++round) {
    const int qn = 20 + static_cast<int>(rng() % 250);
    const auto q = random_protein(rng, qn);
    UngappedParams p;
    p.word_size = 2 + static_cast<int>(rng() % 3);
    p.window = round % 3 == 0 ? 40 : p.word_size + static_cast<int>(rng() % 60);
    p.x_dropoff = 1 + static_cast<int>(rng() % 30);
    p.cutoff_score = static_cast<int>(rng() % 45);
    const int threshold = p.word_size * 11 / 3;
    // A small offset limit now and then, to exercise the table clear.
    const std::int32_t limit = round % 4 == 0 ? 3000 : INT32_MAX / 4;
    TwoHitFinder f(q, b62, p, limit);
    for (int subj = 0; subj < 6; ++subj) {
      // Subjects much longer than the query make masked diagonals share entries.
      const int sn = 10 + static_cast<int>(rng() % (subj % 2 == 0 ? 300 : 1500));
      const auto s = rng() % 2 == 0 ? related_subject(rng, q, sn) : random_protein(rng, sn);
      const auto hits = random_hits(rng, q, s, b62, p.word_size, threshold);
      std::vector<UngappedHsp> got;
      const UngappedCounts c = f.run(s, hits, got);
      // The reference takes the hits ordered by query offset within one subject offset (another order).
      auto hits2 = hits;
      std::stable_sort(hits2.begin(), hits2.end(), [](const WordHit& a, const WordHit& b) {
        return std::tie(a.subject_offset, a.query_offset) < std::tie(b.subject_offset, b.query_offset);
      });
      const RefResult want = reference(q, s, hits2, b62, p);
      ASSERT_EQ(c.hits, static_cast<std::int64_t>(hits.size()));
      ASSERT_EQ(c.extended, want.extended) << "round " << round << " subject " << subj;
      ASSERT_EQ(keys(got), keys(want.hsps)) << "round " << round << " subject " << subj;
      ASSERT_EQ(c.saved, static_cast<std::int64_t>(got.size()));
      total_ext += c.extended;
      total_saved += c.saved;
      for (const auto& h : got) ending_in_word += h.query_end <= h.hit_query_offset + p.word_size ? 1 : 0;
    }
  }
  // The streams exercised the rules (not vacuous): many extensions and saved HSPs, some of them ending
  // inside the second word (left-only HSPs, or right extensions that found nothing better).
  EXPECT_GT(total_ext, 2000);
  EXPECT_GT(total_saved, 500);
  EXPECT_GT(ending_in_word, 10);
}

// ---------------------------------------------------------------------------------------------------
// Against blastp 2.12.

std::string run_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

struct Record {
  std::string name;
  std::string letters;
};

// The first `max` records of a FASTA file (letters upper-cased, whitespace dropped).
std::vector<Record> read_fasta(const std::string& path, std::size_t max) {
  std::vector<Record> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      if (out.size() == max) break;
      out.push_back({line.substr(1), {}});
    } else if (!out.empty()) {
      for (char c : line) {
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '*') {
          out.back().letters += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
      }
    }
  }
  return out;
}

// BLAST+'s word hits for word size 3 and threshold 11 (blast_aalookup.c): a query word is indexed under
// every subject word scoring >= 11 against it (the neighbourhood enumeration runs over the whole
// alphabet, ambiguity letters included) and, when its self-score is below 11, under itself too (exact
// matches are always added); every subject word is looked up. Hence hit (i, j) iff score >= 11 or the
// words are identical. Scanner order: ascending subject offset (the order within one offset does not
// matter, see ungapped.hpp).
std::vector<WordHit> blast_word_hits(const std::vector<std::uint8_t>& q, const std::vector<std::uint8_t>& s,
                                     const ScoringMatrix& m) {
  std::vector<WordHit> hits;
  for (std::size_t j = 0; j + 3 <= s.size(); ++j) {
    for (std::size_t i = 0; i + 3 <= q.size(); ++i) {
      const int sc = m.score(q[i], s[j]) + m.score(q[i + 1], s[j + 1]) + m.score(q[i + 2], s[j + 2]);
      const bool exact = q[i] == s[j] && q[i + 1] == s[j + 1] && q[i + 2] == s[j + 2];
      if (sc >= 11 || exact) hits.push_back({static_cast<std::int32_t>(i), static_cast<std::int32_t>(j)});
    }
  }
  return hits;
}

// blastp -ungapped keeps every ungapped HSP that reaches the word-stage cutoff and then passes its
// E-value: with -evalue 1e10 the hit-saving cutoff (BLAST_Cutoffs at E = 1e10 over a search space of at
// most qlen * slen) is 1, so the stage cutoff is min(gap trigger, 1) = 1, and every extension scoring
// >= 1 survives (sum-statistics E-values of such pairs stay far below 1e10). No purge of common
// endpoints happens in ungapped searches, so the sets must agree exactly.
// xdrop_bits: blastp's -xdrop_ungap (default 7 bits).
void compare_with_blastp(const test::TempDir& dir, const Record& qr, const Record& sr, int* total,
                         double xdrop_bits = kUngappedXDropoffBits) {
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  const auto q = codes(qr.letters);
  const auto s = codes(sr.letters);
  {
    std::ofstream(dir / "q.fa") << ">q\n" << qr.letters << "\n";
    std::ofstream(dir / "s.fa") << ">s\n" << sr.letters << "\n";
  }
  const std::string out =
      run_output("blastp -query " + dir / "q.fa" + " -subject " + dir / "s.fa" +
                 " -ungapped -comp_based_stats 0 -seg no -evalue 1e10 -xdrop_ungap " +
                 std::to_string(xdrop_bits) + " -outfmt '6 qstart qend sstart send score' 2>&1");
  std::vector<std::tuple<int, int, int, int, int>> want;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    int a = 0, b = 0, c = 0, d = 0, sc = 0;
    ASSERT_TRUE(static_cast<bool>(f >> a >> b >> c >> d >> sc)) << "blastp said: " << out;
    want.emplace_back(sc, a, b, c, d);
  }
  const auto kbp = stats::query_ungapped_params(m, q);
  ASSERT_TRUE(kbp.has_value());
  const int qn = static_cast<int>(q.size());
  const int sn = static_cast<int>(s.size());
  const int hit_cutoff = evalue_cutoff_score(1e10, *kbp, static_cast<std::int64_t>(qn) * sn);
  ASSERT_EQ(hit_cutoff, 1);
  const UngappedParams p = blastp_ungapped_params(*kbp, false, qn, sn, hit_cutoff, xdrop_bits);
  TwoHitFinder f(q, m, p);
  std::vector<UngappedHsp> got_hsps;
  f.run(s, blast_word_hits(q, s, m), got_hsps);
  std::vector<std::tuple<int, int, int, int, int>> got;
  for (const auto& h : got_hsps) {
    got.emplace_back(h.score, h.query_start + 1, h.query_end, h.subject_start + 1, h.subject_end);
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want) << qr.name << " vs " << sr.name << " (x_dropoff " << p.x_dropoff << ")";
  *total += static_cast<int>(want.size());
}

TEST(UngappedBlast, MatchesBlastpUngapped) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const test::TempDir dir("ungapped_blastp");
  const auto globins = read_fasta((test::testdata_dir() / "prot/globins45.fa").string(), 45);
  ASSERT_EQ(globins.size(), 45u);
  // Related and distant globin pairs, and one self comparison.
  const std::vector<std::pair<int, int>> pairs = {{0, 1},   {0, 30}, {5, 44}, {12, 25},
                                                  {40, 41}, {7, 7},  {20, 3}};
  int total = 0;
  for (auto [a, b] : pairs) {
    compare_with_blastp(dir, globins[static_cast<std::size_t>(a)], globins[static_cast<std::size_t>(b)],
                        &total);
  }
  // Unrelated longer proteins (many short ungapped HSPs). U and O score differently in BLAST+ (U like C)
  // than in our built-in table (like X): records with them are left out.
  const auto db = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 80);
  std::vector<Record> picked;
  for (const auto& r : db) {
    if (r.letters.size() >= 150 && r.letters.size() <= 700 &&
        r.letters.find_first_of("UO") == std::string::npos) {
      picked.push_back(r);
    }
  }
  ASSERT_GE(picked.size(), 16u);
  for (std::size_t i = 0; i < 16; i += 2) compare_with_blastp(dir, picked[i], picked[i + 1], &total);
  // Other X-drops (-xdrop_ungap in bits), on related pairs where extensions run long.
  for (double bits : {2.5, 4.0, 12.0, 20.0}) {
    compare_with_blastp(dir, globins[0], globins[30], &total, bits);
    compare_with_blastp(dir, globins[12], globins[25], &total, bits);
    compare_with_blastp(dir, picked[8], picked[9], &total, bits);
  }
  EXPECT_GT(total, 200);
}

}  // namespace
}  // namespace warpsearch::blast
