// reference.cpp: full-matrix Gotoh DP, the literal transcription of the pass defined in model.hpp.
//
// Matrices are (m+1) x (n+1) with row/column 0 holding the boundary (index i+1 stores row i), values
// in int64 so the reference itself can never overflow. No tricks: this is what the SIMD and CUDA
// tiers are tested against.
#include "sw/reference.hpp"

#include <limits>
#include <vector>

#include "sw/pairwise.hpp"

namespace warpsearch::sw::reference {
namespace {

constexpr std::int64_t kNegInf = std::numeric_limits<std::int64_t>::min() / 4;

}  // namespace

EndPoint pass(const PassModel& model, std::span<const std::uint8_t> query,
              std::span<const std::uint8_t> target) {
  const std::size_t m = query.size();
  const std::size_t n = target.size();
  const std::int64_t open = model.open;
  const std::int64_t ext = model.extend;
  const std::size_t w = n + 1;
  std::vector<std::int64_t> H((m + 1) * w), E((m + 1) * w), F((m + 1) * w);
  auto at = [w](std::size_t i, std::size_t j) { return i * w + j; };  // i, j: 1-based (0 = boundary)

  // Boundary row/column (model.hpp): H(-1,-1) = 0; E(i,-1) = F(-1,j) = -inf.
  H[at(0, 0)] = 0;
  for (std::size_t j = 1; j <= n; ++j) {
    H[at(0, j)] = model.mode == Mode::kGlobal ? -(open + static_cast<std::int64_t>(j) * ext) : 0;
    E[at(0, j)] = kNegInf;
    F[at(0, j)] = kNegInf;
  }
  for (std::size_t i = 1; i <= m; ++i) {
    H[at(i, 0)] = model.mode == Mode::kLocal ? 0 : -(open + static_cast<std::int64_t>(i) * ext);
    E[at(i, 0)] = kNegInf;
    F[at(i, 0)] = kNegInf;
  }
  E[at(0, 0)] = F[at(0, 0)] = kNegInf;

  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t j = 1; j <= n; ++j) {
      const std::int64_t e = std::max(E[at(i, j - 1)], H[at(i, j - 1)] - open) - ext;
      const std::int64_t f = std::max(F[at(i - 1, j)], H[at(i - 1, j)] - open) - ext;
      std::int64_t h = H[at(i - 1, j - 1)] + model.score(query[i - 1], target[j - 1]);
      h = std::max({h, e, f});
      if (model.mode == Mode::kLocal) h = std::max<std::int64_t>(h, 0);
      E[at(i, j)] = e;
      F[at(i, j)] = f;
      H[at(i, j)] = h;
    }
  }

  EndPoint end;
  switch (model.mode) {
    case Mode::kLocal: {
      std::int64_t best = 0;
      for (std::size_t j = 1; j <= n; ++j)  // column-major: first strict improvement wins
        for (std::size_t i = 1; i <= m; ++i)
          if (H[at(i, j)] > best) {
            best = H[at(i, j)];
            end = {static_cast<std::int32_t>(best), static_cast<std::int32_t>(i - 1),
                   static_cast<std::int32_t>(j - 1)};
          }
      break;
    }
    case Mode::kGlobal:
      end = {static_cast<std::int32_t>(H[at(m, n)]), static_cast<std::int32_t>(m - 1),
             static_cast<std::int32_t>(n - 1)};
      break;
    case Mode::kSemiGlobal: {
      std::size_t best_j = 1;
      for (std::size_t j = 2; j <= n; ++j)
        if (H[at(m, j)] > H[at(m, best_j)]) best_j = j;
      end = {static_cast<std::int32_t>(H[at(m, best_j)]), static_cast<std::int32_t>(m - 1),
             static_cast<std::int32_t>(best_j - 1)};
      break;
    }
  }
  return end;
}

align::Result align_pair(const PassModel& model, std::span<const std::uint8_t> query,
                         std::span<const std::uint8_t> target, bool want_traceback) {
  check_pair(model, query.size(), target.size());
  const EndPoint fwd = pass(model, query, target);
  EndPoint rev;
  if (needs_reverse(model, fwd, query.size())) {
    const ReverseExtent ext = reverse_extent(model.mode, fwd, query.size());
    std::vector<std::uint8_t> rq, rt;
    reverse_prefix(query, ext.qlen, rq);
    reverse_prefix(target, ext.tlen, rt);
    rev = pass(model, rq, rt);
  }
  align::Result result = make_result(model, fwd, rev, query.size(), target.size());
  if (want_traceback) traceback(model, query, target, result);
  return result;
}

}  // namespace warpsearch::sw::reference
