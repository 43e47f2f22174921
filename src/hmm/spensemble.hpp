// spensemble.hpp: sampled segment-pair ensembles and their clustering into domains (HMMER 3.3.2
// p7_spensemble.c, with Easel 0.48's esl_cluster_SingleLinkage).
//
// Domain definition samples ~200 stochastic tracebacks of a region; each sampled domain contributes a
// segment pair (i..j on the sequence, k..m on the model, tagged with its sample index). The pairs are
// clustered by single linkage (link rule: >= min_overlap fractional overlap in sequence AND model,
// and start or end diagonals within max_diagdiff); a cluster is significant when the fraction of samples
// contributing to it is >= min_posterior; its consensus coordinates are the widest endpoints with
// frequency >= ceil(ninc * min_endpointp). Significant clusters are ordered by start i (stable for ties,
// as glibc's merge-sort qsort is for these small arrays). Arithmetic (float ratios, ceilf, the model
// overlap without "+1", first-max argmax) is HMMER's exactly.
#pragma once

#include <cstddef>
#include <vector>

namespace warpsearch::hmm {

/// A segment pair (struct p7_spcoord_s). idx: sample index for sampled pairs, cluster index for sigc.
struct SpCoord {
  int idx = 0;
  int i = 0, j = 0;   // sequence start, end (1..L)
  int k = 0, m = 0;   // model start, end (1..M)
  float prob = 0.0f;  // posterior probability (sigc only)
};

/// esl_cluster_SingleLinkage: single-linkage clustering of n items given a symmetric predicate
/// linked(a, b). Fills assignment[0..n-1] with cluster numbers 0..nc-1 and returns nc. Cluster numbers
/// and the order of link tests follow Easel's two-stack algorithm exactly (vertex 0 seeds cluster 0; the
/// available stack is scanned from its top down, with swap-with-top deletion).
template <typename Linked>
int single_linkage(int n, Linked&& linked, std::vector<int>& assignment) {
  std::vector<int> avail(static_cast<std::size_t>(n));  // unclustered vertices; top of stack at the end
  std::vector<int> pending;                             // connected but not yet extended vertices
  pending.reserve(static_cast<std::size_t>(n));
  assignment.assign(static_cast<std::size_t>(n), 0);
  for (int v = 0; v < n; ++v) avail[static_cast<std::size_t>(v)] = n - v - 1;
  int na = n;
  int nc = 0;
  while (na > 0) {
    pending.push_back(avail[static_cast<std::size_t>(--na)]);
    while (!pending.empty()) {
      const int v = pending.back();
      pending.pop_back();
      assignment[static_cast<std::size_t>(v)] = nc;
      for (int x = na - 1; x >= 0; --x) {
        if (linked(v, avail[static_cast<std::size_t>(x)])) {
          pending.push_back(avail[static_cast<std::size_t>(x)]);
          avail[static_cast<std::size_t>(x)] = avail[static_cast<std::size_t>(na - 1)];
          --na;
        }
      }
    }
    ++nc;
  }
  return nc;
}

/// Linkage parameters (struct p7_linkparam_s); defaults are P7_DOMAINDEF's.
struct SpLinkParams {
  float min_overlap = 0.8f;
  bool of_smaller = true;
  int max_diagdiff = 4;
  float min_posterior = 0.25f;
  float min_endpointp = 0.02f;
};

/// link_spsamples: whether two sampled segment pairs belong to the same cluster.
bool sp_linked(const SpCoord& h1, const SpCoord& h2, const SpLinkParams& prm);

/// P7_SPENSEMBLE. Fields are public like HMMER's struct because domain definition post-processes sigc.
struct SpEnsemble {
  int nsamples = 0;             // number of sampled traces seen (max sample index + 1)
  std::vector<SpCoord> sp;      // sampled segment pairs [0..n-1]
  std::vector<int> assignment;  // cluster of each pair [0..n-1], after cluster()
  int nc = 0;                   // number of clusters
  std::vector<SpCoord> sigc;    // significant clusters' consensus coords, ordered by i

  /// p7_spensemble_Reuse.
  void reuse();
  /// p7_spensemble_Add: sample indices must arrive in nondecreasing order without gaps
  /// (throws Error(kInternal) otherwise).
  void add(int sampleidx, int i, int j, int k, int m);
  /// p7_spensemble_Cluster: clusters and defines the significant clusters; returns sigc.size().
  int cluster(const SpLinkParams& prm);
  int nsigc() const { return static_cast<int>(sigc.size()); }
};

}  // namespace warpsearch::hmm
