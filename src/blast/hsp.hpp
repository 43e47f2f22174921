// hsp.hpp: what blastp 2.12 (comp_based_stats 0) does with its gapped HSPs: effective lengths, E-values
// and bit scores, and the HSP-list and hit-list rules, reproduced exactly.
//
// Contents:
//   blast_erfc            BLAST+'s own erfc (blast_stat.c uses boost_erf.c's ErfC, not libm's erfc).
//   length_adjustment     BLAST_ComputeLengthAdjustment, bit for bit.
//   effective_lengths     BLAST_CalcEffLengths for one protein query: length adjustment (gapped alpha /
//                         lambda, beta) and the effective search space.
//   spouge_evalue, karlin_evalue, blast_bit_score
//                         BLAST_SpougeStoE, BLAST_KarlinStoE_simple, Blast_HSPListGetBitScores.
//   EvalueCalculator      the choice Blast_HSPListGetEvalues makes for blastp (see below) for one query.
//   format_evalue, format_bit_score, tabular_evalue   BLAST+'s score strings (GetScoreString; -outfmt 6).
//   Hsp, compare_hsps_by_score, compare_hsps_by_evalue, sort_hsps_by_score, sort_hsps_by_evalue,
//   purge_common_endpoints, remove_contained_hsps, reap_by_evalue, trim_to_max_hsps
//                         the HSP-list rules (blast_hits.c, blast_traceback.c).
//   SubjectHits, compare_hit_lists, select_hit_lists, prelim_hitlist_size
//                         the hit-list (per-query subject list) rules and -max_target_seqs.
//
// Which E-value blastp 2.12 computes (Blast_HSPListGetEvalues): a gapped protein search always has a
// Gumbel block (BlastScoreBlkNew creates it unless the environment variable OLD_FSC is set;
// Blast_ScoreBlkKbpGappedCalc fills it from the tables, and a matrix / gap-cost pair without a Gumbel row
// is an error), so E-values use Spouge's finite-size correction with the actual query length m and the
// actual subject length n, multiplied by db_length / n where db_length is the database's total length (or
// -dbsize); in -subject mode db_length is the total length of ALL the -subject sequences (observed with
// blastp 2.12: the -subject set behaves as a database, for this factor and for the search space). The
// effective search space (length adjustment) is then used only for cutoffs and reporting. With OLD_FSC (or an
// ungapped search) E = searchsp * exp(-lambda * S + log K). Bit scores are (S * lambda - log K) / ln 2 with
// the gapped block, from the unrounded score.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blast/gapped.hpp"
#include "stats/blast_stats.hpp"
#include "stats/karlin.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

// erfc(x) exactly as BLAST+'s ErfC (Boost's rational approximations, with expl for the exponential).
double blast_erfc(double x);

// BLAST_ComputeLengthAdjustment: the largest integer ell (as BLAST's iteration finds it) with
// alpha_d_lambda * (logK + log((m - ell) * (n - N * ell))) + beta >= ell. converged is BLAST's return
// value == 0. K * (m) * (n) <= max(m, n) gives 0 (not converged).
struct LengthAdjustment {
  int adjustment = 0;
  bool converged = false;
};
LengthAdjustment length_adjustment(double K, double logK, double alpha_d_lambda, double beta,
                                   int query_length, std::int64_t db_length, int db_num_seqs);

// BLAST_CalcEffLengths for a protein query with the gapped block `gapped` (alpha, beta from the gapped
// table; BLAST_GetAlphaBeta): adjustment from length_adjustment(K, log K, alpha / lambda, beta, ...), and
// search space = max(db_length - db_num_seqs * adjustment, 1) * (query_length - adjustment), or
// `searchsp_override` (-searchsp) when positive. db_length / db_num_seqs: the database's totals (or -dbsize
// for db_length); in -subject mode the totals over all -subject sequences (observed with blastp 2.12: its
// "Effective search space used" for 3 subjects is this formula with their summed length and N = 3).
struct EffectiveLengths {
  int length_adjustment = 0;
  std::int64_t search_space = 0;
};
EffectiveLengths effective_lengths(const stats::KarlinParams& gapped, int query_length,
                                   std::int64_t db_length, int db_num_seqs,
                                   std::int64_t searchsp_override = 0);

// BLAST_SpougeStoE with an unscaled gapped block: `db_length` 0 means no database length (factor 1).
double spouge_evalue(int score, const stats::KarlinParams& gapped, const stats::GumbelParams& gumbel,
                     int query_length, int subject_length, std::int64_t db_length);
// BLAST_KarlinStoE_simple: search_space * exp(-lambda * score + log K).
double karlin_evalue(int score, const stats::KarlinParams& params, std::int64_t search_space);
// (score * lambda - log K) / NCBIMATH_LN2.
double blast_bit_score(int score, const stats::KarlinParams& params);

// E-values and bit scores of one blastp query (matrix, gap costs with tabulated parameters).
class EvalueCalculator {
 public:
  // db_length / db_num_seqs: the database totals (or -dbsize; db_num_seqs as the database has); for
  // -subject mode the totals over all subjects. old_fsc: BLAST+ run with OLD_FSC set (classic E-values
  // with the search space).
  // nullopt when BLAST+ has no gapped or Gumbel parameters for (matrix, gaps).
  static std::optional<EvalueCalculator> create(const ScoringMatrix& matrix, GapCosts gaps, int query_length,
                                                std::int64_t db_length, int db_num_seqs, bool old_fsc = false,
                                                std::int64_t searchsp_override = 0);
  EffectiveLengths lengths() const;
  double evalue(int score, int subject_length) const;
  double bit_score(int score) const { return blast_bit_score(score, gapped_); }
  const stats::KarlinParams& gapped() const { return gapped_; }

 private:
  stats::KarlinParams gapped_;
  stats::GumbelParams gumbel_;
  int query_length_ = 0;
  std::int64_t db_length_ = 0;
  int db_num_seqs_ = 0;
  bool old_fsc_ = false;
  std::int64_t searchsp_override_ = 0;
};

// BLAST+'s score strings (CAlignFormatUtil::GetScoreString), printf padding kept: E < 1e-180 "0.0",
// < 1e-99 "%2.0le", < 0.0009 "%3.0le", < 0.1 "%4.3lf", < 1 "%3.2lf", < 10 "%2.1lf", else "%5.0lf"; bits
// > 9999 "%4.3le", > 99.9 the truncated integer as "%4.0ld", else "%4.1lf" (so " 9.6" keeps its space).
std::string format_evalue(double evalue);
std::string format_bit_score(double bits);
// The E-value of blastp 2.12's tabular reports (-outfmt 6 / 7, observed): "0.0" below 1e-180, "%.2e"
// below 0.0009, else format_evalue without its leading spaces. Their bit score is format_bit_score as is.
std::string tabular_evalue(double evalue);

// One HSP of a query-subject pair: coordinates 0-based, ends exclusive (BLAST's offset / end).
struct Hsp {
  int score = 0;
  int q_start = 0, q_end = 0;
  int s_start = 0, s_end = 0;
  double evalue = 0;
  double bit_score = 0;
  std::vector<EditRun> script;  // may be empty (preliminary HSPs)
  friend bool operator==(const Hsp&, const Hsp&) = default;
};

// ScoreCompareHSPs: score descending, then s_start ascending, s_end descending, q_start ascending,
// q_end descending. <0: a first.
int compare_hsps_by_score(const Hsp& a, const Hsp& b);
// s_EvalueCompareHSPs: E-value ascending (two E-values below 1e-180 are equal), then by score as above.
int compare_hsps_by_evalue(const Hsp& a, const Hsp& b);
void sort_hsps_by_score(std::vector<Hsp>& hsps);
void sort_hsps_by_evalue(std::vector<Hsp>& hsps);

// Blast_HSPListPurgeHSPsWithCommonEndpoints for blastp (always purging): of HSPs starting at the same
// (q_start, s_start) only the first in order (score desc, q_end desc, s_end desc) survives; then of the
// survivors ending at the same (q_end, s_end) only the first in order (score desc, q_start desc, s_start
// desc). The result is left ordered by (q_end, s_end, score desc, q_start desc, s_start desc) as BLAST
// leaves it; callers re-sort by score as BLAST does.
void purge_common_endpoints(std::vector<Hsp>& hsps);

// The traceback's final containment pass (interval tree, min_diag_separation 0): over a list sorted by
// score, an HSP is removed when an earlier kept HSP with score >= its score has both its start point
// (q_start, s_start) and its end point (q_end, s_end) inside [q_start, q_end] x [s_start, s_end]
// (closed on both sides). Order kept. Precondition, as in BLAST's final pass: no two HSPs share a start
// or an end point (purge_common_endpoints ran). Only then is BLAST's interval tree exact: its insertion
// drops HSPs sharing an endpoint with a better one and searches only one path, which this function
// does not model (the per-HSP containment test inside the traceback loop needs that model).
void remove_contained_hsps(std::vector<Hsp>& hsps);

// Blast_HSPListReapByEvalue: removes HSPs with evalue > expect, order kept.
void reap_by_evalue(std::vector<Hsp>& hsps, double expect);

// Blast_TrimHSPListByMaxHsps (-max_hsps; 0 = no limit): keeps the first max_hsps HSPs of the list as
// sorted after the traceback (by E-value / score).
void trim_to_max_hsps(std::vector<Hsp>& hsps, int max_hsps);

// Blast_HSPQueryCoverageTest (-qcov_hsp_perc; 0 = no filter): true when the HSP covers less than `percent`
// of the query: 100 * (q_end - q_start) / query_length, plus 0.5 below 99 (BLAST's rounding), < percent.
// BLAST applies it after the final hit lists are chosen (s_FilterBlastResults, after -max_hsps): HSPs that
// fail are removed and lists left empty are dropped, without refilling the lists.
bool below_query_coverage(const Hsp& hsp, int query_length, double percent);

// The HSPs of one query against one subject (BlastHSPList), hsps sorted (score / E-value).
struct SubjectHits {
  int oid = 0;  // subject ordinal id (database order, or -subject order)
  std::vector<Hsp> hsps;
  double best_evalue() const;  // min E-value over hsps (INT4_MAX when empty, as BLAST)
};

// s_EvalueCompareHSPLists: empty lists last; best E-value ascending (both < 1e-180 equal); then the
// first HSP's score descending; then oid DESCENDING (equal E-value and score: the later subject first).
int compare_hit_lists(const SubjectHits& a, const SubjectHits& b);

// Blast_HitListUpdate with hsplist_max = max_lists followed by Blast_HSPResultsSortByEvalue and
// s_BlastPruneExtraHits: since compare_hit_lists is a total order over distinct oids, the retained lists
// are the max_lists best by it, in that order, whatever the insertion order. Empty lists are dropped.
void select_hit_lists(std::vector<SubjectHits>& lists, std::size_t max_lists);

// GetPrelimHitlistSize: the preliminary stage keeps this many subjects per query for a final
// -max_target_seqs of hitlist_size (composition-based statistics off: min(max(2h, 10), h + 50) for a
// gapped search; with cbs on, 1050 for h <= 500, else 2h + 50).
int prelim_hitlist_size(int hitlist_size, bool composition_based_stats, bool gapped = true);

}  // namespace warpsearch::blast
