// Forward and Backward on the striped float profile (HMMER 3.3.2 impl_sse/fwdback.c, bit for bit).
//
// Probability (odds) space, 4-lane float vectors in HMMER's striped layout (see omx.hpp, oprofile.hpp),
// sparse per-row rescaling: when a Forward row's E exceeds 1e4 the row is divided by E, the factor is
// stored in xmx[i][SCALE] and log(E) (double log, accumulated into a float) is added to totscale.
// Backward reuses Forward's scale factors, switching to its own when B(i) exceeds 1e16 (HMMER's
// has_own_scales rule). Scores are in nats, as HMMER's raw Forward/Backward scores (before null model).
//
// The parser variants keep one dp row (Omx in parser mode) plus all special-state rows; the full
// variants keep every row (needed for decoding, stochastic traceback, optimal accuracy).
//
// HMMER raises eslERANGE (a fatal exception in hmmsearch) when the final Forward C (Backward N) value is
// NaN, +inf, or 0 with L > 0. These functions throw warpsearch::Error(ErrorKind::kInternal) with HMMER's
// message in those cases ("forward score is NaN", "forward score underflow (is 0.0)", "forward score
// overflow (is infinity)", and the same for "backward"). A matrix too small for the problem also throws
// kInternal.
//
// All arithmetic depends on the caller's floating-point mode: HMMER runs with SSE flush-to-zero and
// denormals-are-zero enabled (impl_Init); use FlushToZeroScope (below) on every thread that runs them.
#pragma once

#include "hmm/common.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"

namespace warpsearch::hmm {

/// p7_Forward: full-matrix Forward of dsq[1..L] against om into ox (ox must fit_full(M, L)).
/// Returns the Forward score in nats.
float forward(const Dsq& dsq, int L, const OProfile& om, Omx& ox);

/// p7_ForwardParser: same score with one dp row (ox must fit_parser(M, L)); ox.xmx rows 0..L are filled.
float forward_parser(const Dsq& dsq, int L, const OProfile& om, Omx& ox);

/// p7_Backward: full-matrix Backward into bck (bck must fit_full(M, L)), using fwd's scale factors
/// (fwd filled by forward or forward_parser for the same dsq, L, om). Returns the Backward score in nats.
float backward(const Dsq& dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck);

/// p7_BackwardParser: same with one dp row (bck must fit_parser(M, L)).
float backward_parser(const Dsq& dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck);

/// Variants taking a pointer to the sentinel position of a (sub)sequence: residues are dsq[1..L] and
/// dsq[0] is never read. This is how HMMER's domain definition calls p7_Forward(sq->dsq + i - 1, ...)
/// on an envelope i..j.
float forward(const uint8_t* dsq, int L, const OProfile& om, Omx& ox);
float forward_parser(const uint8_t* dsq, int L, const OProfile& om, Omx& ox);
float backward(const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck);
float backward_parser(const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck);

namespace detail {
/// The same engines on the portable vf4 lanes, full (true) or parser (false) mode; tests check that they
/// equal the native (SSE2) path bit for bit.
float forward_portable(const uint8_t* dsq, int L, const OProfile& om, Omx& ox, bool full);
float backward_portable(const uint8_t* dsq, int L, const OProfile& om, const Omx& fwd, Omx& bck, bool full);
}  // namespace detail

/// Sets the SSE flush-to-zero and denormals-are-zero modes for the current thread (what HMMER's
/// impl_Init does in hmmsearch's main and worker threads) and restores the previous mode on
/// destruction. No-op without SSE2.
class FlushToZeroScope {
 public:
  FlushToZeroScope();
  ~FlushToZeroScope();
  FlushToZeroScope(const FlushToZeroScope&) = delete;
  FlushToZeroScope& operator=(const FlushToZeroScope&) = delete;

 private:
  unsigned int saved_ = 0;
};

}  // namespace warpsearch::hmm
