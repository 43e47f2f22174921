// test_gpu_plan.cpp: host-side planning of the swsearch GPU kernels (src/swsearch/gpu_plan.hpp): letter
// classes reproduce the matrix, the substitution table holds each score zero-extended, the length partitions
// pair every non-empty sequence exactly once with the widest sequence of each partition fitting its shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sw/model.hpp"
#include "swsearch/gpu_plan.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::swsearch::gpu {
namespace {

TEST(SwsearchGpuPlan, ClassesAndPairTableReproduceEveryMatrix) {
  std::vector<ScoringMatrix> matrices;
  for (const std::string_view name : ScoringMatrix::builtin_names())
    matrices.push_back(ScoringMatrix::builtin(name));
  matrices.push_back(ScoringMatrix::dna(2, -3));
  for (const ScoringMatrix& matrix : matrices) {
    SCOPED_TRACE(matrix.name());
    const sw::PassModel model = sw::PassModel::make(matrix, GapCosts{11, 1}, sw::Mode::kLocal);
    const LetterClasses c = make_letter_classes(model);
    ASSERT_GE(c.K, 2);
    ASSERT_LE(c.K, kMaxCodes + 1);
    const int pad = c.K - 1;
    const std::vector<std::uint32_t> table = letter_table(model, c, -32000);
    ASSERT_EQ(table.size(), static_cast<std::size_t>(c.K) * c.K);
    auto half = [](std::uint32_t w, int h) {
      return static_cast<int>(static_cast<std::int16_t>(w >> (16 * h)));
    };
    for (int q = 0; q < kMaxCodes; ++q)
      for (int a = 0; a < kMaxCodes; ++a) {
        const int cq = c.of_code[static_cast<std::size_t>(q)], ca = c.of_code[static_cast<std::size_t>(a)];
        ASSERT_LT(cq, pad);
        const std::uint32_t w = table[static_cast<std::size_t>(cq) * c.K + static_cast<std::size_t>(ca)];
        ASSERT_EQ(half(w, 0), model.score(static_cast<std::uint8_t>(q), static_cast<std::uint8_t>(a)));
        ASSERT_EQ(w >> 16, 0u);
      }
    for (int x = 0; x < c.K; ++x) {
      EXPECT_EQ(half(table[static_cast<std::size_t>(pad) * c.K + static_cast<std::size_t>(x)], 0), -32000);
      EXPECT_EQ(half(table[static_cast<std::size_t>(x) * c.K + static_cast<std::size_t>(pad)], 0), -32000);
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
