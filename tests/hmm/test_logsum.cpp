// Tests of HMMER's table-driven flogsum (src/hmm/logsum.hpp): accuracy against the exact
// log(exp(a)+exp(b)) in double (the table's truncation error is at most 0.5*0.001 nats), the -inf and
// large-difference cases, symmetry, and identical results from concurrent first use in many threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "hmm/logsum.hpp"

namespace warpsearch::hmm {
namespace {

double exact_logsum(double a, double b) {
  const double mx = std::max(a, b);
  return mx + std::log(std::exp(a - mx) + std::exp(b - mx));
}

// Bound on |flogsum - exact|: table truncation (step 0.001, slope <= 1/2) + table float rounding +
// the final float addition, or the dropped term log(1+exp(-15.7)) ~ 1.5e-7 beyond the cutoff.
double tolerance(float mx) { return 0.0005 + 1e-6 + 2.0 * std::abs(static_cast<double>(mx)) * 6e-8; }

TEST(Logsum, MatchesExactWithinTableError) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-1000.0f, 1000.0f);
  std::uniform_real_distribution<float> diff(0.0f, 20.0f);
  for (int n = 0; n < 200000; n++) {
    const float a = wide(rng);
    const float b = (n % 2 == 0) ? a - diff(rng) : wide(rng);
    const float got = flogsum(a, b);
    const double want = exact_logsum(a, b);
    ASSERT_NEAR(got, want, tolerance(std::max(a, b))) << "a=" << a << " b=" << b;
    ASSERT_GE(got, std::max(a, b));  // the table holds log(1+exp(-d)) >= 0
  }
}

TEST(Logsum, SmallDifferencesAreAccurate) {
  for (int i = 0; i < 16000; i += 7) {
    const float d = static_cast<float>(i) * 0.001f + 0.0004f;
    const float got = flogsum(0.0f, -d);
    EXPECT_NEAR(got, exact_logsum(0.0, -static_cast<double>(d)), 0.0005 + 1e-6) << d;
  }
  EXPECT_FLOAT_EQ(flogsum(3.0f, 3.0f), 3.0f + static_cast<float>(std::log(2.0)));
}

TEST(Logsum, InfinityAndCutoff) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(flogsum(-inf, -inf), -inf);
  EXPECT_EQ(flogsum(-inf, -3.5f), -3.5f);
  EXPECT_EQ(flogsum(2.25f, -inf), 2.25f);
  // Differences >= 15.7 return the max exactly; just below, the table term is added.
  EXPECT_EQ(flogsum(0.0f, -15.7f), 0.0f);
  EXPECT_EQ(flogsum(-20.0f, 0.0f), 0.0f);
  EXPECT_GT(flogsum(0.0f, -15.6f), 0.0f);
}

TEST(Logsum, SymmetricBitForBit) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-50.0f, 50.0f);
  for (int n = 0; n < 10000; n++) {
    const float a = u(rng);
    const float b = u(rng);
    ASSERT_EQ(flogsum(a, b), flogsum(b, a));
  }
}

TEST(Logsum, TableIsHmmersFormula) {
  // Entry i is log(1 + exp(-i/1000)) computed in double and rounded to float (p7_FLogsumInit).
  const float* t = flogsum_table();
  EXPECT_EQ(t[0], static_cast<float>(std::log(2.0)));
  for (int i = 1; i < kLogsumTableSize; i += 97) {
    const double want = std::log(1.0 + std::exp(-static_cast<double>(i) / 1000.0));
    EXPECT_NEAR(t[i], want, std::abs(want) * 1.2e-7) << i;
  }
}

TEST(Logsum, ConcurrentUseGivesIdenticalResults) {
  std::vector<float> inputs;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-30.0f, 30.0f);
  for (int n = 0; n < 4000; n++) inputs.push_back(u(rng));
  std::vector<float> serial(inputs.size() - 1);
  for (std::size_t n = 0; n + 1 < inputs.size(); n++) serial[n] = flogsum(inputs[n], inputs[n + 1]);
  std::vector<std::vector<float>> out(4, std::vector<float>(serial.size()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      auto& o = out[static_cast<std::size_t>(t)];
      for (std::size_t n = 0; n + 1 < inputs.size(); n++) o[n] = flogsum(inputs[n], inputs[n + 1]);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& o : out) EXPECT_EQ(o, serial);
}

}  // namespace
}  // namespace warpsearch::hmm
