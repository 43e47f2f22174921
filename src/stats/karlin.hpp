// karlin.hpp: Karlin-Altschul statistics shared by scan, blastp and swsearch: ungapped parameters
// computed for any scoring matrix, BLAST+'s tabulated gapped parameters (protein matrices x gap costs,
// blastn reward/penalty x gap costs), E-values and bit scores.
#pragma once

#include <optional>
#include <vector>

#include "warpsearch/scoring.hpp"

namespace warpsearch::stats {

struct KarlinParams {
  double lambda = 0;
  double K = 0;
  double H = 0;      // relative entropy (nats per aligned pair)
  double alpha = 0;  // BLAST+'s length-adjustment parameters (0 when BLAST+ has none)
  double beta = 0;
};

// Ungapped parameters of the matrix under the standard residue background (protein: BLAST+'s
// Robinson & Robinson frequencies; nucleotide: uniform A/C/G/T). nullopt when the expected score is not
// negative or no positive score exists.
std::optional<KarlinParams> ungapped_params(const ScoringMatrix& matrix);

// BLAST+'s gapped parameters for the matrix (built-in protein matrices by name and scores, nucleotide
// match/mismatch as blastn's reward/penalty) and gap costs; nullopt when BLAST+ tabulates none.
std::optional<KarlinParams> gapped_params(const ScoringMatrix& matrix, GapCosts gaps);

// The gap costs gapped_params() knows for this matrix (empty if none), in BLAST+'s table order.
std::vector<GapCosts> tabulated_gaps(const ScoringMatrix& matrix);

// E = K * search_space * exp(-lambda * score); bits = (lambda * score - ln K) / ln 2.
double evalue(const KarlinParams& params, double score, double search_space);
double bit_score(const KarlinParams& params, double score);

}  // namespace warpsearch::stats
