// test_two_hit_warp.cu: the warp-cooperative two-hit extension (src/blast/cuda/two_hit_warp.cuh) against
// extend_two_hit_raw (two_hit.hpp, the CPU's code), field by field, on a GPU (skipped without one).
//
// Cases: random proteins and subjects that are mutated copies of the query (extensions of hundreds of
// positions, many chunks of 32), runs of X and of one residue, hits at both sequences' ends (empty left
// parts, right parts that run out), word sizes 2..5, X-drops from 1 to 60, and first hits inside, at and
// before the second word's start; BLOSUM62 and BLOSUM45.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "blast/cuda/two_hit_warp.cuh"
#include "blast/two_hit.hpp"
#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/check.cuh"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {

struct Case {
  std::uint32_t query_at = 0;  // into the residue pool
  std::uint32_t subject_at = 0;
  std::int32_t query_length = 0;
  std::int32_t subject_length = 0;
  std::int32_t s_first_end = 0;
  std::int32_t s_second = 0;
  std::int32_t q_second = 0;
  int x_dropoff = 0;
  int word_size = 0;
};

// One warp per case; lane 0 writes the result, every lane's result is checked to be the same.
__global__ void warp_kernel(const Case* cases, int n, const std::uint8_t* pool, const std::int8_t* table,
                            TwoHitExtension* out, int* disagree) {
  const int c = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (c >= n) return;  // whole warps leave together (blockDim is a multiple of 32)
  const Case k = cases[c];
  const TwoHitExtension x = warp_two_hit::extend_two_hit_warp(
      pool + k.query_at, k.query_length, pool + k.subject_at, k.subject_length, table, k.s_first_end,
      k.s_second, k.q_second, k.x_dropoff, k.word_size, lane);
  const TwoHitExtension first = {__shfl_sync(0xFFFFFFFFu, x.score, 0),
                                 __shfl_sync(0xFFFFFFFFu, x.query_start, 0),
                                 __shfl_sync(0xFFFFFFFFu, x.subject_start, 0),
                                 __shfl_sync(0xFFFFFFFFu, x.length, 0),
                                 __shfl_sync(0xFFFFFFFFu, static_cast<int>(x.right_extended), 0) != 0,
                                 __shfl_sync(0xFFFFFFFFu, x.subject_last, 0)};
  if (first.score != x.score || first.query_start != x.query_start ||
      first.subject_start != x.subject_start || first.length != x.length ||
      first.right_extended != x.right_extended || first.subject_last != x.subject_last)
    atomicAdd(disagree, 1);
  if (lane == 0) out[c] = x;
}

class TwoHitWarp : public ::testing::Test {
 protected:
  void SetUp() override {
    const DeviceProbe probe = probe_devices();
    if (probe.devices.empty()) GTEST_SKIP() << probe.unavailable_reason;
    WS_CUDA_CHECK(cudaSetDevice(probe.devices.front().id));
  }
};

std::uint8_t random_residue(std::mt19937& rng) {
  // The 20 standard amino acids mostly, sometimes X or a rare code.
  static const std::string letters = "ARNDCQEGHILKMFPSTWYVARNDCQEGHILKMFPSTWYVXBZ";
  return *Alphabet::protein().code(
      letters[std::uniform_int_distribution<std::size_t>(0, letters.size() - 1)(rng)]);
}

// Runs every case both ways and compares.
void check(const std::vector<std::uint8_t>& pool, const std::vector<Case>& cases,
           const ScoringMatrix& matrix) {
  const std::int8_t* table = matrix.row(0);
  gpu::DeviceBuffer<std::uint8_t> d_pool(pool.size());
  d_pool.upload(pool);
  gpu::DeviceBuffer<Case> d_cases(cases.size());
  d_cases.upload(cases);
  gpu::DeviceBuffer<std::int8_t> d_table(kMaxCodes * kMaxCodes);
  d_table.upload(std::span<const std::int8_t>(table, kMaxCodes * kMaxCodes));
  gpu::DeviceBuffer<TwoHitExtension> d_out(cases.size());
  gpu::DeviceBuffer<int> d_disagree(1);
  WS_CUDA_CHECK(cudaMemset(d_disagree.data(), 0, sizeof(int)));
  const int n = static_cast<int>(cases.size());
  warp_kernel<<<(n * 32 + 255) / 256, 256>>>(d_cases.data(), n, d_pool.data(), d_table.data(), d_out.data(),
                                             d_disagree.data());
  WS_CUDA_CHECK_LAUNCH();
  WS_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<TwoHitExtension> got(cases.size());
  d_out.download(std::span<TwoHitExtension>(got));
  int disagree = 0;
  d_disagree.download(std::span<int>(&disagree, 1));
  EXPECT_EQ(disagree, 0) << "lanes returned different results";
  int failures = 0;
  for (std::size_t i = 0; i < cases.size() && failures < 10; ++i) {
    const Case& k = cases[i];
    const TwoHitExtension want = extend_two_hit_raw(
        pool.data() + k.query_at, k.query_length, pool.data() + k.subject_at, k.subject_length, table,
        k.s_first_end, k.s_second, k.q_second, k.x_dropoff, k.word_size);
    const TwoHitExtension& g = got[i];
    const bool same = g.score == want.score && g.query_start == want.query_start &&
                      g.subject_start == want.subject_start && g.length == want.length &&
                      g.right_extended == want.right_extended && g.subject_last == want.subject_last;
    if (!same) {
      ++failures;
      ADD_FAILURE() << "case " << i << " (query " << k.query_length << ", subject " << k.subject_length
                    << ", second hit q " << k.q_second << " s " << k.s_second << ", first end "
                    << k.s_first_end << ", X " << k.x_dropoff << ", word " << k.word_size << "): warp {"
                    << g.score << ", " << g.query_start << ", " << g.subject_start << ", " << g.length << ", "
                    << g.right_extended << ", " << g.subject_last << "}, CPU {" << want.score << ", "
                    << want.query_start << ", " << want.subject_start << ", " << want.length << ", "
                    << want.right_extended << ", " << want.subject_last << "}";
    }
  }
}

// Random cases over a pool of sequences: the query random, the subject random, a mutated copy of the query
// (long extensions), or a low-complexity run.
std::vector<Case> random_cases(std::vector<std::uint8_t>& pool, int count, std::uint32_t seed,
                               int max_length) {
  std::mt19937 rng(seed);
  std::vector<Case> cases;
  const auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  while (static_cast<int>(cases.size()) < count) {
    Case k;
    k.word_size = uni(2, 5);
    k.query_length = uni(k.word_size, max_length);
    k.query_at = static_cast<std::uint32_t>(pool.size());
    for (int i = 0; i < k.query_length; ++i) pool.push_back(random_residue(rng));
    const int kind = uni(0, 3);
    k.subject_length =
        kind == 1 ? k.query_length + uni(-k.query_length / 2, 40) : uni(k.word_size, max_length);
    k.subject_length = std::max(k.subject_length, k.word_size);
    k.subject_at = static_cast<std::uint32_t>(pool.size());
    const int mutate_per_mille = uni(0, 400);
    const std::uint8_t run = random_residue(rng);
    for (int i = 0; i < k.subject_length; ++i) {
      std::uint8_t r = random_residue(rng);
      if (kind == 1 && i < k.query_length && uni(0, 999) >= mutate_per_mille) r = pool[k.query_at + i];
      if (kind == 2 && uni(0, 9) < 8) r = run;
      pool.push_back(r);
    }
    // The second hit anywhere its word fits; on a copy mostly on the main diagonal.
    k.s_second = uni(0, k.subject_length - k.word_size);
    k.q_second = kind == 1 && k.s_second <= k.query_length - k.word_size && uni(0, 3) > 0
                     ? k.s_second
                     : uni(0, k.query_length - k.word_size);
    // The first hit's word ends at or before the second's start, as the two-hit rule gives (diff >= word
    // size), sometimes further back than the window; sometimes before the subject's start.
    const int diff = uni(k.word_size, 80);
    k.s_first_end = k.s_second - diff + k.word_size;
    k.x_dropoff = uni(0, 3) == 0 ? uni(1, 60) : uni(10, 25);
    cases.push_back(k);
  }
  return cases;
}

TEST_F(TwoHitWarp, RandomCasesEqualCpu) {
  std::vector<std::uint8_t> pool;
  const std::vector<Case> cases = random_cases(pool, 20000, 17, 300);
  check(pool, cases, ScoringMatrix::builtin("BLOSUM62"));
}

TEST_F(TwoHitWarp, LongSequencesEqualCpu) {
  std::vector<std::uint8_t> pool;
  const std::vector<Case> cases = random_cases(pool, 2000, 23, 3000);
  check(pool, cases, ScoringMatrix::builtin("BLOSUM45"));
}

// Identical sequences: the extension runs to both ends (the right part runs out; the left reaches the
// first letter), at lengths around multiples of 32, and hits at the very first and last words.
TEST_F(TwoHitWarp, RunsToTheEndsEqualCpu) {
  std::mt19937 rng(5);
  std::vector<std::uint8_t> pool;
  std::vector<Case> cases;
  for (int length : {3, 4, 31, 32, 33, 63, 64, 65, 95, 96, 97, 200}) {
    for (int word_size : {2, 3}) {
      if (length < word_size) continue;
      Case k;
      k.word_size = word_size;
      k.query_length = k.subject_length = length;
      k.query_at = static_cast<std::uint32_t>(pool.size());
      for (int i = 0; i < length; ++i) pool.push_back(random_residue(rng));
      k.subject_at = static_cast<std::uint32_t>(pool.size());
      for (int i = 0; i < length; ++i) pool.push_back(pool[k.query_at + i]);
      for (int at : {0, length / 2, length - word_size}) {
        for (int diff : {word_size, word_size + 1, 40}) {
          k.s_second = k.q_second = at;
          k.s_first_end = at - diff + word_size;
          for (int x : {1, 16, 1000}) {
            k.x_dropoff = x;
            cases.push_back(k);
          }
        }
      }
    }
  }
  check(pool, cases, ScoringMatrix::builtin("BLOSUM62"));
}

}  // namespace
}  // namespace warpsearch::blast
