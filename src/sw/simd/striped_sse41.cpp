// striped_sse41.cpp: SSE4.1 traits for the striped pass (striped.hpp): 8 x int16 and 4 x int32 lanes
// per 128-bit vector, and the entry point striped_sse41(). Compiled with -msse4.1 (src/CMakeLists.txt);
// called only on CPUs that have SSE4.1.
#include <immintrin.h>

#include "sw/simd/striped.hpp"

namespace warpsearch::sw::simd {
namespace {

// 8 lanes of int16 (saturating arithmetic; fits_int16 pairs only).
struct Sse41I16 {
  using Vec = __m128i;
  using Elem = std::int16_t;
  static constexpr std::size_t kLanes = 8;
  static constexpr Elem kNegInf = -32768;

  static Vec zero() { return _mm_setzero_si128(); }
  static Vec set1(std::int64_t x) { return _mm_set1_epi16(static_cast<short>(x)); }
  static Vec lane0(std::int64_t x) {
    return _mm_cvtsi32_si128(static_cast<int>(static_cast<std::uint16_t>(x)));
  }
  static Vec adds(Vec a, Vec b) { return _mm_adds_epi16(a, b); }
  static Vec subs(Vec a, Vec b) { return _mm_subs_epi16(a, b); }
  static Vec subs_to_zero(Vec a, Vec b) { return _mm_subs_epu16(a, b); }
  static Vec sub_floor(Vec a, Vec b) { return _mm_subs_epi16(a, b); }
  static Vec max(Vec a, Vec b) { return _mm_max_epi16(a, b); }
  static Vec bit_or(Vec a, Vec b) { return _mm_or_si128(a, b); }
  static Vec shift_up(Vec a) { return _mm_slli_si128(a, 2); }
  static unsigned mask_gt(Vec a, Vec b) {
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpgt_epi16(a, b)));
  }
  static unsigned mask_eq(Vec a, Vec b) {
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi16(a, b)));
  }
  static Elem hmax(Vec a) {
    a = _mm_max_epi16(a, _mm_shuffle_epi32(a, 0x4E));
    a = _mm_max_epi16(a, _mm_shuffle_epi32(a, 0xB1));
    a = _mm_max_epi16(a, _mm_shufflelo_epi16(a, 0xB1));
    return static_cast<Elem>(_mm_extract_epi16(a, 0));
  }
};

// 4 lanes of int32 (plain arithmetic; values stay within +-2^30, -inf is -1.5 * 2^30).
struct Sse41I32 {
  using Vec = __m128i;
  using Elem = std::int32_t;
  static constexpr std::size_t kLanes = 4;
  static constexpr Elem kNegInf = -(3 << 29);

  static Vec zero() { return _mm_setzero_si128(); }
  static Vec set1(std::int64_t x) { return _mm_set1_epi32(static_cast<int>(x)); }
  static Vec lane0(std::int64_t x) { return _mm_cvtsi32_si128(static_cast<int>(x)); }
  static Vec adds(Vec a, Vec b) { return _mm_add_epi32(a, b); }
  static Vec subs(Vec a, Vec b) { return _mm_sub_epi32(a, b); }
  static Vec subs_to_zero(Vec a, Vec b) { return _mm_max_epi32(_mm_sub_epi32(a, b), _mm_setzero_si128()); }
  static Vec sub_floor(Vec a, Vec b) { return _mm_max_epi32(_mm_sub_epi32(a, b), _mm_set1_epi32(kNegInf)); }
  static Vec max(Vec a, Vec b) { return _mm_max_epi32(a, b); }
  static Vec bit_or(Vec a, Vec b) { return _mm_or_si128(a, b); }
  static Vec shift_up(Vec a) { return _mm_slli_si128(a, 4); }
  static unsigned mask_gt(Vec a, Vec b) {
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpgt_epi32(a, b)));
  }
  static unsigned mask_eq(Vec a, Vec b) {
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi32(a, b)));
  }
  static Elem hmax(Vec a) {
    a = _mm_max_epi32(a, _mm_shuffle_epi32(a, 0x4E));
    a = _mm_max_epi32(a, _mm_shuffle_epi32(a, 0xB1));
    return _mm_cvtsi128_si32(a);
  }
};

}  // namespace

EndPoint striped_sse41(const PassModel& model, const std::uint8_t* q, std::size_t m, const std::uint8_t* t,
                       std::size_t n, Workspace& workspace, bool wide, std::int32_t known) {
  return striped::by_mode<Sse41I16, Sse41I32>(model, q, m, t, n, workspace, wide, known);
}

}  // namespace warpsearch::sw::simd
