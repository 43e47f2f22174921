// test_prelim_screen.cpp: the header-only stage code shared by the CPU and the GPU (two_hit.hpp, xdrop.hpp,
// prelim_screen.hpp).
//
// Contents:
//   extend_two_hit_raw against extend_two_hit on random inputs;
//   preliminary_gapped_alignment_raw against preliminary_gapped_alignment (and against semi_gapped_extend
//   on explicitly reversed copies, which checks the in-place reverse reading) on random and planted pairs,
//   restricted or not, subjects of >= 90000 residues included; bounded columns: a call either fails or gives
//   the unbounded result, success is monotone in the capacity, and nothing past col[capacity - 1] is written
//   (guard cells); ring columns (the GPU screen's): success is monotone in the size, a ring as wide as the
//   smallest working flat column always holds the extension, results equal, interleaved (strided) rings too;
//   early stop (stop_at): the complete result below it, a lower bound at or above it;
//   screen_split (the GPU's split form) against screen_preliminary, unbounded, bounded and ring columns
//   (a ring's kEmpty is the unbounded kEmpty);
//   screen_preliminary against preliminary_hsps on UniProt queries x DB20k subjects and on random inputs
//   with planted homologs, with -evalue settings that enable the restricted path (inconclusive restricted
//   scores included) and that disable it: kEmpty implies no preliminary HSP and equal counts; the verdict
//   equals an independent recomputation of the stage's loop (kFull exactly when an extension reaches the
//   cutoff, or, with a bounded column, a DP needs more cells first).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "blast/gapped.hpp"
#include "blast/gpu_stage.hpp"
#include "blast/prelim_screen.hpp"
#include "blast/search.hpp"
#include "blast/two_hit.hpp"
#include "blast/ungapped.hpp"
#include "blast/xdrop.hpp"
#include "protein_fasta.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"

namespace warpsearch::blast {
namespace {

using Seq = std::vector<std::uint8_t>;

const ScoringMatrix& blosum62() {
  static const ScoringMatrix m = blast_scoring_matrix(ScoringMatrix::builtin("BLOSUM62"));
  return m;
}

int uniform(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

Seq random_seq(std::mt19937& rng, int lo, int hi) {
  const std::string letters = "ACDEFGHIKLMNPQRSTVWYACDEFGHIKLMNPQRSTVWYX";
  const Alphabet alpha = Alphabet::protein();
  Seq s(static_cast<std::size_t>(uniform(rng, lo, hi)));
  for (auto& c : s) c = *alpha.code(letters[static_cast<std::size_t>(uniform(rng, 0, 40))]);
  return s;
}

// A homolog of src: substitutions at `sub_pct` percent of the positions, and indels at `indel_pct`.
Seq mutated(std::mt19937& rng, const Seq& src, int sub_pct, int indel_pct) {
  Seq out;
  for (const std::uint8_t c : src) {
    const int roll = uniform(rng, 0, 99);
    if (roll < indel_pct) continue;
    if (roll < 2 * indel_pct) out.push_back(static_cast<std::uint8_t>(uniform(rng, 0, 19)));
    out.push_back(uniform(rng, 0, 99) < sub_pct ? static_cast<std::uint8_t>(uniform(rng, 0, 19)) : c);
  }
  return out;
}

// `host` with a homolog of `piece` written over it at `at`.
void plant(std::mt19937& rng, Seq& host, const Seq& piece, std::size_t at, int sub_pct, int indel_pct) {
  const Seq m = mutated(rng, piece, sub_pct, indel_pct);
  for (std::size_t i = 0; i < m.size() && at + i < host.size(); ++i) host[at + i] = m[i];
}

bool same(const TwoHitExtension& a, const TwoHitExtension& b) {
  return a.score == b.score && a.query_start == b.query_start && a.subject_start == b.subject_start &&
         a.length == b.length && a.right_extended == b.right_extended && a.subject_last == b.subject_last;
}

TEST(TwoHitRaw, SameAsExtendTwoHit) {
  std::mt19937 rng(701);
  const std::int8_t* table = blosum62().row(0);
  int extended_right = 0;
  for (int round = 0; round < 3000; ++round) {
    const Seq q = random_seq(rng, 4, 300);
    Seq s = random_seq(rng, 4, 300);
    if (round % 2 == 0) plant(rng, s, q, 0, 30, 0);  // long ungapped similarity: right extensions
    const int word_size = uniform(rng, 2, 3);
    const auto q_len = static_cast<std::int32_t>(q.size());
    const auto s_len = static_cast<std::int32_t>(s.size());
    if (q_len < word_size || s_len < word_size) continue;
    const std::int32_t q_second = uniform(rng, 0, q_len - word_size);
    const std::int32_t s_second = uniform(rng, 0, s_len - word_size);
    const std::int32_t s_first_end = s_second - uniform(rng, 0, std::min(s_second, 40)) + word_size;
    const int x = uniform(rng, 1, 30);
    const TwoHitExtension expected =
        extend_two_hit(q, s, table, s_first_end, s_second, q_second, x, word_size);
    const TwoHitExtension actual = extend_two_hit_raw(q.data(), q_len, s.data(), s_len, table, s_first_end,
                                                      s_second, q_second, x, word_size);
    ASSERT_TRUE(same(actual, expected)) << "round " << round;
    extended_right += expected.right_extended ? 1 : 0;
  }
  EXPECT_GT(extended_right, 300);
}

// A column with guard cells after `capacity`: calls f(col, capacity) and checks that no guard changed.
constexpr int kGuardCells = 64;
constexpr int kGuardValue = 0x5a5a5a5a;

template <class F>
bool with_guarded_column(int capacity, F&& f) {
  std::vector<XdropCell> col(static_cast<std::size_t>(capacity + kGuardCells),
                             XdropCell{kGuardValue, kGuardValue});
  const bool ok = f(col.data(), capacity);
  for (std::size_t i = static_cast<std::size_t>(capacity); i < col.size(); ++i) {
    EXPECT_EQ(col[i].best, kGuardValue) << "capacity " << capacity << " cell " << i;
    EXPECT_EQ(col[i].best_gap, kGuardValue) << "capacity " << capacity << " cell " << i;
  }
  return ok;
}

// One seed: raw with a large column == preliminary_gapped_alignment == the two halves of semi_gapped_extend
// on reversed copies; bounded columns behave as the contract says. Returns the smallest capacity that works.
int check_seed(const Seq& q, const Seq& s, const GappedParams& p, SeedPoint seed, bool restricted) {
  const ScoringMatrix& m = blosum62();
  const auto q_len = static_cast<int>(q.size());
  const auto s_len = static_cast<int>(s.size());
  const GappedScore expected = preliminary_gapped_alignment(q, s, m, p, seed, restricted);

  // Independent composition for subjects below AdjustSubjectRange's limit: the reverse half on reversed
  // copies, read forward.
  if (s_len < 90000) {
    const Seq q_rev(q.rbegin() + (q_len - seed.q - 1), q.rend());
    const Seq s_rev(s.rbegin() + (s_len - seed.s - 1), s.rend());
    const HalfExtension left = semi_gapped_extend(q_rev, s_rev, false, m, p, restricted);
    HalfExtension right;
    if (seed.q + 1 < q_len && seed.s + 1 < s_len)
      right = semi_gapped_extend(Residues(q).subspan(static_cast<std::size_t>(seed.q) + 1),
                                 Residues(s).subspan(static_cast<std::size_t>(seed.s) + 1), false, m, p,
                                 restricted);
    EXPECT_EQ(expected.score, left.score + right.score);
    EXPECT_EQ(expected.q_start, seed.q + 1 - left.a_length);
    EXPECT_EQ(expected.s_start, seed.s + 1 - left.b_length);
    EXPECT_EQ(expected.q_end, seed.q + 1 + right.a_length);
    EXPECT_EQ(expected.s_end, seed.s + 1 + right.b_length);
  }

  auto run = [&](XdropCell* col, int capacity, GappedScore* out) {
    return preliminary_gapped_alignment_raw(q.data(), q_len, s.data(), s_len, m.row(0), p.gap_open,
                                            p.gap_extend, p.x_dropoff, seed, restricted, col, capacity, out);
  };
  GappedScore big;
  EXPECT_TRUE(with_guarded_column(s_len + 1, [&](XdropCell* col, int cap) { return run(col, cap, &big); }));
  EXPECT_EQ(big, expected);

  // The smallest capacity that works (success is monotone: binary search), then its neighbours.
  int lo = 0, hi = s_len + 1;  // run fails at lo (or lo == 0 is untested), works at hi
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    GappedScore g;
    if (with_guarded_column(mid, [&](XdropCell* col, int cap) { return run(col, cap, &g); })) {
      EXPECT_EQ(g, expected) << "capacity " << mid;
      hi = mid;
    } else {
      lo = mid;
    }
  }
  EXPECT_GE(hi, 1);  // the reverse half has the seed pair: it writes col[0] at least
  for (const int cap : {0, 1}) {
    GappedScore g;
    const bool ok = with_guarded_column(cap, [&](XdropCell* col, int c) { return run(col, c, &g); });
    EXPECT_EQ(ok, cap >= hi) << "capacity " << cap;
  }
  for (int cap = std::max(0, hi - 3); cap <= std::min(s_len + 1, hi + 3); ++cap) {
    GappedScore g;
    const bool ok = with_guarded_column(cap, [&](XdropCell* col, int c) { return run(col, c, &g); });
    EXPECT_EQ(ok, cap >= hi) << "capacity " << cap << ", smallest working " << hi;
    if (ok) {
      EXPECT_EQ(g, expected);
    }
  }

  // Ring columns (the GPU screen's): a ring holds the extension once it is as wide as the widest band, and
  // then gives the complete result; success is monotone in the size; a band is never wider than the flat
  // column the extension needs, so a ring of that many cells always holds it. Interleaved rings (stride 3)
  // give the same.
  bool held = false;
  for (int size = 1; size <= 4096; size *= 2) {
    for (const int stride : {1, 3}) {
      std::vector<XdropCell> ring(static_cast<std::size_t>(size * stride));
      GappedScore g;
      const bool ok = preliminary_gapped_alignment_on(q.data(), q_len, s.data(), s_len, m.row(0), p.gap_open,
                                                      p.gap_extend, p.x_dropoff, seed, restricted,
                                                      xdrop::RingColumn{ring.data(), size - 1, stride}, &g);
      if (held || size >= hi) {
        EXPECT_TRUE(ok) << "ring " << size << ", smallest flat column " << hi;
      }
      if (ok) {
        EXPECT_EQ(g, expected) << "ring " << size;
      }
      if (stride == 3) held = held || ok;
    }
  }

  // Early stop: below stop_at the complete result; at or above it a lower bound of the complete score.
  for (const int stop_at : {1, expected.score / 2, expected.score, expected.score + 1}) {
    if (stop_at < 1) continue;
    GappedScore g;
    EXPECT_TRUE(with_guarded_column(s_len + 1, [&](XdropCell* col, int cap) {
      return preliminary_gapped_alignment_raw(q.data(), q_len, s.data(), s_len, m.row(0), p.gap_open,
                                              p.gap_extend, p.x_dropoff, seed, restricted, col, cap, &g,
                                              stop_at);
    }));
    if (expected.score < stop_at) {
      EXPECT_EQ(g, expected) << "stop_at " << stop_at;
    } else {
      EXPECT_GE(g.score, stop_at);
      EXPECT_LE(g.score, expected.score) << "stop_at " << stop_at;
    }
  }
  return hi;
}

TEST(PreliminaryGappedRaw, SameAsPreliminaryGappedAlignment) {
  std::mt19937 rng(702);
  int bounded = 0;  // seeds whose smallest working column is well below the subject length
  for (int round = 0; round < 300; ++round) {
    const Seq q = random_seq(rng, 1, 400);
    Seq s = random_seq(rng, 1, 900);
    const bool planted = round % 3 != 0 && s.size() > 50;
    if (planted)
      plant(rng, s, q, static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(s.size()) / 2)), 40, 4);
    GappedParams p{uniform(rng, 6, 13), uniform(rng, 1, 2), 0};
    p.x_dropoff = round % 4 == 0 ? uniform(rng, 0, 10) : uniform(rng, 20, 60);
    SeedPoint seed{uniform(rng, 0, static_cast<int>(q.size()) - 1),
                   uniform(rng, 0, static_cast<int>(s.size()) - 1)};
    const int need = check_seed(q, s, p, seed, round % 2 == 1);
    if (need * 2 < static_cast<int>(s.size())) ++bounded;
    if (HasFailure()) FAIL() << "round " << round;
  }
  EXPECT_GT(bounded, 50);
}

TEST(PreliminaryGappedRaw, LongSubject) {
  // >= 90000 residues: AdjustSubjectRange cuts both halves' subject ranges (the seed is far from both ends).
  std::mt19937 rng(703);
  for (int round = 0; round < 4; ++round) {
    const Seq q = random_seq(rng, 150, 300);
    Seq s = random_seq(rng, 90000, 100000);
    const std::size_t at = static_cast<std::size_t>(uniform(rng, 20000, 60000));
    plant(rng, s, q, at, 30, 3);
    const GappedParams p{11, 1, round < 2 ? 38 : 500};
    const SeedPoint seed{static_cast<int>(q.size()) / 2, static_cast<int>(at + q.size() / 2)};
    check_seed(q, s, p, seed, round % 2 == 1);
    if (HasFailure()) FAIL() << "round " << round;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The screen.

std::vector<UngappedHsp> ungapped_hsps(const QueryContext& c, const Seq& subject, TwoHitFinder& finder) {
  // SubjectScanner::run's word scan feeding the two-hit finder, then BLAST's sort.
  std::vector<UngappedHsp> out;
  const AaLookupTable& table = c.table();
  const int w = table.word_size();
  finder.begin_subject(subject, out);
  const auto n = static_cast<std::int32_t>(subject.size());
  if (n >= w) {
    std::uint32_t index = 0;
    for (int k = 0; k < w - 1; ++k) index = (index << kLookupCharBits) | subject[static_cast<std::size_t>(k)];
    for (std::int32_t s = 0; s + w <= n; ++s) {
      index = ((index << kLookupCharBits) | subject[static_cast<std::size_t>(s + w - 1)]) & table.word_mask();
      if (!table.present(index)) continue;
      for (const std::uint32_t q : table.hits(index)) finder.hit(static_cast<std::int32_t>(q), s);
    }
  }
  finder.end_subject();
  sort_ungapped_hsps(out);
  return out;
}

struct Reference {
  bool full = false;
  bool restricted_path = false;  // the loop started restricted
  ScreenCounts counts;
};

// The stage's loop recomputed from BLAST's rules with the span API (constants written out here, not taken
// from ScreenParams): stops at the first extension reaching the cutoff, or, when capacity > 0, at the first
// extension whose DP does not fit `capacity` cells (as told by the raw function).
Reference reference_screen(const QueryContext& c, const Seq& subject, const std::vector<UngappedHsp>& hsps,
                           int capacity) {
  const int cutoff = c.setup().cutoff_score;
  const int restricted_cutoff = static_cast<int>(0.68 * cutoff);
  const GappedParams p{c.options().gaps.open, c.options().gaps.extend,
                       c.setup().gapped_x_dropoffs.preliminary};
  Reference r;
  bool restricted = c.options().evalue <= 10.0 && !hsps.empty() && hsps.front().score < restricted_cutoff;
  r.restricted_path = restricted;
  std::vector<XdropCell> col(static_cast<std::size_t>(std::max(capacity, 1)));
  for (std::size_t i = 0; i < hsps.size(); ++i) {
    const UngappedHsp& u = hsps[i];
    ++r.counts.gapped_extensions;
    const SeedPoint seed = gapped_start(c.query(), subject, c.scoring(), u.query_start, u.subject_start,
                                        u.query_end - u.query_start);
    const GappedScore g = preliminary_gapped_alignment(c.query(), subject, c.scoring(), p, seed, restricted);
    if (capacity > 0) {
      GappedScore bounded;
      if (!preliminary_gapped_alignment_raw(c.query().data(), static_cast<int>(c.query().size()),
                                            subject.data(), static_cast<int>(subject.size()),
                                            c.scoring().row(0), p.gap_open, p.gap_extend, p.x_dropoff, seed,
                                            restricted, col.data(), capacity, &bounded)) {
        r.full = true;
        return r;
      }
      EXPECT_EQ(bounded, g);
    }
    if (restricted && g.score < cutoff && g.score >= restricted_cutoff) {
      ++r.counts.redone;
      restricted = false;
      i = static_cast<std::size_t>(-1);
      continue;
    }
    if (g.score >= cutoff) {
      r.full = true;
      return r;
    }
  }
  return r;
}

struct Tally {
  int pairs = 0;
  int empty = 0;          // kEmpty with an unbounded column
  int full = 0;           // kFull with an unbounded column
  int full_prelim = 0;    // ... where preliminary_hsps returns HSPs
  int restricted = 0;     // pairs whose loop starts restricted
  int redone_empty = 0;   // kEmpty pairs with an inconclusive restricted score (a restart)
  int redone = 0;         // pairs with a restart, any verdict
  int capacity_full = 0;  // kFull only because of a bounded column
  int small_empty = 0;    // kEmpty with a bounded column
  int ring_empty = 0;     // kEmpty with a ring column
  int ring_full = 0;      // kFull only because of a ring column
};

// Screens one pair with an unbounded column and with `small` cells, against preliminary_hsps and the
// reference loop.
void check_pair(const QueryContext& c, const Seq& subject, const std::vector<UngappedHsp>& hsps, int small,
                Tally& t) {
  const ScreenParams params = screen_params(c);
  const int s_len = static_cast<int>(subject.size());
  const int q_len = static_cast<int>(c.query().size());
  const auto count = static_cast<int>(hsps.size());
  ++t.pairs;

  SearchCounts cpu_counts;
  const std::vector<PrelimHsp> prelim = preliminary_hsps(c, subject, hsps, cpu_counts);

  ScreenCounts counts;
  ScreenResult verdict = ScreenResult::kEmpty;
  with_guarded_column(s_len + 1, [&](XdropCell* col, int cap) {
    verdict = screen_preliminary(c.query().data(), q_len, subject.data(), s_len, c.scoring().row(0),
                                 hsps.data(), count, params, xdrop::FlatColumn{col, cap}, &counts);
    return true;
  });
  const Reference ref = reference_screen(c, subject, hsps, 0);
  t.restricted += ref.restricted_path ? 1 : 0;
  t.redone += ref.counts.redone > 0 ? 1 : 0;
  ASSERT_EQ(verdict == ScreenResult::kFull, ref.full);
  ASSERT_EQ(counts.gapped_extensions, ref.counts.gapped_extensions);
  ASSERT_EQ(counts.redone, ref.counts.redone);
  if (verdict == ScreenResult::kEmpty) {
    ++t.empty;
    t.redone_empty += counts.redone > 0 ? 1 : 0;
    ASSERT_TRUE(prelim.empty());
    EXPECT_EQ(counts.gapped_extensions, cpu_counts.gapped_extensions);
    EXPECT_EQ(counts.redone, cpu_counts.redone_subjects);
    EXPECT_EQ(cpu_counts.prelim_hsps, 0);
  } else {
    ++t.full;
    t.full_prelim += prelim.empty() ? 0 : 1;
  }
  // Anything the CPU stage keeps comes from an extension that reached the cutoff.
  if (!prelim.empty()) {
    ASSERT_EQ(verdict, ScreenResult::kFull);
  }

  // Ring columns (the GPU's, with stage_reference's size and smaller): the split form equals the loop, and a
  // kEmpty is the unbounded kEmpty with the same counts.
  for (const int size : {16, 64, kStageScreenCapacity}) {
    std::vector<XdropCell> ring(static_cast<std::size_t>(size));
    const xdrop::RingColumn col{ring.data(), size - 1, 1};
    ScreenCounts seq_counts, split_counts;
    std::vector<int> scores(hsps.size());
    const ScreenResult seq =
        screen_preliminary(c.query().data(), q_len, subject.data(), s_len, c.scoring().row(0), hsps.data(),
                           count, params, col, &seq_counts);
    const ScreenResult split =
        screen_split(c.query().data(), q_len, subject.data(), s_len, c.scoring().row(0), hsps.data(), count,
                     params, col, scores.data(), &split_counts);
    ASSERT_EQ(split, seq) << "ring " << size;
    if (seq == ScreenResult::kEmpty) {
      ++t.ring_empty;
      ASSERT_EQ(verdict, ScreenResult::kEmpty) << "ring " << size;
      ASSERT_EQ(split_counts.gapped_extensions, seq_counts.gapped_extensions);
      ASSERT_EQ(split_counts.redone, seq_counts.redone);
      ASSERT_EQ(seq_counts.gapped_extensions, counts.gapped_extensions);
      ASSERT_EQ(seq_counts.redone, counts.redone);
    } else if (verdict == ScreenResult::kEmpty) {
      ++t.ring_full;
    }
  }

  // The split form (the GPU's) equals the loop, with the unbounded and the small column.
  for (const int cap : {s_len + 1, small}) {
    ScreenCounts seq_counts, split_counts;
    std::vector<int> scores(hsps.size());
    ScreenResult seq = ScreenResult::kEmpty, split = ScreenResult::kFull;
    with_guarded_column(cap, [&](XdropCell* col, int n) {
      seq = screen_preliminary(c.query().data(), q_len, subject.data(), s_len, c.scoring().row(0),
                               hsps.data(), count, params, xdrop::FlatColumn{col, n}, &seq_counts);
      split = screen_split(c.query().data(), q_len, subject.data(), s_len, c.scoring().row(0), hsps.data(),
                           count, params, xdrop::FlatColumn{col, n}, scores.data(), &split_counts);
      return true;
    });
    ASSERT_EQ(split, seq) << "capacity " << cap;
    if (seq == ScreenResult::kEmpty) {
      ASSERT_EQ(split_counts.gapped_extensions, seq_counts.gapped_extensions);
      ASSERT_EQ(split_counts.redone, seq_counts.redone);
    }
  }

  // Bounded column: the reference decides with the same capacity; kEmpty stays exact.
  ScreenCounts small_counts;
  ScreenResult small_verdict = ScreenResult::kEmpty;
  with_guarded_column(small, [&](XdropCell* col, int cap) {
    small_verdict =
        screen_preliminary(c.query().data(), q_len, subject.data(), s_len, c.scoring().row(0), hsps.data(),
                           count, params, xdrop::FlatColumn{col, cap}, &small_counts);
    return true;
  });
  const Reference small_ref = reference_screen(c, subject, hsps, small);
  ASSERT_EQ(small_verdict == ScreenResult::kFull, small_ref.full);
  if (small_verdict == ScreenResult::kEmpty) {
    ++t.small_empty;
    ASSERT_EQ(verdict, ScreenResult::kEmpty);
    EXPECT_EQ(small_counts.gapped_extensions, counts.gapped_extensions);
    EXPECT_EQ(small_counts.redone, counts.redone);
  } else if (verdict == ScreenResult::kEmpty) {
    ++t.capacity_full;
  }
}

QueryContext make_context(const Seq& q, double evalue, std::int64_t db_length, std::int64_t db_num_seqs) {
  BlastpOptions options;
  options.evalue = evalue;
  return QueryContext::create(q, options, db_length, db_num_seqs, 10);
}

void check_screen_params(const QueryContext& c) {
  const ScreenParams p = screen_params(c);
  EXPECT_EQ(p.cutoff, c.setup().cutoff_score);
  EXPECT_EQ(p.restricted_cutoff, static_cast<int>(0.68 * c.setup().cutoff_score));
  EXPECT_EQ(p.restricted_allowed, c.options().evalue <= 10.0);
  EXPECT_EQ(p.gap_open, c.options().gaps.open);
  EXPECT_EQ(p.gap_extend, c.options().gaps.extend);
  EXPECT_EQ(p.x_dropoff, c.setup().gapped_x_dropoffs.preliminary);
}

// Every query against every subject with the given -evalue (db_scale multiplies the database totals the
// statistics see, raising the cutoffs as a larger database would).
Tally screen_all(const std::vector<Seq>& queries, const std::vector<Seq>& subjects, double evalue,
                 int db_scale, int small) {
  std::int64_t db_length = 0;
  for (const Seq& s : subjects) db_length += static_cast<std::int64_t>(s.size());
  Tally t;
  for (const Seq& q : queries) {
    const QueryContext c =
        make_context(q, evalue, db_length * db_scale, static_cast<std::int64_t>(subjects.size()) * db_scale);
    if (!c.searchable()) continue;
    check_screen_params(c);
    TwoHitFinder finder(c.query(), c.scoring(), c.ungapped_params());
    for (const Seq& s : subjects) {
      const std::vector<UngappedHsp> hsps = ungapped_hsps(c, s, finder);
      if (hsps.empty()) continue;
      check_pair(c, s, hsps, small, t);
      if (::testing::Test::HasFatalFailure()) return t;
    }
  }
  return t;
}

TEST(PrelimScreen, SameAsPreliminaryStageUniProt) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  std::vector<Seq> queries, subjects;
  for (test::Record& r : test::read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), 10))
    queries.push_back(std::move(r.codes));
  for (test::Record& r : test::read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 1500))
    subjects.push_back(std::move(r.codes));
  ASSERT_EQ(queries.size(), 10U);
  ASSERT_EQ(subjects.size(), 1500U);

  // -evalue 1e-3: the restricted path for most pairs, with inconclusive scores; -evalue 10 with the
  // database seen 1000 times larger: the same with blastp's default E-value; -evalue 100 with that database:
  // the restricted path disabled; -evalue 10 at the real size: restricted allowed, but no first HSP is weak
  // enough. (With -evalue 1000 the cutoff is below the ungapped one, so every pair is kFull: the random test
  // covers it.) Bounded columns of several sizes.
  const Tally strict = screen_all(queries, subjects, 1e-3, 1, 256);
  ASSERT_FALSE(HasFatalFailure());
  const Tally large_db = screen_all(queries, subjects, 10, 1000, 96);
  ASSERT_FALSE(HasFatalFailure());
  const Tally unrestricted = screen_all(queries, subjects, 100, 1000, 128);
  ASSERT_FALSE(HasFatalFailure());
  const Tally plain = screen_all(queries, subjects, 10, 1, 64);
  ASSERT_FALSE(HasFatalFailure());
  for (const Tally* t : {&strict, &large_db, &unrestricted, &plain}) {
    EXPECT_GT(t->pairs, 500);
    EXPECT_GT(t->empty, 100);
    EXPECT_GT(t->full_prelim, 5);
    EXPECT_GT(t->capacity_full, 0);
    EXPECT_GT(t->small_empty, 5);
    EXPECT_GT(t->ring_full, 0);
    EXPECT_GT(t->ring_empty, 5);
  }
  EXPECT_GT(strict.restricted, 300);
  EXPECT_GT(large_db.restricted, 200);
  EXPECT_EQ(unrestricted.restricted, 0);
  EXPECT_GT(strict.redone_empty, 0);  // inconclusive restricted scores, and the stage then found nothing
  EXPECT_GT(large_db.redone_empty, 0);
  EXPECT_GT(strict.redone + large_db.redone, strict.redone_empty + large_db.redone_empty);  // and found some
}

TEST(PrelimScreen, SameAsPreliminaryStageRandom) {
  // Random queries, subjects with planted homologs (indels break the ungapped HSPs, so gapped scores exceed
  // ungapped ones: inconclusive restricted scores) and unrelated ones.
  std::mt19937 rng(704);
  std::vector<Seq> queries;
  for (int i = 0; i < 8; ++i) queries.push_back(random_seq(rng, 60, 500));
  std::vector<Seq> subjects;
  for (int i = 0; i < 240; ++i) {
    Seq s = random_seq(rng, 30, 1200);
    if (i % 3 != 0) {
      const Seq& q = queries[static_cast<std::size_t>(i) % queries.size()];
      const int from = uniform(rng, 0, static_cast<int>(q.size()) / 2);
      const Seq piece(q.begin() + from,
                      q.begin() + from + uniform(rng, 20, static_cast<int>(q.size()) - from));
      plant(rng, s, piece, static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(s.size()) - 1)),
            uniform(rng, 30, 75), uniform(rng, 0, 6));
    }
    subjects.push_back(std::move(s));
  }
  Tally all;
  for (const auto& [evalue, scale] : {std::pair{1e-3, 1}, std::pair{10.0, 1000}, std::pair{1000.0, 1}}) {
    const Tally t = screen_all(queries, subjects, evalue, scale, 200);
    ASSERT_FALSE(HasFatalFailure());
    all.pairs += t.pairs;
    all.empty += t.empty;
    all.full_prelim += t.full_prelim;
    all.redone += t.redone;
    all.redone_empty += t.redone_empty;
    all.capacity_full += t.capacity_full;
    all.small_empty += t.small_empty;
    all.ring_full += t.ring_full;
    all.ring_empty += t.ring_empty;
  }
  EXPECT_GT(all.pairs, 300);
  EXPECT_GT(all.empty, 50);
  EXPECT_GT(all.full_prelim, 50);
  EXPECT_GT(all.redone, 0);
  EXPECT_GT(all.capacity_full, 0);
  EXPECT_GT(all.small_empty, 50);
  EXPECT_GT(all.ring_full, 0);
  EXPECT_GT(all.ring_empty, 50);
}

}  // namespace
}  // namespace warpsearch::blast
