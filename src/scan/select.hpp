// select.hpp: the global candidate pool of one query's scan (all target sequences and strands) and the
// greedy walk that picks the reported alignments (model.hpp, rule 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scan/model.hpp"
#include "scan/sections.hpp"

namespace warpsearch::scan {

class CandidatePool {
 public:
  // Keeps the best `capacity` candidates (candidate order), at most one per origin
  // (seq, strand, qstart, tstart).
  explicit CandidatePool(std::size_t capacity);
  // Adds one ranked per-origin list (sections.hpp). Candidates the pool cannot keep, and those the
  // list says it dropped, lower the pool's exactness bound.
  void add(const CandidateList& list);
  // Lowest score a candidate needs to be kept right now (engines may filter with it; ties pass).
  std::int32_t admission_score() const;
  std::size_t size() const;

  struct Selection {
    std::vector<Candidate> reported;  // in candidate order
    // False when the walk reached a candidate ranked after something that was dropped, so a dropped
    // candidate could have been reported: the caller must rescan with a larger capacity.
    bool exact = true;
  };
  // The greedy walk: at most k reports with score >= min_score.
  Selection select(std::size_t k, std::int32_t min_score) const;

 private:
  // A position in candidate order: every candidate at or after `key` (after == false), or strictly
  // after it (after == true).
  struct Bound {
    Candidate key{};
    bool after = false;
  };
  void note_dropped(const Bound& bound);
  void sift_up(std::size_t pos);
  void sift_down(std::size_t pos);
  // Origin hash table: the entry of c's origin, or the empty entry where it would go.
  std::size_t find_entry(const Candidate& c, std::uint32_t fingerprint) const;
  void grow_table();
  void erase_entry(std::size_t index);

  std::size_t capacity_;
  // The kept candidates: slot s holds slots_[s] at heap position slot_pos_[s]; heap_ is a binary heap of
  // slots with the worst-ranked candidate at heap_[0].
  std::vector<Candidate> slots_;
  std::vector<std::uint32_t> slot_pos_;
  std::vector<std::uint32_t> heap_;
  // Each kept origin (seq, strand, qstart, tstart) -> its slot: open addressing with linear probing,
  // load <= 1/2, size a power of two; entry = fingerprint << 32 | (slot + 1), 0 = empty; an origin's
  // home entry is fingerprint & (size - 1).
  std::vector<std::uint64_t> table_;
  bool dropped_ = false;
  Bound dropped_bound_{};  // the best-ranked position known to be dropped (valid when dropped_)
};

// Brute-force form of the whole definition for tests (model.hpp rules 1-3): every column record of
// every (seq, strand), reduced to the best-ranked record per origin by a plain scan, ranked, greedy walk.
// records[s] holds one record per column of sequence/strand s.
struct RecordSet {
  std::uint32_t seq = 0;
  Strand strand = Strand::kPlus;
  std::vector<ColumnRecord> records;
};
std::vector<Candidate> select_brute_force(const std::vector<RecordSet>& sets, std::size_t k,
                                          std::int32_t min_score);

}  // namespace warpsearch::scan
