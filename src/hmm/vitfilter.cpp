// HMMER 3.3.2's Viterbi filter (impl_sse/vitfilter.c p7_ViterbiFilter): SSE2 striped implementation
// with lazy F, and the plain-loop reference computing the same 16-bit saturating function.
//
// Score system (oprofile.hpp): signed words in 1/500-bit units, offset base_w = 12000, -32768 is
// -infinity; every addition saturates (_mm_adds_epi16). Row i recurrences, k = 1..M:
//   M(i,k) = sat( max( sat(B(i-1) + tBM(k)), sat(M(i-1,k-1) + tMM(k)), sat(I(i-1,k-1) + tIM(k)),
//                      sat(D(i-1,k-1) + tDM(k)) ) + e(k, x_i) )
//   I(i,k) = max( sat(M(i-1,k) + tMI(k)), sat(I(i-1,k) + tII(k)) )
//   D(i,k) = max( sat(M(i,k-1) + tMD(k-1)), sat(D(i,k-1) + tDD(k-1)) ),  D(i,1) = -inf
// (t*(k) are the twv slots of oprofile.hpp: slot k of BM/MM/IM/DM is the transition into node k.)
//   E = max_k M(i,k); overflow if E >= 32767.  N = N + 0;  C = max(C + 0, E + tEC);
//   J = max(J + 0, E + tEJ);  B = max(J + tJB, N + tNB)  (int arithmetic stored in int16).
//   score = ((C + tCT) - base_w) / scale_w - 3 nats, or -inf when C = -32768.
// The striped code evaluates D->D paths lazily (only when max_k D + ddbound_w > B), which cannot
// change any M value and hence the score (see oprofile.hpp ddbound_w); the reference always does
// the full D->D propagation.
#include "hmm/vitfilter.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace warpsearch::hmm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int kNegInf = -32768;

/// _mm_adds_epi16 on one lane.
inline int adds16(int a, int b) { return std::clamp(a + b, -32768, 32767); }

/// The special-state update after row i (HMMER's int16_t variables, int arithmetic, C conversion).
struct VitSpecials {
  int16_t xN, xB, xJ, xC;
  void update(int xE, const OProfile& om) {
    xN = static_cast<int16_t>(xN + om.xw[kON][kOLoop]);
    xC = static_cast<int16_t>(std::max(xC + om.xw[kOC][kOLoop], xE + om.xw[kOE][kOMove]));
    xJ = static_cast<int16_t>(std::max(xJ + om.xw[kOJ][kOLoop], xE + om.xw[kOE][kOLoop]));
    xB = static_cast<int16_t>(std::max(xJ + om.xw[kOJ][kOMove], xN + om.xw[kON][kOMove]));
  }
};

VitSpecials vit_init(const OProfile& om) {
  VitSpecials s{};
  s.xN = om.base_w;
  s.xB = static_cast<int16_t>(s.xN + om.xw[kON][kOMove]);
  s.xJ = kNegInf;
  s.xC = kNegInf;
  return s;
}

}  // namespace

float vit_score_from_xc(int xC, const OProfile& om, int move) {
  if (xC <= kNegInf) return -kInf;
  float sc = static_cast<float>(xC) + static_cast<float>(move) - static_cast<float>(om.base_w);
  sc /= om.scale_w;
  sc = static_cast<float>(static_cast<double>(sc) - 3.0);
  return sc;
}

FilterScore vit_score_from_state(VitState st, const OProfile& om, int move) {
  if (st.overflow) return FilterScore{kInf, true};
  return FilterScore{vit_score_from_xc(st.xC, om, move), false};
}

VitState viterbi_state_reference(const uint8_t* dsq, int L, const OProfile& om) {
  const int M = om.M;
  const auto n = static_cast<std::size_t>(M) + 1;
  // Previous row (p*) and current row (c*), index k = 0..M; index 0 stays -inf (there is no node 0).
  std::vector<int> pM(n, kNegInf), pI(n, kNegInf), pD(n, kNegInf);
  std::vector<int> cM(n, kNegInf), cI(n, kNegInf), cD(n, kNegInf);
  VitSpecials s = vit_init(om);

  for (int i = 1; i <= L; i++) {
    const int x = dsq[i];
    int xE = kNegInf;
    for (int k = 1; k <= M; k++) {
      const auto uk = static_cast<std::size_t>(k);
      int sv = adds16(s.xB, om.vit_trans(kOBM, k));
      sv = std::max(sv, adds16(pM[uk - 1], om.vit_trans(kOMM, k)));
      sv = std::max(sv, adds16(pI[uk - 1], om.vit_trans(kOIM, k)));
      sv = std::max(sv, adds16(pD[uk - 1], om.vit_trans(kODM, k)));
      sv = adds16(sv, om.vit_match(x, k));
      cM[uk] = sv;
      xE = std::max(xE, sv);
      cI[uk] = std::max(adds16(pM[uk], om.vit_trans(kOMI, k)), adds16(pI[uk], om.vit_trans(kOII, k)));
      cD[uk] = k == 1 ? kNegInf
                      : std::max(adds16(cM[uk - 1], om.vit_trans(kOMD, k - 1)),
                                 adds16(cD[uk - 1], om.vit_trans(kODD, k - 1)));
    }
    if (xE >= 32767) return VitState{-32768, true};
    s.update(xE, om);
    std::swap(pM, cM);
    std::swap(pI, cI);
    std::swap(pD, cD);
  }
  return VitState{s.xC, false};
}

FilterScore viterbi_filter_reference(const uint8_t* dsq, int L, const OProfile& om) {
  return vit_score_from_state(viterbi_state_reference(dsq, L, om), om, om.xw[kOC][kOMove]);
}

#if defined(__SSE2__)
namespace {

inline int16_t hmax_epi16(__m128i a) {
  a = _mm_max_epi16(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)));
  a = _mm_max_epi16(a, _mm_shufflelo_epi16(a, _MM_SHUFFLE(1, 0, 3, 2)));
  a = _mm_max_epi16(a, _mm_srli_epi32(a, 16));
  return static_cast<int16_t>(_mm_cvtsi128_si32(a));
}

inline bool any_gt_epi16(__m128i a, __m128i b) { return _mm_movemask_epi8(_mm_cmpgt_epi16(a, b)) != 0; }

}  // namespace

FilterScore viterbi_filter(const uint8_t* dsq, int L, const OProfile& om) {
  const int Q = om.Q8;
  // One DP row, striped: dp[q*3 + {0,1,2}] = M, D, I vectors of striped position q.
  AlignedVector<int16_t> dp_mem(static_cast<std::size_t>(Q) * 3 * 8, int16_t{-32768});
  __m128i* dp = reinterpret_cast<__m128i*>(dp_mem.data());
  auto MMX = [&](int q) -> __m128i& { return dp[static_cast<std::size_t>(q) * 3 + 0]; };
  auto DMX = [&](int q) -> __m128i& { return dp[static_cast<std::size_t>(q) * 3 + 1]; };
  auto IMX = [&](int q) -> __m128i& { return dp[static_cast<std::size_t>(q) * 3 + 2]; };
  const __m128i* twv = reinterpret_cast<const __m128i*>(om.twv.data());
  // -32768 in lane 0, zeros elsewhere: OR-ed into a vector just shifted up by one lane.
  const __m128i negInfv = _mm_srli_si128(_mm_set1_epi16(-32768), 14);
  VitSpecials s = vit_init(om);

  for (int i = 1; i <= L; i++) {
    const __m128i* rsc = reinterpret_cast<const __m128i*>(om.rwv_row(dsq[i]));
    const __m128i* tsc = twv;
    __m128i dcv = _mm_set1_epi16(-32768);
    __m128i xEv = _mm_set1_epi16(-32768);
    __m128i Dmaxv = _mm_set1_epi16(-32768);
    const __m128i xBv = _mm_set1_epi16(s.xB);

    __m128i mpv = _mm_or_si128(_mm_slli_si128(MMX(Q - 1), 2), negInfv);
    __m128i dpv = _mm_or_si128(_mm_slli_si128(DMX(Q - 1), 2), negInfv);
    __m128i ipv = _mm_or_si128(_mm_slli_si128(IMX(Q - 1), 2), negInfv);

    for (int q = 0; q < Q; q++) {
      __m128i sv = _mm_adds_epi16(xBv, *tsc++);
      sv = _mm_max_epi16(sv, _mm_adds_epi16(mpv, *tsc++));
      sv = _mm_max_epi16(sv, _mm_adds_epi16(ipv, *tsc++));
      sv = _mm_max_epi16(sv, _mm_adds_epi16(dpv, *tsc++));
      sv = _mm_adds_epi16(sv, rsc[q]);
      xEv = _mm_max_epi16(xEv, sv);

      mpv = MMX(q);
      dpv = DMX(q);
      ipv = IMX(q);
      MMX(q) = sv;
      DMX(q) = dcv;  // delayed store of D(i,q) (M->D part)

      dcv = _mm_adds_epi16(sv, *tsc++);  // M->D into the next position
      Dmaxv = _mm_max_epi16(dcv, Dmaxv);

      sv = _mm_adds_epi16(mpv, *tsc++);
      IMX(q) = _mm_max_epi16(sv, _mm_adds_epi16(ipv, *tsc++));
    }

    const int xE = hmax_epi16(xEv);
    if (xE >= 32767) return FilterScore{kInf, true};
    s.update(xE, om);

    // Lazy F: D->D paths only when they might beat B->M on the next row.
    const int Dmax = hmax_epi16(Dmaxv);
    if (Dmax + om.ddbound_w > s.xB) {
      dcv = _mm_or_si128(_mm_slli_si128(dcv, 2), negInfv);
      tsc = twv + 7 * Q;
      for (int q = 0; q < Q; q++) {
        DMX(q) = _mm_max_epi16(dcv, DMX(q));
        dcv = _mm_adds_epi16(DMX(q), *tsc++);
      }
      int q;
      do {  // further passes while a segment-boundary crossing still improves some D
        dcv = _mm_or_si128(_mm_slli_si128(dcv, 2), negInfv);
        tsc = twv + 7 * Q;
        for (q = 0; q < Q; q++) {
          if (!any_gt_epi16(dcv, DMX(q))) break;
          DMX(q) = _mm_max_epi16(dcv, DMX(q));
          dcv = _mm_adds_epi16(DMX(q), *tsc++);
        }
      } while (q == Q);
    } else {
      DMX(0) = _mm_or_si128(_mm_slli_si128(dcv, 2), negInfv);
    }
  }
  return FilterScore{vit_score_from_xc(s.xC, om, om.xw[kOC][kOMove]), false};
}

#else

FilterScore viterbi_filter(const uint8_t* dsq, int L, const OProfile& om) {
  return viterbi_filter_reference(dsq, L, om);
}

#endif

}  // namespace warpsearch::hmm
