// stats.cpp: Gumbel and exponential distribution functions, the same double arithmetic as Easel
// 0.48's esl_gumbel.c / esl_exponential.c (operation order, approximation branches and constants).
#include "hmm/stats.hpp"

#include <cmath>
#include <limits>

namespace warpsearch::hmm {

double gumbel_surv(double x, double mu, double lambda) {
  const double y = lambda * (x - mu);
  const double ey = -std::exp(-y);
  // 1 - e^ey ~ -ey when |ey| is tiny.
  if (std::fabs(ey) < kSmallX1) return -ey;
  return 1 - std::exp(ey);
}

double gumbel_logsurv(double x, double mu, double lambda) {
  const double y = lambda * (x - mu);
  const double ey = -std::exp(-y);
  // log(1 - exp(-exp(-y))): ~ -y for large y, ~ -exp(ey) when exp(ey) is tiny.
  if (std::fabs(ey) < kSmallX1) return -y;
  if (std::fabs(std::exp(ey)) < kSmallX1) return -std::exp(ey);
  return std::log(1 - std::exp(ey));
}

double gumbel_cdf(double x, double mu, double lambda) {
  const double y = lambda * (x - mu);
  return std::exp(-std::exp(-y));
}

double gumbel_logcdf(double x, double mu, double lambda) {
  const double y = lambda * (x - mu);
  return -std::exp(-y);
}

double gumbel_invcdf(double p, double mu, double lambda) {
  return mu - (std::log(-1. * std::log(p)) / lambda);
}

double gumbel_invsurv(double p, double mu, double lambda) {
  // log(-log(1-p)) loses everything for tiny p; Easel then uses log(p) ~ (p^p - 1) / p.
  double log_part;
  if (p < kSmallX1)
    log_part = (std::pow(p, p) - 1) / p;
  else
    log_part = std::log(-1. * std::log(1 - p));
  return mu - (log_part / lambda);
}

double exp_surv(double x, double mu, double lambda) {
  if (x < mu) return 1.0;
  return std::exp(-lambda * (x - mu));
}

double exp_logsurv(double x, double mu, double lambda) {
  if (x < mu) return 0.0;
  return -lambda * (x - mu);
}

double exp_cdf(double x, double mu, double lambda) {
  const double y = lambda * (x - mu);
  if (x < mu) return 0.;
  if (y < kSmallX1) return y;
  return 1 - std::exp(-y);
}

double exp_logcdf(double x, double mu, double lambda) {
  const double y = lambda * (x - mu);
  const double ey = std::exp(-y);
  if (x < mu) return -std::numeric_limits<double>::infinity();
  if (y == 0) return -std::numeric_limits<double>::infinity();
  if (y < kSmallX1) return std::log(y);
  if (ey < kSmallX1) return -ey;
  return std::log(1 - ey);
}

double exp_invcdf(double p, double mu, double lambda) { return mu - 1 / lambda * std::log(1. - p); }

double exp_invsurv(double p, double mu, double lambda) { return mu - 1. / lambda * std::log(p); }

}  // namespace warpsearch::hmm
