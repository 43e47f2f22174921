// traceback.hpp: kernel 2 of the scan -- the alignment of a reported candidate.
//
// A candidate [qstart..qend] x [tstart..tend] with score S is the end of a canonical local path that
// starts at its origin; every global alignment of the two substrings scores <= S and that path scores
// S, so the reported alignment is the optimal global alignment of q[qstart..qend] against
// t[tstart..tend] under the same scoring (end gaps cost like any gap), chosen by this tie rule when
// tracing back from the end: in H prefer the diagonal, then E (gap in the query, 'D'), then F (gap in
// the target, 'I'); in E or F prefer opening (from H) over extending on ties. Computed exactly in
// bounded memory: cells that cannot lie on any optimal path are pruned (prefix score + an upper bound
// of the rest < S), and long alignments are traced back block by block from checkpointed DP rows, so
// the path is the same as a full-matrix traceback would give.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "scan/model.hpp"

namespace warpsearch::scan {

struct Alignment {
  std::string cigar;          // '=' match, 'X' mismatch, 'I' query residue vs gap, 'D' target residue vs gap
  std::uint32_t matches = 0;  // '=' columns
  std::uint32_t mismatches = 0;
  std::uint32_t gap_opens = 0;    // runs of I or D
  std::uint32_t gap_columns = 0;  // I and D columns
  std::uint32_t length = 0;       // alignment columns
  std::int64_t cells = 0;         // DP cells computed (pruning and recomputation included)
};

struct TracebackLimits {
  std::uint64_t max_matrix_bytes = std::uint64_t{1} << 30;  // traceback pointers kept at once
};

// query/target: the sequences the candidate's coordinates refer to (minus strand: the reverse
// complement of the query). Throws Error(kInternal) if the optimal global score of the region is not
// the candidate's score (a broken invariant, never expected).
Alignment trace_alignment(const ScanModel& model, std::span<const std::uint8_t> query,
                          std::span<const std::uint8_t> target, const Candidate& candidate,
                          const TracebackLimits& limits = {});

// Plain full-matrix version of the same definition (tests compare trace_alignment with it).
Alignment trace_alignment_full(const ScanModel& model, std::span<const std::uint8_t> query,
                               std::span<const std::uint8_t> target, const Candidate& candidate);

}  // namespace warpsearch::scan
