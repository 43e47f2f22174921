// test_gpu_plan.cpp: host-side planning of the swsearch GPU kernels (src/swsearch/gpu_plan.hpp): letter
// classes of any code subset reproduce the matrix, the substitution table holds each score zero-extended, the
// length partitions pair every non-empty sequence exactly once with the widest sequence of each partition
// fitting its shape; the query-pair profile holds both queries' scores at every lane's rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sw/model.hpp"
#include "swsearch/gpu_plan.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::swsearch::gpu {
namespace {

TEST(SwsearchGpuPlan, ClassesAndTablesReproduceEveryMatrix) {
  std::vector<ScoringMatrix> matrices;
  for (const std::string_view name : ScoringMatrix::builtin_names())
    matrices.push_back(ScoringMatrix::builtin(name));
  matrices.push_back(ScoringMatrix::dna(2, -3));
  std::mt19937_64 rng(5);
  auto half = [](std::uint32_t w, int h) {
    return static_cast<int>(static_cast<std::int16_t>(w >> (16 * h)));
  };
  for (const ScoringMatrix& matrix : matrices) {
    SCOPED_TRACE(matrix.name());
    const sw::PassModel model = sw::PassModel::make(matrix, GapCosts{11, 1}, sw::Mode::kLocal);
    // Every code, then random subsets (a query's or a batch's letters).
    for (int trial = 0; trial < 6; ++trial) {
      const std::uint32_t qmask = trial == 0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rng()) | 1u;
      const std::uint32_t dmask = trial == 0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rng()) | 2u;
      const LetterClasses qc = make_letter_classes(model, qmask), dc = make_letter_classes(model, dmask);
      ASSERT_GE(qc.K, 2);
      ASSERT_LE(qc.K, std::popcount(qmask) + 1);
      ASSERT_LE(dc.K, std::popcount(dmask) + 1);
      const std::vector<std::uint32_t> one = letter_table(model, qc, dc, -32000);
      const std::vector<std::uint32_t> pair = pair_table(model, qc, dc, -32000);
      const auto Kq = static_cast<std::size_t>(qc.K), Kd = static_cast<std::size_t>(dc.K);
      ASSERT_EQ(one.size(), Kq * Kd);
      const auto Kb = static_cast<std::size_t>(pair_stride(dc.K));
      ASSERT_EQ(Kb % 2, 1u);
      ASSERT_GE(Kb, Kd);
      ASSERT_EQ(pair.size(), Kq * Kb * Kb);
      for (int q = 0; q < kMaxCodes; ++q) {
        if ((qmask >> q & 1u) == 0) continue;
        const std::size_t cq = qc.of_code[static_cast<std::size_t>(q)];
        ASSERT_LT(cq, Kq - 1);
        for (int a = 0; a < kMaxCodes; ++a) {
          if ((dmask >> a & 1u) == 0) continue;
          const std::size_t ca = dc.of_code[static_cast<std::size_t>(a)];
          ASSERT_LT(ca, Kd - 1);
          const int want = model.score(static_cast<std::uint8_t>(q), static_cast<std::uint8_t>(a));
          ASSERT_EQ(half(one[cq * Kd + ca], 0), want);
          ASSERT_EQ(one[cq * Kd + ca] >> 16, 0u);  // zero-extended
          for (int b = 0; b < kMaxCodes; b += 3) {
            if ((dmask >> b & 1u) == 0) continue;
            const std::size_t cb = dc.of_code[static_cast<std::size_t>(b)];
            const std::uint32_t w = pair[cq * Kb * Kb + ca + Kb * cb];
            ASSERT_EQ(half(w, 0), want);
            ASSERT_EQ(half(w, 1), model.score(static_cast<std::uint8_t>(q), static_cast<std::uint8_t>(b)));
          }
          // The pad classes score -32000 against everything.
          ASSERT_EQ(half(pair[cq * Kb * Kb + ca + Kb * (Kd - 1)], 1), -32000);
          ASSERT_EQ(half(pair[(Kq - 1) * Kb * Kb + ca + Kb * ca], 0), -32000);
          ASSERT_EQ(half(one[cq * Kd + Kd - 1], 0), -32000);
        }
      }
    }
  }
  EXPECT_EQ(codes_present(std::vector<std::uint8_t>{0, 3, 3, 31}), 0x80000009u);
  EXPECT_EQ(codes_present(std::vector<std::uint8_t>{}), 0u);
}

TEST(SwsearchGpuPlan, QueryPairProfileHoldsBothQueriesPerLaneRow) {
  const sw::PassModel model =
      sw::PassModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, sw::Mode::kLocal);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> code(0, 24);
  const LetterClasses db = make_letter_classes(model);
  auto half = [](std::uint32_t w, int h) {
    return static_cast<int>(static_cast<std::int16_t>(w >> (16 * h)));
  };
  for (const std::size_t ma : {1u, 95u, 96u, 300u, 567u, 729u, 1025u}) {
    for (const std::size_t mb : {1u, 96u, 700u}) {
      std::vector<std::uint8_t> a(ma), b(mb);
      for (auto& c : a) c = static_cast<std::uint8_t>(code(rng));
      for (auto& c : b) c = static_cast<std::uint8_t>(code(rng));
      const std::size_t m = std::max(ma, mb);
      const QpairPlan plan = qpair_plan(m);
      const Shape shape = plan.shape;
      const int tiles = plan.tiles;
      ASSERT_GE(static_cast<std::size_t>(tiles * shape.width()), m);
      ASSERT_LT(static_cast<std::size_t>((tiles - 1) * shape.width()), m);
      if (!plan.multi) {
        // The narrowest single-tile shape holding m rows.
        EXPECT_EQ(tiles, 1);
        const auto at = std::find_if(kShapes.begin(), kShapes.end(),
                                     [&](Shape s) { return static_cast<std::size_t>(s.width()) >= m; });
        ASSERT_NE(at, kShapes.end());
        EXPECT_EQ(at->G, shape.G);
        EXPECT_EQ(at->R, shape.R);
      } else {
        // Longer than every single-tile shape; no multi-tile shape wastes fewer rows.
        EXPECT_GT(m, static_cast<std::size_t>(kShapes.back().width()));
        EXPECT_EQ(shape.G, 32);
        for (const int R : kQpairMultiR) {
          const std::size_t w = 32u * static_cast<std::size_t>(R);
          EXPECT_LE(static_cast<std::size_t>(tiles * shape.width()), (m + w - 1) / w * w) << "R " << R;
        }
      }
      const auto prof = query_pair_profile(model, a, b, db, shape, tiles, -32000);
      const auto K = static_cast<std::size_t>(db.K), R = static_cast<std::size_t>(shape.R);
      ASSERT_EQ(prof.size(), static_cast<std::size_t>(tiles) * K * R * 32u);
      // Row i of the queries is held by lane (i % W) / R (and every lane congruent mod G), register i % R.
      for (std::size_t i = 0; i < static_cast<std::size_t>(tiles * shape.width()); ++i) {
        const std::size_t t = i / static_cast<std::size_t>(shape.width());
        const std::size_t l = (i % static_cast<std::size_t>(shape.width())) / R, r = i % R;
        for (std::size_t d = 0; d < K; ++d)
          for (std::size_t lane = l; lane < 32; lane += static_cast<std::size_t>(shape.G)) {
            const std::uint32_t w = prof[((t * K + d) * R + r) * 32 + lane];
            const int want_a = d + 1 == K || i >= ma ? -32000 : model.score(a[i], db.rep[d]);
            const int want_b = d + 1 == K || i >= mb ? -32000 : model.score(b[i], db.rep[d]);
            ASSERT_EQ(half(w, 0), want_a) << "row " << i << " class " << d << " lane " << lane;
            ASSERT_EQ(half(w, 1), want_b) << "row " << i << " class " << d << " lane " << lane;
          }
      }
    }
  }
}

TEST(SwsearchGpuPlan, PartitionsPairEveryNonEmptySequenceOnce) {
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> lengths;
  std::uniform_int_distribution<std::uint64_t> len(0, 3000);
  for (int k = 0; k < 5000; ++k) lengths.push_back(k % 50 == 0 ? 0 : len(rng));
  for (const Shape s : kShapes) lengths.push_back(static_cast<std::uint64_t>(s.width()));
  const BatchPlan plan = plan_batch(lengths);
  ASSERT_EQ(plan.pair_a.size(), plan.pair_b.size());
  std::vector<int> seen(lengths.size(), 0);
  std::uint32_t expect_first = 0;
  std::uint64_t prev_max = UINT64_MAX;
  for (const Partition& p : plan.partitions) {
    ASSERT_EQ(p.first_pair, expect_first);
    ASSERT_GT(p.pairs, 0u);
    expect_first += p.pairs;
    ASSERT_LT(p.max_length, prev_max);  // longest first, one partition per shape
    prev_max = p.max_length;
    const int width = p.shape >= 0 ? kShapes[static_cast<std::size_t>(p.shape)].width() : -1;
    std::uint64_t residues = 0;
    for (std::uint32_t k = p.first_pair; k < p.first_pair + p.pairs; ++k) {
      const std::uint32_t a = plan.pair_a[k], b = plan.pair_b[k];
      ASSERT_NE(a, kNone);
      ++seen[a];
      residues += lengths[a];
      if (b != kNone) {
        ++seen[b];
        residues += lengths[b];
        ASSERT_TRUE(lengths[a] > lengths[b] || (lengths[a] == lengths[b] && a < b));
      } else {
        ASSERT_EQ(k + 1, p.first_pair + p.pairs);  // only a partition's last pair may be single
      }
      if (k > p.first_pair) {
        ASSERT_LE(lengths[a], lengths[plan.pair_a[k - 1]]);
      }
      if (width > 0) {
        ASSERT_LE(lengths[a], static_cast<std::uint64_t>(width));
        if (p.shape > 0) {  // the narrowest shape that fits
          ASSERT_GT(lengths[a],
                    static_cast<std::uint64_t>(kShapes[static_cast<std::size_t>(p.shape) - 1].width()));
        }
      } else {
        ASSERT_GT(lengths[a], static_cast<std::uint64_t>(kShapes.back().width()));
      }
    }
    ASSERT_EQ(residues, p.residues);
  }
  ASSERT_EQ(expect_first, plan.pair_a.size());
  for (std::size_t k = 0; k < lengths.size(); ++k) ASSERT_EQ(seen[k], lengths[k] > 0 ? 1 : 0) << k;
}

}  // namespace
}  // namespace warpsearch::swsearch::gpu
