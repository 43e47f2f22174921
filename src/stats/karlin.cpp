// karlin.cpp: Karlin-Altschul statistics as BLAST+ 2.12 computes them (karlin.hpp, blast_stats.hpp).
//
// Contents:
//   ScoreFreq / score_freq     the score distribution of a matrix under two residue distributions
//                              (BlastScoreFreqCalc), built in BLAST+'s residue order
//   solve_lambda               lambda: safeguarded Newton on the polynomial in exp(-lambda)
//                              (Blast_KarlinLambdaNR / NlmKarlinLambdaNR)
//   entropy_h                  H (BlastKarlinLtoH)
//   constant_k                 K (BlastKarlinLHtoK): closed forms when the score range is {-1..1} or
//                              touches -1 or 1, else the series over alignment lengths
//   ungapped / gapped / blastn / Gumbel lookups, evalue, bit_score
//
// Every computation follows BLAST+'s operation order (and its constants) so that the doubles agree with
// BLAST+'s when both use the same libm; this includes one BLAST+ quirk kept on purpose: when all scores
// share a divisor d > 1 and neither closed form applies, BLAST+'s K series indexes the (unreduced)
// score probabilities with the reduced score range (see constant_k).
#include "stats/karlin.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "stats/blast_stats.hpp"
#include "stats/blast_tables.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::stats {
namespace {

namespace tables = blast_tables;

// BLAST+'s constants (blast_stat.c).
constexpr double kLambdaStart = 0.5;                         // BLAST_KARLIN_LAMBDA0_DEFAULT
constexpr double kLambdaTolerance = 1.e-5;                   // BLAST_KARLIN_LAMBDA_ACCURACY_DEFAULT
constexpr int kLambdaMaxEvaluations = 20;                    // itmax passed by Blast_KarlinLambdaNR
constexpr int kLambdaMaxNewton = 20 + 17;                    // 20 + BLAST_KARLIN_LAMBDA_ITER_DEFAULT
constexpr double kKSumLimit = 0.0001;                        // BLAST_KARLIN_K_SUMLIMIT_DEFAULT
constexpr int kKMaxIterations = 100;                         // BLAST_KARLIN_K_ITER_MAX
constexpr double kLn2 = 0.69314718055994530941723212145818;  // NCBIMATH_LN2

// Robinson & Robinson amino-acid background frequencies (blast_stat.c Robinson_prob, BLAST+'s
// STD_AMINO_ACID_FREQS), for the 20 canonical residues in our code order ACDEFGHIKLMNPQRSTVWY, which is
// also the order of these residues in BLAST+'s ncbistdaa alphabet.
constexpr std::array<double, 20> kRobinsonFrequencies = {78.05, 19.25, 53.64, 62.95, 38.56, 73.77, 21.99,
                                                         51.42, 57.44, 90.19, 22.43, 44.87, 52.03, 42.64,
                                                         51.29, 71.20, 58.41, 64.41, 13.30, 32.16};

// Our protein codes in BLAST+'s ncbistdaa order (A B C D E F G H I K L M N P Q R S T V W X Y Z U * O J;
// the gap letter '-' has no code of ours and no probability). Score frequencies are accumulated in this
// order so that sums of the same score add up in BLAST+'s order.
constexpr std::array<std::uint8_t, 27> kProteinBlastOrder = {
    0, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 25, 19, 22, 24, 26, 23, 21};
// Our DNA codes in BLAST+'s blastna order (A C G T R Y M K W S B D H V N).
constexpr std::array<std::uint8_t, 15> kDnaBlastOrder = {0, 1, 2, 3, 4, 5, 6, 7, 9, 8, 11, 13, 10, 12, 14};
// Base sets of our DNA codes (bit 0 A, 1 C, 2 G, 3 T), as ncbi4na encodes them.
constexpr std::array<std::uint8_t, 15> kDnaBases = {1, 2, 4, 8, 5, 10, 3, 12, 6, 9, 11, 14, 7, 13, 15};

constexpr std::uint8_t kProteinC = 1;  // codes of alphabet.hpp
constexpr std::uint8_t kProteinO = 23;
constexpr std::uint8_t kProteinU = 24;

// One residue of a distribution: code and probability (BLAST+'s Blast_ResFreq, zeros omitted).
struct ResidueProb {
  std::uint8_t code;
  double p;
};
using Distribution = std::vector<ResidueProb>;

// BLAST_Gcd (b may be negative).
int gcd(int a, int b) {
  b = std::abs(b);
  if (b > a) std::swap(a, b);
  while (b != 0) {
    const int c = a % b;
    a = b;
    b = c;
  }
  return a;
}

// BLAST_Powi.
double powi(double x, int n) {
  if (n == 0) return 1.;
  if (x == 0.) return n < 0 ? HUGE_VAL : 0.;
  if (n < 0) {
    x = 1. / x;
    n = -n;
  }
  double y = 1.;
  while (n > 0) {
    if (n & 1) y *= x;
    n /= 2;
    x *= x;
  }
  return y;
}

// BLAST_Expm1: a Taylor polynomial below |x| = 0.33 (not std::expm1, whose last bits may differ).
double expm1_blast(double x) {
  const double absx = std::fabs(x);
  if (absx > .33) return std::exp(x) - 1.;
  if (absx < 1.e-16) return x;
  return x *
         (1. +
          x * (1. / 2. +
               x * (1. / 6. +
                    x * (1. / 24. +
                         x * (1. / 120. +
                              x * (1. / 720. +
                                   x * (1. / 5040. +
                                        x * (1. / 40320. +
                                             x * (1. / 362880. +
                                                  x * (1. / 3628800. +
                                                       x * (1. / 39916800. + x * (1. / 479001600. +
                                                                                  x / 6227020800.))))))))))));
}

// BLAST_Nint: rounds halves away from zero.
long nint(double x) { return static_cast<long>(x + (x >= 0. ? 0.5 : -0.5)); }

// The standard background: Robinson & Robinson (normalised to sum 1 as Blast_ResFreqNormalize does:
// p / sum * 1.0) or uniform A/C/G/T.
Distribution standard_distribution(bool nucleotide) {
  Distribution d;
  if (nucleotide) {
    for (std::uint8_t c = 0; c < 4; ++c) d.push_back({c, 25.00 / 100.0});
    return d;
  }
  double sum = 0.;
  for (const double f : kRobinsonFrequencies) sum += f;
  for (std::uint8_t c = 0; c < 20; ++c) d.push_back({c, kRobinsonFrequencies[c] / sum * 1.0});
  return d;
}

// A query's composition (Blast_ResFreqString): counts per code, the unknown code not counted, divided
// by their sum, listed in BLAST+'s alphabet order. Empty if nothing is counted. Protein O is not
// counted (blastp 2.12 reads it as X: a query's O gives the parameters of the query without it).
Distribution query_distribution(std::span<const std::uint8_t> query, bool nucleotide) {
  const int size = nucleotide ? kDnaCodes : kProteinCodes;
  const std::uint8_t unknown = nucleotide ? kDnaUnknown : kProteinUnknown;
  std::vector<long> counts(static_cast<std::size_t>(size), 0);
  for (std::uint8_t c : query) {
    if (!nucleotide && c == kProteinO) c = unknown;  // BLAST+ reads pyrrolysine as X
    if (c < size && c != unknown) ++counts[c];
  }
  const std::span<const std::uint8_t> order = nucleotide ? std::span<const std::uint8_t>(kDnaBlastOrder)
                                                         : std::span<const std::uint8_t>(kProteinBlastOrder);
  double sum = 0.;
  for (const std::uint8_t c : order) sum += static_cast<double>(counts[c]);
  Distribution d;
  if (sum == 0.) return d;
  for (const std::uint8_t c : order) {
    if (counts[c] != 0) d.push_back({c, static_cast<double>(counts[c]) / sum});
  }
  return d;
}

// Score distribution (Blast_ScoreFreq): probabilities of scores obs_min..obs_max (the lowest and
// highest scores of positive probability), normalised to sum 1, and the mean score.
struct ScoreFreq {
  int obs_min = 0;
  int obs_max = 0;
  std::vector<double> prob;  // prob[s - obs_min]
  double avg = 0.;

  double p(int score) const { return prob[static_cast<std::size_t>(score - obs_min)]; }
};

// BlastScoreFreqCalc: sum of p1(a) p2(b) per score(a, b), in the order of the two distributions.
template <typename ScoreFn>
std::optional<ScoreFreq> score_freq(const Distribution& d1, const Distribution& d2, ScoreFn score) {
  int lo = 0;
  int hi = 0;
  for (const ResidueProb& r1 : d1) {
    for (const ResidueProb& r2 : d2) {
      lo = std::min(lo, score(r1.code, r2.code));
      hi = std::max(hi, score(r1.code, r2.code));
    }
  }
  std::vector<double> sprob(static_cast<std::size_t>(hi - lo + 1), 0.0);
  for (const ResidueProb& r1 : d1) {
    for (const ResidueProb& r2 : d2)
      sprob[static_cast<std::size_t>(score(r1.code, r2.code) - lo)] += r1.p * r2.p;
  }
  ScoreFreq sf;
  double sum = 0.;
  bool any = false;
  for (int s = lo; s <= hi; ++s) {
    const double v = sprob[static_cast<std::size_t>(s - lo)];
    if (v > 0.) {
      sum += v;
      sf.obs_max = s;
      if (!any) sf.obs_min = s;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  sf.prob.assign(sprob.begin() + (sf.obs_min - lo), sprob.begin() + (sf.obs_max - lo + 1));
  if (sum > 0.0001 || sum < -0.0001) {
    for (int s = sf.obs_min; s <= sf.obs_max; ++s) {
      double& v = sf.prob[static_cast<std::size_t>(s - sf.obs_min)];
      v /= sum;
      sf.avg += s * v;
    }
  }
  return sf;
}

// The gcd of -obs_min and the offsets (from obs_min) of every score of positive probability, as
// Blast_KarlinLambdaNR and BlastKarlinLHtoK compute it (stopping once it reaches 1).
int score_divisor(const ScoreFreq& sf) {
  int d = -sf.obs_min;
  for (int i = 1; i <= sf.obs_max - sf.obs_min && d > 1; ++i) {
    if (sf.prob[static_cast<std::size_t>(i)] != 0.0) d = gcd(d, i);
  }
  return d;
}

// Blast_KarlinLambdaNR / NlmKarlinLambdaNR: solves sum_s p(s) exp(lambda s) = 1 for lambda > 0 as the
// root x = exp(-lambda d) in (0, 1) of the polynomial f(x) = sum_s p(s) x^((high - s) / d) - x^(high/d),
// by Newton steps kept inside a bracketing interval [a, b], bisecting when a step leaves it, fails to
// shrink |f| by 10% or points away from the root (f'(x) >= 0). -1 on failure, as BLAST+.
double solve_lambda(const ScoreFreq& sf) {
  const int low = sf.obs_min;
  const int high = sf.obs_max;
  if (sf.avg >= 0.) return -1.0;
  if (low >= 0 || high <= 0) return -1.0;  // BlastScoreChk
  const int d = score_divisor(sf);

  const double x0 = std::exp(-kLambdaStart);
  double x = (0 < x0 && x0 < 1) ? x0 : .5;
  double a = 0;
  double b = 1;
  double f = 4;  // larger than the polynomial can be on [0, 1]
  bool is_newton = false;
  for (int k = 0; k < kLambdaMaxEvaluations; ++k) {
    const double fold = f;
    const bool was_newton = is_newton;
    is_newton = false;
    // Horner's rule for f and its derivative g.
    double g = 0;
    f = sf.p(low);
    for (int i = low + d; i < 0; i += d) {
      g = x * g + f;
      f = f * x + sf.p(i);
    }
    g = x * g + f;
    f = f * x + sf.p(0) - 1;
    for (int i = d; i <= high; i += d) {
      g = x * g + f;
      f = f * x + sf.p(i);
    }
    if (f > 0) {
      a = x;
    } else if (f < 0) {
      b = x;
    } else {
      break;  // exact root
    }
    if (b - a < 2 * a * (1 - b) * kLambdaTolerance) {
      x = (a + b) / 2;
      break;
    }
    if (k >= kLambdaMaxNewton || (was_newton && std::fabs(f) > .9 * std::fabs(fold)) || g >= 0) {
      x = (a + b) / 2;
    } else {
      const double step = -f / g;
      const double y = x + step;
      if (y <= a || y >= b) {
        x = (a + b) / 2;
      } else {
        is_newton = true;
        x = y;
        if (std::fabs(step) < kLambdaTolerance * x * (1 - x)) break;
      }
    }
  }
  return -std::log(x) / d;
}

// BlastKarlinLtoH: H = lambda * sum_s s p(s) exp(lambda s), by Horner's rule in exp(-lambda).
double entropy_h(const ScoreFreq& sf, double lambda) {
  const int low = sf.obs_min;
  const int high = sf.obs_max;
  if (lambda < 0.) return -1.;
  if (low >= 0 || high <= 0) return -1.;
  const double etonlam = std::exp(-lambda);
  double sum = low * sf.p(low);
  for (int s = low + 1; s <= high; ++s) sum = s * sf.p(s) + etonlam * sum;
  const double scale = powi(etonlam, high);
  if (scale > 0.0) return lambda * sum / scale;
  return lambda * std::exp(lambda * high + std::log(sum));  // exp(-lambda * high) underflowed
}

// BlastKarlinLHtoK. With scores reduced by their common divisor d (low, high; lambda * d):
//  - low = -1 and high = 1: K = (p(-1) - p(1))^2 / p(-1);
//  - low = -1 or high = 1 (not both): K = (H / lambda) (1 - exp(-lambda)), where H / lambda is replaced
//    by (mean / d)^2 / (H / lambda) when high != 1;
//  - otherwise K = -exp(-2 sum_j S_j / j) / ((H / lambda) expm1(-lambda)), with S_j the sum over the
//    scores i of a length-j ungapped alignment of P(i, j) exp(lambda min(i, 0)), P computed by dynamic
//    programming, the sum stopping after 100 terms or once S_j / j <= 1e-4.
// BLAST+ quirk kept for exactness: the dynamic program convolves with the probabilities of the first
// (high - low) / d + 1 consecutive unreduced scores from obs_min, which are the reduced scores' only
// when d == 1.
double constant_k(const ScoreFreq& sf, double lambda, double H) {
  if (lambda <= 0. || H <= 0.) return -1.;
  if (sf.avg >= 0.0) return -1.;

  int low = sf.obs_min;
  int high = sf.obs_max;
  const int divisor = score_divisor(sf);
  high /= divisor;
  low /= divisor;
  lambda *= divisor;
  const int range = high - low;

  double first_term = H / lambda;
  const double exp_minus_lambda = std::exp(-lambda);

  if (low == -1 && high == 1) {
    const double pl = sf.p(low * divisor);
    const double ph = sf.p(high * divisor);
    return (pl - ph) * (pl - ph) / pl;
  }
  if (low == -1 || high == 1) {
    if (high != 1) {
      const double score_avg = sf.avg / divisor;
      first_term = (score_avg * score_avg) / first_term;
    }
    return first_term * (1.0 - exp_minus_lambda);
  }

  // P[k] = probability that a length-j alignment scores low_score + k, updated in place from the top.
  std::vector<double> P(static_cast<std::size_t>(kKMaxIterations * range + 1), 0.0);
  const double* probs = sf.prob.data();  // probs[i]: unreduced score obs_min + i (see the quirk above)
  double outer_sum = 0.;
  int low_score = 0;
  int high_score = 0;
  double inner_sum = 1.;
  P[0] = 1.;
  for (int iter = 0; iter < kKMaxIterations && inner_sum > kKSumLimit;) {
    int first = range;
    int last = range;
    low_score += low;
    high_score += high;
    for (long top = high_score - low_score; top >= 0; --top) {
      long i1 = top - first;
      const long i1_end = top - last;
      long i2 = first;
      inner_sum = 0.;
      for (; i1 >= i1_end; --i1, ++i2) inner_sum += P[static_cast<std::size_t>(i1)] * probs[i2];
      if (first) --first;
      if (top <= range) --last;
      P[static_cast<std::size_t>(top)] = inner_sum;
    }
    // Horner's rule: negative scores weighted by exp(lambda * score), the others by 1.
    std::size_t k = 0;
    inner_sum = P[k];
    int s = low_score + 1;
    for (; s < 0; ++s) inner_sum = P[++k] + inner_sum * exp_minus_lambda;
    inner_sum *= exp_minus_lambda;
    for (; s <= high_score; ++s) inner_sum += P[++k];
    inner_sum /= ++iter;
    outer_sum += inner_sum;
  }
  return -std::exp(-2.0 * outer_sum) / (first_term * expm1_blast(-lambda));
}

// Blast_KarlinBlkUngappedCalc: lambda, then H, then K; nullopt if any fails.
std::optional<KarlinParams> karlin_block(const ScoreFreq& sf) {
  KarlinParams kp;
  kp.lambda = solve_lambda(sf);
  if (kp.lambda < 0.) return std::nullopt;
  kp.H = entropy_h(sf, kp.lambda);
  if (kp.H < 0.) return std::nullopt;
  kp.K = constant_k(sf, kp.lambda, kp.H);
  if (kp.K < 0.) return std::nullopt;
  return kp;
}

// The built-in matrices, parsed once.
const std::vector<ScoringMatrix>& builtin_matrices() {
  static const std::vector<ScoringMatrix> matrices = [] {
    std::vector<ScoringMatrix> m;
    for (const std::string_view name : ScoringMatrix::builtin_names())
      m.push_back(ScoringMatrix::builtin(name));
    return m;
  }();
  return matrices;
}

// BLAST+'s table for a protein matrix with the scores of a built-in one, else nullptr.
const tables::ProteinMatrixTable* protein_table(const ScoringMatrix& matrix) {
  if (matrix.alphabet() != AlphabetKind::kProtein) return nullptr;
  const auto names = ScoringMatrix::builtin_names();
  const auto& matrices = builtin_matrices();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!matrix.same_scores(matrices[i])) continue;
    for (const tables::ProteinMatrixTable& t : tables::protein_tables()) {
      if (t.name == names[i]) return &t;
    }
  }
  return nullptr;
}

// (reward, penalty) of a nucleotide matrix whose A/C/G/T block is match/mismatch scoring (reward on the
// diagonal, penalty elsewhere, reward > 0 > penalty); ambiguity codes are not looked at.
std::optional<std::pair<int, int>> reward_penalty(const ScoringMatrix& matrix) {
  if (matrix.alphabet() == AlphabetKind::kProtein) return std::nullopt;
  const int reward = matrix.score(0, 0);
  const int penalty = matrix.score(0, 1);
  for (std::uint8_t a = 0; a < 4; ++a) {
    for (std::uint8_t b = 0; b < 4; ++b) {
      if (matrix.score(a, b) != (a == b ? reward : penalty)) return std::nullopt;
    }
  }
  if (reward <= 0 || penalty >= 0) return std::nullopt;
  return std::pair{reward, penalty};
}

// alpha and beta of an ungapped search (BLAST_GetAlphaBeta / Blast_GetNuclAlphaBeta, ungapped case):
// the table's ungapped row for built-in protein matrices, else lambda / H and beta 0 (blastn: -2 for
// reward/penalty 1/-1 and 2/-3 exactly as given).
void set_ungapped_alpha_beta(KarlinParams& kp, const ScoringMatrix& matrix) {
  if (const tables::ProteinMatrixTable* t = protein_table(matrix)) {
    kp.alpha = t->ungapped.alpha;
    kp.beta = t->ungapped.beta;
    return;
  }
  kp.alpha = kp.lambda / kp.H;
  kp.beta = 0;
  if (const auto rp = reward_penalty(matrix)) {
    if ((rp->first == 1 && rp->second == -1) || (rp->first == 2 && rp->second == -3)) kp.beta = -2;
  }
}

// s_GetNuclValuesArray: the table of reward/penalty reduced by their gcd, and the gcd.
std::optional<std::pair<const tables::NucleotideTable*, int>> nucleotide_table(int reward, int penalty) {
  if (reward <= 0 || penalty >= 0) return std::nullopt;
  const int divisor = gcd(reward, penalty);
  for (const tables::NucleotideTable& t : tables::nucleotide_tables()) {
    if (t.reward == reward / divisor && t.penalty == penalty / divisor) return std::pair{&t, divisor};
  }
  return std::nullopt;
}

// A table row as BLAST+ uses it for a pair with gcd `divisor` (s_AdjustGapParametersByGcd): gap costs
// times the divisor, lambda and alpha divided by it.
struct ScaledRow {
  double open, extend;
  KarlinParams params;
};
ScaledRow scaled_row(const tables::NucleotideRow& row, int divisor) {
  ScaledRow r{static_cast<double>(row.open), static_cast<double>(row.extend),
              KarlinParams{row.lambda, row.K, row.H, row.alpha, row.beta}};
  if (divisor != 1) {
    r.open *= divisor;
    r.extend *= divisor;
    r.params.lambda /= divisor;
    r.params.alpha /= divisor;
  }
  return r;
}

bool has_linear_row(const tables::NucleotideTable& t) { return t.rows[0].open == 0 && t.rows[0].extend == 0; }

// The affine ("normal") rows: all but a leading (0, 0) row.
std::span<const tables::NucleotideRow> normal_rows(const tables::NucleotideTable& t) {
  return has_linear_row(t) ? t.rows.subspan(1) : t.rows;
}

}  // namespace

std::optional<KarlinParams> ungapped_params(const ScoringMatrix& matrix) {
  const bool nucleotide = matrix.alphabet() != AlphabetKind::kProtein;
  const Distribution background = standard_distribution(nucleotide);
  const auto sf =
      score_freq(background, background, [&](std::uint8_t a, std::uint8_t b) { return matrix.score(a, b); });
  if (!sf) return std::nullopt;
  auto kp = karlin_block(*sf);
  if (!kp) return std::nullopt;
  set_ungapped_alpha_beta(*kp, matrix);
  return kp;
}

std::optional<KarlinParams> query_ungapped_params(const ScoringMatrix& matrix,
                                                  std::span<const std::uint8_t> query) {
  const bool nucleotide = matrix.alphabet() != AlphabetKind::kProtein;
  const Distribution composition = query_distribution(query, nucleotide);
  if (composition.empty()) return std::nullopt;
  // BLAST+ scores U (selenocysteine) as C (its matrices copy C's row and column into U's).
  const auto sf =
      score_freq(composition, standard_distribution(nucleotide), [&](std::uint8_t a, std::uint8_t b) {
        return matrix.score(!nucleotide && a == kProteinU ? kProteinC : a, b);
      });
  if (!sf) return std::nullopt;
  auto kp = karlin_block(*sf);
  if (!kp) return std::nullopt;
  set_ungapped_alpha_beta(*kp, matrix);
  return kp;
}

std::optional<KarlinParams> blastn_query_ungapped_params(int reward, int penalty,
                                                         std::span<const std::uint8_t> query) {
  if (reward <= 0 || penalty >= 0) return std::nullopt;
  const Distribution composition = query_distribution(query, true);
  if (composition.empty()) return std::nullopt;
  // BlastScoreBlkNuclMatrixCreate, for a query code against a base (the only pairs with probability).
  const auto score = [&](std::uint8_t code, std::uint8_t base) {
    const int bases = kDnaBases[code];
    if (code < 4) return code == base ? reward : penalty;
    if ((bases & kDnaBases[base]) == 0) return penalty;
    const int degeneracy = std::popcount(static_cast<unsigned>(bases));
    return static_cast<int>(
        nint(static_cast<double>((degeneracy - 1) * penalty + reward) / static_cast<double>(degeneracy)));
  };
  const auto sf = score_freq(composition, standard_distribution(true), score);
  if (!sf) return std::nullopt;
  auto kp = karlin_block(*sf);
  if (!kp) return std::nullopt;
  kp->alpha = kp->lambda / kp->H;
  kp->beta = ((reward == 1 && penalty == -1) || (reward == 2 && penalty == -3)) ? -2 : 0;
  return kp;
}

bool blastn_supported(int reward, int penalty) { return nucleotide_table(reward, penalty).has_value(); }

bool blastn_round_down(int reward, int penalty) {
  const auto t = nucleotide_table(reward, penalty);
  return t && t->first->round_down;
}

std::optional<KarlinParams> blastn_gapped_params(int reward, int penalty, int gap_open, int gap_extend,
                                                 const KarlinParams& ungapped) {
  const auto found = nucleotide_table(reward, penalty);
  if (!found) return std::nullopt;
  const auto [table, divisor] = *found;
  if (gap_open == 0 && gap_extend == 0 && has_linear_row(*table))
    return scaled_row(table->rows[0], divisor).params;
  for (const tables::NucleotideRow& row : normal_rows(*table)) {
    const ScaledRow r = scaled_row(row, divisor);
    if (r.open == gap_open && r.extend == gap_extend) return r.params;
  }
  if (gap_open >= table->gap_open_max * divisor && gap_extend >= table->gap_extend_max * divisor) {
    KarlinParams kp = ungapped;
    kp.alpha = kp.lambda / kp.H;
    kp.beta = ((reward == 1 && penalty == -1) || (reward == 2 && penalty == -3)) ? -2 : 0;
    return kp;
  }
  return std::nullopt;
}

std::optional<KarlinParams> gapped_params(const ScoringMatrix& matrix, GapCosts gaps) {
  if (const tables::ProteinMatrixTable* t = protein_table(matrix)) {
    for (const tables::ProteinGappedRow& row : t->gapped) {
      if (row.open == gaps.open && row.extend == gaps.extend) {
        return KarlinParams{row.lambda, row.K, row.H, row.alpha, row.beta};
      }
    }
    return std::nullopt;
  }
  const auto rp = reward_penalty(matrix);
  // (0, 0) is BLAST+'s request for megablast's non-affine costs, not free gaps: not offered here.
  if (!rp || (gaps.open == 0 && gaps.extend == 0)) return std::nullopt;
  const auto ungapped = ungapped_params(matrix);
  if (!ungapped) return std::nullopt;
  return blastn_gapped_params(rp->first, rp->second, gaps.open, gaps.extend, *ungapped);
}

std::vector<GapCosts> tabulated_gaps(const ScoringMatrix& matrix) {
  std::vector<GapCosts> out;
  if (const tables::ProteinMatrixTable* t = protein_table(matrix)) {
    for (const tables::ProteinGappedRow& row : t->gapped) out.push_back({row.open, row.extend});
    return out;
  }
  const auto rp = reward_penalty(matrix);
  if (!rp) return out;
  const auto found = nucleotide_table(rp->first, rp->second);
  if (!found) return out;
  for (const tables::NucleotideRow& row : normal_rows(*found->first)) {
    out.push_back({row.open * found->second, row.extend * found->second});
  }
  return out;
}

std::optional<GumbelParams> gumbel_params(const ScoringMatrix& matrix, GapCosts gaps) {
  const tables::ProteinMatrixTable* t = protein_table(matrix);
  if (t == nullptr) return std::nullopt;
  for (const tables::ProteinGappedRow& row : t->gapped) {
    if (row.open != gaps.open || row.extend != gaps.extend) continue;
    GumbelParams g;
    g.lambda = row.lambda;
    g.C = row.C;
    g.G = gaps.open + gaps.extend;
    g.a = row.alpha;
    g.alpha = row.alpha_v;
    g.sigma = row.sigma;
    g.a_un = t->ungapped.alpha;
    g.alpha_un = t->ungapped.alpha_v;
    g.b = 2.0 * g.G * (g.a_un - g.a);
    g.beta = 2.0 * g.G * (g.alpha_un - g.alpha);
    g.tau = 2.0 * g.G * (g.alpha_un - g.sigma);
    return g;
  }
  return std::nullopt;
}

double evalue(const KarlinParams& params, double score, double search_space) {
  // BLAST_KarlinStoE_simple's form: search_space * exp(-lambda * score + ln K).
  return search_space * std::exp(-params.lambda * score + std::log(params.K));
}

double bit_score(const KarlinParams& params, double score) {
  return (score * params.lambda - std::log(params.K)) / kLn2;
}

}  // namespace warpsearch::stats
