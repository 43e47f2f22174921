// gpu_stage.cu: GpuStage (gpu_stage.hpp), blastp's seed stages on one CUDA device.
//
//   scan_kernel     one warp per (query, subject): word lookups, the two-hit rule on a diagonal table in
//                   shared memory, ungapped extensions each computed by the whole warp (two_hit_warp.cuh,
//                   extend_two_hit_raw's result), saved HSPs appended to one buffer keyed by
//                   (subject << 32 | query)
//   gather_kernel   one thread per (query, subject) run after CUB's radix sort + run-length encoding: the
//                   pair's HSPs gathered in sort_ungapped_hsps order
//   extend_kernel   one thread per HSP: its screen extension (prelim_screen.hpp's split form, pass 0 in the
//                   pair's starting mode, pass 1 unrestricted after an inconclusive restricted score), the
//                   DP column a ring of kStageScreenCapacity cells in shared memory
//   decide_kernel   one thread per run: screen_pass over the pass's scores (kEmpty, kFull or a redo)
//
// Exactness of the scan (the CPU applies hits in ascending subject offset, per subject word in the lookup
// table's order, to a per-diagonal state): a round of the warp holds up to 32 consecutive hits of that
// sequence, one per lane in sequence order; hits on different diagonal slots commute, and hits on one slot
// are applied one after another in lane order (the lowest pending lane of each __match_any_sync group goes
// first), so each slot sees its hits in the CPU's order. Two hits of one subject offset never share a slot
// (their diagonals differ by less than the query length, the table has >= query length + window slots).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "blast/cuda/two_hit_warp.cuh"
#include "blast/gpu_stage.hpp"
#include "blast/prelim_screen.hpp"
#include "blast/two_hit.hpp"
#include "blast/xdrop.hpp"
#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/check.cuh"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {

namespace {

constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kWarp = 32;
// Running diagonal offset limit: entries hold (offset-shifted subject offset << 1 | flag) in an int32, so
// shifted offsets stay below 2^30; the table is cleared before a subject that would pass the limit.
constexpr std::int64_t kOffsetLimit = std::int64_t{1} << 29;
// Pairs with more saved HSPs than this are not sorted or screened on the GPU (kFull, sorted on the host).
constexpr std::uint32_t kScreenMaxHsps = kStageScreenMaxHsps;
// Threads per block of extend_kernel, and its dynamic shared memory: each thread's DP column is a ring of
// kStageScreenCapacity cells, interleaved (cell k of thread t at [k * kExtendThreads + t]: the lanes of a
// warp use distinct banks when at the same cell).
constexpr int kExtendThreads = 64;
constexpr std::size_t kExtendShared =
    sizeof(XdropCell) * static_cast<std::size_t>(kExtendThreads) * kStageScreenCapacity;

struct DevQuery {
  const std::uint8_t* residues;
  const std::uint64_t* presence;
  const std::uint32_t* starts;
  const std::uint32_t* hits;
  std::int32_t length;
  std::uint32_t diag_mask;  // diagonal table entries - 1 (a power of two minus one)
  int x_dropoff;
  int cutoff;
  ScreenParams screen;
};

struct DevCounts {
  unsigned long long word_hits;
  unsigned long long extensions;
  unsigned long long saved;
};

// The total order the host and the screen use for a pair's HSPs: sort_ungapped_hsps, then the order of
// discovery (ascending second-hit subject offset).
__host__ __device__ inline bool hsp_before(const UngappedHsp& a, const UngappedHsp& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.subject_start != b.subject_start) return a.subject_start < b.subject_start;
  const std::int32_t la = a.query_end - a.query_start;
  const std::int32_t lb = b.query_end - b.query_start;
  if (la != lb) return la > lb;
  if (a.query_start != b.query_start) return a.query_start < b.query_start;
  return a.hit_subject_offset < b.hit_subject_offset;
}

// Dynamic shared memory: the 32 x 32 score table, the presence bits (word size <= 3), then one diagonal
// table per warp.
// Entry: the diagonal table's element; both use BLAST's running offset (no clearing between subjects until
// the offset nears the entry's range). std::int32_t: for the subjects longer than short_limit.
// std::int16_t: half the shared memory (twice the warps for long queries), for the subjects of at most
// short_limit residues, whose entries (2 (offset + n) - 1 at most, offset + n <= short_limit + window)
// fit; the table is cleared whenever the next subject would pass that bound.
// Blocks of at most 256 threads (launch_scan), registers capped for 5 blocks per SM: 48 registers without
// spills, against 55 uncapped (4 blocks); the kernel then took 8 % less time (ncu, paper3 on an H200).
constexpr int kScanMaxThreads = 256;
constexpr int kScanMinBlocks = 5;
template <class Entry>
__global__ void __launch_bounds__(kScanMaxThreads, kScanMinBlocks)
    scan_kernel(DevQuery q, std::int32_t short_limit, std::uint32_t query_index,
                const std::uint8_t* __restrict__ residues, const std::uint64_t* __restrict__ subject_offsets,
                std::uint32_t num_subjects, const std::int8_t* __restrict__ score_table, int word_size,
                int window, std::uint32_t word_mask, int presence_words_in_shared,
                std::uint32_t* __restrict__ next_subject, std::uint64_t* __restrict__ keys,
                UngappedHsp* __restrict__ hsps, unsigned long long* __restrict__ hsp_count,
                std::uint64_t hsp_capacity, DevCounts* __restrict__ counts) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* table = reinterpret_cast<std::int8_t*>(smem);
  auto* presence_s = reinterpret_cast<std::uint64_t*>(smem + kMaxCodes * kMaxCodes);
  constexpr bool kShort = sizeof(Entry) == 2;
  auto* diag_base = reinterpret_cast<Entry*>(smem + kMaxCodes * kMaxCodes +
                                             sizeof(std::uint64_t) * presence_words_in_shared);
  for (int i = threadIdx.x; i < kMaxCodes * kMaxCodes; i += blockDim.x) table[i] = score_table[i];
  for (int i = threadIdx.x; i < presence_words_in_shared; i += blockDim.x) presence_s[i] = q.presence[i];
  const std::uint64_t* presence = presence_words_in_shared > 0 ? presence_s : q.presence;
  const int lane = static_cast<int>(threadIdx.x) & (kWarp - 1);
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const std::uint32_t entries = q.diag_mask + 1;
  Entry* diag = diag_base + static_cast<std::size_t>(warp) * entries;
  const auto fresh = static_cast<Entry>(-window * 2);
  // BLAST's fresh table: "last hit" window letters before the start, offset = window.
  for (std::uint32_t i = static_cast<std::uint32_t>(lane); i < entries; i += kWarp) diag[i] = fresh;
  __syncthreads();
  std::int64_t offset = window;
  unsigned long long n_hits = 0, n_ext = 0, n_saved = 0;

  for (;;) {
    std::uint32_t si = 0;
    if (lane == 0) si = atomicAdd(next_subject, 1u);
    si = __shfl_sync(kFullMask, si, 0);
    if (si >= num_subjects) break;
    const std::uint64_t begin = subject_offsets[si];
    const std::uint64_t length64 = subject_offsets[si + 1] - begin;
    if (length64 > kGpuMaxSubjectLength) continue;  // scanned on the CPU by the caller
    if (kShort != (static_cast<std::int64_t>(length64) <= short_limit)) continue;  // the other variant's
    const auto n = static_cast<std::int32_t>(length64);
    const std::uint8_t* subject = residues + begin;
    // s_BlastDiagClear when the running offset would overflow an entry: 31-bit entries early enough;
    // 16-bit entries hold (last << 1 | flag) with last < offset + n, which stays <= short_limit + window
    // (so every subject of at most short_limit residues fits after a clear). Entries of earlier subjects
    // are at least `window` behind every position of this one, so they act as fresh entries.
    if (kShort ? offset + n > static_cast<std::int64_t>(short_limit) + window
               : offset + n + window >= kOffsetLimit) {
      __syncwarp();
      for (std::uint32_t i = static_cast<std::uint32_t>(lane); i < entries; i += kWarp) diag[i] = fresh;
      __syncwarp();
      offset = window;
    }
    const auto off = static_cast<std::int32_t>(offset);
    for (std::int32_t base = 0; base + word_size <= n; base += kWarp) {
      const std::int32_t s = base + lane;
      std::uint32_t count = 0, start = 0;
      if (s + word_size <= n) {
        std::uint32_t index = 0;
        for (int k = 0; k < word_size; ++k) index = (index << kLookupCharBits) | subject[s + k];
        index &= word_mask;
        if ((presence[index >> 6] >> (index & 63u)) & 1u) {
          start = q.starts[index];
          count = q.starts[index + 1] - start;
        }
      }
      // Inclusive warp scan of the hit counts: lane p owns hits [incl - count, incl) of this chunk.
      std::uint32_t incl = count;
      for (int d = 1; d < kWarp; d <<= 1) {
        const std::uint32_t v = __shfl_up_sync(kFullMask, incl, d);
        if (lane >= d) incl += v;
      }
      const std::uint32_t total = __shfl_sync(kFullMask, incl, kWarp - 1);
      if (total == 0) continue;
      n_hits += lane == 0 ? total : 0;
      const std::uint32_t excl = incl - count;
      for (std::uint32_t r = 0; r < total; r += kWarp) {
        const std::uint32_t j = r + static_cast<std::uint32_t>(lane);
        // Owner lane of hit j: the number of lanes whose inclusive count is <= j.
        int p = 0;
        for (int step = kWarp / 2; step > 0; step >>= 1) {
          const std::uint32_t v = __shfl_sync(kFullMask, incl, p + step - 1);
          if (v <= j) p += step;
        }
        const std::uint32_t p_start = __shfl_sync(kFullMask, start, p);
        const std::uint32_t p_excl = __shfl_sync(kFullMask, excl, p);
        const bool has = j < total;
        std::int32_t q_off = 0, s_hit = 0;
        std::uint32_t slot = 0;
        if (has) {
          q_off = static_cast<std::int32_t>(q.hits[p_start + (j - p_excl)]);
          s_hit = base + p;
          slot = static_cast<std::uint32_t>(q_off - s_hit) & q.diag_mask;
        }
        unsigned pending = __ballot_sync(kFullMask, has);
        while (pending != 0) {
          bool go = false;
          if ((pending >> lane) & 1u) {
            const unsigned peers = __match_any_sync(pending, slot);
            go = __ffs(static_cast<int>(peers)) - 1 == lane;
          }
          // TwoHitFinder::hit on entry (last << 1 | flag): the lanes going now hold distinct slots, so
          // their updates commute; those that need an extension get it below, one after another, each
          // computed by the whole warp.
          bool extend = false;
          std::int32_t diff = 0;
          if (go) {
            const std::int32_t e = diag[slot];
            const std::int32_t last = e >> 1;
            const std::int32_t shifted = s_hit + off;
            if (e & 1) {
              if (shifted >= last) diag[slot] = static_cast<Entry>(shifted * 2);
            } else {
              diff = shifted - last;
              if (diff >= window || (diff >= word_size && q_off - diff < 0)) {
                diag[slot] = static_cast<Entry>(shifted * 2);
              } else if (diff >= word_size) {
                extend = true;
              }
            }
          }
          for (unsigned todo = __ballot_sync(kFullMask, extend); todo != 0; todo &= todo - 1) {
            const int src = __ffs(static_cast<int>(todo)) - 1;
            const std::int32_t x_hit = __shfl_sync(kFullMask, s_hit, src);
            const std::int32_t x_q = __shfl_sync(kFullMask, q_off, src);
            const std::int32_t x_diff = __shfl_sync(kFullMask, diff, src);
            const TwoHitExtension x = warp_two_hit::extend_two_hit_warp(
                q.residues, q.length, subject, n, table, x_hit - x_diff + word_size, x_hit, x_q, q.x_dropoff,
                word_size, lane);
            if (lane == src) {
              ++n_ext;
              if (x.score >= q.cutoff) {
                ++n_saved;
                const unsigned long long at = atomicAdd(hsp_count, 1ull);
                if (at < hsp_capacity) {
                  keys[at] = (static_cast<std::uint64_t>(si) << 32) | query_index;
                  hsps[at] = UngappedHsp{x.score,
                                         x.query_start,
                                         x.query_start + x.length,
                                         x.subject_start,
                                         x.subject_start + x.length,
                                         q_off,
                                         s_hit};
                }
              }
              diag[slot] = static_cast<Entry>(
                  x.right_extended ? (x.subject_last - (word_size - 1) + off) * 2 + 1 : (s_hit + off) * 2);
            }
          }
          __syncwarp();
          pending &= ~__ballot_sync(kFullMask, go);
        }
      }
    }
    offset += static_cast<std::int64_t>(n) + window;
  }
  // Counts: one atomic per lane and counter.
  if (n_hits) atomicAdd(&counts->word_hits, n_hits);
  if (n_ext) atomicAdd(&counts->extensions, n_ext);
  if (n_saved) atomicAdd(&counts->saved, n_saved);
}

__global__ void iota_kernel(std::uint32_t* values, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    values[i] = static_cast<std::uint32_t>(i);
}

// Screen statuses of a run (pair). Downloaded: 0 kEmpty, 1 kFull, 2 kFull unsorted (too many HSPs: the
// host sorts them). On the device only: 3 waiting for its unrestricted pass, 4 waiting for its first pass.
constexpr std::uint8_t kStatusEmpty = 0, kStatusFull = 1, kStatusUnsorted = 2, kStatusRedo = 3,
                       kStatusPending = 4;

// One thread per run: gather its HSPs in sort_ungapped_hsps order and tag each with the run.
__global__ void gather_kernel(const std::uint32_t* __restrict__ run_counts,
                              const std::uint32_t* __restrict__ run_offsets, const int* __restrict__ num_runs,
                              const std::uint32_t* __restrict__ order, const UngappedHsp* __restrict__ hsps,
                              UngappedHsp* __restrict__ sorted, std::uint32_t* __restrict__ item_run,
                              std::uint8_t* __restrict__ status, int2* __restrict__ screen_counts) {
  const int runs = *num_runs;
  for (int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); r < runs;
       r += static_cast<int>(gridDim.x * blockDim.x)) {
    const std::uint32_t count = run_counts[r];
    const std::uint32_t first = run_offsets[r];
    UngappedHsp* list = sorted + first;
    for (std::uint32_t k = 0; k < count; ++k) {
      list[k] = hsps[order[first + k]];
      item_run[first + k] = static_cast<std::uint32_t>(r);
    }
    screen_counts[r] = make_int2(0, 0);
    if (count > kScreenMaxHsps) {
      status[r] = kStatusUnsorted;
      continue;
    }
    for (std::uint32_t k = 1; k < count; ++k) {  // insertion sort: lists are short
      const UngappedHsp h = list[k];
      std::uint32_t m = k;
      while (m > 0 && hsp_before(h, list[m - 1])) {
        list[m] = list[m - 1];
        --m;
      }
      list[m] = h;
    }
    status[r] = kStatusPending;
  }
}

// One thread per HSP (item) of the runs waiting for a pass (prelim_screen.hpp's split form): pass 0 extends
// the HSPs of kStatusPending runs in their starting mode, pass 1 those of kStatusRedo runs unrestricted.
// Each thread has its own DP column, a ring in shared memory (kExtendShared bytes per block).
__global__ void __launch_bounds__(kExtendThreads)
    extend_kernel(int pass, std::uint32_t items, const DevQuery* __restrict__ queries,
                  const std::uint8_t* __restrict__ residues,
                  const std::uint64_t* __restrict__ subject_offsets,
                  const std::int8_t* __restrict__ score_table, const std::uint64_t* __restrict__ run_keys,
                  const std::uint32_t* __restrict__ run_counts, const std::uint32_t* __restrict__ run_offsets,
                  const std::uint32_t* __restrict__ item_run, const UngappedHsp* __restrict__ sorted,
                  const std::uint8_t* __restrict__ status, int* __restrict__ scores) {
  __shared__ std::int8_t table[kMaxCodes * kMaxCodes];
  extern __shared__ XdropCell rings[];
  for (int i = threadIdx.x; i < kMaxCodes * kMaxCodes; i += blockDim.x) table[i] = score_table[i];
  __syncthreads();
  const std::uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const xdrop::RingColumn col{rings + threadIdx.x, kStageScreenCapacity - 1, kExtendThreads};
  const std::uint8_t wanted = pass == 0 ? kStatusPending : kStatusRedo;
  for (std::uint32_t i = tid; i < items; i += gridDim.x * blockDim.x) {
    const std::uint32_t r = item_run[i];
    if (status[r] != wanted) continue;
    const std::uint64_t key = run_keys[r];
    const auto si = static_cast<std::uint32_t>(key >> 32);
    const DevQuery& q = queries[key & 0xFFFFFFFFu];
    const std::uint64_t begin = subject_offsets[si];
    const auto n = static_cast<int>(subject_offsets[si + 1] - begin);
    const bool restricted =
        pass == 0 && starts_restricted(q.screen, sorted + run_offsets[r], static_cast<int>(run_counts[r]));
    scores[i] = screen_extension(q.residues, q.length, residues + begin, n, table, sorted[i], q.screen,
                                 restricted, col);
  }
}

// One thread per run waiting for the pass: the sequential loop's decision over the pass's scores
// (screen_pass), and the counts of a kEmpty run.
__global__ void decide_kernel(int pass, const DevQuery* __restrict__ queries,
                              const std::uint64_t* __restrict__ run_keys,
                              const std::uint32_t* __restrict__ run_counts,
                              const std::uint32_t* __restrict__ run_offsets, const int* __restrict__ num_runs,
                              const UngappedHsp* __restrict__ sorted, const int* __restrict__ scores,
                              std::uint8_t* __restrict__ status, int2* __restrict__ screen_counts) {
  const int runs = *num_runs;
  const std::uint8_t wanted = pass == 0 ? kStatusPending : kStatusRedo;
  for (int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); r < runs;
       r += static_cast<int>(gridDim.x * blockDim.x)) {
    if (status[r] != wanted) continue;
    const DevQuery& q = queries[run_keys[r] & 0xFFFFFFFFu];
    const auto count = static_cast<int>(run_counts[r]);
    const std::uint32_t first = run_offsets[r];
    const bool restricted = pass == 0 && starts_restricted(q.screen, sorted + first, count);
    int redo_at = 0;
    const ScreenStep step = screen_pass(scores + first, count, q.screen, restricted, &redo_at);
    if (step == ScreenStep::kFull) {
      status[r] = kStatusFull;
    } else if (step == ScreenStep::kRedo) {
      status[r] = kStatusRedo;
      screen_counts[r] = make_int2(redo_at + 1, 1);  // the first pass's extensions, one redone subject
    } else {
      status[r] = kStatusEmpty;
      const int2 before = screen_counts[r];
      screen_counts[r] = make_int2(before.x + count, before.y);
    }
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Grows a device buffer to at least n elements, with headroom (a quarter on the first allocation, half on
// later ones): cudaFree waits for the whole device, so a stage that reallocates stalls the other stages'
// work; batches of similar size then rarely reallocate.
template <class T>
void ensure(gpu::DeviceBuffer<T>& buffer, std::size_t n) {
  if (buffer.size() < n)
    buffer = gpu::DeviceBuffer<T>(std::max({n + n / 4, buffer.size() * 3 / 2, std::size_t{1}}));
}
template <class T>
void ensure(gpu::PinnedBuffer<T>& buffer, std::size_t n) {
  if (buffer.size() < n) buffer = gpu::PinnedBuffer<T>(std::max<std::size_t>(n, buffer.size() * 3 / 2));
}

}  // namespace

struct GpuStage::Impl {
  int device = 0;
  std::string name;
  int sm_count = 0;
  std::size_t shared_optin = 0;
  std::vector<const QueryContext*> queries;
  int word_size = 3;
  int window = 40;
  std::uint32_t word_mask = 0;
  // Query data on the device.
  gpu::DeviceBuffer<std::uint8_t> q_residues;
  gpu::DeviceBuffer<std::uint64_t> q_presence;
  gpu::DeviceBuffer<std::uint32_t> q_starts;
  gpu::DeviceBuffer<std::uint32_t> q_hits;
  gpu::DeviceBuffer<std::int8_t> score_table;
  std::vector<DevQuery> dev_queries;
  gpu::DeviceBuffer<DevQuery> d_queries;
  std::size_t presence_words = 0;  // per query
  // Per batch.
  gpu::Stream stream;
  gpu::PinnedBuffer<std::uint8_t> h_residues;
  gpu::PinnedBuffer<std::uint64_t> h_offsets;
  gpu::DeviceBuffer<std::uint8_t> d_residues;
  gpu::DeviceBuffer<std::uint64_t> d_offsets;
  gpu::DeviceBuffer<std::uint32_t> d_next;  // one work counter per query launch
  gpu::DeviceBuffer<unsigned long long> d_hsp_count;
  gpu::DeviceBuffer<DevCounts> d_counts;
  gpu::DeviceBuffer<std::uint64_t> d_keys, d_keys_sorted, d_run_keys;
  gpu::DeviceBuffer<std::uint32_t> d_order_in, d_order, d_run_counts, d_run_offsets, d_item_run;
  gpu::DeviceBuffer<int> d_scores;
  gpu::DeviceBuffer<UngappedHsp> d_hsps, d_sorted;
  gpu::DeviceBuffer<std::uint8_t> d_status;
  gpu::DeviceBuffer<int2> d_screen_counts;
  gpu::DeviceBuffer<int> d_num_runs;
  gpu::DeviceBuffer<unsigned char> d_temp;
  std::uint64_t hsp_capacity = 1u << 20;
  Stats stats;
  gpu::Event ev0, ev1, ev2;

  std::size_t batch_subjects = 0;

  void upload_queries();
  void run(std::span<const Residues> subjects, bool keep_all, StageOutput& out);
  void run_packed(std::span<const std::uint8_t> residues, std::span<const std::uint64_t> starts,
                  bool keep_all, StageOutput& out);
  // Subjects of at most short_subject_limit() residues use 16-bit diagonal entries (see scan_kernel); the
  // callers say which variants have subjects.
  std::int32_t short_subject_limit() const { return window <= 16000 ? 16383 - window : -1; }
  template <class Length>
  void variants(std::size_t n, Length length, bool& any_short, bool& any_long) const {
    any_short = any_long = false;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t l = length(i);
      if (l > kGpuMaxSubjectLength) continue;
      (static_cast<std::int64_t>(l) <= short_subject_limit() ? any_short : any_long) = true;
    }
  }
  void search(bool keep_all, bool any_short, bool any_long, StageOutput& out);
  template <class Entry>
  void launch_scan(std::size_t qi, std::int32_t short_limit, int presence_shared, std::size_t counter);
};

// One scan launch for query qi over the current batch: as many warps per block as leave room for two blocks
// per SM (at most 8), as many blocks as fit on the device at once (the warps take subjects from a counter).
template <class Entry>
void GpuStage::Impl::launch_scan(std::size_t qi, std::int32_t short_limit, int presence_shared,
                                 std::size_t counter) {
  const DevQuery& q = dev_queries[qi];
  const std::size_t table_bytes = static_cast<std::size_t>(q.diag_mask + 1) * sizeof(Entry);
  const std::size_t fixed =
      kMaxCodes * kMaxCodes + sizeof(std::uint64_t) * static_cast<std::size_t>(presence_shared);
  if (fixed + table_bytes > shared_optin)
    throw Error(ErrorKind::kInput, "blastp --device gpu: a query of " + std::to_string(q.length) +
                                       " residues needs a diagonal table of " + std::to_string(table_bytes) +
                                       " bytes, more than the " + std::to_string(shared_optin) +
                                       " bytes of shared memory of GPU " + std::to_string(device) +
                                       "; use --device cpu");
  const int warps = static_cast<int>(
      std::clamp<std::size_t>((shared_optin - fixed) / table_bytes / 2, 1, kScanMaxThreads / kWarp));
  const std::size_t smem = fixed + table_bytes * static_cast<std::size_t>(warps);
  int per_sm = 0;
  WS_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, scan_kernel<Entry>, warps * kWarp, smem));
  const std::size_t want =
      (batch_subjects + static_cast<std::size_t>(warps) - 1) / static_cast<std::size_t>(warps);
  const int grid =
      static_cast<int>(std::min<std::size_t>(want, static_cast<std::size_t>(std::max(per_sm, 1) * sm_count)));
  scan_kernel<Entry><<<grid, warps * kWarp, smem, stream.get()>>>(
      q, short_limit, static_cast<std::uint32_t>(qi), d_residues.data(), d_offsets.data(),
      static_cast<std::uint32_t>(batch_subjects), score_table.data(), word_size, window, word_mask,
      presence_shared, d_next.data() + counter, d_keys.data(), d_hsps.data(), d_hsp_count.data(),
      hsp_capacity, d_counts.data());
  WS_CUDA_CHECK_LAUNCH();
}

void GpuStage::Impl::upload_queries() {
  const QueryContext& first = *queries.front();
  const AaLookupTable& t0 = first.table();
  word_size = t0.word_size();
  window = first.ungapped_params().window;
  word_mask = t0.word_mask();
  presence_words = t0.presence().size();
  std::vector<std::uint8_t> residues;
  std::vector<std::uint64_t> presence;
  std::vector<std::uint32_t> starts, hits;
  struct Offsets {
    std::size_t residues, presence, starts, hits;
  };
  std::vector<Offsets> at;
  for (const QueryContext* c : queries) {
    const AaLookupTable& t = c->table();
    if (t.word_size() != word_size || t.presence().size() != presence_words ||
        c->ungapped_params().window != window)
      throw Error(ErrorKind::kInternal, "GpuStage: queries with different word size or window");
    at.push_back({residues.size(), presence.size(), starts.size(), hits.size()});
    residues.insert(residues.end(), c->query().begin(), c->query().end());
    presence.insert(presence.end(), t.presence().begin(), t.presence().end());
    starts.insert(starts.end(), t.starts().begin(), t.starts().end());
    hits.insert(hits.end(), t.all_hits().begin(), t.all_hits().end());
  }
  q_residues = gpu::DeviceBuffer<std::uint8_t>(std::max<std::size_t>(residues.size(), 1));
  q_presence = gpu::DeviceBuffer<std::uint64_t>(std::max<std::size_t>(presence.size(), 1));
  q_starts = gpu::DeviceBuffer<std::uint32_t>(std::max<std::size_t>(starts.size(), 1));
  q_hits = gpu::DeviceBuffer<std::uint32_t>(std::max<std::size_t>(hits.size(), 1));
  q_residues.upload(std::span<const std::uint8_t>(residues));
  q_presence.upload(std::span<const std::uint64_t>(presence));
  q_starts.upload(std::span<const std::uint32_t>(starts));
  q_hits.upload(std::span<const std::uint32_t>(hits));
  score_table = gpu::DeviceBuffer<std::int8_t>(kMaxCodes * kMaxCodes);
  score_table.upload(std::span<const std::int8_t>(first.scoring().row(0), kMaxCodes * kMaxCodes));
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const QueryContext& c = *queries[i];
    DevQuery d{};
    d.residues = q_residues.data() + at[i].residues;
    d.presence = q_presence.data() + at[i].presence;
    d.starts = q_starts.data() + at[i].starts;
    d.hits = q_hits.data() + at[i].hits;
    d.length = static_cast<std::int32_t>(c.query().size());
    const std::uint64_t need =
        static_cast<std::uint64_t>(c.query().size()) + static_cast<std::uint64_t>(window);
    std::uint64_t entries = 1;
    while (entries < need) entries <<= 1;
    d.diag_mask = static_cast<std::uint32_t>(entries - 1);
    d.x_dropoff = c.ungapped_params().x_dropoff;
    d.cutoff = c.ungapped_params().cutoff_score;
    d.screen = screen_params(c);
    dev_queries.push_back(d);
  }
  d_queries = gpu::DeviceBuffer<DevQuery>(dev_queries.size());
  d_queries.upload(std::span<const DevQuery>(dev_queries));
}

GpuStage::GpuStage(std::span<const QueryContext* const> queries, int device) {
  gpu::DeviceGuard guard(device);  // the stream, events and buffers belong to `device`
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.device = device;
  m.queries.assign(queries.begin(), queries.end());
  cudaDeviceProp prop{};
  WS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  m.name = prop.name;
  m.sm_count = prop.multiProcessorCount;
  m.shared_optin = prop.sharedMemPerBlockOptin;
  WS_CUDA_CHECK(cudaFuncSetAttribute(scan_kernel<std::int16_t>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(m.shared_optin)));
  WS_CUDA_CHECK(cudaFuncSetAttribute(scan_kernel<std::int32_t>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(m.shared_optin)));
  if (kExtendShared + kMaxCodes * kMaxCodes > m.shared_optin)
    throw Error(ErrorKind::kGpu, "blastp --device gpu: GPU " + std::to_string(device) + " has " +
                                     std::to_string(m.shared_optin) + " bytes of shared memory per block, " +
                                     std::to_string(kExtendShared + kMaxCodes * kMaxCodes) +
                                     " needed by the preliminary screen; use --device cpu");
  WS_CUDA_CHECK(cudaFuncSetAttribute(extend_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(kExtendShared)));
  m.d_hsp_count = gpu::DeviceBuffer<unsigned long long>(1);
  m.d_counts = gpu::DeviceBuffer<DevCounts>(1);
  m.d_num_runs = gpu::DeviceBuffer<int>(1);
  if (!m.queries.empty()) m.upload_queries();
}

GpuStage::~GpuStage() = default;

GpuStage::Stats GpuStage::stats() const { return impl_->stats; }

std::string GpuStage::describe() const {
  return "GPU " + std::to_string(impl_->device) + " (" + impl_->name + "): blastp seed stage, " +
         std::to_string(impl_->queries.size()) + " queries";
}

void GpuStage::run(std::span<const Residues> subjects, bool keep_all, StageOutput& out) {
  gpu::DeviceGuard guard(impl_->device);
  impl_->run(subjects, keep_all, out);
}

void GpuStage::run(std::span<const std::uint8_t> residues, std::span<const std::uint64_t> starts,
                   bool keep_all, StageOutput& out) {
  gpu::DeviceGuard guard(impl_->device);
  impl_->run_packed(residues, starts, keep_all, out);
}

// Subjects given one by one: packed back to back into pinned memory, then searched as a packed batch.
void GpuStage::Impl::run(std::span<const Residues> subjects, bool keep_all, StageOutput& out) {
  out = StageOutput{};
  const std::size_t ns = subjects.size();
  batch_subjects = ns;
  if (queries.empty() || ns == 0) return;
  std::size_t total = 0;
  for (const Residues& s : subjects) total += s.size();
  ensure(h_residues, std::max<std::size_t>(total, 1));
  ensure(h_offsets, ns + 1);
  std::size_t pos = 0;
  for (std::size_t i = 0; i < ns; ++i) {
    h_offsets.data()[i] = pos;
    std::copy(subjects[i].begin(), subjects[i].end(), h_residues.data() + pos);
    pos += subjects[i].size();
  }
  h_offsets.data()[ns] = pos;
  run_packed(std::span<const std::uint8_t>(h_residues.data(), total),
             std::span<const std::uint64_t>(h_offsets.data(), ns + 1), keep_all, out);
}

// A batch already back to back (the blastp reader's, or run's pinned copy): uploaded from the caller's
// memory as it is, without a packing copy or pinned staging buffers of batch size.
void GpuStage::Impl::run_packed(std::span<const std::uint8_t> residues, std::span<const std::uint64_t> starts,
                                bool keep_all, StageOutput& out) {
  out = StageOutput{};
  if (starts.empty() || starts.front() != 0 || starts.back() != residues.size())
    throw Error(ErrorKind::kInternal, "GpuStage::run: the starts do not match the residues");
  const std::size_t ns = starts.size() - 1;
  batch_subjects = ns;
  if (queries.empty() || ns == 0) return;
  if (ns >= (std::size_t{1} << 32) - 1)
    throw Error(ErrorKind::kInternal, "GpuStage: too many subjects in a batch");
  const auto t0 = std::chrono::steady_clock::now();
  ensure(d_residues, std::max<std::size_t>(residues.size(), 1));
  ensure(d_offsets, ns + 1);
  d_residues.upload_async(residues, stream);
  d_offsets.upload_async(starts, stream);
  stream.synchronize();
  stats.upload_s += seconds_since(t0);
  bool any_short = false, any_long = false;
  variants(
      ns, [&](std::size_t i) { return starts[i + 1] - starts[i]; }, any_short, any_long);
  search(keep_all, any_short, any_long, out);
}

// The stage for the batch on the device (d_residues, d_offsets, batch_subjects).
void GpuStage::Impl::search(bool keep_all, bool any_short, bool any_long, StageOutput& out) {
  const std::size_t ns = batch_subjects;
  ++stats.batches;
  // Scan: one launch per query; rerun with a larger buffer if the HSPs did not fit.
  const std::size_t nq = queries.size();
  ensure(d_next, 2 * nq);
  const std::int32_t short_limit = short_subject_limit();
  unsigned long long hsp_total = 0;
  DevCounts counts{};
  for (;;) {
    ensure(d_keys, hsp_capacity);
    ensure(d_hsps, hsp_capacity);
    WS_CUDA_CHECK(cudaMemsetAsync(d_next.data(), 0, 2 * nq * sizeof(std::uint32_t), stream.get()));
    WS_CUDA_CHECK(cudaMemsetAsync(d_hsp_count.data(), 0, sizeof(unsigned long long), stream.get()));
    WS_CUDA_CHECK(cudaMemsetAsync(d_counts.data(), 0, sizeof(DevCounts), stream.get()));
    ev0.record(stream);
    const int presence_shared = presence_words * 8 <= 8192 ? static_cast<int>(presence_words) : 0;
    for (std::size_t qi = 0; qi < nq; ++qi) {
      if (any_short) launch_scan<std::int16_t>(qi, short_limit, presence_shared, 2 * qi);
      if (any_long) launch_scan<std::int32_t>(qi, short_limit, presence_shared, 2 * qi + 1);
    }
    ev1.record(stream);
    WS_CUDA_CHECK(cudaMemcpyAsync(&hsp_total, d_hsp_count.data(), sizeof(hsp_total), cudaMemcpyDeviceToHost,
                                  stream.get()));
    WS_CUDA_CHECK(
        cudaMemcpyAsync(&counts, d_counts.data(), sizeof(counts), cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    stats.scan_s += gpu::Event::elapsed_ms(ev0, ev1) / 1e3;
    if (hsp_total <= hsp_capacity) break;
    ++stats.rescans;
    hsp_capacity = hsp_total + hsp_total / 4;
  }
  out.counts.word_hits += static_cast<std::int64_t>(counts.word_hits);
  out.counts.ungapped_extensions += static_cast<std::int64_t>(counts.extensions);
  out.counts.ungapped_saved += static_cast<std::int64_t>(counts.saved);
  if (hsp_total == 0) return;
  if (hsp_total >= (std::uint64_t{1} << 31))
    throw Error(ErrorKind::kInternal, "GpuStage: more than 2^31 HSPs in a batch");
  const auto n = static_cast<int>(hsp_total);

  // Group by (subject, query): radix sort of the keys with the HSP indices, run-length encoding. The
  // per-HSP buffers have the scan buffer's capacity (they grow only with it, not with every batch).
  ev0.record(stream);
  ensure(d_keys_sorted, hsp_capacity);
  ensure(d_order_in, hsp_capacity);
  ensure(d_order, hsp_capacity);
  ensure(d_run_keys, hsp_capacity);
  ensure(d_run_counts, hsp_capacity);
  ensure(d_run_offsets, hsp_capacity);
  ensure(d_sorted, hsp_capacity);
  ensure(d_status, hsp_capacity);
  ensure(d_screen_counts, hsp_capacity);
  ensure(d_item_run, hsp_capacity);
  ensure(d_scores, hsp_capacity);
  iota_kernel<<<std::min(1024, (n + 255) / 256), 256, 0, stream.get()>>>(d_order_in.data(), hsp_total);
  WS_CUDA_CHECK_LAUNCH();
  int subject_bits = 1;
  while ((std::uint64_t{1} << subject_bits) < ns) ++subject_bits;
  const int end_bit = 32 + subject_bits;
  std::size_t sort_bytes = 0, rle_bytes = 0, scan_bytes = 0;
  WS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, d_keys.data(), d_keys_sorted.data(),
                                                d_order_in.data(), d_order.data(), n, 0, end_bit,
                                                stream.get()));
  WS_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, d_keys_sorted.data(),
                                                   d_run_keys.data(), d_run_counts.data(), d_num_runs.data(),
                                                   n, stream.get()));
  WS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, d_run_counts.data(), d_run_offsets.data(),
                                              n, stream.get()));
  // The temporary storage too is sized for the capacity (and all 64 key bits), not for this batch.
  const int cap = static_cast<int>(std::min<std::uint64_t>(hsp_capacity, INT_MAX));
  std::size_t cap_sort = 0, cap_rle = 0, cap_scan = 0;
  WS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, cap_sort, d_keys.data(), d_keys_sorted.data(),
                                                d_order_in.data(), d_order.data(), cap, 0, 64, stream.get()));
  WS_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, cap_rle, d_keys_sorted.data(), d_run_keys.data(),
                                                   d_run_counts.data(), d_num_runs.data(), cap,
                                                   stream.get()));
  WS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cap_scan, d_run_counts.data(), d_run_offsets.data(),
                                              cap, stream.get()));
  ensure(d_temp, std::max({sort_bytes, rle_bytes, scan_bytes, cap_sort, cap_rle, cap_scan, std::size_t{1}}));
  WS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(d_temp.data(), sort_bytes, d_keys.data(),
                                                d_keys_sorted.data(), d_order_in.data(), d_order.data(), n, 0,
                                                end_bit, stream.get()));
  WS_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(d_temp.data(), rle_bytes, d_keys_sorted.data(),
                                                   d_run_keys.data(), d_run_counts.data(), d_num_runs.data(),
                                                   n, stream.get()));
  int runs = 0;
  WS_CUDA_CHECK(cudaMemcpyAsync(&runs, d_num_runs.data(), sizeof(int), cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();
  WS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp.data(), scan_bytes, d_run_counts.data(),
                                              d_run_offsets.data(), runs, stream.get()));
  // Screen (prelim_screen.hpp's split form): gather each run's HSPs in order, then per pass one thread
  // per HSP extends it (each with its own DP column in shared memory) and one thread per run
  // decides. Pass 1 finds work only in runs with an inconclusive restricted score.
  const int run_blocks = (runs + 127) / 128;
  gather_kernel<<<run_blocks, 128, 0, stream.get()>>>(
      d_run_counts.data(), d_run_offsets.data(), d_num_runs.data(), d_order.data(), d_hsps.data(),
      d_sorted.data(), d_item_run.data(), d_status.data(), d_screen_counts.data());
  WS_CUDA_CHECK_LAUNCH();
  for (int pass = 0; pass < 2; ++pass) {
    extend_kernel<<<(n + kExtendThreads - 1) / kExtendThreads, kExtendThreads, kExtendShared, stream.get()>>>(
        pass, static_cast<std::uint32_t>(n), d_queries.data(), d_residues.data(), d_offsets.data(),
        score_table.data(), d_run_keys.data(), d_run_counts.data(), d_run_offsets.data(), d_item_run.data(),
        d_sorted.data(), d_status.data(), d_scores.data());
    WS_CUDA_CHECK_LAUNCH();
    decide_kernel<<<run_blocks, 128, 0, stream.get()>>>(
        pass, d_queries.data(), d_run_keys.data(), d_run_counts.data(), d_run_offsets.data(),
        d_num_runs.data(), d_sorted.data(), d_scores.data(), d_status.data(), d_screen_counts.data());
    WS_CUDA_CHECK_LAUNCH();
  }
  ev2.record(stream);

  // Download and unpack.
  const auto r = static_cast<std::size_t>(runs);
  std::vector<std::uint64_t> run_keys(r);
  std::vector<std::uint32_t> run_counts(r), run_offsets(r);
  std::vector<std::uint8_t> status(r);
  std::vector<int2> screen_counts(r);
  std::vector<UngappedHsp> sorted(hsp_total);
  d_run_keys.download_async(std::span<std::uint64_t>(run_keys), stream);
  d_run_counts.download_async(std::span<std::uint32_t>(run_counts), stream);
  d_run_offsets.download_async(std::span<std::uint32_t>(run_offsets), stream);
  d_status.download_async(std::span<std::uint8_t>(status), stream);
  d_screen_counts.download_async(std::span<int2>(screen_counts.data(), screen_counts.size()), stream);
  d_sorted.download_async(std::span<UngappedHsp>(sorted.data(), sorted.size()), stream);
  stream.synchronize();
  stats.screen_s += gpu::Event::elapsed_ms(ev1, ev2) / 1e3;
  const auto t1 = std::chrono::steady_clock::now();
  out.pairs.reserve(r);
  for (std::size_t k = 0; k < r; ++k) {
    StagePair p;
    p.subject = static_cast<std::uint32_t>(run_keys[k] >> 32);
    p.query = static_cast<std::uint32_t>(run_keys[k] & 0xFFFFFFFFu);
    p.count = run_counts[k];
    p.screen = status[k] == kStatusEmpty ? ScreenResult::kEmpty : ScreenResult::kFull;
    if (p.screen == ScreenResult::kEmpty) {
      out.counts.gapped_extensions += screen_counts[k].x;
      out.counts.redone_subjects += screen_counts[k].y;
    }
    if (keep_all || p.screen == ScreenResult::kFull) {
      p.first = static_cast<std::uint32_t>(out.hsps.size());
      const auto b = sorted.begin() + run_offsets[k];
      out.hsps.insert(out.hsps.end(), b, b + run_counts[k]);
      if (status[k] == kStatusUnsorted)
        std::sort(out.hsps.begin() + p.first, out.hsps.end(),
                  [](const UngappedHsp& a, const UngappedHsp& c) { return hsp_before(a, c); });
    }
    out.pairs.push_back(p);
  }
  stats.download_s += seconds_since(t1);
}

}  // namespace warpsearch::blast
