// test_spensemble.cpp: Easel's single-linkage clustering (exact cluster numbering), HMMER's segment
// pair link rule (incl. its model-overlap quirk) and the definition of significant clusters and their
// consensus endpoints (src/hmm/spensemble.hpp) on hand-made sampled path sets whose answers are
// worked out by hand from the rules in p7_spensemble.c.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "hmm/spensemble.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

TEST(SingleLinkage, EaselUnitTestVertices) {
  // esl_cluster.c's own test: vertices on a line, linked when within a threshold.
  const std::vector<double> v = {1.0, 2.0, 4.0, 5.0, 7.0, 8.0};
  auto run = [&](double thr, std::vector<int>& a) {
    return single_linkage(
        6,
        [&](int x, int y) {
          return std::fabs(v[static_cast<std::size_t>(x)] - v[static_cast<std::size_t>(y)]) <= thr;
        },
        a);
  };
  std::vector<int> a;
  EXPECT_EQ(run(1.5, a), 3);
  EXPECT_EQ(a, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(run(0.5, a), 6);
  EXPECT_EQ(a, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(run(2.5, a), 1);
  EXPECT_EQ(a, (std::vector<int>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(single_linkage(
                0, [](int, int) { return true; }, a),
            0);
}

TEST(SingleLinkage, ClusterNumberingFollowsEaselStacks) {
  // 5 vertices, one edge 0-3. Worked by hand: pop 0; scanning the available stack [4,3,2,1] from the top
  // finds 3, which is replaced by the top (1): [4,1,2]. Cluster 0 = {0,3}; then 2 is on top -> cluster 1;
  // then 1 -> cluster 2; then 4 -> cluster 3. (Not numbered by smallest member.)
  std::vector<int> a;
  const int nc = single_linkage(
      5, [](int x, int y) { return (x == 0 && y == 3) || (x == 3 && y == 0); }, a);
  EXPECT_EQ(nc, 4);
  EXPECT_EQ(a, (std::vector<int>{0, 2, 1, 0, 3}));
}

TEST(SingleLinkage, PartitionIsConnectedComponents) {
  std::mt19937 gen(11);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 1 + static_cast<int>(gen() % 40);
    std::vector<std::vector<bool>> adj(static_cast<std::size_t>(n),
                                       std::vector<bool>(static_cast<std::size_t>(n), false));
    for (int e = 0; e < n; ++e) {
      const auto x = gen() % static_cast<unsigned>(n), y = gen() % static_cast<unsigned>(n);
      adj[x][y] = adj[y][x] = true;
    }
    std::vector<int> a;
    const int nc = single_linkage(
        n,
        [&](int x, int y) { return adj[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)] == true; },
        a);
    // Union-find reference.
    std::vector<int> parent(static_cast<std::size_t>(n));
    std::iota(parent.begin(), parent.end(), 0);
    std::function<int(int)> find = [&](int x) {
      return parent[static_cast<std::size_t>(x)] == x
                 ? x
                 : parent[static_cast<std::size_t>(x)] = find(parent[static_cast<std::size_t>(x)]);
    };
    for (int x = 0; x < n; ++x)
      for (int y = 0; y < n; ++y)
        if (adj[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)])
          parent[static_cast<std::size_t>(find(x))] = find(y);
    int ncomp = 0;
    for (int x = 0; x < n; ++x) ncomp += find(x) == x;
    EXPECT_EQ(nc, ncomp);
    EXPECT_EQ(a[0], 0);
    for (int x = 0; x < n; ++x)
      for (int y = 0; y < n; ++y)
        EXPECT_EQ(a[static_cast<std::size_t>(x)] == a[static_cast<std::size_t>(y)], find(x) == find(y));
  }
}

SpCoord seg(int i, int j, int k, int m) {
  SpCoord c;
  c.i = i;
  c.j = j;
  c.k = k;
  c.m = m;
  return c;
}

TEST(SpLinked, HmmerLinkRule) {
  const SpLinkParams prm;
  // Identical segments link (both overlaps 100%, same diagonals).
  EXPECT_TRUE(sp_linked(seg(10, 50, 1, 41), seg(10, 50, 1, 41), prm));
  // Sequence overlap 8/10 and model overlap (10 - 2) / 10: exactly 0.8f >= 0.8f, start diagonals 9, 10.
  EXPECT_TRUE(sp_linked(seg(10, 19, 1, 10), seg(12, 30, 2, 21), prm));
  // The model overlap lacks HMMER's "+1": (10 - 3) / 10 = 0.7 fails although 8 nodes are shared.
  EXPECT_FALSE(sp_linked(seg(10, 19, 1, 10), seg(12, 30, 3, 21), prm));
  // Below 80% sequence overlap: no link.
  EXPECT_FALSE(sp_linked(seg(10, 19, 1, 10), seg(13, 30, 4, 21), prm));  // 7/10
  // Model overlap lacks HMMER's "+1": identical one-node model segments do not link (nov = 0).
  EXPECT_FALSE(sp_linked(seg(10, 20, 5, 5), seg(10, 20, 5, 5), prm));
  // Enough overlap but diagonals differ by > 4 at both ends: no link; within 4 at the end: link.
  EXPECT_FALSE(sp_linked(seg(10, 60, 1, 51), seg(12, 60, 8, 45), prm));  // start diag 9 vs 4, end 9 vs 15
  EXPECT_TRUE(sp_linked(seg(10, 60, 1, 51), seg(12, 60, 8, 55), prm));   // end diag 9 vs 5
  // of_smaller = false uses the larger segment as denominator.
  SpLinkParams larger = prm;
  larger.of_smaller = false;
  EXPECT_TRUE(sp_linked(seg(10, 19, 1, 10), seg(10, 30, 1, 21), prm));
  EXPECT_FALSE(sp_linked(seg(10, 19, 1, 10), seg(10, 30, 1, 21), larger));
}

TEST(SpEnsemble, TwoDomainsConsensusEndpoints) {
  SpEnsemble sp;
  // 200 samples. Domain A (seq 70..100, model 5..35) sampled in samples 0..119 - given first so it
  // becomes cluster 0; domain B (seq 10..50, model 1..41) in samples 0..149; noise pairs in 150..169.
  for (int t = 0; t < 200; ++t) {
    if (t < 150) {
      // B: start i = 10 in 140 samples, i = 8 in 8 samples, i = 6 in 2 samples (below threshold 3).
      const int i = t < 140 ? 10 : (t < 148 ? 8 : 6);
      // end j = 50 except 3 samples at j = 53 (>= threshold 3: the rightmost well-supported end wins).
      const int j = (t % 50 == 7) ? 53 : 50;
      if (t < 120) sp.add(t, 70, 100, 5, 35);
      sp.add(t, i, j, 1 + (i - 10), 41 + (j - 50));
    } else if (t < 170) {
      sp.add(t, 200, 230, 60, 90);  // one cluster of 20/200 = 0.1 < 0.25: not significant
    } else {
      sp.add(t, 300 + 2 * t, 301 + 2 * t, 1, 2);  // singletons (model overlap 1/2 never links)
    }
  }
  EXPECT_EQ(sp.nsamples, 200);
  const int nc = sp.cluster(SpLinkParams{});
  ASSERT_EQ(nc, 2);
  // Ordered by start: B then A.
  EXPECT_EQ(sp.sigc[0].i, 8);  // threshold = ceil(150 * 0.02f) = 3; i = 8 has 8 >= 3, i = 6 has 2
  EXPECT_EQ(sp.sigc[0].j, 53);
  EXPECT_EQ(sp.sigc[0].k, -1);  // k = i - 9: k = -3 has 2 samples, k = -1 has 8
  EXPECT_EQ(sp.sigc[0].m, 44);
  EXPECT_FLOAT_EQ(sp.sigc[0].prob, 150.0f / 200.0f);
  EXPECT_EQ(sp.sigc[1].i, 70);
  EXPECT_EQ(sp.sigc[1].j, 100);
  EXPECT_EQ(sp.sigc[1].k, 5);
  EXPECT_EQ(sp.sigc[1].m, 35);
  EXPECT_EQ(sp.sigc[1].idx, 0);  // domain A was cluster 0
  EXPECT_EQ(sp.sigc[1].prob, 120.0f / 200.0f);
}

TEST(SpEnsemble, PosteriorCountsSamplesNotPairs) {
  SpEnsemble sp;
  // 100 samples; in 20 of them the domain is split in two linked pairs (same sample): the cluster has
  // 20 samples -> 0.2 < 0.25, so it is rejected even though it has 40 pairs (0.4 if pairs counted).
  for (int t = 0; t < 100; ++t) {
    if (t < 20) {
      sp.add(t, 10, 40, 1, 31);
      sp.add(t, 12, 40, 3, 31);
    } else {
      sp.add(t, 500, 501, 1, 2);  // singleton noise (each one links to the others: same coords)
    }
  }
  const int nc = sp.cluster(SpLinkParams{});
  // The noise cluster {500..501, model 1..2}: model nov = 2 - 1 = 1 of 2 -> 0.5 < 0.8: no links, 80
  // singleton clusters of 1 sample each; none significant.
  EXPECT_EQ(sp.nc, 81);
  EXPECT_EQ(nc, 0);
}

TEST(SpEnsemble, ArgmaxFallbackAndOrdering) {
  SpEnsemble sp;
  // 60 samples in one cluster: i = 10, k = 1 fixed; j = 50..109 all distinct, m = j - 9.
  // threshold = ceil(60 * 0.02f) = 2: no j reaches it, so j falls back to jmin + first argmax = 50.
  for (int t = 0; t < 60; ++t) sp.add(t, 10, 50 + t, 1, 41 + t);
  ASSERT_EQ(sp.cluster(SpLinkParams{}), 1);
  EXPECT_EQ(sp.sigc[0].i, 10);
  EXPECT_EQ(sp.sigc[0].j, 50);
  EXPECT_EQ(sp.sigc[0].k, 1);
  EXPECT_EQ(sp.sigc[0].m, 41);
  EXPECT_EQ(sp.sigc[0].prob, 1.0f);

  // Two non-linked groups: pairs with i = 30 come first (cluster 0), sigc is ordered by i.
  sp.reuse();
  EXPECT_EQ(sp.nsamples, 0);
  for (int t = 0; t < 100; ++t) {
    const int i = t < 50 ? 30 : 10;
    sp.add(t, i, i + 20, 1, 21);  // seq overlap of the groups 1/21: no link
  }
  ASSERT_EQ(sp.cluster(SpLinkParams{}), 2);
  EXPECT_EQ(sp.sigc[0].i, 10);
  EXPECT_EQ(sp.sigc[0].idx, 1);
  EXPECT_EQ(sp.sigc[1].i, 30);
  EXPECT_EQ(sp.sigc[1].idx, 0);
  EXPECT_EQ(sp.sigc[0].prob, 0.5f);
}

TEST(SpEnsemble, InconsistentConsensusIsRejected) {
  // One chained cluster of 93 samples (threshold ceil(93 * 0.02f) = 2): a chain of 90 pairs with odd
  // starts i = 1, 3, ..., 179 and j = i + 20 (each endpoint once), plus (4, 25) making j = 25 appear
  // twice and (60, 80), (60, 82) making i = 60 appear twice. Leftmost i with >= 2 is 60, rightmost j
  // with >= 2 is 25: best_i > best_j, so the cluster is dropped.
  SpEnsemble sp;
  int t = 0;
  for (int i = 1; i <= 179; i += 2) sp.add(t++, i, i + 20, 1, 21);
  sp.add(t++, 4, 25, 1, 21);
  sp.add(t++, 60, 80, 1, 21);
  sp.add(t++, 60, 82, 1, 21);
  EXPECT_EQ(sp.nsamples, 93);
  EXPECT_EQ(sp.cluster(SpLinkParams{}), 0);
  EXPECT_EQ(sp.nc, 1);
  // Without the (4, 25) pair, j = 25 is no longer doubled: rightmost j with >= 2 does not exist, so j
  // falls back to jmin + first argmax = 21 (all counts 1) -> still 60 > 21: rejected as well.
  SpEnsemble sp2;
  t = 0;
  for (int i = 1; i <= 179; i += 2) sp2.add(t++, i, i + 20, 1, 21);
  sp2.add(t++, 60, 80, 1, 21);
  sp2.add(t++, 60, 82, 1, 21);
  EXPECT_EQ(sp2.cluster(SpLinkParams{}), 0);
  // And with i = 60 not doubled either, i falls back to imin = 1: consistent, one domain 1..21.
  SpEnsemble sp3;
  t = 0;
  for (int i = 1; i <= 179; i += 2) sp3.add(t++, i, i + 20, 1, 21);
  ASSERT_EQ(sp3.cluster(SpLinkParams{}), 1);
  EXPECT_EQ(sp3.sigc[0].i, 1);
  EXPECT_EQ(sp3.sigc[0].j, 21);
  EXPECT_EQ(sp3.sigc[0].k, 1);
  EXPECT_EQ(sp3.sigc[0].m, 21);
}

TEST(SpEnsemble, AddRejectsOutOfOrderSamples) {
  SpEnsemble sp;
  sp.add(0, 1, 2, 1, 2);
  sp.add(1, 1, 2, 1, 2);
  sp.add(1, 1, 2, 1, 2);
  EXPECT_THROW(sp.add(3, 1, 2, 1, 2), Error);
  EXPECT_EQ(sp.nsamples, 2);
}

}  // namespace
}  // namespace warpsearch::hmm
