// Allocation of the striped float DP matrix (p7_omx_Create / p7_omx_GrowTo semantics for the float part).
#include "hmm/omx.hpp"

#include <cstddef>

namespace warpsearch::hmm {

void grow_to(Omx& ox, int M, int L, bool full) {
  const int q4 = Omx::nqf(M);
  const int rows = full ? L + 1 : 1;
  // Keep the row width when it is already wide enough and the allocation has room for the rows;
  // otherwise re-stripe to the new width (contents are not preserved, as in HMMER).
  if (ox.allocQ4 < q4 ||
      static_cast<std::size_t>(ox.allocQ4) * kOmxNSCells * 4 * static_cast<std::size_t>(rows) >
          ox.dp.size()) {
    const int width = ox.allocQ4 < q4 ? q4 : ox.allocQ4;
    const std::size_t need =
        static_cast<std::size_t>(width) * kOmxNSCells * 4 * static_cast<std::size_t>(rows);
    if (ox.dp.size() < need) ox.dp.resize(need, 0.0f);
    ox.allocQ4 = width;
  }
  ox.validR = static_cast<int>(ox.dp.size() / ox.row_stride());
  if (ox.allocXR < L + 1) {
    ox.xmx.resize(static_cast<std::size_t>(L + 1) * kOmxNXCells, 0.0f);
    ox.allocXR = L + 1;
  }
  ox.M = 0;
  ox.L = 0;
}

Omx make_omx(int M, int L, bool full) {
  Omx ox;
  grow_to(ox, M, L, full);
  return ox;
}

}  // namespace warpsearch::hmm
