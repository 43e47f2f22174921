// gapped.cpp: BLAST+ 2.12 blastp gapped extension (see gapped.hpp): seed choice, the span / ScoringMatrix
// drivers of the score-only X-drop half extension (and its restricted variant), the traceback half
// extension (ALIGN_EX: xdrop.hpp's DP with a recording trace policy, then the walk back) and the two-sided
// drivers of the preliminary and traceback stages. The DP itself lives in xdrop.hpp (shared with the GPU).
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
#include <numbers>

#include "blast/xdrop.hpp"
#include "stats/karlin.hpp"

namespace warpsearch::blast {
namespace {

using xdrop::kExtendGapInA;
using xdrop::kExtendGapInB;
using xdrop::kOpGapInA;
using xdrop::kOpGapInB;
using xdrop::kOpMask;
using xdrop::kOpSub;
using xdrop::kWindow;

// The DP column of xdrop.hpp's half extensions on the CPU: a per-thread buffer of at least n cells. Every
// cell is written (row 0, or when the band grows past it) before it is read, so old contents do not
// matter. The drivers below ask for N + 2 cells for a half over N subject residues, more than the DP
// ever indexes (0 .. N), so their extensions never fail for lack of room.
XdropCell* column_buffer(std::size_t n) {
  static thread_local std::vector<XdropCell> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// Per-row traceback storage (xdrop.hpp's recording trace policy): row a holds codes for columns
// [first[a], first[a] + width).
struct TraceRows {
  static constexpr bool kEnabled = true;
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

void add_op(std::vector<EditRun>& runs, EditOp op) {
  if (!runs.empty() && runs.back().op == op)
    ++runs.back().length;
  else
    runs.push_back({op, 1});
}

// Calls f(A, B) with a and b as xdrop.hpp strands in consumption order: forward, or read backwards in
// place for a reverse half.
template <class F>
auto with_strands(Residues a, Residues b, bool reverse, F&& f) {
  const int m = static_cast<int>(a.size());
  const int n = static_cast<int>(b.size());
  if (reverse) return f(xdrop::ReverseStrand{a.data() + m, m}, xdrop::ReverseStrand{b.data() + n, n});
  return f(xdrop::ForwardStrand{a.data(), m}, xdrop::ForwardStrand{b.data(), n});
}

// ALIGN_EX for one direction with traceback (traceback_extend for either score table: int8 or int
// entries, 32 x 32).
template <class Score>
HalfTraceback traceback_half(Residues a, Residues b, bool reverse, const Score* table,
                             const GappedParams& params) {
  TraceRows trace;
  HalfTraceback out;
  const std::size_t capacity = b.size() + 2;  // > the largest column index N: never fails
  XdropCell* const col = column_buffer(capacity);
  with_strands(a, b, reverse, [&](auto A, auto B) {
    return xdrop::extend_half(A, B, table, params.gap_open, params.gap_extend, params.x_dropoff, col,
                              static_cast<int>(capacity), &trace, &out.end);
  });
  if (a.empty() || b.empty()) return out;
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
template <class Score>
GappedAlignment traceback_alignment(Residues query, Residues subject, const Score* table,
                                    const GappedParams& params, SeedPoint seed, xdrop::SubjectRange range) {
  const int q_len = static_cast<int>(query.size());
  const int left_n = range.left + 1;
  const int right_n = range.right - 1;
  GappedAlignment out;
  const HalfTraceback left = traceback_half(
      query.first(static_cast<std::size_t>(seed.q) + 1),
      subject.subspan(static_cast<std::size_t>(seed.s + 1 - left_n), static_cast<std::size_t>(left_n)), true,
      table, params);
  out.q_start = seed.q + 1 - left.end.a_length;
  out.s_start = seed.s + 1 - left.end.b_length;
  int score_left = left.end.score;
  int score_right = 0;
  HalfTraceback right;
  if (seed.q + 1 < q_len && right_n > 0) {
    right = traceback_half(
        query.subspan(static_cast<std::size_t>(seed.q) + 1),
        subject.subspan(static_cast<std::size_t>(seed.s) + 1, static_cast<std::size_t>(right_n)), false,
        table, params);
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
  return gapped_start_raw(query.data(), subject.data(), matrix.row(0), q_start, s_start, length);
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
  const std::size_t capacity = b.size() + 2;  // > the largest column index N: never fails
  XdropCell* const col = column_buffer(capacity);
  HalfExtension out;
  with_strands(a, b, reverse, [&](auto A, auto B) {
    if (restricted)
      return xdrop::extend_half_restricted(A, B, matrix.row(0), params.gap_open, params.gap_extend,
                                           params.x_dropoff, col, static_cast<int>(capacity), &out);
    return xdrop::extend_half<xdrop::NoTrace>(A, B, matrix.row(0), params.gap_open, params.gap_extend,
                                              params.x_dropoff, col, static_cast<int>(capacity), nullptr,
                                              &out);
  });
  return out;
}

GappedScore preliminary_gapped_alignment(Residues query, Residues subject, const ScoringMatrix& matrix,
                                         const GappedParams& params, SeedPoint seed, bool restricted) {
  const int q_len = static_cast<int>(query.size());
  const int s_len = static_cast<int>(subject.size());
  // The column must exceed both halves' subject residue counts (their largest column index).
  const xdrop::SubjectRange range = xdrop::adjust_subject_range(seed.s + 1, s_len, seed.q + 1, q_len);
  const std::size_t capacity = static_cast<std::size_t>(std::max(range.left, range.right)) + 2;
  XdropCell* const col = column_buffer(capacity);
  GappedScore out;
  preliminary_gapped_alignment_raw(query.data(), q_len, subject.data(), s_len, matrix.row(0), params.gap_open,
                                   params.gap_extend, params.x_dropoff, seed, restricted, col,
                                   static_cast<int>(capacity), &out);
  return out;
}

HalfTraceback traceback_extend(Residues a, Residues b, bool reverse, const ScoringMatrix& matrix,
                               const GappedParams& params) {
  return traceback_half(a, b, reverse, matrix.row(0), params);
}

GappedAlignment gapped_alignment_with_traceback(Residues query, Residues subject, const ScoringMatrix& matrix,
                                                const GappedParams& params, SeedPoint seed) {
  // The traceback stage calls AdjustSubjectRange with the seed offsets themselves (not offset + 1).
  const xdrop::SubjectRange range = xdrop::adjust_subject_range(seed.s, static_cast<int>(subject.size()),
                                                                seed.q, static_cast<int>(query.size()));
  return traceback_alignment(query, subject, matrix.row(0), params, seed, range);
}

GappedAlignment gapped_alignment_with_traceback(Residues query, Residues subject, const IntScoreTable& table,
                                                const GappedParams& params, SeedPoint seed) {
  const int s_len = static_cast<int>(subject.size());
  return traceback_alignment(query, subject, table.data(), params, seed,
                             xdrop::SubjectRange{seed.s, s_len - seed.s});
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
