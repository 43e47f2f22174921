// model.hpp: the scan family's scoring model, DP state and candidate types, shared by every tier
// (reference.cpp, the threaded CPU engine, cuda/). This header is the definition the tiers compute.
//
// The scan DP (one query q of length m down the rows i = 0..m-1, one target sequence t of length n
// along the columns j = 0..n-1; s(i,j) = table[q_i][t_j]; a gap of length k costs O + k*X):
//   E(i,j) = clamp0( max(E(i,j-1) - X, H(i,j-1) - O - X) )   gap in the query (target residue vs '-')
//   F(i,j) = clamp0( max(F(i-1,j) - X, H(i-1,j) - O - X) )   gap in the target (query residue vs '-')
//   D(i,j) = H(i-1,j-1) + s(i,j)
//   H(i,j) = max(D, E, F, 0)                 out-of-table H, E, F are 0 (local alignment)
// where clamp0(v) = max(v, 0). Clamping E and F at 0 changes no H value (H has a 0 floor already and
// a non-positive E/F can never grow), but it makes the state canonical: two runs that agree on every
// positive value agree on the whole state, which the section convergence test relies on.
//
// Origins. Every positive H, E and F carries the cell (qstart, tstart) where its canonical path begins:
//   D's origin:  origin of H(i-1,j-1) if H(i-1,j-1) > 0, else (i, j) (a new alignment starts here)
//   E's origin:  origin of H(i,j-1) if H(i,j-1) - O - X >= E(i,j-1) - X (ties: open), else of E(i,j-1)
//   F's origin:  the same rule down the column
//   H's origin:  the first of D, E, F (in that order) equal to H
// A zero value has no origin: stored as kNoOrigin in both coordinates.
//
// Column records. For every target column j the scan keeps the best cell of the column: the largest
// H(i,j) > 0, ties to the smallest i, with its origin (ColumnRecord). A column whose H values are all 0
// has score 0 and qend = -1.
//
// Candidates and the reported set (the definition of "distinct", docs/SCAN.md):
//   1. Each column record with score > 0 is an alignment [qstart..qend] x [tstart..tend=j] (0-based
//      inclusive) on one target sequence and strand. Records sharing an origin (the same start cell)
//      are one alignment's prefixes and extensions: of each origin only the best-ranked record is a
//      candidate (per-origin reduction, done early by every engine).
//   2. Candidates are ranked by candidate_before(): score descending, then target sequence index,
//      strand (plus first), tend ascending, qend ascending -- a strict total order.
//   3. Walking the ranked candidates, one is reported unless its query interval AND its target
//      interval both overlap those of an already reported alignment of the same sequence and strand.
//      The walk stops after K reports or at the first candidate scoring below the minimum score.
// The minus strand aligns the reverse complement of the query against the forward target, so
// strand-minus coordinates here are in reverse-complemented query space; the driver converts them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

#include "sw/model.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::scan {

inline constexpr std::int32_t kNoOrigin = -1;

// Flattened scoring: 32x32 int8 table over digital codes, gap costs. Trivially copyable (kernels take
// it by value).
struct ScanModel {
  std::int8_t table[kMaxCodes * kMaxCodes] = {};
  std::int32_t open = 8;  // a gap of length k costs open + k * extend
  std::int32_t extend = 1;
  std::int32_t max_score = 0;  // largest table entry over the alphabet's codes (> 0 required)

  int score(std::uint8_t a, std::uint8_t b) const { return table[a * kMaxCodes + b]; }

  // The same flattened table as the align family's pass model (sw/model.hpp).
  static ScanModel make(const ScoringMatrix& matrix, GapCosts gaps) {
    const sw::PassModel pass = sw::PassModel::make(matrix, gaps, sw::Mode::kLocal);
    ScanModel m;
    std::copy(std::begin(pass.table), std::end(pass.table), m.table);
    m.open = pass.open;
    m.extend = pass.extend;
    m.max_score = pass.max_score;
    return m;
  }
};

// The DP state of one query row after some column j: what a computation needs to continue at j+1.
// Zero values have origin (kNoOrigin, kNoOrigin).
struct RowState {
  std::int32_t h = 0;
  std::int32_t e = 0;
  std::int32_t h_qstart = kNoOrigin;
  std::int32_t h_tstart = kNoOrigin;
  std::int32_t e_qstart = kNoOrigin;
  std::int32_t e_tstart = kNoOrigin;
  friend constexpr bool operator==(const RowState&, const RowState&) = default;
};
// A whole column state: m RowStates, row i at index i.
using ColumnState = std::vector<RowState>;

// Best cell of one target column (see above). score 0 <=> qend == -1 and no origin.
struct ColumnRecord {
  std::int32_t score = 0;
  std::int32_t qend = -1;
  std::int32_t qstart = kNoOrigin;
  std::int32_t tstart = kNoOrigin;
  friend constexpr bool operator==(const ColumnRecord&, const ColumnRecord&) = default;
};

enum class Strand : std::uint8_t { kPlus = 0, kMinus = 1 };

// One candidate alignment in scan coordinates (0-based inclusive; minus strand: reverse-complemented
// query coordinates, forward target coordinates).
struct Candidate {
  std::int32_t score = 0;
  std::uint32_t seq = 0;  // index of the target sequence in input order
  Strand strand = Strand::kPlus;
  std::int32_t qstart = 0, qend = 0;
  std::int64_t tstart = 0, tend = 0;
  friend constexpr bool operator==(const Candidate&, const Candidate&) = default;
};

// The strict total order of the reported list ("a ranks before b").
inline bool candidate_before(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.seq != b.seq) return a.seq < b.seq;
  if (a.strand != b.strand) return a.strand < b.strand;
  if (a.tend != b.tend) return a.tend < b.tend;
  return a.qend < b.qend;
}

// True if the two alignments conflict under rule 3 (same sequence and strand, query intervals overlap
// and target intervals overlap).
inline bool overlaps_both(const Candidate& a, const Candidate& b) {
  return a.seq == b.seq && a.strand == b.strand && a.qstart <= b.qend && b.qstart <= a.qend &&
         a.tstart <= b.tend && b.tstart <= a.tend;
}

// Largest query length and target sequence length the 32-bit state supports: positions are int32 and
// every H <= max_score * min(m, n) must stay below 2^31 with headroom (checked by check_lengths()).
inline constexpr std::int64_t kMaxLength = std::numeric_limits<std::int32_t>::max() / 2;
inline bool fits_int32(const ScanModel& m, std::int64_t qlen, std::int64_t tlen) {
  const std::int64_t shorter = qlen < tlen ? qlen : tlen;
  return qlen <= kMaxLength && tlen <= kMaxLength &&
         shorter * static_cast<std::int64_t>(m.max_score) + m.open + m.extend <
             std::numeric_limits<std::int32_t>::max() / 2;
}

}  // namespace warpsearch::scan
