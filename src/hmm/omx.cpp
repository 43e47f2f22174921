// Allocation of the striped float DP matrix (p7_omx_Create / p7_omx_GrowTo semantics for the float part).
#include "hmm/omx.hpp"

#include <cstddef>

namespace warpsearch::hmm {

void grow_to(Omx& ox, int M, int L, bool full) {
  const int q4 = Omx::nqf(M);
  const auto rows = static_cast<std::size_t>(full ? L + 1 : 1);
  // Keep the row width when it is wide enough and the allocation has room for the rows. Otherwise
  // re-stripe to this model's width (contents are not preserved, as in HMMER), reallocating only when
  // the allocation is too small for that: a matrix reused after a longer model then never holds rows
  // wider than the model needs.
  if (ox.allocQ4 < q4 || ox.row_stride() * rows > ox.dp.size()) {
    const std::size_t need = static_cast<std::size_t>(q4) * kOmxNSCells * 4 * rows;
    ox.dp.grow(need);  // in place: pages already in use are not copied or touched (page_buffer.hpp)
    ox.allocQ4 = q4;
  }
  ox.validR = static_cast<int>(ox.dp.size() / ox.row_stride());
  if (ox.allocXR < L + 1) {
    ox.xmx.grow(static_cast<std::size_t>(L + 1) * kOmxNXCells);
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
