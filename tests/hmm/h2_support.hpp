// Test helpers shared by the H2 tests (bg, profile, generic DP) and the Forward/Backward/decoding tests:
// random probability models built directly as Hmm (Dirichlet(1)-like draws, HMMER's boundary conventions
// for nodes 0 and M), random iid digital sequences (optionally with planted consensus copies), and a
// minimal FASTA reader digitizing with the model alphabet.
#pragma once

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/common.hpp"
#include "hmm/hmm.hpp"

namespace warpsearch::hmm::h2test {

inline void random_distribution(std::mt19937& rng, std::vector<float>& p, double peak) {
  std::exponential_distribution<double> ex(1.0);
  std::vector<double> d(p.size());
  double sum = 0.0;
  for (auto& v : d) sum += (v = ex(rng));
  // Optionally sharpen one entry so that scores span a realistic range.
  if (peak > 0.0) d[std::uniform_int_distribution<std::size_t>(0, d.size() - 1)(rng)] += peak * sum;
  sum = 0.0;
  for (double v : d) sum += v;
  for (std::size_t i = 0; i < p.size(); i++) p[i] = static_cast<float>(d[i] / sum);
}

/// Three-way / two-way random transition split with total 1.
inline void split(std::mt19937& rng, float* out, int n, double main_weight) {
  std::exponential_distribution<double> ex(1.0);
  std::vector<double> d(static_cast<std::size_t>(n));
  double sum = 0.0;
  for (auto& v : d) sum += (v = ex(rng));
  d[0] += main_weight * sum;
  sum = 0.0;
  for (double v : d) sum += v;
  for (int i = 0; i < n; i++) out[i] = static_cast<float>(d[static_cast<std::size_t>(i)] / sum);
}

/// A random model of M nodes. ungapped: all M->M = 1 (no inserts or deletes, B->M1 = 1).
inline Hmm random_hmm(std::mt19937& rng, int M, const Abc& a, bool ungapped = false) {
  Hmm h;
  create_body(h, M, a);
  h.name = "random" + std::to_string(M);
  for (int k = 1; k <= M; k++) random_distribution(rng, h.mat[static_cast<std::size_t>(k)], 2.0);
  for (int k = 0; k <= M; k++) random_distribution(rng, h.ins[static_cast<std::size_t>(k)], 0.0);
  for (int k = 0; k <= M; k++) {
    auto& t = h.t[static_cast<std::size_t>(k)];
    float m[3], i[2], d[2];
    split(rng, m, 3, 6.0);
    split(rng, i, 2, 1.0);
    split(rng, d, 2, 1.0);
    if (ungapped) {
      m[0] = 1.0f;
      m[1] = m[2] = 0.0f;
    }
    t[kHMM] = m[0];
    t[kHMI] = m[1];
    t[kHMD] = m[2];
    t[kHIM] = i[0];
    t[kHII] = i[1];
    t[kHDM] = d[0];
    t[kHDD] = d[1];
  }
  // Node 0 has no D_0 (D->M = 1 by convention); node M has no D_{M+1}: M->D = 0, D->M = 1.
  h.t[0][kHDM] = 1.0f;
  h.t[0][kHDD] = 0.0f;
  auto& tM = h.t[static_cast<std::size_t>(M)];
  const float mm = tM[kHMM] + tM[kHMD];
  tM[kHMM] = mm;
  tM[kHMD] = 0.0f;
  tM[kHDM] = 1.0f;
  tM[kHDD] = 0.0f;
  set_consensus(h);
  return h;
}

/// Random iid sequence over the canonical residues (uniform), with a fraction of degenerate codes.
inline Dsq random_dsq(std::mt19937& rng, int L, const Abc& a, double degenerate_fraction = 0.0) {
  Dsq dsq(static_cast<std::size_t>(L) + 2, kDsqSentinel);
  std::uniform_int_distribution<int> canon(0, a.K - 1);
  std::uniform_int_distribution<int> degen(a.K + 1, a.Kp - 3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 1; i <= L; i++)
    dsq[static_cast<std::size_t>(i)] =
        static_cast<uint8_t>(u(rng) < degenerate_fraction ? degen(rng) : canon(rng));
  return dsq;
}

/// Random iid sequence (random_dsq) with `copies` copies of the model's most probable residue per node
/// (nodes 1..M in order, cut at L) planted at random start positions, so that scores are large.
/// (oprofile_test_util.hpp's test::homolog_dsq with greedy = true is the std::mt19937_64 counterpart.)
inline Dsq planted_dsq(std::mt19937& rng, const Hmm& hmm, int L, int copies) {
  Dsq dsq = random_dsq(rng, L, *hmm.abc);
  std::uniform_int_distribution<int> start(1, L);
  for (int c = 0; c < copies; ++c) {
    int i = start(rng);
    for (int k = 1; k <= hmm.M && i <= L; ++k, ++i) {
      const auto& p = hmm.mat[static_cast<std::size_t>(k)];
      int best = 0;
      for (int x = 1; x < hmm.abc->K; ++x)
        if (p[static_cast<std::size_t>(x)] > p[static_cast<std::size_t>(best)]) best = x;
      dsq[static_cast<std::size_t>(i)] = static_cast<uint8_t>(best);
    }
  }
  return dsq;
}

struct FastaSeq {
  std::string name;
  Dsq dsq;
  int L = 0;
};

/// Reads up to max_n records of a FASTA file and digitizes them with alphabet a.
inline std::vector<FastaSeq> read_fasta(const std::string& path, const Abc& a, std::size_t max_n = SIZE_MAX) {
  std::ifstream in(path);
  std::vector<FastaSeq> out;
  std::string line, name, text;
  auto flush = [&] {
    if (name.empty()) return;
    FastaSeq s;
    s.name = name;
    s.dsq = digitize(text, a);
    s.L = static_cast<int>(s.dsq.size()) - 2;
    out.push_back(std::move(s));
  };
  while (std::getline(in, line) && out.size() < max_n) {
    if (!line.empty() && line[0] == '>') {
      flush();
      name = line.substr(1, line.find_first_of(" \t") == std::string::npos ? std::string::npos
                                                                           : line.find_first_of(" \t") - 1);
      text.clear();
    } else {
      text += line;
    }
  }
  if (out.size() < max_n) flush();
  return out;
}

}  // namespace warpsearch::hmm::h2test
