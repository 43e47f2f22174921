// gpu_plan.hpp: host-side planning of the swsearch GPU score kernels (src/swsearch/cuda/sw_kernels.cuh),
// kept in plain C++ so CPU builds test it.
//
//   LetterClasses / make_letter_classes   codes with identical matrix rows and columns share a class; the
//                                         last class is the pad letter
//   letter_table                          the kernel's substitution table: (q, a) -> (uint16)s(q,a)
//   Shape / kShapes                       kernel shapes (G lanes per group, R columns per lane)
//   BatchPlan / plan_batch                database sequences sorted by length (longest first, ties by id),
//                                         cut into one partition per shape, paired within a partition
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sw/model.hpp"

namespace warpsearch::swsearch::gpu {

struct LetterClasses {
  int K = 0;                                      // classes including the pad class K - 1
  std::array<std::uint8_t, kMaxCodes> of_code{};  // code -> class
  std::array<std::uint8_t, kMaxCodes> rep{};      // class -> a representative code (not for the pad class)
};
LetterClasses make_letter_classes(const sw::PassModel& model);

// K*K words: entry q*K + a = s(q,a) as a 16-bit value zero-extended, the pad class scoring pad_score (the
// kernel replicates it once per shared-memory bank).
std::vector<std::uint32_t> letter_table(const sw::PassModel& model, const LetterClasses& classes,
                                        int pad_score);

// K*K*K words: entry q*K*K + a + K*b = (uint16)s(q,a) | (uint16)s(q,b) << 16 (the kernels' kPair mode).
std::vector<std::uint32_t> pair_table(const sw::PassModel& model, const LetterClasses& classes,
                                      int pad_score);

struct Shape {
  int G = 0;  // lanes per group (4..32)
  int R = 0;  // columns per lane (even)
  int width() const { return G * R; }
};
// Single-tile shapes by increasing width; sequences longer than the widest run multi-tile on kMultiShape.
inline constexpr std::array<Shape, 8> kShapes{
    {{4, 8}, {4, 16}, {8, 12}, {8, 16}, {16, 16}, {32, 12}, {32, 16}, {32, 32}}};
inline constexpr Shape kMultiShape{32, 32};

struct Partition {
  int shape = 0;  // index into kShapes, or -1 for kMultiShape (multi-tile)
  std::uint32_t first_pair = 0;
  std::uint32_t pairs = 0;
  std::uint64_t max_length = 0;
  std::uint64_t residues = 0;
};
struct BatchPlan {
  // (a, b) per pair, partitions back to back; a is the longer (or equal, smaller id), b == kNone: no second.
  std::vector<std::uint32_t> pair_a, pair_b;
  std::vector<Partition> partitions;  // non-empty ones, longest sequences first
};
inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;
// lengths[k]: length of sequence k. Zero-length sequences are not paired (their score is 0).
BatchPlan plan_batch(std::span<const std::uint64_t> lengths);

}  // namespace warpsearch::swsearch::gpu
