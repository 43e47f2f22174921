// traceback.cpp: kernel 2 of the scan -- the optimal global alignment of a candidate's box
// (traceback.hpp), exactly, in bounded memory.
//
// Contents:
//   Box, gap_step(), h_step()   the box and the one DP cell shared by both versions (tie rules below)
//   trace_alignment_full()      plain full matrix of direction bytes (the definition the tests use)
//   PrunedDp                    forward rows restricted to cells that can still lie on an optimal path
//   PrunedDp32                  the same rows in int32 (fits_32() proves no overflow): vectorized
//                               F/D/threshold pass, a short serial E/H pass, a vectorizable fix-up pass
//   PointerStore                direction bytes of the live interval of consecutive rows
//   trace_alignment()           pruned forward pass, direct or checkpointed block-by-block traceback
//   finish()                    CIGAR, counts and re-scoring of a traced path
//
// Grid. Rows ii = 0..M (query box residue ii-1 at row ii), columns jj = 0..N (target box residue
// jj-1); row 0 and column 0 are the leading boundary: H(0,0) = 0, H(0,jj) = -(O + jj*X),
// H(ii,0) = -(O + ii*X), E and F are -inf there. Inside:
//   E(ii,jj) = max(E(ii,jj-1) - X, H(ii,jj-1) - O - X)   'D' (target residue vs gap)
//   F(ii,jj) = max(F(ii-1,jj) - X, H(ii-1,jj) - O - X)   'I' (query residue vs gap)
//   H(ii,jj) = max(H(ii-1,jj-1) + s, E, F)
// Tie rules (traceback from H(M,N)): H prefers the diagonal, then E, then F; E and F prefer opening
// (from H) over extending. Reaching row 0 emits jj 'D', reaching column 0 emits ii 'I' (the trace can
// only get there in state H, since E/F are -inf on the boundary).
//
// Exact pruning. A state (H, E or F of a cell) is dropped (set to -inf) when its computed value plus an
// upper bound of the best completion from it to (M,N) is below S. With r = M-ii rows and c = N-jj
// columns left, a completion has at most min(r,c) diagonal steps, each on a distinct remaining query
// residue and a distinct remaining target residue, and at least |r-c| gap columns; a new gap opening is
// needed unless r == c, or, from E (F), unless the missing columns are target (query) residues that
// extend the current gap:
//   diag = min(sum over the remaining query residues of max(0, best score of the residue's row),
//              the same over the remaining target residues and their columns)
//   UB_H = diag - |r-c|*X - (r != c ? O : 0),  UB_E = diag - |r-c|*X - (r > c ? O : 0),
//   UB_F = diag - |r-c|*X - (c > r ? O : 0).
// The boundary cells are sources of fixed value (not derived from their neighbours); they are bounded as
// the gap states they are geometrically -- row 0 as E, column 0 as F -- so that a path starting with
// a long leading gap keeps a live cell in every row it crosses (UB_E, UB_F >= UB_H: still valid
// bounds). Hence a row without live states proves the optimum below S.
// Every state on an optimal path keeps its exact value (its optimal prefix is never dropped, by
// induction), so it is never dropped itself; the traceback compares values of states on optimal paths
// only, and states off optimal paths compare strictly lower in both computations: the pruned path is
// the full path. If the box's optimum is not S, the end cell is dropped or scores differently: an
// Error(kInternal) in both versions.
//
// Memory. Direction bytes are kept for the live interval [lo, hi] of each row only (one byte per cell
// plus kRowOverhead per row). While they fit in limits.max_matrix_bytes the whole path is traced at
// once. Otherwise the rows are cut into blocks of about max_matrix_bytes / 2 pointer bytes; the forward
// pass keeps each block's starting DP row (H and F over its live interval) as a checkpoint and the
// traceback recomputes the blocks' pointers from their checkpoints, last block first (the last block's
// pointers are still there when the forward pass ends). A block holds at least one row. The checkpoints
// (16 bytes per live cell of one row per block, about 2 * cells / max_matrix_bytes blocks) are not
// counted in the limit: they outgrow its second half only when cells * row width > limit^2 / 64.
#include "scan/traceback.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "warpsearch/error.hpp"

namespace warpsearch::scan {
namespace {

using i64 = std::int64_t;

// Dropped or unreachable states. Live values stay within +-2^40, so sums with a few scores or gap costs
// never wrap and stay far below any live value.
constexpr i64 kNegInf = std::numeric_limits<i64>::min() / 4;

// Direction byte of a cell: H's source in the low two bits, then whether E and F opened.
enum : std::uint8_t {
  kFromD = 0,
  kFromE = 1,
  kFromF = 2,
  kFromNone = 3,
  kSourceMask = 3,
  kEOpen = 4,
  kFOpen = 8
};

enum class State : std::uint8_t { kH, kE, kF };

struct Box {
  std::span<const std::uint8_t> q, t;  // the box's query and target residues
  i64 m = 0, n = 0;                    // rows and columns (>= 1)
  i64 open = 0, extend = 0;
  i64 score = 0;  // S
};

Box make_box(const ScanModel& model, std::span<const std::uint8_t> query,
             std::span<const std::uint8_t> target, const Candidate& c) {
  if (c.qstart < 0 || c.qend < c.qstart || static_cast<std::uint64_t>(c.qend) >= query.size() ||
      c.tstart < 0 || c.tend < c.tstart || static_cast<std::uint64_t>(c.tend) >= target.size()) {
    throw Error(ErrorKind::kInternal,
                fmt::format("traceback box [{}..{}] x [{}..{}] lies outside the {} x {} sequences", c.qstart,
                            c.qend, c.tstart, c.tend, query.size(), target.size()));
  }
  if (model.open < 0 || model.extend < 0) {
    throw Error(ErrorKind::kInternal, fmt::format("negative gap costs {}/{}", model.open, model.extend));
  }
  Box b;
  b.m = i64{c.qend} - c.qstart + 1;
  b.n = c.tend - c.tstart + 1;
  b.q = query.subspan(static_cast<std::size_t>(c.qstart), static_cast<std::size_t>(b.m));
  b.t = target.subspan(static_cast<std::size_t>(c.tstart), static_cast<std::size_t>(b.n));
  b.open = model.open;
  b.extend = model.extend;
  b.score = c.score;
  return b;
}

// E and F of a cell from their predecessors (ties open); returns the kEOpen/kFOpen bits.
inline std::uint8_t gap_step(i64 h_left, i64& e, i64 h_up, i64 f_up, i64& f, i64 open, i64 extend) {
  std::uint8_t p = 0;
  const i64 e_open = h_left - open - extend, e_ext = e - extend;
  if (e_open >= e_ext) {
    e = e_open;
    p |= kEOpen;
  } else {
    e = e_ext;
  }
  const i64 f_open = h_up - open - extend, f_ext = f_up - extend;
  if (f_open >= f_ext) {
    f = f_open;
    p |= kFOpen;
  } else {
    f = f_ext;
  }
  return p;
}

// H of a cell from D, E, F (ties: D, then E, then F); returns the source bits.
inline std::uint8_t h_step(i64 d, i64 e, i64 f, i64& h) {
  h = d;
  std::uint8_t src = kFromD;
  if (e > h) {
    h = e;
    src = kFromE;
  }
  if (f > h) {
    h = f;
    src = kFromF;
  }
  return src;
}

struct TraceState {
  i64 ii = 0, jj = 0;
  State st = State::kH;
};

// Follows direction bytes (at(ii, jj)) from s while s.ii >= first_row (>= 1) and s.jj >= 1, appending
// ops in reverse order. Stops in the row above first_row or on column 0.
template <class At>
void follow(const Box& b, const At& at, i64 first_row, TraceState& s, std::string& ops) {
  while (s.ii >= first_row && s.jj > 0) {
    const std::uint8_t p = at(s.ii, s.jj);
    switch (s.st) {
      case State::kH: {
        const int src = p & kSourceMask;
        if (src == kFromD) {
          ops.push_back(
              b.q[static_cast<std::size_t>(s.ii - 1)] == b.t[static_cast<std::size_t>(s.jj - 1)] ? '=' : 'X');
          --s.ii;
          --s.jj;
        } else if (src == kFromE) {
          s.st = State::kE;
        } else if (src == kFromF) {
          s.st = State::kF;
        } else {
          throw Error(ErrorKind::kInternal,
                      fmt::format("traceback reached a dropped cell ({},{})", s.ii, s.jj));
        }
        break;
      }
      case State::kE:
        ops.push_back('D');
        if (p & kEOpen) s.st = State::kH;
        --s.jj;
        break;
      case State::kF:
        ops.push_back('I');
        if (p & kFOpen) s.st = State::kH;
        --s.ii;
        break;
    }
  }
}

// Builds the alignment from the reversed ops of the traced part (s at row 0 or column 0 in state H),
// adds the leading boundary gap and re-scores it against S.
Alignment finish(const ScanModel& model, const Box& b, TraceState s, std::string& ops, i64 cells) {
  if (s.st != State::kH || (s.ii != 0 && s.jj != 0)) {
    throw Error(ErrorKind::kInternal, fmt::format("traceback stopped inside the box at ({},{})", s.ii, s.jj));
  }
  ops.append(static_cast<std::size_t>(s.jj), 'D');
  ops.append(static_cast<std::size_t>(s.ii), 'I');
  Alignment a;
  a.cells = cells;
  i64 score = 0, qi = 0, tj = 0;
  std::size_t k = ops.size();
  while (k > 0) {
    const char op = ops[k - 1];
    i64 run = 0;
    while (k > 0 && ops[k - 1] == op) {
      --k;
      ++run;
      if (op == '=' || op == 'X') {
        score += model.score(b.q[static_cast<std::size_t>(qi)], b.t[static_cast<std::size_t>(tj)]);
        ++qi;
        ++tj;
      } else {
        ++(op == 'I' ? qi : tj);
      }
    }
    a.cigar += fmt::format("{}{}", run, op);
    const auto urun = static_cast<std::uint32_t>(run);
    if (op == '=') a.matches += urun;
    if (op == 'X') a.mismatches += urun;
    if (op == 'I' || op == 'D') {
      score -= b.open + run * b.extend;
      ++a.gap_opens;
      a.gap_columns += urun;
    }
    a.length += urun;
  }
  if (score != b.score || qi != b.m || tj != b.n) {
    throw Error(ErrorKind::kInternal,
                fmt::format("traceback CIGAR re-scores to {} over {} x {} residues, expected {} over {} x {}",
                            score, qi, tj, b.score, b.m, b.n));
  }
  return a;
}

[[noreturn]] void throw_score_mismatch(const Box& b, const std::string& got) {
  throw Error(
      ErrorKind::kInternal,
      fmt::format("the optimal global alignment of the {} x {} candidate box scores {}, the candidate {}",
                  b.m, b.n, got, b.score));
}

// ---------------------------------------------------------------------------------------------------
// Pruned forward DP.

// One DP row over its live interval: columns [lo, hi] hold at least one live state; h/f hold columns
// base..end+1 with base <= lo-1 and end >= hi, and every column of that range outside [lo, hi] is -inf.
struct Row {
  i64 lo = 0, hi = -1;
  i64 base = 0;
  std::vector<i64> h, f;
  i64 H(i64 jj) const { return h[static_cast<std::size_t>(jj - base)]; }
  i64 F(i64 jj) const { return f[static_cast<std::size_t>(jj - base)]; }
  // A copy holding columns lo-1..hi+1 only (checkpoints).
  Row trimmed() const {
    Row r;
    r.lo = lo;
    r.hi = hi;
    r.base = lo - 1;
    const auto from = static_cast<std::ptrdiff_t>(lo - 1 - base),
               to = static_cast<std::ptrdiff_t>(hi + 2 - base);
    r.h.assign(h.begin() + from, h.begin() + to);
    r.f.assign(f.begin() + from, f.begin() + to);
    return r;
  }
};

class PrunedDp {
 public:
  using RowType = Row;

  PrunedDp(const ScanModel& model, const Box& b) : model_(model), b_(b) {
    // Suffix sums of the best score of each remaining query residue (row) and target residue (column).
    // Maxima are clamped at 0: a completion may skip a residue whose best score is negative.
    std::int32_t row_max[kMaxCodes] = {}, col_max[kMaxCodes] = {};
    for (int a = 0; a < kMaxCodes; ++a) {
      for (int c = 0; c < kMaxCodes; ++c) {
        const int s = model.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(c));
        row_max[a] = std::max(row_max[a], s);
        col_max[c] = std::max(col_max[c], s);
      }
    }
    sq_.assign(static_cast<std::size_t>(b.m + 1), 0);
    for (i64 ii = b.m - 1; ii >= 0; --ii) {
      sq_[static_cast<std::size_t>(ii)] =
          sq_[static_cast<std::size_t>(ii + 1)] + row_max[b.q[static_cast<std::size_t>(ii)]];
    }
    st_.assign(static_cast<std::size_t>(b.n + 1), 0);
    for (i64 jj = b.n - 1; jj >= 0; --jj) {
      st_[static_cast<std::size_t>(jj)] =
          st_[static_cast<std::size_t>(jj + 1)] + col_max[b.t[static_cast<std::size_t>(jj)]];
    }
  }

  i64 cells() const { return cells_; }

  // Row 0 (the leading boundary). No direction bytes are needed for it.
  void first_row(Row& cur) const {
    cur.base = -1;
    cur.h.assign(1, kNegInf);
    cur.f.assign(1, kNegInf);
    cur.lo = -1;
    cur.hi = -1;
    for (i64 jj = 0; jj <= b_.n; ++jj) {
      i64 h = jj == 0 ? 0 : -(b_.open + jj * b_.extend);
      if (h + bound(0, jj, State::kE) < b_.score) h = kNegInf;
      cur.h.push_back(h);
      cur.f.push_back(kNegInf);
      if (h != kNegInf) {
        if (cur.lo < 0) cur.lo = jj;
        cur.hi = jj;
      } else if (jj >= b_.n - b_.m) {
        break;  // from the end's diagonal on, value + bound never increases along the row
      }
    }
    cur.h.push_back(kNegInf);
    cur.f.push_back(kNegInf);
    if (cur.lo < 0) throw_empty(0);
  }

  // Row ii >= 1 from row ii-1. Returns the direction bytes of columns cur.lo..cur.hi (valid until the
  // next call).
  std::span<const std::uint8_t> next_row(i64 ii, const Row& prev, Row& cur) {
    const i64 open = b_.open, extend = b_.extend, score = b_.score;
    const i64 h0 = -(open + ii * extend);
    const bool live0 = h0 + bound(ii, 0, State::kF) >= score;
    const i64 start = live0 ? 0 : std::max<i64>(prev.lo, 1);
    cur.base = start - 1;
    cur.h.assign(1, kNegInf);
    cur.f.assign(1, kNegInf);
    scratch_.clear();
    i64 first = -1, last = -1;
    i64 e = kNegInf, h_left = kNegInf;
    i64 jj = start;
    if (live0) {
      cur.h.push_back(h0);
      cur.f.push_back(kNegInf);
      scratch_.push_back(kFromNone);
      h_left = h0;
      first = last = 0;
      jj = 1;
    }
    const std::int8_t* srow = model_.table + b_.q[static_cast<std::size_t>(ii - 1)] * kMaxCodes;
    const i64 r = b_.m - ii;
    const i64 sq = sq_[static_cast<std::size_t>(ii)];
    const i64 plo = prev.lo, phi = prev.hi;
    i64 computed = 0;
    for (; jj <= b_.n; ++jj) {
      i64 h_diag = kNegInf, h_up = kNegInf, f_up = kNegInf;
      if (jj >= plo && jj <= phi + 1) {
        h_diag = prev.H(jj - 1);
        h_up = prev.H(jj);
        f_up = prev.F(jj);
      }
      i64 f;
      std::uint8_t p = gap_step(h_left, e, h_up, f_up, f, open, extend);
      // Bounds of the completion from (ii, jj).
      const i64 c = b_.n - jj;
      const i64 diag = std::min(sq, st_[static_cast<std::size_t>(jj)]);
      const i64 gap = (r > c ? r - c : c - r) * extend;
      const i64 ub = diag - gap;
      if (e + ub - (r > c ? open : 0) < score) e = kNegInf;
      if (f + ub - (c > r ? open : 0) < score) f = kNegInf;
      i64 h;
      p |= h_step(h_diag + srow[b_.t[static_cast<std::size_t>(jj - 1)]], e, f, h);
      if (h + ub - (r != c ? open : 0) < score) h = kNegInf;
      cur.h.push_back(h);
      cur.f.push_back(f);
      scratch_.push_back(p);
      h_left = h;
      ++computed;
      if (h != kNegInf || e != kNegInf || f != kNegInf) {
        if (first < 0) first = jj;
        last = jj;
      }
      if (h == kNegInf && e == kNegInf) {
        // Column jj+1 gets nothing from this row.
        if (jj > phi) {
          ++jj;
          break;  // nor from the previous row
        }
        if (jj + 1 < plo) {  // columns jj+1 .. plo-1 get nothing from either row
          const auto skip = static_cast<std::size_t>(plo - 1 - jj);
          cur.h.insert(cur.h.end(), skip, kNegInf);
          cur.f.insert(cur.f.end(), skip, kNegInf);
          scratch_.insert(scratch_.end(), skip, kFromNone);
          jj = plo - 1;
        }
      }
    }
    cells_ += computed;
    cur.h.push_back(kNegInf);  // column jj (one past the last written)
    cur.f.push_back(kNegInf);
    if (first < 0) throw_empty(ii);
    cur.lo = first;
    cur.hi = last;
    return std::span<const std::uint8_t>(scratch_).subspan(static_cast<std::size_t>(first - start),
                                                           static_cast<std::size_t>(last - first + 1));
  }

 private:
  // The completion bound of a state of cell (ii, jj) (see the top of the file).
  i64 bound(i64 ii, i64 jj, State st) const {
    const i64 r = b_.m - ii, c = b_.n - jj;
    const i64 diag = std::min(sq_[static_cast<std::size_t>(ii)], st_[static_cast<std::size_t>(jj)]);
    const bool opens = st == State::kH ? r != c : st == State::kE ? r > c : c > r;
    return diag - (r > c ? r - c : c - r) * b_.extend - (opens ? b_.open : 0);
  }
  [[noreturn]] void throw_empty(i64 ii) const {
    // Every state of the row is below S - (bound of its completion): the optimum is below S.
    throw_score_mismatch(b_, fmt::format("less (no alignment path through row {} reaches it)", ii));
  }

  const ScanModel& model_;
  const Box& b_;
  std::vector<i64> sq_, st_;
  std::vector<std::uint8_t> scratch_;
  i64 cells_ = 0;
};

// Direction bytes of rows first_row.. (consecutive), each over its live interval, in chunks.
class PointerStore {
 public:
  static constexpr std::uint64_t kRowOverhead = 24;  // per-row bookkeeping, counted as pointer memory
  // Chunks grow geometrically from kFirstChunk to kMaxChunk bytes (a wider row gets a chunk of its own).
  static constexpr std::size_t kFirstChunk = std::size_t{1} << 12, kMaxChunk = std::size_t{1} << 22;

  void reset(i64 first_row) {
    first_row_ = first_row;
    rows_.clear();
    chunks_.clear();
    used_ = 0;
    capacity_ = 0;
    memory_ = 0;
  }
  i64 first_row() const { return first_row_; }
  i64 end_row() const { return first_row_ + static_cast<i64>(rows_.size()); }
  std::uint64_t memory() const { return memory_; }

  void append(i64 lo, std::span<const std::uint8_t> bytes) {
    const std::size_t w = bytes.size();
    if (used_ + w > capacity_) {
      const std::size_t size = std::max(w, capacity_ == 0 ? kFirstChunk : std::min(2 * capacity_, kMaxChunk));
      chunks_.push_back(std::make_unique_for_overwrite<std::uint8_t[]>(size));
      used_ = 0;
      capacity_ = size;
    }
    std::uint8_t* dst = chunks_.back().get() + used_;
    std::copy(bytes.begin(), bytes.end(), dst);
    used_ += w;
    rows_.push_back({dst, lo, static_cast<i64>(w)});
    memory_ += w + kRowOverhead;
  }

  // Keeps rows >= row only (copies them into fresh chunks).
  void drop_before(i64 row) {
    PointerStore kept;
    kept.reset(row);
    std::vector<std::uint8_t> tmp;
    for (i64 ii = std::max(row, first_row_); ii < end_row(); ++ii) {
      const RowPtr& rp = rows_[static_cast<std::size_t>(ii - first_row_)];
      tmp.assign(rp.p, rp.p + rp.width);
      kept.append(rp.lo, std::span<const std::uint8_t>(tmp));
    }
    *this = std::move(kept);
  }

  std::uint8_t at(i64 ii, i64 jj) const {
    if (ii < first_row_ || ii >= end_row()) {
      throw Error(ErrorKind::kInternal, fmt::format("traceback row {} is not in the pointer store", ii));
    }
    const RowPtr& rp = rows_[static_cast<std::size_t>(ii - first_row_)];
    if (jj < rp.lo || jj >= rp.lo + rp.width) {
      throw Error(ErrorKind::kInternal, fmt::format("traceback left the live region at ({},{})", ii, jj));
    }
    return rp.p[jj - rp.lo];
  }

 private:
  struct RowPtr {
    const std::uint8_t* p;
    i64 lo;
    i64 width;
  };
  i64 first_row_ = 1;
  std::vector<RowPtr> rows_;
  std::vector<std::unique_ptr<std::uint8_t[]>> chunks_;
  std::size_t used_ = 0, capacity_ = 0;
  std::uint64_t memory_ = 0;
};

// ---------------------------------------------------------------------------------------------------
// 32-bit pruned forward DP: the same states, bounds, live intervals, computed cells and direction bytes
// as PrunedDp, in int32 over full-width rows, used when fits_32() proves that no value can wrap.

using i32 = std::int32_t;

// Dropped or unreachable states. Every live value and every pruning threshold lies in [-B, B] with
// B < 2^28 (fits_32); a state derived from a dropped one is within 2^27 of kNeg32, hence below every
// threshold, and is dropped again (reset to exactly kNeg32): dropped values never accumulate.
constexpr i32 kNeg32 = -(i32{1} << 30);

// Live values: H(ii,jj) <= max_score * min(ii,jj) and a live state is >= its threshold S - UB, where
// |UB| <= 127 * (m + n) + X * (m + n) + O; a computed state is at most O + X + 128 below a live one.
bool fits_32(const Box& b) {
  const i64 mn = b.m + b.n;
  if (b.open >= (i64{1} << 24) || b.extend >= (i64{1} << 24) || mn >= (i64{1} << 26)) return false;
  const i64 score = b.score < 0 ? -b.score : b.score;
  return score + 128 * mn + (b.open + b.extend) * (mn + 2) + 1024 < (i64{1} << 28);
}

// v < t ? kNeg32 : v without a branch (the outcome is data-dependent: a mispredicted branch costs more
// than a cell). v - t cannot wrap: both lie within 2^30 + 2^28 of 0.
inline i32 below_to_neg(i32 v, i32 t) {
  const i32 mask = (v - t) >> 31;  // -1 iff v < t (arithmetic shift)
  return (v & ~mask) | (kNeg32 & mask);
}

// GNU vector extensions (GCC, Clang): four int32 lanes, lane-wise comparisons give -1/0 masks.
using v4i = i32 __attribute__((vector_size(16)));
using v4b = std::int8_t __attribute__((vector_size(4)));
using v4u = std::uint8_t __attribute__((vector_size(4)));
inline v4i load4(const i32* p) {
  v4i v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(i32* p, v4i v) { std::memcpy(p, &v, sizeof v); }

// One DP row: columns [lo, hi] hold at least one live state; h/f hold columns base.. (working rows:
// base = -1, columns -1..n+1; checkpoints: lo-1..hi+1). Columns lo-1 and hi+1 and every column of
// [lo, hi] hold exact values (-inf: kNeg32); the others of a working row are stale.
struct Row32 {
  i64 lo = 0, hi = -1;
  i64 base = 0;
  std::vector<i32> h, f;
  i64 H(i64 jj) const { return h[static_cast<std::size_t>(jj - base)]; }
  Row32 trimmed() const {
    Row32 r;
    r.lo = lo;
    r.hi = hi;
    r.base = lo - 1;
    const auto from = static_cast<std::ptrdiff_t>(lo - 1 - base),
               to = static_cast<std::ptrdiff_t>(hi + 2 - base);
    r.h.assign(h.begin() + from, h.begin() + to);
    r.f.assign(f.begin() + from, f.begin() + to);
    return r;
  }
};

class PrunedDp32 {
 public:
  using RowType = Row32;

  PrunedDp32(const ScanModel& model, const Box& b) : model_(model), b_(b) {
    std::int32_t row_max[kMaxCodes] = {}, col_max[kMaxCodes] = {};
    for (int a = 0; a < kMaxCodes; ++a) {
      for (int c = 0; c < kMaxCodes; ++c) {
        const int s = model.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(c));
        row_max[a] = std::max(row_max[a], s);
        col_max[c] = std::max(col_max[c], s);
      }
    }
    sq_.assign(static_cast<std::size_t>(b.m + 1), 0);
    for (i64 ii = b.m - 1; ii >= 0; --ii) {
      sq_[static_cast<std::size_t>(ii)] =
          sq_[static_cast<std::size_t>(ii + 1)] + row_max[b.q[static_cast<std::size_t>(ii)]];
    }
    st_.assign(static_cast<std::size_t>(b.n + 1), 0);
    for (i64 jj = b.n - 1; jj >= 0; --jj) {
      st_[static_cast<std::size_t>(jj)] =
          st_[static_cast<std::size_t>(jj + 1)] + col_max[b.t[static_cast<std::size_t>(jj)]];
    }
    scratch_.assign(static_cast<std::size_t>(b.n + 1), kFromNone);
    for (auto* v : {&dmax_, &key_, &thr_e_, &thr_h_, &h_raw_, &e_raw_})
      v->assign(static_cast<std::size_t>(b.n + 2), 0);
    pf_bits_.assign(static_cast<std::size_t>(b.n + 2), 0);
    pe_bits_.assign(static_cast<std::size_t>(b.n + 2), 0);
    profile_.resize(kMaxCodes);
  }

  i64 cells() const { return cells_; }

  void first_row(Row32& cur) const {
    prepare(cur);
    i32* H = cur.h.data() + 1;
    i32* F = cur.f.data() + 1;
    cur.lo = -1;
    cur.hi = -1;
    for (i64 jj = 0; jj <= b_.n; ++jj) {
      const i64 h = jj == 0 ? 0 : -(b_.open + jj * b_.extend);
      const bool live = h + bound(0, jj, State::kE) >= b_.score;
      H[jj] = live ? static_cast<i32>(h) : kNeg32;
      F[jj] = kNeg32;
      if (live) {
        if (cur.lo < 0) cur.lo = jj;
        cur.hi = jj;
      } else if (jj >= b_.n - b_.m) {
        break;  // from the end's diagonal on, value + bound never increases along the row
      }
    }
    if (cur.lo < 0) throw_empty(0);
    seal(cur);
  }

  // Row ii >= 1 from row ii-1 (PrunedDp::next_row, the same cells in the same order).
  std::span<const std::uint8_t> next_row(i64 ii, const Row32& prev, Row32& cur) {
    prepare(cur);
    const i64 n = b_.n;
    i32* H = cur.h.data() + 1;  // H[jj]: column jj
    i32* F = cur.f.data() + 1;
    std::uint8_t* P = scratch_.data();
    const i32 O = static_cast<i32>(b_.open), X = static_cast<i32>(b_.extend), OX = O + X;
    const i32 S = static_cast<i32>(b_.score);
    const i64 h0 = -(b_.open + ii * b_.extend);
    const bool live0 = h0 + bound(ii, 0, State::kF) >= b_.score;
    const i64 plo = prev.lo, phi = prev.hi;
    i64 first = -1, last = -1;
    i32 e = kNeg32, h = kNeg32;  // h: H of the last computed column
    i64 jj = live0 ? 0 : std::max<i64>(plo, 1);
    if (live0) {
      H[0] = static_cast<i32>(h0);
      F[0] = kNeg32;
      P[0] = kFromNone;
      h = static_cast<i32>(h0);
      first = last = 0;
      jj = 1;
    }
    const std::int8_t* srow = model_.table + b_.q[static_cast<std::size_t>(ii - 1)] * kMaxCodes;
    const std::uint8_t* tres = b_.t.data();  // tres[jj - 1]: residue of column jj
    const i32* st = st_.data();
    const i32 sq = sq_[static_cast<std::size_t>(ii)];
    // With r = m - ii rows and c = n - jj columns left, r - c = jj - k0.
    const i32 k0 = static_cast<i32>(n - (b_.m - ii));
    i64 computed = 0;

    // One cell from H(ii-1,jj-1), H(ii-1,jj), F(ii-1,jj) and the carried h (left) and e; the same
    // comparisons as gap_step, h_step and the bound tests of PrunedDp (value + UB < S <=> value < S - UB).
    const auto cell = [&](i64 col, i32 h_diag, i32 h_up, i32 f_up) __attribute__((always_inline)) {
      const i32 e_open = h - OX, e_ext = e - X;
      const i32 f_open = h_up - OX, f_ext = f_up - X;
      std::uint8_t p =
          static_cast<std::uint8_t>((e_open >= e_ext ? kEOpen : 0) | (f_open >= f_ext ? kFOpen : 0));
      i32 ev = std::max(e_open, e_ext), fv = std::max(f_open, f_ext);
      const i32 dj = static_cast<i32>(col) - k0;
      const i32 thr = S - std::min(sq, st[col]) + (dj < 0 ? -dj : dj) * X;  // S - UB without the opening
      ev = ev < thr + (dj > 0 ? O : 0) ? kNeg32 : ev;
      fv = fv < thr + (dj < 0 ? O : 0) ? kNeg32 : fv;
      i32 hv = h_diag + srow[tres[col - 1]];
      std::uint8_t src = kFromD;
      if (ev > hv) {
        hv = ev;
        src = kFromE;
      }
      if (fv > hv) {
        hv = fv;
        src = kFromF;
      }
      hv = hv < thr + (dj != 0 ? O : 0) ? kNeg32 : hv;
      H[col] = hv;
      F[col] = fv;
      P[col] = static_cast<std::uint8_t>(p | src);
      if (std::max({hv, ev, fv}) != kNeg32) {
        if (first < 0) first = col;
        last = col;
      }
      h = hv;
      e = ev;
    };

    // Columns before prev.lo (only when column 0 is live): nothing from the previous row; once H and
    // E are dropped, nothing reaches the columns up to prev.lo - 1 either.
    for (; jj < plo; ++jj) {
      cell(jj, kNeg32, kNeg32, kNeg32);
      ++computed;
      if (h == kNeg32 && e == kNeg32 && jj + 1 < plo) {
        std::fill(H + jj + 1, H + plo, kNeg32);
        std::fill(F + jj + 1, F + plo, kNeg32);
        std::fill(P + jj + 1, P + plo, std::uint8_t{kFromNone});
        jj = plo - 1;
      }
    }
    // Columns plo..phi+1: from the previous row (its columns plo-1 and phi+1 are -inf).
    const i64 mid_end = std::min(phi + 1, n);
    if (jj <= mid_end) {
      const i64 mid_start = jj;  // max(plo, 1)
      const i64 w = mid_end - mid_start + 1;
      // Pass 1 (no dependency along the row): F, D, the thresholds, max(D, F) and the F-side bits.
      // ph[x]: column mid_start - 1 + x of the previous row (mid_start - 1 >= plo - 1 >= prev.base).
      {
        const i32* __restrict ph = prev.h.data() + (mid_start - 1 - prev.base);
        const i32* __restrict pf = prev.f.data() + (mid_start - 1 - prev.base);
        const i32* __restrict stc = st + mid_start;
        const std::int8_t* __restrict sc = profile(b_.q[static_cast<std::size_t>(ii - 1)]) + mid_start;
        i32* __restrict fo = F + mid_start;
        i32* __restrict dmax = dmax_.data();
        i32* __restrict key = key_.data();
        i32* __restrict te = thr_e_.data();
        i32* __restrict th = thr_h_.data();
        std::uint8_t* __restrict po = pf_bits_.data();
        const i32 dj0 = static_cast<i32>(mid_start) - k0;
        const i32 iw = static_cast<i32>(w);
        i32 x = 0;
        // Four columns at a time (GNU vector extensions; comparisons give -1/0 lane masks).
        const v4i lane = {0, 1, 2, 3};
        for (; x + 4 <= iw; x += 4) {
          const v4i f_open = load4(ph + x + 1) - OX, f_ext = load4(pf + x + 1) - X;
          const v4i f_opened = f_open >= f_ext;
          v4i f = f_opened ? f_open : f_ext;
          const v4i dj = dj0 + x + lane;
          const v4i neg = dj<0, pos = dj> 0, nz = dj != 0;
          const v4i djx = dj * X;
          const v4i stv = load4(stc + x);
          const v4i thr = S - (stv < sq ? stv : sq) + (neg ? -djx : djx);
          f = f < thr + (neg & O) ? kNeg32 : f;
          v4b scv;
          std::memcpy(&scv, sc + x, sizeof scv);
          const v4i d = load4(ph + x) + __builtin_convertvector(scv, v4i);
          const v4i from_f = f > d;
          const v4i dm = from_f ? f : d;
          store4(fo + x, f);
          store4(dmax + x, dm);
          store4(key + x, dm + from_f);  // from_f is -1 where F > D
          store4(te + x, thr + (pos & O));
          store4(th + x, thr + (nz & O));
          const v4u bits = __builtin_convertvector((f_opened & i32{kFOpen}) | (from_f & i32{kFromF}), v4u);
          std::memcpy(po + x, &bits, sizeof bits);
        }
        for (; x < iw; ++x) {
          const i32 f_open = ph[x + 1] - OX, f_ext = pf[x + 1] - X;
          i32 f = std::max(f_open, f_ext);
          const i32 dj = dj0 + x;
          const i32 thr = S - std::min(sq, stc[x]) + (dj < 0 ? -dj : dj) * X;
          f = f < thr + (dj < 0 ? O : 0) ? kNeg32 : f;
          const i32 d = ph[x] + sc[x];
          fo[x] = f;
          const i32 dm = std::max(d, f);
          dmax[x] = dm;
          key[x] = dm - (f > d ? 1 : 0);
          te[x] = thr + (dj > 0 ? O : 0);
          th[x] = thr + (dj != 0 ? O : 0);
          po[x] = static_cast<std::uint8_t>((f_open >= f_ext ? kFOpen : 0) | (f > d ? kFromF : kFromD));
        }
      }
      // Pass 2 (serial along the row): E and H before the H bound test. A dropped H may be carried
      // unpruned into the next E: H + UB_H(jj) >= UB_E(jj+1) - O - X + H (the bound at jj+1 is lower by
      // at least O + X), so its opening is dropped too. A dropped E is carried as a value below its
      // threshold (max with te - 1): its extension then stays below the next E threshold (te[x+1] >=
      // te[x] - X) and, where it exceeds max(D, F), H stays below th >= te; live values are exact.
      {
        const i32* __restrict dmax = dmax_.data();
        const i32* __restrict te = thr_e_.data();
        i32* __restrict hu = h_raw_.data();
        i32* __restrict eo = e_raw_.data();
        i32 hv = h, ev = e;
        for (i64 x = 0; x < w; ++x) {
          const i32 te1 = te[x] - 1;
          ev = std::max(std::max(ev - X, te1), hv - OX);
          hv = std::max(ev, dmax[x]);
          eo[x] = ev;
          hu[x] = hv;
        }
      }
      // Pass 3: exact (pruned) H and E, the direction bytes and the live columns (H, E or F live).
      {
        const i32* __restrict te = thr_e_.data();
        const i32* __restrict th = thr_h_.data();
        const i32* __restrict key = key_.data();
        const i32* __restrict hu = h_raw_.data();
        i32* __restrict ee = e_raw_.data();
        i32* __restrict ho = H + mid_start;
        std::uint8_t* __restrict pe = pe_bits_.data();
        for (i64 x = 0; x < w; ++x) {
          const bool e_live = ee[x] >= te[x];
          const i32 ev = e_live ? ee[x] : kNeg32;
          const bool from_e = e_live && ev > key[x];
          ho[x] = hu[x] >= th[x] ? hu[x] : kNeg32;
          ee[x] = ev;
          pe[x] = static_cast<std::uint8_t>(static_cast<int>(from_e) | static_cast<int>(e_live) << 2);
        }
        // E opened at column x iff H(x-1) - O - X >= E(x-1) - X (exact values; column x-1 of the row).
        {
          const i32 e_open = h - OX, e_ext = e - X;
          pe[0] = static_cast<std::uint8_t>(pe[0] | static_cast<int>(e_open >= e_ext) << 1);
        }
        for (i64 x = 1; x < w; ++x) {
          const i32 e_open = ho[x - 1] - OX, e_ext = ee[x - 1] - X;
          pe[x] = static_cast<std::uint8_t>(pe[x] | static_cast<int>(e_open >= e_ext) << 1);
        }
        h = ho[w - 1];
        e = ee[w - 1];
        const std::uint8_t* __restrict pfb = pf_bits_.data();
        std::uint8_t* __restrict po = P + mid_start;
        for (i64 x = 0; x < w; ++x) {
          const int fb = pfb[x], eb = pe[x];
          po[x] = static_cast<std::uint8_t>((fb ^ (-(eb & 1) & ((fb & kSourceMask) + 1))) | (eb & 2) << 1);
        }
        const i32* fo = F + mid_start;
        const auto live = [&](i64 x) { return ho[x] != kNeg32 || fo[x] != kNeg32 || (pe[x] & 4) != 0; };
        i64 lo_x = 0;
        while (lo_x < w && !live(lo_x)) ++lo_x;
        if (lo_x < w) {
          i64 hi_x = w - 1;
          while (!live(hi_x)) --hi_x;
          if (first < 0) first = mid_start + lo_x;
          last = mid_start + hi_x;
        }
      }
      jj = mid_end + 1;
      computed += w;
    }
    // Columns after phi+1: E alone carries on until it and H are dropped.
    if (!(h == kNeg32 && e == kNeg32)) {
      for (; jj <= n; ++jj) {
        cell(jj, kNeg32, kNeg32, kNeg32);
        ++computed;
        if (h == kNeg32 && e == kNeg32) break;
      }
    }
    cells_ += computed;
    if (first < 0) throw_empty(ii);
    cur.lo = first;
    cur.hi = last;
    seal(cur);
    return {P + first, static_cast<std::size_t>(last - first + 1)};
  }

 private:
  void prepare(Row32& r) const {
    const auto w = static_cast<std::size_t>(b_.n + 3);
    if (r.h.size() != w || r.base != -1) {
      r.h.assign(w, kNeg32);
      r.f.assign(w, kNeg32);
      r.base = -1;
    }
  }
  // The scores of query code a against the box's columns (index jj = 1..n; built on first use).
  const std::int8_t* profile(std::uint8_t a) {
    std::vector<std::int8_t>& p = profile_[a];
    if (p.empty()) {
      p.resize(static_cast<std::size_t>(b_.n + 1));
      const std::int8_t* srow = model_.table + a * kMaxCodes;
      for (i64 jj = 1; jj <= b_.n; ++jj) {
        p[static_cast<std::size_t>(jj)] = srow[b_.t[static_cast<std::size_t>(jj - 1)]];
      }
    }
    return p.data();
  }
  static void seal(Row32& r) {
    for (const i64 col : {r.lo - 1, r.hi + 1}) {
      r.h[static_cast<std::size_t>(col - r.base)] = kNeg32;
      r.f[static_cast<std::size_t>(col - r.base)] = kNeg32;
    }
  }
  i64 bound(i64 ii, i64 jj, State st) const {
    const i64 r = b_.m - ii, c = b_.n - jj;
    const i64 diag = std::min<i64>(sq_[static_cast<std::size_t>(ii)], st_[static_cast<std::size_t>(jj)]);
    const bool opens = st == State::kH ? r != c : st == State::kE ? r > c : c > r;
    return diag - (r > c ? r - c : c - r) * b_.extend - (opens ? b_.open : 0);
  }
  [[noreturn]] void throw_empty(i64 ii) const {
    throw_score_mismatch(b_, fmt::format("less (no alignment path through row {} reaches it)", ii));
  }

  const ScanModel& model_;
  const Box& b_;
  std::vector<i32> sq_, st_;
  std::vector<std::uint8_t> scratch_;
  // Per-row scratch of next_row's passes, indexed from its mid_start.
  std::vector<i32> dmax_, key_, thr_e_, thr_h_, h_raw_, e_raw_;
  std::vector<std::uint8_t> pf_bits_, pe_bits_;
  std::vector<std::vector<std::int8_t>> profile_;  // profile_[a][jj]: score of code a vs column jj
  i64 cells_ = 0;
};

template <class R>
struct Checkpoint {
  i64 row = 0;  // the block starts at row + 1; state holds this row
  R state;
};

}  // namespace

Alignment trace_alignment_full(const ScanModel& model, std::span<const std::uint8_t> query,
                               std::span<const std::uint8_t> target, const Candidate& candidate) {
  const Box b = make_box(model, query, target, candidate);
  const auto n = static_cast<std::size_t>(b.n);
  std::vector<std::uint8_t> dir(static_cast<std::size_t>(b.m) * n);
  std::vector<i64> h_prev(n + 1), h_cur(n + 1), f_col(n + 1, kNegInf);
  h_prev[0] = 0;
  for (std::size_t jj = 1; jj <= n; ++jj) h_prev[jj] = -(b.open + static_cast<i64>(jj) * b.extend);
  for (i64 ii = 1; ii <= b.m; ++ii) {
    h_cur[0] = -(b.open + ii * b.extend);
    i64 e = kNegInf;
    const std::int8_t* srow = model.table + b.q[static_cast<std::size_t>(ii - 1)] * kMaxCodes;
    std::uint8_t* drow = dir.data() + static_cast<std::size_t>(ii - 1) * n;
    for (std::size_t jj = 1; jj <= n; ++jj) {
      i64 f;
      std::uint8_t p = gap_step(h_cur[jj - 1], e, h_prev[jj], f_col[jj], f, b.open, b.extend);
      f_col[jj] = f;
      p |= h_step(h_prev[jj - 1] + srow[b.t[jj - 1]], e, f, h_cur[jj]);
      drow[jj - 1] = p;
    }
    std::swap(h_prev, h_cur);
  }
  if (h_prev[n] != b.score) throw_score_mismatch(b, std::to_string(h_prev[n]));

  std::string ops;
  TraceState s{b.m, b.n, State::kH};
  follow(
      b,
      [&](i64 ii, i64 jj) {
        return dir[static_cast<std::size_t>(ii - 1) * n + static_cast<std::size_t>(jj - 1)];
      },
      1, s, ops);
  return finish(model, b, s, ops, b.m * b.n);
}

namespace {

// The pruned forward pass and the (checkpointed) traceback with either DP.
template <class Dp>
Alignment trace_pruned(const ScanModel& model, const Box& b, const TracebackLimits& limits) {
  using RowT = typename Dp::RowType;
  Dp dp(model, b);
  const std::uint64_t limit = limits.max_matrix_bytes;
  const std::uint64_t block_budget = std::max<std::uint64_t>(limit / 2, 1);

  // Forward pass. Blocks close after block_budget pointer bytes; a checkpoint holds the row before each
  // block. Pointers of all rows are kept while they fit in the limit (direct), else those of the
  // current block only.
  RowT prev, cur;
  dp.first_row(prev);
  std::vector<Checkpoint<RowT>> checkpoints;
  checkpoints.push_back({0, prev.trimmed()});
  PointerStore store;
  store.reset(1);
  bool direct = true;
  std::uint64_t block_bytes = 0;
  for (i64 ii = 1; ii <= b.m; ++ii) {
    if (block_bytes >= block_budget) {
      checkpoints.push_back({ii - 1, prev.trimmed()});
      block_bytes = 0;
      if (!direct) store.reset(ii);
    }
    const std::span<const std::uint8_t> ptr = dp.next_row(ii, prev, cur);
    const std::uint64_t row_bytes = ptr.size() + PointerStore::kRowOverhead;
    if (direct && store.memory() + row_bytes > limit) {
      direct = false;
      store.drop_before(checkpoints.back().row + 1);
    }
    store.append(cur.lo, ptr);
    block_bytes += row_bytes;
    std::swap(prev, cur);
  }
  if (prev.hi != b.n) throw_score_mismatch(b, "less");
  if (prev.H(b.n) != b.score) throw_score_mismatch(b, std::to_string(prev.H(b.n)));

  // Traceback, block by block from the last (whose pointers the store still holds).
  std::string ops;
  TraceState s{b.m, b.n, State::kH};
  const auto at = [&](i64 ii, i64 jj) { return store.at(ii, jj); };
  if (direct) {
    follow(b, at, 1, s, ops);
  } else {
    for (std::size_t k = checkpoints.size(); k-- > 0 && s.ii > 0 && s.jj > 0;) {
      const i64 first = checkpoints[k].row + 1;
      if (store.first_row() != first) {
        // Recompute the block's pointers from its checkpoint (rows first .. s.ii).
        store.reset(first);
        const RowT* from = &checkpoints[k].state;
        for (i64 ii = first; ii <= s.ii; ++ii) {
          const std::span<const std::uint8_t> ptr = dp.next_row(ii, *from, cur);
          store.append(cur.lo, ptr);
          std::swap(prev, cur);
          from = &prev;
        }
      }
      follow(b, at, first, s, ops);
    }
  }
  return finish(model, b, s, ops, dp.cells());
}

}  // namespace

Alignment trace_alignment(const ScanModel& model, std::span<const std::uint8_t> query,
                          std::span<const std::uint8_t> target, const Candidate& candidate,
                          const TracebackLimits& limits) {
  const Box b = make_box(model, query, target, candidate);
  return fits_32(b) ? trace_pruned<PrunedDp32>(model, b, limits) : trace_pruned<PrunedDp>(model, b, limits);
}

}  // namespace warpsearch::scan
