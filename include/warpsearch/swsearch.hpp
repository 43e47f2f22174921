// swsearch.hpp: exhaustive Smith-Waterman database search (the CUDASW++ / SWIPE / ssearch36 class of
// search): every query against every database sequence with exact local affine-gap scores, the top N
// per query with E-values, and alignments (coordinates, CIGAR, identity) recomputed for the reported hits.
//
// search() reads the queries (FASTA/FASTQ, plain or gzip, "-" = stdin) and streams the database (FASTA,
// FASTQ, a packed database made by `warpsearch makedb`, or a BLAST+ protein database) in batches of at
// most Options::batch_residues residues, so no input has to fit in memory. Each batch is scored against
// every query on the score engines (GPUs, or CPU threads with striped SIMD); each query keeps its best
// hits over all batches. Then E-values are computed (src/swsearch/stats.hpp; docs/SWSEARCH.md) and the
// reported hits are aligned on CPU threads (the align family's traceback). Results do not depend on the
// thread count, the GPU count or the batch size.
//
// Ranking: by score (descending), ties by database id (ascending; the input order of the database).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpsearch/align.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::swsearch {

struct Options {
  // Substitution scores (protein default BLOSUM62; DNA: ScoringMatrix::dna(match, mismatch)) and gap
  // costs (a gap of length k costs open + k * extend, as in ssearch36 and BLAST+; default 11/1).
  ScoringMatrix matrix = ScoringMatrix::builtin("BLOSUM62");
  GapCosts gaps{11, 1};
  // Reported hits per query: of the `top` best positive scores (ties by database id), those whose E-value
  // is <= evalue. The cut to `top` comes first (it is made while the database streams; the E-value needs
  // the database size and the target length), so fewer than `top` hits can be reported even when more
  // targets would pass the E-value threshold (ssearch36 -b / -E behave alike). A score of 0 (no local
  // alignment) is never a hit.
  std::size_t top = 50;
  double evalue = 10.0;
  // Recompute the alignment (coordinates, CIGAR, identities) of every reported hit. Without it hits
  // carry score, E-value and bit score only (fields that need the alignment are refused by the output).
  bool alignments = true;
  // CPU worker threads (0: all the CPUs this process may use): CPU scoring, alignments.
  unsigned threads = 0;
  // CUDA devices that score the database (empty: CPU threads). A build without CUDA throws Error(kGpu)
  // for a non-empty list. The CLI fills it from --device / --gpus.
  std::vector<int> gpus;
  // Most residues of one database batch; a batch always holds at least one sequence, so a longer
  // sequence makes a batch of its own. 0: automatic, at most 2^30 residues, two batches (the one scored
  // and the one being read) within an eighth of the host memory, and each GPU's share within a quarter of
  // its free memory. A batch is resident on the GPUs for all queries; a database larger than one batch
  // streams through in several.
  std::uint64_t batch_residues = 0;
  // Stderr lines with per-batch and per-query stage times and the engines' cell rates.
  bool timing = false;
  // Effective database size for E-values (ssearch36 -Z); unset: the database's sequence count.
  std::optional<std::uint64_t> Z;

  // Error(kUsage) for top == 0, evalue <= 0 or NaN, bad gaps (GapCosts::validate, open + extend < 1), a
  // matrix without a positive score, Z == 0, a negative or repeated GPU id. search() also refuses, with
  // Error(kUsage), a scoring system without E-value parameters (Statistics::make).
  void validate() const;
};

// One reported hit of one query.
struct Hit {
  std::uint64_t target_id = 0;  // 0-based position in the database (input order)
  std::string target_name;      // first word of the defline
  std::string target_description;
  std::uint32_t target_length = 0;
  std::int32_t score = 0;  // raw Smith-Waterman score
  double bits = 0.0;       // bit score (Statistics::bits: depends on the query and target lengths)
  double evalue = 0.0;
  // With Options::alignments: the alignment (align::Result conventions: 0-based half-open ranges, CIGAR
  // with =, X, I (query residue vs gap), D (target residue vs gap), matches, length). Its score equals
  // `score`.
  std::optional<align::Result> alignment;
  // With Options::alignments: the whole target's residues (digital codes, the matrix's alphabet), which the
  // outputs need (aligned letters, sseq, btop); empty without alignments.
  std::vector<std::uint8_t> target_residues;
  std::uint32_t positives = 0;  // aligned pairs with a positive substitution score (with alignment)
  std::uint32_t gap_opens = 0;  // gap runs (I or D runs) in the alignment
  std::uint32_t gaps = 0;       // gap columns
};

struct QueryResult {
  std::string name, description;
  std::vector<std::uint8_t> residues;  // digital codes (the matrix's alphabet)
  std::vector<Hit> hits;               // reported hits, ranked
};

struct Summary {
  std::uint64_t queries = 0;
  std::uint64_t db_sequences = 0;
  std::uint64_t db_residues = 0;
  std::uint64_t batches = 0;            // database batches streamed
  std::uint64_t cells = 0;              // query residues x database residues, summed over queries
  std::uint64_t overflow_rescored = 0;  // pairs whose 16-bit GPU score saturated and were rescored wider
  double score_seconds = 0.0;           // wall time of the scoring stage
  std::vector<std::string> engines;     // describe() of every score engine
};

// Called once per query, in query order, after its hits are final (E-values and alignments done).
using QueryCallback = std::function<void(const QueryResult&)>;

// Runs the search. The database is read once (streamed); the queries are read up front (they are held in
// memory: there are few and they are short compared with the database). Errors: Error(kIo) unreadable
// files; Error(kFormat) malformed inputs (file:line); Error(kInput) an empty query file or database, a
// query or database alphabet that does not match the matrix; Error(kUsage) bad options; Error(kGpu) GPU
// failures. Every query's callback runs only after the whole database has been scored, so a failure
// while reading the database produces no output.
//
// Distributed (comm with more than one rank, warpsearch/dist.hpp; docs/MPI.md): every rank calls search()
// with the same arguments and reads the queries. Split kDatabase: each rank scores every query against its
// shard of the database (contiguous, residue-balanced: dist/shard.hpp); split kQueries: query i is scored
// by rank i mod N against the whole database. Rank 0 picks each query's best `top` candidates over all
// ranks, the rank holding a selected target computes its E-value (with the whole database's size) and its
// alignment, and rank 0 calls on_query with the merged hits. Only rank 0 calls on_query and returns the
// whole run's Summary (other ranks return theirs); the hits are those of a one-process search, field by
// field, for any N. With options.gpus each rank scores on its own GPUs. An error on any rank is raised on
// all of them as dist::CollectiveError; "-" (stdin) cannot be read by several ranks (Error(kUsage)).
Summary search(const std::string& query_path, const std::string& db_path, const Options& options,
               const QueryCallback& on_query, const dist::Comm* comm = nullptr,
               dist::Split split = dist::Split::kDatabase);

}  // namespace warpsearch::swsearch
