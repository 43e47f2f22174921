// composition.hpp: the mathematics of BLAST+ 2.12's composition-based statistics for blastp
// (-comp_based_stats 1 and 2), reproduced operation by operation so that every double and every adjusted
// score equals BLAST+'s (src/algo/blast/composition_adjustment: composition_adjustment.c,
// compo_mode_condition.c, optimize_target_freq.c, nlm_linear_algebra.c, matrix_frequency_data.c; core:
// matrix_freq_ratios.c, blast_stat.c's Blast_KarlinLambdaNR).
//
// Contents:
//   to_std / from_std           our protein codes <-> NCBIstdaa (the 28-letter alphabet BLAST's tables use)
//   AdjustMode, MatrixAdjustRule  ECompoAdjustModes / EMatrixAdjustRule
//   MatrixFrequencyData         the published BLOSUM / PAM data: frequency ratios (28 x 28, NCBIstdaa), joint
//                               probabilities (20 x 20, ARND order) and background frequencies (ARND order)
//   AaComposition, read_aa_composition   Blast_ReadAaComposition
//   calc_lambda_full_precision  Blast_CalcLambdaFullPrecision (safeguarded Newton in x = exp(-lambda))
//   karlin_lambda_nr            s_CalcLambda + Blast_KarlinLambdaNR (lambda of a score distribution)
//   relative_entropy            Blast_GetRelativeEntropy (the square root of a Jensen-Shannon divergence)
//   choose_matrix_adjust_rule   Blast_ChooseMatrixAdjustRule (mode 2's length / angle / distance test)
//   optimize_target_frequencies Blast_OptimizeTargetFrequencies (Newton with BLAST's constants)
//   MatrixInfo                  Blast_MatrixInfo of a square matrix: start frequency ratios and the start
//                               matrix scaled by 32 (Blast_Int4MatrixFromFreq at lambda_ideal / 32)
//   CompositionWorkspace        Blast_CompositionWorkspace: joint probabilities and their margins
//   composition_matrix_adj      Blast_CompositionMatrixAdj (the relative-entropy adjusted integer matrix)
//   composition_based_stats     Blast_CompositionBasedStats (mode 1: the old matrix rescaled)
//   adjust_scores               Blast_AdjustScores (the per-pair dispatcher)
//
// Conventions: matrices are row-major arrays, [row * size + column]. The 28 x 28 ones are indexed by
// NCBIstdaa codes (rows: query letters, columns: subject letters); the 20 x 20 ones by the true amino acids
// in BLAST's ARND... order (alphabetical by three-letter code). All loops run in BLAST's order, because
// floating-point sums depend on it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace warpsearch::blast::compo {

inline constexpr int kStdAlphabetSize = 28;  // BLASTAA_SIZE
inline constexpr int kTrueAaCount = 20;      // COMPO_NUM_TRUE_AA
inline constexpr int kScoreMin = -32768;     // COMPO_SCORE_MIN (INT2_MIN)

// NCBIstdaa codes BLAST names (eXchar, ...).
namespace stdaa {
inline constexpr int kGap = 0, kA = 1, kB = 2, kC = 3, kD = 4, kE = 5, kI = 9, kL = 11, kN = 13, kQ = 15,
                     kX = 21, kZ = 23, kU = 24, kStop = 25, kO = 26, kJ = 27;
}

// Our protein code (alphabet.hpp: ACDEFGHIKLMNPQRSTVWY B J Z O U X *) -> NCBIstdaa, and back (a code
// without an equivalent, the gap 0, maps to X).
std::uint8_t to_std(std::uint8_t protein_code);
std::uint8_t from_std(std::uint8_t std_code);

using StdProbs = std::array<double, kStdAlphabetSize>;
using StdScores = std::array<double, kStdAlphabetSize * kStdAlphabetSize>;
using IntScores = std::array<int, kStdAlphabetSize * kStdAlphabetSize>;
using TrueAaProbs = std::array<double, kTrueAaCount>;
using TrueAaMatrix = std::array<double, kTrueAaCount * kTrueAaCount>;

enum class AdjustMode : int {
  kNone = 0,                   // eNoCompositionBasedStats
  kCompositionBasedStats = 1,  // eCompositionBasedStats (Schaffer et al. 2001)
  kConditional = 2,            // eCompositionMatrixAdjust (Yu & Altschul 2005, conditioned)
  kUnconditional = 3,          // eCompoForceFullMatrixAdjust
};

enum class MatrixAdjustRule : int {
  kDontAdjust = -1,
  kScaleOldMatrix = 0,
  kUnconstrainedRelEntropy = 1,
  kRelEntropyOldMatrixNewContext = 2,
  kRelEntropyOldMatrixOldContext = 3,
  kUserSpecifiedRelEntropy = 4,
};

// The data BLAST+ holds for one built-in matrix (the eight of ScoringMatrix::builtin_names()).
struct MatrixFrequencyData {
  std::string_view name;
  const double* freq_ratios;  // 28 x 28, NCBIstdaa (_PSIMatrixFrequencyRatiosNew)
  const double* joint_probs;  // 20 x 20, ARND order (Blast_GetJointProbsForMatrix)
  const double* background;   // 20, ARND order (Blast_GetMatrixBackgroundFreq)
};
// nullptr when BLAST+ has no data for the matrix (name compared case-insensitively, as strcasecmp).
const MatrixFrequencyData* matrix_frequency_data(std::string_view matrix_name);

// Blast_ReadAaComposition over NCBIstdaa codes: counts the true amino acids and U (added to C), divides by
// their number; every other letter is ignored. true_aa = that number.
struct AaComposition {
  StdProbs prob{};
  int true_aa = 0;
};
AaComposition read_aa_composition(std::span<const std::uint8_t> std_codes);

// Blast_CalcLambdaFullPrecision: lambda solving sum_ij row_i col_j exp(lambda S_ij) = 1 for an n x n double
// matrix. lambda = -1 and iterations = max_iterations when it does not exist or does not converge.
struct LambdaResult {
  double lambda = -1;
  int iterations = 0;
};
LambdaResult calc_lambda_full_precision(std::span<const double> scores, int n,
                                        std::span<const double> row_prob, std::span<const double> col_prob,
                                        double lambda_tolerance, double function_tolerance,
                                        int max_iterations);

// s_CalcLambda (blast_kappa.c) + Blast_KarlinLambdaNR: lambda of the score distribution probs[0..max-min]
// (probs[i] is the probability of score min_score + i), starting from lambda0; -1 when the expected score
// is not negative or the range is invalid.
double karlin_lambda_nr(std::span<const double> probs, int min_score, int max_score, double lambda0);

// Blast_GetRelativeEntropy of two 20-letter distributions.
double relative_entropy(std::span<const double> a, std::span<const double> b);

// Blast_ChooseMatrixAdjustRule: mode 1 -> kScaleOldMatrix, 3 -> kUserSpecifiedRelEntropy, 2 -> the
// conditional test (compo_mode_condition.c) on the lengths and ARND probabilities of the two sequences
// against the matrix's background frequencies. mode 0 -> kDontAdjust.
MatrixAdjustRule choose_matrix_adjust_rule(int length1, int length2, std::span<const double> probs1,
                                           std::span<const double> probs2, std::span<const double> background,
                                           AdjustMode mode);

// Blast_OptimizeTargetFrequencies: x (n * n) = the target frequencies closest to q (Kullback-Leibler) with
// margins row_sums / col_sums (and relative entropy `relative_entropy` when constrained). status 0:
// converged to a minimizer; 1: not.
struct OptimizeResult {
  int status = 1;
  int iterations = 0;
};
OptimizeResult optimize_target_frequencies(std::span<double> x, int n, std::span<const double> q,
                                           std::span<const double> row_sums, std::span<const double> col_sums,
                                           bool constrain_rel_entropy, double relative_entropy, double tol,
                                           int maxits);

// Blast_MatrixInfo of a (non-position-based) matrix as s_MatrixInfoInit fills it: ungapped_lambda =
// lambda_ideal / scale (lambda_ideal: the matrix's ungapped lambda under the standard background,
// sbp->kbp_ideal), start_freq_ratios = the published ratios, start_matrix = round(ln(ratio) /
// ungapped_lambda) (kScoreMin where a ratio is 0).
struct MatrixInfo {
  std::string name;
  StdScores start_freq_ratios{};
  IntScores start_matrix{};
  double ungapped_lambda = 0;
  // nullopt when BLAST+ has no frequency data for the matrix.
  static std::optional<MatrixInfo> create(std::string_view matrix_name, double lambda_ideal, double scale);
};

// Blast_CompositionWorkspaceInit: the matrix's joint probabilities and their row and column sums
// (first_standard_freq, second_standard_freq), plus its background frequencies.
struct CompositionWorkspace {
  TrueAaMatrix joint{};
  TrueAaProbs first_standard_freq{};
  TrueAaProbs second_standard_freq{};
  TrueAaProbs background{};
  static std::optional<CompositionWorkspace> create(std::string_view matrix_name);
};

// Blast_CompositionMatrixAdj: the 28 x 28 integer matrix (scale 1 / info.ungapped_lambda) from target
// frequencies optimized for the two compositions (NCBIstdaa probabilities, rows = query) after
// `pseudocounts` pseudocounts of the matrix's margins. Returns 0 on success, 1 when Newton's method did not
// converge to a minimizer (out is then unspecified).
int composition_matrix_adj(IntScores& out, MatrixAdjustRule rule, int length1, int length2,
                           const StdProbs& row_probs, const StdProbs& col_probs, int pseudocounts,
                           double specified_re, const CompositionWorkspace& workspace,
                           const MatrixInfo& info);

// Blast_CompositionBasedStats (non-position-based): rescales the start matrix so that its lambda in the
// context of the two compositions matches ungapped_lambda. lambda_ratio = new lambda / ungapped lambda,
// capped at 1 unless pvalue_adjustment, floored at 0.5.
void composition_based_stats(IntScores& out, double& lambda_ratio, const MatrixInfo& info,
                             const StdProbs& query_prob, const StdProbs& subject_prob,
                             bool pvalue_adjustment);

// Blast_AdjustScores with compositionTestIndex 0 (blastp's default, -unified_p 0): status 1 when either
// sequence has no true amino acid (no adjustment possible), else 0 with `matrix` adjusted and `rule` the
// rule used (a relative-entropy adjustment that fails falls back to kScaleOldMatrix).
struct AdjustResult {
  int status = 0;
  MatrixAdjustRule rule = MatrixAdjustRule::kDontAdjust;
  double lambda_ratio = 0;  // meaningful only for kScaleOldMatrix (1.0 after a relative-entropy adjustment)
};
AdjustResult adjust_scores(IntScores& matrix, const AaComposition& query, int query_length,
                           const AaComposition& subject, int subject_length, const MatrixInfo& info,
                           AdjustMode mode, int pseudocounts, const CompositionWorkspace& workspace);

}  // namespace warpsearch::blast::compo
