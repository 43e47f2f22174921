// model.hpp: the pairwise Smith-Waterman scoring model shared by every tier of the sw family
// (reference, simd/, cuda/), and the one function every fast path computes: the *pass*.
//
// Contents
//   Mode, PassModel    scoring matrix + affine gaps + boundary mode, flattened for kernels
//   EndPoint           what a pass returns: score and the end cell chosen by the tie rule
//   score bounds       a-priori limits deciding whether 16-bit lanes can hold every DP value
//
// The pass (the definition; reference.cpp implements it literally, tests hold every other tier to it)
//   Query q (length m >= 1) runs down the rows i = 0..m-1, target t (length n >= 1) along the
//   columns j = 0..n-1. With s(i,j) = matrix[q_i][t_j], O = gap open, X = gap extend (a gap of
//   length k costs O + k*X):
//     E(i,j) = max(E(i,j-1), H(i,j-1) - O) - X        gap in the query: target residue vs '-'  (D)
//     F(i,j) = max(F(i-1,j), H(i-1,j) - O) - X        gap in the target: query residue vs '-'  (I)
//     H(i,j) = max(H(i-1,j-1) + s(i,j), E(i,j), F(i,j) [, 0 in local mode])
//   Boundaries: E(i,-1) = F(-1,j) = -infinity, H(-1,-1) = 0 and
//     local:      H(i,-1) = H(-1,j) = 0
//     global:     H(i,-1) = -(O + (i+1)X),  H(-1,j) = -(O + (j+1)X)
//     semiglobal: H(i,-1) = -(O + (i+1)X),  H(-1,j) = 0       (query end to end, target ends free)
//   Result (score S, end cell):
//     local:      S = max(0, max H). S == 0: no cell (EndPoint::kNone). Otherwise the first cell in
//                 column-major order holding S: smallest j, then smallest i.
//     global:     S = H(m-1, n-1), end (m-1, n-1).
//     semiglobal: S = max_j H(m-1, j), end (m-1, smallest such j).
//
// Start positions come from the same pass run on the reversed prefixes q[0..qend], t[0..tend]
// (semiglobal: all of q): its end cell (i', j') is the start (qend - i', tend - j'). Because the forward
// end is the column-major first maximum, the reversed pass's best alignment necessarily ends at the
// forward end cell, so start and end always belong to one optimal alignment. The tie rule this gives
// for starts: the largest target start, then the largest query start (the shortest optimal alignment
// ending at the chosen end). One degenerate semiglobal case is settled without passes: when the best
// score equals -(O + m X), the score of leaving the whole query as insertions, that all-insertion
// alignment is the one reported (target range empty, at 0; pairwise.hpp all_insertions()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "warpsearch/align.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::sw {

using align::Mode;  // local, global, semiglobal (align.hpp)

// End cell of a pass. qend/tend are 0-based row/column indices, -1 when there is no cell (local mode
// with score 0).
struct EndPoint {
  std::int32_t score = 0;
  std::int32_t qend = -1;
  std::int32_t tend = -1;
  friend constexpr bool operator==(const EndPoint&, const EndPoint&) = default;
};

// The flattened model every tier reads: a 32x32 score table over digital codes (kMaxCodes), the gap
// costs and the mode. Trivially copyable so it can be passed to CUDA kernels by value.
struct PassModel {
  std::int8_t table[kMaxCodes * kMaxCodes] = {};
  std::int32_t open = 11;
  std::int32_t extend = 1;
  std::int32_t max_score = 0;  // largest entry over the alphabet's codes
  std::int32_t min_score = 0;  // smallest entry over the alphabet's codes
  Mode mode = Mode::kLocal;

  int score(std::uint8_t a, std::uint8_t b) const { return table[a * kMaxCodes + b]; }

  static PassModel make(const ScoringMatrix& matrix, GapCosts gaps, Mode mode) {
    PassModel m;
    for (int a = 0; a < kMaxCodes; ++a)
      for (int b = 0; b < kMaxCodes; ++b)
        m.table[a * kMaxCodes + b] = static_cast<std::int8_t>(
            matrix.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
    m.open = gaps.open;
    m.extend = gaps.extend;
    m.max_score = matrix.max_score();
    m.min_score = matrix.min_score();
    m.mode = mode;
    return m;
  }
};

// Bound on |value| of every H, E and F a pass over an m x n matrix can produce (plus one gap opening
// of headroom, because E/F sit at most O + X below some H). A tier may use 16-bit lanes for a pair only
// when this bound is <= kInt16Safe; the caller then needs no saturation check at all.
inline constexpr std::int64_t kInt16Safe = 32000;
inline constexpr std::int64_t kInt32Safe = std::numeric_limits<std::int32_t>::max() / 2;

inline std::int64_t value_bound(const PassModel& m, std::int64_t qlen, std::int64_t tlen) {
  const std::int64_t oe = m.open + m.extend;
  const std::int64_t top = std::min(qlen, tlen) * std::max<std::int64_t>(m.max_score, 0);
  if (m.mode == Mode::kLocal) return top + oe;
  // Global/semiglobal: the lowest value is at most the cost of gapping everything plus the worst
  // substitutions along any path (each of the qlen + tlen steps loses at most max(|min|, O + X)).
  const std::int64_t step = std::max<std::int64_t>(std::abs(static_cast<std::int64_t>(m.min_score)), oe);
  return std::max(top, (qlen + tlen + 2) * step) + oe;
}

inline bool fits_int16(const PassModel& m, std::int64_t qlen, std::int64_t tlen) {
  return value_bound(m, qlen, tlen) <= kInt16Safe;
}
inline bool fits_int32(const PassModel& m, std::int64_t qlen, std::int64_t tlen) {
  return value_bound(m, qlen, tlen) <= kInt32Safe;
}

}  // namespace warpsearch::sw
