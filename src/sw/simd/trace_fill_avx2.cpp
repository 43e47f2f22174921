// trace_fill_avx2.cpp: the AVX2 sweep of the traceback's direction fill (trace_fill.hpp): row by row,
// one vector of columns at a time, bytes identical to the scalar loop. One template over two lane
// types: 16 x int16 (saturating; regions whose values fit kInt16Safe) and 8 x int32. Compiled with
// -mavx2 (src/CMakeLists.txt); called only by trace_fill() on CPUs that have AVX2 and for regions that
// trace_fill_fits_vector() admits. Only intrinsics, raw pointers and integers here (no inline library
// templates that could be merged with a generic copy).
//
// Arrays of one sweep, indexed by column j = 0..bp (bp = b rounded up to the lane count, plus spare):
// h_prev = H(i-1, .), h_cur = H(i, .), f_col = F(i-1, .) in and F(i, .) out, and one score row per
// query code in use, prof[c][j] = s(c, t_j). Columns past b are padding: a real DP over zero scores
// that only flows to larger columns, so it never reaches a real cell; their direction bytes land in the
// next row's slots (written again when that row runs) or in the kTraceFillPad bytes after the last.
//
// Range. int32 lanes: every value within +-2^27 (trace_fill_fits_vector), -inf = -1.5 * 2^28, so the
// scan's decayed -inf stays inside int32. int16 lanes: every real value within +-kInt16Safe and the
// arithmetic saturates, so a decayed -inf floors at -32768, below every real value.
#include <immintrin.h>

#include "sw/simd/trace_fill.hpp"

namespace warpsearch::sw::simd {
namespace {

struct I32 {
  using Elem = std::int32_t;
  static constexpr std::size_t kLanes = 8;
  static constexpr Elem kNegInf = -(3 << 28);
  static __m256i set1(int x) { return _mm256_set1_epi32(x); }
  static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
  static __m256i sub(__m256i a, __m256i b) { return _mm256_sub_epi32(a, b); }
  static __m256i max(__m256i a, __m256i b) { return _mm256_max_epi32(a, b); }
  static __m256i gt(__m256i a, __m256i b) { return _mm256_cmpgt_epi32(a, b); }
  static __m256i eq(__m256i a, __m256i b) { return _mm256_cmpeq_epi32(a, b); }
  // (1, 2, ..., 8) * x: the carry's decay per lane.
  static __m256i ramp(int x) {
    return _mm256_mullo_epi32(_mm256_set1_epi32(x), _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8));
  }
  static __m256i last_lane(__m256i v) { return _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7)); }
  // 8 direction values (one per int32 lane, 0..15) as 8 bytes.
  static void store_bytes(std::uint8_t* out, __m256i bits) {
    const __m256i p16 = _mm256_packs_epi32(bits, bits);
    const __m256i p8 = _mm256_packus_epi16(p16, p16);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                                                          p8, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0))));
  }
};

struct I16 {
  using Elem = std::int16_t;
  static constexpr std::size_t kLanes = 16;
  static constexpr Elem kNegInf = -32768;
  static __m256i set1(int x) { return _mm256_set1_epi16(static_cast<short>(x)); }
  static __m256i add(__m256i a, __m256i b) { return _mm256_adds_epi16(a, b); }
  static __m256i sub(__m256i a, __m256i b) { return _mm256_subs_epi16(a, b); }
  static __m256i max(__m256i a, __m256i b) { return _mm256_max_epi16(a, b); }
  static __m256i gt(__m256i a, __m256i b) { return _mm256_cmpgt_epi16(a, b); }
  static __m256i eq(__m256i a, __m256i b) { return _mm256_cmpeq_epi16(a, b); }
  static __m256i ramp(int x) {
    return _mm256_mullo_epi16(_mm256_set1_epi16(static_cast<short>(x)),
                              _mm256_setr_epi16(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16));
  }
  static __m256i last_lane(__m256i v) {
    const __m256i hi = _mm256_permute2x128_si256(v, v, 0x11);                       // high half twice
    return _mm256_shuffle_epi8(hi, _mm256_set1_epi16(static_cast<short>(0x0F0E)));  // its lane 7 everywhere
  }
  static void store_bytes(std::uint8_t* out, __m256i bits) {
    const __m256i p8 = _mm256_packus_epi16(bits, bits);  // [d0..7 d0..7 | d8..15 d8..15]
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                     _mm256_castsi256_si128(_mm256_permute4x64_epi64(p8, 0x08)));
  }
};

// [prev's last lane, cur's lanes 0..L-2]: the vector one column to the left.
template <class L>
__m256i left1(__m256i prev, __m256i cur) {
  return _mm256_alignr_epi8(cur, _mm256_permute2x128_si256(prev, cur, 0x21),
                            16 - static_cast<int>(sizeof(typename L::Elem)));
}
// x moved up by k lanes (k * element size <= 16 bytes) with -inf shifted in.
template <class L, int kLanes>
__m256i shift_in_neg(__m256i x, __m256i neg) {
  const __m256i lo = _mm256_permute2x128_si256(x, neg, 0x02);  // [-inf | x's low half]
  constexpr int kBytes = kLanes * static_cast<int>(sizeof(typename L::Elem));
  if constexpr (kBytes == 16) {
    return lo;
  } else {
    return _mm256_alignr_epi8(x, lo, 16 - kBytes);
  }
}

// E within a vector: E(j) = max(C(j), E(j-1) - X) over the lanes (log-step scan).
template <class L>
__m256i decay_scan(__m256i e, __m256i neg, int ext) {
  e = L::max(e, L::sub(shift_in_neg<L, 1>(e, neg), L::set1(ext)));
  e = L::max(e, L::sub(shift_in_neg<L, 2>(e, neg), L::set1(2 * ext)));
  e = L::max(e, L::sub(shift_in_neg<L, 4>(e, neg), L::set1(4 * ext)));
  if constexpr (L::kLanes == 16) e = L::max(e, L::sub(shift_in_neg<L, 8>(e, neg), L::set1(8 * ext)));
  return e;
}

template <class L>
std::int32_t sweep(const PassModel& model, const std::uint8_t* q, std::size_t a, const std::uint8_t* t,
                   std::size_t b, bool free_target_start, std::uint8_t* dir, Workspace& workspace) {
  using Elem = typename L::Elem;
  constexpr std::size_t kLanes = L::kLanes;
  const std::size_t bp = (b + kLanes - 1) / kLanes * kLanes;
  const std::size_t stride = bp + 2 * kLanes;
  const int open = model.open;
  const int ext = model.extend;

  // Which query codes need a score row.
  int slot[kMaxCodes];
  for (int& s : slot) s = -1;
  int rows = 0;
  for (std::size_t i = 0; i < a; ++i) {
    const int c = q[i] & (kMaxCodes - 1);
    if (slot[c] < 0) slot[c] = rows++;
  }
  auto* base =
      reinterpret_cast<Elem*>(workspace.buffer((3 + static_cast<std::size_t>(rows)) * stride * sizeof(Elem)));
  Elem* h_prev = base;
  Elem* h_cur = base + stride;
  Elem* const f_col = base + 2 * stride;
  Elem* const prof = base + 3 * stride;
  for (int c = 0; c < kMaxCodes; ++c) {
    if (slot[c] < 0) continue;
    Elem* p = prof + static_cast<std::size_t>(slot[c]) * stride;
    const std::int8_t* row = model.table + c * kMaxCodes;
    p[0] = 0;
    for (std::size_t j = 1; j <= b; ++j) p[j] = row[t[j - 1] & (kMaxCodes - 1)];
    for (std::size_t j = b + 1; j < stride; ++j) p[j] = 0;
  }
  // Row 0 (padding columns continue the boundary; in int16 they may floor at -32768, which only ever
  // feeds padding).
  h_prev[0] = 0;
  f_col[0] = L::kNegInf;
  for (std::size_t j = 1; j < stride; ++j) {
    const std::int64_t v = free_target_start ? 0 : -(open + static_cast<std::int64_t>(j) * ext);
    h_prev[j] = static_cast<Elem>(v < L::kNegInf ? L::kNegInf : v);
    f_col[j] = L::kNegInf;
  }

  const __m256i v_o = L::set1(open);
  const __m256i v_x = L::set1(ext);
  const __m256i v_oe = L::set1(open + ext);
  const __m256i v_carry_decay = L::ramp(ext);
  const __m256i v_neg = L::set1(L::kNegInf);
  const __m256i v_one = L::set1(kFromE);
  const __m256i v_two = L::set1(kFromF);
  const __m256i v_eext = L::set1(kEExtend);
  const __m256i v_fext = L::set1(kFExtend);

  for (std::size_t i = 1; i <= a; ++i) {
    const Elem* const p = prof + static_cast<std::size_t>(slot[q[i - 1] & (kMaxCodes - 1)]) * stride;
    const int h0 = -(open + static_cast<int>(i) * ext);  // H(i, 0)
    h_cur[0] = static_cast<Elem>(h0);
    __m256i prev_t = L::set1(h0);  // last lane: T(0) = H(i, 0)
    __m256i prev_h = prev_t;
    __m256i prev_e = v_neg;  // E(i, 0) = -inf
    std::uint8_t* const out = dir + (i - 1) * b;
    for (std::size_t j = 1; j <= b; j += kLanes) {
      const __m256i hp = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h_prev + j));
      const __m256i hpd = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h_prev + j - 1));
      const __m256i fp = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f_col + j));
      const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + j));
      // F from the row above.
      const __m256i hpo = L::sub(hp, v_o);
      const __m256i fext = L::gt(fp, hpo);
      const __m256i f = L::sub(L::max(fp, hpo), v_x);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(f_col + j), f);
      const __m256i d = L::add(hpd, s);
      const __m256i tv = L::max(d, f);
      // E(j) = max(T(j-1) - O - X, E(j-1) - X): the scan, then the previous vector's carry.
      __m256i e = decay_scan<L>(L::sub(left1<L>(prev_t, tv), v_oe), v_neg, ext);
      e = L::max(e, L::sub(L::last_lane(prev_e), v_carry_decay));
      const __m256i h = L::max(tv, e);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(h_cur + j), h);
      // Direction bits.
      const __m256i is_d = L::eq(h, d);
      const __m256i is_e = L::eq(h, e);
      __m256i bits = _mm256_andnot_si256(is_d, _mm256_blendv_epi8(v_two, v_one, is_e));
      const __m256i eext = L::gt(left1<L>(prev_e, e), L::sub(left1<L>(prev_h, h), v_o));
      bits = _mm256_or_si256(bits, _mm256_and_si256(eext, v_eext));
      bits = _mm256_or_si256(bits, _mm256_and_si256(fext, v_fext));
      L::store_bytes(out + (j - 1), bits);
      prev_t = tv;
      prev_h = h;
      prev_e = e;
    }
    Elem* const swap = h_prev;
    h_prev = h_cur;
    h_cur = swap;
  }
  return h_prev[b];
}

}  // namespace

std::int32_t trace_fill_avx2(const PassModel& model, const std::uint8_t* q, std::size_t a,
                             const std::uint8_t* t, std::size_t b, bool free_target_start, std::uint8_t* dir,
                             Workspace& workspace, bool narrow) {
  return narrow ? sweep<I16>(model, q, a, t, b, free_target_start, dir, workspace)
                : sweep<I32>(model, q, a, t, b, free_target_start, dir, workspace);
}

}  // namespace warpsearch::sw::simd
