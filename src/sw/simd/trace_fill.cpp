// trace_fill.cpp: the scalar fill of the traceback's direction matrix (the definition, trace_fill.hpp)
// and the choice between it and the AVX2 sweep.
#include "sw/simd/trace_fill.hpp"

#include <limits>
#include <vector>

namespace warpsearch::sw::simd {
namespace {

std::int64_t scalar_fill(const PassModel& model, std::span<const std::uint8_t> q,
                         std::span<const std::uint8_t> t, bool free_target_start, std::uint8_t* dir) {
  const std::size_t a = q.size(), b = t.size();
  const std::int64_t open = model.open, ext = model.extend;
  constexpr std::int64_t kNegInf = std::numeric_limits<std::int64_t>::min() / 4;
  std::vector<std::int64_t> Hprev(b + 1), Hcur(b + 1), Fcol(b + 1, kNegInf);
  Hprev[0] = 0;
  for (std::size_t j = 1; j <= b; ++j)
    Hprev[j] = free_target_start ? 0 : -(open + static_cast<std::int64_t>(j) * ext);
  for (std::size_t i = 1; i <= a; ++i) {
    Hcur[0] = -(open + static_cast<std::int64_t>(i) * ext);
    std::int64_t e = kNegInf;
    for (std::size_t j = 1; j <= b; ++j) {
      std::uint8_t d = 0;
      // E(i,j) = max(E(i,j-1), H(i,j-1) - open) - extend; ties prefer opening (shorter gaps).
      if (e > Hcur[j - 1] - open) {
        d |= kEExtend;
      } else {
        e = Hcur[j - 1] - open;
      }
      e -= ext;
      std::int64_t f = Fcol[j];
      if (f > Hprev[j] - open) {
        d |= kFExtend;
      } else {
        f = Hprev[j] - open;
      }
      f -= ext;
      Fcol[j] = f;
      // H: the diagonal first, then E, then F.
      std::int64_t h = Hprev[j - 1] + model.score(q[i - 1], t[j - 1]);
      if (e > h) {
        h = e;
        d |= kFromE;
      }
      if (f > h) {
        h = f;
        d = static_cast<std::uint8_t>((d & ~kSourceMask) | kFromF);
      }
      Hcur[j] = h;
      dir[(i - 1) * b + (j - 1)] = d;
    }
    std::swap(Hprev, Hcur);
  }
  return Hprev[b];
}

}  // namespace

std::int64_t trace_fill(const PassModel& model, std::span<const std::uint8_t> q,
                        std::span<const std::uint8_t> t, bool free_target_start, std::uint8_t* dir,
                        Workspace& workspace, Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx2 && isa_supported(isa) && trace_fill_fits_vector(model, q.size(), t.size()))
    return trace_fill_avx2(model, q.data(), q.size(), t.data(), t.size(), free_target_start, dir, workspace,
                           trace_fill_fits_int16(model, q.size(), t.size()));
#else
  (void)isa;
  (void)workspace;
#endif
  return scalar_fill(model, q, t, free_target_start, dir);
}

}  // namespace warpsearch::sw::simd
