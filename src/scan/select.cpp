// select.cpp: the global candidate pool (CandidatePool: best `capacity` per-origin candidates with an
// exactness bound), the greedy walk that picks the reported alignments, and select_brute_force().
//
// Contents:
//   ranks_before()      candidate_before() made total over origins (ties only arise from inconsistent input)
//   CandidatePool       binary heap of kept candidates (worst-ranked on top) + hash table origin -> slot:
//                       add() is O(log capacity) per kept candidate, O(1) per refused one
//   ReportedIndex       per (seq, strand) centered interval tree over target intervals of the reported
//                       alignments; the alignments stored at one node all contain its center, so they are
//                       pairwise disjoint on the query and kept in a map ordered by qstart
//   select()            ranked walk with the exactness rule below
//   select_brute_force  every column record, best per origin (std::map), sort, quadratic walk
//
// Exactness. T is the true candidate list: the best candidate of every origin over all column records,
// ranked. The pool holds every member of T that ranks before the best-ranked dropped position B:
//   - a candidate evicted from the full pool or refused by it (B at or before that candidate);
//   - a truncated non-empty list: its dropped candidates rank after items.back() (B strictly after it);
//   - when the pool is full: candidates an engine filtered out with admission_score() (they score below
//     the current admission score, which never decreases) -- the pool never saw them, so while it is
//     full every candidate scoring below admission_score() counts as dropped.
// Not drops: a candidate of an origin the pool holds with a better one, or a kept candidate replaced by a
// better one of its origin (neither can ever be reported). Candidates a producer filtered with its own
// min_score are invisible to the pool: select(k, min_score) assumes min_score >= every list's min_score
// (or that the list was filtered with admission_score()). An empty truncated list (a producer asked for
// limit 0; sections.hpp's wording says its drops are below the list's min_score, merge_lists() reads it as
// "may have dropped anything") is taken conservatively: B moves before every candidate, so only k = 0
// selections stay exact. Producers asked with limit >= 1 never return one.
// Every pool member ranked before B is a member of T (a kept candidate that is not its origin's best
// ranks after that best, which was dropped). So the walk over the pool equals the walk over T up to B.
// select() is exact unless the walk, before it stops (k reports or a candidate below min_score), reaches a
// pool candidate at or after B, or runs out of pool candidates while anything at all was dropped -- both
// only when the dropped positions can score >= min_score (everything at or after B scores <= B's score;
// the admission drops score < admission_score()).
//
// Definition (model.hpp rule 1): the walk runs over the best-ranked record of each origin only. Walking
// every column record instead differs: a weaker record of an origin whose best was rejected can escape the
// conflict, so select_brute_force() reduces per origin (by brute force) before its walk.
#include "scan/select.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "warpsearch/error.hpp"

namespace warpsearch::scan {

namespace {

// candidate_before() with ties (equal score, seq, strand, tend and qend: impossible for candidates of
// one scan, whose tend identifies the column record) broken by origin, so that the order is total.
bool ranks_before(const Candidate& a, const Candidate& b) {
  if (candidate_before(a, b)) return true;
  if (candidate_before(b, a)) return false;
  if (a.qstart != b.qstart) return a.qstart < b.qstart;
  return a.tstart < b.tstart;
}

// True if x ranks at or after the position b (a CandidatePool::Bound).
template <class Bound>
bool at_or_after(const Candidate& x, const Bound& b) {
  return b.after ? ranks_before(b.key, x) : !ranks_before(x, b.key);
}

bool same_origin(const Candidate& a, const Candidate& b) {
  return a.qstart == b.qstart && a.tstart == b.tstart && a.seq == b.seq && a.strand == b.strand;
}

std::uint64_t group_key(const Candidate& c) {
  return static_cast<std::uint64_t>(c.seq) << 1 | static_cast<std::uint64_t>(c.strand);
}

// The reported alignments of a walk, per (seq, strand), answering "does a candidate conflict with one of
// them" (overlaps_both). Built over every candidate the walk may report: the tree's centers are their
// distinct tstart values, so every reported target interval contains a center.
class ReportedIndex {
 public:
  explicit ReportedIndex(std::span<const Candidate> ranked) : group_of_cand_(ranked.size()) {
    std::unordered_map<std::uint64_t, std::uint32_t> group_ids;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const auto [it, inserted] =
          group_ids.try_emplace(group_key(ranked[i]), static_cast<std::uint32_t>(groups_.size()));
      if (inserted) groups_.emplace_back();
      group_of_cand_[i] = it->second;
      groups_[it->second].centers.push_back(ranked[i].tstart);
    }
    for (Group& g : groups_) {
      std::sort(g.centers.begin(), g.centers.end());
      g.centers.erase(std::unique(g.centers.begin(), g.centers.end()), g.centers.end());
      g.count.assign(g.centers.size(), 0);
      g.node_set.assign(g.centers.size(), 0);
    }
  }

  // True if candidate i conflicts with a reported alignment.
  bool conflicts(std::size_t i, const Candidate& c) const {
    const Group& g = groups_[group_of_cand_[i]];
    return query(g, 0, g.centers.size(), c);
  }

  // Records candidate i as reported (it must not conflict with a reported alignment).
  void insert(std::size_t i, const Candidate& c) {
    Group& g = groups_[group_of_cand_[i]];
    std::size_t lo = 0, hi = g.centers.size();
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      const std::int64_t center = g.centers[mid];
      ++g.count[mid];
      if (c.tend < center) {
        hi = mid;
      } else if (c.tstart > center) {
        lo = mid + 1;
      } else {
        if (g.node_set[mid] == 0) {
          sets_.emplace_back();
          g.node_set[mid] = static_cast<std::uint32_t>(sets_.size());
        }
        // Alignments at one node share the center column, so reported ones never overlap on the query.
        if (!sets_[g.node_set[mid] - 1].emplace(c.qstart, Rect{c.qend, c.tstart, c.tend}).second)
          throw Error(ErrorKind::kInternal, "scan selection: reported alignments overlap");
        return;
      }
    }
    throw Error(ErrorKind::kInternal, "scan selection: reported candidate outside the interval tree");
  }

 private:
  struct Rect {
    std::int32_t qend;
    std::int64_t tstart, tend;
  };
  // Implicit balanced tree over centers[lo, hi): node mid = (lo + hi) / 2 holds the reported alignments
  // whose target interval contains centers[mid] but no center of an ancestor; count[mid] counts the
  // alignments of its subtree; node_set[mid] - 1 indexes sets_ (0: none).
  struct Group {
    std::vector<std::int64_t> centers;
    std::vector<std::uint32_t> count;
    std::vector<std::uint32_t> node_set;
  };

  bool query(const Group& g, std::size_t lo, std::size_t hi, const Candidate& c) const {
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (g.count[mid] == 0) return false;
      const std::int64_t center = g.centers[mid];
      if (g.node_set[mid] != 0 && node_conflicts(sets_[g.node_set[mid] - 1], center, c)) return true;
      // Left subtree: alignments ending before center; right subtree: starting after it.
      const bool left = c.tstart<center, right = c.tend> center;
      if (left && right) {
        if (query(g, lo, mid, c)) return true;
        lo = mid + 1;
      } else if (left) {
        hi = mid;
      } else if (right) {
        lo = mid + 1;
      } else {
        return false;
      }
    }
    return false;
  }

  // The alignments of one node contain `center` and are disjoint on the query: ordered by qstart, their
  // qend increase too, and those overlapping c's query interval form one run.
  static bool node_conflicts(const std::map<std::int32_t, Rect>& set, std::int64_t center,
                             const Candidate& c) {
    if (c.tstart <= center && center <= c.tend) {  // every alignment of the node overlaps c on the target
      auto it = set.upper_bound(c.qend);
      return it != set.begin() && std::prev(it)->second.qend >= c.qstart;
    }
    auto it = set.upper_bound(c.qstart);
    if (it != set.begin() && std::prev(it)->second.qend >= c.qstart) --it;
    for (; it != set.end() && it->first <= c.qend; ++it)
      if (it->second.tstart <= c.tend && c.tstart <= it->second.tend) return true;
    return false;
  }

  std::vector<std::uint32_t> group_of_cand_;
  std::vector<Group> groups_;
  std::vector<std::map<std::int32_t, Rect>> sets_;
};

}  // namespace

namespace {

// 32-bit hash of a candidate's origin (seq, strand, qstart, tstart): splitmix64 finalizer.
std::uint32_t origin_fingerprint(const Candidate& c) {
  std::uint64_t h = (static_cast<std::uint64_t>(c.seq) << 32 | static_cast<std::uint32_t>(c.qstart)) *
                        0x9E3779B97F4A7C15ULL ^
                    (static_cast<std::uint64_t>(c.tstart) << 1 | static_cast<std::uint64_t>(c.strand));
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 31;
  return static_cast<std::uint32_t>(h >> 32);
}

constexpr std::uint64_t kSlotBits = 0xFFFFFFFFULL;

// A position ranked before (or equal to, for impossible candidates) every candidate, with the largest
// score: "anything may have been dropped".
constexpr Candidate kBeforeEverything{std::numeric_limits<std::int32_t>::max(),
                                      0,
                                      Strand::kPlus,
                                      std::numeric_limits<std::int32_t>::min(),
                                      std::numeric_limits<std::int32_t>::min(),
                                      std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::min()};

}  // namespace

CandidatePool::CandidatePool(std::size_t capacity) : capacity_(capacity) {}

std::size_t CandidatePool::find_entry(const Candidate& c, std::uint32_t fingerprint) const {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t i = fingerprint & mask;; i = (i + 1) & mask) {
    const std::uint64_t e = table_[i];
    if (e == 0) return i;
    if (e >> 32 == fingerprint && same_origin(slots_[(e & kSlotBits) - 1], c)) return i;
  }
}

void CandidatePool::grow_table() {
  std::vector<std::uint64_t> old = std::move(table_);
  table_.assign(std::max<std::size_t>(16, old.size() * 2), 0);
  const std::size_t mask = table_.size() - 1;
  for (const std::uint64_t e : old) {
    if (e == 0) continue;
    std::size_t i = (e >> 32) & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = e;
  }
}

// Backward-shift deletion: later entries of the probe run move up unless that would put them before
// their home entry.
void CandidatePool::erase_entry(std::size_t index) {
  const std::size_t mask = table_.size() - 1;
  table_[index] = 0;
  for (std::size_t j = (index + 1) & mask;; j = (j + 1) & mask) {
    const std::uint64_t e = table_[j];
    if (e == 0) return;
    const std::size_t home = (e >> 32) & mask;
    if (((j - home) & mask) >= ((j - index) & mask)) {
      table_[index] = e;
      table_[j] = 0;
      index = j;
    }
  }
}

void CandidatePool::note_dropped(const Bound& bound) {
  // The earlier of two positions; at equal keys "at key" is earlier than "after key".
  if (!dropped_ || ranks_before(bound.key, dropped_bound_.key) ||
      (!ranks_before(dropped_bound_.key, bound.key) && !bound.after && dropped_bound_.after)) {
    dropped_ = true;
    dropped_bound_ = bound;
  }
}

// Heap order: heap_[0] is the worst-ranked kept candidate; a parent never ranks before its children.
void CandidatePool::sift_up(std::size_t pos) {
  const std::uint32_t slot = heap_[pos];
  while (pos > 0) {
    const std::size_t parent = (pos - 1) / 2;
    if (!ranks_before(slots_[heap_[parent]], slots_[slot])) break;
    heap_[pos] = heap_[parent];
    slot_pos_[heap_[pos]] = static_cast<std::uint32_t>(pos);
    pos = parent;
  }
  heap_[pos] = slot;
  slot_pos_[slot] = static_cast<std::uint32_t>(pos);
}

void CandidatePool::sift_down(std::size_t pos) {
  const std::uint32_t slot = heap_[pos];
  const std::size_t n = heap_.size();
  while (true) {
    std::size_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && ranks_before(slots_[heap_[child]], slots_[heap_[child + 1]])) ++child;
    if (!ranks_before(slots_[slot], slots_[heap_[child]])) break;
    heap_[pos] = heap_[child];
    slot_pos_[heap_[pos]] = static_cast<std::uint32_t>(pos);
    pos = child;
  }
  heap_[pos] = slot;
  slot_pos_[slot] = static_cast<std::uint32_t>(pos);
}

void CandidatePool::add(const CandidateList& list) {
  for (const Candidate& c : list.items) {
    if (capacity_ == 0) {
      note_dropped({c, false});
      continue;
    }
    const bool full = heap_.size() == capacity_;
    // Fast path: a candidate ranked after the worst kept one and not before the drop bound changes
    // nothing, whether or not its origin is kept.
    if (full && !ranks_before(c, slots_[heap_[0]]) && dropped_ && at_or_after(c, dropped_bound_)) continue;
    if (!full && 2 * (heap_.size() + 1) > table_.size()) grow_table();
    const std::uint32_t fingerprint = origin_fingerprint(c);
    std::size_t entry = find_entry(c, fingerprint);
    if (table_[entry] != 0) {
      const auto slot = static_cast<std::uint32_t>((table_[entry] & kSlotBits) - 1);
      if (ranks_before(c, slots_[slot])) {  // a better candidate of a kept origin: not a drop
        slots_[slot] = c;
        sift_down(slot_pos_[slot]);
      }
      continue;
    }
    if (!full) {
      if (heap_.size() >= (std::size_t{1} << 31))
        throw Error(ErrorKind::kInternal, "scan candidate pool: more than 2^31 candidates");
      const auto slot = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(c);
      slot_pos_.push_back(static_cast<std::uint32_t>(heap_.size()));
      heap_.push_back(slot);
      table_[entry] = static_cast<std::uint64_t>(fingerprint) << 32 | (slot + 1);
      sift_up(heap_.size() - 1);
      continue;
    }
    const std::uint32_t worst = heap_[0];
    if (!ranks_before(c, slots_[worst])) {
      note_dropped({c, false});
      continue;
    }
    note_dropped({slots_[worst], false});  // evicted
    erase_entry(find_entry(slots_[worst], origin_fingerprint(slots_[worst])));
    slots_[worst] = c;
    entry = find_entry(c, fingerprint);  // the erase may have moved entries
    table_[entry] = static_cast<std::uint64_t>(fingerprint) << 32 | (static_cast<std::uint64_t>(worst) + 1);
    sift_down(0);
  }
  if (list.truncated)
    note_dropped(list.items.empty() ? Bound{kBeforeEverything, false} : Bound{list.items.back(), true});
}

std::int32_t CandidatePool::admission_score() const {
  if (capacity_ == 0) return std::numeric_limits<std::int32_t>::max();
  if (heap_.size() < capacity_) return std::numeric_limits<std::int32_t>::min();
  return slots_[heap_[0]].score;
}

std::size_t CandidatePool::size() const { return heap_.size(); }

CandidatePool::Selection CandidatePool::select(std::size_t k, std::int32_t min_score) const {
  Selection out;
  if (k == 0) return out;
  // Drops that matter: those that can score >= min_score.
  const bool bound_matters = dropped_ && dropped_bound_.key.score >= min_score;
  const bool full = heap_.size() == capacity_;
  const bool filtered_matter = full && admission_score() > min_score;  // admission drops score < it

  std::vector<Candidate> ranked(slots_);
  std::sort(ranked.begin(), ranked.end(), ranks_before);
  ReportedIndex index(ranked);
  // Every pool candidate scores >= admission_score(), so admission drops only matter once the walk runs
  // out of pool candidates.
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const Candidate& x = ranked[i];
    if (bound_matters && at_or_after(x, dropped_bound_)) {
      out.exact = false;
      return out;
    }
    if (x.score < min_score) return out;
    if (index.conflicts(i, x)) continue;
    out.reported.push_back(x);
    if (out.reported.size() == k) return out;
    index.insert(i, x);
  }
  if (bound_matters || filtered_matter) out.exact = false;
  return out;
}

std::vector<Candidate> select_brute_force(const std::vector<RecordSet>& sets, std::size_t k,
                                          std::int32_t min_score) {
  // Best candidate of every origin (seq, strand, qstart, tstart) over all column records.
  std::map<std::tuple<std::uint32_t, Strand, std::int32_t, std::int64_t>, Candidate> best;
  for (const RecordSet& set : sets) {
    for (std::size_t j = 0; j < set.records.size(); ++j) {
      const ColumnRecord& r = set.records[j];
      if (r.score <= 0) continue;
      const Candidate c{
          r.score, set.seq, set.strand, r.qstart, r.qend, r.tstart, static_cast<std::int64_t>(j)};
      const auto [it, inserted] = best.try_emplace({set.seq, set.strand, r.qstart, r.tstart}, c);
      if (!inserted && candidate_before(c, it->second)) it->second = c;
    }
  }
  std::vector<Candidate> ranked;
  ranked.reserve(best.size());
  for (const auto& entry : best) ranked.push_back(entry.second);
  std::stable_sort(ranked.begin(), ranked.end(), candidate_before);
  std::vector<Candidate> reported;
  for (const Candidate& c : ranked) {
    if (reported.size() >= k || c.score < min_score) break;
    if (std::none_of(reported.begin(), reported.end(),
                     [&](const Candidate& r) { return overlaps_both(c, r); }))
      reported.push_back(c);
  }
  return reported;
}

}  // namespace warpsearch::scan
