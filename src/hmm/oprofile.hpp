// The optimized (striped, quantized) search profile of HMMER 3.3.2, mirroring P7_OPROFILE
// (impl_sse/p7_oprofile.c), and its construction from a generic Profile (p7_oprofile_Convert) and
// length reconfiguration (p7_oprofile_ReconfigLength / ReconfigMSVLength / ReconfigRestLength /
// ReconfigMultihit / ReconfigUnihit), with HMMER's exact arithmetic. Also Easel's esl_sse_expf (the
// vectorized exp approximation the float part is built with) in SSE2 and portable scalar form.
//
// STRIPED LAYOUT (Farrar; HMMER's, identical for all three parts; V = lanes per vector):
//   MSV bytes V = 16, Q16 = nqb(M) = max(2, (M-1)/16 + 1); Viterbi words V = 8, Q8 = nqw(M) =
//   max(2, (M-1)/8 + 1); Forward floats V = 4, Q4 = nqf(M) = max(2, (M-1)/4 + 1).
//   Model node k (1..M) lives in vector q = (k-1) % Q, lane z = (k-1) / Q; conversely vector q lane z
//   holds node k = z*Q + q + 1. Lanes with k > M are padding. Vectors are stored contiguously, lane 0
//   first, so element (vector v, lane z) of an array is at index v*V + z.
//
//   Emissions, residue code x = 0..Kp-1 (match scores only; inserts are not stored, as in HMMER):
//     rbv[(x*Q16 + q)*16 + z]  uint8 MSV cost, biased: bias_b - round(scale_b*msc) (255 = prohibited);
//                              padding 255.
//     sbv[(x*(Q16+17) + q)*16 + z]  int8 SSV score = min(rbv - bias_b, 127) stored as uint8 bits; the
//                              17 extra vectors q = Q16..Q16+16 repeat vector q % Q16 (p7O_EXTRA_SB).
//     rwv[(x*Q8 + q)*8 + z]    int16 Viterbi score round(scale_w*msc), saturated; padding -32768.
//     rfv[(x*Q4 + q)*4 + z]    float odds ratio esl_sse_expf(msc); padding 0.
//
//   Transitions (twv: int16, 8 lanes; tfv: float, 4 lanes). For q = 0..Q-1 there are 7 consecutive
//   vectors in OTrans order kOBM, kOMM, kOIM, kODM, kOMD, kOMI, kOII, then after all 7*Q of them
//   come the Q kODD vectors:
//     twv[(q*7 + t)*8 + z]     t = kOBM..kOII          tfv[(q*7 + t)*4 + z]
//     twv[(7*Q8 + q)*8 + z]    t = kODD                tfv[(7*Q4 + q)*4 + z]
//   With k = z*Q + q + 1 the node of the slot, the value stored is:
//     kOBM  B->M_k          = gm.tsc[(k-1)*8 + kPBM]   (transitions INTO node k, "rotated by -1")
//     kOMM  M_{k-1}->M_k    = gm.tsc[(k-1)*8 + kPMM]
//     kOIM  I_{k-1}->M_k    = gm.tsc[(k-1)*8 + kPIM]
//     kODM  D_{k-1}->M_k    = gm.tsc[(k-1)*8 + kPDM]
//     kOMD  M_k->D_{k+1}    = gm.tsc[k*8 + kPMD]       (transitions OUT OF node k)
//     kOMI  M_k->I_k        = gm.tsc[k*8 + kPMI]
//     kOII  I_k->I_k        = gm.tsc[k*8 + kPII]
//     kODD  D_k->D_{k+1}    = gm.tsc[k*8 + kPDD]
//   A slot is "valid" when its source node index (k-1 for BM/MM/IM/DM, k for the others) is < M;
//   invalid slots (incl. padding) hold -32768 (twv) / 0.0f (tfv, = esl_sse_expf(-inf)). Node 0 is a
//   valid source (gm's node-0 scores, -inf except BM, are converted as they are).
//   twv values are wordify(tsc) capped at 0 (kOII capped at -1: "no zero-cost II"); tfv values are
//   esl_sse_expf(tsc).
//
//   Specials xw[s][m] (int16) and xf[s][m] (float): s = kOE, kON, kOJ, kOC; m = kOMove (0), kOLoop (1).
//   NOTE the order: HMMER's optimized profile stores MOVE first (p7O_MOVE = 0, p7O_LOOP = 1), the
//   reverse of the generic Profile's xsc[s][kLoop = 0 / kMove = 1].
//   Viterbi filter: xw[N/C/J][kOLoop] = 0 (HMMER's "-3 nat approximation"), ncj_roundoff = 0.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hmm/abc.hpp"
#include "hmm/common.hpp"
#include "hmm/profile.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace warpsearch::hmm {

/// Vectors per row for M nodes (p7O_NQB, p7O_NQW, p7O_NQF): never fewer than 2.
inline constexpr int nq_for(int M, int lanes) { return (M - 1) / lanes + 1 < 2 ? 2 : (M - 1) / lanes + 1; }
inline constexpr int nqb(int M) { return nq_for(M, 16); }
inline constexpr int nqw(int M) { return nq_for(M, 8); }
inline constexpr int nqf(int M) { return nq_for(M, 4); }

/// Extra SSV vectors per residue row (p7O_EXTRA_SB).
inline constexpr int kExtraSb = 17;

/// Optimized-profile special states (p7O_E, N, J, C: same values as kXE..kXC) and their transitions.
enum OXState : int { kOE = 0, kON = 1, kOJ = 2, kOC = 3 };
enum OXTransition : int { kOMove = 0, kOLoop = 1 };  // p7O_MOVE, p7O_LOOP (MOVE first!)

/// Optimized transition order within a striped block (p7O_BM ... p7O_DD).
enum OTrans : int { kOBM = 0, kOMM = 1, kOIM = 2, kODM = 3, kOMD = 4, kOMI = 5, kOII = 6, kODD = 7 };
inline constexpr int kONTrans = 8;

struct OProfile {
  // ---- MSV / SSV filter: 16 x uint8 lanes --------------------------------------------------------
  AlignedVector<uint8_t> rbv;  // [Kp][Q16][16] biased costs (see layout above)
  AlignedVector<uint8_t> sbv;  // [Kp][Q16+17][16] SSV signed scores (int8 bit patterns)
  uint8_t tbm_b = 0;           // B->Mk cost: unbiased_byteify(logf(2/(M(M+1))))
  uint8_t tec_b = 0;           // E->C cost: unbiased_byteify(logf(0.5))
  uint8_t tjb_b = 0;           // N/J->B cost: unbiased_byteify(logf(3/(L+3)))
  float scale_b = 0.0f;        // 3/log(2): 1/3-bit units
  uint8_t base_b = 0;          // 190
  uint8_t bias_b = 0;          // unbiased_byteify(-max match score)

  // ---- Viterbi filter: 8 x int16 lanes -----------------------------------------------------------
  AlignedVector<int16_t> rwv;            // [Kp][Q8][8]
  AlignedVector<int16_t> twv;            // [8*Q8][8] (7 interleaved per q, then DD; see above)
  int16_t xw[kNXStates][kNXTrans] = {};  // [kOE..kOC][kOMove/kOLoop]
  float scale_w = 0.0f;                  // 500/log(2): 1/500-bit units
  int16_t base_w = 0;                    // 12000
  int16_t ddbound_w = 0;      // lazy-F bound: max_k wordify(DD(k)) + wordify(DM(k+1)) - wordify(BM(k+1))
  float ncj_roundoff = 0.0f;  // 0 (kept for fidelity)

  // ---- Forward/Backward: 4 x float lanes ---------------------------------------------------------
  AlignedVector<float> rfv;            // [Kp][Q4][4] odds ratios
  AlignedVector<float> tfv;            // [8*Q4][4] transition probabilities (same block order as twv)
  float xf[kNXStates][kNXTrans] = {};  // [kOE..kOC][kOMove/kOLoop] probabilities

  // ---- Annotation copied from the Profile --------------------------------------------------------
  std::string name, acc, desc;
  std::string rf, mm, cs, consensus;  // as in Profile ([0] = ' ' ... ; empty when absent)
  std::array<float, kNEvParams> evparam{};
  std::array<float, kNCutoffs> cutoff{};
  std::array<float, kMaxAbet> compo{};
  const Abc* abc = nullptr;

  // ---- Configuration ------------------------------------------------------------------------------
  int L = 0;
  int M = 0;
  int max_length = -1;
  ProfileMode mode = ProfileMode::kNoMode;
  float nj = 0.0f;
  int Q4 = 0, Q8 = 0, Q16 = 0;  // nqf(M), nqw(M), nqb(M)

  // ---- Element accessors by (residue, node) — used by the scalar references and tests ------------
  /// Flat index of node k (1..M, or padding up to V*Q) in a striped row of Q vectors of V lanes.
  static std::size_t striped_index(int k, int Q, int V) {
    return static_cast<std::size_t>((k - 1) % Q) * static_cast<std::size_t>(V) +
           static_cast<std::size_t>((k - 1) / Q);
  }
  uint8_t msv_cost(int x, int k) const {
    return rbv[static_cast<std::size_t>(x) * static_cast<std::size_t>(Q16) * 16 + striped_index(k, Q16, 16)];
  }
  int8_t ssv_score(int x, int k) const {
    return static_cast<int8_t>(
        sbv[static_cast<std::size_t>(x) * static_cast<std::size_t>(Q16 + kExtraSb) * 16 +
            striped_index(k, Q16, 16)]);
  }
  int16_t vit_match(int x, int k) const {
    return rwv[static_cast<std::size_t>(x) * static_cast<std::size_t>(Q8) * 8 + striped_index(k, Q8, 8)];
  }
  /// Viterbi transition of slot (t, k) with the meaning given in the layout table above.
  int16_t vit_trans(int t, int k) const {
    const std::size_t q = static_cast<std::size_t>((k - 1) % Q8), z = static_cast<std::size_t>((k - 1) / Q8);
    const std::size_t v =
        t == kODD ? static_cast<std::size_t>(7 * Q8) + q : q * 7 + static_cast<std::size_t>(t);
    return twv[v * 8 + z];
  }
  float fwd_match(int x, int k) const {
    return rfv[static_cast<std::size_t>(x) * static_cast<std::size_t>(Q4) * 4 + striped_index(k, Q4, 4)];
  }
  /// Forward transition probability of slot (t, k) (layout table above).
  float fwd_trans(int t, int k) const {
    const std::size_t q = static_cast<std::size_t>((k - 1) % Q4), z = static_cast<std::size_t>((k - 1) / Q4);
    const std::size_t v =
        t == kODD ? static_cast<std::size_t>(7 * Q4) + q : q * 7 + static_cast<std::size_t>(t);
    return tfv[v * 4 + z];
  }
  /// Pointers to residue x's striped rows (vector 0, lane 0).
  const uint8_t* rbv_row(int x) const {
    return rbv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q16) * 16;
  }
  const uint8_t* sbv_row(int x) const {
    return sbv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q16 + kExtraSb) * 16;
  }
  const int16_t* rwv_row(int x) const {
    return rwv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q8) * 8;
  }
  const float* rfv_row(int x) const {
    return rfv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q4) * 4;
  }
};

/// p7_oprofile_Create + p7_oprofile_Convert: build the optimized profile from a configured generic
/// profile (must be in a local mode for the filters; any mode converts). Copies L, M, mode, nj,
/// max_length and the annotation.
OProfile convert_profile(const Profile& gm);

/// p7_oprofile_ReconfigLength: reconfig_msv_length + reconfig_rest_length.
void reconfig_length(OProfile& om, int L);
/// p7_oprofile_ReconfigMSVLength: tjb_b = unbiased_byteify(logf(3/(L+3))).
void reconfig_msv_length(OProfile& om, int L);
/// p7_oprofile_ReconfigRestLength: xf N/C/J loop/move probabilities, xw N/C/J move, om.L = L.
void reconfig_rest_length(OProfile& om, int L);
/// The length-dependent values those set, without changing om: tjb_b for length L, and the N/C/J MOVE
/// word (xw[kON/kOC/kOJ][kOMove]) for length L with om's current nj. Filters that run many target lengths
/// against one profile (the GPU filters) use these to configure each target exactly as reconfig_length.
uint8_t msv_tjb_for_length(const OProfile& om, int L);
int16_t vit_move_for_length(const OProfile& om, int L);
/// The N/C/J MOVE probability reconfig_rest_length sets for length L (xf[kON/kOC/kOJ][kOMove]; their LOOP is
/// 1.0f minus it), with om's current nj.
float rest_move_probability(const OProfile& om, int L);
/// p7_oprofile_ReconfigMultihit / ReconfigUnihit (then reconfig_length).
void reconfig_multihit(OProfile& om, int L);
void reconfig_unihit(OProfile& om, int L);

/// The quantizations of p7_oprofile.c (exposed for the references and tests).
uint8_t biased_byteify(const OProfile& om, float sc);
uint8_t unbiased_byteify(const OProfile& om, float sc);
int16_t wordify(const OProfile& om, float sc);

/// Easel's esl_sse_expf for one float, lane-exact with the vector version (Cephes polynomial, range
/// reduction, +inf above 88.3762626647949f, 0 at or below -88.3762626647949f).
float sse_expf_scalar(float x);
#if defined(__SSE2__)
/// Easel's esl_sse_expf on 4 lanes.
__m128 sse_expf(__m128 x);
#endif

}  // namespace warpsearch::hmm
