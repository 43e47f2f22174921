// Generic float DP references on a Profile: p7_GMSV, p7_GViterbi, p7_GForward, p7_GBackward (HMMER
// 3.3.2 generic_msv.c, generic_viterbi.c, generic_fwdback.c). Each cell update performs the same float
// operations, in the same order and with the same max / flogsum nesting, as HMMER.
//
// Matrix invariants (all routines): row i (0..L) holds scores of paths that have emitted x_1..x_i
// (Forward, Viterbi, MSV: ending in that state; Backward: the score of emitting x_{i+1}..x_L from that
// state). Column k = 0 and row 0's main cells are -inf (no node 0; no residue emitted yet).
#include "hmm/generic_dp.hpp"

#include <cmath>

#include "hmm/logsum.hpp"

namespace warpsearch::hmm {

namespace {

constexpr float kNegInf = -INFINITY;

inline float fmax2(float a, float b) { return (a > b) ? a : b; }  // ESL_MAX, argument order kept

}  // namespace

float generic_msv(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx, float nu) {
  const int M = gm.M;
  gx.grow_to(M, L);
  const float tloop = logf(static_cast<float>(L) / static_cast<float>(L + 3));
  const float tmove = logf(3.0f / static_cast<float>(L + 3));
  const float tbmk = logf(2.0f / (static_cast<float>(M) * static_cast<float>(M + 1)));
  const float tej = logf((nu - 1.0f) / nu);
  const float tec = logf(1.0f / nu);

  gx.x(0, kGN) = 0.0f;
  gx.x(0, kGB) = tmove;  // S->N->B, no N tail
  gx.x(0, kGE) = gx.x(0, kGC) = gx.x(0, kGJ) = kNegInf;
  for (int k = 0; k <= M; k++) gx.mmx(0, k) = kNegInf;

  for (int i = 1; i <= L; i++) {
    const std::vector<float>& rsc = gm.rsc[dsq[i]];
    gx.mmx(i, 0) = kNegInf;
    gx.x(i, kGE) = kNegInf;
    for (int k = 1; k <= M; k++) {
      // M(i,k) = e_k(x_i) + max(M(i-1,k-1), B(i-1) + uniform entry)
      gx.mmx(i, k) = rsc[static_cast<std::size_t>(k) * kProfileNR + kPMSC] +
                     fmax2(gx.mmx(i - 1, k - 1), gx.x(i - 1, kGB) + tbmk);
      gx.x(i, kGE) = fmax2(gx.x(i, kGE), gx.mmx(i, k));
    }
    gx.x(i, kGJ) = fmax2(gx.x(i - 1, kGJ) + tloop, gx.x(i, kGE) + tej);
    gx.x(i, kGC) = fmax2(gx.x(i - 1, kGC) + tloop, gx.x(i, kGE) + tec);
    gx.x(i, kGN) = gx.x(i - 1, kGN) + tloop;
    gx.x(i, kGB) = fmax2(gx.x(i, kGN) + tmove, gx.x(i, kGJ) + tmove);
  }
  return gx.x(L, kGC) + tmove;
}

float generic_viterbi(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx) {
  const int M = gm.M;
  gx.grow_to(M, L);
  const float* tsc = gm.tsc.data();
  const auto T = [tsc](int s, int k) { return tsc[static_cast<std::size_t>(k * kProfileNTransitions + s)]; };
  const float esc = is_local(gm.mode) ? 0.0f : kNegInf;
  const auto& xsc = gm.xsc;

  gx.x(0, kGN) = 0.0f;
  gx.x(0, kGB) = xsc[kXN][kMove];
  gx.x(0, kGE) = gx.x(0, kGC) = gx.x(0, kGJ) = kNegInf;
  for (int k = 0; k <= M; k++) gx.mmx(0, k) = gx.imx(0, k) = gx.dmx(0, k) = kNegInf;

  for (int i = 1; i <= L; i++) {
    const float* rsc = gm.rsc[dsq[i]].data();
    const auto MSC = [rsc](int k) { return rsc[static_cast<std::size_t>(k) * kProfileNR + kPMSC]; };
    const auto ISC = [rsc](int k) { return rsc[static_cast<std::size_t>(k) * kProfileNR + kPISC]; };
    float sc;
    gx.mmx(i, 0) = gx.imx(i, 0) = gx.dmx(i, 0) = kNegInf;
    gx.x(i, kGE) = kNegInf;
    for (int k = 1; k < M; k++) {
      sc = fmax2(gx.mmx(i - 1, k - 1) + T(kPMM, k - 1), gx.imx(i - 1, k - 1) + T(kPIM, k - 1));
      sc = fmax2(sc, gx.dmx(i - 1, k - 1) + T(kPDM, k - 1));
      sc = fmax2(sc, gx.x(i - 1, kGB) + T(kPBM, k - 1));
      gx.mmx(i, k) = sc + MSC(k);
      gx.x(i, kGE) = fmax2(gx.x(i, kGE), gx.mmx(i, k) + esc);  // D_k->E never wins in Viterbi
      sc = fmax2(gx.mmx(i - 1, k) + T(kPMI, k), gx.imx(i - 1, k) + T(kPII, k));
      gx.imx(i, k) = sc + ISC(k);
      gx.dmx(i, k) = fmax2(gx.mmx(i, k - 1) + T(kPMD, k - 1), gx.dmx(i, k - 1) + T(kPDD, k - 1));
    }
    // Node M unrolled (no I_M; M_M->E and D_M->E score 0).
    sc = fmax2(gx.mmx(i - 1, M - 1) + T(kPMM, M - 1), gx.imx(i - 1, M - 1) + T(kPIM, M - 1));
    sc = fmax2(sc, gx.dmx(i - 1, M - 1) + T(kPDM, M - 1));
    sc = fmax2(sc, gx.x(i - 1, kGB) + T(kPBM, M - 1));
    gx.mmx(i, M) = sc + MSC(M);
    gx.dmx(i, M) = fmax2(gx.mmx(i, M - 1) + T(kPMD, M - 1), gx.dmx(i, M - 1) + T(kPDD, M - 1));
    sc = fmax2(gx.x(i, kGE), gx.mmx(i, M));
    gx.x(i, kGE) = fmax2(sc, gx.dmx(i, M));

    sc = gx.x(i - 1, kGJ) + xsc[kXJ][kLoop];
    gx.x(i, kGJ) = fmax2(sc, gx.x(i, kGE) + xsc[kXE][kLoop]);
    sc = gx.x(i - 1, kGC) + xsc[kXC][kLoop];
    gx.x(i, kGC) = fmax2(sc, gx.x(i, kGE) + xsc[kXE][kMove]);
    gx.x(i, kGN) = gx.x(i - 1, kGN) + xsc[kXN][kLoop];
    sc = gx.x(i, kGN) + xsc[kXN][kMove];
    gx.x(i, kGB) = fmax2(sc, gx.x(i, kGJ) + xsc[kXJ][kMove]);
  }
  return gx.x(L, kGC) + xsc[kXC][kMove];
}

float generic_forward(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx) {
  const int M = gm.M;
  gx.grow_to(M, L);
  const float* tsc = gm.tsc.data();
  const auto T = [tsc](int s, int k) { return tsc[static_cast<std::size_t>(k * kProfileNTransitions + s)]; };
  const float esc = is_local(gm.mode) ? 0.0f : kNegInf;
  const auto& xsc = gm.xsc;

  gx.x(0, kGN) = 0.0f;
  gx.x(0, kGB) = xsc[kXN][kMove];
  gx.x(0, kGE) = gx.x(0, kGC) = gx.x(0, kGJ) = kNegInf;
  for (int k = 0; k <= M; k++) gx.mmx(0, k) = gx.imx(0, k) = gx.dmx(0, k) = kNegInf;

  for (int i = 1; i <= L; i++) {
    const float* rsc = gm.rsc[dsq[i]].data();
    const auto MSC = [rsc](int k) { return rsc[static_cast<std::size_t>(k) * kProfileNR + kPMSC]; };
    const auto ISC = [rsc](int k) { return rsc[static_cast<std::size_t>(k) * kProfileNR + kPISC]; };
    float sc;
    gx.mmx(i, 0) = gx.imx(i, 0) = gx.dmx(i, 0) = kNegInf;
    gx.x(i, kGE) = kNegInf;
    for (int k = 1; k < M; k++) {
      sc = flogsum(flogsum(gx.mmx(i - 1, k - 1) + T(kPMM, k - 1), gx.imx(i - 1, k - 1) + T(kPIM, k - 1)),
                   flogsum(gx.x(i - 1, kGB) + T(kPBM, k - 1), gx.dmx(i - 1, k - 1) + T(kPDM, k - 1)));
      gx.mmx(i, k) = sc + MSC(k);
      sc = flogsum(gx.mmx(i - 1, k) + T(kPMI, k), gx.imx(i - 1, k) + T(kPII, k));
      gx.imx(i, k) = sc + ISC(k);
      gx.dmx(i, k) = flogsum(gx.mmx(i, k - 1) + T(kPMD, k - 1), gx.dmx(i, k - 1) + T(kPDD, k - 1));
      gx.x(i, kGE) = flogsum(flogsum(gx.mmx(i, k) + esc, gx.dmx(i, k) + esc), gx.x(i, kGE));
    }
    sc = flogsum(flogsum(gx.mmx(i - 1, M - 1) + T(kPMM, M - 1), gx.imx(i - 1, M - 1) + T(kPIM, M - 1)),
                 flogsum(gx.x(i - 1, kGB) + T(kPBM, M - 1), gx.dmx(i - 1, M - 1) + T(kPDM, M - 1)));
    gx.mmx(i, M) = sc + MSC(M);
    gx.imx(i, M) = kNegInf;
    gx.dmx(i, M) = flogsum(gx.mmx(i, M - 1) + T(kPMD, M - 1), gx.dmx(i, M - 1) + T(kPDD, M - 1));
    gx.x(i, kGE) = flogsum(flogsum(gx.mmx(i, M), gx.dmx(i, M)), gx.x(i, kGE));

    gx.x(i, kGJ) = flogsum(gx.x(i - 1, kGJ) + xsc[kXJ][kLoop], gx.x(i, kGE) + xsc[kXE][kLoop]);
    gx.x(i, kGC) = flogsum(gx.x(i - 1, kGC) + xsc[kXC][kLoop], gx.x(i, kGE) + xsc[kXE][kMove]);
    gx.x(i, kGN) = gx.x(i - 1, kGN) + xsc[kXN][kLoop];
    gx.x(i, kGB) = flogsum(gx.x(i, kGN) + xsc[kXN][kMove], gx.x(i, kGJ) + xsc[kXJ][kMove]);
  }
  return gx.x(L, kGC) + xsc[kXC][kMove];
}

float generic_backward(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx) {
  const int M = gm.M;
  gx.grow_to(M, L);
  const float* tsc = gm.tsc.data();
  const auto T = [tsc](int s, int k) { return tsc[static_cast<std::size_t>(k * kProfileNTransitions + s)]; };
  const float esc = is_local(gm.mode) ? 0.0f : kNegInf;
  const auto& xsc = gm.xsc;

  if (L == 0) {  // no path emits nothing (HMMER never calls Backward on an empty sequence)
    for (int k = 0; k <= M; k++) gx.mmx(0, k) = gx.imx(0, k) = gx.dmx(0, k) = kNegInf;
    gx.x(0, kGE) = gx.x(0, kGN) = gx.x(0, kGJ) = gx.x(0, kGB) = gx.x(0, kGC) = kNegInf;
    return kNegInf;
  }
  // Row L: only the C->T exit, and the E/M_M/D_M/local exits feeding it.
  gx.x(L, kGJ) = gx.x(L, kGB) = gx.x(L, kGN) = kNegInf;
  gx.x(L, kGC) = xsc[kXC][kMove];
  gx.x(L, kGE) = gx.x(L, kGC) + xsc[kXE][kMove];
  gx.mmx(L, M) = gx.dmx(L, M) = gx.x(L, kGE);
  gx.imx(L, M) = kNegInf;
  for (int k = M - 1; k >= 1; k--) {
    gx.mmx(L, k) = flogsum(gx.x(L, kGE) + esc, gx.dmx(L, k + 1) + T(kPMD, k));
    gx.dmx(L, k) = flogsum(gx.x(L, kGE) + esc, gx.dmx(L, k + 1) + T(kPDD, k));
    gx.imx(L, k) = kNegInf;
  }

  int i;
  for (i = L - 1; i >= 1; i--) {
    const float* rsc = gm.rsc[dsq[i + 1]].data();  // the next residue, x_{i+1}
    const auto MSC = [rsc](int k) { return rsc[static_cast<std::size_t>(k) * kProfileNR + kPMSC]; };
    const auto ISC = [rsc](int k) { return rsc[static_cast<std::size_t>(k) * kProfileNR + kPISC]; };

    gx.x(i, kGB) = gx.mmx(i + 1, 1) + T(kPBM, 0) + MSC(1);
    for (int k = 2; k <= M; k++)
      gx.x(i, kGB) = flogsum(gx.x(i, kGB), gx.mmx(i + 1, k) + T(kPBM, k - 1) + MSC(k));
    gx.x(i, kGJ) = flogsum(gx.x(i + 1, kGJ) + xsc[kXJ][kLoop], gx.x(i, kGB) + xsc[kXJ][kMove]);
    gx.x(i, kGC) = gx.x(i + 1, kGC) + xsc[kXC][kLoop];
    gx.x(i, kGE) = flogsum(gx.x(i, kGJ) + xsc[kXE][kLoop], gx.x(i, kGC) + xsc[kXE][kMove]);
    gx.x(i, kGN) = flogsum(gx.x(i + 1, kGN) + xsc[kXN][kLoop], gx.x(i, kGB) + xsc[kXN][kMove]);

    gx.mmx(i, M) = gx.dmx(i, M) = gx.x(i, kGE);
    gx.imx(i, M) = kNegInf;
    for (int k = M - 1; k >= 1; k--) {
      gx.mmx(i, k) = flogsum(
          flogsum(gx.mmx(i + 1, k + 1) + T(kPMM, k) + MSC(k + 1), gx.imx(i + 1, k) + T(kPMI, k) + ISC(k)),
          flogsum(gx.x(i, kGE) + esc, gx.dmx(i, k + 1) + T(kPMD, k)));
      gx.imx(i, k) =
          flogsum(gx.mmx(i + 1, k + 1) + T(kPIM, k) + MSC(k + 1), gx.imx(i + 1, k) + T(kPII, k) + ISC(k));
      gx.dmx(i, k) = flogsum(gx.mmx(i + 1, k + 1) + T(kPDM, k) + MSC(k + 1),
                             flogsum(gx.dmx(i, k + 1) + T(kPDD, k), gx.x(i, kGE) + esc));
    }
  }

  // Row 0: only N and B are reachable.
  {
    const float* rsc = gm.rsc[dsq[1]].data();
    const auto MSC = [rsc](int k) { return rsc[static_cast<std::size_t>(k) * kProfileNR + kPMSC]; };
    gx.x(0, kGB) = gx.mmx(1, 1) + T(kPBM, 0) + MSC(1);
    for (int k = 2; k <= M; k++) gx.x(0, kGB) = flogsum(gx.x(0, kGB), gx.mmx(1, k) + T(kPBM, k - 1) + MSC(k));
    gx.x(0, kGJ) = kNegInf;
    gx.x(0, kGC) = kNegInf;
    gx.x(0, kGE) = kNegInf;
    gx.x(0, kGN) = flogsum(gx.x(1, kGN) + xsc[kXN][kLoop], gx.x(0, kGB) + xsc[kXN][kMove]);
    for (int k = M; k >= 1; k--) gx.mmx(0, k) = gx.imx(0, k) = gx.dmx(0, k) = kNegInf;
  }
  return gx.x(0, kGN);
}

float generic_msv(const Dsq& dsq, int L, const Profile& gm, float nu) {
  GMatrix gx;
  return generic_msv(dsq.data(), L, gm, gx, nu);
}
float generic_viterbi(const Dsq& dsq, int L, const Profile& gm) {
  GMatrix gx;
  return generic_viterbi(dsq.data(), L, gm, gx);
}
float generic_forward(const Dsq& dsq, int L, const Profile& gm) {
  GMatrix gx;
  return generic_forward(dsq.data(), L, gm, gx);
}
float generic_backward(const Dsq& dsq, int L, const Profile& gm) {
  GMatrix gx;
  return generic_backward(dsq.data(), L, gm, gx);
}

}  // namespace warpsearch::hmm
