// The "null2" biased-composition model of one domain (HMMER 3.3.2 impl_sse/null2.c): per-residue odds
// ratios f_d(x)/f_0(x) of the residue composition that the profile's emission states used to explain the
// domain, estimated either from posterior decoding (expectation) or from one sampled trace segment.
#pragma once

#include "hmm/common.hpp"

namespace warpsearch::hmm {

struct OProfile;
struct Omx;
struct Trace;

/// p7_Null2_ByExpectation. pp is the posterior decoding matrix of a domain's Ld = pp.L residues. Row 0
/// of pp (its M/D/I vectors and its N, C, J specials) is overwritten as work space (HMMER does the same):
/// it receives the row sums of rows 1..Ld (row 1 copied, then rows 2..Ld added in order, 4-lane float),
/// scaled by norm = (float)(1.0 / (double)(float)Ld). Then for x = 0..K-1:
///   null2[x] = hsum_q( sum_q (M0q * rfv[x][q] + I0q) ) + (N0 + C0 + J0)
/// with HMMER's lane-wise accumulation order and horizontal sum (l0 + l1) + (l2 + l3); degenerate codes
/// get esl_abc_FAvgScVec averages; null2[K] (gap), null2[Kp-2], null2[Kp-1] are 1. null2 must hold Kp
/// floats.
void null2_by_expectation(const OProfile& om, Omx& pp, float* null2);

/// p7_Null2_ByTrace. Uses the trace segment tr.st/k/i[zstart..zend] (usually a domain's tfrom..tto):
/// counts the emitting states (i > 0): those with k > 0 (M and, as in HMMER, I too) add 1 to the M count
/// of node k; N/C/J add to their special. Counts are normalized by norm as above (Ld = number of emitting
/// states) and turned into null2 exactly as null2_by_expectation. wrk's row 0 (grown by the caller for
/// om.M) is overwritten.
void null2_by_trace(const OProfile& om, const Trace& tr, int zstart, int zend, Omx& wrk, float* null2);

/// The same two estimators computed with the portable lane operations instead of SSE2 (identical results;
/// for tests).
void null2_by_expectation_portable(const OProfile& om, Omx& pp, float* null2);
void null2_by_trace_portable(const OProfile& om, const Trace& tr, int zstart, int zend, Omx& wrk,
                             float* null2);

}  // namespace warpsearch::hmm
