// search.hpp: the blastp search engine (BLAST+ 2.12, -comp_based_stats 0) for one query against a list of
// subject sequences held in memory, single-threaded. It chains the stage modules of src/blast.
//
// Contents:
//   BlastpOptions        the blastp options this engine honours (defaults = blastp's)
//   BlastpSetup          the per-query parameters derived from them (cutoffs, X-drops, lengths)
//   BlastpResult         the selected hit lists (SubjectHits: oid = subject index) plus the setup
//   blastp_search        the search
//   blast_scoring_matrix the matrix as BLAST+ scores it (U scores like C, O like X) as a ScoringMatrix
//   spouge_cutoff_score  BLAST_SpougeEtoS (E-value -> raw score cutoff with the finite-size correction)
//   tabular_hits         the results as TabularWriter input
//
// Pipeline, stage by stage (BLAST+ sources in parentheses):
//   1. Query: SEG (optional) replaces masked residues by X in the working copy; the lookup table indexes
//      only words outside the mask (seg.hpp, lookup.hpp). The ungapped Karlin block is the masked query's
//      (stats::query_ungapped_params); the gapped block and Gumbel block come from the tables.
//   2. Cutoffs (BlastHitSavingParametersUpdate): the hit-saving cutoff is BLAST_SpougeEtoS(evalue, gapped,
//      gumbel with db_length, query_length, n) with n = BlastSeqSrcGetMinSeqLen (blast_setup.c, when a
//      Gumbel block exists): for blastp -subject, max(shortest subject length, BLAST_SEQSRC_MINLENGTH = 10)
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
//      -evalue (prelim_evalue == evalue without CBS).
//   5. Preliminary hit list: select_hit_lists with prelim_hitlist_size(max_target_seqs).
//   6. Traceback (Blast_TracebackFromHSPList), per subject, HSPs in score order: skipped if contained
//      (same tree as 4, holding the traceback HSPs kept so far, tested with the preliminary score and
//      ranges); the seed is the preliminary one (or, for a
//      seed of (0, 0), which BLAST treats as "no seed", traceback_offsets: none -> dropped);
//      gapped_alignment_with_traceback with the final X-drop. Then purge_common_endpoints, sort by score,
//      remove_contained_hsps, E-values, reap by -evalue, bit scores, sort by E-value, -max_hsps.
//   7. Final hit lists: select_hit_lists(max_target_seqs).
//
// Not handled (yet): composition-based statistics 1/2/3, databases / streaming subjects, multithreading,
// -searchsp / -dbsize overrides of the subject totals beyond BlastpOptions' fields, ungapped searches.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "blast/gapped.hpp"
#include "blast/hsp.hpp"
#include "blast/seg.hpp"
#include "blast/tabular.hpp"
#include "stats/karlin.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

struct BlastpOptions {
  std::string matrix = "BLOSUM62";  // built-in name or NCBI file (ScoringMatrix::load)
  GapCosts gaps{11, 1};
  double evalue = 10;
  int word_size = 3;
  int threshold = 0;  // 0: blastp_default_threshold(matrix)
  bool seg = false;   // -seg yes (default parameters)
  int max_target_seqs = 500;
  int max_hsps = 0;  // 0: no limit
  int window = 40;   // two-hit window
  double xdrop_ungap_bits = 7;
  double xdrop_gap_bits = 15;
  double xdrop_gap_final_bits = 25;
  // Subject-set totals used for the statistics (db_length, number of sequences: 0 = computed from the
  // subjects given) and the "minimum subject length" of the hit-saving cutoff (0 = max(shortest subject,
  // 10), blastp -subject's value; what a BLAST database reports is not yet checked).
  std::int64_t db_length = 0;
  int db_num_seqs = 0;
  int min_subject_length = 0;
};

struct BlastpSetup {
  int threshold = 0;
  stats::KarlinParams ungapped;  // the (masked) query's ungapped block
  stats::KarlinParams gapped;
  int cutoff_score = 0;         // hit-saving cutoff (Spouge E -> S)
  int ungapped_cutoff = 0;      // two-hit extension save cutoff
  int ungapped_x_dropoff = 0;   // raw
  XDropoffs gapped_x_dropoffs;  // raw
  EffectiveLengths lengths;
  std::vector<Interval> mask;  // SEG mask of the query (empty without seg)
};

struct SearchCounts {
  std::int64_t word_hits = 0;
  std::int64_t ungapped_extensions = 0;
  std::int64_t ungapped_saved = 0;
  std::int64_t gapped_extensions = 0;
  std::int64_t prelim_hsps = 0;
  std::int64_t redone_subjects = 0;  // restricted alignment inconclusive -> recomputed
};

struct BlastpResult {
  std::vector<SubjectHits> hits;  // oid = index into the subjects; hsps sorted by E-value, with scripts
  BlastpSetup setup;
  SearchCounts counts;
};

// The search. query / subjects: protein codes (alphabet.hpp). Throws Error(kUsage) for a matrix /
// gap-cost pair without BLAST+ gapped and Gumbel parameters or an invalid word size. A query for which
// BLAST+ cannot compute ungapped statistics (e.g. all X) gives no hits.
BlastpResult blastp_search(Residues query, std::span<const Residues> subjects, const BlastpOptions& options);

// The matrix with BLAST+'s score table (blast_score_table) as a ScoringMatrix, same name.
ScoringMatrix blast_scoring_matrix(const ScoringMatrix& matrix);

// BLAST_SpougeEtoS(e0, gapped, gumbel with db_length, m, n): the largest score whose Spouge E-value
// exceeds e0 found by BLAST's doubling + bisection from b = max((int)(ln(db_length / e0) / lambda), 2)
// (db_length 0 counts as 1); 0 when E(b) <= e0 already.
int spouge_cutoff_score(double e0, const stats::KarlinParams& gapped, const stats::GumbelParams& gumbel,
                        int query_length, int subject_length, std::int64_t db_length);

// The results as TabularWriter hits (subject index = oid), in output order.
std::vector<TabularHit> tabular_hits(const std::vector<SubjectHits>& hits);

}  // namespace warpsearch::blast
