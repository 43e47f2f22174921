// residue_histogram.cuh: per-sequence residue counts over a packed batch of digitized sequences.
//
// A packed batch is the layout every GPU stage reads: the residue codes of all sequences back to back
// in one array, and offsets[0..n] with sequence s at [offsets[s], offsets[s+1]) (offsets never
// decrease). The histogram counts[s * kMaxCodes + c] is the number of residues with code c in sequence
// s; codes >= kMaxCodes (not produced by the readers) are not counted. Uses: residue composition for
// bias and composition corrections, and a cheap end-to-end check that a batch arrived intact. The GPU
// result equals residue_histogram_reference bit for bit (integer counts, no ordering effects).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "warpsearch/alphabet.hpp"

namespace warpsearch::gpu {

// CPU reference: offsets.size() - 1 sequences, result of (offsets.size() - 1) * kMaxCodes counts.
std::vector<std::uint32_t> residue_histogram_reference(std::span<const std::uint8_t> residues,
                                                       std::span<const std::uint64_t> offsets);

// Queues the histogram kernel on `stream`. All pointers are device memory: residues of the batch,
// num_sequences + 1 offsets, num_sequences * kMaxCodes counts (fully overwritten). Each sequence must be
// shorter than 2^32 residues. Launch errors are thrown as Error(kGpu); nothing is queued for 0 sequences.
void launch_residue_histogram(const std::uint8_t* residues, const std::uint64_t* offsets,
                              std::size_t num_sequences, std::uint32_t* counts, cudaStream_t stream);

}  // namespace warpsearch::gpu
