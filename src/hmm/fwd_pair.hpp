// fwd_pair.hpp: the Forward parser's score for two or four targets against one model at once, bit for bit
// the score forward_parser (fwdback.hpp) returns for each.
//
// The pipeline runs the Forward filter on every Viterbi survivor and needs only its score, except for the
// few targets that pass it (those get forward_parser's matrix for Backward and domain definition). One
// Forward row's D->D passes are chains of dependent adds and multiplies, so a single target leaves most
// of a core's floating-point units idle; four targets in one 512-bit register (AVX-512F), two in a 256-bit
// one (AVX2), or two 128-bit chains interleaved (SSE2), fill them with the same instruction count per
// target. The arithmetic of each target is forward_engine's, operation for operation (fwd_pair_engine.hpp
// says how the targets' different lengths, early-stopping passes and rescaling are kept apart).
//
// Contents:
//   FwdPairModel                    what the engine reads of the model (tfv, rfv, E's loop/move)
//   FwdPairTarget / fwd_pair_target a target and its length configuration (reconfig_length's N/C/J values)
//   FwdPairIsa                      the op sets: portable lanes (2 or 4 targets), SSE2, AVX2, AVX-512F (the
//                                   last two on x86-64 CPUs that have them, checked at run time)
//   forward_parser_group            one group's scores (ok false: ask forward_parser, which throws or, for
//                                   an empty target, returns its score)
//   forward_parser_scores           scores of any number of targets, grouped in the given order, falling
//                                   back to forward_parser where a group result is not ok
//
// Call with the floating-point mode of the pipeline's threads (FlushToZeroScope), as forward_parser.
#pragma once

#include <cstdint>
#include <span>

#include "hmm/common.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"

namespace warpsearch::hmm {

struct FwdPairModel {
  int M = 0;
  int Q = 0;                   // nqf(M)
  const float* tfv = nullptr;  // om.tfv
  const float* rfv = nullptr;  // om.rfv
  int rfv_stride = 0;          // floats per residue row of rfv (om.Q4 * 4)
  float e_move = 0.0f;         // om.xf[kOE][kOMove]
  float e_loop = 0.0f;         // om.xf[kOE][kOLoop]
};

struct FwdPairTarget {
  const uint8_t* dsq = nullptr;  // dsq[1..L]
  int L = 0;
  // om.xf[kON / kOC / kOJ][kOLoop / kOMove] after reconfig_length(om, L).
  float n_loop = 0.0f, n_move = 0.0f, c_loop = 0.0f, c_move = 0.0f, j_loop = 0.0f, j_move = 0.0f;
};

FwdPairTarget fwd_pair_target(const OProfile& om, const uint8_t* dsq, int L);

/// The op sets: two targets per group (portable lanes, SSE2, AVX2) or four (portable lanes, AVX-512F).
enum class FwdPairIsa { kPortable, kSse2, kAvx2, kPortable4, kAvx512 };
bool fwd_pair_isa_supported(FwdPairIsa isa);
/// Targets per group of an op set (2 or 4).
int fwd_group_size(FwdPairIsa isa);
/// The fastest op set the CPU has: AVX-512F, else AVX2, else SSE2 where built, else portable.
/// WARPSEARCH_HMM_FWD_ISA=avx512|avx2|sse2|portable|portable4 chooses one instead (a measurement knob; an
/// op set the CPU lacks is not chosen). Every op set gives the same scores.
FwdPairIsa fwd_pair_best_isa();
const char* fwd_pair_isa_name(FwdPairIsa isa);

/// The engine's one row of a group (3 * Q * 4K floats, 64-byte aligned), reused between calls.
class FwdPairScratch {
 public:
  float* row(int Q, int K);

 private:
  AlignedVector<float> row_;
};

/// For a group of fwd_group_size(isa) targets (tg.size(), score.size(), ok.size()):
/// score[t] = forward_parser(tg[t].dsq, tg[t].L, om configured for tg[t].L) where ok[t]; ok[t] is false
/// when that call would throw (C NaN, 0 or +inf) or tg[t].L == 0.
void forward_parser_group(const OProfile& om, std::span<const FwdPairTarget> tg, FwdPairScratch& ws,
                          std::span<float> score, std::span<bool> ok, FwdPairIsa isa = fwd_pair_best_isa());

/// Forward parser scores of targets[k] into scores[k], bit for bit forward_parser's: groups of consecutive
/// targets (k = 0..K-1, K..2K-1, ...; a short last group is filled with empty targets); a target whose group
/// result is not ok is recomputed with forward_parser (with fallback as its matrix), which throws its error.
/// scores.size() == targets.size().
void forward_parser_scores(const OProfile& om, std::span<const FwdPairTarget> targets,
                           std::span<float> scores, FwdPairScratch& ws, Omx& fallback,
                           FwdPairIsa isa = fwd_pair_best_isa());

}  // namespace warpsearch::hmm
