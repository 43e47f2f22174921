// hsp.cpp: blastp 2.12's post-gapped statistics (effective lengths, Spouge / Karlin E-values, bit scores,
// report formatting) and HSP-list / hit-list rules. See hsp.hpp for the rules; every arithmetic step
// follows BLAST+'s order of operations so that the doubles are BLAST+'s.
#include "blast/hsp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace warpsearch::blast {
namespace {

constexpr double kLn2 = 0.69314718055994530941723212145818;  // NCBIMATH_LN2
constexpr double kEvalueEpsilon = 1.0e-180;                  // s_EvalueComp

// Boost's erf / erfc rational approximations for 53-bit doubles (the ones boost_erf.c carries; Boost
// Software License). Evaluated for z >= 0; `complement` asks for erfc. The exponential factor is taken in
// long double (expl) and the product rounded to double once, as BLAST+'s build does.
double erf_approx(double z, bool complement) {
  if (z < 0) {
    if (!complement) return -erf_approx(-z, false);
    if (z < -0.5) return 2.0 - erf_approx(-z, true);
    return 1 + erf_approx(-z, false);
  }
  double result = 0;
  auto tail = [](double value, double zz) {
    const long double factor = expl(-zz * zz) / zz;
    return static_cast<double>(value * factor);
  };
  if (z < 0.5) {
    if (z < 1e-10) {
      result = z == 0 ? 0.0 : z * 1.125 + z * 0.003379167095512573896158903121545171688;
    } else {
      const double zz = z * z;
      const double p = (((-0.000322780120964605683831 * zz + -0.00772758345802133288487) * zz +
                         -0.0509990735146777432841) *
                            zz +
                        -0.338165134459360935041) *
                           zz +
                       0.0834305892146531832907;
      const double q =
          (((0.000370900071787748000569 * zz + 0.00858571925074406212772) * zz + 0.0875222600142252549554) *
               zz +
           0.455004033050794024546) *
              zz +
          1.0;
      result = z * (1.044948577880859375 + p / q);
    }
  } else if (complement ? (z < 28.0) : (z < 5.8)) {
    complement = !complement;
    if (z < 1.5) {
      const double x = z - 0.5;
      const double p =
          ((((0.00180424538297014223957 * x + 0.0195049001251218801359) * x + 0.0888900368967884466578) * x +
            0.191003695796775433986) *
               x +
           0.178114665841120341155) *
              x +
          -0.098090592216281240205;
      const double q =
          ((((0.0113385233577001411017 * x + 0.12385097467900864233) * x + 0.578052804889902404909) * x +
            1.42628004845511324508) *
               x +
           1.84759070983002217845) *
              x +
          1.0;
      result = tail(0.405935764312744140625 + p / q, z);
    } else if (z < 2.5) {
      const double x = z - 1.5;
      const double p =
          ((((0.000235839115596880717416 * x + 0.00323962406290842133584) * x + 0.0175679436311802092299) *
                x +
            0.04394818964209516296) *
               x +
           0.0386540375035707201728) *
              x +
          -0.0243500476207698441272;
      const double q =
          ((((0.00410369723978904575884 * x + 0.0563921837420478160373) * x + 0.325732924782444448493) * x +
            0.982403709157920235114) *
               x +
           1.53991494948552447182) *
              x +
          1.0;
      result = tail(0.50672817230224609375 + p / q, z);
    } else if (z < 4.5) {
      const double x = z - 3.5;
      const double p =
          ((((0.113212406648847561139e-4 * x + 0.000250269961544794627958) * x + 0.00212825620914618649141) *
                x +
            0.00840807615555585383007) *
               x +
           0.0137384425896355332126) *
              x +
          0.00295276716530971662634;
      const double q =
          ((((0.000479411269521714493907 * x + 0.0105982906484876531489) * x + 0.0958492726301061423444) * x +
            0.442597659481563127003) *
               x +
           1.04217814166938418171) *
              x +
          1.0;
      result = tail(0.5405750274658203125 + p / q, z);
    } else {
      const double x = 1.0 / z;
      const double p =
          (((((-2.8175401114513378771 * x + -3.22729451764143718517) * x + -2.5518551727311523996) * x +
             -0.687717681153649930619) *
                x +
            -0.212652252872804219852) *
               x +
           0.0175389834052493308818) *
              x +
          0.00628057170626964891937;
      const double q =
          (((((5.48409182238641741584 * x + 13.5064170191802889145) * x + 22.9367376522880577224) * x +
             15.930646027911794143) *
                x +
            11.0567237927800161565) *
               x +
           2.79257750980575282228) *
              x +
          1.0;
      result = tail(0.5579090118408203125 + p / q, z);
    }
  } else {
    result = 0;  // erfc underflows beyond 28
    complement = !complement;
  }
  if (complement) result = 1 - result;
  return result;
}

int cmp(long long a, long long b) { return a > b ? 1 : (a < b ? -1 : 0); }

int compare_evalues(double a, double b) {
  if (a < kEvalueEpsilon && b < kEvalueEpsilon) return 0;
  if (a < b) return -1;
  if (a > b) return 1;
  return 0;
}

}  // namespace

double blast_erfc(double x) { return erf_approx(x, true); }

LengthAdjustment length_adjustment(double K, double logK, double alpha_d_lambda, double beta,
                                   int query_length, std::int64_t db_length, int db_num_seqs) {
  constexpr int kMaxIterations = 20;
  const double m = query_length;
  const double n = static_cast<double>(db_length);
  const double N = db_num_seqs;
  // ell_max: the largest ell >= 0 with K (m - ell)(n - N ell) > max(m, n), by the quadratic formula in
  // the form 2c / (-b + sqrt(b^2 - 4ac)).
  const double qa = N;
  const double mb = m * N + n;
  const double qc = n * m - std::max(m, n) / K;
  if (qc < 0) return {0, false};
  double ell_max = 2 * qc / (mb + std::sqrt(mb * mb - 4 * qa * qc));
  double ell_min = 0;
  double ell_next = 0;
  bool converged = false;
  for (int i = 1; i <= kMaxIterations; ++i) {
    const double ell = ell_next;
    const double ss = (m - ell) * (n - N * ell);
    const double ell_bar = alpha_d_lambda * (logK + std::log(ss)) + beta;
    if (ell_bar >= ell) {  // ell does not exceed the fixed point
      ell_min = ell;
      if (ell_bar - ell_min <= 1.0) {
        converged = true;
        break;
      }
      if (ell_min == ell_max) break;
    } else {
      ell_max = ell;
    }
    if (ell_min <= ell_bar && ell_bar <= ell_max) {
      ell_next = ell_bar;
    } else {
      ell_next = (i == 1) ? ell_max : (ell_min + ell_max) / 2;
    }
  }
  LengthAdjustment out;
  out.converged = converged;
  out.adjustment = static_cast<int>(ell_min);
  if (converged) {
    // floor(ell_min) is taken as floor(fixed point) unless ceil(ell_min) still satisfies the inequality.
    const double ell = std::ceil(ell_min);
    if (ell <= ell_max) {
      const double ss = (m - ell) * (n - N * ell);
      if (alpha_d_lambda * (logK + std::log(ss)) + beta >= ell) out.adjustment = static_cast<int>(ell);
    }
  }
  return out;
}

EffectiveLengths effective_lengths(const stats::KarlinParams& gapped, int query_length,
                                   std::int64_t db_length, int db_num_seqs, std::int64_t searchsp_override) {
  EffectiveLengths out;
  if (query_length <= 0) {
    out.search_space = searchsp_override;
    return out;
  }
  out.length_adjustment = length_adjustment(gapped.K, std::log(gapped.K), gapped.alpha / gapped.lambda,
                                            gapped.beta, query_length, db_length, db_num_seqs)
                              .adjustment;
  if (searchsp_override > 0) {
    out.search_space = searchsp_override;
  } else {
    std::int64_t eff_db = db_length - static_cast<std::int64_t>(db_num_seqs) * out.length_adjustment;
    if (eff_db <= 0) eff_db = 1;
    out.search_space = eff_db * (query_length - out.length_adjustment);
  }
  return out;
}

double spouge_evalue(int score, const stats::KarlinParams& gapped, const stats::GumbelParams& gumbel,
                     int query_length, int subject_length, std::int64_t db_length) {
  const double scale = gapped.lambda / gumbel.lambda;  // scores and lambda may be rescaled together
  const double db_scale =
      db_length != 0 ? static_cast<double>(db_length) / static_cast<double>(subject_length) : 1.0;
  const double lambda = gapped.lambda;
  const double a_hat = gumbel.a * scale;
  const double b_hat = gumbel.b;
  const double alpha_hat = gumbel.alpha * scale;
  const double beta_hat = gumbel.beta;
  const double sigma_hat = gumbel.sigma * scale;
  const double tau_hat = gumbel.tau;
  constexpr double kInvSqrt2Pi = 0.39894228040143267793994605993438;
  const double y = score;
  // Symmetric matrix: both sequences share a, b, alpha, beta.
  auto side = [&](double len, double& p_f) {
    const double l_y = len - (a_hat * y + b_hat);
    const double v_y = std::max(2.0 * alpha_hat / lambda, alpha_hat * y + beta_hat);
    const double sqrt_v = std::sqrt(v_y);
    const double f = l_y / sqrt_v;
    p_f = blast_erfc(-f / std::sqrt(2.0)) / 2.0;
    return l_y * p_f + sqrt_v * kInvSqrt2Pi * std::exp(-0.5 * f * f);
  };
  double p_m = 0, p_n = 0;
  const double p1 = side(query_length, p_m);
  const double p2 = side(subject_length, p_n);
  const double c_y = std::max(2.0 * sigma_hat / lambda, sigma_hat * y + tau_hat);
  const double area = p1 * p2 + c_y * p_m * p_n;
  return area * gapped.K * std::exp(-lambda * y) * db_scale;
}

double karlin_evalue(int score, const stats::KarlinParams& params, std::int64_t search_space) {
  return static_cast<double>(search_space) * std::exp(-params.lambda * score + std::log(params.K));
}

double blast_bit_score(int score, const stats::KarlinParams& params) {
  return (score * params.lambda - std::log(params.K)) / kLn2;
}

std::optional<EvalueCalculator> EvalueCalculator::create(const ScoringMatrix& matrix, GapCosts gaps,
                                                         int query_length, std::int64_t db_length,
                                                         int db_num_seqs, bool old_fsc,
                                                         std::int64_t searchsp_override) {
  const auto gapped = stats::gapped_params(matrix, gaps);
  const auto gumbel = stats::gumbel_params(matrix, gaps);
  if (!gapped || !gumbel) return std::nullopt;
  EvalueCalculator c;
  c.gapped_ = *gapped;
  c.gumbel_ = *gumbel;
  c.query_length_ = query_length;
  c.db_length_ = db_length;
  c.db_num_seqs_ = db_num_seqs;
  c.old_fsc_ = old_fsc;
  c.searchsp_override_ = searchsp_override;
  return c;
}

EffectiveLengths EvalueCalculator::lengths() const {
  return effective_lengths(gapped_, query_length_, db_length_, db_num_seqs_, searchsp_override_);
}

double EvalueCalculator::evalue(int score, int subject_length) const {
  if (old_fsc_) return karlin_evalue(score, gapped_, lengths().search_space);
  return spouge_evalue(score, gapped_, gumbel_, query_length_, subject_length, db_length_);
}

std::string format_evalue(double evalue) {
  char buf[64];
  if (evalue < 1.0e-180) {
    std::snprintf(buf, sizeof buf, "0.0");
  } else if (evalue < 1.0e-99) {
    std::snprintf(buf, sizeof buf, "%2.0le", evalue);
  } else if (evalue < 0.0009) {
    std::snprintf(buf, sizeof buf, "%3.0le", evalue);
  } else if (evalue < 0.1) {
    std::snprintf(buf, sizeof buf, "%4.3lf", evalue);
  } else if (evalue < 1.0) {
    std::snprintf(buf, sizeof buf, "%3.2lf", evalue);
  } else if (evalue < 10.0) {
    std::snprintf(buf, sizeof buf, "%2.1lf", evalue);
  } else {
    std::snprintf(buf, sizeof buf, "%5.0lf", evalue);
  }
  return buf;
}

std::string tabular_evalue(double evalue) {
  if (evalue < 1.0e-180) return "0.0";
  if (evalue < 0.0009) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2e", evalue);
    return buf;
  }
  std::string s = format_evalue(evalue);
  s.erase(0, s.find_first_not_of(' '));
  return s;
}

std::string format_bit_score(double bits) {
  char buf[64];
  if (bits > 9999) {
    std::snprintf(buf, sizeof buf, "%4.3le", bits);
  } else if (bits > 99.9) {
    std::snprintf(buf, sizeof buf, "%4.0ld", static_cast<long>(bits));
  } else {
    std::snprintf(buf, sizeof buf, "%4.1lf", bits);
  }
  return buf;
}

int compare_hsps_by_score(const Hsp& a, const Hsp& b) {
  int r = cmp(b.score, a.score);
  if (r == 0) r = cmp(a.s_start, b.s_start);
  if (r == 0) r = cmp(b.s_end, a.s_end);
  if (r == 0) r = cmp(a.q_start, b.q_start);
  if (r == 0) r = cmp(b.q_end, a.q_end);
  return r;
}

int compare_hsps_by_evalue(const Hsp& a, const Hsp& b) {
  const int r = compare_evalues(a.evalue, b.evalue);
  return r != 0 ? r : compare_hsps_by_score(a, b);
}

void sort_hsps_by_score(std::vector<Hsp>& hsps) {
  std::stable_sort(hsps.begin(), hsps.end(),
                   [](const Hsp& a, const Hsp& b) { return compare_hsps_by_score(a, b) < 0; });
}

void sort_hsps_by_evalue(std::vector<Hsp>& hsps) {
  std::stable_sort(hsps.begin(), hsps.end(),
                   [](const Hsp& a, const Hsp& b) { return compare_hsps_by_evalue(a, b) < 0; });
}

void purge_common_endpoints(std::vector<Hsp>& hsps) {
  // Pass 1: s_QueryOffsetCompareHSPs order; the first of each equal-start run survives.
  std::stable_sort(hsps.begin(), hsps.end(), [](const Hsp& a, const Hsp& b) {
    if (a.q_start != b.q_start) return a.q_start < b.q_start;
    if (a.s_start != b.s_start) return a.s_start < b.s_start;
    if (a.score != b.score) return a.score > b.score;
    if (a.q_end != b.q_end) return a.q_end > b.q_end;
    return a.s_end > b.s_end;
  });
  hsps.erase(std::unique(
                 hsps.begin(), hsps.end(),
                 [](const Hsp& a, const Hsp& b) { return a.q_start == b.q_start && a.s_start == b.s_start; }),
             hsps.end());
  // Pass 2: s_QueryEndCompareHSPs order; the first of each equal-end run survives.
  std::stable_sort(hsps.begin(), hsps.end(), [](const Hsp& a, const Hsp& b) {
    if (a.q_end != b.q_end) return a.q_end < b.q_end;
    if (a.s_end != b.s_end) return a.s_end < b.s_end;
    if (a.score != b.score) return a.score > b.score;
    if (a.q_start != b.q_start) return a.q_start > b.q_start;
    return a.s_start > b.s_start;
  });
  hsps.erase(std::unique(hsps.begin(), hsps.end(),
                         [](const Hsp& a, const Hsp& b) { return a.q_end == b.q_end && a.s_end == b.s_end; }),
             hsps.end());
}

void remove_contained_hsps(std::vector<Hsp>& hsps) {
  std::vector<Hsp> kept;
  kept.reserve(hsps.size());
  auto inside = [](const Hsp& box, int q, int s) {
    return box.q_start <= q && box.q_end >= q && box.s_start <= s && box.s_end >= s;
  };
  for (Hsp& h : hsps) {
    const bool contained = std::any_of(kept.begin(), kept.end(), [&](const Hsp& k) {
      return h.score <= k.score && inside(k, h.q_start, h.s_start) && inside(k, h.q_end, h.s_end);
    });
    if (!contained) kept.push_back(std::move(h));
  }
  hsps = std::move(kept);
}

void reap_by_evalue(std::vector<Hsp>& hsps, double expect) {
  std::erase_if(hsps, [expect](const Hsp& h) { return h.evalue > expect; });
}

void trim_to_max_hsps(std::vector<Hsp>& hsps, int max_hsps) {
  if (max_hsps > 0 && hsps.size() > static_cast<std::size_t>(max_hsps))
    hsps.resize(static_cast<std::size_t>(max_hsps));
}

bool below_query_coverage(const Hsp& hsp, int query_length, double percent) {
  double pct = 0;
  if (query_length > 0) {
    pct = 100.0 * static_cast<double>(hsp.q_end - hsp.q_start) / static_cast<double>(query_length);
    if (pct < 99) pct += 0.5;
  }
  return pct < percent;
}

double SubjectHits::best_evalue() const {
  double best = std::numeric_limits<std::int32_t>::max();
  for (const Hsp& h : hsps) best = std::min(h.evalue, best);
  return best;
}

int compare_hit_lists(const SubjectHits& a, const SubjectHits& b) {
  if (a.hsps.empty() && b.hsps.empty()) return 0;
  if (a.hsps.empty()) return 1;
  if (b.hsps.empty()) return -1;
  int r = compare_evalues(a.best_evalue(), b.best_evalue());
  if (r != 0) return r;
  r = cmp(b.hsps.front().score, a.hsps.front().score);
  if (r != 0) return r;
  return cmp(b.oid, a.oid);
}

void select_hit_lists(std::vector<SubjectHits>& lists, std::size_t max_lists) {
  std::erase_if(lists, [](const SubjectHits& l) { return l.hsps.empty(); });
  std::stable_sort(lists.begin(), lists.end(),
                   [](const SubjectHits& a, const SubjectHits& b) { return compare_hit_lists(a, b) < 0; });
  if (lists.size() > max_lists) lists.resize(max_lists);
}

int prelim_hitlist_size(int hitlist_size, bool composition_based_stats, bool gapped) {
  if (composition_based_stats) return hitlist_size <= 500 ? 1050 : hitlist_size * 2 + 50;
  if (gapped) return std::min(std::max(2 * hitlist_size, 10), hitlist_size + 50);
  return hitlist_size;
}

}  // namespace warpsearch::blast
