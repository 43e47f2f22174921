// trace_fill.hpp: the fill of the traceback's direction matrix (pairwise.cpp traceback()), one byte
// per cell, computed by a portable scalar loop (the definition) or by an AVX2 row sweep that gives the
// identical bytes.
//
// The DP is the pass of model.hpp over a region q (a rows) x t (b columns) with global boundaries, or
// with free leading target residues (free_target_start: H(-1,j) = 0), in 1-based cell indices:
//   E(i,j) = max(E(i,j-1), H(i,j-1) - O) - X      E(i,0) = -inf
//   F(i,j) = max(F(i-1,j), H(i-1,j) - O) - X      F(0,j) = -inf
//   H(i,j) = max(D, E, F), D = H(i-1,j-1) + s(q_i, t_j)
//   H(0,0) = 0, H(i,0) = -(O + iX), H(0,j) = free_target_start ? 0 : -(O + jX)
// Cell (i,j) stores at dir[(i-1) * b + (j-1)]:
//   bits 0-1  the source of H: kFromDiag when H == D, else kFromE when H == E, else kFromF
//             (ties prefer the diagonal, then E)
//   kEExtend  E(i,j-1) > H(i,j-1) - O   (E extends rather than opens; ties open, shorter gaps)
//   kFExtend  F(i-1,j) > H(i-1,j) - O
//
// The AVX2 sweep (trace_fill_avx2.cpp) runs row by row over 16 columns per vector in 16-bit lanes
// (trace_fill_fits_int16) or 8 in 32-bit lanes. F is vertical, so a whole row of it comes from the
// row above. E along the row is a running maximum with a linear decay: with T(j) = max(D, F) and
// T(0) = H(i,0),
//   E(i,j) = max over k < j of T(k) - O - (j-k)X,
// because a gap opened from an H that itself came from E is never better than extending that E (O >= 0).
// Within a vector that is a log-step scan (shifts by 1, 2, 4 and, in 16-bit lanes, 8 lanes), plus the
// carry from the previous vector. Every value is exact, so every bit is the scalar loop's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "sw/model.hpp"
#include "sw/simd/pass.hpp"

namespace warpsearch::sw::simd {

enum : std::uint8_t {
  kFromDiag = 0,
  kFromE = 1,  // H(i,j) == E(i,j)   (gap in the query: 'D')
  kFromF = 2,  // H(i,j) == F(i,j)   (gap in the target: 'I')
  kSourceMask = 3,
  kEExtend = 4,  // E(i,j) came from E(i,j-1) (else from H(i,j-1) - open)
  kFExtend = 8,  // F(i,j) came from F(i-1,j)
};

// Bytes dir needs beyond a * b (the vector sweep stores whole vectors of a row).
inline constexpr std::size_t kTraceFillPad = 16;

// The vector sweep's range: every value of the region (with its columns of padding) within +-2^27,
// so its -infinity and the scan's decayed values stay far inside int32. Larger regions take the scalar
// loop (64-bit values).
inline std::int64_t trace_fill_bound(const PassModel& model, std::size_t a, std::size_t b) {
  PassModel global = model;
  global.mode = Mode::kGlobal;
  return value_bound(global, static_cast<std::int64_t>(a), static_cast<std::int64_t>(b) + 32);
}
inline bool trace_fill_fits_vector(const PassModel& model, std::size_t a, std::size_t b) {
  return trace_fill_bound(model, a, b) <= (std::int64_t{1} << 27);
}
// 16-bit lanes (saturating): every value within kInt16Safe and the scan's largest decay, 16 gap
// steps, a representable constant.
inline bool trace_fill_fits_int16(const PassModel& model, std::size_t a, std::size_t b) {
  return trace_fill_bound(model, a, b) <= kInt16Safe &&
         16 * (std::int64_t{model.open} + model.extend) <= kInt16Safe;
}

// Fills dir (a * b + kTraceFillPad bytes) for q x t (both non-empty; open, extend >= 0) and returns
// H(a, b). isa selects the sweep: kAvx2 where trace_fill_fits_vector holds (16-bit lanes where
// trace_fill_fits_int16 also does), else the scalar loop.
std::int64_t trace_fill(const PassModel& model, std::span<const std::uint8_t> q,
                        std::span<const std::uint8_t> t, bool free_target_start, std::uint8_t* dir,
                        Workspace& workspace, Isa isa = best_isa());

// The AVX2 sweep (trace_fill_avx2.cpp), in 16-bit lanes when narrow; call only through trace_fill().
std::int32_t trace_fill_avx2(const PassModel& model, const std::uint8_t* q, std::size_t a,
                             const std::uint8_t* t, std::size_t b, bool free_target_start, std::uint8_t* dir,
                             Workspace& workspace, bool narrow);

}  // namespace warpsearch::sw::simd
