// gpu_stage.hpp: blastp's seed stages on the GPU (cuBLASTP class): word hits, the two-hit rule, ungapped
// X-drop extensions and a screen of the preliminary gapped stage, for many queries against a batch of
// subjects, with results identical to the CPU stages.
//
// Contents:
//   StagePair / StageOutput   what the stage hands to the CPU: per (query, subject) with saved ungapped HSPs,
//                             the HSPs (sort_ungapped_hsps order) and the screen's verdict
//   stage_reference           the CPU reference of the whole stage (TwoHitFinder + screen_preliminary)
//   kGpuMaxSubjectLength      subjects the GPU scans (longer ones are the caller's to scan on the CPU)
//   GpuStage                  one GPU: the queries' lookup tables resident, run() per subject batch
//
// What the stage computes, per query q and subject s (both given as protein codes):
//   1. the ungapped HSPs TwoHitFinder saves (ungapped.hpp: every word hit of the query's lookup table, the
//      two-hit rule per diagonal, extend_two_hit, score >= the query's ungapped cutoff), sorted by
//      sort_ungapped_hsps (ties in all four keys: ascending second-hit subject offset, which is the order
//      in which TwoHitFinder finds them);
//   2. for a pair of at most kStageScreenMaxHsps HSPs, screen_preliminary (prelim_screen.hpp) over that list:
//   kEmpty when preliminary_hsps would return
//      nothing for a reason the screen can prove (no gapped extension reaches the cutoff), kFull when the
//      CPU must run preliminary_hsps (which recomputes everything, so the result is exact either way).
// Counts: word hits, ungapped extensions and saved HSPs of every pair; gapped extensions and restricted
// redos of the kEmpty pairs only (those of kFull pairs are counted when the CPU reruns them), so that a
// caller that runs preliminary_hsps for the kFull pairs ends with exactly the CPU path's SearchCounts.
//
// How the GPU does it (src/blast/cuda/gpu_stage.cu): one warp per (query, subject) pair, the query's
// diagonal table (BLAST's masked table of 2^k >= query length + window entries, with BLAST's running offset
// instead of clearing between subjects) in shared memory; the 32 lanes look up 32 consecutive subject words,
// a warp scan spreads their hits over the lanes in subject order, and hits on the same diagonal slot within
// a round are applied in subject order (__match_any_sync), so every diagonal sees its hits exactly in the
// order the CPU applies them; each extension is computed by the whole warp, 32 positions at a time
// (cuda/two_hit_warp.cuh, with extend_two_hit_raw's result: a GPU test compares them). Saved HSPs are
// appended to one buffer, sorted by (subject, query) with CUB's radix sort, grouped with CUB's run-length
// encoding; one thread per pair sorts its HSPs, then screen_preliminary's split form runs (screen_split:
// one thread per HSP extension with its DP column a ring in shared memory, where a band wider than the ring
// is kFull, and one
// thread per pair deciding over the scores).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "blast/prelim_screen.hpp"
#include "blast/search.hpp"
#include "blast/ungapped.hpp"

namespace warpsearch::blast {

// One (query, subject) with at least one saved ungapped HSP. query: index into the query list the stage
// was built with; subject: index into the batch.
struct StagePair {
  std::uint32_t subject = 0;
  std::uint32_t query = 0;
  ScreenResult screen = ScreenResult::kFull;
  std::uint32_t first = 0;  // the pair's HSPs: StageOutput::hsps[first, first + count), if kept
  std::uint32_t count = 0;  // number of saved ungapped HSPs
};
// Field by field (not defaulted: nvcc 13's front end then rejects std::vector<StagePair>).
inline bool operator==(const StagePair& a, const StagePair& b) {
  return a.subject == b.subject && a.query == b.query && a.screen == b.screen && a.first == b.first &&
         a.count == b.count;
}

struct StageOutput {
  std::vector<StagePair> pairs;   // ascending (subject, query)
  std::vector<UngappedHsp> hsps;  // per pair, sort_ungapped_hsps order (kFull pairs only unless keep_all)
  SearchCounts counts;            // see above
};

// The CPU reference: the stage for subjects[0..n) with queries' own contexts (searchable, equal options).
// keep_all: keep the HSPs of kEmpty pairs too (their `first` then points at them; otherwise first = 0 and
// only kFull pairs have HSPs in `hsps`). ring: the size of the screen's DP column, a ring
// (xdrop::RingColumn) as on the GPU; a power of two, else Error(kInternal).
StageOutput stage_reference(std::span<const QueryContext* const> queries, std::span<const Residues> subjects,
                            bool keep_all, int ring);

// Pairs with more saved HSPs are kFull without a screen (the host sorts their HSPs).
inline constexpr std::uint32_t kStageScreenMaxHsps = 256;

// The screen's DP column on the GPU: a ring of this many cells per thread (xdrop::RingColumn, in shared
// memory); an extension whose band grows wider makes its pair kFull. stage_reference with the same size
// gives the same verdicts. 128 cells hold the band of every extension of the 3 cuBLASTP-sized queries
// against the 20,000 UniProt proteins of the test data, with the statistics of the 1,000,115-sequence
// benchmark database (as many pairs kFull as with a flat column of 1,024 cells: 93 of 3,438; with 64: 306).
inline constexpr int kStageScreenCapacity = 128;

// The longest subject the GPU scans: its diagonal entries hold (offset << 1 | flag) in 32 bits.
inline constexpr std::size_t kGpuMaxSubjectLength = std::size_t{1} << 28;

// One GPU. Host-only header; the definitions exist only in CUDA builds (callers guard their use with
// WARPSEARCH_HAVE_CUDA).
class GpuStage {
 public:
  // The queries (searchable, equal options; they must outlive the stage) are uploaded once: residues,
  // lookup tables, parameters. Throws Error(kGpu) on CUDA failures.
  GpuStage(std::span<const QueryContext* const> queries, int device);
  ~GpuStage();
  GpuStage(const GpuStage&) = delete;
  GpuStage& operator=(const GpuStage&) = delete;

  // The stage for one batch: subjects longer than kGpuMaxSubjectLength are skipped (no pairs, no counts;
  // the caller scans them on the CPU). Equal to stage_reference(queries, subjects, keep_all,
  // kStageScreenCapacity) for the other subjects. One host thread at a time per stage.
  void run(std::span<const Residues> subjects, bool keep_all, StageOutput& out);
  // The same for a batch stored back to back: subject i is residues[starts[i], starts[i + 1]) (starts[0] = 0,
  // starts.back() = residues.size(), else Error(kInternal)). Uploaded from that memory as it is (no packing
  // copy, no pinned buffers of batch size).
  void run(std::span<const std::uint8_t> residues, std::span<const std::uint64_t> starts, bool keep_all,
           StageOutput& out);

  struct Stats {
    double upload_s = 0;    // host: packing and copying subjects to the device
    double scan_s = 0;      // GPU: scan kernels (CUDA events)
    double screen_s = 0;    // GPU: sort, grouping and screen kernels (CUDA events)
    double download_s = 0;  // host: waiting for and unpacking the results
    std::uint64_t batches = 0;
    std::uint64_t rescans = 0;  // batches scanned again because the HSP buffer was too small
  };
  Stats stats() const;
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warpsearch::blast
