// Null model (P7_BG) and the two-state bias-filter HMM: p7_bg.c and Easel's esl_hmm.c arithmetic.
// Every expression keeps HMMER's types: float where HMMER stores float, double where C promotes
// (log() of a float, constants like 1. or 0.999), then the same rounding back to float.
#include "hmm/bg.hpp"

#include <cmath>

namespace warpsearch::hmm {

namespace {

// p7_AminoFrequencies: Swiss-Prot 50.8 background, in Easel's A..Y code order (double constants
// rounded to float on assignment, as in HMMER).
constexpr double kAminoFrequencies[20] = {0.0787945, 0.0151600, 0.0535222, 0.0668298, 0.0397062,
                                          0.0695071, 0.0229198, 0.0590092, 0.0594422, 0.0963728,
                                          0.0237718, 0.0414386, 0.0482904, 0.0395639, 0.0540978,
                                          0.0683364, 0.0540687, 0.0673417, 0.0114135, 0.0304133};

// esl_hmm_Configure(hmm, fq) with fq = the background: emission odds ratios eo[x][k].
void configure_filter(FilterHmm& h, const Abc& a, const float* fq) {
  const int K = a.K;
  const int Kp = a.Kp;
  for (int x = 0; x < K; x++)
    for (int k = 0; k < FilterHmm::kM; k++) h.eo[x][k] = h.e[k][x] / fq[x];
  for (int k = 0; k < FilterHmm::kM; k++) {  // gap, nonresidue, missing: odds 1 (treated as X)
    h.eo[K][k] = 1.0f;
    h.eo[Kp - 2][k] = 1.0f;
    h.eo[Kp - 1][k] = 1.0f;
  }
  for (int x = K + 1; x <= Kp - 3; x++) {
    for (int k = 0; k < FilterHmm::kM; k++) {
      float num = 0.0f;
      float denom = 0.0f;
      for (int y = 0; y < K; y++) {
        if (a.degen[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)]) {
          num += h.e[k][y];
          denom += fq[y];
        }
      }
      h.eo[x][k] = (denom > 0.0f) ? num / denom : 0.0f;
    }
  }
}

}  // namespace

Bg make_bg(const Abc& a) {
  Bg bg;
  bg.abc = &a;
  bg.f.assign(static_cast<std::size_t>(a.K), 0.0f);
  if (a.type == AbcType::kAmino) {
    for (int x = 0; x < 20; x++) bg.f[static_cast<std::size_t>(x)] = static_cast<float>(kAminoFrequencies[x]);
  } else {
    const float u = static_cast<float>(1.0 / static_cast<double>(static_cast<float>(a.K)));
    for (auto& v : bg.f) v = u;
  }
  bg.p1 = static_cast<float>(350.0 / 351.0);
  bg.omega = static_cast<float>(1.0 / 256.0);
  return bg;
}

void set_length(Bg& bg, int L) {
  bg.p1 = static_cast<float>(L) / static_cast<float>(L + 1);
  bg.fhmm.t[0][0] = bg.p1;
  bg.fhmm.t[0][1] = 1.0f - bg.p1;
}

float null_one(const Bg& bg, const uint8_t* /*dsq*/, int L) {
  // (float)L * log(p1) + log(1. - p1): all in double, rounded once to float.
  const double p1 = static_cast<double>(bg.p1);
  return static_cast<float>(static_cast<double>(static_cast<float>(L)) * std::log(p1) + std::log(1.0 - p1));
}

void set_filter(Bg& bg, int M, const float* compo) {
  const Abc& a = *bg.abc;
  FilterHmm& h = bg.fhmm;
  const float L0 = 400.0f;  // mean length, state 0
  const float L1 = static_cast<float>(static_cast<double>(static_cast<float>(M)) / 8.0);  // state 1
  h.t[0][0] = L0 / (L0 + 1.0f);
  h.t[0][1] = 1.0f / (L0 + 1.0f);
  h.t[0][2] = 1.0f;
  h.t[1][0] = 1.0f / (L1 + 1.0f);
  h.t[1][1] = L1 / (L1 + 1.0f);
  h.t[1][2] = 1.0f;
  for (int x = 0; x < a.K; x++) {
    h.e[0][x] = bg.f[static_cast<std::size_t>(x)];
    h.e[1][x] = compo[x];
  }
  h.pi[0] = static_cast<float>(0.999);
  h.pi[1] = static_cast<float>(0.001);
  h.pi[2] = 0.0f;  // HMMER leaves pi[M] unset; it is only read for L = 0
  configure_filter(h, a, bg.f.data());
}

float filter_score(const Bg& bg, const uint8_t* dsq, int L) {
  const FilterHmm& h = bg.fhmm;
  constexpr int M = FilterHmm::kM;
  // esl_hmm_Forward with per-row scaling: row i is divided by its max, log(max) (double log of a float,
  // stored as float) is accumulated in float, in order i = 1..L+1.
  float nullsc;
  if (L == 0) {
    nullsc = static_cast<float>(std::log(static_cast<double>(h.pi[M])));
  } else {
    float prev[M];
    float cur[M];
    float logsc = 0.0f;
    float max = 0.0f;
    for (int k = 0; k < M; k++) {
      prev[k] = h.eo[dsq[1]][k] * h.pi[k];
      max = (prev[k] > max) ? prev[k] : max;
    }
    for (int k = 0; k < M; k++) prev[k] /= max;
    logsc += static_cast<float>(std::log(static_cast<double>(max)));
    for (int i = 2; i <= L; i++) {
      max = 0.0f;
      for (int k = 0; k < M; k++) {
        float v = 0.0f;
        for (int m = 0; m < M; m++) v += prev[m] * h.t[m][k];
        v *= h.eo[dsq[i]][k];
        cur[k] = v;
        max = (v > max) ? v : max;
      }
      for (int k = 0; k < M; k++) prev[k] = cur[k] / max;
      logsc += static_cast<float>(std::log(static_cast<double>(max)));
    }
    float end = 0.0f;
    for (int m = 0; m < M; m++) end += prev[m] * h.t[m][M];
    logsc += static_cast<float>(std::log(static_cast<double>(end)));
    nullsc = logsc;
  }
  // Length distribution: nullsc + (float)L * logf(p1) + logf(1. - p1), float adds left to right.
  const float lp1 = logf(bg.p1);
  const float lq1 = logf(static_cast<float>(1.0 - static_cast<double>(bg.p1)));
  return nullsc + static_cast<float>(L) * lp1 + lq1;
}

}  // namespace warpsearch::hmm
