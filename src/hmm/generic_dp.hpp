// Straightforward float reference dynamic programming on a generic Profile, exactly as HMMER 3.3.2's
// generic implementations: p7_GMSV (generic_msv.c), p7_GViterbi (generic_viterbi.c), p7_GForward and
// p7_GBackward (generic_fwdback.c, log space with flogsum). Same float operations in the same order,
// so scores equal HMMER's generic routines bit for bit (checked against HMMER 3.3.2's own library built
// from source, on the test models in all four modes). Scores are in nats (null not subtracted).
// These are test references for the striped/quantized filters and Forward/Backward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hmm/common.hpp"
#include "hmm/profile.hpp"

namespace warpsearch::hmm {

/// Main-state cells (p7G_M, p7G_I, p7G_D) and special cells (p7G_E, N, J, B, C).
enum GCell : int { kGM = 0, kGI = 1, kGD = 2 };
inline constexpr std::size_t kGNSCells = 3;
enum GXCell : int { kGE = 0, kGN = 1, kGJ = 2, kGB = 3, kGC = 4 };
inline constexpr std::size_t kGNXCells = 5;

/// Full DP matrix, mirroring P7_GMX: rows i = 0..L, main cells dp[(i*(M+1) + k)*3 + s] for k = 0..M,
/// specials xmx[i*5 + s]. grow_to() resizes; contents are (re)written by each DP routine.
struct GMatrix {
  int M = 0;
  int L = 0;
  std::vector<float> dp;
  std::vector<float> xmx;

  void grow_to(int m, int l) {
    M = m;
    L = l;
    dp.resize(static_cast<std::size_t>(l + 1) * static_cast<std::size_t>(m + 1) * kGNSCells);
    xmx.resize(static_cast<std::size_t>(l + 1) * kGNXCells);
  }
  std::size_t cell(int i, int k, int s) const {
    return (static_cast<std::size_t>(i) * static_cast<std::size_t>(M + 1) + static_cast<std::size_t>(k)) *
               kGNSCells +
           static_cast<std::size_t>(s);
  }
  std::size_t xcell(int i, int s) const {
    return static_cast<std::size_t>(i) * kGNXCells + static_cast<std::size_t>(s);
  }
  float& mmx(int i, int k) { return dp[cell(i, k, kGM)]; }
  float& imx(int i, int k) { return dp[cell(i, k, kGI)]; }
  float& dmx(int i, int k) { return dp[cell(i, k, kGD)]; }
  float& x(int i, int s) { return xmx[xcell(i, s)]; }
  float mmx(int i, int k) const { return dp[cell(i, k, kGM)]; }
  float imx(int i, int k) const { return dp[cell(i, k, kGI)]; }
  float dmx(int i, int k) const { return dp[cell(i, k, kGD)]; }
  float x(int i, int s) const { return xmx[xcell(i, s)]; }
};

/// p7_GMSV: ungapped multi-segment Viterbi with HMMER's MSV length model (uniform entry
/// 2/(M(M+1)), N/C/J loop L/(L+3), E->J (nu-1)/nu, E->C 1/nu). nu = 2.0 in HMMER's use.
float generic_msv(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx, float nu = 2.0f);
/// p7_GViterbi: optimal path score.
float generic_viterbi(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx);
/// p7_GForward: summed score, flogsum arithmetic.
float generic_forward(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx);
/// p7_GBackward: summed score computed backwards (equals Forward up to flogsum error); -inf for L = 0.
float generic_backward(const uint8_t* dsq, int L, const Profile& gm, GMatrix& gx);

// Convenience overloads: Easel-layout Dsq, matrix allocated internally.
float generic_msv(const Dsq& dsq, int L, const Profile& gm, float nu = 2.0f);
float generic_viterbi(const Dsq& dsq, int L, const Profile& gm);
float generic_forward(const Dsq& dsq, int L, const Profile& gm);
float generic_backward(const Dsq& dsq, int L, const Profile& gm);

}  // namespace warpsearch::hmm
