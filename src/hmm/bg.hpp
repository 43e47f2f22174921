// The null (background) model of HMMER 3.3.2, mirroring P7_BG (p7_bg.c): the null1 model (background
// frequencies f and the geometric length parameter p1), the null2/null3 prior omega, and the two-state
// "bias filter" HMM (Easel's ESL_HMM with M = 2, esl_hmm.c) whose Forward score is the bias-filter
// null score. All arithmetic follows HMMER's exact float/double mix (see the .cpp); null_one and
// filter_score are bit-identical to p7_bg_NullOne / p7_bg_FilterScore (checked against HMMER's library).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/common.hpp"

namespace warpsearch::hmm {

/// Easel's ESL_HMM specialised to the 2 states of the bias filter. State 0 is the iid background,
/// state 1 the model's mean composition; index 2 (= M) is the implicit end state.
struct FilterHmm {
  static constexpr int kM = 2;
  float t[kM][kM + 1] = {};    // t[m][k]: transition m -> k; k = kM is the end state
  float pi[kM + 1] = {};       // initial distribution; pi[kM] (L = 0) stays 0 here
  float e[kM][kMaxAbet] = {};  // emission probabilities, [state][0..K-1]
  float eo[kMaxKp][kM] = {};   // emission odds ratios e/f, [code 0..Kp-1][state]
};

struct Bg {
  const Abc* abc = nullptr;
  std::vector<float> f;         // null1 background frequencies [0..K-1] (p7_AminoFrequencies / uniform)
  float p1 = 350.0f / 351.0f;   // null1 transition, set by set_length()
  float omega = 1.0f / 256.0f;  // null2/null3 prior
  FilterHmm fhmm;               // bias filter, configured by set_filter()
};

/// p7_bg_Create: background for alphabet a (amino: HMMER's Swiss-Prot 50.8 frequencies; else uniform).
Bg make_bg(const Abc& a);

/// p7_bg_SetLength: p1 = L/(L+1); also sets the filter HMM's state-0 transitions t[0][0] = p1 and
/// t[0][1] = 1 - p1 (HMMER does this, so the order "set_filter, then set_length" matters, bug #h85).
void set_length(Bg& bg, int L);

/// p7_bg_NullOne: L*log(p1) + log(1-p1) in double, returned as float (nats). dsq is not read.
/// Like HMMER, L = 0 gives NaN (HMMER's pipeline skips empty sequences); same for filter_score.
float null_one(const Bg& bg, const uint8_t* dsq, int L);
inline float null_one(const Bg& bg, const Dsq& dsq, int L) { return null_one(bg, dsq.data(), L); }

/// p7_bg_SetFilter: configures the two-state filter HMM for a model of M nodes with mean residue
/// composition compo[0..K-1] (then esl_hmm_Configure with fq = f).
void set_filter(Bg& bg, int M, const float* compo);

/// p7_bg_FilterScore: scaled float Forward of the filter HMM on dsq[1..L] (esl_hmm_Forward) plus the
/// length distribution L*logf(p1) + logf(1-p1); nats. dsq uses Easel's layout (dsq[1..L]).
float filter_score(const Bg& bg, const uint8_t* dsq, int L);
inline float filter_score(const Bg& bg, const Dsq& dsq, int L) { return filter_score(bg, dsq.data(), L); }

}  // namespace warpsearch::hmm
