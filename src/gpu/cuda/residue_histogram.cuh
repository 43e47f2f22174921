// residue_histogram.cuh: the GPU residue histogram over a packed batch (layout and meaning in
// gpu/residue_histogram.hpp). The result equals residue_histogram_reference bit for bit (integer
// counts, no ordering effects).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gpu/residue_histogram.hpp"
#include "warpsearch/alphabet.hpp"

namespace warpsearch::gpu {

// Queues the histogram kernel on `stream`. All pointers are device memory: residues of the batch,
// num_sequences + 1 offsets, num_sequences * kMaxCodes counts (fully overwritten). Each sequence must be
// shorter than 2^32 residues. Launch errors are thrown as Error(kGpu); nothing is queued for 0 sequences.
void launch_residue_histogram(const std::uint8_t* residues, const std::uint64_t* offsets,
                              std::size_t num_sequences, std::uint32_t* counts, cudaStream_t stream);

}  // namespace warpsearch::gpu
