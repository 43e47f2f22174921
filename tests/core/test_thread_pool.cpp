// test_thread_pool.cpp: ThreadPool covers every index once, is deterministic and propagates errors; a
// thread count of 0 means the CPUs the process may run on (its affinity mask).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

#include "warpsearch/thread_pool.hpp"

namespace warpsearch {
namespace {

TEST(ThreadPool, ResolveZeroMeansTheAvailableCpus) {
  EXPECT_GE(ThreadPool::resolve(0), 1u);
  EXPECT_EQ(ThreadPool::resolve(0), ThreadPool::available_cpus());
  EXPECT_LE(ThreadPool::available_cpus(), std::max(1u, std::thread::hardware_concurrency()));
  // The ids: as many as the count, ascending, distinct.
  const std::vector<unsigned> ids = ThreadPool::available_cpu_ids();
  EXPECT_EQ(ids.size(), ThreadPool::available_cpus());
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
  EXPECT_EQ(ThreadPool::resolve(3), 3u);
#if defined(__linux__)
  // Bound to one CPU (as taskset, Slurm or an MPI launcher would bind it), this thread may use one CPU.
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const unsigned bound = ThreadPool::resolve(0);
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(bound, 1u);
#endif
}

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 4u, 8u}) {
    ThreadPool pool(threads);
    for (std::size_t n : {0u, 1u, 7u, 1000u, 12345u}) {
      for (std::size_t grain : {1u, 3u, 64u, 100000u}) {
        std::vector<std::atomic<int>> hits(n);
        pool.parallel_for(n, grain, [&](std::size_t b, std::size_t e) {
          ASSERT_LE(e - b, grain);
          for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
      }
    }
  }
}

TEST(ThreadPool, ChunkBoundariesDoNotDependOnThreadCount) {
  auto boundaries = [](unsigned threads) {
    ThreadPool pool(threads);
    std::vector<std::size_t> begin_of(1000, 0);
    pool.parallel_for(1000, 37, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) begin_of[i] = b;
    });
    return begin_of;
  };
  EXPECT_EQ(boundaries(1), boundaries(2));
  EXPECT_EQ(boundaries(1), boundaries(7));
}

TEST(ThreadPool, FirstExceptionIsRethrownAfterAllChunks) {
  ThreadPool pool(4);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallel_for(100, 1,
                                 [&](std::size_t b, std::size_t) {
                                   ran.fetch_add(1);
                                   if (b % 10 == 3) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 100);
  // The pool is still usable afterwards.
  std::atomic<int> sum{0};
  pool.parallel_for(10, 1, [&](std::size_t b, std::size_t) { sum += static_cast<int>(b); });
  EXPECT_EQ(sum.load(), 45);
}

TEST(ThreadPool, NestedParallelForDoesNotDeadlock) {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  pool.parallel_for(4, 1, [&](std::size_t, std::size_t) {
    pool.parallel_for(8, 1, [&](std::size_t, std::size_t) { total.fetch_add(1); });
  });
  EXPECT_EQ(total.load(), 32);
}

TEST(ThreadPool, SubmitReturnsFutures) {
  ThreadPool pool(3);
  std::vector<std::future<int>> futures;
  for (int i = 0; i < 20; ++i) futures.push_back(pool.submit([i] { return i * i; }));
  int sum = 0;
  for (auto& f : futures) sum += f.get();
  EXPECT_EQ(sum, 2470);
  auto failing = pool.submit([]() -> int { throw std::logic_error("bad"); });
  EXPECT_THROW(failing.get(), std::logic_error);
}

}  // namespace
}  // namespace warpsearch
