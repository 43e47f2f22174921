// residue_histogram.cu: the per-sequence residue histogram kernel and its CPU reference.
//
// Thread-to-data mapping: one warp per sequence (grid-stride over sequences, kWarpsPerBlock warps per
// block). Lane l reads residues l, l+32, l+64, ... of the sequence (coalesced byte loads) and adds one
// to the warp's private 32-bin histogram in shared memory with a shared-memory atomic; after the
// sequence, lane l writes bin l. Invariant: between the two __syncwarp of an iteration a warp's bins
// hold exactly the counts of the residues it has read of its current sequence. Only lane l zeroes and
// reads bin l, so a barrier after zeroing (before any atomic) and one after counting (before reading)
// suffice; the sequence loop is warp-uniform, so the whole warp reaches both.
#include <algorithm>

#include "gpu/cuda/check.cuh"
#include "gpu/cuda/residue_histogram.cuh"

namespace warpsearch::gpu {
namespace {

constexpr int kWarpSize = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kBlockThreads = kWarpsPerBlock * kWarpSize;
constexpr unsigned kMaxBlocks = 1u << 16;  // grid-stride beyond this: plenty to fill any current GPU
static_assert(kMaxCodes == kWarpSize, "one bin per lane");

__global__ void __launch_bounds__(kBlockThreads)
    residue_histogram_kernel(const std::uint8_t* __restrict__ residues,
                             const std::uint64_t* __restrict__ offsets, std::uint64_t num_sequences,
                             std::uint32_t* __restrict__ counts) {
  __shared__ std::uint32_t bins[kWarpsPerBlock][kMaxCodes];
  const unsigned lane = threadIdx.x % kWarpSize;
  const unsigned warp = threadIdx.x / kWarpSize;
  std::uint32_t* const own = bins[warp];
  const std::uint64_t warp_stride = static_cast<std::uint64_t>(gridDim.x) * kWarpsPerBlock;

  for (std::uint64_t s = static_cast<std::uint64_t>(blockIdx.x) * kWarpsPerBlock + warp; s < num_sequences;
       s += warp_stride) {
    own[lane] = 0;
    __syncwarp();
    const std::uint64_t end = offsets[s + 1];
    for (std::uint64_t i = offsets[s] + lane; i < end; i += kWarpSize) {
      const unsigned code = residues[i];
      if (code < kMaxCodes) atomicAdd(&own[code], 1u);
    }
    __syncwarp();
    counts[s * kMaxCodes + lane] = own[lane];
  }
}

}  // namespace

void launch_residue_histogram(const std::uint8_t* residues, const std::uint64_t* offsets,
                              std::size_t num_sequences, std::uint32_t* counts, cudaStream_t stream) {
  if (num_sequences == 0) return;
  const std::uint64_t wanted = (num_sequences + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>(wanted, kMaxBlocks));
  residue_histogram_kernel<<<blocks, kBlockThreads, 0, stream>>>(residues, offsets, num_sequences, counts);
  WS_CUDA_CHECK_LAUNCH();
}

}  // namespace warpsearch::gpu
