// blast_stats.hpp: the BLAST+-specific side of the Karlin-Altschul statistics (karlin.hpp has the
// general API): per-query ungapped parameters as BLAST+ computes them, blastn's reward/penalty rules
// with BLAST+'s own gap-cost conventions, and the Gumbel parameters of BLAST+'s finite-size correction.
//
// Conventions shared with karlin.hpp: a gap of length k costs open + k * extend (BLAST+'s convention
// too). Every function reproduces BLAST+ 2.12 (NCBI C++ Toolkit src/algo/blast/core/blast_stat.c)
// operation by operation, so its doubles equal BLAST+'s when both use the same libm.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "stats/karlin.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::stats {

// Ungapped parameters of one query against the standard background, as BLAST+ computes the ungapped
// Karlin block it reports and uses for a query (Blast_ScoreBlkKbpUngappedCalc): the residue
// frequencies are the query's composition, the unknown code (X, or N for nucleotides) not counted, and
// the other side has the standard frequencies (see ungapped_params). `query` holds digital codes of
// the matrix's alphabet, after any masking to X / N. Protein letters are treated as blastp 2.12 treats
// them (observed bit for bit): U (selenocysteine) is counted as a letter of its own scored like C, O
// (pyrrolysine) is not counted, like X. Nucleotide ambiguity codes are scored by the matrix; for
// blastn's own ambiguity scores use blastn_query_ungapped_params. alpha and beta follow the same rules
// as ungapped_params. nullopt when BLAST+'s calculation fails (no counted residue, expected score not
// negative, no positive score).
std::optional<KarlinParams> query_ungapped_params(const ScoringMatrix& matrix,
                                                  std::span<const std::uint8_t> query);

// As query_ungapped_params for blastn's scoring of reward/penalty (BlastScoreBlkNuclMatrixCreate):
// identical bases score `reward`, different bases `penalty`, and an ambiguity code standing for d
// bases scores round(((d - 1) * penalty + reward) / d) (halves away from zero) against each of its
// bases and `penalty` against the others. `query` holds DNA codes (alphabet.hpp), N not counted.
// Requires reward > 0 > penalty.
std::optional<KarlinParams> blastn_query_ungapped_params(int reward, int penalty,
                                                         std::span<const std::uint8_t> query);

// True if BLAST+ supports the reward/penalty pair (BLAST_CheckRewardPenaltyScores): after division by
// their gcd one of 1/-5, 1/-4, 2/-7, 1/-3, 2/-5, 1/-2, 2/-3, 3/-4, 4/-5, 1/-1, 3/-2, 5/-4.
bool blastn_supported(int reward, int penalty);

// True if BLAST+ rounds odd gapped scores down to even before computing E-values for this pair
// (2/-7, 2/-5, 2/-3, 3/-4 after division by the gcd); bit scores are computed from the unrounded score.
bool blastn_round_down(int reward, int penalty);

// blastn's gapped parameters (Blast_KarlinBlkNuclGappedCalc + Blast_GetNuclAlphaBeta) with BLAST+'s
// gap-cost conventions:
//  - gap_open = gap_extend = 0 selects the pair's non-affine row when it has one: megablast's greedy
//    extension, whose real costs are open 0, extend reward/2 - penalty (so not expressible as integer
//    GapCosts when reward is odd);
//  - a pair with gcd g > 1 uses the table of reward/g, penalty/g with gap costs multiplied by g and
//    lambda and alpha divided by g (K, H, beta, as published);
//  - gap costs not in the table but with open >= and extend >= the table's thresholds (times g) get the
//    ungapped parameters: `ungapped`'s lambda, K, H, alpha = lambda / H and beta = -2 for 1/-1 and
//    2/-3 (as given, not reduced), 0 otherwise. BLAST+ passes its per-query ungapped block here.
// nullopt for unsupported pairs or gap costs.
std::optional<KarlinParams> blastn_gapped_params(int reward, int penalty, int gap_open, int gap_extend,
                                                 const KarlinParams& ungapped);

// The Gumbel block BLAST+ loads for its finite-size-corrected E-values (Spouge; Blast_GumbelBlk,
// filled by Blast_GumbelBlkLoadFromTables) for a built-in protein matrix and tabulated gap costs.
struct GumbelParams {
  double lambda = 0;    // the table's (unscaled) lambda
  double C = 0;         // prefactor of the p-value
  double G = 0;         // open + extend
  double a = 0;         // mean length: avg(L) = a * y + b
  double alpha = 0;     // variance of length: var(L) = alpha * y + beta
  double sigma = 0;     // covariance of lengths: cov(L1, L2) = sigma * y + tau
  double a_un = 0;      // a of the ungapped row
  double alpha_un = 0;  // alpha of the ungapped row
  double b = 0;         // 2 G (a_un - a)
  double beta = 0;      // 2 G (alpha_un - alpha)
  double tau = 0;       // 2 G (alpha_un - sigma)
};
std::optional<GumbelParams> gumbel_params(const ScoringMatrix& matrix, GapCosts gaps);

}  // namespace warpsearch::stats
