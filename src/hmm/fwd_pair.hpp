// fwd_pair.hpp: the Forward parser's score for two targets against one model at once, bit for bit the
// score forward_parser (fwdback.hpp) returns for each.
//
// The pipeline runs the Forward filter on every Viterbi survivor and needs only its score, except for the
// few targets that pass it (those get forward_parser's matrix for Backward and domain definition). One
// Forward row's D->D passes are chains of dependent adds and multiplies, so a single target leaves most
// of a core's floating-point units idle; two targets in one 256-bit register (AVX2), or two 128-bit chains
// interleaved (SSE2), fill them with the same instruction count per target. The arithmetic of each target
// is forward_engine's, operation for operation (fwd_pair_engine.hpp says how the two targets' different
// lengths, early-stopping passes and rescaling are kept apart).
//
// Contents:
//   FwdPairModel / fwd_pair_model   what the engine reads of the model (tfv, rfv, E's loop/move)
//   FwdPairTarget / fwd_pair_target a target and its length configuration (reconfig_length's N/C/J values)
//   FwdPairIsa                      the op sets: portable lanes, SSE2, AVX2 (x86-64 with AVX2 at run time)
//   forward_parser_pair             the two scores (ok false: ask forward_parser, which throws or, for an
//                                   empty target, returns its score)
//   forward_parser_scores           scores of any number of targets, paired in the given order, falling back
//                                   to forward_parser where a pair result is not ok
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

FwdPairModel fwd_pair_model(const OProfile& om);
FwdPairTarget fwd_pair_target(const OProfile& om, const uint8_t* dsq, int L);

enum class FwdPairIsa { kPortable, kSse2, kAvx2 };
bool fwd_pair_isa_supported(FwdPairIsa isa);
FwdPairIsa fwd_pair_best_isa();  // AVX2 where the CPU has it, else SSE2 where built, else portable

/// The engine's one row of two targets (3 * Q * 8 floats, 32-byte aligned), reused between calls.
class FwdPairScratch {
 public:
  float* row(int Q);

 private:
  AlignedVector<float> row_;
};

/// score[t] = forward_parser(tg[t].dsq, tg[t].L, om configured for tg[t].L) where ok[t]; ok[t] is false
/// when that call would throw (C NaN, 0 or +inf) or tg[t].L == 0.
void forward_parser_pair(const OProfile& om, const FwdPairTarget (&tg)[2], FwdPairScratch& ws,
                         float (&score)[2], bool (&ok)[2], FwdPairIsa isa = fwd_pair_best_isa());

/// Forward parser scores of targets[k] (k = 0, 1 paired, 2, 3 paired, ...; an odd last one alone) into
/// scores[k], bit for bit forward_parser's; a target whose pair result is not ok is recomputed with
/// forward_parser (with fallback as its matrix), which throws its error. scores.size() == targets.size().
void forward_parser_scores(const OProfile& om, std::span<const FwdPairTarget> targets,
                           std::span<float> scores, FwdPairScratch& ws, Omx& fallback,
                           FwdPairIsa isa = fwd_pair_best_isa());

}  // namespace warpsearch::hmm
