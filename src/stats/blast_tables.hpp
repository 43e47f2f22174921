// blast_tables.hpp: BLAST+'s tabulated Karlin-Altschul parameters (internal to src/stats).
//
// Contents:
//   ProteinMatrixTable   per built-in protein matrix: the ungapped row and the gapped rows (one per
//                        supported gap-cost pair) with lambda, K, H, alpha, beta and the Gumbel
//                        columns used by BLAST+'s finite-size correction (C, alpha_v, sigma).
//   NucleotideTable      per blastn reward/penalty pair: the rows (gap costs, lambda, K, H, alpha,
//                        beta, theta), the thresholds beyond which BLAST+ applies the ungapped values,
//                        and whether scores are rounded down to even for E-values.
// The numbers are those of NCBI C++ Toolkit src/algo/blast/core/blast_stat.c (arrays blosum45_values ...
// pam250_values, blastn_values_1_5 ... blastn_values_5_4 and s_GetNuclValuesArray), unchanged between
// BLAST+ 2.12 and the toolkit's 2026 sources. BLAST+'s tables also carry a decline-to-align column,
// always "infinite" (INT2_MAX) in these rows and ignored by BLAST+, so it is not stored.
#pragma once

#include <span>
#include <string_view>

namespace warpsearch::stats::blast_tables {

// The "infinite" gap costs row of a protein table: BLAST+'s ungapped parameters for the matrix.
struct ProteinUngappedRow {
  double lambda, K, H, alpha, beta, C, alpha_v, sigma;
};

struct ProteinGappedRow {
  int open, extend;
  double lambda, K, H, alpha, beta, C, alpha_v, sigma;
};

struct ProteinMatrixTable {
  std::string_view name;  // upper case, as ScoringMatrix::builtin_names() spells it
  ProteinUngappedRow ungapped;
  std::span<const ProteinGappedRow> gapped;  // BLAST+'s row order
};

// The eight matrices in ScoringMatrix::builtin_names() order: BLOSUM45, 50, 62, 80, 90, PAM30, 70, 250.
std::span<const ProteinMatrixTable> protein_tables();

struct NucleotideRow {
  int open, extend;  // (0, 0) in the first row marks BLAST+'s non-affine (megablast greedy) costs
  double lambda, K, H, alpha, beta, theta;
};

struct NucleotideTable {
  int reward, penalty;                  // coprime; penalty < 0
  std::span<const NucleotideRow> rows;  // BLAST+'s row order, the (0, 0) row first when present
  int gap_open_max, gap_extend_max;     // gap costs at least this large use the ungapped parameters
  bool round_down;                      // odd scores are rounded down to even for E-values / bits
};

// The twelve reward/penalty pairs BLAST+ tabulates (pairs with a gcd g > 1 use the table of the pair
// divided by g), in s_GetNuclValuesArray's order: 1/-5, 1/-4, 2/-7, 1/-3, 2/-5, 1/-2, 2/-3, 3/-4, 1/-1,
// 3/-2, 4/-5, 5/-4.
std::span<const NucleotideTable> nucleotide_tables();

}  // namespace warpsearch::stats::blast_tables
