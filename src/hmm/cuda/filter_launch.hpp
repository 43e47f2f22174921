// filter_launch.hpp: launch shapes of the filter kernels (chosen by the engine from the model length) and
// the launchers (filter_kernels.cu). CUDA builds only.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "hmm/cuda/filter_kernels.cuh"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm::gpu {

// How one model runs: G threads per target, Q cells (SSV/MSV: words of two 16-bit cells) per thread, sub-warp
// groups or one block per target; grid blocks; dynamic shared memory (the sub-warp SSV/MSV tables).
struct LaunchShape {
  bool block_mode = false;
  int G = 0;
  int Q = 0;
  int block = 0;  // threads per block (block mode: G)
  int grid = 0;
  int smem_bytes = 0;
  bool trans_regs =
      false;  // sub-warp Viterbi with Q <= kVitSubRegsMaxQ: transitions in registers (else shared)
};

[[noreturn]] inline void throw_bad_shape(const char* kernel, const LaunchShape& s) {
  throw Error(ErrorKind::kInternal, std::string("no ") + kernel + " kernel for Q = " + std::to_string(s.Q) +
                                        (s.block_mode ? " (block mode)" : " (sub-warp mode)"));
}

// The node-run lengths instantiated (filter_kernels.cu).
inline constexpr int kSsvSubQ[] = {2, 4, 6, 8, 10, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64};
inline constexpr int kSsvBlockQ[] = {16, 32, 64};
inline constexpr int kVitSubQ[] = {1, 2, 4, 8, 12, 16, 32, 48, 64, 72, 80};
/// Sub-warp Viterbi kernels keep the transitions in registers up to this Q, else in shared memory.
inline constexpr int kVitSubRegsMaxQ = 16;
inline constexpr int kVitBlockQ[] = {8, 16, 32, 64, 100};
/// Most threads per block of the block-mode Viterbi kernel for Q (its launch bounds).
inline constexpr int vit_block_max_threads(int Q) { return Q >= 64 ? 1024 : 512; }

void launch_ssv(const LaunchShape& shape, const DbView& db, const SsvParams& p, cudaStream_t stream);
void launch_msv(const LaunchShape& shape, const DbView& db, const MsvParams& p, cudaStream_t stream);
void launch_vit(const LaunchShape& shape, const DbView& db, const VitParams& p, cudaStream_t stream);
int sub_warp_threads();

}  // namespace warpsearch::hmm::gpu
