// spensemble.cpp: segment-pair ensemble collection, HMMER's single-linkage link rule and the
// definition of significant clusters' consensus endpoints (p7_spensemble.c, HMMER 3.3.2).
#include "hmm/spensemble.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

// esl_vec_IArgMax: index of the first maximum.
int argmax_first(const std::vector<int>& v, int n) {
  int best = 0;
  for (int x = 1; x < n; ++x)
    if (v[static_cast<std::size_t>(x)] > v[static_cast<std::size_t>(best)]) best = x;
  return best;
}

}  // namespace

bool sp_linked(const SpCoord& h1, const SpCoord& h2, const SpLinkParams& prm) {
  // Sequence overlap, as a float fraction of the smaller (or larger) segment.
  int nov = std::min(h1.j, h2.j) - std::max(h1.i, h2.i) + 1;
  int n = prm.of_smaller ? std::min(h1.j - h1.i + 1, h2.j - h2.i + 1)
                         : std::max(h1.j - h1.i + 1, h2.j - h2.i + 1);
  if (static_cast<float>(nov) / static_cast<float>(n) < prm.min_overlap) return false;

  // Model overlap. HMMER omits the "+1" here (kept for exactness).
  nov = std::min(h1.m, h2.m) - std::max(h1.k, h2.k);
  n = prm.of_smaller ? std::min(h1.m - h1.k + 1, h2.m - h2.k + 1)
                     : std::max(h1.m - h1.k + 1, h2.m - h2.k + 1);
  if (static_cast<float>(nov) / static_cast<float>(n) < prm.min_overlap) return false;

  // Start diagonals, then end diagonals, within max_diagdiff.
  if (std::abs((h1.i - h1.k) - (h2.i - h2.k)) <= prm.max_diagdiff) return true;
  if (std::abs((h1.j - h1.m) - (h2.j - h2.m)) <= prm.max_diagdiff) return true;
  return false;
}

void SpEnsemble::reuse() {
  nsamples = 0;
  sp.clear();
  assignment.clear();
  nc = 0;
  sigc.clear();
}

void SpEnsemble::add(int sampleidx, int i, int j, int k, int m) {
  if (sampleidx > nsamples) throw Error(ErrorKind::kInternal, "SpEnsemble::add: sample index out of order");
  if (sampleidx == nsamples) ++nsamples;
  SpCoord c;
  c.idx = sampleidx;
  c.i = i;
  c.j = j;
  c.k = k;
  c.m = m;
  sp.push_back(c);
}

int SpEnsemble::cluster(const SpLinkParams& prm) {
  const int n = static_cast<int>(sp.size());
  nc = single_linkage(
      n,
      [&](int a, int b) {
        return sp_linked(sp[static_cast<std::size_t>(a)], sp[static_cast<std::size_t>(b)], prm);
      },
      assignment);
  sigc.clear();

  std::vector<int> epc;  // endpoint frequency histogram over a cluster's coordinate window
  for (int c = 0; c < nc; ++c) {
    // Posterior probability of the cluster: fraction of samples with >= 1 pair in it. A sample's pairs
    // are contiguous in sp, so counting changes of idx among members avoids double counting.
    int ninc = 0;
    int idx_of_last = -1;
    for (int h = 0; h < n; ++h) {
      if (assignment[static_cast<std::size_t>(h)] != c) continue;
      if (sp[static_cast<std::size_t>(h)].idx != idx_of_last) ++ninc;
      idx_of_last = sp[static_cast<std::size_t>(h)].idx;
    }
    if (static_cast<float>(ninc) / static_cast<float>(nsamples) < prm.min_posterior) continue;

    // Extent of the cluster's pairs in each coordinate.
    bool first = true;
    int imin = 0, jmin = 0, kmin = 0, mmin = 0, imax = 0, jmax = 0, kmax = 0, mmax = 0;
    for (int h = 0; h < n; ++h) {
      if (assignment[static_cast<std::size_t>(h)] != c) continue;
      const SpCoord& s = sp[static_cast<std::size_t>(h)];
      if (first) {
        imin = imax = s.i;
        jmin = jmax = s.j;
        kmin = kmax = s.k;
        mmin = mmax = s.m;
        first = false;
      } else {
        imin = std::min(imin, s.i);
        imax = std::max(imax, s.i);
        jmin = std::min(jmin, s.j);
        jmax = std::max(jmax, s.j);
        kmin = std::min(kmin, s.k);
        kmax = std::max(kmax, s.k);
        mmin = std::min(mmin, s.m);
        mmax = std::max(mmax, s.m);
      }
    }

    // An endpoint is acceptable when at least epc_threshold pairs use it (rounded up, in float).
    const int epc_threshold = static_cast<int>(std::ceil(static_cast<float>(ninc) * prm.min_endpointp));
    auto histogram = [&](int lo, int hi, int SpCoord::*field) {
      epc.assign(static_cast<std::size_t>(hi - lo + 1), 0);
      for (int h = 0; h < n; ++h)
        if (assignment[static_cast<std::size_t>(h)] == c)
          ++epc[static_cast<std::size_t>(sp[static_cast<std::size_t>(h)].*field - lo)];
    };
    // Leftmost start (i, k) and rightmost end (j, m) with enough support; else the most frequent one.
    auto leftmost = [&](int lo, int hi, int SpCoord::*field) {
      histogram(lo, hi, field);
      int best = lo;
      for (; best <= hi; ++best)
        if (epc[static_cast<std::size_t>(best - lo)] >= epc_threshold) break;
      if (best > hi) best = lo + argmax_first(epc, hi - lo + 1);
      return best;
    };
    auto rightmost = [&](int lo, int hi, int SpCoord::*field) {
      histogram(lo, hi, field);
      int best = hi;
      for (; best >= lo; --best)
        if (epc[static_cast<std::size_t>(best - lo)] >= epc_threshold) break;
      if (best < lo) best = lo + argmax_first(epc, hi - lo + 1);
      return best;
    };
    const int best_i = leftmost(imin, imax, &SpCoord::i);
    const int best_k = leftmost(kmin, kmax, &SpCoord::k);
    const int best_j = rightmost(jmin, jmax, &SpCoord::j);
    const int best_m = rightmost(mmin, mmax, &SpCoord::m);

    // Inconsistent consensus coordinates (no well-defined domain): reject the cluster.
    if (best_i > best_j || best_k > best_m) continue;

    SpCoord sc;
    sc.i = best_i;
    sc.j = best_j;
    sc.k = best_k;
    sc.m = best_m;
    sc.idx = c;
    sc.prob = static_cast<float>(ninc) / static_cast<float>(nsamples);
    sigc.push_back(sc);
  }

  // Order by sequence start. HMMER uses qsort, which in glibc is a stable merge sort for arrays this
  // small; stable_sort reproduces its tie order (cluster index order).
  std::stable_sort(sigc.begin(), sigc.end(), [](const SpCoord& a, const SpCoord& b) { return a.i < b.i; });
  return nsigc();
}

}  // namespace warpsearch::hmm
