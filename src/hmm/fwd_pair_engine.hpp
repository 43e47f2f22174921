// fwd_pair_engine.hpp: the Forward parser of K targets at once (fwd_pair.hpp: K = 2 or 4), written once
// over a K-target op set. Included only by fwd_pair.cpp (portable and SSE2 op sets), fwd_pair_avx2.cpp
// (AVX2, compiled with -mavx2) and fwd_pair_avx512.cpp (AVX-512F): everything here has internal linkage, so
// no inline function compiled for AVX2 or AVX-512 can be picked by the linker for another translation unit.
//
// Each target's arithmetic is forward_engine's (fwdback.cpp) in parser mode, operation for operation: a
// K-target vector holds target t's 4-float vector in lanes 4t..4t+3, every op works on each target's lanes
// as the vf4 op on its vector, and the special states are per-target scalars with the same expressions.
// Where the targets' control flow differs:
//   - lengths: rows run to the longest length; a shorter target's score is taken after its last row, then
//     its lanes of the row are set to 0 and its B to 0, which keep them at 0 for the remaining rows;
//   - the early-stopping D->D passes (M >= 100): a target stops after a pass that changed none of its D
//     values, as forward_engine; while others run on, a stopped target keeps its D values (select), and its
//     E sum, recomputed from those same values in the same order, is the one of its last pass;
//   - rescaling: a target whose E exceeds 1e4 is rescaled (factor float(1.0 / E)); the others' lanes are
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

// The op-set interface (Ops): K targets per vector (V: K 4-float vectors, target t's in lanes 4t..4t+3);
// zero(); set(v) (v[t] in target t's lanes); bcast(p) (the 4 floats at p for every target); load_rows(rp,
// off) (rp[t] + off for target t); load(p) / store(p, v) (4K contiguous floats, aligned to 16K bytes); add,
// mul; rshift0(a) (each target: {0, a0, a1, a2}: esl_sse_rightshift_ps(a, zero)); hsum(a, out) (out[t] =
// (a0 + a1) + (a2 + a3) of target t, esl_sse_hsum_ps); Mask, mzero(), gt_or(m, a, b) (m with the lanes
// where a > b set), gt_bits(m) (bit t set when any lane of target t is set); select(keep, a, b) (target t
// from a where bit t of keep is set, else from b).

template <class Ops>
struct GroupEngine {
  using V = typename Ops::V;
  using Mask = typename Ops::Mask;
  static constexpr int K = Ops::K;
  static constexpr int kAll = (1 << K) - 1;
  static constexpr std::size_t kW = 4 * static_cast<std::size_t>(K);  // floats per vector

  static V ld(const float* row, int q, int s) {
    return Ops::load(row + (static_cast<std::size_t>(q) * 3 + s) * kW);
  }
  static void st(float* row, int q, int s, V v) {
    Ops::store(row + (static_cast<std::size_t>(q) * 3 + s) * kW, v);
  }
  static V tv(const float* tfv, int v) { return Ops::bcast(tfv + static_cast<std::size_t>(v) * 4); }

  // row: 3 * Q * 4K floats, aligned (FwdPairScratch).
  static void run(const FwdPairModel& m, const FwdPairTarget* tg, float* row, float* score, bool* ok) {
    const int Q = m.Q;
    const float* tfv = m.tfv;
    const V zerov = Ops::zero();
    for (int q = 0; q < Q; ++q) {
      st(row, q, 0, zerov);
      st(row, q, 1, zerov);
      st(row, q, 2, zerov);
    }
    float xE[K], xN[K], xJ[K], xB[K], xC[K], totscale[K];
    const float* rp[K];
    int live = 0;  // bit t: target t has rows left
    int Lmax = 0;
    for (int t = 0; t < K; ++t) {
      xE[t] = 0.0f;
      xN[t] = 1.0f;
      xJ[t] = 0.0f;
      xB[t] = tg[t].n_move;
      xC[t] = 0.0f;
      totscale[t] = 0.0f;
      rp[t] = m.rfv;
      ok[t] = tg[t].L > 0;  // (an empty target: forward_parser's own result)
      score[t] = 0.0f;
      if (tg[t].L > 0)
        live |= 1 << t;
      else
        xB[t] = 0.0f;  // its lanes stay 0
      if (tg[t].L > Lmax) Lmax = tg[t].L;
    }

    for (int i = 1; i <= Lmax; ++i) {
      for (int t = 0; t < K; ++t)
        if ((live >> t) & 1)
          rp[t] = m.rfv + static_cast<std::size_t>(tg[t].dsq[i]) * static_cast<std::size_t>(m.rfv_stride);
      V dcv = zerov;
      V xEv = zerov;
      const V xBv = Ops::set(xB);
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
        sv = Ops::mul(sv, Ops::load_rows(rp, static_cast<std::size_t>(q) * 4));
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
        // A finished target's lanes are all 0 and stay so (0 + 0): it counts as stopped.
        int stopped = kAll & ~live;
        for (int j = 1; j < 4; ++j) {
          if (stopped == kAll) break;
          dcv = Ops::rshift0(dcv);
          tp = 7 * Q;
          V acc = xEm;
          Mask cv = Ops::mzero();
          if (stopped != 0) {
            for (int q = 0; q < Q; ++q) {
              const V old = ld(row, q, 1);
              const V sv = Ops::select(stopped, old, Ops::add(dcv, old));
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
          stopped |= kAll & ~Ops::gt_bits(cv);
        }
      }
      Ops::hsum(xEv, xE);

      float factor[K];
      bool rescale = false;
      for (int t = 0; t < K; ++t) {
        factor[t] = 1.0f;
        if (((live >> t) & 1) == 0) continue;
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
        const V sc = Ops::set(factor);
        for (int q = 0; q < Q; ++q) {
          st(row, q, 0, Ops::mul(ld(row, q, 0), sc));
          st(row, q, 1, Ops::mul(ld(row, q, 1), sc));
          st(row, q, 2, Ops::mul(ld(row, q, 2), sc));
        }
      }

      // Targets ending at this row: their score, then their lanes cleared.
      int ended = 0;
      for (int t = 0; t < K; ++t) {
        if (((live >> t) & 1) == 0 || i != tg[t].L) continue;
        ended |= 1 << t;
        const float c = xC[t];
        if (__builtin_isnan(c) || c == 0.0f || (__builtin_isinf(c) && c > 0.0f)) {
          ok[t] = false;
        } else {
          score[t] = static_cast<float>(static_cast<double>(totscale[t]) +
                                        std::log(static_cast<double>(c * tg[t].c_move)));
        }
        xB[t] = 0.0f;
      }
      live &= ~ended;
      if (ended != 0 && i < Lmax) {
        for (int q = 0; q < Q; ++q)
          for (int s = 0; s < 3; ++s) st(row, q, s, Ops::select(ended, zerov, ld(row, q, s)));
      }
    }
  }
};

}  // namespace
}  // namespace warpsearch::hmm
