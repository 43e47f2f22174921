// kappa.hpp: blastp's traceback stage with composition-based statistics (-comp_based_stats 1, 2, 3), as
// BLAST+ 2.12 runs it (core/blast_kappa.c Blast_RedoAlignmentCore_MT, composition_adjustment/
// redo_alignment.c Blast_RedoOneMatch, compo_heap.c), split so that the expensive part runs on any thread.
//
// Contents:
//   CompoQueryData           per-query data of the redo (query composition, scaled matrix data, ...);
//                            QueryContext::create builds it when comp_based_stats != 0
//   make_compo_query_data    builds it
//   SubjectRedo, redo_subject  the redo of one subject's preliminary HSPs (pure, thread-safe)
//   RedoQueryInput, finish_composition_redo   the sequential part: BLAST's heap of best matches, including
//                            which subjects BLAST skips, and the final hit lists
//
// The contract (engine.hpp's driver and blastp_search both follow it):
//   1. Preliminary stage as for comp_based_stats 0, with the cutoffs and prelim E-value QueryContext sets
//      for the mode (modes 2 and 3: 5 x -evalue) and prelim_hitlist_size(max_target_seqs, true) lists per
//      query, ordered by select_hit_lists (BLAST's order: best prelim E-value first).
//   2. redo_subject(context, subject, prelim HSPs) for any or all of those lists, in any order, on any
//      thread: the result depends only on the query, the subject and the subject-set totals.
//   3. finish_composition_redo over the query batch, once, sequentially: it walks each query's lists in
//      BLAST's order and simulates Blast_RedoAlignmentCore's BlastCompo_Heap per query. A list that BLAST
//      would skip (never with BlastpOptions::exact_max_target_seqs) (BlastCompo_EarlyTermination: every
//      query's heap of the batch holds max_target_seqs matches with E <= 0.002 and the list's prelim best
//      E-value > 5 x 0.002) has its redo result ignored (it need not have been computed: the callback is not
//      called for it). Lists whose redone best E-value exceeds -evalue are dropped, the others enter the heap
//      as BLAST inserts them; the heap's content then gives the final lists
//      (select_hit_lists(max_target_seqs), -max_hsps applied).
//   Query batches: BLAST runs the redo once per batch of concatenated queries, and BLAST's early
//   termination needs the heaps of ALL queries of the batch filled, so it can only trigger in the batch's
//   last query. Pass the queries that BLAST+ batches together (blastp_query_batches: blastp reads queries
//   until a batch holds >= 10000 residues, with -subject as with -db) to be exact; one query at a time is
//   exact for single-query batches (blastp_search does this). The difference matters only when a skipped
//   list would have entered the final list, which needs a redone E-value < 0.002 from a preliminary one
//   > 0.01 at a -max_target_seqs small enough to be filled by E <= 0.002 matches (not seen in the tests).
//
// What the redo of one subject does (Blast_RedoOneMatch, protein case: one window, the whole subject):
//   for each preliminary HSP in order (score order): a near-identity pretest (score per position >= 1.74
//   bits and subject range >= min(query length, 50)) decides whether the subject copy is SEG-masked
//   (window 10, 1.8, 2.1) — unless the full near-identity test (s_TestNearIdentical on the FIRST HSP's
//   ranges: > 96 % identities (2.12's threshold) by BLAST's extension and 8-mer heuristics) says the pair is
//   nearly identical; an HSP contained in an already redone alignment scoring >= 2 bits more is skipped; at
//   the first HSP (or when the near-identity status flips) the subject composition is read and the matrix
//   adjusted (compo::adjust_scores: mode 1 rescaling, mode 2 the conditional relative-entropy adjustment,
//   mode 3 the unconditional one; scale 32); the alignment is recomputed from the preliminary seed with
//   traceback (ALIGN_EX with the adjusted matrix, gap costs x 32, X-drop max(25 bits, ...) in scaled units)
//   and kept unless an alignment of at least its score shares an end point (s_WithDistinctEnds). Then: sort
//   by score, drop contained HSPs, E-values from the scaled scores (Spouge with lambda / 32), reap by
//   -evalue, and, when the best E-value passes -evalue, scores divided by 32 and rounded, bit scores from the
//   rounded scores. A subject left without a true amino acid (all masked by SEG) cannot be adjusted: BLAST
//   then realigns its later HSPs with whatever matrix the thread's previous subject left behind. Every such
//   alignment is over X letters only (X scores are negative in every matrix BLAST can have there), so it
//   scores <= 0 and BLAST keeps nothing; here those HSPs are not realigned (SubjectRedo::stale_matrix_hsps
//   counts them; none occurred in 500 queries x DB20k). -unified_p 1 (composition p-values) is not supported
//   (blastp's default is 0).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "blast/composition.hpp"
#include "blast/hsp.hpp"
#include "blast/search.hpp"
#include "stats/blast_stats.hpp"
#include "stats/karlin.hpp"

namespace warpsearch::blast {

// Per-query data of the redo, immutable once built (shared read-only by threads).
struct CompoQueryData {
  compo::AdjustMode mode = compo::AdjustMode::kNone;
  compo::AaComposition composition;       // the working (SEG-masked) query's, NCBIstdaa
  std::vector<std::uint8_t> align_query;  // working query with U replaced by C (BLAST's redo copy)
  std::vector<std::uint64_t> words;       // s_CreateWordArray of the working query (8-mers, 5 bits a letter)
  compo::MatrixInfo matrix_info;          // start matrix at lambda_ideal / 32
  compo::CompositionWorkspace workspace;  // joint probabilities (modes 2 and 3)
  stats::KarlinParams scaled_gapped;      // gapped block with lambda / 32
  stats::GumbelParams gumbel;
  std::int64_t db_length = 0;
  bool old_fsc = false;           // BlastpOptions::old_fsc: Karlin-Altschul E-values over search_space
  std::int64_t search_space = 0;  // the query's effective search space (BlastpSetup::lengths)
  int gap_open = 0;               // scaled: BLAST_Nint(open * 32)
  int gap_extend = 0;             // scaled
  int x_dropoff = 0;              // (int) max(xdrop_gap_final bits * ln 2 / scaled lambda, final raw X-drop)
  double near_identical_cutoff = 0;  // 1.74 bits in scaled score units per position
  double scale = 32;                 // SCALING_FACTOR
};

// Builds the redo data for `query` (the working copy, masked residues = X) with the given setup. Throws
// Error(kUsage) when BLAST+ has no composition data for the matrix (it supports the eight built-ins).
std::shared_ptr<const CompoQueryData> make_compo_query_data(Residues query, const BlastpOptions& options,
                                                            const ScoringMatrix& matrix,
                                                            const BlastpSetup& setup,
                                                            const stats::GumbelParams& gumbel,
                                                            std::int64_t db_length);

// The redo of one subject (see above).
struct SubjectRedo {
  std::vector<Hsp> hsps;  // final HSPs in BLAST's order (scaled score order); empty if none passes -evalue
  double best_evalue = std::numeric_limits<double>::max();  // best E-value (from the scaled scores)
  int best_score = 0;  // the first HSP's score in scaled units (the heap's tie-break)
  // The rule of the matrix that scored each HSP (parallel to hsps): BLAST's comp_adjustment_method, which
  // -outfmt 0 prints: kScaleOldMatrix -> "Composition-based stats.", a relative-entropy rule ->
  // "Compositional matrix adjust.".
  std::vector<compo::MatrixAdjustRule> rules;
  int stale_matrix_hsps = 0;  // HSPs BLAST would align with a stale matrix (not realigned, see above)
  int adjustments = 0;        // matrix adjustments made
  int alignments = 0;         // gapped alignments recomputed
};

// Pure and thread-safe: any subject of the preliminary list, any thread. context.compo() must be set
// (comp_based_stats != 0). prelim: the subject's preliminary HSPs as SubjectScanner::run returns them.
SubjectRedo redo_subject(const QueryContext& context, Residues subject, const std::vector<PrelimHsp>& prelim);

// One query's input to finish_composition_redo.
struct RedoQueryInput {
  // The query's preliminary hit lists in BLAST's order (select_hit_lists with prelim_hitlist_size): oid and
  // the preliminary HSPs (only their E-values are read).
  std::span<const SubjectHits> prelim;
  // The redo of prelim[i]; called at most once per i, in order, only for lists BLAST does not skip.
  std::function<SubjectRedo(std::size_t)> redo;
};

// One query's final hit lists, with the matrix rule of every HSP (rules[i][k] for hits[i].hsps[k]).
struct RedoneQuery {
  std::vector<SubjectHits> hits;
  std::vector<std::vector<compo::MatrixAdjustRule>> rules;
};

// The final hit lists of each query of a batch (same order as `batch`), as BLAST+ 2.12 reports them.
std::vector<RedoneQuery> finish_composition_redo(std::span<const RedoQueryInput> batch,
                                                 const BlastpOptions& options);

// BLAST+'s query batches for blastp (CBlastInput::GetNextSeqBatch with GetQueryBatchSize(eBlastp) = 10000
// residues, the BATCH_SIZE environment variable unset): consecutive queries, a batch closing as soon as its
// total length reaches 10000. Returns the index of each batch's first query followed by lengths.size().
std::vector<std::size_t> blastp_query_batches(std::span<const std::size_t> lengths);
inline constexpr std::size_t kBlastpQueryBatchResidues = 10000;  // GetQueryBatchSize(eBlastp)

// BLAST's inclusion threshold for the heap (PSI_INCLUSION_ETHRESH, blastp's -inclusion_ethresh default).
inline constexpr double kCompoHeapEvalueCutoff = 0.002;

}  // namespace warpsearch::blast
