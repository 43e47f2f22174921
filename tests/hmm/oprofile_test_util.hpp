// Test helpers shared by test_oprofile.cpp, test_msvfilter.cpp and test_vitfilter.cpp: random
// Plan7 models (in the spirit of p7_hmm_Sample, with knobs for peaked emissions and zero
// probabilities so that quantization saturates), random / homologous / degenerate / repeated-consensus
// digital sequences, and a small FASTA loader for the real test data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/common.hpp"
#include "hmm/hmm.hpp"

namespace warpsearch::hmm::test {

/// Dirichlet(alpha, ..., alpha) sample of size n into p.
inline void sample_dirichlet(std::mt19937_64& rng, double alpha, int n, float* p) {
  std::gamma_distribution<double> g(alpha, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  double sum = 0.0;
  for (auto& x : v) {
    x = g(rng) + 1e-30;
    sum += x;
  }
  for (int i = 0; i < n; i++) p[i] = static_cast<float>(v[static_cast<std::size_t>(i)] / sum);
}

struct ModelKnobs {
  double emit_alpha = 1.0;   // small: peaked emissions (large match scores, large bias_b)
  double trans_alpha = 1.0;  // small: extreme transitions
  double zero_frac = 0.0;    // fraction of emission probabilities forced to 0 (-inf scores)
};

/// A random valid Plan7 model of M nodes with consensus set (config_profile needs it).
inline Hmm random_hmm(std::mt19937_64& rng, int M, const Abc& a, const ModelKnobs& kn = {}) {
  Hmm h;
  create_body(h, M, a);
  h.name = "random" + std::to_string(M);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int K = a.K;
  for (int k = 0; k <= M; k++) {
    auto& mk = h.mat[static_cast<std::size_t>(k)];
    auto& ik = h.ins[static_cast<std::size_t>(k)];
    if (k > 0) {
      sample_dirichlet(rng, kn.emit_alpha, K, mk.data());
      if (kn.zero_frac > 0.0) {
        float sum = 0.0f;
        for (int x = 0; x < K; x++) {
          if (u(rng) < kn.zero_frac) mk[static_cast<std::size_t>(x)] = 0.0f;
          sum += mk[static_cast<std::size_t>(x)];
        }
        if (sum <= 0.0f) {
          mk[0] = 1.0f;
          sum = 1.0f;
        }
        for (int x = 0; x < K; x++) mk[static_cast<std::size_t>(x)] /= sum;
      }
    }
    sample_dirichlet(rng, 1.0, K, ik.data());
    auto& t = h.t[static_cast<std::size_t>(k)];
    float p3[3], p2[2];
    sample_dirichlet(rng, kn.trans_alpha, 3, p3);
    t[kHMM] = p3[0];
    t[kHMI] = p3[1];
    t[kHMD] = p3[2];
    sample_dirichlet(rng, kn.trans_alpha, 2, p2);
    t[kHIM] = p2[0];
    t[kHII] = p2[1];
    sample_dirichlet(rng, kn.trans_alpha, 2, p2);
    t[kHDM] = p2[0];
    t[kHDD] = p2[1];
  }
  // No D_0; no M_M -> D and D_M -> D (HMMER's conventions).
  h.t[0][kHDM] = 1.0f;
  h.t[0][kHDD] = 0.0f;
  auto& tM = h.t[static_cast<std::size_t>(M)];
  const float s = tM[kHMM] + tM[kHMI];
  tM[kHMM] /= s;
  tM[kHMI] /= s;
  tM[kHMD] = 0.0f;
  tM[kHDM] = 1.0f;
  tM[kHDD] = 0.0f;
  set_consensus(h);
  return h;
}

/// Digital sequence in Easel layout (sentinels at 0 and L+1) of iid background residues; with
/// probability p_odd a position instead gets any code 0..Kp-1 (degenerate, gap, '*', '~').
inline Dsq random_dsq(std::mt19937_64& rng, int L, const Bg& bg, double p_odd = 0.0) {
  const Abc& a = *bg.abc;
  std::discrete_distribution<int> f(bg.f.begin(), bg.f.end());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> anycode(0, a.Kp - 1);
  Dsq d(static_cast<std::size_t>(L) + 2, kDsqSentinel);
  for (int i = 1; i <= L; i++)
    d[static_cast<std::size_t>(i)] =
        static_cast<uint8_t>(p_odd > 0.0 && u(rng) < p_odd ? anycode(rng) : f(rng));
  return d;
}

/// Background sequence with nseg planted model segments: each a run of match emissions along nodes
/// k0.. (sampled from mat, or the argmax residue when greedy), giving high MSV/Viterbi scores.
inline Dsq homolog_dsq(std::mt19937_64& rng, const Hmm& h, const Bg& bg, int L, int nseg, bool greedy) {
  Dsq d = random_dsq(rng, L, bg);
  const int K = h.abc->K;
  for (int s = 0; s < nseg; s++) {
    std::uniform_int_distribution<int> start(1, L);
    std::uniform_int_distribution<int> node(1, h.M);
    int i = start(rng), k = node(rng);
    for (; i <= L && k <= h.M; i++, k++) {
      const auto& mk = h.mat[static_cast<std::size_t>(k)];
      int x;
      if (greedy) {
        x = static_cast<int>(std::max_element(mk.begin(), mk.begin() + K) - mk.begin());
      } else {
        std::discrete_distribution<int> e(mk.begin(), mk.begin() + K);
        x = e(rng);
      }
      d[static_cast<std::size_t>(i)] = static_cast<uint8_t>(x);
    }
  }
  return d;
}

/// The most probable residue of each match state (nodes 1..M) repeated r times, as a digital sequence of
/// L = r * M residues: scores grow with r until the byte / word filters saturate.
inline Dsq consensus_repeat_dsq(const Hmm& h, int r) {
  const int K = h.abc->K;
  Dsq d(1, kDsqSentinel);
  for (int rep = 0; rep < r; rep++)
    for (int k = 1; k <= h.M; k++) {
      const auto& mk = h.mat[static_cast<std::size_t>(k)];
      d.push_back(static_cast<uint8_t>(std::max_element(mk.begin(), mk.begin() + K) - mk.begin()));
    }
  d.push_back(kDsqSentinel);
  return d;
}

/// Reads up to max_seqs records of a FASTA file, digitized with the FASTA rules of abc.hpp.
inline std::vector<Dsq> read_fasta_dsqs(const std::string& path, const Abc& a, std::size_t max_seqs) {
  std::vector<Dsq> out;
  std::ifstream in(path);
  std::string line, seq;
  bool have = false;
  auto flush = [&] {
    if (have) out.push_back(digitize(seq, a));
    seq.clear();
  };
  while (std::getline(in, line) && out.size() < max_seqs) {
    if (!line.empty() && line[0] == '>') {
      flush();
      have = true;
    } else {
      seq += line;
    }
  }
  if (out.size() < max_seqs) flush();
  return out;
}

}  // namespace warpsearch::hmm::test
