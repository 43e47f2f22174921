// fwd_pair.cpp: the two-target Forward parser (fwd_pair.hpp): the portable and SSE2 op sets, the run-time
// choice of op set, and the pairing loop. The AVX2 op set is in fwd_pair_avx2.cpp.
#include "hmm/fwd_pair.hpp"

#include <cstddef>
#include <string>

#include "hmm/fwd_pair_engine.hpp"
#include "hmm/fwdback.hpp"
#include "warpsearch/error.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace warpsearch::hmm {

#if defined(__x86_64__)
// fwd_pair_avx2.cpp (x86-64 builds only): PairEngine<Avx2 ops>::run.
void fwd_pair_run_avx2(const FwdPairModel& m, const FwdPairTarget* tg, float* row, float* score, bool* ok);
#endif

namespace {

// Lanes 0..3: target 0's vector, 4..7: target 1's; every op is vf4::Portable's on each half.
struct PortablePair {
  struct V {
    float x[8];
  };
  static V zero() { return V{{0, 0, 0, 0, 0, 0, 0, 0}}; }
  static V set2(float a, float b) { return V{{a, a, a, a, b, b, b, b}}; }
  static V bcast(const float* p) { return V{{p[0], p[1], p[2], p[3], p[0], p[1], p[2], p[3]}}; }
  static V load2(const float* p0, const float* p1) {
    return V{{p0[0], p0[1], p0[2], p0[3], p1[0], p1[1], p1[2], p1[3]}};
  }
  static V load(const float* p) {
    V v;
    for (int z = 0; z < 8; ++z) v.x[z] = p[z];
    return v;
  }
  static void store(float* p, V a) {
    for (int z = 0; z < 8; ++z) p[z] = a.x[z];
  }
  static V add(V a, V b) {
    for (int z = 0; z < 8; ++z) a.x[z] = a.x[z] + b.x[z];
    return a;
  }
  static V mul(V a, V b) {
    for (int z = 0; z < 8; ++z) a.x[z] = a.x[z] * b.x[z];
    return a;
  }
  static V rshift0(V a) { return V{{0.0f, a.x[0], a.x[1], a.x[2], 0.0f, a.x[4], a.x[5], a.x[6]}}; }
  static void hsum(V a, float& s0, float& s1) {
    s0 = (a.x[0] + a.x[1]) + (a.x[2] + a.x[3]);
    s1 = (a.x[4] + a.x[5]) + (a.x[6] + a.x[7]);
  }
  static V gt_or(V acc, V a, V b) {
    for (int z = 0; z < 8; ++z)
      if (a.x[z] > b.x[z]) acc.x[z] = 1.0f;
    return acc;
  }
  static int gt_bits(V acc) {
    int bits = 0;
    for (int z = 0; z < 8; ++z)
      if (acc.x[z] != 0.0f) bits |= z < 4 ? 1 : 2;
    return bits;
  }
  static V select(bool keep0, bool keep1, V a, V b) {
    for (int z = 0; z < 8; ++z)
      if (z < 4 ? keep0 : keep1) b.x[z] = a.x[z];
    return b;
  }
};

#if defined(__SSE2__)
// Two __m128, each with vf4::Sse's intrinsic sequences.
struct SsePair {
  struct V {
    __m128 a, b;
  };
  static __m128 rs(__m128 x) {
    return _mm_move_ss(_mm_shuffle_ps(x, x, _MM_SHUFFLE(2, 1, 0, 0)), _mm_setzero_ps());
  }
  static float hs(__m128 x) {
    x = _mm_add_ps(x, _mm_shuffle_ps(x, x, _MM_SHUFFLE(0, 3, 2, 1)));
    x = _mm_add_ps(x, _mm_shuffle_ps(x, x, _MM_SHUFFLE(1, 0, 3, 2)));
    float r;
    _mm_store_ss(&r, x);
    return r;
  }
  static __m128 sel(bool keep, __m128 x, __m128 y) { return keep ? x : y; }

  static V zero() { return V{_mm_setzero_ps(), _mm_setzero_ps()}; }
  static V set2(float x, float y) { return V{_mm_set1_ps(x), _mm_set1_ps(y)}; }
  static V bcast(const float* p) {
    const __m128 v = _mm_load_ps(p);
    return V{v, v};
  }
  static V load2(const float* p0, const float* p1) { return V{_mm_load_ps(p0), _mm_load_ps(p1)}; }
  static V load(const float* p) { return V{_mm_load_ps(p), _mm_load_ps(p + 4)}; }
  static void store(float* p, V v) {
    _mm_store_ps(p, v.a);
    _mm_store_ps(p + 4, v.b);
  }
  static V add(V x, V y) { return V{_mm_add_ps(x.a, y.a), _mm_add_ps(x.b, y.b)}; }
  static V mul(V x, V y) { return V{_mm_mul_ps(x.a, y.a), _mm_mul_ps(x.b, y.b)}; }
  static V rshift0(V x) { return V{rs(x.a), rs(x.b)}; }
  static void hsum(V x, float& s0, float& s1) {
    s0 = hs(x.a);
    s1 = hs(x.b);
  }
  static V gt_or(V acc, V x, V y) {
    return V{_mm_or_ps(acc.a, _mm_cmpgt_ps(x.a, y.a)), _mm_or_ps(acc.b, _mm_cmpgt_ps(x.b, y.b))};
  }
  static int gt_bits(V acc) {
    return (_mm_movemask_ps(acc.a) != 0 ? 1 : 0) | (_mm_movemask_ps(acc.b) != 0 ? 2 : 0);
  }
  static V select(bool keep0, bool keep1, V x, V y) { return V{sel(keep0, x.a, y.a), sel(keep1, x.b, y.b)}; }
};
#endif

bool cpu_has_avx2() {
#if defined(__x86_64__)
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace

FwdPairModel fwd_pair_model(const OProfile& om) {
  FwdPairModel m;
  m.M = om.M;
  m.Q = Omx::nqf(om.M);
  m.tfv = om.tfv.data();
  m.rfv = om.rfv.data();
  m.rfv_stride = om.Q4 * 4;
  m.e_move = om.xf[kOE][kOMove];
  m.e_loop = om.xf[kOE][kOLoop];
  return m;
}

FwdPairTarget fwd_pair_target(const OProfile& om, const uint8_t* dsq, int L) {
  // As reconfig_rest_length: the same MOVE for N, C and J, LOOP = 1 - MOVE.
  const float pmove = rest_move_probability(om, L);
  const float ploop = 1.0f - pmove;
  FwdPairTarget t;
  t.dsq = dsq;
  t.L = L;
  t.n_loop = t.c_loop = t.j_loop = ploop;
  t.n_move = t.c_move = t.j_move = pmove;
  return t;
}

bool fwd_pair_isa_supported(FwdPairIsa isa) {
  switch (isa) {
    case FwdPairIsa::kPortable: return true;
    case FwdPairIsa::kSse2:
#if defined(__SSE2__)
      return true;
#else
      return false;
#endif
    case FwdPairIsa::kAvx2: return cpu_has_avx2();
  }
  return false;
}

FwdPairIsa fwd_pair_best_isa() {
  if (fwd_pair_isa_supported(FwdPairIsa::kAvx2)) return FwdPairIsa::kAvx2;
  if (fwd_pair_isa_supported(FwdPairIsa::kSse2)) return FwdPairIsa::kSse2;
  return FwdPairIsa::kPortable;
}

float* FwdPairScratch::row(int Q) {
  const std::size_t n = static_cast<std::size_t>(Q) * 3 * 8;
  if (row_.size() < n) row_.resize(n);
  return row_.data();
}

void forward_parser_pair(const OProfile& om, const FwdPairTarget (&tg)[2], FwdPairScratch& ws,
                         float (&score)[2], bool (&ok)[2], FwdPairIsa isa) {
  if (!is_local(om.mode))
    throw Error(ErrorKind::kInternal, "forward: implementation assumes a local alignment mode");
  if (!fwd_pair_isa_supported(isa))
    throw Error(ErrorKind::kInternal, "forward_parser_pair: instruction set not available on this CPU");
  for (const FwdPairTarget& t : tg)
    if (t.L < 0) throw Error(ErrorKind::kInternal, "forward: negative sequence length");
  const FwdPairModel m = fwd_pair_model(om);
  float* row = ws.row(m.Q);
  switch (isa) {
    case FwdPairIsa::kAvx2:
#if defined(__x86_64__)
      fwd_pair_run_avx2(m, tg, row, score, ok);
      return;
#else
      break;
#endif
    case FwdPairIsa::kSse2:
#if defined(__SSE2__)
      PairEngine<SsePair>::run(m, tg, row, score, ok);
      return;
#else
      break;
#endif
    case FwdPairIsa::kPortable: PairEngine<PortablePair>::run(m, tg, row, score, ok); return;
  }
  throw Error(ErrorKind::kInternal, "forward_parser_pair: unknown instruction set");
}

void forward_parser_scores(const OProfile& om, std::span<const FwdPairTarget> targets,
                           std::span<float> scores, FwdPairScratch& ws, Omx& fallback, FwdPairIsa isa) {
  if (scores.size() != targets.size())
    throw Error(ErrorKind::kInternal, "forward_parser_scores: one score per target");
  auto single = [&](const FwdPairTarget& t) {
    OProfile copy = om;  // (rare: only for targets whose score forward_parser reports as an error)
    reconfig_length(copy, t.L);
    grow_to(fallback, om.M, t.L, false);
    return forward_parser(t.dsq, t.L, copy, fallback);
  };
  for (std::size_t k = 0; k < targets.size(); k += 2) {
    FwdPairTarget pair[2] = {targets[k], FwdPairTarget{}};
    pair[1].dsq = targets[k].dsq;  // an odd last target runs beside an empty one
    if (k + 1 < targets.size()) pair[1] = targets[k + 1];
    float s[2];
    bool ok[2];
    forward_parser_pair(om, pair, ws, s, ok, isa);
    scores[k] = ok[0] ? s[0] : single(targets[k]);
    if (k + 1 < targets.size()) scores[k + 1] = ok[1] ? s[1] : single(targets[k + 1]);
  }
}

}  // namespace warpsearch::hmm
