// Single-lane reads of a striped matrix (Omx) and of the striped Forward transitions of an OProfile, with
// HMMER's vector/lane arithmetic: shared by the scalar tracebacks that follow HMMER's SSE code lane by
// lane (stotrace.cpp: p7_StochasticTrace, optacc.cpp: p7_OATrace). Reads only; no arithmetic on values.
//
// Lane addressing: node k lives in vector q = (k-1) % Q, lane r = (k-1) / Q (Q = nqf(M) of the matrix).
// The predecessor node k-1 of a cell in vector q > 0 is lane r of vector q-1; for q == 0 it is lane r-1 of
// vector Q-1 (esl_sse_rightshift_ps of vector Q-1 with a zero vector: lane 0 gets 0).
#pragma once

#include <cstddef>

#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"

namespace warpsearch::hmm {

/// Read access to a striped matrix ox and the transitions of om (both of the same model size).
class StripedCells {
 public:
  StripedCells(const OProfile& om, const Omx& ox) : om_(om), ox_(ox), Q_(Omx::nqf(ox.M)) {}

  /// Vectors per state per row.
  int Q() const { return Q_; }
  /// Lane r of dp vector (q, s) of row i.
  float dp(int i, int q, int s, int r) const {
    return ox_.row(i)[(static_cast<std::size_t>(q) * kOmxNSCells + static_cast<std::size_t>(s)) * 4 +
                      static_cast<std::size_t>(r)];
  }
  /// Lane r of esl_sse_rightshift_ps(dp vector (Q-1, s) of row i, zero), or of vector (q-1, s) when q > 0:
  /// the value of node k-1 for the cell of node k at (q, r).
  float dp_prev(int i, int q, int s, int r) const {
    if (q > 0) return dp(i, q - 1, s, r);
    return r == 0 ? 0.0f : dp(i, Q_ - 1, s, r - 1);
  }
  /// Lane r of transition vector v (0..8Q-1).
  float tf(int v, int r) const {
    return om_.tfv[static_cast<std::size_t>(v) * 4 + static_cast<std::size_t>(r)];
  }
  /// As dp_prev for transition vector 7*q + t (t < kODD) or, with t == kODD, vector 7*Q + q.
  float tf_prev(int q, int t, int r) const {
    const int vq = q > 0 ? q - 1 : Q_ - 1;
    const int v = (t == kODD) ? 7 * Q_ + vq : 7 * vq + t;
    if (q > 0) return tf(v, r);
    return r == 0 ? 0.0f : tf(v, r - 1);
  }
  /// Special cell s (OmxXCell) of row i.
  float x(int i, int s) const { return ox_.x(i, s); }

 private:
  const OProfile& om_;
  const Omx& ox_;
  int Q_;
};

}  // namespace warpsearch::hmm
