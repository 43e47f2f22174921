// HMMER 3.3.2's MSV filter (impl_sse/msvfilter.c p7_MSVFilter) together with the SSV filter it tries
// first (impl_sse/ssvfilter.c p7_SSVFilter), in 16-lane unsigned-byte striped arithmetic, returning
// exactly what the pair returns to the pipeline:
//   - SSV (ungapped single diagonal, no J state) when its result is certain;
//   - otherwise (eslENORESULT) the full MSV filter with the J state;
//   - overflow (eslERANGE): score = +inf, overflow = true; the sequence passes the filter.
// Scores are in nats, before the null-model correction (as *ret_sc in HMMER).
//
// msv_filter / ssv_filter use SSE2 intrinsics in HMMER's striped layout (the SSV keeps HMMER's band
// sweep so every cell is computed with the same saturating byte operations). The *_reference
// functions compute the identical quantized functions with a plain loop over model nodes k (no
// striping): they are the CPU references that other implementations (GPU) must match bit for bit. Without
// SSE2 the fast entry points run the references.
#pragma once

#include <cstdint>

#include "hmm/common.hpp"
#include "hmm/oprofile.hpp"

namespace warpsearch::hmm {

/// A filter's result: score in nats, or overflow (HMMER's eslERANGE: score = +inf, sequence passes).
struct FilterScore {
  float score = 0.0f;
  bool overflow = false;
};

/// p7_SSVFilter's three outcomes.
enum class SsvStatus { kOk, kRange, kNoResult };
struct SsvResult {
  SsvStatus status = SsvStatus::kNoResult;
  float score = 0.0f;  // set for kOk (score) and kRange (+inf); unspecified for kNoResult
};

/// p7_MSVFilter (incl. its p7_SSVFilter pre-check) on dsq[1..L] (Easel layout, see common.hpp).
FilterScore msv_filter(const uint8_t* dsq, int L, const OProfile& om);
inline FilterScore msv_filter(const Dsq& dsq, int L, const OProfile& om) {
  return msv_filter(dsq.data(), L, om);
}

/// p7_SSVFilter alone.
SsvResult ssv_filter(const uint8_t* dsq, int L, const OProfile& om);

/// The MSV part of p7_MSVFilter alone (the J-state byte DP, no SSV pre-check).
FilterScore msv_filter_full(const uint8_t* dsq, int L, const OProfile& om);

/// The integer end states the filters reduce to, and their conversion to results. Every implementation
/// (SSE2, plain-loop reference, GPU) ends in these functions, so equal states give equal scores.
///   SSV: xE, the unsigned maximum of all cell bytes (128..255; the begin value's byte is 128).
///   full MSV: the final J byte xJ, or overflow (some row's E + bias saturated).
/// tjb is the N/J->B cost of the target's length (om.tjb_b after reconfig_length; msv_tjb_for_length).
struct MsvState {
  int xJ = 0;
  bool overflow = false;
};
/// p7_SSVFilter's precondition for its shortcuts (when false it returns eslENORESULT straight away).
bool ssv_applicable(const OProfile& om, int tjb);
/// p7_SSVFilter's decision logic on the SSV maximum byte xE.
SsvResult ssv_decide(int xE, const OProfile& om, int tjb);
/// The J byte in nats (C->T, and the -3 nat NN/CC/JJ approximation).
float msv_score_from_xj(int xJ, const OProfile& om, int tjb);
/// full MSV state -> FilterScore (overflow: +inf, overflow = true).
FilterScore msv_score_from_state(MsvState st, const OProfile& om, int tjb);

/// Plain-loop references of the integer states (om.tjb_b is the length's tjb).
int ssv_xe_reference(const uint8_t* dsq, int L, const OProfile& om);
MsvState msv_full_state_reference(const uint8_t* dsq, int L, const OProfile& om);

/// Plain-loop references of the three functions above (bit-identical results).
FilterScore msv_filter_reference(const uint8_t* dsq, int L, const OProfile& om);
SsvResult ssv_filter_reference(const uint8_t* dsq, int L, const OProfile& om);
FilterScore msv_filter_full_reference(const uint8_t* dsq, int L, const OProfile& om);
inline FilterScore msv_filter_reference(const Dsq& dsq, int L, const OProfile& om) {
  return msv_filter_reference(dsq.data(), L, om);
}

}  // namespace warpsearch::hmm
