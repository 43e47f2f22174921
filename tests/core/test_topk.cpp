// test_topk.cpp: TopK keeps exactly the K best, independent of insertion order and merge splits.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "warpsearch/result.hpp"
#include "warpsearch/topk.hpp"

namespace warpsearch {
namespace {

std::vector<AlignmentRecord> random_records(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> score(0, 50);  // many ties on purpose
  std::vector<AlignmentRecord> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i].target_id = i;
    out[i].query_id = rng() % 3;
    out[i].score = score(rng);
  }
  return out;
}

std::vector<AlignmentRecord> expected_best(std::vector<AlignmentRecord> all, std::size_t k) {
  std::sort(all.begin(), all.end(), BetterAlignment{});
  all.resize(std::min(k, all.size()));
  return all;
}

void expect_same(const std::vector<AlignmentRecord>& a, const std::vector<AlignmentRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].target_id, b[i].target_id) << i;
    EXPECT_EQ(a[i].score, b[i].score) << i;
  }
}

TEST(TopK, KeepsTheKBestWithDeterministicTies) {
  const auto records = random_records(2000, 1);
  for (std::size_t k : {0u, 1u, 10u, 100u, 5000u}) {
    TopK<AlignmentRecord, BetterAlignment> top(k);
    for (const auto& r : records) top.push(r);
    expect_same(top.take_sorted(), expected_best(records, k));
  }
}

TEST(TopK, InsertionOrderDoesNotMatter) {
  auto records = random_records(1000, 2);
  TopK<AlignmentRecord, BetterAlignment> a(50), b(50);
  for (const auto& r : records) a.push(r);
  std::shuffle(records.begin(), records.end(), std::mt19937(3));
  for (const auto& r : records) b.push(r);
  expect_same(a.take_sorted(), b.take_sorted());
}

TEST(TopK, MergingShardsEqualsOnePass) {
  const auto records = random_records(3000, 4);
  for (std::size_t shards : {1u, 2u, 3u, 7u}) {
    std::vector<TopK<AlignmentRecord, BetterAlignment>> parts(shards,
                                                              TopK<AlignmentRecord, BetterAlignment>(64));
    for (std::size_t i = 0; i < records.size(); ++i) parts[i % shards].push(records[i]);
    TopK<AlignmentRecord, BetterAlignment> merged(64);
    for (const auto& p : parts) merged.merge(p);
    expect_same(merged.take_sorted(), expected_best(records, 64));
  }
}

TEST(TopK, WouldAcceptMatchesPush) {
  TopK<int, std::greater<int>> top(3);  // keep the three largest
  for (int v : {5, 1, 9, 7}) top.push(v);
  EXPECT_EQ(top.worst(), 5);
  EXPECT_FALSE(top.would_accept(4));
  EXPECT_FALSE(top.push(5));  // a tie with the worst is not better
  EXPECT_TRUE(top.would_accept(6));
  EXPECT_EQ(top.take_sorted(), (std::vector<int>{9, 7, 5}));
  EXPECT_EQ(top.size(), 0u);
}

}  // namespace
}  // namespace warpsearch
