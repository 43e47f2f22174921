// Stochastic traceback of a striped, scaled Forward matrix (HMMER 3.3.2 impl_sse/stotrace.c,
// p7_StochasticTrace): samples one state path from the posterior distribution over paths, drawing from
// an Easel random stream in exactly HMMER's order, so that hmmsearch's domain-definition ensemble
// (200 sampled traces per region, seed 42) is reproduced bit for bit.
#pragma once

#include <cstdint>

#include "hmm/common.hpp"

namespace warpsearch::hmm {

struct OProfile;
struct Omx;
class Rng;
struct Trace;

/// esl_vec_FNorm: normalizes v[0..n-1] in place to sum 1 (compensated Kahan float sum, then each entry
/// divided by it); all entries 1/n when the sum is 0. The path-weight normalization of every traceback
/// choice below.
void fnorm(float* v, int n);

/// p7_StochasticTrace. fwd is a full Forward matrix (forward(), not the parser) of the L residues at
/// dsq[1..L] (dsq itself is not read: any pointer, e.g. into the middle of a longer sequence, works, as
/// HMMER's domain definition passes dsq+i-1 for a subregion). tr must be empty (N == 0; else Error
/// kInternal) and is returned as a profile trace S N.. B .. E .. C.. T with i in 1..L, tr.M = om.M,
/// tr.L = L, not indexed, pp (if present) all 0.
///
/// Draw order (as HMMER; traceback runs from C(L) back to S): one rng draw per choice at each M, D, I,
/// C, J, E and B state met (none at N: N(i) always comes from N(i-1), S at i == 0). M/D/I/C/J/B choose
/// with Rng::fchoose over float path weights normalized by esl_vec_FNorm (Kahan float sum, then
/// division); E picks its Mk/Dk source with one draw compared against a double running sum of float
/// products dp*(float)(1/E(i)), scanned q-major (Mq lanes 0..3, then Dq lanes 0..3) exactly as the
/// striped loop, repeating the scan (with the sum continuing) until the sum passes the draw.
void stochastic_trace(Rng& rng, const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd, Trace& tr);

/// Same, for a whole digital sequence (dsq.size() >= L + 2).
inline void stochastic_trace(Rng& rng, const Dsq& dsq, int L, const OProfile& om, const Omx& fwd, Trace& tr) {
  stochastic_trace(rng, dsq.data(), L, om, fwd, tr);
}

}  // namespace warpsearch::hmm
