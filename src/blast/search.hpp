// search.hpp: the blastp search engine (BLAST+ 2.12, -comp_based_stats 0 to 3) for one query against a list
// of subject sequences held in memory, single-threaded. It chains the stage modules of src/blast.
//
// Contents:
//   BlastpOptions        the blastp options this engine honours (defaults = blastp's)
//   BlastpSetup          the per-query parameters derived from them (cutoffs, X-drops, lengths)
//   BlastpResult         the selected hit lists (SubjectHits: oid = subject index) plus the setup
//   QueryContext         one query prepared for the subject stages (stages 1-2 + lookup table), shared
//   PrelimHsp            a preliminary gapped HSP with the seed its extension started from
//   SubjectScanner       per-thread scratch running stages 3-4 on one subject
//   traceback_subject    stage 6 on one subject
//   blastp_search        the whole search, single-threaded, over subjects in memory (engine.hpp is the
//                        multi-query, multithreaded, streaming driver; both chain the same stages)
//   blast_scoring_matrix the matrix as BLAST+ scores it (U scores like C, O like X) as a ScoringMatrix
//   spouge_cutoff_score  BLAST_SpougeEtoS (E-value -> raw score cutoff with the finite-size correction)
//   tabular_hits         the results as TabularWriter input
//
// Pipeline, stage by stage (BLAST+ sources in parentheses):
//   1. Query: SEG (optional) replaces masked residues by X in the working copy; the lookup table indexes
//      only words outside the mask (seg.hpp, lookup.hpp). The ungapped Karlin block is the masked query's
//      (stats::query_ungapped_params); the gapped block and Gumbel block come from the tables.
//   2. Cutoffs (BlastHitSavingParametersUpdate): the hit-saving cutoff is BLAST_SpougeEtoS(prelim_evalue,
//      gapped, gumbel with db_length, query_length, n) with n = BlastSeqSrcGetMinSeqLen (blast_setup.c, when
//      a Gumbel block exists): for blastp -subject, max(shortest subject length, BLAST_SEQSRC_MINLENGTH = 10)
//      (observed: blastp's output matches this n exactly, and not the plain shortest length or 10). The
//      ungapped cutoff is min(gap trigger (22 bits), that cutoff) (blastp_ungapped_params).
//   3. Per subject: every subject word (offsets 0..len - w, index rolled 5 bits per letter) present in the
//      table feeds its query offsets, in the table's order, to TwoHitFinder; the saved ungapped HSPs are
//      sorted (sort_ungapped_hsps).
//   4. Preliminary gapped stage (BLAST_GetGappedScore): restricted (approximate) alignment when -evalue <=
//      10 and the first (best) ungapped HSP scores below (int)(0.68 * cutoff). For each ungapped HSP in
//      order: skipped if BLAST's interval tree of the gapped HSPs found so far for this subject reports one
//      containing it (score of the ungapped HSP <= the gapped score, its start and end points inside the
//      gapped HSP's closed ranges). The tree is re-implemented node for node (search.cpp, HspTree) because
//      it is not exact: insertion refuses an HSP sharing a start or end point with a better one on its
//      search path and unlinks worse ones found there, so some containing HSPs are invisible (a plain
//      containment scan loses weak hits of low-complexity queries that blastp reports). Else gapped_start
//      picks the seed and preliminary_gapped_alignment scores it; a restricted score in
//      [(int)(0.68 * cutoff), cutoff) is inconclusive: all of this subject's gapped HSPs are discarded and
//      the loop restarts unrestricted. Scores >= cutoff are kept with their seed.
//      Then purge_common_endpoints, sort by score, E-values (Spouge, actual subject length), reap by
//      prelim_evalue (= -evalue, x 5 with -comp_based_stats 2 or 3).
//   5. Preliminary hit list: select_hit_lists with prelim_hitlist_size(max_target_seqs, cbs != 0).
//   Query splitting (split.hpp): in a BLAST query batch of 19,800 residues or more (blastp_search: a query
//   that long), stages 1-5 run per piece of the query in BLAST+'s chunks, each piece a query of its own,
//   and the pieces' preliminary lists are merged (merge_chunk_hits) before stage 6 on the whole query.
//   With -comp_based_stats 1-3, stages 6 and 7 are the composition-based redo instead (kappa.hpp:
//   redo_subject per listed subject, finish_composition_redo for the final lists); QueryContext::create
//   then also builds the query's composition data (compo()). Otherwise:
//   6. Traceback (Blast_TracebackFromHSPList), per subject, HSPs in score order: skipped if contained
//      (same tree as 4, holding the traceback HSPs kept so far, tested with the preliminary score and
//      ranges); the seed is the preliminary one (or, for a
//      seed of (0, 0), which BLAST treats as "no seed", traceback_offsets: none -> dropped);
//      gapped_alignment_with_traceback with the final X-drop. Then purge_common_endpoints, sort by score,
//      remove_contained_hsps, E-values, reap by -evalue, bit scores, sort by E-value, -max_hsps.
//   7. Final hit lists: select_hit_lists(max_target_seqs).
//
// Not handled here: databases / streaming subjects, multithreading (engine.hpp); ungapped searches.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "blast/composition.hpp"
#include "blast/gapped.hpp"
#include "blast/hsp.hpp"
#include "blast/lookup.hpp"
#include "blast/seg.hpp"
#include "blast/tabular.hpp"
#include "blast/ungapped.hpp"
#include "stats/karlin.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

struct BlastpOptions {
  std::string matrix = "BLOSUM62";  // built-in name or NCBI file (ScoringMatrix::load)
  GapCosts gaps{11, 1};
  double evalue = 10;
  int word_size = 3;
  int threshold = -1;  // < 0: blastp_default_threshold(matrix); 0: exact words only (-threshold below 1)
  bool seg = false;    // -seg yes (default parameters)
  int max_target_seqs = 500;
  // false (blastp's rule): the preliminary stage keeps prelim_hitlist_size(max_target_seqs) subjects and
  // the final list is the best max_target_seqs of those; true (-exact_max_target_seqs): no preliminary cut,
  // so the final list is the best max_target_seqs by E-value (then score) of the whole database.
  bool exact_max_target_seqs = false;
  int max_hsps = 0;  // 0: no limit
  // -qcov_hsp_perc (0-100; 0: none): HSPs covering less of the query are dropped from the final lists
  // (below_query_coverage), and lists left empty with them.
  double qcov_hsp_perc = 0;
  int window = 0;  // two-hit window; 0: blastp_default_window(matrix)
  double xdrop_ungap_bits = 7;
  double xdrop_gap_bits = 15;
  double xdrop_gap_final_bits = 25;
  // Subject-set totals used for the statistics (db_length, number of sequences: 0 = computed from the
  // subjects given) and the "minimum subject length" of the hit-saving cutoff (0 = max(shortest subject,
  // 10), blastp -subject's value; what a BLAST database reports is not yet checked).
  std::int64_t db_length = 0;
  std::int64_t db_num_seqs = 0;
  int min_subject_length = 0;
  // -comp_based_stats: 0 off, 1 composition-based statistics, 2 conditional compositional score matrix
  // adjustment (blastp's default; kappa.hpp). BlastpOptions' default stays 0 (the plain engine).
  int comp_based_stats = 0;
  // -searchsp (blastp sets BLAST's OLD_FSC whenever it is given, even as 0): Karlin-Altschul E-values
  // K * searchsp * exp(-lambda * S) over the effective search space instead of Spouge's finite-size
  // correction, the hit-saving cutoff from them (BLAST_Cutoffs), no 5 x -evalue preliminary stage with
  // composition-based statistics 2 and 3, and the report's Karlin blocks without the Gumbel parameters.
  // searchsp > 0 replaces the effective search space of every query (the length adjustment is still
  // computed, for composition-based statistics); 0 computes it.
  bool old_fsc = false;
  std::int64_t searchsp = 0;
};

struct BlastpSetup {
  int threshold = 0;
  int window = 0;                // the two-hit window used (options.window or the matrix's default)
  stats::KarlinParams ungapped;  // the (masked) query's ungapped block
  stats::KarlinParams gapped;
  int cutoff_score = 0;         // hit-saving cutoff (Spouge E -> S; Karlin-Altschul with old_fsc)
  int ungapped_cutoff = 0;      // two-hit extension save cutoff
  int ungapped_x_dropoff = 0;   // raw
  XDropoffs gapped_x_dropoffs;  // raw
  EffectiveLengths lengths;
  std::vector<Interval> mask;  // SEG mask of the query (empty without seg)
  // The preliminary stage's E-value threshold (BLAST's hit_params->prelim_evalue): -evalue, times 5 with
  // comp_based_stats 2 or 3 unless old_fsc (the hit-saving cutoff is computed from it too).
  double prelim_evalue = 0;
};

struct SearchCounts {
  std::int64_t word_hits = 0;
  std::int64_t ungapped_extensions = 0;
  std::int64_t ungapped_saved = 0;
  std::int64_t gapped_extensions = 0;
  std::int64_t prelim_hsps = 0;
  std::int64_t redone_subjects = 0;     // restricted alignment inconclusive -> recomputed
  std::int64_t composition_redone = 0;  // subjects realigned by the composition-based traceback
};

struct BlastpResult {
  std::vector<SubjectHits> hits;  // oid = index into the subjects; hsps sorted by E-value, with scripts
  // With comp_based_stats: the matrix rule of each HSP (adjust_rules[i][k] for hits[i].hsps[k]; kappa.hpp);
  // empty otherwise.
  std::vector<std::vector<compo::MatrixAdjustRule>> adjust_rules;
  BlastpSetup setup;
  SearchCounts counts;
};

struct CompoQueryData;  // kappa.hpp

// A preliminary gapped HSP (score, ranges; E-value set) with the seed its extension started from
// (BLAST's gapped_start; (0, 0) means "none").
struct PrelimHsp {
  Hsp hsp;
  SeedPoint seed;
};

// One query prepared for searching: the working copy (SEG-masked residues replaced by X), the setup
// (statistics, cutoffs), the BLAST score table, the E-value calculator and the lookup table. Immutable
// after create(); shared read-only by all threads. Movable (the lookup table and views stay valid).
class QueryContext {
 public:
  // db_length / db_num_seqs / min_length: the subject-set totals (see BlastpOptions). Throws
  // Error(kUsage) for a matrix / gap-cost pair without BLAST+ gapped and Gumbel parameters or an invalid
  // word size. searchable() is false for an empty query, one without ungapped statistics (all X) or subjects
  // without residues (setup() then holds the statistics blastp reports).
  static QueryContext create(Residues query, const BlastpOptions& options, std::int64_t db_length,
                             std::int64_t db_num_seqs, int min_length);

  QueryContext(QueryContext&&) noexcept = default;
  QueryContext& operator=(QueryContext&&) noexcept = default;
  QueryContext(const QueryContext&) = delete;
  QueryContext& operator=(const QueryContext&) = delete;

  bool searchable() const { return searchable_; }
  Residues query() const { return query_; }                    // working copy (masked residues = X)
  Residues original_query() const { return original_query_; }  // as given
  const BlastpOptions& options() const { return options_; }
  const BlastpSetup& setup() const { return setup_; }
  const ScoringMatrix& matrix() const { return *matrix_; }    // as loaded (statistics)
  const ScoringMatrix& scoring() const { return *scoring_; }  // BLAST's score table (blast_scoring_matrix)
  const EvalueCalculator& calc() const { return *calc_; }
  const AaLookupTable& table() const { return table_; }
  const UngappedParams& ungapped_params() const { return ungapped_params_; }
  // The composition-based statistics data (kappa.hpp); nullptr when comp_based_stats is 0 or the query is
  // not searchable.
  const CompoQueryData* compo() const { return compo_.get(); }

 private:
  QueryContext() = default;

  bool searchable_ = false;
  std::vector<std::uint8_t> query_;
  std::vector<std::uint8_t> original_query_;
  BlastpOptions options_;
  BlastpSetup setup_;
  std::optional<ScoringMatrix> matrix_;
  std::optional<ScoringMatrix> scoring_;
  std::optional<EvalueCalculator> calc_;
  AaLookupTable table_;
  UngappedParams ungapped_params_;
  std::shared_ptr<const CompoQueryData> compo_;
};

// Per-thread scratch for stages 3-4 (word scan, two-hit ungapped extension, preliminary gapped stage)
// of one query; the context must outlive it and stay where it is (no move). run() results depend only on the
// query and the subject.
class SubjectScanner {
 public:
  explicit SubjectScanner(const QueryContext& context);
  // The subject's preliminary HSPs (sorted by score, E-values set, reaped by -evalue); counts added.
  std::vector<PrelimHsp> run(Residues subject, SearchCounts& counts);

 private:
  const QueryContext* context_;
  TwoHitFinder finder_;
  std::vector<UngappedHsp> ungapped_;
};

// Stage 4 for one subject given its ungapped HSPs sorted by sort_ungapped_hsps: the preliminary HSPs
// (sorted by score, E-values set, reaped by -evalue); counts.gapped_extensions / prelim_hsps added.
std::vector<PrelimHsp> preliminary_hsps(const QueryContext& context, Residues subject,
                                        const std::vector<UngappedHsp>& ungapped, SearchCounts& counts);

// Stage 6 for one subject: the final HSPs (traceback, E-values, bit scores, sorted by E-value, -max_hsps).
std::vector<Hsp> traceback_subject(const QueryContext& context, Residues subject,
                                   const std::vector<PrelimHsp>& prelim);

// The search. query / subjects: protein codes (alphabet.hpp). Throws Error(kUsage) for a matrix /
// gap-cost pair without BLAST+ gapped and Gumbel parameters or an invalid word size. A query for which
// BLAST+ cannot compute ungapped statistics (e.g. all X) gives no hits.
BlastpResult blastp_search(Residues query, std::span<const Residues> subjects, const BlastpOptions& options);

// How many preliminary hit lists a query keeps: prelim_hitlist_size(max_target_seqs, comp_based_stats != 0),
// or all of them (SIZE_MAX) with exact_max_target_seqs.
std::size_t prelim_list_limit(const BlastpOptions& options);

// The "minimum subject length" blastp -subject uses for the hit-saving cutoff: max(shortest subject,
// BLAST_SEQSRC_MINLENGTH = 10) (observed; see stage 2 above). INT_MAX-floored to 10 for no subjects.
int subject_set_min_length(std::span<const Residues> subjects);

// The matrix with BLAST+'s score table (blast_score_table) as a ScoringMatrix, same name.
ScoringMatrix blast_scoring_matrix(const ScoringMatrix& matrix);

// BLAST_SpougeEtoS(e0, gapped, gumbel with db_length, m, n): the largest score whose Spouge E-value
// exceeds e0 found by BLAST's doubling + bisection from b = max((int)(ln(db_length / e0) / lambda), 2)
// (db_length 0 counts as 1); 0 when E(b) <= e0 already.
int spouge_cutoff_score(double e0, const stats::KarlinParams& gapped, const stats::GumbelParams& gumbel,
                        int query_length, int subject_length, std::int64_t db_length);

// The results as TabularWriter hits (subject index = oid), in output order.
std::vector<TabularHit> tabular_hits(const std::vector<SubjectHits>& hits);

// -qcov_hsp_perc on a query's final hit lists (s_FilterBlastResults): HSPs below_query_coverage removed,
// lists left empty dropped; `rules` (composition-based statistics: one per HSP; may be empty) follow.
void reap_by_query_coverage(std::vector<SubjectHits>& lists,
                            std::vector<std::vector<compo::MatrixAdjustRule>>& rules, int query_length,
                            double percent);

// HSPs of score 0 removed from a query's final hit lists, lists left empty dropped (rules follow): a
// composition-based redo can normalize a small scaled score to 0, and blastp's conversion of the results
// to alignments (s_BlastHSP2SeqAlign) skips such HSPs. With Spouge's E-values they never reach the output;
// with the old statistics over a small -searchsp they can.
void drop_zero_score_hsps(std::vector<SubjectHits>& lists,
                          std::vector<std::vector<compo::MatrixAdjustRule>>& rules);

}  // namespace warpsearch::blast
