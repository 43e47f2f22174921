// xdrop.hpp: blastp's gapped X-drop dynamic programming (BLAST+ 2.12 blast_gapalign.c: Blast_SemiGappedAlign,
// s_RestrictedGappedAlign, ALIGN_EX's DP; BlastGetStartForGappedAlignment; AdjustSubjectRange), header-only
// and __host__ __device__ (hd.hpp): gapped.cpp's score-only and traceback extensions and the GPU kernels run
// this one implementation. gapped.hpp states what a half extension computes.
//
// Contents:
//   SeedPoint, HalfExtension, GappedScore   the stage's result records (gapped.hpp documents their use)
//   XdropCell                 one cell of the DP column (the caller provides the column)
//   xdrop::ForwardStrand / ReverseStrand   residue access in consumption order (a reverse half reads its
//                             sequences backwards in place: no reversed copies)
//   xdrop::FlatColumn / RingColumn   the DP column: indexed by absolute column, or a ring bounding the band
//   xdrop::NoTrace            the trace policy of the score-only DP
//   xdrop::extend_half        one half extension, any score table, optional traceback codes (Trace policy)
//   xdrop::extend_half_restricted   the restricted variant (s_RestrictedGappedAlign)
//   xdrop::adjust_subject_range     AdjustSubjectRange for subjects of >= 90000 residues
//   gapped_start_raw          BlastGetStartForGappedAlignment over raw pointers (== gapped_start)
//   preliminary_gapped_alignment_raw   both score-only halves from a seed (== preliminary_gapped_alignment)
//   (the *_on forms take any column type; the others a flat column of `capacity` cells)
//
// Bounded DP column: the DP indexes `col` by absolute column (subject residues consumed), 0 .. N. Every
// index it reads was written earlier in the same half (row 0, or a band growth), and every write first
// checks the index against `capacity`: a half that would index col at or beyond capacity returns false
// with nothing written out of bounds (its result is then unknown). capacity >= N + 1 never fails. A ring
// column instead fails when the band grows wider than the ring (RingColumn).
#pragma once

#include <cstdint>

#include "blast/hd.hpp"
#include "warpsearch/alphabet.hpp"

namespace warpsearch::blast {

// A gapped extension's start: query and subject offsets of a residue pair (on one diagonal of the HSP).
struct SeedPoint {
  int q = 0;
  int s = 0;
  friend bool operator==(const SeedPoint&, const SeedPoint&) = default;
};

// One half of a gapped extension: the best cell's score and how many residues of each sequence it uses.
struct HalfExtension {
  int score = 0;
  int a_length = 0;
  int b_length = 0;
};

// A preliminary (score-only) gapped alignment: score and the query / subject ranges, ends exclusive.
struct GappedScore {
  int score = 0;
  int q_start = 0, q_end = 0;  // query range [q_start, q_end)
  int s_start = 0, s_end = 0;  // subject range
  friend bool operator==(const GappedScore&, const GappedScore&) = default;
};

// One DP column cell: H of the cell in the latest row that computed it, and the vertical gap value
// offered to the next row.
struct XdropCell {
  int best;
  int best_gap;
};

namespace xdrop {

inline constexpr int kMinInt = INT32_MIN / 2;    // BLAST's MININT
inline constexpr int kWindow = 11;               // HSP_MAX_WINDOW
inline constexpr int kRestrictSize = 10;         // RESTRICT_SIZE
inline constexpr int kMaxSubjectOffset = 90000;  // MAX_SUBJECT_OFFSET
inline constexpr int kMaxTotalGaps = 3000;       // MAX_TOTAL_GAPS
inline constexpr int kNoStop = INT32_MAX;        // stop_at of a complete extension

// Traceback cell codes (Trace policies with kEnabled): the op that produced H in the low bits, plus flags
// telling that the vertical (gap in B) or horizontal (gap in A) gap value leaving this cell extends the gap
// entering it.
inline constexpr std::uint8_t kOpSub = 0;
inline constexpr std::uint8_t kOpGapInB = 1;  // consumes a residue of A only (query insertion)
inline constexpr std::uint8_t kOpGapInA = 2;  // consumes a residue of B only (query deletion)
inline constexpr std::uint8_t kOpMask = 3;
inline constexpr std::uint8_t kExtendGapInB = 4;
inline constexpr std::uint8_t kExtendGapInA = 8;

// Residue access for one direction: at(1) .. at(size()) are the residues in consumption order.
// Forward: seq[0], seq[1], ... ; reverse: end[-1], end[-2], ... (the n residues before `end`).
struct ForwardStrand {
  const std::uint8_t* seq;
  int n;
  WS_BLAST_HD int size() const { return n; }
  WS_BLAST_HD std::uint8_t at(int i) const { return seq[i - 1]; }
};
struct ReverseStrand {
  const std::uint8_t* end;
  int n;
  WS_BLAST_HD int size() const { return n; }
  WS_BLAST_HD std::uint8_t at(int i) const { return end[-i]; }
};

// The DP column (see the file comment). FlatColumn: cell b at cells[b], b < capacity (the column contract
// above). RingColumn: cell b at cells[(b mod size) * stride] for a power-of-two size; a half fails when its
// band (the cells from the row's first live column to the band end) would span more than size columns.
// Every cell the DP reads lies in the current band, and a ring cell is only reused for a column at least
// `size` past it, so a band that fits gives exactly the flat column's result: the ring bounds the band's
// width instead of its end (a long diagonal extension fits in a few cells), and the GPU screen keeps it
// in shared memory. holds(first, b): column b may be written while the band starts at first.
struct FlatColumn {
  XdropCell* cells;
  int capacity;
  WS_BLAST_HD XdropCell& operator[](int b) const { return cells[b]; }
  WS_BLAST_HD bool holds(int /*first*/, int b) const { return b < capacity; }
  WS_BLAST_HD bool usable() const { return capacity >= 1; }
};
struct RingColumn {
  XdropCell* cells;
  int mask;    // size - 1
  int stride;  // elements between consecutive cells (interleaved columns of several threads)
  WS_BLAST_HD XdropCell& operator[](int b) const { return cells[(b & mask) * stride]; }
  WS_BLAST_HD bool holds(int first, int b) const { return b - first <= mask; }
  WS_BLAST_HD bool usable() const { return true; }
};

// Trace policy of the score-only DP. A recording policy (gapped.cpp's TraceRows) has kEnabled = true and
// start_row(first column), reserve_to(end column, exclusive) and at_current(column) -> std::uint8_t& for
// the current row.
struct NoTrace {
  static constexpr bool kEnabled = false;
};

// Row 0 of both DPs: the leading gap in A, as far as it stays within X; *b_size = one past its last column.
// False when the column cannot hold it.
template <class Col>
WS_BLAST_HD inline bool start_band(Col col, int N, int e, int oe, int x, int* b_size) {
  col[0] = {0, -oe};
  int score = -oe;
  int b = 1;
  for (; b <= N; ++b) {
    if (score < -x) break;
    if (!col.holds(0, b)) return false;
    col[b] = {score, score - oe};
    score -= e;
  }
  *b_size = b;
  return true;
}

// The band end after a row of both DPs: cut to the last surviving cell (`last`) plus one, or, when the row's
// last cell survived, grown along the row gap while it stays within X (on_grow(b) for each grown column);
// then one -inf cell; `first`: the band's first live column. False when the column cannot hold it.
template <class Col, class OnGrow>
WS_BLAST_HD inline bool close_row(Col col, int N, int e, int oe, int x, int best, int first, int last,
                                  int gap_row, int* b_size, OnGrow on_grow) {
  if (last < *b_size - 1) {
    *b_size = last + 1;
  } else {
    while (gap_row >= best - x && *b_size <= N) {
      if (!col.holds(first, *b_size)) return false;
      col[*b_size] = {gap_row, gap_row - oe};
      gap_row -= e;
      on_grow(*b_size);
      ++*b_size;
    }
  }
  if (*b_size <= N) {
    if (!col.holds(first, *b_size)) return false;
    col[*b_size] = {kMinInt, kMinInt};
    ++*b_size;
  }
  return true;
}

// Blast_SemiGappedAlign (Trace = NoTrace) / ALIGN_EX's DP (a recording Trace) for one direction: rows over
// A, columns over B. `table` is a 32 x 32 score table (score of codes a and b at [a * 32 + b]) of any
// integer type. Writes *out and returns true, or returns false when the band would index col at or beyond
// capacity (see the file comment). Early stop: after the first row whose best score reaches `stop_at` the
// half ends there; out->score (>= stop_at) is then a lower bound of the complete half's score and the
// lengths are those of the best cell so far. kNoStop (the default) never stops early.
// extend_half_on: the same over any column type (FlatColumn, RingColumn).
template <class Trace, class StrandA, class StrandB, class Score, class Col>
WS_BLAST_HD inline bool extend_half_on(StrandA A, StrandB B, const Score* table, int gap_open, int gap_extend,
                                       int x_dropoff, Col col, Trace* trace, HalfExtension* out,
                                       int stop_at = kNoStop) {
  HalfExtension result;
  const int M = A.size();
  const int N = B.size();
  const int e = gap_extend;
  const int oe = gap_open + gap_extend;
  const int x = hd_max(x_dropoff, oe);
  if (M <= 0 || N <= 0) {
    *out = result;
    return true;
  }
  if (!col.usable()) return false;

  // Row 0: the leading gap in A, as far as it stays within X.
  if constexpr (Trace::kEnabled) trace->start_row(0);
  int b_size = 0;
  if (!start_band(col, N, e, oe, x, &b_size)) return false;
  if constexpr (Trace::kEnabled) {
    trace->reserve_to(b_size);
    for (int b = 1; b < b_size; ++b) trace->at_current(b) = kOpGapInA;
  }

  int best = 0;
  int first = 0;
  for (int a = 1; a <= M; ++a) {
    const Score* const mrow = table + static_cast<int>(A.at(a)) * kMaxCodes;
    if constexpr (Trace::kEnabled) {
      trace->start_row(first);
      trace->reserve_to(b_size);
    }
    int score = kMinInt;  // no diagonal predecessor for the row's first cell
    int gap_row = kMinInt;
    int last = first;
    for (int b = first; b < b_size; ++b) {
      XdropCell& c = col[b];
      int gap_col = c.best_gap;
      // Diagonal value for the next column, from this column's previous-row score.
      const int next = b < N ? c.best + mrow[B.at(b + 1)] : kMinInt;
      std::uint8_t code = kOpSub;
      if (score < gap_col) {
        score = gap_col;
        code = kOpGapInB;
      }
      if (score < gap_row) {
        score = gap_row;
        code = kOpGapInA;
      }
      if (best - score > x) {
        if (b == first)
          ++first;
        else
          c.best = kMinInt;
      } else {
        last = b;
        if (score > best) {  // strict: the first cell reaching the best score wins
          best = score;
          result.a_length = a;
          result.b_length = b;
        }
        gap_row -= e;
        gap_col -= e;
        if (gap_col < score - oe) {
          c.best_gap = score - oe;
        } else {
          c.best_gap = gap_col;
          code |= kExtendGapInB;
        }
        if (gap_row < score - oe)
          gap_row = score - oe;
        else
          code |= kExtendGapInA;
        c.best = score;
      }
      score = next;
      if constexpr (Trace::kEnabled) trace->at_current(b) = code;
    }
    if (first == b_size || best >= stop_at) break;
    if (!close_row(col, N, e, oe, x, best, first, last, gap_row, &b_size, [&](int b) {
          if constexpr (Trace::kEnabled) {
            trace->reserve_to(b + 1);
            trace->at_current(b) = kOpGapInA;
          }
        }))
      return false;
  }
  result.score = best;
  *out = result;
  return true;
}

template <class Trace, class StrandA, class StrandB, class Score>
WS_BLAST_HD inline bool extend_half(StrandA A, StrandB B, const Score* table, int gap_open, int gap_extend,
                                    int x_dropoff, XdropCell* col, int capacity, Trace* trace,
                                    HalfExtension* out, int stop_at = kNoStop) {
  return extend_half_on(A, B, table, gap_open, gap_extend, x_dropoff, FlatColumn{col, capacity}, trace, out,
                        stop_at);
}

// s_RestrictedGappedAlign: as extend_half<NoTrace>, but a gap in A may open only in rows a % 10 == 0 and a
// gap in B only in columns b that are multiples of 10 counted from 0 (the first such column at or after
// the band start in each row). Cells outside those rows / columns use the two-term recurrences. As in
// BLAST, after a row that cannot open gaps in A the band grows along the diagonal value of the next column.
// Same column contract and early stop as extend_half.
template <class StrandA, class StrandB, class Score, class Col>
WS_BLAST_HD inline bool extend_half_restricted_on(StrandA A, StrandB B, const Score* table, int gap_open,
                                                  int gap_extend, int x_dropoff, Col col, HalfExtension* out,
                                                  int stop_at = kNoStop) {
  HalfExtension result;
  const int M = A.size();
  const int N = B.size();
  const int e = gap_extend;
  const int oe = gap_open + gap_extend;
  const int x = hd_max(x_dropoff, oe);
  if (M <= 0 || N <= 0) {
    *out = result;
    return true;
  }
  if (!col.usable()) return false;

  int b_size = 0;
  if (!start_band(col, N, e, oe, x, &b_size)) return false;

  int best = 0;
  int first = 0;
  int b_gap = 0;
  // Shared tail of every cell: the X-drop test and the bookkeeping of a surviving cell.
  auto survives = [&](XdropCell& c, int b, int a, int cell_score) {
    if (best - cell_score > x) {
      c.best = kMinInt;
      if (b == first) ++first;
      return false;
    }
    if (cell_score > best) {
      best = cell_score;
      result.a_length = a;
      result.b_length = b;
    }
    return true;
  };
  for (int a = 1; a <= M; ++a) {
    const Score* const mrow = table + static_cast<int>(A.at(a)) * kMaxCodes;
    int score = kMinInt;
    int gap_row = kMinInt;
    int last = first;
    const bool row_may_open = a % kRestrictSize == 0;
    for (int b = first; b < b_size; ++b) {
      XdropCell& c = col[b];
      const int next = b < N ? c.best + mrow[B.at(b + 1)] : kMinInt;
      const bool col_may_open = b == b_gap;
      if (col_may_open) b_gap += kRestrictSize;
      int gap_col = c.best_gap;
      if (col_may_open && score < gap_col) score = gap_col;
      if (row_may_open && score < gap_row) score = gap_row;
      if (survives(c, b, a, score)) {
        last = b;
        if (col_may_open) {
          gap_col -= e;
          c.best_gap = hd_max(score - oe, gap_col);
        }
        if (row_may_open) {
          gap_row -= e;
          gap_row = hd_max(score - oe, gap_row);
        }
        c.best = score;
      }
      score = next;
    }
    if (!row_may_open) gap_row = score;  // BLAST's quirk: the next column's diagonal value
    if (first == b_size || best >= stop_at) break;
    b_gap = first;
    if (first % kRestrictSize > 0) b_gap += kRestrictSize - first % kRestrictSize;
    if (!close_row(col, N, e, oe, x, best, first, last, gap_row, &b_size, [](int) {})) return false;
  }
  result.score = best;
  *out = result;
  return true;
}

template <class StrandA, class StrandB, class Score>
WS_BLAST_HD inline bool extend_half_restricted(StrandA A, StrandB B, const Score* table, int gap_open,
                                               int gap_extend, int x_dropoff, XdropCell* col, int capacity,
                                               HalfExtension* out, int stop_at = kNoStop) {
  return extend_half_restricted_on(A, B, table, gap_open, gap_extend, x_dropoff, FlatColumn{col, capacity},
                                   out, stop_at);
}

// Extension lengths for a long subject (AdjustSubjectRange): for subjects of >= 90000 residues BLAST
// limits the subject range to the query's remaining length plus 3000 on each side. `s_left` and `q_left`
// are the subject and query offsets BLAST passes (seed + 1 in the preliminary stage, the seed itself in
// the traceback stage); the result gives the subject residues each half may use.
struct SubjectRange {
  int left;   // residues available to the reverse half
  int right;  // residues available to the forward half
};
WS_BLAST_HD inline SubjectRange adjust_subject_range(int s_left, int subject_length, int q_left,
                                                     int query_length) {
  if (subject_length < kMaxSubjectOffset) return {s_left, subject_length - s_left};
  const int max_left = q_left + kMaxTotalGaps;
  const int max_right = query_length - q_left + kMaxTotalGaps;
  const int shift = s_left <= max_left ? 0 : s_left - max_left;
  const int left = s_left - shift;
  const int length = hd_min(subject_length, s_left + max_right) - shift;
  return {left, length - left};
}

}  // namespace xdrop

// BlastGetStartForGappedAlignment for the ungapped HSP query[q_start, q_start + length) ~
// subject[s_start, s_start + length) scored with `table` (32 x 32, [a * 32 + b]): for length <= 11 the middle
// pair (offset length / 2); otherwise the window of 11 pairs with the highest score (the first one on ties,
// windows scanned left to right) gives its middle pair (window end - 5) when that score is positive, else
// the HSP's first pair.
WS_BLAST_HD inline SeedPoint gapped_start_raw(const std::uint8_t* query, const std::uint8_t* subject,
                                              const std::int8_t* table, int q_start, int s_start,
                                              int length) {
  constexpr int kWindow = xdrop::kWindow;
  if (length <= kWindow) return {q_start + length / 2, s_start + length / 2};
  const std::uint8_t* const q = query + q_start;
  const std::uint8_t* const s = subject + s_start;
  int score = 0;
  for (int i = 0; i < kWindow; ++i) score += table[q[i] * kMaxCodes + s[i]];
  int best = score;
  int best_end = kWindow - 1;  // last pair of the best window, relative to the HSP start
  for (int i = kWindow; i < length; ++i) {
    score += table[q[i] * kMaxCodes + s[i]] - table[q[i - kWindow] * kMaxCodes + s[i - kWindow]];
    if (score > best) {
      best = score;
      best_end = i;
    }
  }
  const int offset = best > 0 ? best_end - kWindow / 2 : 0;
  return {q_start + offset, s_start + offset};
}

// s_BlastProtGappedAlignment's score-only alignment from a seed (preliminary_gapped_alignment over raw
// pointers): the reverse half covers query[0, seed.q] ~ the subject residues ending at seed.s (seed pair
// included), the forward half what follows; for a subject of >= 90000 residues the subject range is cut as
// AdjustSubjectRange does. restricted selects s_RestrictedGappedAlign. `col` (capacity cells) is the DP
// column of both halves: returns false (*out unspecified) when a half would need more (xdrop.hpp's file
// comment), else writes *out and returns true; capacity > subject_length never fails. stop_at: the
// extension ends as soon as its score is known to reach stop_at (the reverse half's score alone, or both
// halves' sum, at the end of a DP row); out->score (>= stop_at) is then a lower bound of the complete
// extension's score, and the ranges are partial. kNoStop (the default): the complete extension.
// preliminary_gapped_alignment_on: the same over any column type (xdrop::FlatColumn, xdrop::RingColumn).
template <class Col>
WS_BLAST_HD inline bool preliminary_gapped_alignment_on(const std::uint8_t* query, int query_length,
                                                        const std::uint8_t* subject, int subject_length,
                                                        const std::int8_t* table, int gap_open,
                                                        int gap_extend, int x_dropoff, SeedPoint seed,
                                                        bool restricted, Col col, GappedScore* out,
                                                        int stop_at = xdrop::kNoStop) {
  const xdrop::SubjectRange range =
      xdrop::adjust_subject_range(seed.s + 1, subject_length, seed.q + 1, query_length);
  // Reverse half: query[0, seed.q] and the `range.left` subject residues ending at seed.s.
  const xdrop::ReverseStrand q_left{query + seed.q + 1, seed.q + 1};
  const xdrop::ReverseStrand s_left{subject + seed.s + 1, range.left};
  HalfExtension left;
  const bool left_ok =
      restricted ? xdrop::extend_half_restricted_on(q_left, s_left, table, gap_open, gap_extend, x_dropoff,
                                                    col, &left, stop_at)
                 : xdrop::extend_half_on<xdrop::NoTrace>(q_left, s_left, table, gap_open, gap_extend,
                                                         x_dropoff, col, nullptr, &left, stop_at);
  if (!left_ok) return false;
  // Forward half: what follows the seed pair (a half's score is >= 0, so a reverse half that reached
  // stop_at decides it alone).
  HalfExtension right;
  if (left.score < stop_at && seed.q + 1 < query_length && range.right > 0) {
    const xdrop::ForwardStrand q_right{query + seed.q + 1, query_length - seed.q - 1};
    const xdrop::ForwardStrand s_right{subject + seed.s + 1, range.right};
    const bool right_ok =
        restricted
            ? xdrop::extend_half_restricted_on(q_right, s_right, table, gap_open, gap_extend, x_dropoff, col,
                                               &right, stop_at - left.score)
            : xdrop::extend_half_on<xdrop::NoTrace>(q_right, s_right, table, gap_open, gap_extend, x_dropoff,
                                                    col, nullptr, &right, stop_at - left.score);
    if (!right_ok) return false;
  }
  GappedScore r;
  r.q_start = seed.q + 1 - left.a_length;
  r.s_start = seed.s + 1 - left.b_length;
  r.q_end = seed.q + 1 + right.a_length;
  r.s_end = seed.s + 1 + right.b_length;
  r.score = left.score + right.score;
  *out = r;
  return true;
}

WS_BLAST_HD inline bool preliminary_gapped_alignment_raw(const std::uint8_t* query, int query_length,
                                                         const std::uint8_t* subject, int subject_length,
                                                         const std::int8_t* table, int gap_open,
                                                         int gap_extend, int x_dropoff, SeedPoint seed,
                                                         bool restricted, XdropCell* col, int capacity,
                                                         GappedScore* out, int stop_at = xdrop::kNoStop) {
  return preliminary_gapped_alignment_on(query, query_length, subject, subject_length, table, gap_open,
                                         gap_extend, x_dropoff, seed, restricted,
                                         xdrop::FlatColumn{col, capacity}, out, stop_at);
}

}  // namespace warpsearch::blast
