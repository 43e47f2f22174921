// HMMER 3.3.2's Viterbi filter (impl_sse/vitfilter.c p7_ViterbiFilter): local Viterbi in 8-lane signed
// 16-bit saturating arithmetic (1/500-bit units, base 12000), striped, with Farrar's "lazy F" D->D
// evaluation and HMMER's -3 nat NN/CC/JJ approximation. Overflow (an E value reaching 32767) returns
// score = +inf, overflow = true (HMMER's eslERANGE: the sequence passes). No path: -inf.
//
// viterbi_filter uses SSE2 intrinsics in HMMER's layout; viterbi_filter_reference computes the same
// quantized function with a plain loop over nodes k (full D->D propagation on every row, which gives
// the same score as the lazy evaluation): the CPU reference other implementations must match bit for
// bit. Without SSE2 the fast entry point runs the reference. The profile must be in a local mode.
#pragma once

#include <cstdint>

#include "hmm/common.hpp"
#include "hmm/msvfilter.hpp"  // FilterScore
#include "hmm/oprofile.hpp"

namespace warpsearch::hmm {

/// p7_ViterbiFilter on dsq[1..L] (Easel layout). Score in nats (before null model).
FilterScore viterbi_filter(const uint8_t* dsq, int L, const OProfile& om);
inline FilterScore viterbi_filter(const Dsq& dsq, int L, const OProfile& om) {
  return viterbi_filter(dsq.data(), L, om);
}

/// The integer end state the filter reduces to: the final C word xC, or overflow (some row's E reached
/// 32767). move is the C->T word of the target's length (om.xw[kOC][kOMove] after reconfig_length;
/// vit_move_for_length). Every implementation ends in vit_score_from_state.
struct VitState {
  int xC = -32768;
  bool overflow = false;
};
float vit_score_from_xc(int xC, const OProfile& om, int move);  // -inf when xC = -32768
FilterScore vit_score_from_state(VitState st, const OProfile& om, int move);
/// Plain-loop reference of the state (om configured for the target's length).
VitState viterbi_state_reference(const uint8_t* dsq, int L, const OProfile& om);

/// Plain-loop reference, bit-identical to viterbi_filter.
FilterScore viterbi_filter_reference(const uint8_t* dsq, int L, const OProfile& om);
inline FilterScore viterbi_filter_reference(const Dsq& dsq, int L, const OProfile& om) {
  return viterbi_filter_reference(dsq.data(), L, om);
}

}  // namespace warpsearch::hmm
