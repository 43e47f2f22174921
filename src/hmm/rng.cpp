// rng.cpp: Easel 0.48 random number generators (MT19937 with Easel's seeding, Knuth LCG), seeding,
// uniform deviates and multinomial choice, reproducing esl_random.c's arithmetic exactly.
#include "hmm/rng.hpp"

#include <unistd.h>

#include <ctime>
#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

constexpr int kMtN = 624;
constexpr int kMtM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpper = 0x80000000U;
constexpr uint32_t kLower = 0x7fffffffU;

// Easel's choose_arbitrary_seed(): hash of time(), getpid() and clock(); never 0.
uint32_t arbitrary_seed() {
  const auto a = static_cast<uint32_t>(std::time(nullptr));
  const auto b = static_cast<uint32_t>(::getpid());
  const auto c = static_cast<uint32_t>(std::clock());
  const uint32_t s = Rng::mix3(a, b, c);
  return s == 0 ? 42U : s;
}

[[noreturn]] void unreachable_choice(const char* fn) {
  throw Error(ErrorKind::kInternal, std::string(fn) + ": no element chosen (probabilities not normalized?)");
}

}  // namespace

Rng::Rng(uint32_t seed, RngKind kind) : kind_(kind) {
  if (kind_ == RngKind::kMersenne) mt_.assign(kMtN, 0U);
  init(seed);
}

void Rng::init(uint32_t seed) {
  if (seed == 0) seed = arbitrary_seed();
  if (kind_ == RngKind::kMersenne) {
    mt_seed_table(seed);
    mt_fill_table();
  } else {
    seed_ = seed;
    x_ = mix3(seed, 87654321U, 12345678U);
    if (x_ == 0) x_ = 42;
  }
}

uint32_t Rng::random_uint32() {
  if (kind_ == RngKind::kFast) {
    x_ = x_ * 69069U + 1U;  // unsigned wraparound mod 2^32
    return x_;
  }
  if (mti_ >= kMtN) mt_fill_table();
  uint32_t y = mt_[static_cast<std::size_t>(mti_++)];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

double Rng::uniform_positive() {
  double x;
  do {
    x = random();
  } while (x == 0.0);
  return x;
}

int Rng::fchoose(const float* p, int n) {
  // Order matters for exactness: draw first, then the normalization sum, then the running sum.
  const double roll = random();
  double norm = 0.0;
  for (int i = 0; i < n; ++i) norm += p[i];
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    sum += static_cast<double>(p[i]);
    if (roll < sum / norm) return i;
  }
  unreachable_choice("Rng::fchoose");
}

int Rng::dchoose(const double* p, int n) {
  const double roll = random();
  double norm = 0.0;
  for (int i = 0; i < n; ++i) norm += p[i];
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    sum += p[i];
    if (roll < sum / norm) return i;
  }
  unreachable_choice("Rng::dchoose");
}

int Rng::fchoose_cdf(const float* cdf, int n) {
  const double roll = random();
  for (int i = 0; i < n; ++i)
    if (roll < static_cast<double>(cdf[i]) / static_cast<double>(cdf[n - 1])) return i;
  unreachable_choice("Rng::fchoose_cdf");
}

int Rng::dchoose_cdf(const double* cdf, int n) {
  const double roll = random();
  for (int i = 0; i < n; ++i)
    if (roll < cdf[i] / cdf[n - 1]) return i;
  unreachable_choice("Rng::dchoose_cdf");
}

uint32_t Rng::mix3(uint32_t a, uint32_t b, uint32_t c) noexcept {
  // clang-format off
  a -= b; a -= c; a ^= (c >> 13);
  b -= c; b -= a; b ^= (a << 8);
  c -= a; c -= b; c ^= (b >> 13);
  a -= b; a -= c; a ^= (c >> 12);
  b -= c; b -= a; b ^= (a << 16);
  c -= a; c -= b; c ^= (b >> 5);
  a -= b; a -= c; a ^= (c >> 3);
  b -= c; b -= a; b ^= (a << 10);
  c -= a; c -= b; c ^= (b >> 15);
  // clang-format on
  return c;
}

// Easel seeds the MT table with the LCG multiplier (Knuth/Matsumoto 1998 style), not init_genrand.
void Rng::mt_seed_table(uint32_t seed) {
  seed_ = seed;
  mt_[0] = seed;
  for (int z = 1; z < kMtN; ++z)
    mt_[static_cast<std::size_t>(z)] = 69069U * mt_[static_cast<std::size_t>(z - 1)];
}

// Standard MT19937 regeneration of all 624 words; afterwards mti_ = 0.
void Rng::mt_fill_table() {
  auto twist = [&](int z, int znext, int zfar) {
    const uint32_t y =
        (mt_[static_cast<std::size_t>(z)] & kUpper) | (mt_[static_cast<std::size_t>(znext)] & kLower);
    mt_[static_cast<std::size_t>(z)] =
        mt_[static_cast<std::size_t>(zfar)] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
  };
  int z = 0;
  for (; z < kMtN - kMtM; ++z) twist(z, z + 1, z + kMtM);
  for (; z < kMtN - 1; ++z) twist(z, z + 1, z - (kMtN - kMtM));
  twist(kMtN - 1, 0, kMtM - 1);
  mti_ = 0;
}

}  // namespace warpsearch::hmm
