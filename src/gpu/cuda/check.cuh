// check.cuh: CUDA error checks that turn a failing runtime call into warpsearch::Error(kGpu).
//
//   WS_CUDA_CHECK(cudaMalloc(&p, n));   throws Error(kGpu, "cudaMalloc(&p, n): out of memory
//                                       (cudaErrorMemoryAllocation)", __FILE__, __LINE__)
//   kernel<<<grid, block, 0, s>>>(...);
//   WS_CUDA_CHECK_LAUNCH();             launch errors (bad configuration, no kernel image, ...)
//
// Before throwing, the runtime's per-thread "last error" is cleared, so a non-sticky failure is not
// reported a second time by a later WS_CUDA_CHECK_LAUNCH. Asynchronous kernel faults surface at the
// next synchronizing call that is checked.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch::gpu {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expression, const char* file,
                                          int line) {
  (void)cudaGetLastError();
  throw Error(
      ErrorKind::kGpu,
      std::string(expression) + ": " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")",
      file, static_cast<std::uint64_t>(line));
}

inline void check_cuda(cudaError_t status, const char* expression, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, expression, file, line);
}

}  // namespace warpsearch::gpu

#define WS_CUDA_CHECK(expr) ::warpsearch::gpu::check_cuda((expr), #expr, __FILE__, __LINE__)
#define WS_CUDA_CHECK_LAUNCH() \
  ::warpsearch::gpu::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
