// fwd_pair.cpp: the grouped Forward parser (fwd_pair.hpp): the portable (2 and 4 targets) and SSE2 op sets,
// the run-time choice of op set, and the grouping loop. The AVX2 and AVX-512F op sets are in
// fwd_pair_avx2.cpp and fwd_pair_avx512.cpp.
#include "hmm/fwd_pair.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hmm/fwd_pair_engine.hpp"
#include "hmm/fwdback.hpp"
#include "warpsearch/error.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace warpsearch::hmm {

#if defined(__x86_64__)
// fwd_pair_avx2.cpp / fwd_pair_avx512.cpp (x86-64 builds only): GroupEngine<their ops>::run.
void fwd_pair_run_avx2(const FwdPairModel& m, const FwdPairTarget* tg, float* row, float* score, bool* ok);
void fwd_pair_run_avx512(const FwdPairModel& m, const FwdPairTarget* tg, float* row, float* score, bool* ok);
#endif

namespace {

// Target t in lanes 4t..4t+3; every op is vf4::Portable's on each target's lanes.
template <int KT>
struct PortableGroup {
  static constexpr int K = KT;
  static constexpr int N = 4 * KT;
  struct V {
    float x[N];
  };
  using Mask = V;
  static V zero() {
    V v;
    for (int z = 0; z < N; ++z) v.x[z] = 0.0f;
    return v;
  }
  static V set(const float* s) {
    V v;
    for (int z = 0; z < N; ++z) v.x[z] = s[z / 4];
    return v;
  }
  static V bcast(const float* p) {
    V v;
    for (int z = 0; z < N; ++z) v.x[z] = p[z % 4];
    return v;
  }
  static V load_rows(const float* const* rp, std::size_t off) {
    V v;
    for (int z = 0; z < N; ++z) v.x[z] = rp[z / 4][off + static_cast<std::size_t>(z % 4)];
    return v;
  }
  static V load(const float* p) {
    V v;
    for (int z = 0; z < N; ++z) v.x[z] = p[z];
    return v;
  }
  static void store(float* p, V a) {
    for (int z = 0; z < N; ++z) p[z] = a.x[z];
  }
  static V add(V a, V b) {
    for (int z = 0; z < N; ++z) a.x[z] = a.x[z] + b.x[z];
    return a;
  }
  static V mul(V a, V b) {
    for (int z = 0; z < N; ++z) a.x[z] = a.x[z] * b.x[z];
    return a;
  }
  static V rshift0(V a) {
    V v;
    for (int z = 0; z < N; ++z) v.x[z] = z % 4 == 0 ? 0.0f : a.x[z - 1];
    return v;
  }
  static void hsum(V a, float* out) {
    for (int t = 0; t < K; ++t) out[t] = (a.x[4 * t] + a.x[4 * t + 1]) + (a.x[4 * t + 2] + a.x[4 * t + 3]);
  }
  static Mask mzero() { return zero(); }
  static Mask gt_or(Mask m, V a, V b) {
    for (int z = 0; z < N; ++z)
      if (a.x[z] > b.x[z]) m.x[z] = 1.0f;
    return m;
  }
  static int gt_bits(Mask m) {
    int bits = 0;
    for (int z = 0; z < N; ++z)
      if (m.x[z] != 0.0f) bits |= 1 << (z / 4);
    return bits;
  }
  static V select(int keep, V a, V b) {
    for (int z = 0; z < N; ++z)
      if ((keep >> (z / 4)) & 1) b.x[z] = a.x[z];
    return b;
  }
};

#if defined(__SSE2__)
// Two __m128, each with vf4::Sse's intrinsic sequences.
struct SsePair {
  static constexpr int K = 2;
  struct V {
    __m128 a, b;
  };
  using Mask = V;
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

  static V zero() { return V{_mm_setzero_ps(), _mm_setzero_ps()}; }
  static V set(const float* s) { return V{_mm_set1_ps(s[0]), _mm_set1_ps(s[1])}; }
  static V bcast(const float* p) {
    const __m128 v = _mm_load_ps(p);
    return V{v, v};
  }
  static V load_rows(const float* const* rp, std::size_t off) {
    return V{_mm_load_ps(rp[0] + off), _mm_load_ps(rp[1] + off)};
  }
  static V load(const float* p) { return V{_mm_load_ps(p), _mm_load_ps(p + 4)}; }
  static void store(float* p, V v) {
    _mm_store_ps(p, v.a);
    _mm_store_ps(p + 4, v.b);
  }
  static V add(V x, V y) { return V{_mm_add_ps(x.a, y.a), _mm_add_ps(x.b, y.b)}; }
  static V mul(V x, V y) { return V{_mm_mul_ps(x.a, y.a), _mm_mul_ps(x.b, y.b)}; }
  static V rshift0(V x) { return V{rs(x.a), rs(x.b)}; }
  static void hsum(V x, float* out) {
    out[0] = hs(x.a);
    out[1] = hs(x.b);
  }
  static Mask mzero() { return zero(); }
  static Mask gt_or(Mask m, V x, V y) {
    return V{_mm_or_ps(m.a, _mm_cmpgt_ps(x.a, y.a)), _mm_or_ps(m.b, _mm_cmpgt_ps(x.b, y.b))};
  }
  static int gt_bits(Mask m) {
    return (_mm_movemask_ps(m.a) != 0 ? 1 : 0) | (_mm_movemask_ps(m.b) != 0 ? 2 : 0);
  }
  static V select(int keep, V x, V y) { return V{(keep & 1) ? x.a : y.a, (keep & 2) ? x.b : y.b}; }
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
bool cpu_has_avx512() {
#if defined(__x86_64__)
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace

namespace {
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
}  // namespace

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
    case FwdPairIsa::kPortable:
    case FwdPairIsa::kPortable4: return true;
    case FwdPairIsa::kSse2:
#if defined(__SSE2__)
      return true;
#else
      return false;
#endif
    case FwdPairIsa::kAvx2: return cpu_has_avx2();
    case FwdPairIsa::kAvx512: return cpu_has_avx512();
  }
  return false;
}

int fwd_group_size(FwdPairIsa isa) {
  return isa == FwdPairIsa::kPortable4 || isa == FwdPairIsa::kAvx512 ? 4 : 2;
}

const char* fwd_pair_isa_name(FwdPairIsa isa) {
  switch (isa) {
    case FwdPairIsa::kPortable: return "portable";
    case FwdPairIsa::kSse2: return "sse2";
    case FwdPairIsa::kAvx2: return "avx2";
    case FwdPairIsa::kPortable4: return "portable4";
    case FwdPairIsa::kAvx512: return "avx512";
  }
  return "unknown";
}

FwdPairIsa fwd_pair_best_isa() {
  static const FwdPairIsa best = [] {
    if (const char* env = std::getenv("WARPSEARCH_HMM_FWD_ISA")) {
      for (FwdPairIsa isa : {FwdPairIsa::kAvx512, FwdPairIsa::kAvx2, FwdPairIsa::kSse2, FwdPairIsa::kPortable,
                             FwdPairIsa::kPortable4})
        if (std::string_view(env) == fwd_pair_isa_name(isa) && fwd_pair_isa_supported(isa)) return isa;
    }
    for (FwdPairIsa isa : {FwdPairIsa::kAvx512, FwdPairIsa::kAvx2, FwdPairIsa::kSse2})
      if (fwd_pair_isa_supported(isa)) return isa;
    return FwdPairIsa::kPortable;
  }();
  return best;
}

float* FwdPairScratch::row(int Q, int K) {
  const std::size_t n = static_cast<std::size_t>(Q) * 3 * 4 * static_cast<std::size_t>(K);
  if (row_.size() < n) row_.resize(n);
  return row_.data();
}

void forward_parser_group(const OProfile& om, std::span<const FwdPairTarget> tg, FwdPairScratch& ws,
                          std::span<float> score, std::span<bool> ok, FwdPairIsa isa) {
  if (!is_local(om.mode))
    throw Error(ErrorKind::kInternal, "forward: implementation assumes a local alignment mode");
  if (!fwd_pair_isa_supported(isa))
    throw Error(ErrorKind::kInternal, "forward_parser_group: instruction set not available on this CPU");
  const auto K = static_cast<std::size_t>(fwd_group_size(isa));
  if (tg.size() != K || score.size() != K || ok.size() != K)
    throw Error(ErrorKind::kInternal, "forward_parser_group: the group size of the instruction set");
  for (const FwdPairTarget& t : tg)
    if (t.L < 0) throw Error(ErrorKind::kInternal, "forward: negative sequence length");
  const FwdPairModel m = fwd_pair_model(om);
  float* row = ws.row(m.Q, static_cast<int>(K));
  bool* oks = ok.data();
  switch (isa) {
    case FwdPairIsa::kAvx2:
#if defined(__x86_64__)
      fwd_pair_run_avx2(m, tg.data(), row, score.data(), oks);
      break;
#else
      throw Error(ErrorKind::kInternal, "forward_parser_group: AVX2 is not built");
#endif
    case FwdPairIsa::kAvx512:
#if defined(__x86_64__)
      fwd_pair_run_avx512(m, tg.data(), row, score.data(), oks);
      break;
#else
      throw Error(ErrorKind::kInternal, "forward_parser_group: AVX-512 is not built");
#endif
    case FwdPairIsa::kSse2:
#if defined(__SSE2__)
      GroupEngine<SsePair>::run(m, tg.data(), row, score.data(), oks);
      break;
#else
      throw Error(ErrorKind::kInternal, "forward_parser_group: SSE2 is not built");
#endif
    case FwdPairIsa::kPortable:
      GroupEngine<PortableGroup<2>>::run(m, tg.data(), row, score.data(), oks);
      break;
    case FwdPairIsa::kPortable4:
      GroupEngine<PortableGroup<4>>::run(m, tg.data(), row, score.data(), oks);
      break;
  }
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
  const std::size_t K = std::min<std::size_t>(4, static_cast<std::size_t>(fwd_group_size(isa)));
  for (std::size_t k = 0; k < targets.size(); k += K) {
    FwdPairTarget group[4];
    float s[4];
    bool ok[4];
    for (std::size_t t = 0; t < K; ++t)  // a short last group: empty targets (their dsq is never read)
      group[t] = k + t < targets.size() ? targets[k + t] : FwdPairTarget{};
    forward_parser_group(om, std::span<const FwdPairTarget>(group, K), ws, std::span<float>(s, K),
                         std::span<bool>(ok, K), isa);
    for (std::size_t t = 0; t < K && k + t < targets.size(); ++t)
      scores[k + t] = ok[t] ? s[t] : single(targets[k + t]);
  }
}

}  // namespace warpsearch::hmm
