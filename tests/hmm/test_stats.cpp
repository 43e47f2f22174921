// test_stats.cpp: Gumbel and exponential tail functions (src/hmm/stats.hpp) against the defining
// formulas evaluated in long double, their branch points (Easel's eslSMALLX1 approximations), and
// inverse/forward round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hmm/stats.hpp"

namespace warpsearch::hmm {
namespace {

long double ref_gumbel_surv(long double x, long double mu, long double lambda) {
  return -std::expm1(-std::exp(-lambda * (x - mu)));
}

TEST(Stats, GumbelSurvivalMatchesDefinition) {
  const double mu = -8.4, lambda = 0.693;  // typical HMMER MSV/Viterbi parameters (nats^-1 ~ log 2)
  for (double x = -20.0; x <= 900.0; x += 0.37) {
    const double s = gumbel_surv(x, mu, lambda);
    const long double ref = ref_gumbel_surv(x, mu, lambda);
    if (ref > 1e-300L) {
      EXPECT_NEAR(s / static_cast<double>(ref), 1.0, 1e-8) << x;
    }
    EXPECT_GE(s, 0.0);
    EXPECT_LE(s, 1.0);
    // log survival agrees with log of the survival (both in their accurate ranges).
    const double ls = gumbel_logsurv(x, mu, lambda);
    if (ref > 1e-300L) {
      EXPECT_NEAR(ls, static_cast<double>(std::log(ref)), 1e-7 * std::max(1.0, std::fabs(ls))) << x;
    }
  }
  // Exact Easel branches: tiny e^-y -> -ey; otherwise 1 - exp(ey).
  const double y_big = 30.0;  // exp(-30) < 5e-9
  EXPECT_EQ(gumbel_surv(mu + y_big / lambda, mu, lambda), std::exp(-(lambda * ((mu + y_big / lambda) - mu))));
  const double x_mid = mu + 1.0;
  EXPECT_EQ(gumbel_surv(x_mid, mu, lambda), 1 - std::exp(-std::exp(-(lambda * (x_mid - mu)))));
  EXPECT_EQ(gumbel_logsurv(mu + y_big / lambda, mu, lambda), -(lambda * ((mu + y_big / lambda) - mu)));
  // Far left: survival 1, log survival -> -exp(ey) ~ 0.
  EXPECT_EQ(gumbel_surv(-1000.0, mu, lambda), 1.0);
  EXPECT_LE(std::fabs(gumbel_logsurv(-1000.0, mu, lambda)), 1e-300);
}

TEST(Stats, GumbelCdfAndInverses) {
  const double mu = 2.5, lambda = 0.7;
  for (double x = -3.0; x < 40.0; x += 0.5) {
    EXPECT_NEAR(gumbel_cdf(x, mu, lambda) + gumbel_surv(x, mu, lambda), 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(gumbel_logcdf(x, mu, lambda), -std::exp(-lambda * (x - mu)));
  }
  for (double p : {0.9, 0.5, 0.1, 1e-3, 1e-6, 1e-8, 1e-10, 1e-15}) {
    // Below eslSMALLX1 Easel approximates log(p) by (p^p - 1) / p, which is only good to ~1% at 1e-15.
    EXPECT_NEAR(gumbel_surv(gumbel_invsurv(p, mu, lambda), mu, lambda) / p, 1.0, p < kSmallX1 ? 0.05 : 1e-6)
        << p;
    EXPECT_NEAR(gumbel_cdf(gumbel_invcdf(1.0 - p, mu, lambda), mu, lambda), 1.0 - p, 1e-9) << p;
  }
}

TEST(Stats, ExponentialTail) {
  const double tau = -4.2, lambda = 0.693147;
  for (double x = -30.0; x < 800.0; x += 0.41) {
    const double s = exp_surv(x, tau, lambda);
    const double ls = exp_logsurv(x, tau, lambda);
    if (x < tau) {
      EXPECT_EQ(s, 1.0);
      EXPECT_EQ(ls, 0.0);
      EXPECT_EQ(exp_cdf(x, tau, lambda), 0.0);
      EXPECT_EQ(exp_logcdf(x, tau, lambda), -std::numeric_limits<double>::infinity());
    } else {
      EXPECT_EQ(s, std::exp(-lambda * (x - tau)));  // exactly Easel's expression
      EXPECT_EQ(ls, -lambda * (x - tau));
      const long double ref = std::exp(-static_cast<long double>(lambda) * (x - tau));
      if (ref > 1e-300L) {
        EXPECT_NEAR(s / static_cast<double>(ref), 1.0, 1e-12);
      }
      EXPECT_NEAR(exp_cdf(x, tau, lambda),
                  static_cast<double>(-std::expm1(-static_cast<long double>(lambda) * (x - tau))), 1e-12);
    }
  }
  EXPECT_EQ(exp_logcdf(tau, tau, lambda), -std::numeric_limits<double>::infinity());  // y == 0: no NaN
  EXPECT_EQ(exp_cdf(tau + 1e-12, tau, lambda), lambda * ((tau + 1e-12) - tau));       // small-y branch
  for (double p : {0.5, 1e-3, 1e-20})
    EXPECT_NEAR(exp_surv(exp_invsurv(p, tau, lambda), tau, lambda) / p, 1.0, 1e-12);
  for (double p : {0.5, 1e-3}) EXPECT_NEAR(exp_cdf(exp_invcdf(p, tau, lambda), tau, lambda) / p, 1.0, 1e-9);
}

TEST(Stats, FloatInputsWidenLikeHmmer) {
  // HMMER passes float scores and float evparams; the functions see the widened doubles.
  const float score = 23.71f, tau = -3.91f, lambda = 0.71f;
  EXPECT_EQ(exp_logsurv(score, tau, lambda),
            -static_cast<double>(lambda) * (static_cast<double>(score) - static_cast<double>(tau)));
}

}  // namespace
}  // namespace warpsearch::hmm
