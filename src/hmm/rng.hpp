// rng.hpp: Easel 0.48's random number generator (esl_random.c), reproduced bit-for-bit.
//
// HMMER's stochastic traceback and domain definition draw from an ESL_RANDOMNESS; to reproduce
// hmmsearch exactly we need the same stream of numbers. Easel has two generators:
//   - RngKind::kMersenne (esl_randomness_Create): MT19937, but with Easel's own 1999-style seeding
//     (mt[0] = seed, mt[z] = 69069 * mt[z-1]) rather than the standard init_genrand; the table is
//     regenerated right after seeding.
//   - RngKind::kFast (esl_randomness_CreateFast): the Knuth LCG x <- 69069 x + 1 (mod 2^32), started
//     from x = mix3(seed, 87654321, 12345678) (42 if that is 0).
// THE HMMER PIPELINE USES kFast (p7_pipeline.c: esl_randomness_CreateFast(seed), default seed 42) and
// reseeds it with init(seed()) before every sequence's stochastic trace ensemble.
//
// Seeding semantics as Easel: a seed of 0 means "arbitrary" (a time/clock/pid hash is chosen once, in
// init); seed() returns the seed actually used, so init(seed()) restarts the same stream.
// random() = x / 2^32 in double, on [0,1). The choose functions sum in double exactly as Easel does.
#pragma once

#include <cstdint>
#include <vector>

namespace warpsearch::hmm {

enum class RngKind : uint8_t { kMersenne, kFast };

class Rng {
 public:
  /// esl_randomness_Create(seed) (kMersenne) or esl_randomness_CreateFast(seed) (kFast).
  explicit Rng(uint32_t seed = 42, RngKind kind = RngKind::kMersenne);

  /// esl_randomness_Init: reseed (0 = arbitrary seed) and restart the stream.
  void init(uint32_t seed);
  /// esl_randomness_GetSeed: the seed in use (the chosen one if 0 was given).
  uint32_t seed() const noexcept { return seed_; }
  RngKind kind() const noexcept { return kind_; }

  /// esl_random_uint32: next raw 32-bit output.
  uint32_t random_uint32();
  /// esl_random: uniform on [0,1), = (double)x / 4294967296.0.
  double random() { return static_cast<double>(random_uint32()) / 4294967296.0; }
  /// esl_rnd_UniformPositive: uniform on (0,1) (redraws exact zeros).
  double uniform_positive();
  /// esl_rnd_Roll(a): (int)(random() * a), a uniform integer 0..a-1.
  int roll(int a) { return static_cast<int>(random() * a); }

  /// esl_rnd_FChoose / DChoose: sample index 0..n-1 from an (approximately normalized) probability
  /// vector; one draw; sums accumulated in double, compared as roll < sum/norm.
  int fchoose(const float* p, int n);
  int dchoose(const double* p, int n);
  /// esl_rnd_FChooseCDF / DChooseCDF: the same from a cumulative distribution.
  int fchoose_cdf(const float* cdf, int n);
  int dchoose_cdf(const double* cdf, int n);

  /// esl_rnd_mix3: Bob Jenkins' mix() of three words (used to disperse seeds).
  static uint32_t mix3(uint32_t a, uint32_t b, uint32_t c) noexcept;

 private:
  void mt_seed_table(uint32_t seed);
  void mt_fill_table();

  RngKind kind_;
  uint32_t seed_ = 0;
  uint32_t x_ = 0;            // LCG state (kFast)
  int mti_ = 0;               // next index into mt_ (kMersenne)
  std::vector<uint32_t> mt_;  // 624 words of MT state (kMersenne only)
};

}  // namespace warpsearch::hmm
