// stats.hpp: the score distributions HMMER uses for P-values (Easel 0.48 esl_gumbel.c and
// esl_exponential.c), computed in double with the same operations, branches and cutoffs as Easel
// (eslSMALLX1 = 5e-9 for the small-x approximations), so that P-values and E-values match hmmsearch
// bit-for-bit. Callers pass HMMER's float scores/parameters widened to double, as the C code does.
//   gumbel_*: Gumbel with location mu, scale lambda (MSV/Viterbi filter P-values).
//   exp_*:    exponential tail with offset mu (= tau), decay lambda (Forward and domain P-values).
#pragma once

namespace warpsearch::hmm {

/// Easel's eslSMALLX1: below this, 1-e^-x ~ x and log(1-x) ~ -x approximations are used.
inline constexpr double kSmallX1 = 5e-9;

/// esl_gumbel_surv: P(S > x).
double gumbel_surv(double x, double mu, double lambda);
/// esl_gumbel_logsurv: log P(S > x).
double gumbel_logsurv(double x, double mu, double lambda);
/// esl_gumbel_cdf / esl_gumbel_logcdf.
double gumbel_cdf(double x, double mu, double lambda);
double gumbel_logcdf(double x, double mu, double lambda);
/// esl_gumbel_invcdf: x with cdf(x) = p.
double gumbel_invcdf(double p, double mu, double lambda);
/// esl_gumbel_invsurv: x with surv(x) = p (with Easel's small-p approximation).
double gumbel_invsurv(double p, double mu, double lambda);

/// esl_exp_surv: P(S > x) (1.0 for x < mu).
double exp_surv(double x, double mu, double lambda);
/// esl_exp_logsurv: log P(S > x) (0.0 for x < mu).
double exp_logsurv(double x, double mu, double lambda);
/// esl_exp_cdf / esl_exp_logcdf.
double exp_cdf(double x, double mu, double lambda);
double exp_logcdf(double x, double mu, double lambda);
/// esl_exp_invcdf / esl_exp_invsurv.
double exp_invcdf(double p, double mu, double lambda);
double exp_invsurv(double p, double mu, double lambda);

}  // namespace warpsearch::hmm
