// engine.hpp: the blastp driver: a batch of queries against a database (FASTA/FASTQ file, packed
// warpsearch database or BLAST+ database, anything SequenceSource opens) streamed in batches of subjects,
// on a thread pool, with results that do not depend on the thread count or the batch size.
//
// Contents:
//   DatabaseTotals      the subject-set figures the statistics use (length, count, "minimum length")
//   database_totals     reads them from a database index, or by one streaming pass over a sequence file
//   BlastpQuery         one query: defline and residues (protein codes)
//   BlastpRunOptions    search options + threads + subject batch size
//   BlastpSubject       a subject that has hits: database id, defline, length, residues
//   BlastpQueryResult   one query's setup and final hit lists (SubjectHits::oid = database id)
//   BlastpRunResult     all queries' results + the subjects they refer to + counters
//   blastp_run          the search
//
// Data flow: the database is read once per call, in batches of about batch_residues residues, by a
// reader thread that reads ahead of the search (while fewer than 512 Mi residues wait). Each batch is
// split into (query, subject range) tasks that run the scan, ungapped and preliminary gapped stages
// (search.hpp stages 1-4). Each query keeps its preliminary hit lists in a bounded selection with
// compare_hit_lists' total order (best prelim_hitlist_size lists), so the selection never depends on the
// order in which batches or tasks finish. The residues of subjects that are in some query's current
// selection are kept (copied for a sequence file; a database is re-read by id); when the scan ends, the
// traceback stage (or the composition-based redo) runs per (query, subject) on the pool, and the final
// hit lists are selected per query. Memory: the queries, the batches read ahead and the one searched, and
// the selected subjects.
//
// Query splitting (split.hpp): the queries are taken as BLAST+ batches them (blastp_query_batches, from the
// call's first query: the CLI cuts its calls at batch boundaries). In a batch of 19,800 residues or more,
// the scan units are the queries' pieces in BLAST+'s chunks, each with its own context and selection;
// before the traceback a split query's units are merged into its selection as BLAST+ merges them.
//
// With GPUs (options.gpus, or options.resolve_gpus, called once the reader has started so that the
// database is read while the devices start up): batches of gpu_batch_residues go round robin to two
// GpuStages per device (one host thread and one CUDA stream each, the queries' tables resident), one batch
// in flight per stage, while the host runs, on the pool, preliminary_hsps for the pairs the GPU screen
// passed on (ScreenResult::kFull) and the CPU scan for subjects too long for the GPU; then the same
// selection. Memory: up to 2 x devices batches in flight + the read-ahead.
//
// Determinism: every per-(query, subject) computation is a pure function of the query, the subject and
// the totals; selection uses a total order; so any thread count, batch size and MPI rank count give
// identical results.
//
// MPI (options.comm, docs/MPI.md): each rank scans its part of the database and prunes its selections
// to the limit; the union of the parts' selections holds the database's best entries, so rank 0, which
// merges and prunes them, selects exactly what one process does. Stage 6 (traceback or composition-based
// redo, pure per (query, subject)) then runs on the rank holding each selected subject, and rank 0 builds
// the final lists from the results.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "blast/composition.hpp"
#include "blast/hsp.hpp"
#include "blast/search.hpp"
#include "blast/subject_ids.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::dist {
class Comm;  // warpsearch/dist.hpp
}  // namespace warpsearch::dist

namespace warpsearch::blast {

struct DatabaseTotals {
  std::int64_t length = 0;     // residues of all subjects
  std::int64_t sequences = 0;  // number of subjects (empty ones included)
  int min_length = 0;          // the "minimum subject length" n of the hit-saving cutoff (search.hpp)
  // A -subject file read as blastp reads it (subject_reader_options(true)): its empty records (blastp warns
  // "Subject sequence contains no data" and counts them, length 0, in the totals) and the '-' skipped in
  // its sequences. The first kMaxNotedEmpty empty records are noted as (1-based number, defline).
  std::int64_t empty_sequences = 0;
  std::vector<std::pair<std::int64_t, std::string>> first_empty{};
  std::uint64_t hyphens = 0;
  std::uint64_t first_hyphen_line = 0;
};
inline constexpr std::size_t kMaxNotedEmpty = 10;

// Totals of the database at `path` (as SequenceSource::open reads it, with
// subject_reader_options(subject_mode)). A packed or BLAST+ database gives them from its index (a BLAST+
// database: its alias statistics, as blastp); a sequence file is read once (subject_reader_options).
// min_length: for a database (blastp -db), BLAST_SEQSRC_MINLENGTH = 10, as CSeqDB reports no shortest length
// (seqdbimpl.cpp: the alias MinLength is 0 for a plain database, then 10; BlastDb::cutoff_min_length for a
// BLAST+ database, which honours an alias MIN_SEQ_LENGTH); with subject_mode (blastp -subject: the file is
// the subject set), max(shortest, 10) (subject_set_min_length). Throws as SequenceSource does (kIo, kFormat
// with file and line).
DatabaseTotals database_totals(const std::string& path, bool subject_mode = false);

// How subject files are read: protein, letters outside the alphabet are errors (file:line). With
// subject_mode (blastp -subject), as blastp reads them: text before the first header and a header without a
// name give unnamed records (reported as blastp does: sseqid "unnamed", sallseqid "Subject_N", title
// "unnamed protein product"), empty records are subjects without hits, and '-' is skipped.
ReaderOptions subject_reader_options(bool subject_mode = false);

struct BlastpQuery {
  std::string defline;                 // FASTA header without '>' ("name description")
  std::vector<std::uint8_t> residues;  // protein codes (alphabet.hpp)
  // The id the reports print for a query whose defline has none (a FASTA record without a header line, or
  // ">" alone): blastp's "Query_N", N its 1-based number in the query file. Empty for a named query.
  std::string unnamed_id{};
};

struct BlastpRunOptions {
  // db_num_seqs / min_subject_length: from the totals; db_length too unless > 0 (blastp -dbsize: the database
  // length the statistics use).
  BlastpOptions search;
  unsigned threads = 1;                    // 0: all hardware threads
  std::size_t batch_residues = 16u << 20;  // subjects read per batch (about; at least one sequence)
  // CUDA devices for the seed stages (gpu_stage.hpp: word hits, two-hit, ungapped, preliminary screen);
  // empty: everything on the CPU. Results are identical either way. Needs a CUDA build (else kGpu).
  std::vector<int> gpus;
  // When set, called once (on the calling thread) after the database reader has started, and its result
  // replaces gpus: the database is read while the devices start up (the CLI probes them in the background).
  std::function<std::vector<int>()> resolve_gpus;
  // When set, called (on the calling thread) with the GPUs used once their work is done and every GPU
  // resource of the search is freed, before the CPU's final stages: the CLI starts release_devices there,
  // so that the driver's teardown overlaps the traceback and the output. Not called without GPUs.
  std::function<void(std::span<const int> gpus)> gpus_done;
  // Batch size when GPUs may be used: at most this, and smaller for a small database or part (at least 8
  // batches of at least 4 Mi residues), so that the GPU and the CPU work overlap.
  std::size_t gpu_batch_residues = 64u << 20;
  // A FASTA file's subject deflines: with subject_mode (blastp -subject) its header lines as written (the
  // reports cut them at their first control character, as blastp's FASTA reader); otherwise (-db) as
  // makeblastdb stores them in a database's titles, each tab three spaces. Packed databases: name and
  // description, tabs as with -db.
  bool subject_mode = false;
  // MPI ranks sharing the search (warpsearch/dist.hpp; nullptr or one rank: this process alone). Every rank
  // calls blastp_run with the same queries, database and totals; each scans its part of the database
  // (dist/shard.hpp: contiguous, residue-balanced); rank 0 merges the parts' preliminary selections; each
  // rank traces the selected subjects of its part; rank 0 makes the final selection and alone returns hits
  // (the other ranks: setups only). The hits are those of a one-process run for any number of ranks. An
  // error on any rank is raised on all of them (dist::CollectiveError).
  const dist::Comm* comm = nullptr;
};

// Where the time went (wall clock, seconds). With GPUs the phases overlap: `seed` is the time the host
// waited for the GPUs' results beyond the work it did meanwhile.
struct BlastpTimings {
  double setup = 0;      // query contexts, lookup tables, GPU uploads
  double read = 0;       // reading database batches
  double seed = 0;       // CPU: scan + ungapped + preliminary gapped; GPU: waiting for the seed stage
  double prelim = 0;     // GPU path: CPU preliminary gapped stage of the pairs the screen passed on
  double traceback = 0;  // traceback or composition-based redo, final selection
  double total = 0;
  double gpu_scan = 0;              // GPU kernel time of the scan (sum over devices)
  double gpu_screen = 0;            // GPU time of sorting, grouping and screening
  double gpu_upload = 0;            // host: putting batches on the devices (sum over stages)
  double gpu_download = 0;          // host: unpacking the stages' results (sum over stages)
  std::int64_t gpu_pairs = 0;       // (query, subject) pairs with saved ungapped HSPs
  std::int64_t gpu_full_pairs = 0;  // ... passed to the CPU's preliminary stage
  // When each step of the scan ended, seconds after it began (the last scan of the call): resolve_gpus
  // returned, the GPU stages were set up, the last batch was read, the last batch's seeds were selected.
  double devices_at = 0;
  double stages_at = 0;
  double read_at = 0;
  double seeds_at = 0;
};

struct BlastpSubject {
  std::string defline;  // "name description" as read
  std::vector<std::uint8_t> residues;
  // The ids and title printed apart, for a BLAST+ database made with -parse_seqids (subject_ids.hpp).
  std::optional<ParsedSubjectIds> ids;
};

struct BlastpQueryResult {
  BlastpSetup setup;
  std::vector<SubjectHits> hits;  // final hit lists in output order; oid = database id
  // With comp_based_stats: the matrix rule of each HSP (adjust_rules[i][k] for hits[i].hsps[k]; kappa.hpp).
  std::vector<std::vector<compo::MatrixAdjustRule>> adjust_rules;
};

// A subject with preliminary HSPs for one query: the unit of a query's preliminary selection.
struct PrelimEntry {
  SubjectHits list;  // the preliminary HSPs as an Hsp list (for compare_hit_lists); oid = database id
  std::vector<PrelimHsp> prelim;
};

// What scanning one part of the database leaves for the traceback: each scan unit's preliminary selection
// over that part, pruned to its limit (unordered; empty for units that cannot have hits), the subjects
// those entries refer to (by database id, ascending) and the counters of the seed stages. The scan units
// are the call's queries in order, except that a query BLAST+ splits (split.hpp) has one unit per piece.
struct BlastpScanPart {
  std::vector<std::vector<PrelimEntry>> entries;  // per scan unit of the call
  std::vector<std::pair<std::int64_t, BlastpSubject>> subjects;
  SearchCounts counts;
};

struct BlastpRunResult {
  std::vector<BlastpQueryResult> queries;                    // one per query, in input order
  std::unordered_map<std::int64_t, BlastpSubject> subjects;  // every subject some query reports
  DatabaseTotals totals;
  SearchCounts counts;  // summed over queries; identical with and without GPUs
  BlastpTimings timings;
};

// Searches every query against the database at db_path. Errors: as blastp_search (matrix / gap costs
// without statistics: kUsage), as SequenceSource (unreadable or malformed database: kIo / kFormat), and
// kInput for a query longer than 2^24 residues or a subject longer than 2^30 (32-bit diagonal offsets);
// with GPUs, kGpu for CUDA failures or a build without CUDA, kInput for a scan unit whose diagonal table
// does not fit the GPU's shared memory (about 50,000 residues on an H100; scan units stay below 20,000
// residues: longer queries are split).
BlastpRunResult blastp_run(std::span<const BlastpQuery> queries, const std::string& db_path,
                           const DatabaseTotals& totals, const BlastpRunOptions& options);

// The two halves of blastp_run, for a distributed search and its tests: the scan of part `part` of
// `parts` of the database (options.comm is ignored), and the traceback and final selection over the
// parts' results (all parts of one split, any order). blastp_merge_parts(q, totals, options,
// {blastp_scan_part(q, db, totals, options, p, n) for p in 0..n-1}) gives blastp_run's hits and counters
// (not its timings) for any n.
BlastpScanPart blastp_scan_part(std::span<const BlastpQuery> queries, const std::string& db_path,
                                const DatabaseTotals& totals, const BlastpRunOptions& options, int part,
                                int parts);
BlastpRunResult blastp_merge_parts(std::span<const BlastpQuery> queries, const DatabaseTotals& totals,
                                   const BlastpRunOptions& options, std::vector<BlastpScanPart> parts);

}  // namespace warpsearch::blast
