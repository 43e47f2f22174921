// residue_histogram.hpp: per-sequence residue counts over a packed batch: the CPU reference of the
// GPU kernel in cuda/residue_histogram.cuh (usable in every build).
//
// A packed batch is the layout every GPU stage reads: the residue codes of all sequences back to back
// in one array, and offsets[0..n] with sequence s at [offsets[s], offsets[s+1]) (offsets never
// decrease). The histogram counts[s * kMaxCodes + c] is the number of residues with code c in sequence
// s; codes >= kMaxCodes (not produced by the readers) are not counted. Uses: residue composition for
// bias and composition corrections, and a cheap end-to-end check that a batch arrived intact.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "warpsearch/alphabet.hpp"

namespace warpsearch::gpu {

// CPU reference: offsets.size() - 1 sequences, result of (offsets.size() - 1) * kMaxCodes counts.
std::vector<std::uint32_t> residue_histogram_reference(std::span<const std::uint8_t> residues,
                                                       std::span<const std::uint64_t> offsets);

}  // namespace warpsearch::gpu
