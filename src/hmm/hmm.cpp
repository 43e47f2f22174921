// Core profile HMM routines (see hmm.hpp): body allocation with HMMER's zero conventions, the consensus
// line, match/insert occupancy and the model composition, each with p7_hmm.c's exact arithmetic
// (including its float/double mixing and Easel's compensated float sum in the normalization).
#include "hmm/hmm.hpp"

#include <cctype>
#include <vector>

namespace warpsearch::hmm {
namespace {

// esl_vec_FSum: Kahan-compensated float sum, in index order.
float kahan_sum(const float* v, int n) {
  float sum = 0.0f;
  float c = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float y = v[i] - c;
    const float t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  return sum;
}

// esl_vec_FAddScaled: v1[i] += v2[i] * a (float product, then float add).
void add_scaled(float* v1, const float* v2, float a, int n) {
  for (int i = 0; i < n; ++i) v1[i] += v2[i] * a;
}

}  // namespace

void create_body(Hmm& hmm, int M, const Abc& a) {
  hmm.abc = &a;
  hmm.M = M;
  const auto n = static_cast<std::size_t>(M) + 1;
  hmm.t.assign(n, std::array<float, kHmmNTransitions>{});
  hmm.mat.assign(n, std::vector<float>(static_cast<std::size_t>(a.K), 0.0f));
  hmm.ins.assign(n, std::vector<float>(static_cast<std::size_t>(a.K), 0.0f));
  hmm.mat[0][0] = 1.0f;
  hmm.t[0][kHDM] = 1.0f;
}

void set_consensus(Hmm& hmm) {
  const Abc& a = *hmm.abc;
  const float mthresh = (a.type == AbcType::kAmino) ? 0.5f : 0.9f;
  hmm.consensus.assign(static_cast<std::size_t>(hmm.M) + 1, ' ');
  for (int k = 1; k <= hmm.M; ++k) {
    const auto& m = hmm.mat[static_cast<std::size_t>(k)];
    int best = 0;  // esl_vec_FArgMax: first maximum
    for (int x = 1; x < a.K; ++x)
      if (m[static_cast<std::size_t>(x)] > m[static_cast<std::size_t>(best)]) best = x;
    const auto c = static_cast<unsigned char>(a.sym[static_cast<std::size_t>(best)]);
    hmm.consensus[static_cast<std::size_t>(k)] =
        static_cast<char>(m[static_cast<std::size_t>(best)] >= mthresh ? std::toupper(c) : std::tolower(c));
  }
  hmm.flags |= kHmmCons;
}

void calculate_occupancy(const Hmm& hmm, float* mocc, float* iocc) {
  const auto& t = hmm.t;
  mocc[0] = 0.0f;
  mocc[1] = t[0][kHMI] + t[0][kHMM];
  for (int k = 2; k <= hmm.M; ++k) {
    const auto& tp = t[static_cast<std::size_t>(k - 1)];
    // HMMER: float term mocc*(MM+MI) plus the double term (1.0-mocc)*DM, summed in double.
    const float stay = mocc[k - 1] * (tp[kHMM] + tp[kHMI]);
    const double reenter = (1.0 - static_cast<double>(mocc[k - 1])) * static_cast<double>(tp[kHDM]);
    mocc[k] = static_cast<float>(static_cast<double>(stay) + reenter);
  }
  if (iocc != nullptr) {
    iocc[0] = t[0][kHMI] / t[0][kHIM];
    for (int k = 1; k <= hmm.M; ++k) {
      const auto& tk = t[static_cast<std::size_t>(k)];
      iocc[k] = mocc[k] * tk[kHMI] / tk[kHIM];
    }
  }
}

void set_composition(Hmm& hmm) {
  const int K = hmm.abc->K;
  std::vector<float> mocc(static_cast<std::size_t>(hmm.M) + 1);
  std::vector<float> iocc(static_cast<std::size_t>(hmm.M) + 1);
  calculate_occupancy(hmm, mocc.data(), iocc.data());
  for (int x = 0; x < K; ++x) hmm.compo[static_cast<std::size_t>(x)] = 0.0f;
  float* compo = hmm.compo.data();
  add_scaled(compo, hmm.ins[0].data(), iocc[0], K);
  for (int k = 1; k <= hmm.M; ++k) {
    add_scaled(compo, hmm.mat[static_cast<std::size_t>(k)].data(), mocc[static_cast<std::size_t>(k)], K);
    add_scaled(compo, hmm.ins[static_cast<std::size_t>(k)].data(), iocc[static_cast<std::size_t>(k)], K);
  }
  // esl_vec_FNorm
  const float sum = kahan_sum(compo, K);
  if (sum != 0.0f) {
    for (int x = 0; x < K; ++x) compo[x] /= sum;
  } else {
    for (int x = 0; x < K; ++x) compo[x] = static_cast<float>(1.0 / static_cast<double>(K));
  }
  hmm.flags |= kHmmCompo;
}

}  // namespace warpsearch::hmm
