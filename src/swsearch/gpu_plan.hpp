// gpu_plan.hpp: host-side planning of the swsearch GPU score kernels (src/swsearch/cuda/sw_kernels.cuh),
// kept in plain C++ so CPU builds test it.
//
//   LetterClasses / make_letter_classes   the codes a query or batch uses, those with identical matrix rows
//                                         and columns sharing a class; the last class is the pad letter
//   letter_table                          the kernel's substitution table: (q, a) -> (uint16)s(q,a)
//   Shape / kShapes                       kernel shapes (G lanes per group, R columns per lane)
//   BatchPlan / plan_batch                database sequences sorted by length (longest first, ties by id),
//                                         cut into one partition per shape, paired within a partition
//   qpair_plan / query_pair_profile       two queries at once (the query-stationary kernels)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sw/model.hpp"

namespace warpsearch::swsearch::gpu {

// Letter classes of the codes in a set (bit c of `present`: code c occurs): codes with identical matrix
// rows and columns (over all codes) share a class, so the kernels' table is as small as the letters a query
// or a database batch actually use. Codes outside the set map to class 0 (they must not occur).
struct LetterClasses {
  int K = 0;                                      // classes including the pad class K - 1
  std::array<std::uint8_t, kMaxCodes> of_code{};  // code -> class
  std::array<std::uint8_t, kMaxCodes> rep{};      // class -> a representative code (not for the pad class)
};
LetterClasses make_letter_classes(const sw::PassModel& model, std::uint32_t present = 0xFFFFFFFFu);
// The set of codes (bit per code) occurring in `codes`.
std::uint32_t codes_present(std::span<const std::uint8_t> codes);

// Kq*Kd words: entry q*Kd + a = s(q,a) as a 16-bit value zero-extended, for query classes q and database
// classes a, the pad classes scoring pad_score (the kPrivate kernels replicate it once per bank).
std::vector<std::uint32_t> letter_table(const sw::PassModel& model, const LetterClasses& query,
                                        const LetterClasses& db, int pad_score);

// The pair table's index stride of the second letter: Kd rounded up to odd. Entry (q, a, b) is word
// q * Kb^2 + a + Kb * b: with odd strides, lanes of a warp holding different query letters and letter pairs
// spread over the shared-memory banks (with Kd = 24 the rows were 576 = 0 mod 32 words apart and the banks
// depended on the letters a, b alone; measured 1.43 vs 2.48 TCUPS).
inline int pair_stride(int Kd) { return Kd | 1; }
// Kq*Kb*Kb words (Kb = pair_stride(Kd)): entry q*Kb*Kb + a + Kb*b = (uint16)s(q,a) | (uint16)s(q,b) << 16 for
// a, b < Kd (the kPair kernels); the other words are 0 and never read.
std::vector<std::uint32_t> pair_table(const sw::PassModel& model, const LetterClasses& query,
                                      const LetterClasses& db, int pad_score);

struct Shape {
  int G = 0;  // lanes per group (4..32)
  int R = 0;  // columns per lane (even)
  int width() const { return G * R; }
};
// Single-tile shapes by increasing width (a sequence runs on the narrowest that holds it, so at most a
// fifth of a tile is padding above 64 residues); longer sequences run multi-tile on kMultiShape. Lanes hold
// at most 16 columns: more registers halve the resident warps (R = 32 needed 170-254 registers).
inline constexpr std::array<Shape, 10> kShapes{
    {{4, 8}, {4, 16}, {8, 12}, {8, 16}, {16, 12}, {16, 16}, {32, 10}, {32, 12}, {32, 14}, {32, 16}}};
inline constexpr Shape kMultiShape{32, 16};

// Query pairs (score_kernel_qs in sw_kernels.cuh) of at most m residues (the longer of the two): the
// narrowest single-tile shape holding m rows, else the multi-tile shape of G = 32 lanes whose tiles waste
// the fewest rows (R = 10, 12, 14 or 16; on a tie the wider, with fewer tiles).
struct QpairPlan {
  Shape shape;
  bool multi = false;
  int tiles = 1;
};
inline constexpr std::array<int, 4> kQpairMultiR{10, 12, 14, 16};
QpairPlan qpair_plan(std::size_t m);
// The pair's query profile: tiles x Kd x R x 32 words; word ((t * Kd + d) * R + r) * 32 + lane =
// (uint16)s(a_i, d) | (uint16)s(b_i, d) << 16 with i = t * G * R + (lane % G) * R + r (every group of a warp
// reads the same rows). Rows at or past a query's length and the pad class Kd - 1 score pad_score.
std::vector<std::uint32_t> query_pair_profile(const sw::PassModel& model, std::span<const std::uint8_t> a,
                                              std::span<const std::uint8_t> b, const LetterClasses& db,
                                              Shape shape, int tiles, int pad_score);

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
