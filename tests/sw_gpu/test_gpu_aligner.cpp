// test_gpu_aligner.cpp: the Aligner on GPUs equals the Aligner on the CPU (itself tested against the
// reference and parasail) result for result, traceback included, in every mode; one GPU and all GPUs
// agree; small launches (many per batch) change nothing; a failing batch among others fails alone and
// in order. Skips without a usable GPU.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "pass_test_support.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/gpu.hpp"

namespace warpsearch::align {
namespace {

class GpuAligner : public ::testing::Test {
 protected:
  void SetUp() override {
    probe_ = probe_devices();
    if (probe_.devices.empty()) GTEST_SKIP() << probe_.unavailable_reason;
  }
  DeviceProbe probe_;
};

Batch mixed_batch(std::uint64_t seed, std::size_t pairs, bool dna) {
  std::mt19937_64 rng(seed);
  const int alpha = dna ? 4 : 20;
  Batch b;
  for (std::size_t k = 0; k < pairs; ++k) {
    // Mostly ADEPT-like lengths, some long pairs (row tiles, 32-bit lanes) and some length-1 ones.
    std::size_t m = 20 + rng() % 600, n = 200 + rng() % 1400;
    if (k % 97 == 0) m = 1 + rng() % 3;
    if (k % 89 == 0) n = 1 + rng() % 3;
    if (k % 211 == 0) m = n = 3000 + rng() % 2000;
    std::vector<std::uint8_t> q(m), t(n);
    for (auto& c : q) c = static_cast<std::uint8_t>(rng() % alpha);
    for (auto& c : t) c = static_cast<std::uint8_t>(rng() % alpha);
    if (k % 2 == 0) {  // a shared, mutated segment gives real alignments with gaps
      const std::size_t len = std::min(m, n) / 2;
      const std::size_t at = rng() % (n - len + 1);
      for (std::size_t i = 0; i < len; ++i) {
        t[at + i] = q[i];
        if (rng() % 10 == 0) t[at + i] = static_cast<std::uint8_t>(rng() % alpha);
      }
    }
    if (k % 211 == 0) std::copy(q.begin(), q.end(), t.begin());  // long identical pair: 32-bit lanes
    b.add(q, t);
  }
  return b;
}

Config config(Mode mode, bool dna, DeviceMode device) {
  Config c;
  if (dna) {
    c.matrix = ScoringMatrix::dna(2, -3);
    c.gaps = {5, 2};
  }
  c.mode = mode;
  c.traceback = true;
  c.device = device;
  return c;
}

TEST_F(GpuAligner, EqualsCpuInEveryMode) {
  for (const bool dna : {false, true}) {
    for (const Mode mode : {Mode::kLocal, Mode::kGlobal, Mode::kSemiGlobal}) {
      const Batch batch = mixed_batch(dna ? 17 : 23, 1500, dna);
      Aligner cpu(config(mode, dna, DeviceMode::kCpu));
      Aligner gpu(config(mode, dna, DeviceMode::kGpu));
      ASSERT_TRUE(gpu.uses_gpu());
      const std::vector<Result> expected = cpu.align(batch);
      const std::vector<Result> got = gpu.align(batch);
      ASSERT_EQ(got.size(), expected.size());
      std::size_t differing = 0;
      for (std::size_t k = 0; k < got.size(); ++k) {
        if (got[k] == expected[k]) continue;
        if (++differing <= 5)
          ADD_FAILURE() << (dna ? "dna " : "protein ") << mode_name(mode) << " pair " << k << ": gpu score "
                        << got[k].score << " q[" << got[k].query_begin << "," << got[k].query_end << ") t["
                        << got[k].target_begin << "," << got[k].target_end << ") vs cpu " << expected[k].score
                        << " q[" << expected[k].query_begin << "," << expected[k].query_end << ") t["
                        << expected[k].target_begin << "," << expected[k].target_end << ")";
      }
      EXPECT_EQ(differing, 0u);
    }
  }
}

TEST_F(GpuAligner, GpuCountAndLaunchSizeDoNotChangeResults) {
  const Batch batch = mixed_batch(31, 2000, false);
  Config all = config(Mode::kLocal, false, DeviceMode::kGpu);
  Config one = all;
  one.gpus = std::to_string(probe_.devices.front().id);
  Config small = one;
  small.max_pairs_per_launch = 64;
  const std::vector<Result> a = Aligner(all).align(batch);
  EXPECT_EQ(Aligner(one).align(batch), a);
  EXPECT_EQ(Aligner(small).align(batch), a);
}

TEST_F(GpuAligner, ManyBatchesInFlight) {
  Aligner gpu(config(Mode::kLocal, false, DeviceMode::kGpu));
  Aligner cpu(config(Mode::kLocal, false, DeviceMode::kCpu));
  std::vector<Batch> batches;
  for (std::uint64_t s = 0; s < 6; ++s) batches.push_back(mixed_batch(100 + s, 50 + 40 * s, false));
  std::vector<std::future<std::vector<Result>>> futures;
  for (const Batch& b : batches) futures.push_back(gpu.submit(b));
  for (std::size_t i = 0; i < batches.size(); ++i) EXPECT_EQ(futures[i].get(), cpu.align(batches[i])) << i;

  // A failing batch (an empty target) in the middle of the pipeline fails alone, in order.
  Batch bad = mixed_batch(200, 30, false);
  bad.add(std::vector<std::uint8_t>{1, 2, 3}, std::vector<std::uint8_t>{});
  std::vector<std::size_t> order;
  std::mutex order_mutex;
  std::vector<std::future<std::vector<Result>>> again;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (i == 3) {
      gpu.submit(bad, [&](std::vector<Result>&& results, std::exception_ptr error) {
        std::lock_guard lock(order_mutex);
        order.push_back(results.empty() && error ? 99 : 98);
      });
    }
    auto promise = std::make_shared<std::promise<std::vector<Result>>>();
    again.push_back(promise->get_future());
    gpu.submit(batches[i], [&, i, promise](std::vector<Result>&& results, std::exception_ptr error) {
      {
        std::lock_guard lock(order_mutex);
        order.push_back(i);
      }
      if (error) {
        promise->set_exception(error);
      } else {
        promise->set_value(std::move(results));
      }
    });
  }
  for (std::size_t i = 0; i < batches.size(); ++i) EXPECT_EQ(again[i].get(), cpu.align(batches[i])) << i;
  std::lock_guard lock(order_mutex);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 99, 3, 4, 5}));
}

// Batches larger than the pass stage's chunks (16,384 pairs: jobs are built and results copied back
// per chunk on the pool) with pairs that need no reverse pass scattered through them (score 0:
// nothing to find a start for), in several batches in flight so the reverse passes of one batch share
// engine calls with the forward passes of the next.
TEST_F(GpuAligner, LargeBatchesWithPairsWithoutReversePasses) {
  std::mt19937_64 rng(77);
  std::vector<Batch> batches(3);
  for (Batch& b : batches) {
    for (std::size_t k = 0; k < 40'000; ++k) {
      std::vector<std::uint8_t> q(5 + rng() % 120), t(5 + rng() % 200);
      const bool zero = rng() % 5 == 0;  // A's against C's: every cell scores below 0
      for (auto& c : q) c = zero ? 0 : static_cast<std::uint8_t>(rng() % 4);
      for (auto& c : t) c = zero ? 1 : static_cast<std::uint8_t>(rng() % 4);
      b.add(q, t);
    }
  }
  Config gpu_config = config(Mode::kLocal, true, DeviceMode::kGpu);
  gpu_config.traceback = false;
  Config cpu_config = gpu_config;
  cpu_config.device = DeviceMode::kCpu;
  Aligner gpu(gpu_config), cpu(cpu_config);
  std::vector<std::future<std::vector<Result>>> futures;
  for (const Batch& b : batches) futures.push_back(gpu.submit(b));
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const std::vector<Result> got = futures[i].get(), expected = cpu.align(batches[i]);
    ASSERT_EQ(got.size(), expected.size());
    std::size_t differing = 0, zeros = 0;
    for (std::size_t k = 0; k < got.size(); ++k) {
      differing += got[k] == expected[k] ? 0 : 1;
      zeros += expected[k].score == 0 ? 1 : 0;
    }
    EXPECT_EQ(differing, 0u) << "batch " << i;
    EXPECT_GT(zeros, 4'000u) << "batch " << i;
  }
}

}  // namespace
}  // namespace warpsearch::align
