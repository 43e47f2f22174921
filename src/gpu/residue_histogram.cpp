// residue_histogram.cpp: the CPU reference of the residue histogram kernel (see residue_histogram.hpp).
#include "gpu/residue_histogram.hpp"

namespace warpsearch::gpu {

std::vector<std::uint32_t> residue_histogram_reference(std::span<const std::uint8_t> residues,
                                                       std::span<const std::uint64_t> offsets) {
  const std::size_t n = offsets.empty() ? 0 : offsets.size() - 1;
  std::vector<std::uint32_t> counts(n * kMaxCodes, 0);
  for (std::size_t s = 0; s < n; ++s) {
    for (std::uint64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
      const unsigned code = residues[i];
      if (code < kMaxCodes) ++counts[s * kMaxCodes + code];
    }
  }
  return counts;
}

}  // namespace warpsearch::gpu
