// gpu_plan.hpp: the host-side planning of the CUDA pass engine (gpu_engine.hpp), plain C++ so that it
// is compiled and tested in every build (tests/sw_gpu run it, and an exact emulation of the kernels
// over its output, without a GPU).
//
//   kPassShapes, PassPolicy  the compiled kernel shapes (G threads x R rows per thread) and the tuning
//                            constants of the engine
//   LetterClasses            target codes grouped by identical score columns; the per-class score
//                            table the kernels build their query profiles from; the pad letter
//   classify(), sort_jobs()  per job: lane width, shape and row tiles; the launch order
//   plan_launch()            cuts the sorted jobs into one launch: slots (job pairs), warps, buckets
//                            (one kernel instance each), residue offsets and column ranges
//
// Launch layout (read by the kernels, see cuda/pass_cells.hpp): residues of launch-local job l are at
// offsets[l] (query, then target). A warp holds 32 / G slots of one bucket, each with `cols` columns
// of letters/border; a bucket is a contiguous range of warps run by one kernel instance.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sw/cuda/pass_cells.hpp"
#include "sw/gpu_engine.hpp"
#include "sw/model.hpp"

namespace warpsearch {
class ThreadPool;
}

namespace warpsearch::sw::gpu {

// Kernel shapes compiled into the CUDA tier. The dispatch table of gpu_engine.cu instantiates every
// shape for both lane kinds and for local / non-local modes; PassPolicy decides which are used.
struct PassShape {
  int g;  // threads per slot (a power of two, 4..32)
  int r;  // query rows per thread (4, 8 or 16)
};
inline constexpr std::array<PassShape, 5> kPassShapes{{{4, 8}, {8, 8}, {16, 8}, {32, 8}, {8, 16}}};
inline constexpr int kBlockWarps = 4;  // warps per block of the pass kernel (launch bounds)

enum class LaneKind : std::uint8_t { k16x2 = 0, k32 = 1 };
inline constexpr int lane_pairs(LaneKind lane) { return lane == LaneKind::k16x2 ? 2 : 1; }

// Tuning constants, measured with bench/bench_align_gpu.cpp (its WARPSEARCH_PASS_* knobs) on one H200,
// ADEPT-shaped local protein and DNA sets: to be re-measured on other GPUs and workloads.
struct PassPolicy {
  // A query of m rows (plus its virtual rows) runs in the first shape s with m <= max_rows[s] (and
  // G * R >= m); queries longer than every entry run in shape long_shape with several row tiles.
  // Default: every query in 8 x 8 tiles (64 rows): row tiles cost little (a profile rebuild and G - 1
  // skew steps per tile), so fitting the query to 64-row steps beat one big tile per query (e.g. 256
  // rows for m = 150) by about 20% (protein) and 35% (DNA) of kernel time.
  std::array<int, kPassShapes.size()> max_rows{0, 0, 0, 0, 0};
  int long_shape = 1;
  // The same for jobs with a known score (the start-finding passes): one tile per query where a shape
  // holds it (up to 256 rows), 256-row tiles beyond. A job stops when its end cell is certain, which
  // in a single tile happens at the alignment's last column; with several tiles, the tiles above the
  // one holding the end cell sweep every column.
  std::array<int, kPassShapes.size()> known_max_rows{32, 64, 128, 256, 0};
  int known_long_shape = 3;
  // Caps of one launch: residues uploaded, jobs (max_pairs_per_launch overrides), columns of letters
  // and border (12 bytes each). Device buffers for three launches in flight are grown on demand up to
  // these caps, which are lowered at construction to fit memory_fraction of the free device memory.
  // 2^17 jobs: a launch of the Aligner's batches (250,000 pairs and their reverse passes per engine
  // call) is planned and packed while the previous one runs; with 2^20 one launch held a whole call,
  // so its planning, packing and upload left the GPU idle (whole Aligner 0.64 -> 0.52 s per 10^6
  // protein pairs on an H200, docs/PERFORMANCE.md).
  std::size_t launch_residues = std::size_t{256} << 20;
  std::size_t launch_jobs = std::size_t{1} << 17;
  // The first windows of a run() call (jobs classified and sorted together, then cut into launches) hold
  // at most the caps >> first_window_shift, >> first_window_shift - 1, ..., then the caps: the GPU starts
  // once a few thousand jobs are planned, and the host prepares each window while the GPU runs the last.
  int first_window_shift = 5;
  double memory_fraction = 0.5;
  // Host threads that copy residues into the pinned staging buffers (0: all hardware threads).
  unsigned pack_threads = 0;
};

// Target letter classes: codes whose score columns (over all kMaxCodes query codes) are identical
// share a class, so the per-thread profile holds `count` letters (BLOSUM62: 28, DNA match/mismatch: 5).
struct LetterClasses {
  int count = 0;
  int pad = 0;  // class of padded target columns: every score <= kPadScore in local mode
  std::array<std::uint8_t, kMaxCodes> code_class{};
  std::vector<std::int8_t> ctab;  // kMaxCodes x count: score of query code q against class c
};
LetterClasses letter_classes(const PassModel& model);

struct JobClass {
  LaneKind lane = LaneKind::k16x2;
  std::uint8_t shape = 0;         // index into kPassShapes
  std::int32_t virtual_rows = 0;  // o (non-local modes)
  std::uint32_t tiles = 0;        // row tiles of G * R rows
  bool known = false;             // a known score (local mode): runs in known-score warps
};
// known_score: the job has a known score (PassJob::score; local mode): classified by the known_* policy.
JobClass classify(const PassModel& model, std::uint32_t qlen, std::uint32_t tlen, const PassPolicy& policy,
                  bool known_score = false);

// A job in launch order with everything planning needs (so that planning reads sequentially).
struct SortedJob {
  std::uint32_t job = 0;  // index into the jobs span
  std::uint32_t qlen = 0;
  std::uint32_t tlen = 0;
  std::uint32_t tiles = 0;
  LaneKind lane = LaneKind::k16x2;
  std::uint8_t shape = 0;
  std::uint8_t virtual_rows = 0;
  bool reversed = false;
  std::int32_t score = 0;  // the known score (JobClass::known), else 0
};

// Buffers of sort_jobs, reusable across calls (first-touch page faults of fresh buffers cost as much as
// the sort itself).
struct SortScratch {
  struct Item {
    std::uint64_t key;
    SortedJob job;
  };
  std::vector<Item> items, tmp;
  std::vector<std::size_t> count;
  std::vector<std::uint64_t> maxima;
};

// Jobs per chunk of sort_jobs' parallel steps (the chunks, and so the work, do not depend on the pool).
inline constexpr std::size_t kSortGrain = 16384;

// The jobs ordered by (lane, shape, known score or not, tiles, length key), stable (ties keep input
// order), into `order`. The length key is the target length, or for a job with a known score S
// min(target length, S): a guess of the columns it sweeps before it stops (a local alignment of score S
// rarely spans more than S columns), so that a warp's jobs stop at about the same column.
// pool: runs the sort's steps over chunks of kSortGrain jobs on the pool (nullptr: on the caller); the
// order is the same either way.
void sort_jobs(std::span<const JobClass> classes, std::span<const PassJob> jobs,
               std::vector<SortedJob>& order, SortScratch& scratch, ThreadPool* pool = nullptr);
std::vector<SortedJob> sort_jobs(std::span<const JobClass> classes, std::span<const PassJob> jobs);

struct LaunchCaps {
  std::size_t jobs = 0;
  std::size_t residues = 0;
  std::size_t columns = 0;
  std::size_t slots = 0;
  std::size_t warps = 0;
};

// Warps [warp_begin, warp_end) of one kernel instance.
struct Bucket {
  LaneKind lane = LaneKind::k16x2;
  std::uint8_t shape = 0;
  std::uint32_t warp_begin = 0;
  std::uint32_t warp_end = 0;
};

struct LaunchPlan {
  std::vector<std::uint32_t> jobs;     // caller's job index of each launch-local job (result order)
  std::vector<std::uint64_t> offsets;  // residue offset of each launch-local job (query, then target)
  std::vector<SlotInfo> slots;
  std::vector<WarpInfo> warps;
  std::vector<Bucket> buckets;
  std::uint64_t residues = 0;  // bytes of the residue buffer
  std::uint64_t columns = 0;   // entries of the letters / border arrays
  std::uint64_t cells16 = 0;
  std::uint64_t cells32 = 0;

  void clear();
  LaunchCaps needs() const;  // the sizes this plan occupies
};

// Plans the next launch from order[pos...] as long as every cap holds (the first job is always taken, so
// a launch may exceed caps that cannot hold one job). Returns the new pos.
std::size_t plan_launch(const PassModel& model, std::span<const SortedJob> order, std::size_t pos,
                        const LaunchCaps& caps, LaunchPlan& plan);

}  // namespace warpsearch::sw::gpu
