// HMMER 3.3.2's SSV and MSV filters (impl_sse/ssvfilter.c, impl_sse/msvfilter.c): SSE2 striped
// implementations and plain-loop references computing the same saturating byte arithmetic.
//
// Score system (oprofile.hpp): unsigned bytes in 1/3-bit units, offset base_b = 190; 0 is -infinity.
// A match cell adds bias_b then subtracts the biased cost rbv (i.e. adds the rounded score), all with
// unsigned saturation. Special states: B = max(base, J) - (tjb + tbm), E = max_k M(i,k), J = max(J, E -
// tec); the score is J at the end: ((J - tjb) - base) / scale_b - 3 nats.
//
// SSV (Bjarne Knudsen's ssvfilter.c) drops the J state, which makes B constant, and shifts the origin so
// that B is signed -128: a cell is then v(i,k) = sat8(v(i-1,k-1) - sbv(k, x_i)) with signed 8-bit
// saturation, every diagonal starting at -128, and E = the UNSIGNED maximum of the cell bytes (initially
// 128). A diagonal can leave the negative range only after passing a value >= 255 - bias_b (each step
// adds at most bias_b), which is recorded in E, so E is exact up to the point where overflow is
// reported. The decision logic of p7_SSVFilter then returns a score, overflow (eslERANGE) or "no
// result" (eslENORESULT: rerun the full MSV with the J state).
#include "hmm/msvfilter.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "hmm/common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace warpsearch::hmm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// Unsigned / signed saturating byte arithmetic (_mm_adds_epu8, _mm_subs_epu8, _mm_subs_epi8).
inline uint8_t adds_u8(int a, int b) { return static_cast<uint8_t>(std::min(a + b, 255)); }
inline uint8_t subs_u8(int a, int b) { return static_cast<uint8_t>(std::max(a - b, 0)); }
inline int8_t subs_i8(int a, int b) { return static_cast<int8_t>(std::clamp(a - b, -128, 127)); }

}  // namespace

// ----------------------------------------------------------------------------------------------------
// Conversions from the integer end states (shared by every implementation).
// ----------------------------------------------------------------------------------------------------

/// Final conversion shared by SSV and MSV: J byte -> nats (C->T, and the -3 nat NN/CC/JJ term).
float msv_score_from_xj(int xJ, const OProfile& om, int tjb) {
  float sc = static_cast<float>(xJ - tjb) - static_cast<float>(om.base_b);
  sc /= om.scale_b;
  sc = static_cast<float>(static_cast<double>(sc) - 3.0);
  return sc;
}

/// p7_SSVFilter's decision logic given the SSV maximum byte xE (shared by the fast and reference code).
SsvResult ssv_decide(int xE_in, const OProfile& om, int tjb) {
  SsvResult r;
  const int bias = om.bias_b, base = om.base_b, tbm = om.tbm_b, tec = om.tec_b;
  if (xE_in >= 255 - bias) {  // overflow in the shifted system
    r.score = kInf;
    // Only certain for the real MSV if our baseline is not above the MSV's own.
    r.status = (base - tjb - tbm < 128) ? SsvStatus::kNoResult : SsvStatus::kRange;
    return r;
  }
  // Back to the MSV origin (uint16_t arithmetic as HMMER).
  uint16_t xE = static_cast<uint16_t>(xE_in);
  xE = static_cast<uint16_t>(xE + (base - tjb - tbm));
  xE = static_cast<uint16_t>(xE - 128);
  if (xE >= 255 - bias) {
    r.score = kInf;
    r.status = SsvStatus::kRange;
    return r;
  }
  const uint16_t xJ = static_cast<uint16_t>(xE - tec);
  if (xJ > base) {  // the J state could have been used: the full MSV must decide
    r.status = SsvStatus::kNoResult;
    return r;
  }
  r.status = SsvStatus::kOk;
  r.score = msv_score_from_xj(xJ, om, tjb);
  return r;
}

/// p7_SSVFilter's precondition for its shortcuts (else eslENORESULT straight away).
bool ssv_applicable(const OProfile& om, int tjb) { return tjb + om.tbm_b + om.tec_b + om.bias_b < 127; }

// ----------------------------------------------------------------------------------------------------
// References: plain loops over k.
// ----------------------------------------------------------------------------------------------------

int ssv_xe_reference(const uint8_t* dsq, int L, const OProfile& om) {
  const int M = om.M;
  // v[k] = cell (i-1, k) of the current diagonal sweep, as signed bytes; row 0 and column 0 are the
  // begin value -128. Iterating k downwards lets v[k-1] still hold row i-1 when row i's v[k] is made.
  std::vector<int8_t> v(static_cast<std::size_t>(M) + 1, static_cast<int8_t>(-128));
  int xE = 128;  // unsigned maximum of all cell bytes; starts at the begin value's byte (0x80)
  for (int i = 1; i <= L; i++) {
    const int x = dsq[i];
    for (int k = M; k >= 1; k--) {
      const int8_t cell = subs_i8(v[static_cast<std::size_t>(k) - 1], om.ssv_score(x, k));
      v[static_cast<std::size_t>(k)] = cell;
      xE = std::max(xE, static_cast<int>(static_cast<uint8_t>(cell)));
    }
    // v[0] stays -128: every diagonal begins at -128.
  }
  return xE;
}

SsvResult ssv_filter_reference(const uint8_t* dsq, int L, const OProfile& om) {
  if (!ssv_applicable(om, om.tjb_b)) return SsvResult{SsvStatus::kNoResult, 0.0f};
  return ssv_decide(ssv_xe_reference(dsq, L, om), om, om.tjb_b);
}

MsvState msv_full_state_reference(const uint8_t* dsq, int L, const OProfile& om) {
  const int M = om.M;
  const int bias = om.bias_b, base = om.base_b, tec = om.tec_b;
  // tjb + tbm as one byte (HMMER builds it with an int8 addition: wraps modulo 256).
  const int tjbm = static_cast<uint8_t>(om.tjb_b + om.tbm_b);
  // dp[k] = M(i-1, k) before row i is computed; dp[0] = 0 is -infinity (no M_0).
  std::vector<uint8_t> dp(static_cast<std::size_t>(M) + 1, 0);
  int xJ = 0;
  int xB = subs_u8(base, tjbm);
  for (int i = 1; i <= L; i++) {
    const int x = dsq[i];
    int xE = 0;
    for (int k = M; k >= 1; k--) {  // downwards: dp[k-1] is still row i-1
      int sv = std::max(static_cast<int>(dp[static_cast<std::size_t>(k) - 1]), xB);  // M(i-1,k-1) or B
      sv = adds_u8(sv, bias);
      sv = subs_u8(sv, om.msv_cost(x, k));
      dp[static_cast<std::size_t>(k)] = static_cast<uint8_t>(sv);
      xE = std::max(xE, sv);
    }
    if (adds_u8(xE, bias) == 255) return MsvState{0, true};  // may have saturated: overflow
    xE = subs_u8(xE, tec);
    xJ = std::max(xJ, xE);
    xB = subs_u8(std::max(base, xJ), tjbm);
  }
  return MsvState{xJ, false};
}

FilterScore msv_score_from_state(MsvState st, const OProfile& om, int tjb) {
  if (st.overflow) return FilterScore{kInf, true};
  return FilterScore{msv_score_from_xj(st.xJ, om, tjb), false};
}

FilterScore msv_filter_full_reference(const uint8_t* dsq, int L, const OProfile& om) {
  return msv_score_from_state(msv_full_state_reference(dsq, L, om), om, om.tjb_b);
}

FilterScore msv_filter_reference(const uint8_t* dsq, int L, const OProfile& om) {
  const SsvResult s = ssv_filter_reference(dsq, L, om);
  if (s.status == SsvStatus::kOk) return FilterScore{s.score, false};
  if (s.status == SsvStatus::kRange) return FilterScore{kInf, true};
  return msv_filter_full_reference(dsq, L, om);
}

// ----------------------------------------------------------------------------------------------------
// SSE2 implementations in HMMER's striped layout.
// ----------------------------------------------------------------------------------------------------
#if defined(__SSE2__)
namespace {

inline uint8_t hmax_epu8(__m128i a) {
  a = _mm_max_epu8(a, _mm_srli_si128(a, 8));
  a = _mm_max_epu8(a, _mm_srli_si128(a, 4));
  a = _mm_max_epu8(a, _mm_srli_si128(a, 2));
  a = _mm_max_epu8(a, _mm_srli_si128(a, 1));
  return static_cast<uint8_t>(_mm_extract_epi16(a, 0));
}

/// One SSV band of W adjacent striped diagonal vectors starting at vector q (calc_band_W of
/// ssvfilter.c). Register j holds the diagonals of striped vector (q + i + j) at sequence position i
/// (0-based). When a register reaches vector Q-1 it is shifted by one lane (continuing its diagonals
/// in the next lane at vector 0) and the new lane 0 gets the begin value 0x80; the score pointer is
/// not reset, which is what the 17 repeated vectors at the end of each sbv row are for.
template <int W>
__m128i calc_band(const uint8_t* dsq, int L, const OProfile& om, int q, __m128i beginv, __m128i xEv) {
  const int Q = om.Q16;
  const uint8_t* d = dsq + 1;  // d[i] = residue i+1, i = 0..L-1
  __m128i sv[W];
  for (int j = 0; j < W; j++) sv[j] = beginv;
  auto row = [&](int pos) { return reinterpret_cast<const __m128i*>(om.sbv_row(d[pos])); };
  auto step = [&](const __m128i* rsc) {
#pragma GCC unroll 16
    for (int j = 0; j < W; j++) {
      sv[j] = _mm_subs_epi8(sv[j], _mm_load_si128(rsc + j));
      xEv = _mm_max_epu8(xEv, sv[j]);
    }
  };
  // The shift phase (CONVERT_W): registers W-1 .. 0 reach vector Q-1 in turn. Returns false when the
  // sequence ended (only checked when check = true).
  auto convert = [&](int& i, bool check) {
#pragma GCC unroll 16
    for (int m = W - 1; m >= 0; m--) {
      if (check && i >= L) return false;
      step(reinterpret_cast<const __m128i*>(om.sbv_row(d[i])) + (Q - 1 - m));
      sv[m] = _mm_or_si128(_mm_slli_si128(sv[m], 1), beginv);
      i++;
    }
    return true;
  };

  int i;
  for (i = 0; i < L && i < Q - q - W; i++) step(row(i) + i + q);
  i = Q - q - W;
  convert(i, true);

  int i2;
  for (i2 = Q - q; i2 < L - Q; i2 += Q) {
    for (i = 0; i < Q - W; i++) step(row(i2 + i) + i);
    i += i2;
    convert(i, false);
  }
  for (i = 0; i2 + i < L && i < Q - W; i++) step(row(i2 + i) + i);
  i += i2;
  convert(i, true);
  return xEv;
}

constexpr int kMaxBands = 14;  // HMMER's MAX_BANDS on x86-64

__m128i calc_band_w(int w, const uint8_t* dsq, int L, const OProfile& om, int q, __m128i beginv,
                    __m128i xEv) {
  switch (w) {
    case 1: return calc_band<1>(dsq, L, om, q, beginv, xEv);
    case 2: return calc_band<2>(dsq, L, om, q, beginv, xEv);
    case 3: return calc_band<3>(dsq, L, om, q, beginv, xEv);
    case 4: return calc_band<4>(dsq, L, om, q, beginv, xEv);
    case 5: return calc_band<5>(dsq, L, om, q, beginv, xEv);
    case 6: return calc_band<6>(dsq, L, om, q, beginv, xEv);
    case 7: return calc_band<7>(dsq, L, om, q, beginv, xEv);
    case 8: return calc_band<8>(dsq, L, om, q, beginv, xEv);
    case 9: return calc_band<9>(dsq, L, om, q, beginv, xEv);
    case 10: return calc_band<10>(dsq, L, om, q, beginv, xEv);
    case 11: return calc_band<11>(dsq, L, om, q, beginv, xEv);
    case 12: return calc_band<12>(dsq, L, om, q, beginv, xEv);
    case 13: return calc_band<13>(dsq, L, om, q, beginv, xEv);
    default: return calc_band<14>(dsq, L, om, q, beginv, xEv);
  }
}

/// get_xE of ssvfilter.c: all diagonals, in ceil(Q/14) bands of nearly equal width.
uint8_t ssv_get_xe(const uint8_t* dsq, int L, const OProfile& om) {
  const int Q = om.Q16;
  const __m128i beginv = _mm_set1_epi8(-128);
  __m128i xEv = beginv;
  const int bands = (Q + kMaxBands - 1) / kMaxBands;
  int last_q = 0;
  for (int b = 0; b < bands; b++) {
    const int q = (Q * (b + 1)) / bands;
    xEv = calc_band_w(q - last_q, dsq, L, om, last_q, beginv, xEv);
    last_q = q;
  }
  return hmax_epu8(xEv);
}

}  // namespace

SsvResult ssv_filter(const uint8_t* dsq, int L, const OProfile& om) {
  if (!ssv_applicable(om, om.tjb_b)) return SsvResult{SsvStatus::kNoResult, 0.0f};
  return ssv_decide(ssv_get_xe(dsq, L, om), om, om.tjb_b);
}

FilterScore msv_filter_full(const uint8_t* dsq, int L, const OProfile& om) {
  const int Q = om.Q16;
  // One row of M cells: dp[q] holds striped vector q of M(i-1) (then M(i) after the store).
  AlignedVector<uint8_t> dp_mem(static_cast<std::size_t>(Q) * 16, 0);
  __m128i* dp = reinterpret_cast<__m128i*>(dp_mem.data());
  const __m128i biasv = _mm_set1_epi8(static_cast<char>(om.bias_b));
  const __m128i ceilingv = _mm_cmpeq_epi8(biasv, biasv);
  const __m128i basev = _mm_set1_epi8(static_cast<char>(om.base_b));
  const __m128i tjbmv = _mm_set1_epi8(static_cast<char>(static_cast<uint8_t>(om.tjb_b + om.tbm_b)));
  const __m128i tecv = _mm_set1_epi8(static_cast<char>(om.tec_b));
  __m128i xJv = _mm_setzero_si128();
  __m128i xBv = _mm_subs_epu8(basev, tjbmv);

  for (int i = 1; i <= L; i++) {
    const __m128i* rsc = reinterpret_cast<const __m128i*>(om.rbv_row(dsq[i]));
    __m128i xEv = _mm_setzero_si128();
    // M(i-1, k-1) for vector 0: last vector shifted up one lane, 0 (-inf) into lane 0.
    __m128i mpv = _mm_slli_si128(dp[static_cast<std::size_t>(Q) - 1], 1);
    for (int q = 0; q < Q; q++) {
      __m128i sv = _mm_max_epu8(mpv, xBv);
      sv = _mm_adds_epu8(sv, biasv);
      sv = _mm_subs_epu8(sv, _mm_load_si128(rsc + q));
      xEv = _mm_max_epu8(xEv, sv);
      mpv = dp[static_cast<std::size_t>(q)];
      dp[static_cast<std::size_t>(q)] = sv;
    }
    // Overflow: some lane of E may have saturated.
    const int cmp = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_adds_epu8(xEv, biasv), ceilingv));
    // Horizontal max broadcast to all lanes (same reduction as HMMER).
    __m128i t = _mm_shuffle_epi32(xEv, _MM_SHUFFLE(2, 3, 0, 1));
    xEv = _mm_max_epu8(xEv, t);
    t = _mm_shuffle_epi32(xEv, _MM_SHUFFLE(0, 1, 2, 3));
    xEv = _mm_max_epu8(xEv, t);
    t = _mm_shufflelo_epi16(xEv, _MM_SHUFFLE(2, 3, 0, 1));
    xEv = _mm_max_epu8(xEv, t);
    t = _mm_srli_si128(xEv, 1);
    xEv = _mm_max_epu8(xEv, t);
    xEv = _mm_shuffle_epi32(xEv, _MM_SHUFFLE(0, 0, 0, 0));
    if (cmp != 0) return FilterScore{kInf, true};

    xEv = _mm_subs_epu8(xEv, tecv);
    xJv = _mm_max_epu8(xJv, xEv);
    xBv = _mm_max_epu8(basev, xJv);
    xBv = _mm_subs_epu8(xBv, tjbmv);
  }
  const int xJ = static_cast<uint8_t>(_mm_extract_epi16(xJv, 0));
  return FilterScore{msv_score_from_xj(xJ, om, om.tjb_b), false};
}

FilterScore msv_filter(const uint8_t* dsq, int L, const OProfile& om) {
  const SsvResult s = ssv_filter(dsq, L, om);
  if (s.status == SsvStatus::kOk) return FilterScore{s.score, false};
  if (s.status == SsvStatus::kRange) return FilterScore{kInf, true};
  return msv_filter_full(dsq, L, om);
}

#else  // portable build: the references are the implementation

SsvResult ssv_filter(const uint8_t* dsq, int L, const OProfile& om) {
  return ssv_filter_reference(dsq, L, om);
}
FilterScore msv_filter_full(const uint8_t* dsq, int L, const OProfile& om) {
  return msv_filter_full_reference(dsq, L, om);
}
FilterScore msv_filter(const uint8_t* dsq, int L, const OProfile& om) {
  return msv_filter_reference(dsq, L, om);
}

#endif

}  // namespace warpsearch::hmm
