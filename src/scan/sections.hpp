// sections.hpp: exact scanning of one target sequence in overlapping sections (SSCA#1 / Khajeh-Saeed &
// Perot's overlapping search, made exact by a convergence check), shared by the CPU and GPU engines
// and by multi-GPU runs.
//
// Pass 1: the target's columns are cut into sections [b_k, b_{k+1}); section k > 0 starts computing
// at max(0, b_k - overlap) from an all-zero state, and keeps records only for its own columns. Its
// state after column b_k - 1 (the "probe") is a lower bound of the true state there. Section 0 is
// exact. Section k is exact if section k-1 is exact and k's probe equals k-1's end state (the DP is a
// function of the state, model.hpp makes the state canonical). A section that fails is recomputed from
// its left neighbour's exact end state ("fixup"); fixups run in rounds until every section is exact,
// so the result never depends on the overlap, the section count or the number of runners (GPUs).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "scan/model.hpp"

namespace warpsearch::dist {
class Comm;        // warpsearch/dist.hpp
class ByteWriter;  // dist/bytes.hpp
class ByteReader;
}  // namespace warpsearch::dist

namespace warpsearch::scan {

struct SectionTask {
  std::int64_t start = 0;                // first column computed
  std::int64_t own_begin = 0;            // first column whose record is kept (start <= own_begin)
  std::int64_t end = 0;                  // one past the last column (computed and kept)
  const ColumnState* initial = nullptr;  // state after column start - 1; null: all zero
};

struct SectionResult {
  ColumnState probe;  // state after column own_begin - 1 (empty when own_begin == start)
  ColumnState end;    // state after column end - 1
};

// A ranked list of per-origin best candidates (candidate_before order, at most one per origin).
// truncated: candidates were dropped, every one of them ranks after items.back() (and items is not
// empty), or -- when items is empty -- none of them reaches the minimum score asked for.
struct CandidateList {
  std::vector<Candidate> items;
  bool truncated = false;
};

// Computes sections of one target sequence against one query (set up by the engine that owns it) and
// keeps the column records of the columns it owns.
class SectionRunner {
 public:
  virtual ~SectionRunner() = default;
  // Starts a new target sequence (the span stays valid until the next call); previous records are
  // dropped.
  virtual void begin_target(std::span<const std::uint8_t> target) = 0;
  // Runs the tasks (in any order or concurrently); each task's records overwrite the runner's records
  // of columns [own_begin, end). Returns one SectionResult per task, in task order.
  virtual std::vector<SectionResult> run(std::span<const SectionTask> tasks) = 0;
  // The per-origin best candidates among the records of columns [begin, end) (every one of which
  // was computed by this runner) with score >= min_score, ranked, at most `limit` (truncated set when
  // more existed). seq and strand are copied into the candidates.
  virtual CandidateList candidates(std::int64_t begin, std::int64_t end, std::int32_t min_score,
                                   std::size_t limit, std::uint32_t seq, Strand strand) = 0;
  // How many sections (1..max_sections) this runner wants for its share of a target: about n columns,
  // a query of m rows, at most max_sections sections (scan_sections' cap, which keeps the automatic
  // pass-1 overlap cheap). A GPU runner uses it to fill whole waves of resident warps.
  virtual std::size_t preferred_sections(std::int64_t n, std::int64_t m, std::size_t max_sections) const = 0;
};

// A recomputed section at least twice max(overlap, kMinSplitWidth) wide is split into parts that run
// side by side (scan_sections, step 3 in sections.cpp).
inline constexpr std::int64_t kMinSplitWidth = 4096;

struct SectionPlanOptions {
  std::int64_t overlap = 0;  // columns computed before a section's own range in pass 1; 0: automatic
};

struct SectionStats {
  std::size_t sections = 0;
  std::size_t fixups = 0;        // sections recomputed
  std::size_t fixup_rounds = 0;  // rounds of fixups
  std::size_t split_parts = 0;   // sections added by splitting wide fixups into parts (sections.cpp)
  std::uint64_t cells = 0;       // DP cells computed, overlap and fixups included
};

// Scans `target` (sequence index seq, strand) exactly with the runners (each gets a contiguous range
// of sections; runners run concurrently, one host thread each) and returns the merged per-origin best
// candidates: score >= min_score, ranked, at most `limit` (truncated as in CandidateList).
CandidateList scan_sections(std::span<SectionRunner* const> runners, std::span<const std::uint8_t> target,
                            std::int64_t query_length, std::uint32_t seq, Strand strand,
                            std::int32_t min_score, std::size_t limit, const SectionPlanOptions& options,
                            SectionStats* stats = nullptr);

// The same scan by several processes together (SPMD, docs/SCAN.md "Under MPI"): every rank of `comm` calls
// it with the same target, query length and options and its own `runners` (runners_per_rank[r] of them on
// rank r; every rank passes the same runners_per_rank, at least one runner in all). The global runner list
// is the ranks' runners in rank order, planned exactly as above, so sections, fixups and results are those
// of one process with that runner list. A section's states stay on its rank; rank 0 gathers the
// convergence checks and the states of sections whose neighbour is on another rank, decides each round and
// broadcasts it; every rank returns the merged candidate list. Every step is agreed (dist::exchange): an
// error on any rank throws dist::CollectiveError on all. stats->cells counts the cells of all ranks. Must
// be called by the thread that runs MPI (dist::Session).
CandidateList scan_sections(const dist::Comm& comm, std::span<const std::size_t> runners_per_rank,
                            std::span<SectionRunner* const> runners, std::span<const std::uint8_t> target,
                            std::int64_t query_length, std::uint32_t seq, Strand strand,
                            std::int32_t min_score, std::size_t limit, const SectionPlanOptions& options,
                            SectionStats* stats = nullptr);

// A candidate list in an MPI message (dist/bytes.hpp), and back.
void write_list(dist::ByteWriter& w, const CandidateList& list);
CandidateList read_list(dist::ByteReader& in);

// Per-origin reduction of column records [begin, end) (record j - begin is column j): the ranked best
// candidate of each origin with score >= min_score, first `limit` (truncated as in CandidateList).
// Shared by the CPU runner and the GPU runner's host fallback; the GPU does the same on the device.
CandidateList reduce_records(std::span<const ColumnRecord> records, std::int64_t begin,
                             std::int32_t min_score, std::size_t limit, std::uint32_t seq, Strand strand);

// Merges ranked per-origin lists of one (seq, strand) from several runners: dedup by origin (keeping
// the better), ranked, at most limit, truncation carried over exactly.
CandidateList merge_lists(std::vector<CandidateList> lists, std::size_t limit);

// The CPU runner: reference_columns() on a thread pool, one section per task (threads = 0: all cores).
std::unique_ptr<SectionRunner> make_cpu_runner(const ScanModel& model, std::span<const std::uint8_t> query,
                                               unsigned threads);

}  // namespace warpsearch::scan
