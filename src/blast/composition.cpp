// composition.cpp: composition-based statistics mathematics as BLAST+ 2.12 computes it (see
// composition.hpp). Each function follows its BLAST+ counterpart's operation order, so results are equal
// bit for bit; the comments name the counterpart and state what is easy to get wrong.
#include "blast/composition.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <vector>

namespace warpsearch::blast::compo {
namespace {

constexpr int kN = kStdAlphabetSize;
constexpr int kT = kTrueAaCount;

// NCBIstdaa -> ARND index (alphaConvert); -1 for letters that are not true amino acids.
constexpr std::array<int, kN> kAlphaConvert = {-1, 0, -1, 4,  3,  6,  13, 7,  8,  9,  11, 10, 12, 2,
                                               14, 5, 1,  15, 16, 19, 17, -1, 18, -1, -1, -1, -1, -1};
// NCBIstdaa codes of the true amino acids in NCBIstdaa order (trueCharPositions).
constexpr std::array<int, kT> kTrueCharPositions = {1,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                                    12, 13, 14, 15, 16, 17, 18, 19, 20, 22};
// Our codes (ACDEFGHIKLMNPQRSTVWY B J Z O U X *) -> NCBIstdaa.
constexpr std::array<std::uint8_t, 27> kToStd = {1,  3,  4,  5,  6,  7,  8, 9,  10, 11, 12, 13, 14, 15,
                                                 16, 17, 18, 19, 20, 22, 2, 27, 23, 26, 24, 21, 25};

constexpr double kCompositionPseudoMaxXScore = -1.0;  // kMaximumXscore
constexpr double kLambdaErrorTolerance = 0.0000001;   // kLambdaErrorTolerance
constexpr double kLambdaFunctionTolerance = 0.00001;  // kLambdaFunctionTolerance
constexpr int kLambdaIterationLimit = 100;            // kLambdaIterationLimit
constexpr double kCompoAdjustErrTolerance = 0.00000001;
constexpr int kCompoAdjustIterationLimit = 2000;
constexpr double kFixedReBlosum62 = 0.44;
constexpr double kLambdaRatioLowerBound = 0.5;
// Blast_KarlinLambdaNR's constants (blast_stat.c).
constexpr double kKarlinLambdaAccuracy = 1.e-5;
constexpr int kKarlinLambdaIterations = 20;
constexpr int kKarlinMaxNewton = 20 + 17;
constexpr int kBlastScoreMin = -32768;  // BLAST_SCORE_MIN (INT2_MIN)
constexpr int kBlastScoreMax = 32767;   // BLAST_SCORE_MAX

// compo_mode_condition.c's constants (PI with its 10 digits as BLAST+ spells it).
constexpr double kHalfCircleDegrees = 180;
constexpr double kPi = 3.1415926543;
constexpr double kQueryMatchDistanceThreshold = 0.16;
constexpr double kLengthRatioThreshold = 3.0;
constexpr double kAngleDegreeThreshold = 70.0;
constexpr double kHighPairThreshold = 0.4;
constexpr int kLengthLowerThreshold = 50;

// Nint of composition_adjustment.c: halves away from zero, then truncation to long.
int nint(double x) {
  x += (x >= 0. ? 0.5 : -0.5);
  return static_cast<int>(static_cast<long>(x));
}

// s_RoundScoreMatrix for one value.
int round_score(double x) {
  if (x < INT_MIN) return INT_MIN;
  return nint(x);
}

// Blast_FreqRatioToScore for one value.
double freq_ratio_to_score(double ratio, double lambda) {
  if (0.0 == ratio) return kScoreMin;
  return std::log(ratio) / lambda;
}

void gather_letter_probs(TrueAaProbs& out, const StdProbs& in) {
  for (int c = 0; c < kN; ++c)
    if (kAlphaConvert[static_cast<std::size_t>(c)] != -1)
      out[static_cast<std::size_t>(kAlphaConvert[static_cast<std::size_t>(c)])] =
          in[static_cast<std::size_t>(c)];
}

// s_UnpackLetterProbs + s_SetPairAmbigProbsToSum.
StdProbs unpack_letter_probs(const TrueAaProbs& probs) {
  StdProbs out{};
  for (int c = 0; c < kN; ++c) {
    const int a = kAlphaConvert[static_cast<std::size_t>(c)];
    out[static_cast<std::size_t>(c)] = a != -1 ? probs[static_cast<std::size_t>(a)] : 0.0;
  }
  out[stdaa::kB] = out[stdaa::kD] + out[stdaa::kN];
  out[stdaa::kZ] = out[stdaa::kE] + out[stdaa::kQ];
  out[stdaa::kJ] = out[stdaa::kI] + out[stdaa::kL];
  return out;
}

double& at(StdScores& m, int r, int c) { return m[static_cast<std::size_t>(r * kN + c)]; }

// s_CalcAvgScore over a row (stride 1) or a column (stride kN) starting at `first`.
double calc_avg_score(const StdScores& m, int first, int stride, const StdProbs& probs) {
  double score = 0.0;
  for (int j = 0; j < kN; ++j)
    if (kAlphaConvert[static_cast<std::size_t>(j)] >= 0)
      score += m[static_cast<std::size_t>(first + j * stride)] * probs[static_cast<std::size_t>(j)];
  return score;
}
double calc_x_score(const StdScores& m, int first, int stride, const StdProbs& probs) {
  return std::min(calc_avg_score(m, first, stride, probs), kCompositionPseudoMaxXScore);
}

// s_SetXUOScores: X rows / columns from averages (capped at -1), U as C, O as X.
void set_xuo_scores(StdScores& m, const StdProbs& row_probs, const StdProbs& col_probs) {
  using namespace stdaa;
  double score_xx = 0.0;
  for (int i = 0; i < kN; ++i) {
    if (kAlphaConvert[static_cast<std::size_t>(i)] >= 0) {
      const double avg_ix = calc_avg_score(m, i * kN, 1, col_probs);
      at(m, i, kX) = std::min(avg_ix, kCompositionPseudoMaxXScore);
      score_xx += avg_ix * row_probs[static_cast<std::size_t>(i)];
      at(m, kX, i) = calc_x_score(m, i, kN, row_probs);
    }
  }
  at(m, kX, kX) = std::min(score_xx, kCompositionPseudoMaxXScore);
  for (const int ambig : {kB, kZ, kJ}) {
    at(m, ambig, kX) = calc_x_score(m, ambig * kN, 1, col_probs);
    at(m, kX, ambig) = calc_x_score(m, ambig, kN, row_probs);
  }
  for (int j = 0; j < kN; ++j) at(m, kU, j) = at(m, kC, j);
  for (int i = 0; i < kN; ++i) at(m, i, kU) = at(m, i, kC);
  for (int j = 0; j < kN; ++j) at(m, kO, j) = at(m, kX, j);
  for (int i = 0; i < kN; ++i) at(m, i, kO) = at(m, i, kX);
}

// Round a double matrix and take the stop letter's row and column from `start`.
void round_with_stop(IntScores& out, const StdScores& scores, const IntScores& start) {
  for (std::size_t k = 0; k < scores.size(); ++k) out[k] = round_score(scores[k]);
  for (int i = 0; i < kN; ++i) {
    out[static_cast<std::size_t>(i * kN + stdaa::kStop)] =
        start[static_cast<std::size_t>(i * kN + stdaa::kStop)];
    out[static_cast<std::size_t>(stdaa::kStop * kN + i)] =
        start[static_cast<std::size_t>(stdaa::kStop * kN + i)];
  }
}

// Blast_CalcFreqRatios on an n x n matrix.
void calc_freq_ratios(std::span<double> ratios, int n, std::span<const double> row_prob,
                      std::span<const double> col_prob) {
  for (int i = 0; i < n; ++i) {
    if (row_prob[static_cast<std::size_t>(i)] > 0) {
      for (int j = 0; j < n; ++j) {
        if (col_prob[static_cast<std::size_t>(j)] > 0)
          ratios[static_cast<std::size_t>(i * n + j)] /=
              (row_prob[static_cast<std::size_t>(i)] * col_prob[static_cast<std::size_t>(j)]);
      }
    }
  }
}

// Blast_TargetFreqEntropy.
double target_freq_entropy(const TrueAaMatrix& target) {
  TrueAaProbs row{}, col{};
  for (int i = 0; i < kT; ++i)
    for (int j = 0; j < kT; ++j) {
      row[static_cast<std::size_t>(i)] += target[static_cast<std::size_t>(i * kT + j)];
      col[static_cast<std::size_t>(j)] += target[static_cast<std::size_t>(i * kT + j)];
    }
  double entropy = 0.0;
  for (int i = 0; i < kT; ++i)
    for (int j = 0; j < kT; ++j) {
      const double f = target[static_cast<std::size_t>(i * kT + j)];
      entropy += f * std::log(f / row[static_cast<std::size_t>(i)] / col[static_cast<std::size_t>(j)]);
    }
  return entropy;
}

// Blast_EntropyOldFreqNewContext: status 0 with the entropy, 1 when lambda does not converge.
int entropy_old_freq_new_context(double& entropy, const TrueAaMatrix& target, const TrueAaProbs& row_prob,
                                 const TrueAaProbs& col_prob) {
  entropy = 0;
  TrueAaProbs old_row{}, old_col{};
  for (int i = 0; i < kT; ++i)
    for (int j = 0; j < kT; ++j) {
      old_row[static_cast<std::size_t>(i)] += target[static_cast<std::size_t>(i * kT + j)];
      old_col[static_cast<std::size_t>(j)] += target[static_cast<std::size_t>(i * kT + j)];
    }
  TrueAaMatrix scores = target;
  calc_freq_ratios(scores, kT, old_row, old_col);
  for (double& s : scores) s = freq_ratio_to_score(s, 1.0);
  const LambdaResult l = calc_lambda_full_precision(scores, kT, row_prob, col_prob, kLambdaErrorTolerance,
                                                    kLambdaFunctionTolerance, kLambdaIterationLimit);
  if (l.iterations >= kLambdaIterationLimit) return 1;
  // Blast_MatrixEntropy.
  for (int i = 0; i < kT; ++i)
    for (int j = 0; j < kT; ++j) {
      const double nat = l.lambda * scores[static_cast<std::size_t>(i * kT + j)];
      entropy +=
          nat * std::exp(nat) * row_prob[static_cast<std::size_t>(i)] * col_prob[static_cast<std::size_t>(j)];
    }
  return 0;
}

// Blast_ApplyPseudocounts.
void apply_pseudocounts(TrueAaProbs& probs, int observations, const TrueAaProbs& background,
                        int pseudocounts) {
  const double dpseudocounts = pseudocounts;
  double sum = 0.0;
  for (const double p : probs) sum += p;
  if (sum == 0.0) sum = 1.0;
  const double weight = dpseudocounts / (observations + dpseudocounts);
  for (std::size_t i = 0; i < probs.size(); ++i)
    probs[i] = (1.0 - weight) * probs[i] / sum + weight * background[i];
}

// s_ScoresStdAlphabet: the NCBIstdaa integer matrix at scale 1 / lambda from 20 x 20 target frequencies.
void scores_std_alphabet(IntScores& out, const TrueAaMatrix& target, const IntScores& start,
                         const TrueAaProbs& row_prob, const TrueAaProbs& col_prob, double lambda) {
  const StdProbs row = unpack_letter_probs(row_prob);
  const StdProbs col = unpack_letter_probs(col_prob);
  // Blast_TrueAaToStdTargetFreqs.
  double sum = 0.0;
  for (const double f : target) sum += f;
  StdScores scores{};
  for (int a_std = 0; a_std < kN; ++a_std) {
    const int a = kAlphaConvert[static_cast<std::size_t>(a_std)];
    if (a < 0) {
      for (int b_std = 0; b_std < kN; ++b_std) at(scores, a_std, b_std) = 0.0;
      continue;
    }
    for (int b_std = 0; b_std < kN; ++b_std) {
      const int b = kAlphaConvert[static_cast<std::size_t>(b_std)];
      at(scores, a_std, b_std) = b < 0 ? 0.0 : target[static_cast<std::size_t>(a * kT + b)] / sum;
    }
    at(scores, a_std, stdaa::kB) = at(scores, a_std, stdaa::kD) + at(scores, a_std, stdaa::kN);
    at(scores, a_std, stdaa::kZ) = at(scores, a_std, stdaa::kE) + at(scores, a_std, stdaa::kQ);
    at(scores, a_std, stdaa::kJ) = at(scores, a_std, stdaa::kI) + at(scores, a_std, stdaa::kL);
  }
  for (int j = 0; j < kN; ++j) {
    at(scores, stdaa::kB, j) = at(scores, stdaa::kD, j) + 1.0 * at(scores, stdaa::kN, j);
    at(scores, stdaa::kZ, j) = at(scores, stdaa::kE, j) + 1.0 * at(scores, stdaa::kQ, j);
    at(scores, stdaa::kJ, j) = at(scores, stdaa::kI, j) + 1.0 * at(scores, stdaa::kL, j);
  }
  calc_freq_ratios(scores, kN, row, col);
  for (double& s : scores) s = freq_ratio_to_score(s, lambda);
  set_xuo_scores(scores, row, col);
  round_with_stop(out, scores, start);
}

// --- Blast_OptimizeTargetFrequencies and its helpers (optimize_target_freq.c, nlm_linear_algebra.c). ---

// Nlm_EuclideanNorm (scaled to avoid overflow).
double euclidean_norm(const double* v, int n) {
  double sum = 1.0;
  double scale = 0.0;
  for (int i = 0; i < n; ++i) {
    if (v[i] != 0.0) {
      const double absvi = std::fabs(v[i]);
      if (scale < absvi) {
        sum = 1.0 + sum * (scale / absvi) * (scale / absvi);
        scale = absvi;
      } else {
        sum += (absvi / scale) * (absvi / scale);
      }
    }
  }
  return scale * std::sqrt(sum);
}

// y = beta * y + alpha * A x (MultiplyByA); A is the constraint matrix: row j < a sums column j of x (as
// an a x a matrix), row a - 1 + i (i >= 1) sums row i.
void multiply_by_a(double beta, double* y, int a, double alpha, const double* x) {
  if (beta == 0.0) {
    for (int i = 0; i < 2 * a - 1; ++i) y[i] = 0.0;
  } else if (beta != 1.0) {
    for (int i = 0; i < 2 * a - 1; ++i) y[i] *= beta;
  }
  for (int i = 0; i < a; ++i)
    for (int j = 0; j < a; ++j) y[j] += alpha * x[i * a + j];
  for (int i = 1; i < a; ++i)
    for (int j = 0; j < a; ++j) y[i + a - 1] += alpha * x[i * a + j];
}

// y = beta * y + alpha * A^T x (MultiplyByAtranspose).
void multiply_by_a_transpose(double beta, double* y, int a, double alpha, const double* x) {
  if (beta == 0.0) {
    for (int k = 0; k < a * a; ++k) y[k] = 0.0;
  } else if (beta != 1.0) {
    for (int k = 0; k < a * a; ++k) y[k] *= beta;
  }
  for (int i = 0; i < a; ++i) {
    for (int j = 0; j < a; ++j) {
      const int k = i * a + j;
      y[k] += alpha * x[j];
      if (i > 0) y[k] += alpha * x[i + a - 1];
    }
  }
}

// A lower-triangular matrix of order n stored row after row (row r holds r + 1 entries).
struct Ltriang {
  std::vector<double> v;
  std::vector<std::size_t> row_start;
  explicit Ltriang(int n) : v(static_cast<std::size_t>(n) * static_cast<std::size_t>(n + 1) / 2) {
    for (int r = 0; r < n; ++r)
      row_start.push_back(static_cast<std::size_t>(r) * static_cast<std::size_t>(r + 1) / 2);
  }
  double* row(int r) { return v.data() + row_start[static_cast<std::size_t>(r)]; }
  double& operator()(int r, int c) {
    return v[row_start[static_cast<std::size_t>(r)] + static_cast<std::size_t>(c)];
  }
};

// Nlm_FactorLtriangPosDef: Cholesky factorization in place.
void factor_ltriang_pos_def(Ltriang& A, int n) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      double temp = A(i, j);
      for (int k = 0; k < j; ++k) temp -= A(i, k) * A(j, k);
      A(i, j) = temp / A(j, j);
    }
    double temp = A(i, i);
    for (int k = 0; k < i; ++k) temp -= A(i, k) * A(i, k);
    A(i, i) = std::sqrt(temp);
  }
}

// Nlm_SolveLtriangPosDef: solves L L^T y = x in place.
void solve_ltriang_pos_def(double* x, int n, Ltriang& L) {
  for (int i = 0; i < n; ++i) {
    double temp = x[i];
    for (int j = 0; j < i; ++j) temp -= L(i, j) * x[j];
    x[i] = temp / L(i, i);
  }
  for (int j = n - 1; j >= 0; --j) {
    x[j] /= L(j, j);
    for (int i = 0; i < j; ++i) x[i] -= L(j, i) * x[j];
  }
}

// Nlm_StepBound.
double step_bound(const double* x, int n, const double* step_x, double max) {
  double alpha = max;
  for (int i = 0; i < n; ++i) {
    const double alpha_i = -x[i] / step_x[i];
    if (alpha_i >= 0 && alpha_i < alpha) alpha = alpha_i;
  }
  return alpha;
}

}  // namespace

std::uint8_t to_std(std::uint8_t protein_code) {
  return protein_code < kToStd.size() ? kToStd[protein_code] : static_cast<std::uint8_t>(stdaa::kX);
}

std::uint8_t from_std(std::uint8_t std_code) {
  for (std::size_t c = 0; c < kToStd.size(); ++c)
    if (kToStd[c] == std_code) return static_cast<std::uint8_t>(c);
  return from_std(stdaa::kX);
}

AaComposition read_aa_composition(std::span<const std::uint8_t> std_codes) {
  AaComposition c;
  for (const std::uint8_t r : std_codes) {
    if (r < kN && (kAlphaConvert[r] >= 0 || r == stdaa::kU)) {
      c.prob[r]++;
      c.true_aa++;
    }
  }
  if (c.prob[stdaa::kU] > 0.0) {
    c.prob[stdaa::kC] += c.prob[stdaa::kU];
    c.prob[stdaa::kU] = 0.0;
  }
  if (c.true_aa > 0)
    for (double& p : c.prob) p /= c.true_aa;
  return c;
}

LambdaResult calc_lambda_full_precision(std::span<const double> score, int n,
                                        std::span<const double> row_prob, std::span<const double> col_prob,
                                        double lambda_tolerance, double function_tolerance,
                                        int max_iterations) {
  const auto s = [&](int i, int j) { return score[static_cast<std::size_t>(i * n + j)]; };
  const auto rp = [&](int i) { return row_prob[static_cast<std::size_t>(i)]; };
  const auto cp = [&](int j) { return col_prob[static_cast<std::size_t>(j)]; };
  double f = 4;
  double left = 0, right = 1;
  double x = 0.367879441171;
  bool is_newton = false;
  double max_score = kScoreMin;
  double avg_score = 0.0;
  for (int i = 0; i < n; ++i) {
    if (rp(i) == 0.0) continue;
    for (int j = 0; j < n; ++j) {
      if (cp(j) == 0.0) continue;
      if (max_score < s(i, j)) max_score = s(i, j);
      avg_score += rp(i) * cp(j) * s(i, j);
    }
  }
  if (max_score <= 0.0 || avg_score >= 0) return {-1.0, max_iterations};
  int k = 0;
  for (; k < max_iterations; ++k) {
    const double fold = f;
    const double lambda = -std::log(x);
    const bool was_newton = is_newton;
    const double x_pow_max_score = std::exp(-max_score * lambda);
    f = -x_pow_max_score;
    double slope = max_score * f / x;
    for (int i = 0; i < n; ++i) {
      if (rp(i) == 0.0) continue;
      for (int j = 0; j < n; ++j) {
        if (cp(j) == 0.0) continue;
        double ff;
        if (max_score != s(i, j)) {
          const double diff_score = max_score - s(i, j);
          ff = rp(i) * cp(j) * std::exp(-lambda * diff_score);
          slope += diff_score * ff / x;
        } else {
          ff = rp(i) * cp(j);
        }
        f += ff;
      }
    }
    if (f > 0) {
      left = x;
    } else if (f < 0) {
      right = x;
    } else {
      break;
    }
    if (right - left <= 2 * left * (1 - right) * lambda_tolerance &&
        std::fabs(f / x_pow_max_score) <= function_tolerance) {
      x = (left + right) / 2;
      break;
    }
    if ((was_newton && std::fabs(f) > .9 * std::fabs(fold)) || slope >= 0) {
      x = (left + right) / 2;
    } else {
      const double p = -f / slope;
      const double y = x + p;
      if (y <= left || y >= right) {
        x = (left + right) / 2;
      } else {
        is_newton = true;
        x = y;
        if (std::fabs(p) <= lambda_tolerance * x * (1 - x) &&
            std::fabs(f / x_pow_max_score) <= function_tolerance)
          break;
      }
    }
  }
  return {k < max_iterations ? -std::log(x) : -1.0, k};
}

double karlin_lambda_nr(std::span<const double> probs, int min_score, int max_score, double lambda0) {
  // s_CalcLambda: the expected score.
  const int range = max_score - min_score + 1;
  double avg = 0.0;
  for (int i = 0; i < range; ++i) avg += (min_score + i) * probs[static_cast<std::size_t>(i)];
  // Blast_KarlinLambdaNR.
  const int low = min_score, high = max_score;
  if (avg >= 0.) return -1.0;
  if (low >= 0 || high <= 0 || low < kBlastScoreMin || high > kBlastScoreMax ||
      high - low > kBlastScoreMax - kBlastScoreMin)
    return -1.;
  const auto sprob = [&](int score) { return probs[static_cast<std::size_t>(score - low)]; };
  int d = -low;
  for (int i = 1; i <= high - low && d > 1; ++i) {
    if (sprob(i + low) != 0.0) {
      // BLAST_Gcd(d, i).
      int a = d, b = i;
      if (b > a) std::swap(a, b);
      while (b != 0) {
        const int c = a % b;
        a = b;
        b = c;
      }
      d = a;
    }
  }
  // NlmKarlinLambdaNR.
  double a = 0, b = 1;
  double f = 4;
  bool is_newton = false;
  const double x0 = std::exp(-lambda0);
  double x = (0 < x0 && x0 < 1) ? x0 : .5;
  for (int k = 0; k < kKarlinLambdaIterations; ++k) {
    const double fold = f;
    const bool was_newton = is_newton;
    is_newton = false;
    double g = 0;
    f = sprob(low);
    for (int i = low + d; i < 0; i += d) {
      g = x * g + f;
      f = f * x + sprob(i);
    }
    g = x * g + f;
    f = f * x + sprob(0) - 1;
    for (int i = d; i <= high; i += d) {
      g = x * g + f;
      f = f * x + sprob(i);
    }
    if (f > 0) {
      a = x;
    } else if (f < 0) {
      b = x;
    } else {
      break;
    }
    if (b - a < 2 * a * (1 - b) * kKarlinLambdaAccuracy) {
      x = (a + b) / 2;
      break;
    }
    if (k >= kKarlinMaxNewton || (was_newton && std::fabs(f) > .9 * std::fabs(fold)) || g >= 0) {
      x = (a + b) / 2;
    } else {
      const double p = -f / g;
      const double y = x + p;
      if (y <= a || y >= b) {
        x = (a + b) / 2;
      } else {
        is_newton = true;
        x = y;
        if (std::fabs(p) < kKarlinLambdaAccuracy * x * (1 - x)) break;
      }
    }
  }
  return -std::log(x) / d;
}

double relative_entropy(std::span<const double> a, std::span<const double> b) {
  double value = 0.0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(kT); ++i) {
    const double temp = (a[i] + b[i]) / 2;
    if (temp > 0) {
      if (a[i] > 0) value += a[i] * std::log(a[i] / temp) / 2;
      if (b[i] > 0) value += b[i] * std::log(b[i] / temp) / 2;
    }
  }
  if (value < 0) value = 0;
  return std::sqrt(value);
}

MatrixAdjustRule choose_matrix_adjust_rule(int length1, int length2, std::span<const double> probs1,
                                           std::span<const double> probs2, std::span<const double> background,
                                           AdjustMode mode) {
  switch (mode) {
    case AdjustMode::kNone: return MatrixAdjustRule::kDontAdjust;
    case AdjustMode::kCompositionBasedStats: return MatrixAdjustRule::kScaleOldMatrix;
    case AdjustMode::kUnconditional: return MatrixAdjustRule::kUserSpecifiedRelEntropy;
    case AdjustMode::kConditional: break;
  }
  // s_TestToApplyREAdjustmentConditional (probs1: query, probs2: match).
  const double d_m_mat = relative_entropy(probs2, background);
  const double d_q_mat = relative_entropy(probs1, background);
  const double d_m_q = relative_entropy(probs2, probs1);
  double angle = std::acos((d_m_mat * d_m_mat + d_q_mat * d_q_mat - d_m_q * d_m_q) / 2.0 / d_m_mat / d_q_mat);
  angle = angle * kHalfCircleDegrees / kPi;
  const double len_q = 1.0 * length1;
  const double len_m = 1.0 * length2;
  const double len_large = len_q > len_m ? len_q : len_m;
  const double len_small = len_q > len_m ? len_m : len_q;
  // s_HighPairFrequencies: the two most frequent letters of a sequence longer than 50 make up > 40 %.
  const auto high_pair = [](std::span<const double> p, int length) {
    if (length <= kLengthLowerThreshold) return false;
    double max = 0, second = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(kT); ++i) {
      if (p[i] > second) {
        second = p[i];
        if (p[i] > max) {
          second = max;
          max = p[i];
        }
      }
    }
    return (max + second) > kHighPairThreshold;
  };
  if (high_pair(probs1, length1) || high_pair(probs2, length2))
    return MatrixAdjustRule::kUserSpecifiedRelEntropy;
  if (d_m_q > kQueryMatchDistanceThreshold && len_large / len_small > kLengthRatioThreshold &&
      angle > kAngleDegreeThreshold)
    return MatrixAdjustRule::kScaleOldMatrix;
  return MatrixAdjustRule::kUserSpecifiedRelEntropy;
}

OptimizeResult optimize_target_frequencies(std::span<double> x_out, int a, std::span<const double> q,
                                           std::span<const double> row_sums, std::span<const double> col_sums,
                                           bool constrain_rel_entropy, double relative_entropy_target,
                                           double tol, int maxits) {
  const int n = a * a;
  const int mA = 2 * a - 1;
  const int m = constrain_rel_entropy ? mA + 1 : mA;
  const auto un = static_cast<std::size_t>(n);
  std::vector<double> resids_x(un), resids_z(static_cast<std::size_t>(mA + 1)),
      z(static_cast<std::size_t>(mA + 1), 0.0);
  std::vector<double> old_scores(un), workspace(un), grad0(un), grad1(un), dinv(un), grad_re(un);
  Ltriang W(2 * a);
  double* x = x_out.data();

  // ComputeScoresFromProbs.
  for (int i = 0; i < a; ++i)
    for (int j = 0; j < a; ++j) {
      const std::size_t k = static_cast<std::size_t>(i * a + j);
      old_scores[k] =
          std::log(q[k] / (row_sums[static_cast<std::size_t>(i)] * col_sums[static_cast<std::size_t>(j)]));
    }
  for (std::size_t k = 0; k < un; ++k) x[k] = q[k];

  int its = 0;
  double rnorm = 0;
  double values[2] = {0, 0};
  while (its <= maxits) {
    // EvaluateReFunctions.
    values[0] = 0.0;
    values[1] = 0.0;
    for (std::size_t k = 0; k < un; ++k) {
      double temp = std::log(x[k] / q[k]);
      values[0] += x[k] * temp;
      grad0[k] = temp + 1;
      if (constrain_rel_entropy) {
        temp += old_scores[k];
        values[1] += x[k] * temp;
        grad1[k] = temp + 1;
      }
    }
    // CalculateResiduals: dual residuals (DualResiduals) ...
    if (constrain_rel_entropy) {
      const double eta = z[static_cast<std::size_t>(2 * a - 1)];
      for (std::size_t i = 0; i < un; ++i) resids_x[i] = -grad0[i] + eta * grad1[i];
    } else {
      for (std::size_t i = 0; i < un; ++i) resids_x[i] = -grad0[i];
    }
    multiply_by_a_transpose(1.0, resids_x.data(), a, 1.0, z.data());
    const double norm_resids_x = euclidean_norm(resids_x.data(), n);
    // ... and primal residuals (ResidualsLinearConstraints).
    for (int i = 0; i < a; ++i) resids_z[static_cast<std::size_t>(i)] = col_sums[static_cast<std::size_t>(i)];
    for (int i = 1; i < a; ++i)
      resids_z[static_cast<std::size_t>(i + a - 1)] = row_sums[static_cast<std::size_t>(i)];
    multiply_by_a(1.0, resids_z.data(), a, -1.0, x);
    double norm_resids_z;
    if (constrain_rel_entropy) {
      resids_z[static_cast<std::size_t>(2 * a - 1)] = relative_entropy_target - values[1];
      norm_resids_z = euclidean_norm(resids_z.data(), 2 * a);
    } else {
      norm_resids_z = euclidean_norm(resids_z.data(), 2 * a - 1);
    }
    rnorm = std::sqrt(norm_resids_x * norm_resids_x + norm_resids_z * norm_resids_z);
    if (!(rnorm > tol)) break;  // also stops on NaN
    if (++its > maxits) continue;

    // FactorReNewtonSystem.
    if (constrain_rel_entropy) {
      const double eta = z[static_cast<std::size_t>(m - 1)];
      for (std::size_t i = 0; i < un; ++i) dinv[i] = x[i] / (1 - eta);
    } else {
      for (std::size_t i = 0; i < un; ++i) dinv[i] = x[i];
    }
    // ScaledSymmetricProductA into the first 2a - 1 rows of W.
    for (int r = 0; r < mA; ++r)
      for (int c = 0; c <= r; ++c) W(r, c) = 0.0;
    for (int i = 0; i < a; ++i) {
      for (int j = 0; j < a; ++j) {
        const double dd = dinv[static_cast<std::size_t>(i * a + j)];
        W(j, j) += dd;
        if (i > 0) {
          W(i + a - 1, j) += dd;
          W(i + a - 1, i + a - 1) += dd;
        }
      }
    }
    if (constrain_rel_entropy) {
      for (std::size_t i = 0; i < un; ++i) grad_re[i] = grad1[i];
      W(m - 1, m - 1) = 0.0;
      for (std::size_t i = 0; i < un; ++i) {
        workspace[i] = dinv[i] * grad_re[i];
        W(m - 1, m - 1) += grad_re[i] * workspace[i];
      }
      multiply_by_a(0.0, W.row(m - 1), a, 1.0, workspace.data());
    }
    factor_ltriang_pos_def(W, m);

    // SolveReNewtonSystem (resids_x -> step in x, resids_z -> step in z).
    for (std::size_t i = 0; i < un; ++i) workspace[i] = resids_x[i] * dinv[i];
    multiply_by_a(1.0, resids_z.data(), a, -1.0, workspace.data());
    if (constrain_rel_entropy)
      for (std::size_t i = 0; i < un; ++i)
        resids_z[static_cast<std::size_t>(m - 1)] -= grad_re[i] * workspace[i];
    solve_ltriang_pos_def(resids_z.data(), m, W);
    if (constrain_rel_entropy)
      for (std::size_t i = 0; i < un; ++i)
        resids_x[i] += grad_re[i] * resids_z[static_cast<std::size_t>(m - 1)];
    multiply_by_a_transpose(1.0, resids_x.data(), a, 1.0, resids_z.data());
    for (std::size_t i = 0; i < un; ++i) resids_x[i] *= dinv[i];

    double alpha = step_bound(x, n, resids_x.data(), 1.0 / .95);
    alpha *= 0.95;
    for (std::size_t i = 0; i < un; ++i) x[i] += alpha * resids_x[i];
    for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) z[i] += alpha * resids_z[i];
  }
  bool converged = false;
  if (its <= maxits && rnorm <= tol) {
    if (!constrain_rel_entropy || z[static_cast<std::size_t>(m - 1)] < 1) converged = true;
  }
  return {converged ? 0 : 1, its};
}

std::optional<MatrixInfo> MatrixInfo::create(std::string_view matrix_name, double lambda_ideal,
                                             double scale) {
  const MatrixFrequencyData* data = matrix_frequency_data(matrix_name);
  if (data == nullptr) return std::nullopt;
  MatrixInfo info;
  info.name = std::string(matrix_name);
  info.ungapped_lambda = lambda_ideal / scale;
  for (std::size_t k = 0; k < info.start_freq_ratios.size(); ++k) {
    info.start_freq_ratios[k] = data->freq_ratios[k];
    // Blast_Int4MatrixFromFreq.
    info.start_matrix[k] = round_score(freq_ratio_to_score(data->freq_ratios[k], info.ungapped_lambda));
  }
  return info;
}

std::optional<CompositionWorkspace> CompositionWorkspace::create(std::string_view matrix_name) {
  const MatrixFrequencyData* data = matrix_frequency_data(matrix_name);
  if (data == nullptr) return std::nullopt;
  CompositionWorkspace w;
  for (int i = 0; i < kT; ++i) {
    for (int j = 0; j < kT; ++j) {
      const std::size_t k = static_cast<std::size_t>(i * kT + j);
      w.joint[k] = data->joint_probs[k];
      w.first_standard_freq[static_cast<std::size_t>(i)] += w.joint[k];
      w.second_standard_freq[static_cast<std::size_t>(j)] += w.joint[k];
    }
  }
  for (std::size_t i = 0; i < w.background.size(); ++i) w.background[i] = data->background[i];
  return w;
}

int composition_matrix_adj(IntScores& out, MatrixAdjustRule rule, int length1, int length2,
                           const StdProbs& stdaa_row_probs, const StdProbs& stdaa_col_probs, int pseudocounts,
                           double specified_re, const CompositionWorkspace& workspace,
                           const MatrixInfo& info) {
  TrueAaProbs row_probs{}, col_probs{};
  gather_letter_probs(row_probs, stdaa_row_probs);
  gather_letter_probs(col_probs, stdaa_col_probs);
  double desired_re = 0.0;
  switch (rule) {
    case MatrixAdjustRule::kUnconstrainedRelEntropy: desired_re = 0.0; break;
    case MatrixAdjustRule::kRelEntropyOldMatrixNewContext:
      if (entropy_old_freq_new_context(desired_re, workspace.joint, row_probs, col_probs) > 0)
        desired_re = 0.0;
      break;
    case MatrixAdjustRule::kRelEntropyOldMatrixOldContext:
      desired_re = target_freq_entropy(workspace.joint);
      break;
    case MatrixAdjustRule::kUserSpecifiedRelEntropy: desired_re = specified_re; break;
    default: return 1;
  }
  apply_pseudocounts(row_probs, length1, workspace.first_standard_freq, pseudocounts);
  apply_pseudocounts(col_probs, length2, workspace.second_standard_freq, pseudocounts);
  TrueAaMatrix target{};
  const OptimizeResult r =
      optimize_target_frequencies(target, kT, workspace.joint, row_probs, col_probs, desired_re > 0.0,
                                  desired_re, kCompoAdjustErrTolerance, kCompoAdjustIterationLimit);
  if (r.status != 0) return r.status;
  scores_std_alphabet(out, target, info.start_matrix, row_probs, col_probs, info.ungapped_lambda);
  return 0;
}

void composition_based_stats(IntScores& out, double& lambda_ratio, const MatrixInfo& info,
                             const StdProbs& query_prob, const StdProbs& subject_prob,
                             bool pvalue_adjustment) {
  // s_GetMatrixScoreProbs: score range over every row and the true-letter columns of the start matrix.
  int min_score = 0, max_score = 0;
  for (int irow = 0; irow < kN; ++irow) {
    for (const int jcol : kTrueCharPositions) {
      const int s = info.start_matrix[static_cast<std::size_t>(irow * kN + jcol)];
      if (s < min_score && s > kScoreMin) min_score = s;
      if (s > max_score) max_score = s;
    }
  }
  std::vector<double> score_probs(static_cast<std::size_t>(max_score - min_score + 1), 0.0);
  for (int irow = 0; irow < kN; ++irow) {
    for (const int jcol : kTrueCharPositions) {
      const int s = info.start_matrix[static_cast<std::size_t>(irow * kN + jcol)];
      if (s >= min_score)
        score_probs[static_cast<std::size_t>(s - min_score)] +=
            query_prob[static_cast<std::size_t>(irow)] * subject_prob[static_cast<std::size_t>(jcol)];
    }
  }
  const double correct_lambda = karlin_lambda_nr(score_probs, min_score, max_score, info.ungapped_lambda);
  lambda_ratio = correct_lambda / info.ungapped_lambda;
  if (!pvalue_adjustment) lambda_ratio = std::min(1.0, lambda_ratio);
  lambda_ratio = std::max(lambda_ratio, kLambdaRatioLowerBound);
  // s_ScaleSquareMatrix at the scaled lambda.
  const double scaled_lambda = info.ungapped_lambda / lambda_ratio;
  StdScores scores = info.start_freq_ratios;
  for (double& s : scores) s = freq_ratio_to_score(s, scaled_lambda);
  set_xuo_scores(scores, query_prob, subject_prob);
  round_with_stop(out, scores, info.start_matrix);
}

AdjustResult adjust_scores(IntScores& matrix, const AaComposition& query, int query_length,
                           const AaComposition& subject, int subject_length, const MatrixInfo& info,
                           AdjustMode mode, int pseudocounts, const CompositionWorkspace& workspace) {
  AdjustResult result;
  if (query.true_aa == 0 || subject.true_aa == 0) {
    result.status = 1;
    return result;
  }
  if (mode == AdjustMode::kCompositionBasedStats) {
    result.rule = MatrixAdjustRule::kScaleOldMatrix;
  } else {
    TrueAaProbs query_probs{}, match_probs{};
    gather_letter_probs(query_probs, query.prob);
    gather_letter_probs(match_probs, subject.prob);
    result.rule = choose_matrix_adjust_rule(query_length, subject_length, query_probs, match_probs,
                                            workspace.background, mode);
  }
  if (result.rule != MatrixAdjustRule::kScaleOldMatrix) {
    const int status = composition_matrix_adj(matrix, result.rule, query.true_aa, subject.true_aa, query.prob,
                                              subject.prob, pseudocounts, kFixedReBlosum62, workspace, info);
    result.lambda_ratio = 1.0;
    if (status <= 0) {
      result.status = status;
      return result;
    }
  }
  result.rule = MatrixAdjustRule::kScaleOldMatrix;
  composition_based_stats(matrix, result.lambda_ratio, info, query.prob, subject.prob, false);
  return result;
}

}  // namespace warpsearch::blast::compo
