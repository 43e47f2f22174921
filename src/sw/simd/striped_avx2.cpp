// striped_avx2.cpp: AVX2 traits for the striped pass (striped.hpp): 16 x int16 and 8 x int32 lanes
// per 256-bit vector, and the entry point striped_avx2(). Compiled with -mavx2 (src/CMakeLists.txt);
// called only on CPUs that have AVX2.
#include <immintrin.h>

#include "sw/simd/striped.hpp"

namespace warpsearch::sw::simd {
namespace {

// Lane shift by one element across the two 128-bit halves: [0 | lo] then byte-align with the input.
template <int kBytes>
__m256i shift_up_bytes(__m256i a) {
  return _mm256_alignr_epi8(a, _mm256_permute2x128_si256(a, a, 0x08), 16 - kBytes);
}

__m256i low_lane(int x) { return _mm256_inserti128_si256(_mm256_setzero_si256(), _mm_cvtsi32_si128(x), 0); }

// 16 lanes of int16 (saturating arithmetic; fits_int16 pairs only).
struct Avx2I16 {
  using Vec = __m256i;
  using Elem = std::int16_t;
  static constexpr std::size_t kLanes = 16;
  static constexpr Elem kNegInf = -32768;

  static Vec zero() { return _mm256_setzero_si256(); }
  static Vec set1(std::int64_t x) { return _mm256_set1_epi16(static_cast<short>(x)); }
  static Vec lane0(std::int64_t x) { return low_lane(static_cast<int>(static_cast<std::uint16_t>(x))); }
  static Vec adds(Vec a, Vec b) { return _mm256_adds_epi16(a, b); }
  static Vec subs(Vec a, Vec b) { return _mm256_subs_epi16(a, b); }
  static Vec subs_to_zero(Vec a, Vec b) { return _mm256_subs_epu16(a, b); }
  static Vec sub_floor(Vec a, Vec b) { return _mm256_subs_epi16(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_epi16(a, b); }
  static Vec bit_or(Vec a, Vec b) { return _mm256_or_si256(a, b); }
  static Vec shift_up(Vec a) { return shift_up_bytes<2>(a); }
  static unsigned mask_gt(Vec a, Vec b) {
    return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpgt_epi16(a, b)));
  }
  static unsigned mask_eq(Vec a, Vec b) {
    return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi16(a, b)));
  }
  static Elem hmax(Vec v) {
    __m128i a = _mm_max_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    a = _mm_max_epi16(a, _mm_shuffle_epi32(a, 0x4E));
    a = _mm_max_epi16(a, _mm_shuffle_epi32(a, 0xB1));
    a = _mm_max_epi16(a, _mm_shufflelo_epi16(a, 0xB1));
    return static_cast<Elem>(_mm_extract_epi16(a, 0));
  }
};

// 8 lanes of int32 (plain arithmetic; values stay within +-2^30, -inf is -1.5 * 2^30).
struct Avx2I32 {
  using Vec = __m256i;
  using Elem = std::int32_t;
  static constexpr std::size_t kLanes = 8;
  static constexpr Elem kNegInf = -(3 << 29);

  static Vec zero() { return _mm256_setzero_si256(); }
  static Vec set1(std::int64_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
  static Vec lane0(std::int64_t x) { return low_lane(static_cast<int>(x)); }
  static Vec adds(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
  static Vec subs(Vec a, Vec b) { return _mm256_sub_epi32(a, b); }
  static Vec subs_to_zero(Vec a, Vec b) {
    return _mm256_max_epi32(_mm256_sub_epi32(a, b), _mm256_setzero_si256());
  }
  static Vec sub_floor(Vec a, Vec b) {
    return _mm256_max_epi32(_mm256_sub_epi32(a, b), _mm256_set1_epi32(kNegInf));
  }
  static Vec max(Vec a, Vec b) { return _mm256_max_epi32(a, b); }
  static Vec bit_or(Vec a, Vec b) { return _mm256_or_si256(a, b); }
  static Vec shift_up(Vec a) { return shift_up_bytes<4>(a); }
  static unsigned mask_gt(Vec a, Vec b) {
    return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpgt_epi32(a, b)));
  }
  static unsigned mask_eq(Vec a, Vec b) {
    return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi32(a, b)));
  }
  static Elem hmax(Vec v) {
    __m128i a = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    a = _mm_max_epi32(a, _mm_shuffle_epi32(a, 0x4E));
    a = _mm_max_epi32(a, _mm_shuffle_epi32(a, 0xB1));
    return _mm_cvtsi128_si32(a);
  }
};

}  // namespace

EndPoint striped_avx2(const PassModel& model, const std::uint8_t* q, std::size_t m, const std::uint8_t* t,
                      std::size_t n, Workspace& workspace, bool wide, std::int32_t known) {
  return striped::by_mode<Avx2I16, Avx2I32>(model, q, m, t, n, workspace, wide, known);
}

}  // namespace warpsearch::sw::simd
