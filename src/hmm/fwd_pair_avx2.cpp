// fwd_pair_avx2.cpp: the grouped Forward parser's AVX2 op set, two targets (compiled with -mavx2, no FMA
// contraction: see src/CMakeLists.txt; chosen at run time by fwd_pair.cpp). Target 0 in the low 128-bit
// lane, target 1 in the high one; every op is vf4::Sse's on each lane (the AVX2 shuffles and adds work
// within 128-bit lanes).
#include <immintrin.h>

#include <cstddef>

#include "hmm/fwd_pair_engine.hpp"

namespace warpsearch::hmm {
namespace {

struct Avx2Pair {
  static constexpr int K = 2;
  using V = __m256;
  using Mask = __m256;
  static V zero() { return _mm256_setzero_ps(); }
  static V set(const float* s) { return _mm256_set_m128(_mm_set1_ps(s[1]), _mm_set1_ps(s[0])); }
  static V bcast(const float* p) { return _mm256_broadcast_ps(reinterpret_cast<const __m128*>(p)); }
  static V load_rows(const float* const* rp, std::size_t off) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(rp[0] + off)), _mm_load_ps(rp[1] + off),
                                1);
  }
  static V load(const float* p) { return _mm256_load_ps(p); }
  static void store(float* p, V v) { _mm256_store_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  // Each lane: {0, a0, a1, a2} (esl_sse_rightshift_ps(a, zero)).
  static V rshift0(V a) {
    return _mm256_blend_ps(_mm256_shuffle_ps(a, a, _MM_SHUFFLE(2, 1, 0, 0)), _mm256_setzero_ps(), 0x11);
  }
  // Each lane: (a0 + a1) + (a2 + a3), with esl_sse_hsum_ps's two shuffled adds.
  static void hsum(V a, float* out) {
    a = _mm256_add_ps(a, _mm256_shuffle_ps(a, a, _MM_SHUFFLE(0, 3, 2, 1)));
    a = _mm256_add_ps(a, _mm256_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    out[0] = _mm_cvtss_f32(_mm256_castps256_ps128(a));
    out[1] = _mm_cvtss_f32(_mm256_extractf128_ps(a, 1));
  }
  static Mask mzero() { return _mm256_setzero_ps(); }
  static Mask gt_or(Mask m, V a, V b) { return _mm256_or_ps(m, _mm256_cmp_ps(a, b, _CMP_GT_OQ)); }
  static int gt_bits(Mask m) {
    const int b = _mm256_movemask_ps(m);
    return ((b & 0x0f) != 0 ? 1 : 0) | ((b & 0xf0) != 0 ? 2 : 0);
  }
  static V select(int keep, V a, V b) {
    const int k0 = (keep & 1) ? -1 : 0, k1 = (keep & 2) ? -1 : 0;
    return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(_mm256_set_epi32(k1, k1, k1, k1, k0, k0, k0, k0)));
  }
};

}  // namespace

void fwd_pair_run_avx2(const FwdPairModel& m, const FwdPairTarget* tg, float* row, float* score, bool* ok) {
  GroupEngine<Avx2Pair>::run(m, tg, row, score, ok);
}

}  // namespace warpsearch::hmm
