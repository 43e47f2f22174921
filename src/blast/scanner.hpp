// scanner.hpp: the subject scan for a group of queries at once (BLAST+ concatenates its queries the same
// way): one lookup table over the group's queries, one pass over each subject, every word hit applied to
// its query's diagonal, two-hit ungapped extensions, then each query's preliminary gapped stage.
//
// Contents:
//   GroupScanner   stages 3-4 (search.hpp) of a group of queries on one subject at a time
//
// Equivalence with one query at a time (SubjectScanner + TwoHitFinder): the group table is
// AaLookupTable::build over the queries back to back, each followed by one masked separator residue, so a
// cell lists exactly the union of the queries' own hit lists; its order, (BLAST word key, concatenated
// offset), restricted to one query is that query's own order (key, offset). Each query has its own
// diagonal array (one stride for the group: a power of two >= the longest query + window, at least each
// query's own size; a larger array changes nothing since diagonals that share a slot are more than
// query length + window apart, so they never meet within a window or an extension) and the per-hit
// two-hit rule is TwoHitFinder::hit's, with that query's X-drop and cutoff. The diagonal offset advances
// by subject length + window for every subject as in each query's own finder (Blast_ExtendWordExit),
// and all arrays clear at the same time. Hence each query's preliminary HSPs are identical to
// SubjectScanner's; tests/blast/test_scanner.cpp checks it.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "blast/lookup.hpp"
#include "blast/search.hpp"
#include "blast/ungapped.hpp"

namespace warpsearch::blast {

class GroupScanner {
 public:
  // contexts: searchable queries with equal options (matrix, word size, threshold, window; the table is
  // built with the first's). They must outlive the scanner and stay where they are. At most 2^31 - 1
  // residues in all.
  explicit GroupScanner(std::span<const QueryContext* const> contexts);

  std::size_t size() const { return contexts_.size(); }

  // One subject: out receives (index into contexts, preliminary HSPs) for each query that has some, in
  // ascending index order (out is cleared first); the group's counts are added to counts.
  void run(Residues subject, SearchCounts& counts,
           std::vector<std::pair<std::uint32_t, std::vector<PrelimHsp>>>& out);

 private:
  struct Diag {
    std::int32_t last_hit = 0;  // subject offset + offset_ of the last hit (or extension end)
    std::int32_t flag = 0;      // an extension just happened on this diagonal
  };
  struct QueryInfo {
    std::span<const std::uint8_t> residues;
    int x_dropoff = 0;
    int cutoff = 0;
  };
  void extend(Diag& d, std::uint32_t q, std::int32_t query_offset, std::int32_t subject_offset,
              std::int32_t first_hit, Residues subject);
  void clear();

  std::vector<const QueryContext*> contexts_;
  std::vector<QueryInfo> info_;
  AaLookupTable table_;
  // Parallel to table_.all_hits(): a hit at offset p of query q as (q << shift_) | p (p <= mask_), so
  // its diagonal slot is (entry & ~mask_) + ((entry - s) & mask_) for subject offset s.
  std::vector<std::uint32_t> entries_;
  std::vector<Diag> diags_;  // query q's array at [q << shift_, (q + 1) << shift_)
  int shift_ = 0;
  std::uint32_t mask_ = 0;
  std::int32_t offset_ = 0;
  int window_ = 40;
  int word_size_ = 3;
  alignas(64) std::int8_t scores_[kMaxCodes * kMaxCodes];
  std::vector<std::vector<UngappedHsp>> ungapped_;
  std::vector<std::uint32_t> touched_;  // queries with saved ungapped HSPs for the current subject
  UngappedCounts counts_;
};

}  // namespace warpsearch::blast
