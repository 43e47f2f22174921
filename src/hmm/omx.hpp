// Striped float dynamic-programming matrix for Forward/Backward/posterior decoding (HMMER 3.3.2's P7_OMX,
// float part), plus the 4-lane float vector helpers (vf4) that reproduce Easel's esl_sse.h lane operations.
//
// Contents:
//   - vf4: the handful of 4-float vector operations HMMER's float SSE code uses (add, mul, splat,
//     right/left shift by one lane, horizontal sum, greater-than mask) as two interchangeable op sets:
//     vf4::Sse (the intrinsics themselves) and vf4::Portable (the same IEEE operations lane by lane,
//     bit-identical). vf4::Native is Sse when __SSE2__ is defined, else Portable.
//   - Omx: the matrix. Full mode keeps rows 0..L; parser mode keeps a single row (row 0) that the DP
//     overwrites in place. Special states (E N J B C SCALE) are always stored for every row 0..L.
//   - grow_to / make_omx: allocation as p7_omx_Create / p7_omx_GrowTo. The rows and specials are
//     PageBuffers (core/page_buffer.hpp): growing keeps the pages already in use, as HMMER's realloc,
//     and never writes the new part (it reads as zero until the DP writes it).
//
// Layout (identical to HMMER's dpf/xmx):
//   Q = nqf(M) = max(2, (M-1)/4 + 1) vectors per state per row. Model node k (1..M) lives in vector
//   q = (k-1) % Q, lane z = (k-1) / Q ("striped"). A row is allocQ4 * 3 vectors; vector (q, s) with
//   s in {kOmxM, kOmxD, kOmxI} is at row + (q * 3 + s) * 4 floats. Lanes with k > M hold values that
//   the recurrences keep at 0 (their transitions and emissions are 0 in odds space).
//   xmx[i * 6 + s], s in {kOmxE, kOmxN, kOmxJ, kOmxB, kOmxC, kOmxScale}, for i = 0..L.
//   totscale: sum of log(scale factors) (nats) accumulated by the DP, as HMMER's ox->totscale.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/page_buffer.hpp"
#include "hmm/common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace warpsearch::hmm {

/// Main-state cells of one striped position (p7X_M, p7X_D, p7X_I).
enum OmxCell : int { kOmxM = 0, kOmxD = 1, kOmxI = 2 };
inline constexpr int kOmxNSCells = 3;

/// Special-state cells of one row (p7X_E, N, J, B, C, SCALE). Note C is 4 here (not kXC = 3 as in profiles).
enum OmxXCell : int { kOmxE = 0, kOmxN = 1, kOmxJ = 2, kOmxB = 3, kOmxC = 4, kOmxScale = 5 };
inline constexpr int kOmxNXCells = 6;

namespace vf4 {

/// Portable 4-lane vector ops: the same per-lane IEEE float operations as the SSE ops below, so both
/// give bit-identical results. Always available (the tests run both paths and compare).
struct Portable {
  struct V {
    float x[4];
  };
  static V zero() { return V{{0.0f, 0.0f, 0.0f, 0.0f}}; }
  static V set1(float v) { return V{{v, v, v, v}}; }
  static V load(const float* p) { return V{{p[0], p[1], p[2], p[3]}}; }
  static void store(float* p, V a) {
    for (int z = 0; z < 4; ++z) p[z] = a.x[z];
  }
  static V add(V a, V b) { return V{{a.x[0] + b.x[0], a.x[1] + b.x[1], a.x[2] + b.x[2], a.x[3] + b.x[3]}}; }
  static V mul(V a, V b) { return V{{a.x[0] * b.x[0], a.x[1] * b.x[1], a.x[2] * b.x[2], a.x[3] * b.x[3]}}; }
  /// esl_sse_rightshift_ps(a, b): { b0, a0, a1, a2 }.
  static V rightshift(V a, V b) { return V{{b.x[0], a.x[0], a.x[1], a.x[2]}}; }
  /// esl_sse_leftshift_ps(a, b): { a1, a2, a3, b0 }.
  static V leftshift(V a, V b) { return V{{a.x[1], a.x[2], a.x[3], b.x[0]}}; }
  /// esl_sse_hsum_ps: (a0 + a1) + (a2 + a3).
  static float hsum(V a) {
    const float s01 = a.x[0] + a.x[1];
    const float s23 = a.x[2] + a.x[3];
    return s01 + s23;
  }
  /// True when any lane of a is greater than the same lane of b (NaN compares false).
  static bool any_gt(V a, V b) {
    return a.x[0] > b.x[0] || a.x[1] > b.x[1] || a.x[2] > b.x[2] || a.x[3] > b.x[3];
  }
  static float lane(V a, int z) { return a.x[z]; }
};

#if defined(__SSE2__)
/// SSE2 ops on __m128 (lane 0 = lowest element), exactly the intrinsic sequences of HMMER / esl_sse.h.
struct Sse {
  using V = __m128;
  static V zero() { return _mm_setzero_ps(); }
  static V set1(float x) { return _mm_set1_ps(x); }
  static V load(const float* p) { return _mm_load_ps(p); }
  static void store(float* p, V a) { _mm_store_ps(p, a); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V mul(V a, V b) { return _mm_mul_ps(a, b); }
  static V rightshift(V a, V b) { return _mm_move_ss(_mm_shuffle_ps(a, a, _MM_SHUFFLE(2, 1, 0, 0)), b); }
  static V leftshift(V a, V b) {
    const V v = _mm_move_ss(a, b);
    return _mm_shuffle_ps(v, v, _MM_SHUFFLE(0, 3, 2, 1));
  }
  static float hsum(V a) {
    a = _mm_add_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(0, 3, 2, 1)));
    a = _mm_add_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    float r;
    _mm_store_ss(&r, a);
    return r;
  }
  static bool any_gt(V a, V b) { return _mm_movemask_ps(_mm_cmpgt_ps(a, b)) != 0; }
  static float lane(V a, int z) {
    alignas(16) float t[4];
    _mm_store_ps(t, a);
    return t[z];
  }
};
/// The ops the library uses: SSE2 where available.
using Native = Sse;
#else
using Native = Portable;
#endif

}  // namespace vf4

/// The float DP matrix (P7_OMX float part). See the file comment for the layout.
struct Omx {
  int M = 0;  ///< model length of the last DP filled in (0 after grow_to)
  int L = 0;  ///< sequence length of the last DP filled in (0 after grow_to)

  int allocQ4 = 0;  ///< row width in vectors per state (allocQ4 * 4 >= allocated M)
  int validR = 0;   ///< dp rows available: L+1 in full mode, 1 in parser mode (HMMER's validR)
  int allocXR = 0;  ///< xmx rows available (>= L+1)

  PageBuffer<float> dp;   ///< validR rows of allocQ4 * 3 vectors (4 floats each)
  PageBuffer<float> xmx;  ///< allocXR rows of 6 special cells

  float totscale = 0.0f;       ///< log of the product of all scale factors (nats)
  bool has_own_scales = true;  ///< false for a Backward matrix that uses the Forward matrix's scales

  /// Segment length for a model of length M: number of 4-float vectors per state (p7O_NQF).
  static constexpr int nqf(int m) { return (m - 1) / 4 + 1 < 2 ? 2 : (m - 1) / 4 + 1; }

  /// Floats per dp row.
  std::size_t row_stride() const { return static_cast<std::size_t>(allocQ4) * kOmxNSCells * 4; }
  /// Start of row i (i < validR); vector (q, s) at row(i) + (q * 3 + s) * 4.
  float* row(int i) { return dp.data() + static_cast<std::size_t>(i) * row_stride(); }
  const float* row(int i) const { return dp.data() + static_cast<std::size_t>(i) * row_stride(); }

  /// Special cell s (OmxXCell) of row i.
  float& x(int i, int s) {
    return xmx[static_cast<std::size_t>(i) * kOmxNXCells + static_cast<std::size_t>(s)];
  }
  float x(int i, int s) const {
    return xmx[static_cast<std::size_t>(i) * kOmxNXCells + static_cast<std::size_t>(s)];
  }

  /// Value of cell s (OmxCell) for row i, node k (1..M), as p7_omx_FGetMDI. Uses Q = nqf(M) of the stored M.
  float get_mdi(int s, int i, int k) const {
    const int q = (k - 1) % nqf(M);
    const int z = (k - 1) / nqf(M);
    return row(i)[(static_cast<std::size_t>(q) * kOmxNSCells + static_cast<std::size_t>(s)) * 4 +
                  static_cast<std::size_t>(z)];
  }
  /// Sets cell s of row i, node k, as p7_omx_FSetMDI.
  void set_mdi(int s, int i, int k, float v) {
    const int q = (k - 1) % nqf(M);
    const int z = (k - 1) / nqf(M);
    row(i)[(static_cast<std::size_t>(q) * kOmxNSCells + static_cast<std::size_t>(s)) * 4 +
           static_cast<std::size_t>(z)] = v;
  }

  /// True when this matrix can hold a full (all rows) DP of an M x L problem.
  bool fits_full(int m, int l) const { return allocQ4 * 4 >= m && validR > l && allocXR > l; }
  /// True when this matrix can hold a parser (one dp row) DP of an M x L problem.
  bool fits_parser(int m, int l) const { return allocQ4 * 4 >= m && validR >= 1 && allocXR > l; }
};

/// Makes sure ox can hold a model of length M and a sequence of length L: with full = true all dp
/// rows 0..L (p7_omx_GrowTo(ox, M, L, L)), else one dp row (p7_omx_GrowTo(ox, M, 0, L)). The xmx rows
/// 0..L are always provided. Never shrinks; resets M and L to 0. Existing contents are not preserved.
void grow_to(Omx& ox, int M, int L, bool full);

/// A new matrix sized as grow_to(ox, M, L, full).
Omx make_omx(int M, int L, bool full);

}  // namespace warpsearch::hmm
