// Stochastic traceback of a striped Forward matrix (HMMER 3.3.2 impl_sse/stotrace.c). Every path weight
// HMMER computes is one float product of two (or three) lane values of the striped matrices, so the
// choices here read single lanes and do the same scalar float operations, which are bit-identical to
// HMMER's 4-lane SSE products (IEEE single precision per lane, same rounding mode and FTZ setting).
//
// Lane addressing: node k lives in vector q = (k-1) % Q, lane r = (k-1) / Q (Q = nqf(fwd.M)). The
// predecessor node k-1 of a cell in vector q > 0 is lane r of vector q-1; for q == 0 it is lane r-1 of
// vector Q-1 (esl_sse_rightshift_ps of vector Q-1 with a zero vector: lane 0 gets 0); the reads are
// StripedCells (striped_cells.hpp), shared with optacc.cpp.
#include "hmm/stotrace.hpp"

#include <cstddef>

#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/rng.hpp"
#include "hmm/striped_cells.hpp"
#include "hmm/trace.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

namespace {

/// Single-lane reads of the striped matrices and transitions (striped_cells.hpp).
using Cells = StripedCells;

// M(i,k) comes from B(i-1), M(i-1,k-1), I(i-1,k-1) or D(i-1,k-1).
TraceState select_m(Rng& rng, const Cells& c, int i, int k) {
  const int q = (k - 1) % c.Q();
  const int r = (k - 1) / c.Q();
  const float xb = c.x(i - 1, kOmxB);
  float path[4];
  path[0] = xb * c.tf(7 * q + kOBM, r);
  path[1] = c.dp_prev(i - 1, q, kOmxM, r) * c.tf(7 * q + kOMM, r);
  path[2] = c.dp_prev(i - 1, q, kOmxI, r) * c.tf(7 * q + kOIM, r);
  path[3] = c.dp_prev(i - 1, q, kOmxD, r) * c.tf(7 * q + kODM, r);
  fnorm(path, 4);
  static constexpr TraceState kState[4] = {kTB, kTM, kTI, kTD};
  return kState[rng.fchoose(path, 4)];
}

// D(i,k) comes from M(i,k-1) or D(i,k-1).
TraceState select_d(Rng& rng, const Cells& c, int i, int k) {
  const int q = (k - 1) % c.Q();
  const int r = (k - 1) / c.Q();
  float path[2];
  path[0] = c.dp_prev(i, q, kOmxM, r) * c.tf_prev(q, kOMD, r);
  path[1] = c.dp_prev(i, q, kOmxD, r) * c.tf_prev(q, kODD, r);
  fnorm(path, 2);
  static constexpr TraceState kState[2] = {kTM, kTD};
  return kState[rng.fchoose(path, 2)];
}

// I(i,k) comes from M(i-1,k) or I(i-1,k).
TraceState select_i(Rng& rng, const Cells& c, int i, int k) {
  const int q = (k - 1) % c.Q();
  const int r = (k - 1) / c.Q();
  float path[2];
  path[0] = c.dp(i - 1, q, kOmxM, r) * c.tf(7 * q + kOMI, r);
  path[1] = c.dp(i - 1, q, kOmxI, r) * c.tf(7 * q + kOII, r);
  fnorm(path, 2);
  static constexpr TraceState kState[2] = {kTM, kTI};
  return kState[rng.fchoose(path, 2)];
}

// C(i) comes from C(i-1) or E(i); E(i) is rescaled by row i's scale factor.
TraceState select_c(Rng& rng, const OProfile& om, const Cells& c, int i) {
  float path[2];
  path[0] = c.x(i - 1, kOmxC) * om.xf[kOC][kOLoop];
  path[1] = c.x(i, kOmxE) * om.xf[kOE][kOMove] * c.x(i, kOmxScale);
  fnorm(path, 2);
  static constexpr TraceState kState[2] = {kTC, kTE};
  return kState[rng.fchoose(path, 2)];
}

// J(i) comes from J(i-1) or E(i).
TraceState select_j(Rng& rng, const OProfile& om, const Cells& c, int i) {
  float path[2];
  path[0] = c.x(i - 1, kOmxJ) * om.xf[kOJ][kOLoop];
  path[1] = c.x(i, kOmxE) * om.xf[kOE][kOLoop] * c.x(i, kOmxScale);
  fnorm(path, 2);
  static constexpr TraceState kState[2] = {kTJ, kTE};
  return kState[rng.fchoose(path, 2)];
}

// E(i) comes from any M(i,k) or D(i,k) (exit probabilities 1 in local mode). One draw; products with
// the float splat of the double 1/E(i) are summed in double in striped order (vector q: M lanes 0..3,
// then D lanes 0..3). If one pass does not reach the draw the scan repeats with the sum carried on, as
// HMMER's while(1) loop does.
TraceState select_e(Rng& rng, const Cells& c, int i, int* ret_k) {
  double sum = 0.0;
  const double roll = rng.random();
  const double norm = 1.0 / static_cast<double>(c.x(i, kOmxE));
  const float normf = static_cast<float>(norm);
  const int Q = c.Q();
  for (;;) {
    const double before = sum;
    for (int q = 0; q < Q; ++q) {
      for (int r = 0; r < 4; ++r) {
        sum += static_cast<double>(c.dp(i, q, kOmxM, r) * normf);
        if (roll < sum) {
          *ret_k = r * Q + q + 1;
          return kTM;
        }
      }
      for (int r = 0; r < 4; ++r) {
        sum += static_cast<double>(c.dp(i, q, kOmxD, r) * normf);
        if (roll < sum) {
          *ret_k = r * Q + q + 1;
          return kTD;
        }
      }
    }
    // HMMER would loop forever here; a pass that adds nothing means a corrupt matrix.
    if (!(sum > before)) throw Error(ErrorKind::kInternal, "stochastic traceback: E state has no source");
  }
}

// B(i) comes from N(i) or J(i).
TraceState select_b(Rng& rng, const OProfile& om, const Cells& c, int i) {
  float path[2];
  path[0] = c.x(i, kOmxN) * om.xf[kON][kOMove];
  path[1] = c.x(i, kOmxJ) * om.xf[kOJ][kOMove];
  fnorm(path, 2);
  static constexpr TraceState kState[2] = {kTN, kTJ};
  return kState[rng.fchoose(path, 2)];
}

}  // namespace

void fnorm(float* v, int n) {
  float sum = 0.0f;
  float c = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float y = v[j] - c;
    const float t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  if (sum != 0.0f) {
    for (int j = 0; j < n; ++j) v[j] /= sum;
  } else {
    for (int j = 0; j < n; ++j) v[j] = static_cast<float>(1.0 / static_cast<double>(static_cast<float>(n)));
  }
}

void stochastic_trace(Rng& rng, const uint8_t* /*dsq*/, int L, const OProfile& om, const Omx& fwd,
                      Trace& tr) {
  if (tr.N != 0) throw Error(ErrorKind::kInternal, "stochastic traceback: trace not empty");
  const Cells c(om, fwd);
  int i = L;
  int k = 0;
  tr.append(kTT, k, i);
  tr.append(kTC, k, i);
  TraceState s0 = kTC;
  while (s0 != kTS) {
    TraceState s1 = kTBogus;
    switch (s0) {
      case kTM:
        s1 = select_m(rng, c, i, k);
        --k;
        --i;
        break;
      case kTD:
        s1 = select_d(rng, c, i, k);
        --k;
        break;
      case kTI:
        s1 = select_i(rng, c, i, k);
        --i;
        break;
      case kTN: s1 = (i == 0) ? kTS : kTN; break;
      case kTC: s1 = select_c(rng, om, c, i); break;
      case kTJ: s1 = select_j(rng, om, c, i); break;
      case kTE: s1 = select_e(rng, c, i, &k); break;
      case kTB: s1 = select_b(rng, om, c, i); break;
      default: throw Error(ErrorKind::kInternal, "stochastic traceback: bogus state");
    }
    tr.append(s1, k, i);
    if ((s1 == kTN || s1 == kTJ || s1 == kTC) && s1 == s0) --i;
    s0 = s1;
  }
  tr.M = om.M;
  tr.L = L;
  tr.reverse();
}

}  // namespace warpsearch::hmm
