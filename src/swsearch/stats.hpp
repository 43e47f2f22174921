// stats.hpp: E-values and bit scores of swsearch hits (docs/SWSEARCH.md "Statistics").
//
//   SearchSpace        the database size the E-value sees (sequences, or -Z, and residues)
//   Statistics::make   lambda, K, H for a scoring system (matrix + gap costs), as ssearch36 -z 3 picks them
//   bits, evalue       per hit, from the raw score, the query and target lengths and the search space
//
// The model is ssearch36's analytic statistics (fasta36, option -z 3: Altschul-Gish parameters, an
// edge-corrected pair search space per hit, extreme-value P-value times the database size); stats.cpp
// has the formulas and the parameter sources. For the scoring systems ssearch36 tabulates our E-values
// and bit scores equal ssearch36 -z 3's (tests/swsearch/test_stats.cpp runs ssearch36 to check).
#pragma once

#include <cstdint>
#include <string>

#include "warpsearch/scoring.hpp"

namespace warpsearch::swsearch {

// The size of the searched database as the E-value sees it.
struct SearchSpace {
  std::uint64_t sequences = 0;  // number of database sequences (or the -Z override); protein E-values
  std::uint64_t residues = 0;   // total database residues; DNA E-values (ssearch36 ignores -Z for DNA)
};

class Statistics {
 public:
  // Where lambda, K and H come from.
  enum class Source {
    kSsearch36,  // ssearch36's Altschul-Gish table and lookup rule (BLOSUM50/62/80, PAM250, DNA 5/-4)
    kBlast,      // BLAST+'s tabulated gapped parameters (stats/karlin.hpp): other matrices and DNA pairs
  };

  // The parameters of a scoring system, identified by its scores (a matrix file with the scores of a
  // built-in matrix counts as that matrix; DNA by its match/mismatch scores on A/C/G/T). ssearch36's table
  // first (its lookup rule, which may use the nearest cheaper tabulated gap costs or, for gap costs above
  // the table, the ungapped parameters), else BLAST+'s exact row. Error(kUsage) when neither has
  // parameters; the message lists the gap costs that have them for this matrix, or the supported matrices.
  static Statistics make(const ScoringMatrix& matrix, GapCosts gaps);

  // ssearch36's reported bit score: the bit score of the hit's P-value over an uncorrected query_length x
  // target_length space, (lambda S - ln(K m' n') + ln(m n)) / ln 2 (see stats.cpp); it is the plain
  // (lambda S - ln K) / ln 2 plus log2(m n / (m' n')), so it depends on the lengths.
  double bits(std::int32_t score, std::uint32_t query_length, std::uint32_t target_length) const;
  // ssearch36 -z 3's E-value: D * P with P the extreme-value P-value of the score in the edge-corrected
  // space m' x n', D = space.sequences for protein, max(1, space.residues / target_length) for DNA.
  // Monotone non-increasing in score for fixed lengths; 0 where ssearch36 reports 0 (underflow guard).
  double evalue(std::int32_t score, std::uint32_t query_length, std::uint32_t target_length,
                const SearchSpace& space) const;
  // One line for reports, e.g. "ssearch36 -z 3 Altschul-Gish lambda=0.275 K=0.050 H=0.250 (BLOSUM62 11/1)".
  std::string describe() const;

  double lambda = 0.0, K = 0.0, H = 0.0;
  Source source = Source::kSsearch36;
  bool nucleotide = false;  // DNA/RNA scoring: the database-size factor is residues / target length

 private:
  std::string label_;  // "BLOSUM62 11/1" / "dna:+5/-4 12/4"
};

}  // namespace warpsearch::swsearch
