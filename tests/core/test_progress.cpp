// test_progress.cpp: Progress counts from many threads and stays silent when disabled or not a TTY.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "warpsearch/progress.hpp"

namespace warpsearch {
namespace {

TEST(Progress, DisabledProgressIsInactive) {
  Progress p("reading", 100, "residues", false);
  EXPECT_FALSE(p.active());
  p.advance(50);
  EXPECT_EQ(p.done(), 50u);
  p.finish();
  EXPECT_FALSE(p.active());
}

TEST(Progress, QuietNeverWantsOutput) { EXPECT_FALSE(Progress::wanted(true)); }

TEST(Progress, ConcurrentAdvanceIsSafe) {
  Progress p("work", 0, "items", true);  // under ctest stderr is not a TTY: inactive but counting
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) p.advance(1);
    });
  for (auto& t : threads) t.join();
  p.set_total(40000);
  p.finish();
  EXPECT_EQ(p.done(), 40000u);
}

}  // namespace
}  // namespace warpsearch
