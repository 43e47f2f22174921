// reference.hpp: the reference tier of the sw family. Plain full-matrix Gotoh DP in 64-bit integers,
// written to read like the definition in model.hpp; every SIMD and CUDA pass is tested against it.
//
//   pass()       the pass of model.hpp: score and end cell under the tie rule
//   align_pair() a whole alignment: forward pass, reverse pass on the reversed prefixes, traceback
#pragma once

#include <cstdint>
#include <span>

#include "sw/model.hpp"
#include "warpsearch/align.hpp"

namespace warpsearch::sw::reference {

// Full H/E/F matrices (O(m n) memory): meant for tests and small inputs.
EndPoint pass(const PassModel& model, std::span<const std::uint8_t> query,
              std::span<const std::uint8_t> target);

// Reference for the whole pipeline (align::Result with or without the traceback fields).
align::Result align_pair(const PassModel& model, std::span<const std::uint8_t> query,
                         std::span<const std::uint8_t> target, bool traceback);

}  // namespace warpsearch::sw::reference
