// fwd_pair_engine.hpp: the Forward parser of two targets at once (fwd_pair.hpp), written once over a
// two-target op set. Included only by fwd_pair.cpp (portable and SSE2 op sets) and fwd_pair_avx2.cpp (AVX2,
// compiled with -mavx2): everything here has internal linkage, so no inline function compiled for AVX2 can
// be picked by the linker for another translation unit.
//
// Each target's arithmetic is forward_engine's (fwdback.cpp) in parser mode, operation for operation: a
// two-target vector holds target 0's 4-float vector in lanes 0..3 and target 1's in lanes 4..7, every op
// works on each half as the vf4 op on its vector, and the special states are per-target scalars with the
// same expressions. Where the two targets' control flow differs:
//   - lengths: rows run to the longer length; the shorter target's score is taken after its last row, then
//     its half of the row is set to 0 and its B to 0, which keep that half at 0 for the remaining rows;
//   - the early-stopping D->D passes (M >= 100): a target stops after a pass that changed none of its D
//     values, as forward_engine; while the other runs on, the stopped half keeps its D values (select), and
//     its E sum, recomputed from those same values in the same order, is the one of its last pass;
//   - rescaling: a target whose E exceeds 1e4 is rescaled (factor float(1.0 / E)); the other half is
//     multiplied by 1.0f, which leaves every value as it is.
// A target whose final C is NaN, 0 or +inf (forward_engine throws) is reported as not ok: the caller runs
// forward_parser on it, which throws the same error. (Compiler builtins rather than std::isnan / isinf: an
// out-of-line copy of an inline library function compiled here for AVX2 could serve other translation units.)
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "hmm/fwd_pair.hpp"

namespace warpsearch::hmm {
namespace {

// The op-set interface (Ops): V (two 4-float vectors), zero(), set2(a, b) (a in half 0, b in half 1),
// bcast(p) (the 4 floats at p in both halves), load2(p0, p1), load(p) / store(p, v) (8 contiguous floats,
// 32-byte aligned), add, mul, rshift0(a) (each half: {0, a0, a1, a2}: esl_sse_rightshift_ps(a, zero)),
// hsum(a, s0, s1) (each half: (a0 + a1) + (a2 + a3), esl_sse_hsum_ps), gt_or(acc, a, b) (acc with the lanes
// where a > b set), gt_bits(acc) (bit h set when any lane of half h is set), select(keep0, keep1, a, b)
// (half h from a where keep_h, else from b).

template <class Ops>
struct PairEngine {
  using V = typename Ops::V;

  static V ld(const float* row, int q, int s) {
    return Ops::load(row + (static_cast<std::size_t>(q) * 3 + s) * 8);
  }
  static void st(float* row, int q, int s, V v) {
    Ops::store(row + (static_cast<std::size_t>(q) * 3 + s) * 8, v);
  }
  static V tv(const float* tfv, int v) { return Ops::bcast(tfv + static_cast<std::size_t>(v) * 4); }

  // row: 3 * Q * 8 floats, 32-byte aligned (FwdPairScratch).
  static void run(const FwdPairModel& m, const FwdPairTarget* tg, float* row, float* score, bool* ok) {
    const int Q = m.Q;
    const float* tfv = m.tfv;
    const V zerov = Ops::zero();
    for (int q = 0; q < Q; ++q) {
      st(row, q, 0, zerov);
      st(row, q, 1, zerov);
      st(row, q, 2, zerov);
    }
    float xE[2] = {0.0f, 0.0f}, xN[2] = {1.0f, 1.0f}, xJ[2] = {0.0f, 0.0f};
    float xB[2] = {tg[0].n_move, tg[1].n_move}, xC[2] = {0.0f, 0.0f};
    float totscale[2] = {0.0f, 0.0f};
    bool live[2] = {tg[0].L > 0, tg[1].L > 0};
    const float* rp[2] = {m.rfv, m.rfv};
    const int Lmax = tg[0].L > tg[1].L ? tg[0].L : tg[1].L;
    for (int t = 0; t < 2; ++t) {
      ok[t] = tg[t].L > 0;  // (an empty target: forward_parser's own result)
      score[t] = 0.0f;
    }

    for (int i = 1; i <= Lmax; ++i) {
      for (int t = 0; t < 2; ++t)
        if (live[t])
          rp[t] = m.rfv + static_cast<std::size_t>(tg[t].dsq[i]) * static_cast<std::size_t>(m.rfv_stride);
      V dcv = zerov;
      V xEv = zerov;
      const V xBv = Ops::set2(xB[0], xB[1]);
      int tp = 0;

      V mpv = Ops::rshift0(ld(row, Q - 1, 0));
      V dpv = Ops::rshift0(ld(row, Q - 1, 1));
      V ipv = Ops::rshift0(ld(row, Q - 1, 2));

      for (int q = 0; q < Q; ++q) {
        V sv = Ops::mul(xBv, tv(tfv, tp));
        ++tp;
        sv = Ops::add(sv, Ops::mul(mpv, tv(tfv, tp)));
        ++tp;
        sv = Ops::add(sv, Ops::mul(ipv, tv(tfv, tp)));
        ++tp;
        sv = Ops::add(sv, Ops::mul(dpv, tv(tfv, tp)));
        ++tp;
        sv = Ops::mul(
            sv, Ops::load2(rp[0] + static_cast<std::size_t>(q) * 4, rp[1] + static_cast<std::size_t>(q) * 4));
        xEv = Ops::add(xEv, sv);

        mpv = ld(row, q, 0);
        dpv = ld(row, q, 1);
        ipv = ld(row, q, 2);

        st(row, q, 0, sv);
        st(row, q, 1, dcv);

        dcv = Ops::mul(sv, tv(tfv, tp));
        ++tp;

        sv = Ops::mul(mpv, tv(tfv, tp));
        ++tp;
        st(row, q, 2, Ops::add(sv, Ops::mul(ipv, tv(tfv, tp))));
        ++tp;
      }

      dcv = Ops::rshift0(dcv);
      st(row, 0, 1, zerov);
      tp = 7 * Q;
      for (int q = 0; q < Q; ++q) {
        const V d = Ops::add(dcv, ld(row, q, 1));
        st(row, q, 1, d);
        dcv = Ops::mul(d, tv(tfv, tp));
        ++tp;
      }

      const V xEm = xEv;
      if (m.M < 100) {
        for (int j = 1; j < 4; ++j) {
          dcv = Ops::rshift0(dcv);
          tp = 7 * Q;
          V acc = xEm;
          for (int q = 0; q < Q; ++q) {
            const V sv = Ops::add(dcv, ld(row, q, 1));
            st(row, q, 1, sv);
            acc = Ops::add(sv, acc);
            dcv = Ops::mul(dcv, tv(tfv, tp));
            ++tp;
          }
          xEv = acc;
        }
      } else {
        // A finished target's half is all 0 and stays so (0 + 0): it counts as stopped.
        bool stopped[2] = {!live[0], !live[1]};
        for (int j = 1; j < 4; ++j) {
          if (stopped[0] && stopped[1]) break;
          dcv = Ops::rshift0(dcv);
          tp = 7 * Q;
          V acc = xEm;
          V cv = zerov;
          if (stopped[0] || stopped[1]) {
            const bool keep0 = stopped[0], keep1 = stopped[1];
            for (int q = 0; q < Q; ++q) {
              const V old = ld(row, q, 1);
              const V sv = Ops::select(keep0, keep1, old, Ops::add(dcv, old));
              cv = Ops::gt_or(cv, sv, old);
              st(row, q, 1, sv);
              acc = Ops::add(sv, acc);
              dcv = Ops::mul(dcv, tv(tfv, tp));
              ++tp;
            }
          } else {
            for (int q = 0; q < Q; ++q) {
              const V old = ld(row, q, 1);
              const V sv = Ops::add(dcv, old);
              cv = Ops::gt_or(cv, sv, old);
              st(row, q, 1, sv);
              acc = Ops::add(sv, acc);
              dcv = Ops::mul(dcv, tv(tfv, tp));
              ++tp;
            }
          }
          xEv = acc;
          const int bits = Ops::gt_bits(cv);
          if ((bits & 1) == 0) stopped[0] = true;
          if ((bits & 2) == 0) stopped[1] = true;
        }
      }
      Ops::hsum(xEv, xE[0], xE[1]);

      float factor[2] = {1.0f, 1.0f};
      bool rescale = false;
      for (int t = 0; t < 2; ++t) {
        if (!live[t]) continue;
        const FwdPairTarget& g = tg[t];
        xN[t] = xN[t] * g.n_loop;
        xC[t] = (xC[t] * g.c_loop) + (xE[t] * m.e_move);
        xJ[t] = (xJ[t] * g.j_loop) + (xE[t] * m.e_loop);
        xB[t] = (xJ[t] * g.j_move) + (xN[t] * g.n_move);
        if (static_cast<double>(xE[t]) > 1.0e4) {
          xN[t] = xN[t] / xE[t];
          xC[t] = xC[t] / xE[t];
          xJ[t] = xJ[t] / xE[t];
          xB[t] = xB[t] / xE[t];
          factor[t] = static_cast<float>(1.0 / static_cast<double>(xE[t]));
          totscale[t] =
              static_cast<float>(static_cast<double>(totscale[t]) + std::log(static_cast<double>(xE[t])));
          xE[t] = 1.0f;
          rescale = true;
        }
      }
      if (rescale) {
        const V sc = Ops::set2(factor[0], factor[1]);
        for (int q = 0; q < Q; ++q) {
          st(row, q, 0, Ops::mul(ld(row, q, 0), sc));
          st(row, q, 1, Ops::mul(ld(row, q, 1), sc));
          st(row, q, 2, Ops::mul(ld(row, q, 2), sc));
        }
      }

      // Targets ending at this row: their score, then their half cleared.
      bool ended[2] = {false, false};
      for (int t = 0; t < 2; ++t) {
        if (!live[t] || i != tg[t].L) continue;
        ended[t] = true;
        live[t] = false;
        const float c = xC[t];
        if (__builtin_isnan(c) || c == 0.0f || (__builtin_isinf(c) && c > 0.0f)) {
          ok[t] = false;
        } else {
          score[t] = static_cast<float>(static_cast<double>(totscale[t]) +
                                        std::log(static_cast<double>(c * tg[t].c_move)));
        }
        xB[t] = 0.0f;
      }
      if ((ended[0] || ended[1]) && i < Lmax) {
        for (int q = 0; q < Q; ++q) {
          for (int s = 0; s < 3; ++s) st(row, q, s, Ops::select(ended[0], ended[1], zerov, ld(row, q, s)));
        }
      }
    }
  }
};

}  // namespace
}  // namespace warpsearch::hmm
