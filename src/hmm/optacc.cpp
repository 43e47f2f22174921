// Optimal accuracy DP and traceback (HMMER 3.3.2 impl_sse/optacc.c).
//
// Fill: 4-lane float vectors on the striped layout (vector q holds nodes k = z*Q + q + 1, lanes z = 0..3).
// Row i is computed from row i-1 (M, I) and from itself (D, via HMMER's serialized D->D passes: one pass
// with the M->D contributions, then three passes propagating D->D across lanes). A transition that has
// probability 0 in the profile masks its source to +0.0 (SSE and-not-zero mask), not to -inf; the
// results therefore depend on the exact max/and order, which is reproduced operation by operation.
// The fill is a template over the lane-operation set: SSE2 intrinsics (OaSse) or the portable lane-by-lane
// equivalent (OaPortable, also used without SSE2); both give identical bits.
//
// Traceback: scalar reads of single lanes, with HMMER's tie-breaking rules (see optacc.hpp).
#include "hmm/optacc.hpp"

#include <cmath>
#include <cstddef>
#include <limits>

#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/striped_cells.hpp"
#include "hmm/trace.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- the lane operations of the fill: vf4's op sets plus max, zero-transition mask and hmax ----------
/// Portable lanes: max(a, b) = a > b ? a : b (MAXPS semantics: b on ties and NaN), mask(t, v) = t > 0 ? v
/// : +0.0f (and with a cmpgt mask), hmax = max(max(a0, a1), max(a2, a3)) (esl_sse_hmax_ps's lane 0).
struct OaPortable : vf4::Portable {
  static float smax(float a, float b) { return a > b ? a : b; }
  static V max(V a, V b) {
    return V{{smax(a.x[0], b.x[0]), smax(a.x[1], b.x[1]), smax(a.x[2], b.x[2]), smax(a.x[3], b.x[3])}};
  }
  static V mask(V t, V v) {
    V r;
    for (int z = 0; z < 4; ++z) r.x[z] = t.x[z] > 0.0f ? v.x[z] : 0.0f;
    return r;
  }
  static float hmax(V a) {
    const float m01 = smax(a.x[0], a.x[1]);
    const float m23 = smax(a.x[2], a.x[3]);
    return smax(m01, m23);
  }
};

#if defined(__SSE2__)
struct OaSse : vf4::Sse {
  static V max(V a, V b) { return _mm_max_ps(a, b); }
  static V mask(V t, V v) { return _mm_and_ps(_mm_cmpgt_ps(t, _mm_setzero_ps()), v); }
  static float hmax(V a) {
    a = _mm_max_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(0, 3, 2, 1)));
    a = _mm_max_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    float r;
    _mm_store_ss(&r, a);
    return r;
  }
};
using OaNative = OaSse;
#else
using OaNative = OaPortable;
#endif

inline float esl_max(float a, float b) { return a > b ? a : b; }  // ESL_MAX

/// Single-lane reads of the striped matrices and transitions (striped_cells.hpp).
using Cells = StripedCells;

/// Posterior probability recorded in the trace for state scur reached from sprv at (i, k).
float get_postprob(const Omx& pp, TraceState scur, TraceState sprv, int k, int i) {
  const int Q = Omx::nqf(pp.M);
  switch (scur) {
    case kTM:
      return pp.row(i)[(static_cast<std::size_t>((k - 1) % Q) * kOmxNSCells + kOmxM) * 4 +
                       static_cast<std::size_t>((k - 1) / Q)];
    case kTI:
      return pp.row(i)[(static_cast<std::size_t>((k - 1) % Q) * kOmxNSCells + kOmxI) * 4 +
                       static_cast<std::size_t>((k - 1) / Q)];
    case kTN: return sprv == scur ? pp.x(i, kOmxN) : 0.0f;
    case kTC: return sprv == scur ? pp.x(i, kOmxC) : 0.0f;
    case kTJ: return sprv == scur ? pp.x(i, kOmxJ) : 0.0f;
    default: return 0.0f;
  }
}

// M(i,k) from M/I/D(i-1,k-1) or B(i-1); ties prefer M, then I, then D, then B (first argmax).
TraceState select_m(const Cells& c, int i, int k) {
  const int q = (k - 1) % c.Q();
  const int r = (k - 1) / c.Q();
  float path[4];
  path[3] = (c.tf(7 * q + kOBM, r) == 0.0f) ? kNegInf : c.x(i - 1, kOmxB);
  path[0] = (c.tf(7 * q + kOMM, r) == 0.0f) ? kNegInf : c.dp_prev(i - 1, q, kOmxM, r);
  path[1] = (c.tf(7 * q + kOIM, r) == 0.0f) ? kNegInf : c.dp_prev(i - 1, q, kOmxI, r);
  path[2] = (c.tf(7 * q + kODM, r) == 0.0f) ? kNegInf : c.dp_prev(i - 1, q, kOmxD, r);
  int best = 0;  // esl_vec_FArgMax: first index of the maximum
  for (int j = 1; j < 4; ++j)
    if (path[j] > path[best]) best = j;
  static constexpr TraceState kState[4] = {kTM, kTI, kTD, kTB};
  return kState[best];
}

// D(i,k) from M(i,k-1) or D(i,k-1); ties prefer M.
TraceState select_d(const Cells& c, int i, int k) {
  const int q = (k - 1) % c.Q();
  const int r = (k - 1) / c.Q();
  const float p0 = (c.tf_prev(q, kOMD, r) == 0.0f) ? kNegInf : c.dp_prev(i, q, kOmxM, r);
  const float p1 = (c.tf_prev(q, kODD, r) == 0.0f) ? kNegInf : c.dp_prev(i, q, kOmxD, r);
  return p0 >= p1 ? kTM : kTD;
}

// I(i,k) from M(i-1,k) or I(i-1,k); ties prefer M.
TraceState select_i(const Cells& c, int i, int k) {
  const int q = (k - 1) % c.Q();
  const int r = (k - 1) / c.Q();
  const float p0 = (c.tf(7 * q + kOMI, r) == 0.0f) ? kNegInf : c.dp(i - 1, q, kOmxM, r);
  const float p1 = (c.tf(7 * q + kOII, r) == 0.0f) ? kNegInf : c.dp(i - 1, q, kOmxI, r);
  return p0 >= p1 ? kTM : kTI;
}

// C(i) from C(i-1) or E(i); ties prefer E.
TraceState select_c(const OProfile& om, const Omx& pp, const Cells& c, int i) {
  const float p0 = (om.xf[kOC][kOLoop] == 0.0f) ? kNegInf : c.x(i - 1, kOmxC) + pp.x(i, kOmxC);
  const float p1 = (om.xf[kOE][kOMove] == 0.0f) ? kNegInf : c.x(i, kOmxE);
  return p0 > p1 ? kTC : kTE;
}

// J(i) from J(i-1) or E(i); ties prefer E.
TraceState select_j(const OProfile& om, const Omx& pp, const Cells& c, int i) {
  const float p0 = (om.xf[kOJ][kOLoop] == 0.0f) ? kNegInf : c.x(i - 1, kOmxJ) + pp.x(i, kOmxJ);
  const float p1 = (om.xf[kOE][kOLoop] == 0.0f) ? kNegInf : c.x(i, kOmxE);
  return p0 > p1 ? kTJ : kTE;
}

// E(i) from any M(i,k) or D(i,k): striped scan, M lanes win ties (>=) over everything seen so far, D lanes
// need a strict improvement.
TraceState select_e(const Cells& c, int i, int* ret_k) {
  float max = kNegInf;
  TraceState smax = kTBogus;
  int kmax = 0;
  const int Q = c.Q();
  for (int q = 0; q < Q; ++q) {
    for (int r = 0; r < 4; ++r) {
      const float v = c.dp(i, q, kOmxM, r);
      if (v >= max) {
        max = v;
        smax = kTM;
        kmax = r * Q + q + 1;
      }
    }
    for (int r = 0; r < 4; ++r) {
      const float v = c.dp(i, q, kOmxD, r);
      if (v > max) {
        max = v;
        smax = kTD;
        kmax = r * Q + q + 1;
      }
    }
  }
  if (smax == kTBogus) throw Error(ErrorKind::kInternal, "OA traceback: no source for E");
  *ret_k = kmax;
  return smax;
}

// B(i) from N(i) or J(i); ties prefer J.
TraceState select_b(const OProfile& om, const Cells& c, int i) {
  const float p0 = (om.xf[kON][kOMove] == 0.0f) ? kNegInf : c.x(i, kOmxN);
  const float p1 = (om.xf[kOJ][kOMove] == 0.0f) ? kNegInf : c.x(i, kOmxJ);
  return p0 > p1 ? kTN : kTJ;
}

}  // namespace

namespace {

template <class Ops>
float oa_fill(const OProfile& om, const Omx& pp, Omx& ox) {
  using V = typename Ops::V;
  const int M = om.M;
  const int Q = nqf(M);
  const int L = pp.L;
  if (!ox.fits_full(M, L)) throw Error(ErrorKind::kInternal, "optimal_accuracy: OA matrix too small");
  if (pp.validR <= L || Omx::nqf(pp.M) != Q)
    throw Error(ErrorKind::kInternal,
                "optimal_accuracy: posterior matrix is not a full matrix of this model");
  const V infv = Ops::set1(kNegInf);
  const float* tf0 = om.tfv.data();
  auto tfv = [tf0](int v) { return Ops::load(tf0 + static_cast<std::size_t>(v) * 4); };

  ox.M = M;
  ox.L = L;
  // Row i vector (q, s) is at ox.row(i) + (q*3 + s)*4.
  {
    float* dpc = ox.row(0);
    for (int q = 0; q < Q; ++q)
      for (int s = 0; s < kOmxNSCells; ++s) Ops::store(dpc + (q * kOmxNSCells + s) * 4, infv);
  }
  ox.x(0, kOmxE) = kNegInf;
  ox.x(0, kOmxN) = 0.0f;
  ox.x(0, kOmxJ) = kNegInf;
  ox.x(0, kOmxB) = 0.0f;
  ox.x(0, kOmxC) = kNegInf;

  for (int i = 1; i <= L; ++i) {
    const float* dpp = ox.row(i - 1);
    float* dpc = ox.row(i);
    const float* ppp = pp.row(i);
    auto at = [](auto* row, int q, int s) { return row + (q * kOmxNSCells + s) * 4; };

    V dcv = infv;
    V xEv = infv;
    const V xBv = Ops::set1(ox.x(i - 1, kOmxB));
    // Node k-1 of vector 0 is the last vector's lane shifted right by one; lane 0 gets -inf.
    V mpv = Ops::rightshift(Ops::load(at(dpp, Q - 1, kOmxM)), infv);
    V dpv = Ops::rightshift(Ops::load(at(dpp, Q - 1, kOmxD)), infv);
    V ipv = Ops::rightshift(Ops::load(at(dpp, Q - 1, kOmxI)), infv);
    for (int q = 0; q < Q; ++q) {
      const int t = 7 * q;
      V sv = Ops::mask(tfv(t + kOBM), xBv);
      sv = Ops::max(sv, Ops::mask(tfv(t + kOMM), mpv));
      sv = Ops::max(sv, Ops::mask(tfv(t + kOIM), ipv));
      sv = Ops::max(sv, Ops::mask(tfv(t + kODM), dpv));
      sv = Ops::add(sv, Ops::load(at(ppp, q, kOmxM)));
      xEv = Ops::max(xEv, sv);

      mpv = Ops::load(at(dpp, q, kOmxM));
      dpv = Ops::load(at(dpp, q, kOmxD));
      ipv = Ops::load(at(dpp, q, kOmxI));

      Ops::store(at(dpc, q, kOmxM), sv);
      Ops::store(at(dpc, q, kOmxD), dcv);

      dcv = Ops::mask(tfv(t + kOMD), sv);

      sv = Ops::mask(tfv(t + kOMI), mpv);
      sv = Ops::max(sv, Ops::mask(tfv(t + kOII), ipv));
      Ops::store(at(dpc, q, kOmxI), Ops::add(sv, Ops::load(at(ppp, q, kOmxI))));
    }

    // M->D paths carried out of the last vector, then D->D, serialized over the four lanes.
    dcv = Ops::rightshift(dcv, infv);
    for (int q = 0; q < Q; ++q) {
      const V d = Ops::max(dcv, Ops::load(at(dpc, q, kOmxD)));
      Ops::store(at(dpc, q, kOmxD), d);
      dcv = Ops::mask(tfv(7 * Q + q), d);
    }
    for (int j = 1; j < 3; ++j) {
      dcv = Ops::rightshift(dcv, infv);
      for (int q = 0; q < Q; ++q) {
        Ops::store(at(dpc, q, kOmxD), Ops::max(dcv, Ops::load(at(dpc, q, kOmxD))));
        dcv = Ops::mask(tfv(7 * Q + q), dcv);
      }
    }
    // The third pass leaves the D values final, and E takes their maximum as they are stored (HMMER:
    // a sweep xEv = max(xEv, D(q)) of its own after the passes; the same maxima in the same order).
    dcv = Ops::rightshift(dcv, infv);
    for (int q = 0; q < Q; ++q) {
      const V d = Ops::max(dcv, Ops::load(at(dpc, q, kOmxD)));
      Ops::store(at(dpc, q, kOmxD), d);
      xEv = Ops::max(xEv, d);
      dcv = Ops::mask(tfv(7 * Q + q), dcv);
    }
    ox.x(i, kOmxE) = Ops::hmax(xEv);

    float t1 = (om.xf[kOJ][kOLoop] == 0.0f) ? 0.0f : ox.x(i - 1, kOmxJ) + pp.x(i, kOmxJ);
    float t2 = (om.xf[kOE][kOLoop] == 0.0f) ? 0.0f : ox.x(i, kOmxE);
    ox.x(i, kOmxJ) = esl_max(t1, t2);

    t1 = (om.xf[kOC][kOLoop] == 0.0f) ? 0.0f : ox.x(i - 1, kOmxC) + pp.x(i, kOmxC);
    t2 = (om.xf[kOE][kOMove] == 0.0f) ? 0.0f : ox.x(i, kOmxE);
    ox.x(i, kOmxC) = esl_max(t1, t2);

    ox.x(i, kOmxN) = (om.xf[kON][kOLoop] == 0.0f) ? 0.0f : ox.x(i - 1, kOmxN) + pp.x(i, kOmxN);

    t1 = (om.xf[kON][kOMove] == 0.0f) ? 0.0f : ox.x(i, kOmxN);
    t2 = (om.xf[kOJ][kOMove] == 0.0f) ? 0.0f : ox.x(i, kOmxJ);
    ox.x(i, kOmxB) = esl_max(t1, t2);
  }
  return ox.x(L, kOmxC);
}

}  // namespace

float optimal_accuracy(const OProfile& om, const Omx& pp, Omx& ox) { return oa_fill<OaNative>(om, pp, ox); }

float optimal_accuracy_portable(const OProfile& om, const Omx& pp, Omx& ox) {
  return oa_fill<OaPortable>(om, pp, ox);
}

void oa_trace(const OProfile& om, const Omx& pp, const Omx& ox, Trace& tr) {
  if (tr.N != 0) throw Error(ErrorKind::kInternal, "OA traceback: trace not empty");
  if (!tr.has_pp) throw Error(ErrorKind::kInternal, "OA traceback: trace has no posterior probabilities");
  const Cells c(om, ox);
  int i = ox.L;
  int k = 0;
  tr.append_with_pp(kTT, k, i, 0.0f);
  tr.append_with_pp(kTC, k, i, 0.0f);
  TraceState s0 = kTC;
  while (s0 != kTS) {
    TraceState s1 = kTBogus;
    switch (s0) {
      case kTM:
        s1 = select_m(c, i, k);
        --k;
        --i;
        break;
      case kTD:
        s1 = select_d(c, i, k);
        --k;
        break;
      case kTI:
        s1 = select_i(c, i, k);
        --i;
        break;
      case kTN: s1 = (i == 0) ? kTS : kTN; break;
      case kTC: s1 = select_c(om, pp, c, i); break;
      case kTJ: s1 = select_j(om, pp, c, i); break;
      case kTE: s1 = select_e(c, i, &k); break;
      case kTB: s1 = select_b(om, c, i); break;
      default: throw Error(ErrorKind::kInternal, "OA traceback: bogus state");
    }
    const float postprob = get_postprob(pp, s1, s0, k, i);
    tr.append_with_pp(s1, k, i, postprob);
    if ((s1 == kTN || s1 == kTJ || s1 == kTC) && s1 == s0) --i;
    s0 = s1;
  }
  tr.M = om.M;
  tr.L = ox.L;
  tr.reverse();
}

}  // namespace warpsearch::hmm
