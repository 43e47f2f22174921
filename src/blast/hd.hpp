// hd.hpp: the annotation that lets blastp's shared stage code (two_hit.hpp, xdrop.hpp, prelim_screen.hpp)
// compile for both the CPU and the GPU, so both run one implementation.
//
// Contents:
//   WS_BLAST_HD       __host__ __device__ when compiled by nvcc, nothing otherwise
//   hd_min / hd_max   std::min / std::max for int-like values, usable in device code (no <algorithm>)
#pragma once

#if defined(__CUDACC__)
#define WS_BLAST_HD __host__ __device__
#else
#define WS_BLAST_HD
#endif

namespace warpsearch::blast {

// Same results as std::min / std::max (the first argument on ties).
template <class T>
WS_BLAST_HD constexpr T hd_min(T a, T b) {
  return b < a ? b : a;
}
template <class T>
WS_BLAST_HD constexpr T hd_max(T a, T b) {
  return a < b ? b : a;
}

}  // namespace warpsearch::blast
