// gapped.cpp: BLAST+ 2.12 blastp gapped extension (see gapped.hpp): seed choice, the score-only X-drop
// half extension with BLAST's dynamic band (and its restricted variant), the traceback half extension
// (ALIGN_EX) and the two-sided drivers of the preliminary and traceback stages.
//
// The band bookkeeping follows BLAST's semantics cell for cell, quirks included, because they decide
// which cells exist and hence the exact result:
//   * a row starts with no diagonal predecessor at its first column (the previous row's column before it
//     is outside the band);
//   * a cell failing the X-drop test keeps its previous-row gap value (it is below the limit anyway) and
//     writes -inf as its score, except when it is the row's first cell, where the band start moves right;
//   * the band end is cut to the last surviving cell plus one -inf cell, or grown along the row gap.
#include "blast/gapped.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numbers>

#include "stats/karlin.hpp"

namespace warpsearch::blast {
namespace {

constexpr int kMinInt = std::numeric_limits<std::int32_t>::min() / 2;  // BLAST's MININT
constexpr int kWindow = 11;                                            // HSP_MAX_WINDOW
constexpr int kRestrictSize = 10;                                      // RESTRICT_SIZE
constexpr int kMaxSubjectOffset = 90000;                               // MAX_SUBJECT_OFFSET
constexpr int kMaxTotalGaps = 3000;                                    // MAX_TOTAL_GAPS

// Traceback cell codes: the op that produced H in the low bits, plus flags telling that the vertical
// (gap in B) or horizontal (gap in A) gap value leaving this cell extends the gap entering it.
constexpr std::uint8_t kOpSub = 0;
constexpr std::uint8_t kOpGapInB = 1;  // consumes a residue of A only (query insertion)
constexpr std::uint8_t kOpGapInA = 2;  // consumes a residue of B only (query deletion)
constexpr std::uint8_t kOpMask = 3;
constexpr std::uint8_t kExtendGapInB = 4;
constexpr std::uint8_t kExtendGapInA = 8;

struct Cell {
  int best;      // H of the cell in the latest row that computed it
  int best_gap;  // the vertical gap value offered to the next row
};

// Residue access for one direction: index 1..size gives the residues in consumption order. A reverse half
// is copied reversed into a per-thread buffer (make_strand), so the DP reads forward without a branch.
struct Strand {
  const std::uint8_t* seq;
  int n;
  int size() const { return n; }
  std::uint8_t at(int i) const { return seq[i - 1]; }
};

Strand make_strand(Residues s, bool reverse, std::vector<std::uint8_t>& buffer) {
  if (!reverse) return {s.data(), static_cast<int>(s.size())};
  buffer.assign(s.rbegin(), s.rend());
  return {buffer.data(), static_cast<int>(buffer.size())};
}

// The DP column of extend / extend_restricted: a per-thread buffer of at least n cells. Every cell is
// written (row 0, or when the band grows past it) before it is read, so old contents do not matter.
Cell* column_buffer(std::size_t n) {
  static thread_local std::vector<Cell> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// Per-row traceback storage: row a holds codes for columns [first[a], first[a] + width).
struct TraceRows {
  std::vector<std::uint8_t> codes;
  std::vector<std::size_t> base;
  std::vector<int> first;
  void start_row(int first_col) {
    base.push_back(codes.size());
    first.push_back(first_col);
  }
  // Makes room for the current row up to column end_col (exclusive).
  void reserve_to(int end_col) {
    const std::size_t need = base.back() + static_cast<std::size_t>(end_col - first.back());
    if (codes.size() < need) codes.resize(need, 0);
  }
  std::uint8_t& at_current(int col) {
    return codes[base.back() + static_cast<std::size_t>(col - first.back())];
  }
  std::uint8_t at(int row, int col) const {
    return codes[base[static_cast<std::size_t>(row)] +
                 static_cast<std::size_t>(col - first[static_cast<std::size_t>(row)])];
  }
};

// Score rows of the two score tables the DP runs on: row(a)[b] scores codes a and b. The 8-bit
// ScoringMatrix (every stage but the composition redo) and the 32-bit IntScoreTable (the composition-
// adjusted matrix at scale 32); the DP is a template over the table, so each gets its own loop.
const std::int8_t* score_row(const ScoringMatrix& matrix, std::uint8_t a) { return matrix.row(a); }
const int* score_row(const IntScoreTable& table, std::uint8_t a) {
  return table.data() + static_cast<std::size_t>(a) * kMaxCodes;
}

// Blast_SemiGappedAlign (kTrace false) / ALIGN_EX (kTrace true) for one direction. Scores: ScoringMatrix
// or IntScoreTable (score_row).
template <bool kTrace, class Scores>
HalfExtension extend(const Strand& A, const Strand& B, const Scores& matrix, const GappedParams& params,
                     TraceRows* trace) {
  HalfExtension result;
  const int M = A.size();
  const int N = B.size();
  const int e = params.gap_extend;
  const int oe = params.gap_open + params.gap_extend;
  const int x = std::max(params.x_dropoff, oe);
  if (M <= 0 || N <= 0) return result;

  Cell* const col = column_buffer(static_cast<std::size_t>(N) + 2);
  // Row 0: the leading gap in A, as far as it stays within X.
  if constexpr (kTrace) trace->start_row(0);
  col[0] = {0, -oe};
  int score = -oe;
  int b_size = 1;
  for (; b_size <= N; ++b_size) {
    if (score < -x) break;
    col[static_cast<std::size_t>(b_size)] = {score, score - oe};
    score -= e;
  }
  if constexpr (kTrace) {
    trace->reserve_to(b_size);
    for (int b = 1; b < b_size; ++b) trace->at_current(b) = kOpGapInA;
  }

  int best = 0;
  int first = 0;
  for (int a = 1; a <= M; ++a) {
    const auto* const mrow = score_row(matrix, A.at(a));
    if constexpr (kTrace) {
      trace->start_row(first);
      trace->reserve_to(b_size);
    }
    score = kMinInt;  // no diagonal predecessor for the row's first cell
    int gap_row = kMinInt;
    int last = first;
    for (int b = first; b < b_size; ++b) {
      Cell& c = col[static_cast<std::size_t>(b)];
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
      if constexpr (kTrace) trace->at_current(b) = code;
    }
    if (first == b_size) break;
    if (last < b_size - 1) {
      b_size = last + 1;
    } else {
      while (gap_row >= best - x && b_size <= N) {
        col[static_cast<std::size_t>(b_size)] = {gap_row, gap_row - oe};
        gap_row -= e;
        if constexpr (kTrace) {
          trace->reserve_to(b_size + 1);
          trace->at_current(b_size) = kOpGapInA;
        }
        ++b_size;
      }
    }
    if (b_size <= N) {
      col[static_cast<std::size_t>(b_size)] = {kMinInt, kMinInt};
      ++b_size;
    }
  }
  result.score = best;
  return result;
}

// s_RestrictedGappedAlign: as extend<false>, but a gap in A may open only in rows a % 10 == 0 and a gap
// in B only in columns b that are multiples of 10 counted from 0 (the first such column at or after the
// band start in each row). Cells outside those rows / columns use the two-term recurrences. As in BLAST,
// after a row that cannot open gaps in A the band grows along the diagonal value of the next column.
HalfExtension extend_restricted(const Strand& A, const Strand& B, const ScoringMatrix& matrix,
                                const GappedParams& params) {
  HalfExtension result;
  const int M = A.size();
  const int N = B.size();
  const int e = params.gap_extend;
  const int oe = params.gap_open + params.gap_extend;
  const int x = std::max(params.x_dropoff, oe);
  if (M <= 0 || N <= 0) return result;

  Cell* const col = column_buffer(static_cast<std::size_t>(N) + 2);
  col[0] = {0, -oe};
  int score = -oe;
  int b_size = 1;
  for (; b_size <= N; ++b_size) {
    if (score < -x) break;
    col[static_cast<std::size_t>(b_size)] = {score, score - oe};
    score -= e;
  }

  int best = 0;
  int first = 0;
  int b_gap = 0;
  // Shared tail of every cell: the X-drop test and the bookkeeping of a surviving cell.
  auto survives = [&](Cell& c, int b, int a, int cell_score) {
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
    const std::int8_t* mrow = matrix.row(A.at(a));
    score = kMinInt;
    int gap_row = kMinInt;
    int last = first;
    const bool row_may_open = a % kRestrictSize == 0;
    for (int b = first; b < b_size; ++b) {
      Cell& c = col[static_cast<std::size_t>(b)];
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
          c.best_gap = std::max(score - oe, gap_col);
        }
        if (row_may_open) {
          gap_row -= e;
          gap_row = std::max(score - oe, gap_row);
        }
        c.best = score;
      }
      score = next;
    }
    if (!row_may_open) gap_row = score;  // BLAST's quirk: the next column's diagonal value
    if (first == b_size) break;
    b_gap = first;
    if (first % kRestrictSize > 0) b_gap += kRestrictSize - first % kRestrictSize;
    if (last < b_size - 1) {
      b_size = last + 1;
    } else {
      while (gap_row >= best - x && b_size <= N) {
        col[static_cast<std::size_t>(b_size)] = {gap_row, gap_row - oe};
        gap_row -= e;
        ++b_size;
      }
    }
    if (b_size <= N) {
      col[static_cast<std::size_t>(b_size)] = {kMinInt, kMinInt};
      ++b_size;
    }
  }
  result.score = best;
  return result;
}

void add_op(std::vector<EditRun>& runs, EditOp op) {
  if (!runs.empty() && runs.back().op == op)
    ++runs.back().length;
  else
    runs.push_back({op, 1});
}

// Extension lengths for a long subject (AdjustSubjectRange): for subjects of >= 90000 residues BLAST
// limits the subject range to the query's remaining length plus 3000 on each side. `s_left` and `q_left`
// are the subject and query offsets BLAST passes (seed + 1 in the preliminary stage, the seed itself in
// the traceback stage); the result gives the subject residues each half may use.
struct SubjectRange {
  int left;   // residues available to the reverse half
  int right;  // residues available to the forward half
};
SubjectRange adjust_subject_range(int s_left, int subject_length, int q_left, int query_length) {
  if (subject_length < kMaxSubjectOffset) return {s_left, subject_length - s_left};
  const int max_left = q_left + kMaxTotalGaps;
  const int max_right = query_length - q_left + kMaxTotalGaps;
  const int shift = s_left <= max_left ? 0 : s_left - max_left;
  const int left = s_left - shift;
  const int length = std::min(subject_length, s_left + max_right) - shift;
  return {left, length - left};
}

// ALIGN_EX for one direction with traceback (traceback_extend for either score table).
template <class Scores>
HalfTraceback traceback_half(Residues a, Residues b, bool reverse, const Scores& matrix,
                             const GappedParams& params) {
  static thread_local std::vector<std::uint8_t> a_buffer, b_buffer;
  const Strand A = make_strand(a, reverse, a_buffer);
  const Strand B = make_strand(b, reverse, b_buffer);
  TraceRows trace;
  HalfTraceback out;
  out.end = extend<true>(A, B, matrix, params, &trace);
  if (A.size() <= 0 || B.size() <= 0) return out;
  // Walk back from the best cell to (0, 0). `state` is the op that entered the current cell; a gap state
  // continues while the cell's extension flag says the gap value leaving it extends the gap entering it.
  int row = out.end.a_length;
  int colm = out.end.b_length;
  std::uint8_t state = kOpSub;
  std::vector<EditRun> walked;  // from the best cell towards the origin
  while (row > 0 || colm > 0) {
    const std::uint8_t code = trace.at(row, colm);
    if (state == kOpGapInA)
      state = (code & kExtendGapInA) ? kOpGapInA : static_cast<std::uint8_t>(code & kOpMask);
    else if (state == kOpGapInB)
      state = (code & kExtendGapInB) ? kOpGapInB : static_cast<std::uint8_t>(code & kOpMask);
    else
      state = code & kOpMask;
    if (state == kOpGapInA) {
      --colm;
      add_op(walked, EditOp::kDeletion);
    } else if (state == kOpGapInB) {
      --row;
      add_op(walked, EditOp::kInsertion);
    } else {
      --row;
      --colm;
      add_op(walked, EditOp::kSubstitution);
    }
  }
  // The walk runs from the far end towards the seed: left to right for a reverse half, reversed otherwise.
  if (!reverse) std::reverse(walked.begin(), walked.end());
  out.ops = std::move(walked);
  return out;
}

// BLAST_GappedAlignmentWithTraceback from a seed for either score table: the reverse half uses the
// `range.left` subject residues before the seed pair, the forward half the `range.right - 1` after it.
template <class Scores>
GappedAlignment traceback_alignment(Residues query, Residues subject, const Scores& matrix,
                                    const GappedParams& params, SeedPoint seed, SubjectRange range) {
  const int q_len = static_cast<int>(query.size());
  const int left_n = range.left + 1;
  const int right_n = range.right - 1;
  GappedAlignment out;
  const HalfTraceback left = traceback_half(
      query.first(static_cast<std::size_t>(seed.q) + 1),
      subject.subspan(static_cast<std::size_t>(seed.s + 1 - left_n), static_cast<std::size_t>(left_n)), true,
      matrix, params);
  out.q_start = seed.q + 1 - left.end.a_length;
  out.s_start = seed.s + 1 - left.end.b_length;
  int score_left = left.end.score;
  int score_right = 0;
  HalfTraceback right;
  if (seed.q + 1 < q_len && right_n > 0) {
    right = traceback_half(
        query.subspan(static_cast<std::size_t>(seed.q) + 1),
        subject.subspan(static_cast<std::size_t>(seed.s) + 1, static_cast<std::size_t>(right_n)), false,
        matrix, params);
    score_right = right.end.score;
  }
  out.q_end = seed.q + 1 + right.end.a_length;
  out.s_end = seed.s + 1 + right.end.b_length;

  out.script = left.ops;
  for (const EditRun& run : right.ops) {
    if (!out.script.empty() && out.script.back().op == run.op)
      out.script.back().length += run.length;
    else
      out.script.push_back(run);
  }
  // Prune leading and trailing gaps (possible only in corner cases), adding their cost back.
  auto gap_cost = [&](const EditRun& r) { return params.gap_open + r.length * params.gap_extend; };
  std::size_t lead = 0;
  while (lead < out.script.size() && out.script[lead].op != EditOp::kSubstitution) {
    const EditRun& r = out.script[lead];
    score_left += gap_cost(r);
    (r.op == EditOp::kDeletion ? out.s_start : out.q_start) += r.length;
    ++lead;
  }
  out.script.erase(out.script.begin(), out.script.begin() + static_cast<std::ptrdiff_t>(lead));
  while (!out.script.empty() && out.script.back().op != EditOp::kSubstitution) {
    const EditRun& r = out.script.back();
    score_right += gap_cost(r);
    (r.op == EditOp::kDeletion ? out.s_end : out.q_end) -= r.length;
    out.script.pop_back();
  }
  out.score = score_left + score_right;
  return out;
}

}  // namespace

int xdrop_bits_to_raw(double bits, double lambda) {
  return static_cast<int>(bits * std::numbers::ln2 / lambda);
}

std::optional<XDropoffs> blastp_xdropoffs(const ScoringMatrix& matrix, GapCosts gaps, double preliminary_bits,
                                          double final_bits) {
  const std::optional<stats::KarlinParams> kp = stats::gapped_params(matrix, gaps);
  if (!kp) return std::nullopt;
  XDropoffs x;
  x.preliminary = xdrop_bits_to_raw(preliminary_bits, kp->lambda);
  // BLAST takes the max in floating point before truncating; truncation is monotone, so this is equal.
  x.traceback = std::max(xdrop_bits_to_raw(final_bits, kp->lambda), x.preliminary);
  return x;
}

SeedPoint gapped_start(Residues query, Residues subject, const ScoringMatrix& matrix, int q_start,
                       int s_start, int length) {
  if (length <= kWindow) return {q_start + length / 2, s_start + length / 2};
  auto pair = [&](int i) {
    return matrix.score(query[static_cast<std::size_t>(q_start + i)],
                        subject[static_cast<std::size_t>(s_start + i)]);
  };
  int score = 0;
  for (int i = 0; i < kWindow; ++i) score += pair(i);
  int best = score;
  int best_end = kWindow - 1;  // last pair of the best window, relative to the HSP start
  for (int i = kWindow; i < length; ++i) {
    score += pair(i) - pair(i - kWindow);
    if (score > best) {
      best = score;
      best_end = i;
    }
  }
  const int offset = best > 0 ? best_end - kWindow / 2 : 0;
  return {q_start + offset, s_start + offset};
}

std::optional<SeedPoint> traceback_offsets(Residues query, Residues subject, const ScoringMatrix& matrix,
                                           int q_start, int q_end, int s_start, int s_end) {
  const int q_length = q_end - q_start;
  const int s_length = s_end - s_start;
  if (q_length <= kWindow) return SeedPoint{q_start + q_length / 2, s_start + q_length / 2};
  auto pair = [&](int qi, int si) {
    return matrix.score(query[static_cast<std::size_t>(qi)], subject[static_cast<std::size_t>(si)]);
  };
  int score = 0;
  for (int i = 0; i < kWindow; ++i) score += pair(q_start + i, s_start + i);
  int best = score;
  int best_end = kWindow - 1;
  const int span = std::min(q_length, s_length);
  for (int i = kWindow; i < span; ++i) {
    score += pair(q_start + i, s_start + i) - pair(q_start + i - kWindow, s_start + i - kWindow);
    if (score > best) {
      best = score;
      best_end = i;
    }
  }
  if (best > 0) return SeedPoint{q_start + best_end, s_start + best_end};
  score = 0;
  for (int i = 0; i < kWindow; ++i) score += pair(q_end - kWindow + i, s_end - kWindow + i);
  if (score > 0) return SeedPoint{q_end - kWindow / 2, s_end - kWindow / 2};
  return std::nullopt;
}

HalfExtension semi_gapped_extend(Residues a, Residues b, bool reverse, const ScoringMatrix& matrix,
                                 const GappedParams& params, bool restricted) {
  static thread_local std::vector<std::uint8_t> a_buffer, b_buffer;
  const Strand A = make_strand(a, reverse, a_buffer);
  const Strand B = make_strand(b, reverse, b_buffer);
  if (restricted) return extend_restricted(A, B, matrix, params);
  return extend<false>(A, B, matrix, params, nullptr);
}

GappedScore preliminary_gapped_alignment(Residues query, Residues subject, const ScoringMatrix& matrix,
                                         const GappedParams& params, SeedPoint seed, bool restricted) {
  const int q_len = static_cast<int>(query.size());
  const int s_len = static_cast<int>(subject.size());
  const SubjectRange range = adjust_subject_range(seed.s + 1, s_len, seed.q + 1, q_len);
  GappedScore out;
  // Reverse half: query[0, seed.q] and the `range.left` subject residues ending at seed.s.
  const HalfExtension left =
      semi_gapped_extend(query.first(static_cast<std::size_t>(seed.q) + 1),
                         subject.subspan(static_cast<std::size_t>(seed.s + 1 - range.left),
                                         static_cast<std::size_t>(range.left)),
                         true, matrix, params, restricted);
  out.q_start = seed.q + 1 - left.a_length;
  out.s_start = seed.s + 1 - left.b_length;
  // Forward half: what follows the seed pair.
  HalfExtension right;
  if (seed.q + 1 < q_len && range.right > 0) {
    right = semi_gapped_extend(
        query.subspan(static_cast<std::size_t>(seed.q) + 1),
        subject.subspan(static_cast<std::size_t>(seed.s) + 1, static_cast<std::size_t>(range.right)), false,
        matrix, params, restricted);
  }
  out.q_end = seed.q + 1 + right.a_length;
  out.s_end = seed.s + 1 + right.b_length;
  out.score = left.score + right.score;
  return out;
}

HalfTraceback traceback_extend(Residues a, Residues b, bool reverse, const ScoringMatrix& matrix,
                               const GappedParams& params) {
  return traceback_half(a, b, reverse, matrix, params);
}

GappedAlignment gapped_alignment_with_traceback(Residues query, Residues subject, const ScoringMatrix& matrix,
                                                const GappedParams& params, SeedPoint seed) {
  // The traceback stage calls AdjustSubjectRange with the seed offsets themselves (not offset + 1).
  const SubjectRange range =
      adjust_subject_range(seed.s, static_cast<int>(subject.size()), seed.q, static_cast<int>(query.size()));
  return traceback_alignment(query, subject, matrix, params, seed, range);
}

GappedAlignment gapped_alignment_with_traceback(Residues query, Residues subject, const IntScoreTable& table,
                                                const GappedParams& params, SeedPoint seed) {
  const int s_len = static_cast<int>(subject.size());
  return traceback_alignment(query, subject, table, params, seed, SubjectRange{seed.s, s_len - seed.s});
}

std::string btop(const GappedAlignment& alignment, Residues query, Residues subject) {
  const Alphabet alpha = Alphabet::protein();
  std::string out;
  int identities = 0;
  auto flush = [&] {
    if (identities > 0) out += std::to_string(identities);
    identities = 0;
  };
  std::size_t qi = static_cast<std::size_t>(alignment.q_start);
  std::size_t si = static_cast<std::size_t>(alignment.s_start);
  for (const EditRun& run : alignment.script) {
    for (int k = 0; k < run.length; ++k) {
      if (run.op == EditOp::kSubstitution) {
        if (query[qi] == subject[si]) {
          ++identities;
        } else {
          flush();
          out += alpha.symbol(query[qi]);
          out += alpha.symbol(subject[si]);
        }
        ++qi;
        ++si;
      } else if (run.op == EditOp::kInsertion) {
        flush();
        out += alpha.symbol(query[qi++]);
        out += '-';
      } else {
        flush();
        out += '-';
        out += alpha.symbol(subject[si++]);
      }
    }
  }
  flush();
  return out;
}

int script_score(Residues query, Residues subject, const ScoringMatrix& matrix, const GappedParams& params,
                 int q_start, int s_start, std::span<const EditRun> script) {
  int score = 0;
  std::size_t qi = static_cast<std::size_t>(q_start);
  std::size_t si = static_cast<std::size_t>(s_start);
  for (const EditRun& run : script) {
    if (run.op == EditOp::kSubstitution) {
      for (int k = 0; k < run.length; ++k) score += matrix.score(query[qi++], subject[si++]);
    } else {
      score -= params.gap_open + run.length * params.gap_extend;
      (run.op == EditOp::kInsertion ? qi : si) += static_cast<std::size_t>(run.length);
    }
  }
  return score;
}

}  // namespace warpsearch::blast
