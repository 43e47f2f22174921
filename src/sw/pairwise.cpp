// pairwise.cpp: tier-independent steps around the passes: reverse-pass inputs, turning end points into
// coordinates, and the traceback that produces the CIGAR of a reported alignment.
//
// Traceback invariant: the region [query_begin, query_end) x [target_begin, target_end) found by the
// two passes contains an optimal alignment that starts and ends at the region's corners (local,
// global) or that covers the whole query (semiglobal). A DP over the region with global boundaries
// (semiglobal: free leading target residues) therefore reaches exactly the reported score; the
// traceback re-scores its CIGAR and throws Error(kInternal) if it does not (never silently wrong).
#include "sw/pairwise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

#include "sw/simd/trace_fill.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::sw {

bool all_insertions(const PassModel& model, const EndPoint& fwd, std::size_t query_length) {
  return model.mode == Mode::kSemiGlobal &&
         fwd.score == -(model.open + static_cast<std::int64_t>(query_length) * model.extend);
}

bool needs_reverse(const PassModel& model, const EndPoint& fwd, std::size_t query_length) {
  return model.mode != Mode::kGlobal && fwd.qend >= 0 && !all_insertions(model, fwd, query_length);
}

ReverseExtent reverse_extent(Mode mode, const EndPoint& fwd, std::size_t query_length) {
  ReverseExtent e;
  e.qlen = mode == Mode::kSemiGlobal ? static_cast<std::uint32_t>(query_length)
                                     : static_cast<std::uint32_t>(fwd.qend + 1);
  e.tlen = static_cast<std::uint32_t>(fwd.tend + 1);
  return e;
}

void reverse_prefix(std::span<const std::uint8_t> seq, std::uint32_t len, std::vector<std::uint8_t>& out) {
  out.assign(seq.begin(), seq.begin() + len);
  std::reverse(out.begin(), out.end());
}

align::Result make_result(const PassModel& model, const EndPoint& fwd, const EndPoint& rev,
                          std::size_t query_length, std::size_t target_length) {
  align::Result r;
  r.score = fwd.score;
  const Mode mode = model.mode;
  switch (mode) {
    case Mode::kGlobal:
      r.query_end = static_cast<std::uint32_t>(query_length);
      r.target_end = static_cast<std::uint32_t>(target_length);
      return r;
    case Mode::kLocal:
      if (fwd.qend < 0) return r;  // score 0: the empty alignment
      break;
    case Mode::kSemiGlobal:
      if (all_insertions(model, fwd, query_length)) {
        r.query_end = static_cast<std::uint32_t>(query_length);
        return r;
      }
      break;
  }
  // The reverse pass over the reversed prefixes must find the same score (model.hpp); its end cell is
  // the start, counted back from the forward end.
  if (rev.score != fwd.score || rev.qend < 0 || rev.qend > fwd.qend || rev.tend > fwd.tend ||
      (mode == Mode::kSemiGlobal && rev.qend != fwd.qend)) {
    throw Error(
        ErrorKind::kInternal,
        fmt::format("reverse pass disagrees with the forward pass (forward score {} end {},{}; reverse "
                    "score {} end {},{})",
                    fwd.score, fwd.qend, fwd.tend, rev.score, rev.qend, rev.tend));
  }
  r.query_begin = static_cast<std::uint32_t>(fwd.qend - rev.qend);
  r.target_begin = static_cast<std::uint32_t>(fwd.tend - rev.tend);
  r.query_end = static_cast<std::uint32_t>(fwd.qend + 1);
  r.target_end = static_cast<std::uint32_t>(fwd.tend + 1);
  return r;
}

void check_pair(const PassModel& model, std::size_t query_length, std::size_t target_length) {
  if (query_length == 0 || target_length == 0)
    throw Error(ErrorKind::kInput, "cannot align an empty sequence");
  constexpr std::size_t kMaxLength = std::numeric_limits<std::int32_t>::max() / 2;
  if (query_length > kMaxLength || target_length > kMaxLength ||
      !fits_int32(model, static_cast<std::int64_t>(query_length), static_cast<std::int64_t>(target_length))) {
    throw Error(ErrorKind::kInput,
                fmt::format("a pair of lengths {} x {} could produce scores beyond 32-bit range with this "
                            "scoring; split the sequences",
                            query_length, target_length));
  }
}

namespace {

using simd::kEExtend;
using simd::kFExtend;
using simd::kFromDiag;
using simd::kFromE;
using simd::kSourceMask;

void push_op(std::string& ops, char op) { ops.push_back(op); }

std::string run_length(const std::string& reversed_ops) {
  std::string cigar;
  std::size_t k = reversed_ops.size();
  while (k > 0) {
    const char op = reversed_ops[k - 1];
    std::size_t run = 0;
    while (k > 0 && reversed_ops[k - 1] == op) {
      ++run;
      --k;
    }
    cigar += std::to_string(run);
    cigar += op;
  }
  return cigar;
}

}  // namespace

void traceback(const PassModel& model, std::span<const std::uint8_t> query,
               std::span<const std::uint8_t> target, align::Result& result) {
  result.cigar.clear();
  result.matches = 0;
  result.length = 0;
  if (result.empty()) return;

  const auto q = query.subspan(result.query_begin, result.query_end - result.query_begin);
  const auto t = target.subspan(result.target_begin, result.target_end - result.target_begin);
  const std::size_t a = q.size(), b = t.size();
  if (b == 0 && model.mode == Mode::kSemiGlobal) {  // the all-insertion alignment (make_result)
    result.cigar = std::to_string(a) + "I";
    result.length = static_cast<std::uint32_t>(a);
    return;
  }
  if (a == 0 || b == 0) throw Error(ErrorKind::kInternal, "traceback region is empty");
  if (static_cast<std::uint64_t>(a) * b > kMaxTracebackCells) {
    throw Error(ErrorKind::kInput,
                fmt::format("the alignment of a {} x {} pair spans a {} x {} region, too large "
                            "for traceback (limit {} cells); run without --cigar",
                            query.size(), target.size(), a, b, kMaxTracebackCells));
  }
  const bool free_target_start = model.mode == Mode::kSemiGlobal;
  const std::int64_t open = model.open, ext = model.extend;

  // Forward fill over the region with global boundaries (semiglobal: H(-1,j) = 0), one byte per cell
  // (simd/trace_fill.hpp). Regions up to 2^24 cells and 2^16 columns reuse per-thread buffers; larger
  // ones get their own, freed on return, so one huge pair does not pin memory for the thread's lifetime.
  const bool reuse = a * b <= (std::size_t{1} << 24) && b <= (std::size_t{1} << 16);
  thread_local std::vector<std::uint8_t> reused_dir;
  thread_local simd::Workspace reused_workspace;
  std::vector<std::uint8_t> own_dir;
  simd::Workspace own_workspace;
  std::vector<std::uint8_t>& dir_buffer = reuse ? reused_dir : own_dir;
  simd::Workspace& workspace = reuse ? reused_workspace : own_workspace;
  if (dir_buffer.size() < a * b + simd::kTraceFillPad) dir_buffer.resize(a * b + simd::kTraceFillPad);
  const std::uint8_t* const dir = dir_buffer.data();
  const std::int64_t region_score =
      simd::trace_fill(model, q, t, free_target_start, dir_buffer.data(), workspace);
  if (region_score != result.score) {
    throw Error(ErrorKind::kInternal, fmt::format("traceback region scores {}, the passes reported {}",
                                                  region_score, result.score));
  }

  // Trace back from the region's last cell. state: 0 = H, 1 = E, 2 = F.
  std::string ops;  // reversed
  std::int64_t i = static_cast<std::int64_t>(a) - 1, j = static_cast<std::int64_t>(b) - 1;
  int state = 0;
  while (i >= 0 && j >= 0) {
    const std::uint8_t d = dir[static_cast<std::size_t>(i) * b + static_cast<std::size_t>(j)];
    if (state == 0) {
      const int src = d & kSourceMask;
      if (src == kFromDiag) {
        push_op(ops, q[static_cast<std::size_t>(i)] == t[static_cast<std::size_t>(j)] ? '=' : 'X');
        --i;
        --j;
      } else {
        state = src == kFromE ? 1 : 2;
      }
    } else if (state == 1) {
      push_op(ops, 'D');
      state = (d & kEExtend) ? 1 : 0;
      --j;
    } else {
      push_op(ops, 'I');
      state = (d & kFExtend) ? 2 : 0;
      --i;
    }
  }
  // Leading boundary: remaining query residues are insertions; remaining target residues are
  // deletions, except in semiglobal mode where they are outside the alignment.
  for (; i >= 0; --i) push_op(ops, 'I');
  std::uint32_t skipped_target = 0;
  for (; j >= 0; --j) {
    if (free_target_start) {
      ++skipped_target;
    } else {
      push_op(ops, 'D');
    }
  }
  result.target_begin += skipped_target;

  // Re-score the alignment and count its columns.
  std::int64_t score = 0;
  std::size_t qi = 0, tj = skipped_target;
  char prev = 0;
  for (std::size_t k = ops.size(); k-- > 0;) {
    const char op = ops[k];
    if (op == '=' || op == 'X') {
      score += model.score(q[qi++], t[tj++]);
      result.matches += op == '=' ? 1u : 0u;
    } else {
      score -= (op == prev ? 0 : open) + ext;
      (op == 'I' ? qi : tj)++;
    }
    prev = op;
    ++result.length;
  }
  if (score != result.score || qi != a || tj != b) {
    throw Error(ErrorKind::kInternal,
                fmt::format("CIGAR re-scores to {} over {}x{} residues, expected {} over {}x{}", score, qi,
                            tj, result.score, a, b));
  }
  result.cigar = run_length(ops);
}

}  // namespace warpsearch::sw
