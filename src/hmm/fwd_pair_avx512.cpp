// fwd_pair_avx512.cpp: the grouped Forward parser's AVX-512F op set, four targets (compiled with -mavx512f
// and no FMA contraction: see src/CMakeLists.txt; chosen at run time by fwd_pair.cpp). Target t in 128-bit
// lane t; every op is vf4::Sse's on each lane (the AVX-512 shuffles and adds work within 128-bit lanes).
// GCC 12's avx512fintrin.h builds broadcasts and casts from _mm512_undefined_ps(), which -Wmaybe-uninitialized
// reports at every inlined use (a false positive: those lanes are overwritten or ignored by definition).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstddef>

#include "hmm/fwd_pair_engine.hpp"

namespace warpsearch::hmm {
namespace {

struct Avx512Quad {
  static constexpr int K = 4;
  using V = __m512;
  using Mask = __mmask16;
  // The 4 lanes of each target whose bit is set in keep.
  static __mmask16 lanes(int keep) {
    int m = 0;
    for (int t = 0; t < 4; ++t)
      if ((keep >> t) & 1) m |= 0xf << (4 * t);
    return static_cast<__mmask16>(m);
  }
  static V zero() { return _mm512_setzero_ps(); }
  static V set(const float* s) {
    return _mm512_set_ps(s[3], s[3], s[3], s[3], s[2], s[2], s[2], s[2], s[1], s[1], s[1], s[1], s[0], s[0],
                         s[0], s[0]);
  }
  static V bcast(const float* p) { return _mm512_broadcast_f32x4(_mm_load_ps(p)); }
  static V load_rows(const float* const* rp, std::size_t off) {
    V v = _mm512_castps128_ps512(_mm_load_ps(rp[0] + off));
    v = _mm512_insertf32x4(v, _mm_load_ps(rp[1] + off), 1);
    v = _mm512_insertf32x4(v, _mm_load_ps(rp[2] + off), 2);
    return _mm512_insertf32x4(v, _mm_load_ps(rp[3] + off), 3);
  }
  static V load(const float* p) { return _mm512_load_ps(p); }
  static void store(float* p, V v) { _mm512_store_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  // Each lane: {0, a0, a1, a2} (esl_sse_rightshift_ps(a, zero)).
  static V rshift0(V a) {
    return _mm512_mask_blend_ps(static_cast<__mmask16>(0x1111),
                                _mm512_shuffle_ps(a, a, _MM_SHUFFLE(2, 1, 0, 0)), _mm512_setzero_ps());
  }
  // Each lane: (a0 + a1) + (a2 + a3), with esl_sse_hsum_ps's two shuffled adds.
  static void hsum(V a, float* out) {
    a = _mm512_add_ps(a, _mm512_shuffle_ps(a, a, _MM_SHUFFLE(0, 3, 2, 1)));
    a = _mm512_add_ps(a, _mm512_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    out[0] = _mm_cvtss_f32(_mm512_castps512_ps128(a));
    out[1] = _mm_cvtss_f32(_mm512_extractf32x4_ps(a, 1));
    out[2] = _mm_cvtss_f32(_mm512_extractf32x4_ps(a, 2));
    out[3] = _mm_cvtss_f32(_mm512_extractf32x4_ps(a, 3));
  }
  static Mask mzero() { return 0; }
  static Mask gt_or(Mask m, V a, V b) { return static_cast<Mask>(m | _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)); }
  static int gt_bits(Mask m) {
    int bits = 0;
    for (int t = 0; t < 4; ++t)
      if (((m >> (4 * t)) & 0xf) != 0) bits |= 1 << t;
    return bits;
  }
  // _mm512_mask_blend_ps(k, b, a): a where k is set.
  static V select(int keep, V a, V b) { return _mm512_mask_blend_ps(lanes(keep), b, a); }
};

}  // namespace

void fwd_pair_run_avx512(const FwdPairModel& m, const FwdPairTarget* tg, float* row, float* score, bool* ok) {
  GroupEngine<Avx512Quad>::run(m, tg, row, score, ok);
}

}  // namespace warpsearch::hmm
