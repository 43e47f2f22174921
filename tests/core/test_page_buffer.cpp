// Tests of PageBuffer (src/core/page_buffer.hpp): growth keeps the old elements and gives zeros after
// them, in place or moved; copies are deep; moves and swaps transfer the mapping; page alignment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "core/page_buffer.hpp"

namespace warpsearch {
namespace {

std::size_t page() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

TEST(PageBuffer, EmptyUntilGrown) {
  PageBuffer<float> b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0U);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.begin(), b.end());
  b.grow(0);
  EXPECT_TRUE(b.empty());
}

TEST(PageBuffer, GrowthKeepsContentsAndZeroesTheRest) {
  PageBuffer<uint32_t> b;
  b.grow(10);
  ASSERT_EQ(b.size(), 10U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % page(), 0U);
  for (std::size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i], 0U);
    b[i] = static_cast<uint32_t>(i * 7 + 1);
  }
  // Within the first page, then across many pages (mremap, possibly moving the mapping), then a
  // request smaller than the size (no change).
  for (const std::size_t n :
       {std::size_t{1000}, std::size_t{3'000'000}, std::size_t{12'345'678}, std::size_t{5}}) {
    const std::size_t before = b.size();
    b.grow(n);
    ASSERT_EQ(b.size(), std::max(before, n));
    for (std::size_t i = 0; i < 10; ++i) ASSERT_EQ(b[i], static_cast<uint32_t>(i * 7 + 1)) << i;
    for (std::size_t i = 10; i < before; ++i) ASSERT_EQ(b[i], static_cast<uint32_t>(i)) << i;
    for (std::size_t i = before; i < b.size(); ++i) {
      ASSERT_EQ(b[i], 0U) << i;
      b[i] = static_cast<uint32_t>(i);
    }
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % page(), 0U);
  }
}

TEST(PageBuffer, SizesPastTheAddressSpaceAreRefused) {
  PageBuffer<double> b;
  b.grow(3);
  b[2] = 1.5;
  EXPECT_THROW(b.grow(static_cast<std::size_t>(-1) / sizeof(double) + 1), std::bad_alloc);  // bytes wrap
  EXPECT_THROW(b.grow(static_cast<std::size_t>(-1) / sizeof(double)), std::bad_alloc);      // too large
  EXPECT_EQ(b.size(), 3U);  // unchanged, still usable
  EXPECT_EQ(b[2], 1.5);
}

TEST(PageBuffer, CopiesAreDeepAndEqual) {
  PageBuffer<float> a;
  a.grow(5000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f;
  PageBuffer<float> c(a);
  EXPECT_TRUE(c == a);
  EXPECT_NE(c.data(), a.data());
  c[17] = -1.0f;
  EXPECT_FALSE(c == a);
  EXPECT_EQ(a[17], 8.5f);
  PageBuffer<float> d;
  d = a;
  EXPECT_TRUE(d == a);
  const PageBuffer<float>& same = d;
  d = same;  // self-assignment keeps the contents
  EXPECT_TRUE(d == a);
  PageBuffer<float> e;
  e.grow(4999);
  EXPECT_FALSE(e == a);  // sizes differ
  const PageBuffer<float> empty;
  PageBuffer<float> f(empty);
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f == empty);
}

TEST(PageBuffer, MovesAndSwapsTransferTheMapping) {
  PageBuffer<double> a;
  a.grow(100);
  a[99] = 3.25;
  const double* p = a.data();
  PageBuffer<double> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 100U);
  EXPECT_EQ(b[99], 3.25);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  PageBuffer<double> c;
  c.grow(3);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 100U);
  PageBuffer<double> d;
  d.swap(c);
  EXPECT_EQ(d.data(), p);
  EXPECT_TRUE(c.empty());
  // A moved-from buffer can grow again.
  a.grow(7);
  EXPECT_EQ(a.size(), 7U);
  EXPECT_EQ(a[6], 0.0);
}

}  // namespace
}  // namespace warpsearch
