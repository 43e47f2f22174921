// test_select.cpp: the candidate pool and greedy walk (src/scan/select.hpp).
//
// select_brute_force() is the definition: every column record, the best candidate of each origin, ranked,
// greedy walk. CandidatePool is fed per-origin lists built from random column records the way engines
// build them (sections of columns reduced per origin, truncated at random limits, optionally filtered with
// admission_score()), with capacities from 0 to unlimited. Checked on every selection:
//   - exact == true  => reported == select_brute_force();
//   - exact == false => reported is a prefix of select_brute_force() (the walk agrees up to the drop);
//   - pool and walk == a naive pool (linear scans, quadratic walk) with the same documented semantics,
//     which pins down when exact is false;
//   - nothing dropped (capacity above the number of origins, no truncation) => exact.
// Also real DP records (reference_scan) through reduce_records()/merge_lists() (sections.cpp), hand-checked
// examples of the definition, ties across sequences/strands, origin dedup, truncated and filtered lists,
// k = 0, min_score cuts, a walk with thousands of reports, and 10^6 candidates (< 2 s CPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <limits>
#include <ostream>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "scan/reference.hpp"
#include "scan/sections.hpp"
#include "scan/select.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::scan {

// Readable candidates in failure messages (internal linkage: other test files may print them too).
[[maybe_unused]] static void PrintTo(const Candidate& c, std::ostream* os) {
  *os << "{score " << c.score << " seq " << c.seq << (c.strand == Strand::kPlus ? " +" : " -") << " q["
      << c.qstart << "," << c.qend << "] t[" << c.tstart << "," << c.tend << "]}";
}

namespace {

using Rng = std::mt19937_64;

int uniform(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

bool same_origin(const Candidate& a, const Candidate& b) {
  return a.seq == b.seq && a.strand == b.strand && a.qstart == b.qstart && a.tstart == b.tstart;
}

struct SetShape {
  int columns = 100;
  int query_length = 50;
  int alignments = 10;
  int max_run = 30;  // columns an alignment runs over
  int max_step = 4;  // score change per column: -max_step .. max_step + 2
  int start_score = 6;
};

// One (seq, strand)'s column records shaped like a scan's: alignments (origin (qs, ts)) run over
// consecutive columns with a random-walk score and a query end that moves 0..2 rows per column; each
// column keeps its best cell (largest score, ties to the smallest qend; overlapping alignments compete).
std::vector<ColumnRecord> random_records(Rng& rng, const SetShape& shape) {
  std::vector<ColumnRecord> rec(static_cast<std::size_t>(shape.columns));
  for (int a = 0; a < shape.alignments; ++a) {
    const int qs = uniform(rng, 0, shape.query_length - 1);
    const int ts = uniform(rng, 0, shape.columns - 1);
    const int run = uniform(rng, 1, shape.max_run);
    int score = uniform(rng, 1, shape.start_score);
    int qe = qs;
    for (int d = 0; d < run && ts + d < shape.columns; ++d) {
      if (d > 0) {
        score = std::max(1, score + uniform(rng, -shape.max_step, shape.max_step + 2));
        qe = std::min(shape.query_length - 1, qe + uniform(rng, 0, 2));
      }
      ColumnRecord& r = rec[static_cast<std::size_t>(ts + d)];
      if (score > r.score || (score == r.score && qe < r.qend)) r = {score, qe, qs, ts};
    }
  }
  return rec;
}

// 1..5 record sets with distinct (seq, strand); about a third copy an earlier set's records, so equal
// candidates are ranked by seq and strand alone.
std::vector<RecordSet> random_sets(Rng& rng) {
  std::vector<std::pair<std::uint32_t, Strand>> ids;
  for (std::uint32_t seq = 0; seq < 3; ++seq) {
    ids.emplace_back(seq, Strand::kPlus);
    ids.emplace_back(seq, Strand::kMinus);
  }
  std::shuffle(ids.begin(), ids.end(), rng);
  const int count = uniform(rng, 1, 5);
  std::vector<RecordSet> sets;
  for (int s = 0; s < count; ++s) {
    RecordSet set;
    set.seq = ids[static_cast<std::size_t>(s)].first;
    set.strand = ids[static_cast<std::size_t>(s)].second;
    if (s > 0 && uniform(rng, 0, 2) == 0) {
      set.records = sets[static_cast<std::size_t>(uniform(rng, 0, s - 1))].records;
    } else {
      SetShape shape;
      shape.columns = uniform(rng, 1, 250);
      shape.query_length = uniform(rng, 1, 120);
      shape.alignments = uniform(rng, 0, 25);
      shape.max_run = uniform(rng, 1, 60);
      shape.max_step = uniform(rng, 1, 6);
      set.records = random_records(rng, shape);
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

// Test-local per-origin reduction with the reduce_records() contract (sections.hpp): the best candidate
// of each origin among records [begin, end) with score >= min_score, ranked, the first `limit`
// (truncated when more existed; limit >= 1).
CandidateList reduce_chunk(const RecordSet& set, std::size_t begin, std::size_t end, std::int32_t min_score,
                           std::size_t limit) {
  std::vector<Candidate> all;
  for (std::size_t j = begin; j < end; ++j) {
    const ColumnRecord& r = set.records[j];
    if (r.score <= 0 || r.score < min_score) continue;
    all.push_back({r.score, set.seq, set.strand, r.qstart, r.qend, r.tstart, static_cast<std::int64_t>(j)});
  }
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    if (a.qstart != b.qstart || a.tstart != b.tstart)
      return std::tie(a.qstart, a.tstart) < std::tie(b.qstart, b.tstart);
    return candidate_before(a, b);
  });
  CandidateList out;
  for (const Candidate& c : all)
    if (out.items.empty() || !same_origin(out.items.back(), c)) out.items.push_back(c);
  std::sort(out.items.begin(), out.items.end(), candidate_before);
  if (out.items.size() > limit) {
    out.items.resize(limit);
    out.truncated = true;
  }
  return out;
}

// The pool's documented semantics with linear scans and a quadratic walk.
class NaivePool {
 public:
  explicit NaivePool(std::size_t capacity) : capacity_(capacity) {}

  void add(const CandidateList& list) {
    for (const Candidate& c : list.items) {
      const auto same =
          std::find_if(kept_.begin(), kept_.end(), [&](const Candidate& x) { return same_origin(x, c); });
      if (same != kept_.end()) {
        if (candidate_before(c, *same)) *same = c;
      } else if (kept_.size() < capacity_) {
        kept_.push_back(c);
      } else if (capacity_ == 0) {
        drop(c, false);
      } else {
        const auto worst = std::max_element(kept_.begin(), kept_.end(), candidate_before);
        if (candidate_before(c, *worst)) {
          drop(*worst, false);
          *worst = c;
        } else {
          drop(c, false);
        }
      }
    }
    if (list.truncated && !list.items.empty()) drop(list.items.back(), true);
    if (list.truncated && list.items.empty()) {  // anything may have been dropped
      dropped_ = true;
      bound_ = {};
      bound_.score = std::numeric_limits<std::int32_t>::max();
      after_ = false;
    }
  }

  std::int32_t admission_score() const {
    if (capacity_ == 0) return std::numeric_limits<std::int32_t>::max();
    if (kept_.size() < capacity_) return std::numeric_limits<std::int32_t>::min();
    return std::max_element(kept_.begin(), kept_.end(), candidate_before)->score;
  }
  std::size_t size() const { return kept_.size(); }

  CandidatePool::Selection select(std::size_t k, std::int32_t min_score) const {
    CandidatePool::Selection out;
    if (k == 0) return out;
    std::vector<Candidate> ranked = kept_;
    std::sort(ranked.begin(), ranked.end(), candidate_before);
    const bool bound_matters = dropped_ && bound_.score >= min_score;
    const bool filtered_matter = kept_.size() == capacity_ && admission_score() > min_score;
    for (const Candidate& x : ranked) {
      const bool past_bound = after_ ? candidate_before(bound_, x) : !candidate_before(x, bound_);
      if (bound_matters && past_bound) {
        out.exact = false;
        return out;
      }
      if (x.score < min_score) return out;
      if (std::none_of(out.reported.begin(), out.reported.end(),
                       [&](const Candidate& r) { return overlaps_both(x, r); })) {
        out.reported.push_back(x);
        if (out.reported.size() == k) return out;
      }
    }
    if (bound_matters || filtered_matter) out.exact = false;
    return out;
  }

 private:
  void drop(const Candidate& c, bool after) {
    const bool earlier =
        !dropped_ || candidate_before(c, bound_) || (!candidate_before(bound_, c) && !after && after_);
    if (earlier) {
      dropped_ = true;
      bound_ = c;
      after_ = after;
    }
  }

  std::size_t capacity_;
  std::vector<Candidate> kept_;
  bool dropped_ = false;
  Candidate bound_{};
  bool after_ = false;
};

struct FeedOptions {
  std::int32_t producer_min = 1;  // min_score of every list
  bool use_admission = false;     // lists also filtered with admission_score() (as engines may)
  bool truncate = false;          // random small limits
};

// Feeds the record sets to both pools as engines would: each set cut into 1..4 column ranges
// (origins may span ranges; the pool keeps the better), each range reduced per origin, lists in random
// order. Checks admission_score() agreement and monotonicity along the way.
void feed(CandidatePool& pool, NaivePool& naive, const std::vector<RecordSet>& sets, Rng& rng,
          const FeedOptions& options) {
  std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> chunks;  // set, begin, end
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const auto n = static_cast<int>(sets[s].records.size());
    std::vector<int> cuts = {0, n};
    for (int c = uniform(rng, 0, 3); c > 0; --c) cuts.push_back(uniform(rng, 0, n));
    std::sort(cuts.begin(), cuts.end());
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c)
      chunks.emplace_back(s, static_cast<std::size_t>(cuts[c]), static_cast<std::size_t>(cuts[c + 1]));
  }
  std::shuffle(chunks.begin(), chunks.end(), rng);
  std::int32_t last_admission = std::numeric_limits<std::int32_t>::min();
  for (const auto& [s, begin, end] : chunks) {
    const std::int32_t admission = pool.admission_score();
    ASSERT_EQ(admission, naive.admission_score());
    ASSERT_GE(admission, last_admission);
    last_admission = admission;
    const std::int32_t min_score =
        options.use_admission ? std::max(options.producer_min, admission) : options.producer_min;
    const std::size_t limit = options.truncate ? static_cast<std::size_t>(uniform(rng, 1, 6))
                                               : std::numeric_limits<std::size_t>::max();
    const CandidateList list = reduce_chunk(sets[s], begin, end, min_score, limit);
    pool.add(list);
    naive.add(list);
    ASSERT_EQ(pool.size(), naive.size());
  }
}

std::size_t origins_at_least(const std::vector<RecordSet>& sets, std::int32_t min_score) {
  std::set<std::tuple<std::uint32_t, Strand, std::int32_t, std::int32_t>> origins;
  for (const RecordSet& set : sets)
    for (const ColumnRecord& r : set.records)
      if (r.score > 0 && r.score >= min_score) origins.emplace(set.seq, set.strand, r.qstart, r.tstart);
  return origins.size();
}

bool is_prefix(const std::vector<Candidate>& prefix, const std::vector<Candidate>& whole) {
  return prefix.size() <= whole.size() && std::equal(prefix.begin(), prefix.end(), whole.begin());
}

// Checks one selection of `pool` against the naive pool and the brute-force definition.
void check_selection(const CandidatePool& pool, const NaivePool& naive, const std::vector<RecordSet>& sets,
                     std::size_t k, std::int32_t min_score, std::size_t* exact_count,
                     std::size_t* inexact_count) {
  const CandidatePool::Selection got = pool.select(k, min_score);
  const CandidatePool::Selection want = naive.select(k, min_score);
  ASSERT_EQ(got.exact, want.exact) << "k " << k << " min_score " << min_score;
  ASSERT_EQ(got.reported, want.reported) << "k " << k << " min_score " << min_score;
  const std::vector<Candidate> truth = select_brute_force(sets, k, min_score);
  if (got.exact) {
    ASSERT_EQ(got.reported, truth) << "k " << k << " min_score " << min_score;
    ++*exact_count;
  } else {
    ASSERT_TRUE(is_prefix(got.reported, truth)) << "k " << k << " min_score " << min_score;
    ++*inexact_count;
  }
}

Candidate cand(std::int32_t score, std::uint32_t seq, Strand strand, std::int32_t qstart, std::int32_t qend,
               std::int64_t tstart, std::int64_t tend) {
  return {score, seq, strand, qstart, qend, tstart, tend};
}

TEST(SelectBruteForce, HandCheckedDefinition) {
  // seq 0 plus: origin (1,0) best 9 at column 2 (weaker 5 at column 1); origin (8,3) best 9 at column 4;
  // column 5: origin (2,5) score 6, overlaps (1,0) on the query only; column 6: origin (6,4) score 8
  // overlaps the column-4 alignment on both.
  RecordSet a{0,
              Strand::kPlus,
              {{}, {5, 3, 1, 0}, {9, 4, 1, 0}, {7, 10, 8, 3}, {9, 11, 8, 3}, {6, 4, 2, 5}, {8, 10, 6, 4}}};
  // seq 0 minus: the same alignment as (1,0) above: equal score, ranked after plus by strand.
  RecordSet b{0, Strand::kMinus, {{}, {}, {9, 4, 1, 0}}};
  // seq 1 plus: the best alignment.
  RecordSet c{1, Strand::kPlus, {{}, {12, 2, 0, 0}, {3, 3, 0, 0}}};
  // seq 2 plus: origin X = (20,0) has a weak record q[20,21] t[0,0] and its best q[20,30] t[0,3]; origin
  // Y = (25,2) q[25,29] t[2,5] (10) conflicts with X's best. X is represented by its best candidate
  // only, which Y blocks, so X is not reported (its weak record would not conflict with Y).
  RecordSet d{2, Strand::kPlus, {{4, 21, 20, 0}, {}, {}, {6, 30, 20, 0}, {}, {10, 29, 25, 2}}};
  const std::vector<RecordSet> sets = {a, b, c, d};

  const std::vector<Candidate> all = {
      cand(12, 1, Strand::kPlus, 0, 2, 0, 1), cand(10, 2, Strand::kPlus, 25, 29, 2, 5),
      cand(9, 0, Strand::kPlus, 1, 4, 0, 2),  cand(9, 0, Strand::kPlus, 8, 11, 3, 4),
      cand(9, 0, Strand::kMinus, 1, 4, 0, 2), cand(6, 0, Strand::kPlus, 2, 4, 5, 5)};
  EXPECT_EQ(select_brute_force(sets, 100, 1), all);
  EXPECT_EQ(select_brute_force(sets, 2, 1), std::vector<Candidate>(all.begin(), all.begin() + 2));
  EXPECT_EQ(select_brute_force(sets, 100, 7), std::vector<Candidate>(all.begin(), all.begin() + 5));
  EXPECT_EQ(select_brute_force(sets, 100, 13), std::vector<Candidate>{});
  EXPECT_EQ(select_brute_force(sets, 0, 1), std::vector<Candidate>{});

  // The pool fed per origin (one list per set, or two lists of half the columns each) gives the same.
  for (const bool split : {false, true}) {
    CandidatePool pool(1000);
    for (const RecordSet& set : sets) {
      const std::size_t n = set.records.size(), mid = split ? n / 2 : n;
      pool.add(reduce_chunk(set, 0, mid, 1, 1000));
      pool.add(reduce_chunk(set, mid, n, 1, 1000));
    }
    EXPECT_EQ(pool.size(), 8u);  // 8 origins
    for (const auto& [k, min_score] :
         {std::pair<std::size_t, int>{100, 1}, {2, 1}, {100, 7}, {100, 13}, {0, 1}}) {
      const CandidatePool::Selection sel = pool.select(k, min_score);
      EXPECT_TRUE(sel.exact);
      EXPECT_EQ(sel.reported, select_brute_force(sets, k, min_score));
    }
  }
}

TEST(SelectPool, RandomRecordSetsMatchBruteForce) {
  Rng rng(8024);
  const std::size_t capacities[] = {0, 1, 2, 3, 4, 6, 9, 14, 25, 60, 1000, std::size_t{1} << 40};
  const std::size_t ks[] = {0, 1, 2, 3, 5, 8, 20, 100000};
  std::size_t exact = 0, inexact = 0, must_be_exact = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::vector<RecordSet> sets = random_sets(rng);
    FeedOptions options;
    options.producer_min = uniform(rng, 1, 5);
    options.use_admission = uniform(rng, 0, 1) == 1;
    options.truncate = uniform(rng, 0, 3) == 0;
    const std::size_t capacity = capacities[static_cast<std::size_t>(uniform(rng, 0, 11))];
    CandidatePool pool(capacity);
    NaivePool naive(capacity);
    ASSERT_NO_FATAL_FAILURE(feed(pool, naive, sets, rng, options));
    const bool nothing_dropped = !options.truncate && capacity > origins_at_least(sets, options.producer_min);
    for (int q = 0; q < 6; ++q) {
      const std::size_t k = ks[static_cast<std::size_t>(uniform(rng, 0, 7))];
      const std::int32_t min_score =
          options.producer_min + (q == 5 ? uniform(rng, 0, 60) : uniform(rng, 0, 4));
      std::size_t exact_here = 0;
      ASSERT_NO_FATAL_FAILURE(check_selection(pool, naive, sets, k, min_score, &exact_here, &inexact));
      exact += exact_here;
      if (nothing_dropped) {
        ASSERT_EQ(exact_here, 1u) << "nothing was dropped, the selection must be exact";
        ++must_be_exact;
      }
    }
  }
  // Both outcomes occur often enough for the comparison to mean something.
  EXPECT_GT(exact, 3000u);
  EXPECT_GT(inexact, 300u);
  EXPECT_GT(must_be_exact, 1000u);
}

TEST(SelectPool, OriginDedupIsNotADrop) {
  CandidatePool pool(1);
  const Candidate weak = cand(5, 0, Strand::kPlus, 3, 9, 10, 14);
  const Candidate strong = cand(9, 0, Strand::kPlus, 3, 12, 10, 18);  // same origin (3, 10)
  pool.add({{weak}, false});
  pool.add({{strong}, false});  // replaces weak in the full pool: weak can never be reported
  pool.add({{weak}, false});    // a worse candidate of a kept origin: ignored
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.admission_score(), 9);
  CandidatePool::Selection sel = pool.select(10, 9);
  EXPECT_TRUE(sel.exact);  // full pool, but nothing can score below 9 and still reach min_score 9
  EXPECT_EQ(sel.reported, std::vector<Candidate>{strong});
  // min_score 1: the walk runs out of a full pool; an engine filtering with admission_score() (9) may
  // have skipped candidates scoring 1..8.
  EXPECT_FALSE(pool.select(10, 1).exact);
  EXPECT_TRUE(pool.select(1, 1).exact);

  // Refused (other origin, pool full): a drop at score 3.
  const Candidate other = cand(3, 0, Strand::kMinus, 3, 12, 10, 18);
  pool.add({{other}, false});
  sel = pool.select(10, 1);
  EXPECT_FALSE(sel.exact);
  EXPECT_EQ(sel.reported, std::vector<Candidate>{strong});
  EXPECT_TRUE(pool.select(10, 9).exact);
  // Evicted: a better candidate of a new origin pushes strong out; strong is now the drop bound.
  const Candidate best = cand(11, 1, Strand::kPlus, 0, 5, 0, 5);
  pool.add({{best}, false});
  EXPECT_EQ(pool.admission_score(), 11);
  sel = pool.select(10, 9);
  EXPECT_FALSE(sel.exact);  // strong (9) could be reported
  EXPECT_EQ(sel.reported, std::vector<Candidate>{best});
  EXPECT_FALSE(pool.select(10, 10).exact);  // full: an engine filtering with 11 may have skipped a 10
  EXPECT_TRUE(pool.select(10, 11).exact);
  EXPECT_TRUE(pool.select(1, 1).exact);
}

TEST(SelectPool, TruncatedAndFilteredLists) {
  const Candidate a = cand(9, 0, Strand::kPlus, 0, 10, 0, 10);
  const Candidate b = cand(7, 0, Strand::kPlus, 20, 30, 20, 30);
  {
    CandidatePool pool(100);
    pool.add({{a, b}, true});  // dropped candidates rank after b (score <= 7)
    EXPECT_EQ(pool.admission_score(), std::numeric_limits<std::int32_t>::min());
    CandidatePool::Selection sel = pool.select(5, 1);
    EXPECT_FALSE(sel.exact);
    EXPECT_EQ(sel.reported, (std::vector<Candidate>{a, b}));
    EXPECT_TRUE(pool.select(2, 1).exact);   // stops at k before the dropped positions
    EXPECT_TRUE(pool.select(5, 8).exact);   // stops at b (7 < 8): every dropped candidate is below 8
    EXPECT_FALSE(pool.select(5, 7).exact);  // a dropped candidate may score 7
    EXPECT_TRUE(pool.select(0, 1).exact);
    EXPECT_TRUE(pool.select(0, 1).reported.empty());
  }
  {
    // An empty truncated list (a producer asked for limit 0) may have dropped anything: no selection
    // but k = 0 is exact.
    CandidatePool pool(100);
    pool.add({{a, b}, false});
    EXPECT_TRUE(pool.select(5, 1).exact);
    pool.add({{}, true});
    const CandidatePool::Selection sel = pool.select(5, 1);
    EXPECT_FALSE(sel.exact);
    EXPECT_TRUE(sel.reported.empty());
    EXPECT_FALSE(pool.select(1, 100).exact);
    EXPECT_TRUE(pool.select(0, 1).exact);
  }
  {
    // Exactly full, nothing refused, but engines filtering with admission_score() (7) may have skipped
    // candidates below 7.
    CandidatePool pool(2);
    pool.add({{a, b}, false});
    EXPECT_EQ(pool.admission_score(), 7);
    pool.add({{}, false});  // a list filtered with min_score 7: empty
    EXPECT_FALSE(pool.select(5, 1).exact);
    EXPECT_TRUE(pool.select(5, 7).exact);
    EXPECT_TRUE(pool.select(2, 1).exact);
  }
  {
    CandidatePool pool(0);  // keeps nothing
    EXPECT_EQ(pool.admission_score(), std::numeric_limits<std::int32_t>::max());
    pool.add({{a}, false});
    EXPECT_EQ(pool.size(), 0u);
    EXPECT_FALSE(pool.select(1, 1).exact);
    EXPECT_TRUE(pool.select(0, 1).exact);
  }
}

// Real DP records (reference_scan of DNA with planted, mutated copies of query segments; two-letter
// sequences for many ties) reduced by reduce_records() in sections and merged by merge_lists() as the
// section scan does, at random limits: exact selections equal the definition.
TEST(SelectPool, ReferenceScanRecords) {
  Rng rng(31337);
  const ScanModel model = ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1});
  std::size_t exact = 0, inexact = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int letters = trial % 4 == 0 ? 2 : 4;
    const auto random_seq = [&](int length) {
      std::vector<std::uint8_t> v(static_cast<std::size_t>(length));
      for (auto& x : v) x = static_cast<std::uint8_t>(uniform(rng, 0, letters - 1));
      return v;
    };
    const std::vector<std::uint8_t> query = random_seq(uniform(rng, 20, 300));
    std::vector<RecordSet> sets;
    for (std::uint32_t seq = 0; seq < 2; ++seq) {
      for (const Strand strand : {Strand::kPlus, Strand::kMinus}) {
        std::vector<std::uint8_t> target = random_seq(uniform(rng, 50, 1500));
        for (int copies = uniform(rng, 0, 6); copies > 0; --copies) {  // mutated query segments
          const int qb = uniform(rng, 0, static_cast<int>(query.size()) - 1);
          const int len = uniform(rng, 1, static_cast<int>(query.size()) - qb);
          int tb = uniform(rng, 0, static_cast<int>(target.size()) - 1);
          for (int i = 0; i < len && tb < static_cast<int>(target.size()); ++i) {
            if (uniform(rng, 0, 9) == 0) continue;  // deletion in the target
            target[static_cast<std::size_t>(tb++)] =
                uniform(rng, 0, 14) == 0 ? static_cast<std::uint8_t>(uniform(rng, 0, letters - 1))
                                         : query[static_cast<std::size_t>(qb + i)];
          }
        }
        sets.push_back({seq, strand, reference_scan(model, query, target)});
      }
    }
    const std::size_t capacity =
        trial % 3 == 0 ? std::size_t{1} << 30 : static_cast<std::size_t>(uniform(rng, 1, 60));
    CandidatePool pool(capacity);
    for (const RecordSet& set : sets) {
      const auto n = static_cast<std::int64_t>(set.records.size());
      const std::size_t limit = trial % 2 == 0 ? capacity : static_cast<std::size_t>(uniform(rng, 1, 30));
      const std::int32_t min_score = std::max(1, pool.admission_score());
      std::vector<CandidateList> parts;
      for (std::int64_t b = 0; b < n;) {
        const std::int64_t e = std::min(n, b + uniform(rng, 1, 400));
        parts.push_back(
            reduce_records(std::span<const ColumnRecord>(set.records)
                               .subspan(static_cast<std::size_t>(b), static_cast<std::size_t>(e - b)),
                           b, min_score, limit, set.seq, set.strand));
        b = e;
      }
      pool.add(merge_lists(std::move(parts), limit));
    }
    for (const std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{40}, std::size_t{100000}}) {
      for (const std::int32_t min_score : {1, 20, 40}) {
        const CandidatePool::Selection sel = pool.select(k, min_score);
        const std::vector<Candidate> truth = select_brute_force(sets, k, min_score);
        if (sel.exact) {
          ASSERT_EQ(sel.reported, truth) << "trial " << trial << " k " << k << " min_score " << min_score;
          ++exact;
        } else {
          ASSERT_TRUE(is_prefix(sel.reported, truth)) << "trial " << trial;
          ++inexact;
        }
      }
    }
    if (capacity > 1000000 && trial % 2 == 0) {  // nothing dropped
      EXPECT_TRUE(pool.select(100000, 1).exact);
    }
  }
  EXPECT_GT(exact, 100u);
  EXPECT_GT(inexact, 50u);
}

// Thousands of reports on few target columns and a long query: many reported alignments share target
// columns with disjoint query ranges, plus long alignments spanning many of them.
TEST(SelectPool, LargeWalkMatchesBruteForce) {
  Rng rng(77);
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<RecordSet> sets;
    for (std::uint32_t seq = 0; seq < 2; ++seq) {
      SetShape shape;
      shape.columns = 20000;
      shape.query_length = 30000;
      shape.alignments = 30000;
      shape.max_run = trial == 0 ? 40 : 400;
      shape.max_step = 3;
      shape.start_score = 30;
      sets.push_back({seq, Strand::kPlus, random_records(rng, shape)});
    }
    for (const std::size_t capacity : {std::size_t{500}, std::size_t{1} << 30}) {
      CandidatePool pool(capacity);
      NaivePool naive(capacity);
      ASSERT_NO_FATAL_FAILURE(feed(pool, naive, sets, rng, FeedOptions{}));
      std::size_t exact = 0, inexact = 0;
      for (const std::size_t k : {std::size_t{100}, std::size_t{100000}})
        ASSERT_NO_FATAL_FAILURE(check_selection(pool, naive, sets, k, 1, &exact, &inexact));
      if (capacity > 500) {
        EXPECT_EQ(exact, 2u);
        EXPECT_GT(pool.select(100000, 1).reported.size(), 1000u);
      }
    }
  }
}

// 10^6 candidates (1000 ranked lists of 1000, as from many sections), k = 10^5: add + select under 2 s of
// CPU time. The selection does not depend on the order the lists arrive in.
TEST(SelectPool, MillionCandidates) {
  Rng rng(4242);
  std::vector<CandidateList> lists(1000);
  for (std::size_t l = 0; l < lists.size(); ++l) {
    const auto seq = static_cast<std::uint32_t>(l / 100);
    const Strand strand = l % 2 == 0 ? Strand::kPlus : Strand::kMinus;
    for (int i = 0; i < 1000; ++i) {
      const std::int64_t tstart = uniform(rng, 0, 2000000);
      const std::int32_t qstart = uniform(rng, 0, 100000);
      const int length = uniform(rng, 1, 300);
      lists[l].items.push_back(cand(uniform(rng, 20, 2000), seq, strand, qstart, qstart + length, tstart,
                                    tstart + length + uniform(rng, -5, 5) + 5));
    }
  }
  // One candidate per origin over all lists (a per-origin engine never repeats an origin).
  std::vector<std::tuple<std::uint32_t, Strand, std::int32_t, std::int64_t, std::size_t>> keys;
  for (std::size_t l = 0; l < lists.size(); ++l)
    for (const Candidate& c : lists[l].items) keys.emplace_back(c.seq, c.strand, c.qstart, c.tstart, l);
  std::sort(keys.begin(), keys.end());
  std::vector<std::set<std::pair<std::int32_t, std::int64_t>>> repeated(lists.size());
  for (std::size_t i = 1; i < keys.size(); ++i)
    if (std::get<0>(keys[i]) == std::get<0>(keys[i - 1]) &&
        std::get<1>(keys[i]) == std::get<1>(keys[i - 1]) &&
        std::get<2>(keys[i]) == std::get<2>(keys[i - 1]) && std::get<3>(keys[i]) == std::get<3>(keys[i - 1]))
      repeated[std::get<4>(keys[i])].emplace(std::get<2>(keys[i]), std::get<3>(keys[i]));
  std::size_t total = 0;
  for (std::size_t l = 0; l < lists.size(); ++l) {
    std::erase_if(lists[l].items, [&](const Candidate& c) {
      return repeated[l].count({c.qstart, c.tstart}) != 0;
    });
    std::sort(lists[l].items.begin(), lists[l].items.end(), candidate_before);
    total += lists[l].items.size();
  }
  ASSERT_GT(total, 999000u);
  for (const std::size_t capacity : {std::size_t{65536}, std::size_t{1} << 21}) {
    // Correctness at scale only; speed belongs to benchmarks, not to unit tests.
    CandidatePool pool(capacity);
    for (const CandidateList& list : lists) pool.add(list);
    const CandidatePool::Selection sel = pool.select(100000, 1);
    EXPECT_EQ(pool.size(), std::min(capacity, total));
    EXPECT_TRUE(std::is_sorted(sel.reported.begin(), sel.reported.end(), candidate_before));
    CandidatePool reversed(capacity);
    for (auto it = lists.rbegin(); it != lists.rend(); ++it) reversed.add(*it);
    const CandidatePool::Selection sel2 = reversed.select(100000, 1);
    EXPECT_EQ(sel.exact, sel2.exact);
    EXPECT_EQ(sel.reported, sel2.reported);
    if (capacity > total) {
      EXPECT_TRUE(sel.exact);
      EXPECT_EQ(sel.reported.size(), 100000u);
    }
  }
}

}  // namespace
}  // namespace warpsearch::scan
