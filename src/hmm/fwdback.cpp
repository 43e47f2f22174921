// Forward and Backward on the striped float profile: HMMER 3.3.2 impl_sse/fwdback.c reproduced operation
// for operation (same vector ops in the same order, same float/double mixing in the scalar special
// states, same rescaling rules), on vf4 vectors (SSE2 intrinsics or the identical portable lanes).
//
// Conventions in this file: Q = nqf(M) vectors per state; a "vector index" v into om.tfv / a residue row
// of om.rfv addresses floats [4v, 4v+4). Row pointers dpc (current row) and dpp (previous row: i-1 in
// Forward, i+1 in Backward) address Omx rows; in parser mode both are row 0 and the DP works in place,
// which is correct because every cell of the previous row is read before the same cell is overwritten
// (HMMER's delayed-store order, kept exactly).
#include "hmm/fwdback.hpp"

#include <cmath>
#include <cstddef>
#include <string>

#include "warpsearch/error.hpp"

#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

namespace warpsearch::hmm {
namespace {

/// Vector (q, s) of a dp row.
inline float* cell(float* row, int q, int s) {
  return row + (static_cast<std::size_t>(q) * kOmxNSCells + static_cast<std::size_t>(s)) * 4;
}

void check_dims(const OProfile& om, const Omx& ox, int L, bool full, const char* what) {
  if (L < 0) throw Error(ErrorKind::kInternal, std::string(what) + ": negative sequence length");
  const bool ok = full ? ox.fits_full(om.M, L) : ox.fits_parser(om.M, L);
  if (!ok) throw Error(ErrorKind::kInternal, std::string(what) + ": DP matrix allocated too small");
  if (!is_local(om.mode)) {
    throw Error(ErrorKind::kInternal, std::string(what) + ": implementation assumes a local alignment mode");
  }
}

/// The engines, written once over a vf4 op set (vf4::Sse or vf4::Portable).
template <class Ops>
struct Engine {
  using V = typename Ops::V;
  static V ldc(float* row, int q, int s) { return Ops::load(cell(row, q, s)); }
  static void stc(float* row, int q, int s, V v) { Ops::store(cell(row, q, s), v); }
  /// Vector v of a transition or emission array.
  static V ldv(const float* base, int v) { return Ops::load(base + static_cast<std::size_t>(v) * 4); }

  /// forward_engine: rows i = 1..L; full selects dp row i (else row 0). Returns the score in nats.
  static float forward_engine(bool full, const uint8_t* dsq, int L, const OProfile& om, Omx& ox) {
    check_dims(om, ox, L, full, "forward");
    const int Q = nqf(om.M);
    const float* tfv = om.tfv.data();
    const V zerov = Ops::zero();
    float* dpc = ox.row(0);
    float* dpp = nullptr;

    ox.M = om.M;
    ox.L = L;
    ox.has_own_scales = true;
    for (int q = 0; q < Q; ++q) {
      stc(dpc, q, kOmxM, zerov);
      stc(dpc, q, kOmxI, zerov);
      stc(dpc, q, kOmxD, zerov);
    }
    float xE = ox.x(0, kOmxE) = 0.0f;
    float xN = ox.x(0, kOmxN) = 1.0f;
    float xJ = ox.x(0, kOmxJ) = 0.0f;
    float xB = ox.x(0, kOmxB) = om.xf[kON][kOMove];
    float xC = ox.x(0, kOmxC) = 0.0f;
    ox.x(0, kOmxScale) = 1.0f;
    ox.totscale = 0.0f;

    for (int i = 1; i <= L; ++i) {
      dpp = dpc;
      dpc = ox.row(full ? i : 0);
      const float* rp = om.rfv_row(dsq[i]);
      int tp = 0;  // vector index into tfv
      V dcv = Ops::zero();
      V xEv = Ops::zero();
      const V xBv = Ops::set1(xB);

      // Previous row's last vector shifted right one lane (node k-1 of lane z is in lane z-1), zero on.
      V mpv = Ops::rightshift(ldc(dpp, Q - 1, kOmxM), zerov);
      V dpv = Ops::rightshift(ldc(dpp, Q - 1, kOmxD), zerov);
      V ipv = Ops::rightshift(ldc(dpp, Q - 1, kOmxI), zerov);

      for (int q = 0; q < Q; ++q) {
        // M(i,q) = e(x_i) * (B*tBM + M(i-1,q-1)*tMM + I(i-1,q-1)*tIM + D(i-1,q-1)*tDM), held in sv.
        V sv = Ops::mul(xBv, ldv(tfv, tp));
        ++tp;
        sv = Ops::add(sv, Ops::mul(mpv, ldv(tfv, tp)));
        ++tp;
        sv = Ops::add(sv, Ops::mul(ipv, ldv(tfv, tp)));
        ++tp;
        sv = Ops::add(sv, Ops::mul(dpv, ldv(tfv, tp)));
        ++tp;
        sv = Ops::mul(sv, ldv(rp, q));
        xEv = Ops::add(xEv, sv);

        // Previous row's vector q (read before the in-place stores below).
        mpv = ldc(dpp, q, kOmxM);
        dpv = ldc(dpp, q, kOmxD);
        ipv = ldc(dpp, q, kOmxI);

        stc(dpc, q, kOmxM, sv);
        stc(dpc, q, kOmxD, dcv);

        // Partial D(i,q+1): the M->D path only.
        dcv = Ops::mul(sv, ldv(tfv, tp));
        ++tp;

        // I(i,q) = M(i-1,q)*tMI + I(i-1,q)*tII (insert odds ratio 1).
        sv = Ops::mul(mpv, ldv(tfv, tp));
        ++tp;
        stc(dpc, q, kOmxI, Ops::add(sv, Ops::mul(ipv, ldv(tfv, tp))));
        ++tp;
      }

      // D->D paths: a first full pass adds M->D and extends through D->D.
      dcv = Ops::rightshift(dcv, zerov);
      stc(dpc, 0, kOmxD, zerov);
      tp = 7 * Q;
      for (int q = 0; q < Q; ++q) {
        stc(dpc, q, kOmxD, Ops::add(dcv, ldc(dpc, q, kOmxD)));
        dcv = Ops::mul(ldc(dpc, q, kOmxD), ldv(tfv, tp));
        ++tp;
      }

      // The D states' contribution to E (HMMER: a last sweep xEv = D(q) + xEv over q = 0..Q-1, after the
      // passes) is summed in the pass that leaves the D values final, from the values it stores: the
      // same adds in the same order, overlapping that pass's D->D product chain instead of adding a
      // sweep of its own. xEm: the M states' sum, where every pass's sum starts.
      const V xEm = xEv;
      if (om.M < 100) {
        // Fully serialized: three more passes extending only the D->D component; the third is final.
        for (int j = 1; j < 4; ++j) {
          dcv = Ops::rightshift(dcv, zerov);
          tp = 7 * Q;
          V acc = xEm;
          for (int q = 0; q < Q; ++q) {
            const V sv = Ops::add(dcv, ldc(dpc, q, kOmxD));
            stc(dpc, q, kOmxD, sv);
            acc = Ops::add(sv, acc);
            dcv = Ops::mul(dcv, ldv(tfv, tp));
            ++tp;
          }
          xEv = acc;
        }
      } else {
        // Same passes, stopping early once a pass changes no D value (sv > old D in no lane): the last
        // pass run, the third or one that changed nothing (so stored the final values), gives the sum.
        for (int j = 1; j < 4; ++j) {
          dcv = Ops::rightshift(dcv, zerov);
          tp = 7 * Q;
          bool changed = false;
          V acc = xEm;
          for (int q = 0; q < Q; ++q) {
            const V old = ldc(dpc, q, kOmxD);
            const V sv = Ops::add(dcv, old);
            changed = changed || Ops::any_gt(sv, old);
            stc(dpc, q, kOmxD, sv);
            acc = Ops::add(sv, acc);
            dcv = Ops::mul(dcv, ldv(tfv, tp));
            ++tp;
          }
          xEv = acc;
          if (!changed) break;
        }
      }
      xE = Ops::hsum(xEv);

      xN = xN * om.xf[kON][kOLoop];
      xC = (xC * om.xf[kOC][kOLoop]) + (xE * om.xf[kOE][kOMove]);
      xJ = (xJ * om.xf[kOJ][kOLoop]) + (xE * om.xf[kOE][kOLoop]);
      xB = (xJ * om.xf[kOJ][kOMove]) + (xN * om.xf[kON][kOMove]);

      // Sparse rescaling when E exceeds 1e4 (compared in double, as HMMER's literal is a double).
      if (static_cast<double>(xE) > 1.0e4) {
        xN = xN / xE;
        xC = xC / xE;
        xJ = xJ / xE;
        xB = xB / xE;
        const V sc = Ops::set1(static_cast<float>(1.0 / static_cast<double>(xE)));
        for (int q = 0; q < Q; ++q) {
          stc(dpc, q, kOmxM, Ops::mul(ldc(dpc, q, kOmxM), sc));
          stc(dpc, q, kOmxD, Ops::mul(ldc(dpc, q, kOmxD), sc));
          stc(dpc, q, kOmxI, Ops::mul(ldc(dpc, q, kOmxI), sc));
        }
        ox.x(i, kOmxScale) = xE;
        ox.totscale =
            static_cast<float>(static_cast<double>(ox.totscale) + std::log(static_cast<double>(xE)));
        xE = 1.0f;
      } else {
        ox.x(i, kOmxScale) = 1.0f;
      }

      ox.x(i, kOmxE) = xE;
      ox.x(i, kOmxN) = xN;
      ox.x(i, kOmxJ) = xJ;
      ox.x(i, kOmxB) = xB;
      ox.x(i, kOmxC) = xC;
    }

    // C->T and back to log space. Overflow gives inf or NaN (inf * 0); underflow gives 0.
    if (std::isnan(xC)) throw Error(ErrorKind::kInternal, "forward score is NaN");
    if (L > 0 && xC == 0.0f) throw Error(ErrorKind::kInternal, "forward score underflow (is 0.0)");
    if (std::isinf(xC) && xC > 0.0f)
      throw Error(ErrorKind::kInternal, "forward score overflow (is infinity)");
    return static_cast<float>(static_cast<double>(ox.totscale) +
                              std::log(static_cast<double>(xC * om.xf[kOC][kOMove])));
  }

  /// Divides the scalar specials and the dp row by scale (> 1), the vector factor being float(1.0/scale).
  static void rescale_row(float* dpc, int Q, float scale) {
    const V sc = Ops::set1(static_cast<float>(1.0 / static_cast<double>(scale)));
    for (int q = 0; q < Q; ++q) {
      stc(dpc, q, kOmxM, Ops::mul(ldc(dpc, q, kOmxM), sc));
      stc(dpc, q, kOmxD, Ops::mul(ldc(dpc, q, kOmxD), sc));
      stc(dpc, q, kOmxI, Ops::mul(ldc(dpc, q, kOmxI), sc));
    }
  }

  /// backward_engine: rows i = L..1 then the i = 0 termination; full selects dp row i (else row 0).
  static float backward_engine(bool full, const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd,
                               Omx& bck) {
    check_dims(om, bck, L, full, "backward");
    if (L < 1) throw Error(ErrorKind::kInternal, "backward: sequence length must be at least 1");
    if (fwd.L != L || fwd.allocXR <= L) {
      throw Error(ErrorKind::kInternal, "backward: forward matrix does not match the sequence length");
    }
    const int Q = nqf(om.M);
    const float* tfv = om.tfv.data();
    const V zerov = Ops::zero();

    bck.M = om.M;
    bck.L = L;
    bck.has_own_scales = false;  // usually the Forward matrix's scale factors are used
    float* dpc = bck.row(full ? L : 0);
    float* dpp = nullptr;
    float xJ = 0.0f;
    float xB = 0.0f;
    float xN = 0.0f;
    float xC = om.xf[kOC][kOMove];       // C <- T
    float xE = xC * om.xf[kOE][kOMove];  // E <- C, no tail
    V xEv = Ops::set1(xE);
    V dcv = zerov;
    for (int q = 0; q < Q; ++q) {
      stc(dpc, q, kOmxM, xEv);
      stc(dpc, q, kOmxD, xEv);
    }
    for (int q = 0; q < Q; ++q) stc(dpc, q, kOmxI, zerov);

    // Row L's D->D paths: 1) first pass includes the E contribution already in D(q).
    int tp = 8 * Q - 1;  // DD vector of q = Q-1
    V dpv = Ops::leftshift(ldc(dpc, Q - 1, kOmxD), zerov);
    for (int q = Q - 1; q >= 0; --q) {
      dcv = Ops::mul(dpv, ldv(tfv, tp));
      --tp;
      stc(dpc, q, kOmxD, Ops::add(ldc(dpc, q, kOmxD), dcv));
      dpv = ldc(dpc, q, kOmxD);
    }
    // 2) three more passes extending only the D->D component.
    for (int j = 1; j < 4; ++j) {
      tp = 8 * Q - 1;
      dcv = Ops::leftshift(dcv, zerov);
      for (int q = Q - 1; q >= 0; --q) {
        dcv = Ops::mul(dcv, ldv(tfv, tp));
        --tp;
        stc(dpc, q, kOmxD, Ops::add(ldc(dpc, q, kOmxD), dcv));
      }
    }
    // M->D paths.
    tp = 7 * Q - 3;  // MD vector of q = Q-1
    dcv = Ops::leftshift(ldc(dpc, 0, kOmxD), zerov);
    for (int q = Q - 1; q >= 0; --q) {
      stc(dpc, q, kOmxM, Ops::add(ldc(dpc, q, kOmxM), Ops::mul(dcv, ldv(tfv, tp))));
      tp -= 7;
      dcv = ldc(dpc, q, kOmxD);
    }

    // Row L uses the Forward matrix's scale factor.
    const float scaleL = fwd.x(L, kOmxScale);
    if (static_cast<double>(scaleL) > 1.0) {
      xE = xE / scaleL;
      xN = xN / scaleL;
      xC = xC / scaleL;
      xJ = xJ / scaleL;
      xB = xB / scaleL;
      rescale_row(dpc, Q, scaleL);
    }
    bck.x(L, kOmxScale) = scaleL;
    bck.totscale = static_cast<float>(std::log(static_cast<double>(scaleL)));

    bck.x(L, kOmxE) = xE;
    bck.x(L, kOmxN) = xN;
    bck.x(L, kOmxJ) = xJ;
    bck.x(L, kOmxB) = xB;
    bck.x(L, kOmxC) = xC;

    for (int i = L - 1; i >= 1; --i) {
      // Phase 1: complete I(i,k), partial M and D (no {M,D}->{D,E} paths yet), and B(i) in xBv.
      dpc = bck.row(full ? i : 0);
      dpp = bck.row(full ? i + 1 : 0);
      const float* rfx = om.rfv_row(dsq[i + 1]);
      int rp = Q - 1;
      tp = 7 * Q - 1;  // II vector of q = Q-1

      // Transitions out of node k into k+1 live in vector q+1 (wrapping to q = 0 one lane to the left).
      V tmmv = Ops::leftshift(ldv(tfv, 1), zerov);
      V timv = Ops::leftshift(ldv(tfv, 2), zerov);
      V tdmv = Ops::leftshift(ldv(tfv, 3), zerov);

      V mpv = Ops::mul(ldc(dpp, 0, kOmxM), ldv(rfx, 0));  // M(i+1,k+1) * e(M_k+1, x_i+1)
      mpv = Ops::leftshift(mpv, zerov);

      V xBv = zerov;
      for (int q = Q - 1; q >= 0; --q) {
        const V ipv = ldc(dpp, q, kOmxI);
        stc(dpc, q, kOmxI, Ops::add(Ops::mul(ipv, ldv(tfv, tp)), Ops::mul(mpv, timv)));
        --tp;
        stc(dpc, q, kOmxD, Ops::mul(mpv, tdmv));
        const V mcv = Ops::add(Ops::mul(ipv, ldv(tfv, tp)), Ops::mul(mpv, tmmv));
        tp -= 2;

        mpv = Ops::mul(ldc(dpp, q, kOmxM), ldv(rfx, rp));
        --rp;
        stc(dpc, q, kOmxM, mcv);

        tdmv = ldv(tfv, tp);
        --tp;
        timv = ldv(tfv, tp);
        --tp;
        tmmv = ldv(tfv, tp);
        --tp;

        xBv = Ops::add(xBv, Ops::mul(mpv, ldv(tfv, tp)));
        --tp;
      }

      // Phase 2: the specials.
      xB = Ops::hsum(xBv);
      xC = xC * om.xf[kOC][kOLoop];
      xJ = (xB * om.xf[kOJ][kOMove]) + (xJ * om.xf[kOJ][kOLoop]);
      xN = (xB * om.xf[kON][kOMove]) + (xN * om.xf[kON][kOLoop]);
      xE = (xC * om.xf[kOE][kOMove]) + (xJ * om.xf[kOE][kOLoop]);
      xEv = Ops::set1(xE);

      // Phase 3: {M,D}->E paths and one step of the D->D paths.
      tp = 8 * Q - 1;
      dpv = Ops::add(ldc(dpc, 0, kOmxD), xEv);
      dpv = Ops::leftshift(dpv, zerov);
      for (int q = Q - 1; q >= 0; --q) {
        dcv = Ops::mul(dpv, ldv(tfv, tp));
        --tp;
        stc(dpc, q, kOmxD, Ops::add(ldc(dpc, q, kOmxD), Ops::add(dcv, xEv)));
        dpv = ldc(dpc, q, kOmxD);
        stc(dpc, q, kOmxM, Ops::add(ldc(dpc, q, kOmxM), xEv));
      }

      // Phase 4: finish the D->D paths (three more serialized passes).
      for (int j = 1; j < 3; ++j) {
        dcv = Ops::leftshift(dcv, zerov);
        tp = 8 * Q - 1;
        for (int q = Q - 1; q >= 0; --q) {
          dcv = Ops::mul(dcv, ldv(tfv, tp));
          --tp;
          stc(dpc, q, kOmxD, Ops::add(ldc(dpc, q, kOmxD), dcv));
        }
      }
      // The third pass also does phase 5, the M->D paths, M(q) += D(q+1) * tMD(q) (D(0) shifted one lane
      // for q = Q-1), each as soon as the D it reads is final (HMMER: a sweep of its own after the
      // passes): every M cell still gets the one add of the same product, and the sweep's work overlaps
      // the pass's product chain.
      dcv = Ops::leftshift(dcv, zerov);
      tp = 8 * Q - 1;
      dcv = Ops::mul(dcv, ldv(tfv, tp));
      --tp;
      V dnext = Ops::add(ldc(dpc, Q - 1, kOmxD), dcv);  // D(q+1), final
      stc(dpc, Q - 1, kOmxD, dnext);
      for (int q = Q - 2; q >= 0; --q) {
        dcv = Ops::mul(dcv, ldv(tfv, tp));
        --tp;
        const V dq = Ops::add(ldc(dpc, q, kOmxD), dcv);
        stc(dpc, q, kOmxD, dq);
        stc(dpc, q, kOmxM, Ops::add(ldc(dpc, q, kOmxM), Ops::mul(dnext, ldv(tfv, 7 * q + kOMD))));
        dnext = dq;
      }
      stc(dpc, Q - 1, kOmxM,
          Ops::add(ldc(dpc, Q - 1, kOmxM),
                   Ops::mul(Ops::leftshift(ldc(dpc, 0, kOmxD), zerov), ldv(tfv, 7 * (Q - 1) + kOMD))));

      // Sparse rescaling: Forward's factors, unless B overflows them, then our own from here on.
      if (static_cast<double>(xB) > 1.0e16) bck.has_own_scales = true;
      if (bck.has_own_scales) {
        bck.x(i, kOmxScale) = (static_cast<double>(xB) > 1.0e4) ? xB : 1.0f;
      } else {
        bck.x(i, kOmxScale) = fwd.x(i, kOmxScale);
      }
      const float scale = bck.x(i, kOmxScale);
      if (static_cast<double>(scale) > 1.0) {
        xE /= scale;
        xN /= scale;
        xJ /= scale;
        xB /= scale;
        xC /= scale;
        rescale_row(dpc, Q, scale);
        bck.totscale =
            static_cast<float>(static_cast<double>(bck.totscale) + std::log(static_cast<double>(scale)));
      }

      bck.x(i, kOmxE) = xE;
      bck.x(i, kOmxN) = xN;
      bck.x(i, kOmxJ) = xJ;
      bck.x(i, kOmxB) = xB;
      bck.x(i, kOmxC) = xC;
    }

    // Termination at i = 0: only N and B are reachable.
    dpp = bck.row(full ? 1 : 0);
    {
      const float* rfx = om.rfv_row(dsq[1]);
      tp = 0;  // BM vector of q = 0
      V xBv = zerov;
      for (int q = 0; q < Q; ++q) {
        V mpv = Ops::mul(ldc(dpp, q, kOmxM), ldv(rfx, q));
        mpv = Ops::mul(mpv, ldv(tfv, tp));
        tp += 7;
        xBv = Ops::add(xBv, mpv);
      }
      xB = Ops::hsum(xBv);
    }
    xN = (xB * om.xf[kON][kOMove]) + (xN * om.xf[kON][kOLoop]);

    bck.x(0, kOmxB) = xB;
    bck.x(0, kOmxC) = 0.0f;
    bck.x(0, kOmxJ) = 0.0f;
    bck.x(0, kOmxN) = xN;
    bck.x(0, kOmxE) = 0.0f;
    bck.x(0, kOmxScale) = 1.0f;
    if (full) {
      // Not read by any consumer; zeroed so that full matrices have defined contents.
      float* r0 = bck.row(0);
      for (int q = 0; q < Q; ++q) {
        stc(r0, q, kOmxM, zerov);
        stc(r0, q, kOmxD, zerov);
        stc(r0, q, kOmxI, zerov);
      }
    }

    if (std::isnan(xN)) throw Error(ErrorKind::kInternal, "backward score is NaN");
    if (L > 0 && xN == 0.0f) throw Error(ErrorKind::kInternal, "backward score underflow (is 0.0)");
    if (std::isinf(xN) && xN > 0.0f)
      throw Error(ErrorKind::kInternal, "backward score overflow (is infinity)");
    return static_cast<float>(static_cast<double>(bck.totscale) + std::log(static_cast<double>(xN)));
  }
};

}  // namespace

float forward(const uint8_t* dsq, int L, const OProfile& om, Omx& ox) {
  return Engine<vf4::Native>::forward_engine(true, dsq, L, om, ox);
}
float forward_parser(const uint8_t* dsq, int L, const OProfile& om, Omx& ox) {
  return Engine<vf4::Native>::forward_engine(false, dsq, L, om, ox);
}
float backward(const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck) {
  return Engine<vf4::Native>::backward_engine(true, dsq, L, om, fwd, bck);
}
float backward_parser(const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck) {
  return Engine<vf4::Native>::backward_engine(false, dsq, L, om, fwd, bck);
}

float forward(const Dsq& dsq, int L, const OProfile& om, Omx& ox) { return forward(dsq.data(), L, om, ox); }
float forward_parser(const Dsq& dsq, int L, const OProfile& om, Omx& ox) {
  return forward_parser(dsq.data(), L, om, ox);
}
float backward(const Dsq& dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck) {
  return backward(dsq.data(), L, om, fwd, bck);
}
float backward_parser(const Dsq& dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck) {
  return backward_parser(dsq.data(), L, om, fwd, bck);
}

namespace detail {
float forward_portable(const uint8_t* dsq, int L, const OProfile& om, Omx& ox, bool full) {
  return Engine<vf4::Portable>::forward_engine(full, dsq, L, om, ox);
}
float backward_portable(const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck, bool full) {
  return Engine<vf4::Portable>::backward_engine(full, dsq, L, om, fwd, bck);
}
}  // namespace detail

#if defined(__SSE2__)
FlushToZeroScope::FlushToZeroScope() : saved_(_mm_getcsr()) {
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
}
FlushToZeroScope::~FlushToZeroScope() { _mm_setcsr(saved_); }
#else
FlushToZeroScope::FlushToZeroScope() = default;
FlushToZeroScope::~FlushToZeroScope() = default;
#endif

}  // namespace warpsearch::hmm
