// gpu_runner.cu: make_gpu_runner() (gpu_runner.hpp): the scan's SectionRunner on one CUDA device.
//
//   begin_target()   uploads the target's codes, maps them to score classes on the device and sizes
//                    the column records of the whole target (device memory).
//   run()            one launch of the persistent kernel (scan_kernel.cuh) for all tasks: initial states
//                    up, probe and end states down, records stay on the device. The strip height
//                    (R = 4, 8 or 16 rows per lane) is chosen per launch from the available parallelism
//                    (choose_shape): tall strips for many tasks, short ones for a lone fixup task.
//   candidates()     per-origin best of a record range on the device with CUB (select, radix sort,
//                    reduce-by-key, radix sort), exactly reduce_records() (sections.hpp); ranges longer
//                    than kCandidatePiece columns are reduced piecewise and merged with merge_lists(),
//                    which is exact for one common limit.
//   preferred_sections()  the section count that minimizes the modelled time (modelled_seconds) of pass 1
//                    plus one fixup plus the transfer of every section's probe and end state.
//
// Score classes: target codes whose score columns (over all query codes) are identical share a class,
// so the per-warp query profile holds one R-byte word per class and lane (DNA: 5 classes, protein ~25).
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/check.cuh"
#include "scan/cuda/runner_options.cuh"
#include "scan/cuda/scan_kernel.cuh"
#include "scan/gpu_runner.hpp"
#include "scan/sections.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::scan {
namespace gpu {
namespace {

namespace rt = ::warpsearch::gpu;  // CUDA RAII types (gpu/cuda/buffers.cuh)

constexpr int kMapThreads = 256;
constexpr std::int64_t kCandidatePiece = std::int64_t{1} << 24;  // columns per candidates() reduction
constexpr std::int64_t kMinSectionWidth = 2048;                  // preferred_sections() lower bound
constexpr double kStateBudgetBytes = 4e9;  // preferred_sections(): host bytes of probe + end states
constexpr double kStateBandwidth = 2e10;   // bytes per second of state transfer and handling

[[noreturn]] void fail(const std::string& what) {
  throw Error(ErrorKind::kInternal, "scan GPU runner: " + what);
}

// ---- small kernels -------------------------------------------------------------------------------

// target code -> score class; codes >= kMaxCodes set *bad.
__global__ void map_classes_kernel(const std::uint8_t* codes, std::uint8_t* classes, std::int64_t n,
                                   const std::uint8_t* code_class, std::uint32_t* bad) {
  __shared__ std::uint8_t table[kMaxCodes];
  if (threadIdx.x < kMaxCodes) table[threadIdx.x] = code_class[threadIdx.x];
  __syncthreads();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += stride) {
    const std::uint8_t c = codes[k];
    if (c >= kMaxCodes) {
      atomicOr(bad, 1u);
      classes[k] = 0;
    } else {
      classes[k] = table[c];
    }
  }
}

// The record of a column without any positive cell (query of length 0).
__global__ void fill_empty_records_kernel(ColumnRecord* records, std::int64_t begin, std::int64_t end) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = begin + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < end;
       k += stride)
    records[k] = ColumnRecord{};
}

struct RecordAtLeast {
  const ColumnRecord* records;
  std::int32_t floor;
  __device__ bool operator()(std::int32_t col) const { return records[col].score >= floor; }
};

// Keys of the selected columns: origin key (qstart << tbits | tstart) and rank key (candidate_before
// within one sequence and strand: score descending, then tend = column ascending; the column is unique,
// so qend never decides).
__global__ void candidate_keys_kernel(const ColumnRecord* records, const std::int32_t* cols,
                                      std::int64_t count, int tbits, std::uint64_t* origin_keys,
                                      std::uint64_t* rank_keys) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const std::int32_t col = cols[k];
  const ColumnRecord r = records[col];
  origin_keys[k] = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(r.qstart)) << tbits) |
                   static_cast<std::uint64_t>(static_cast<std::uint32_t>(r.tstart));
  const auto inv = static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max() - r.score);
  rank_keys[k] = (static_cast<std::uint64_t>(inv) << 32) | static_cast<std::uint32_t>(col);
}

struct MinKey {
  __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a < b ? a : b; }
};

// The first `count` ranked keys -> their records (column in the key's low half).
__global__ void gather_kernel(const ColumnRecord* records, const std::uint64_t* rank_keys, std::int64_t count,
                              ColumnRecord* out, std::int32_t* cols) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const auto col = static_cast<std::int32_t>(static_cast<std::uint32_t>(rank_keys[k]));
  out[k] = records[col];
  cols[k] = col;
}

unsigned blocks_for(std::int64_t n, int threads) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, (n + threads - 1) / threads));
}

int bits_for(std::uint64_t max_value) {
  int b = 1;
  while (b < 64 && (max_value >> b) != 0) ++b;
  return b;
}

// Grows a device buffer to at least `need` elements (never shrinks).
template <class T>
void grow(rt::DeviceBuffer<T>& b, std::size_t need) {
  if (b.size() >= need) return;
  const std::size_t size = std::max(need, b.size() + b.size() / 2);
  b = rt::DeviceBuffer<T>();  // free first
  b = rt::DeviceBuffer<T>(size);
}

// ---- kernel shapes -------------------------------------------------------------------------------

struct Shape {
  int r = 16;
  std::size_t smem = 0;  // per block
  int slots = 0;         // resident warps on the device (this runner's share of it)
};

template <int R>
Shape prepare_shape(int classes, int sms, int sharing) {
  Shape s;
  s.r = R;
  s.smem = static_cast<std::size_t>(kWarpsPerBlock) * warp_smem_bytes<R>(classes);
  WS_CUDA_CHECK(cudaFuncSetAttribute(scan_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(s.smem)));
  int blocks = 0;
  WS_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scan_kernel<R>, kWarpsPerBlock * 32, s.smem));
  if (blocks < 1)
    fail("the scan kernel does not fit one SM (shared memory " + std::to_string(s.smem) + " bytes)");
  s.slots = std::max(1, blocks * sms / sharing) * kWarpsPerBlock;
  return s;
}

// Columns per column block: about kUnitsPerBlock units per resident block, at least kMinBlockWidth columns.
constexpr std::int64_t kUnitsPerBlock = 64;
constexpr std::int64_t kMinBlockWidth = 2048;
std::int64_t block_width_for(const Shape& s, std::int64_t pairs, std::int64_t widest) {
  const std::int64_t resident = s.slots / kWarpsPerBlock;
  const std::int64_t blocks = std::max<std::int64_t>(1, (kUnitsPerBlock * resident + pairs - 1) / pairs);
  const std::int64_t w = std::max(kMinBlockWidth, (widest + blocks - 1) / blocks);
  return (w + kChunk - 1) / kChunk * kChunk;
}

void launch(const Shape& s, const KernelParams& p, cudaStream_t stream) {
  const unsigned resident = static_cast<unsigned>(s.slots / kWarpsPerBlock);
  const unsigned blocks = std::max(1u, std::min(p.units, resident));
  switch (s.r) {
    case 16: scan_kernel<16><<<blocks, kWarpsPerBlock * 32, s.smem, stream>>>(p); break;
    case 8: scan_kernel<8><<<blocks, kWarpsPerBlock * 32, s.smem, stream>>>(p); break;
    default: scan_kernel<4><<<blocks, kWarpsPerBlock * 32, s.smem, stream>>>(p); break;
  }
  WS_CUDA_CHECK_LAUNCH();
}

std::int64_t strips_for(std::int64_t m, int r) { return (m + 32 * r - 1) / (32 * r); }

// Modelled seconds of `tasks` tasks of `width` columns each with shape s; they only steer choices (strip
// height, section counts). Measured on an H100 with SSCA#1 DNA scoring (both strands of a 10 kbp query
// against chrX for 10..120 sections per strand, and a 1 Mbp query), sustained rates at full supply were
// 0.576 (R = 16), 0.582 (R = 8) and 0.54 (R = 4) TCUPS, i.e. per SM 4.36, 4.41 and 4.09 Gcells/s. The
// fraction of it reached depends on the supply x = warps that have work (a task's strips, in groups of
// kWarpsPerBlock) / resident warps: a strip waits for the one above it, so the SMs need more runnable
// warps than they hold; measured efficiency 0.57-0.60 at x = 0.4, 0.84 at 0.75, 0.95 at 1, 0.99 at 1.5,
// fitted by 1 - exp(-2.4 x). Units are small (column blocks), so there is no wave quantization term.
double sm_rate(int r) {
  switch (r) {
    case 16: return 4.36e9;
    case 8: return 4.41e9;
    default: return 4.09e9;
  }
}
double modelled_seconds(const Shape& s, std::int64_t m, std::int64_t tasks, std::int64_t width, int sms,
                        int sharing) {
  const std::int64_t strips = strips_for(m, s.r);
  const auto padded = static_cast<double>((strips + kWarpsPerBlock - 1) / kWarpsPerBlock * kWarpsPerBlock);
  const double supply = padded * static_cast<double>(tasks) / static_cast<double>(s.slots);
  const double efficiency = 1.0 - std::exp(-2.4 * supply);
  const double share_sms = std::max(1.0, static_cast<double>(sms) / sharing);
  const double cells = 32.0 * s.r * padded * static_cast<double>(tasks) * static_cast<double>(width);
  return cells / (sm_rate(s.r) * share_sms * efficiency);
}

// ---- the runner ----------------------------------------------------------------------------------

// The meeting point of two runners on one device (the scan's two strands: queries of one length) whose
// launches run as one kernel when they arrive together, so that the device's scheduler balances both
// strands' work units instead of two concurrent kernels competing for the SMs (the older kernel's warps
// win the issue slots and the younger one finishes alone on half the SMs). A runner that finds the other
// one waiting launches both task sets. One that finds nobody waits up to kPairWait while the other one
// is scanning a target (between begin_target() and candidates(): it may still submit), then launches
// alone, on the whole device when the other one is not scanning (e.g. a fixup round of one strand after
// the other strand finished). Results never depend on the pairing (every task is computed the same).
constexpr auto kPairWait = std::chrono::milliseconds(20);
struct LaunchPair {
  struct Pending {
    const std::vector<TaskInfo>* infos = nullptr;
    int r = 0;
    std::int64_t strips = 0;
    cudaEvent_t ready = nullptr;  // the waiting runner's uploads are done
    cudaEvent_t done = nullptr;   // set by the launcher: its stream is past the combined kernel
    bool taken = false, launched = false, failed = false;
  };
  std::mutex mu;
  std::condition_variable cv;
  Pending* pending = nullptr;
  bool scanning[2] = {false, false};  // per member (GpuRunner::pair_index_)
  std::int64_t block_width = 0;       // of the last combined launch
};

class GpuRunner final : public SectionRunner {
 public:
  GpuRunner(const ScanModel& model, std::span<const std::uint8_t> query, int device,
            const RunnerOptions& options)
      : device_(device),
        model_(model),
        query_(query.begin(), query.end()),
        forced_r_(options.rows_per_lane),
        forced_block_width_(options.block_width),
        sharing_(options.sharing) {
    if (forced_r_ != 0 && forced_r_ != 4 && forced_r_ != 8 && forced_r_ != 16)
      throw Error(ErrorKind::kUsage,
                  "scan GPU runner: rows per lane must be 4, 8 or 16, not " + std::to_string(forced_r_));
    if (forced_block_width_ < 0 || forced_block_width_ % kChunk != 0)
      throw Error(ErrorKind::kUsage, "scan GPU runner: the column block width must be a multiple of " +
                                         std::to_string(kChunk) + ", not " +
                                         std::to_string(forced_block_width_));
    if (sharing_ < 1) throw Error(ErrorKind::kUsage, "scan GPU runner: sharing must be at least 1");
    if (model.open < 0 || model.extend < 0) fail("negative gap costs");
    m_ = static_cast<std::int64_t>(query.size());
    if (m_ > kMaxLength) fail("query too long");
    for (const std::uint8_t c : query_)
      if (c >= kMaxCodes) fail("query code out of range");
    build_classes();
    rt::DeviceGuard guard(device_);
    cudaDeviceProp prop{};
    WS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    sms_ = prop.multiProcessorCount;
    // The members were made on the device current at construction; remake them on ours.
    stream_ = rt::Stream();
    launch_start_ = rt::Event();
    launch_stop_ = rt::Event();
    ready_ = rt::Event();
    shapes_[0] = prepare_shape<16>(classes_, sms_, sharing_);
    shapes_[1] = prepare_shape<8>(classes_, sms_, sharing_);
    shapes_[2] = prepare_shape<4>(classes_, sms_, sharing_);
    d_query_ = rt::DeviceBuffer<std::uint8_t>(std::max<std::size_t>(query_.size(), 1));
    d_query_.upload(std::span<const std::uint8_t>(query_));
    d_class_scores_ = rt::DeviceBuffer<std::int8_t>(class_scores_.size());
    d_class_scores_.upload(std::span<const std::int8_t>(class_scores_));
    d_code_class_ = rt::DeviceBuffer<std::uint8_t>(kMaxCodes);
    d_code_class_.upload(std::span<const std::uint8_t>(code_class_.data(), code_class_.size()));
    d_bad_ = rt::DeviceBuffer<std::uint32_t>(1);
    d_counter_ = rt::DeviceBuffer<std::uint32_t>(1);
  }

  void begin_target(std::span<const std::uint8_t> target) override {
    set_scanning(true);
    rt::DeviceGuard guard(device_);
    n_ = static_cast<std::int64_t>(target.size());
    if (n_ > kMaxLength) fail("target too long");
    if (!fits_int32(model_, m_, n_)) fail("lengths exceed the 32-bit score/position range");
    const auto n = static_cast<std::size_t>(n_);
    grow(d_target_, std::max<std::size_t>(n, 1));
    grow(d_codes_, std::max<std::size_t>(n, 1));
    grow(d_records_, std::max<std::size_t>(n, 1));
    if (n == 0) return;
    d_codes_.upload_async(target, stream_);
    WS_CUDA_CHECK(cudaMemsetAsync(d_bad_.data(), 0, sizeof(std::uint32_t), stream_.get()));
    map_classes_kernel<<<std::min(blocks_for(n_, kMapThreads), 4096u), kMapThreads, 0, stream_.get()>>>(
        d_codes_.data(), d_target_.data(), n_, d_code_class_.data(), d_bad_.data());
    WS_CUDA_CHECK_LAUNCH();
    fill_empty_records_kernel<<<std::min(blocks_for(n_, kMapThreads), 4096u), kMapThreads, 0,
                                stream_.get()>>>(d_records_.data(), 0, n_);
    WS_CUDA_CHECK_LAUNCH();
    std::uint32_t bad = 0;
    d_bad_.download_async(std::span<std::uint32_t>(&bad, 1), stream_);
    stream_.synchronize();
    if (bad != 0) fail("target code out of range");
  }

  std::vector<SectionResult> run(std::span<const SectionTask> tasks) override {
    rt::DeviceGuard guard(device_);
    std::vector<SectionResult> results(tasks.size());
    std::vector<std::pair<std::int64_t, std::int64_t>> owned;
    for (const SectionTask& t : tasks) {
      if (!(0 <= t.start && t.start <= t.own_begin && t.own_begin <= t.end && t.end <= n_))
        fail("task outside the target");
      if (t.initial != nullptr && static_cast<std::int64_t>(t.initial->size()) != m_)
        fail("initial state of the wrong size");
      if (t.own_begin < t.end) owned.emplace_back(t.own_begin, t.end);
    }
    std::sort(owned.begin(), owned.end());
    for (std::size_t k = 1; k < owned.size(); ++k)
      if (owned[k].first < owned[k - 1].second) fail("tasks own overlapping columns");

    const auto m = static_cast<std::size_t>(m_);
    // Tasks without columns: the end state is the initial one.
    std::vector<std::size_t> work;
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      const SectionTask& t = tasks[k];
      if (t.end > t.start) {
        work.push_back(k);
      } else {
        results[k].end = t.initial != nullptr ? *t.initial : ColumnState(m);
      }
    }
    if (work.empty()) return results;
    if (m == 0) {
      for (std::size_t k : work) {
        fill_empty_records_kernel<<<std::min(blocks_for(tasks[k].end - tasks[k].own_begin, kMapThreads),
                                             4096u),
                                    kMapThreads, 0, stream_.get()>>>(d_records_.data(), tasks[k].own_begin,
                                                                     tasks[k].end);
        WS_CUDA_CHECK_LAUNCH();
      }
      stream_.synchronize();
      return results;  // every state has 0 rows
    }

    const auto count = static_cast<std::int64_t>(work.size());
    std::int64_t widest = 0;
    for (std::size_t k : work) widest = std::max(widest, tasks[k].end - tasks[k].start);
    const Shape shape = choose_shape(count, widest);
    const std::int64_t strips = strips_for(m_, shape.r);

    // State offsets, boundary offsets; then the task records with their buffers' addresses.
    std::vector<std::int64_t> in_off(work.size(), -1), probe_off(work.size(), -1), end_off(work.size()),
        cell_off(work.size());
    std::int64_t in_rows = 0, out_rows = 0, cells = 0;
    for (std::size_t w = 0; w < work.size(); ++w) {
      const SectionTask& t = tasks[work[w]];
      if (t.initial != nullptr) in_off[w] = std::exchange(in_rows, in_rows + m_);
      if (t.own_begin > t.start) probe_off[w] = std::exchange(out_rows, out_rows + m_);
      end_off[w] = std::exchange(out_rows, out_rows + m_);
      cell_off[w] = cells;
      if (strips > 1) cells += 2 * (t.end - t.start);
    }
    const std::int64_t groups = (strips + kWarpsPerBlock - 1) / kWarpsPerBlock;
    grow(d_states_in_, std::max<std::size_t>(static_cast<std::size_t>(in_rows), 1));
    grow(d_states_out_, static_cast<std::size_t>(out_rows));
    grow(d_boundary_, std::max<std::size_t>(static_cast<std::size_t>(cells), 1));
    // Flags: [task][strip] chunk counts, then [task][group] block counts.
    const auto flag_count = static_cast<std::size_t>(count * strips + count * groups);
    grow(d_flags_, flag_count);
    grow(d_diag_, static_cast<std::size_t>(count * strips));
    std::vector<TaskInfo> infos(work.size());
    for (std::size_t w = 0; w < work.size(); ++w) {
      const SectionTask& t = tasks[work[w]];
      TaskInfo& info = infos[w];
      info.start = static_cast<std::int32_t>(t.start);
      info.width = static_cast<std::int32_t>(t.end - t.start);
      info.own_rel = static_cast<std::int32_t>(t.own_begin - t.start);
      info.probe_rel = probe_off[w] >= 0 ? info.own_rel - 1 : -1;
      info.target = d_target_.data();
      info.query = d_query_.data();
      info.records = d_records_.data();
      info.initial = in_off[w] >= 0 ? d_states_in_.data() + in_off[w] : nullptr;
      info.probe = probe_off[w] >= 0 ? d_states_out_.data() + probe_off[w] : nullptr;
      info.end = d_states_out_.data() + end_off[w];
      info.boundary = d_boundary_.data() + cell_off[w];
      info.flags = d_flags_.data() + static_cast<std::int64_t>(w) * strips;
      info.done = d_flags_.data() + count * strips + static_cast<std::int64_t>(w) * groups;
      info.diag = d_diag_.data() + static_cast<std::int64_t>(w) * strips;
    }

    // States travel straight between the task's vectors and the device (pageable copies: states can be
    // gigabytes for long queries, more than is worth pinning).
    for (std::size_t w = 0; w < work.size(); ++w) {
      const SectionTask& t = tasks[work[w]];
      if (t.initial != nullptr)
        d_states_in_.upload_async(std::span<const RowState>(*t.initial), stream_,
                                  static_cast<std::size_t>(in_off[w]));
    }
    WS_CUDA_CHECK(cudaMemsetAsync(d_flags_.data(), 0, flag_count * sizeof(std::uint32_t), stream_.get()));
    launch_tasks(infos, shape, strips);

    // States come down in one pinned copy and are spread into the result vectors by a few threads
    // (first-touch page faults of fresh vectors dominate the host side otherwise).
    if (h_states_.size() < static_cast<std::size_t>(out_rows)) {
      h_states_ = rt::PinnedBuffer<RowState>();
      h_states_ = rt::PinnedBuffer<RowState>(static_cast<std::size_t>(out_rows));
    }
    d_states_out_.download_async(std::span<RowState>(h_states_.data(), static_cast<std::size_t>(out_rows)),
                                 stream_);
    stream_.synchronize();
    pool_.parallel_for(work.size(), 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t w = b; w < e; ++w) {
        SectionResult& res = results[work[w]];
        const RowState* base = h_states_.data();
        if (probe_off[w] >= 0) res.probe.assign(base + probe_off[w], base + probe_off[w] + m_);
        res.end.assign(base + end_off[w], base + end_off[w] + m_);
      }
    });
    last_.rows_per_lane = shape.r;
    last_.tasks = work.size();
    last_.cells = 0;
    for (const TaskInfo& info : infos) last_.cells += static_cast<std::uint64_t>(info.width) * m;
    last_.kernel_seconds = static_cast<double>(rt::Event::elapsed_ms(launch_start_, launch_stop_)) / 1000.0;
    return results;
  }

  // Pairs this runner with another one on the same device (make_runner_pair): member 0 or 1.
  void join(std::shared_ptr<LaunchPair> pair, int index) {
    pair_ = std::move(pair);
    pair_index_ = index;
  }

  // Marks this member of a pair as scanning a target (it may submit launches) or not.
  void set_scanning(bool on) {
    if (!pair_) return;
    std::lock_guard lock(pair_->mu);
    pair_->scanning[pair_index_] = on;
    pair_->cv.notify_all();
  }

  // Runs the prepared tasks (uploads queued on stream_): alone, or in one launch together with the
  // paired runner's tasks when it submits a compatible launch (same strip height and strip count)
  // within kPairWait. Either way stream_ is ordered after the kernel that ran them.
  void launch_tasks(const std::vector<TaskInfo>& infos, const Shape& shape, std::int64_t strips) {
    if (!pair_) {
      launch_infos(infos, shape, strips, false);
      return;
    }
    ready_.record(stream_);
    std::unique_lock lock(pair_->mu);
    LaunchPair::Pending* other = pair_->pending;
    if (other != nullptr && other->r == shape.r && other->strips == strips) {
      pair_->pending = nullptr;
      other->taken = true;
      lock.unlock();
      std::vector<TaskInfo> all(other->infos->begin(), other->infos->end());
      all.insert(all.end(), infos.begin(), infos.end());
      std::exception_ptr error;
      try {
        WS_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), other->ready, 0));
        launch_infos(all, shape, strips, true);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      other->done = launch_stop_.get();
      other->failed = error != nullptr;
      other->launched = true;
      pair_->cv.notify_all();
      lock.unlock();
      if (error) std::rethrow_exception(error);
      return;
    }
    if (other != nullptr) {  // the partner waits with an incompatible launch: no pairing this time
      lock.unlock();
      launch_infos(infos, shape, strips, false);
      return;
    }
    const bool& partner_scanning = pair_->scanning[1 - pair_index_];
    if (!partner_scanning) {  // nothing to wait for: the whole device
      lock.unlock();
      launch_infos(infos, shape, strips, true);
      return;
    }
    LaunchPair::Pending me;
    me.infos = &infos;
    me.r = shape.r;
    me.strips = strips;
    me.ready = ready_.get();
    pair_->pending = &me;
    launch_start_.record(stream_);
    pair_->cv.wait_for(lock, kPairWait, [&] { return me.launched || !partner_scanning; });
    if (!me.taken) {
      pair_->pending = nullptr;
      const bool whole = !partner_scanning;
      lock.unlock();
      launch_infos(infos, shape, strips, whole);
      return;
    }
    pair_->cv.wait(lock, [&] { return me.launched; });  // taken: the partner is launching
    const std::int64_t combined_block_width = pair_->block_width;
    lock.unlock();
    if (me.failed) fail("the launch combined with the paired runner failed");
    WS_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), me.done, 0));
    launch_stop_.record(stream_);  // kernel_seconds: from this submission to the combined kernel's end
    last_.block_width = combined_block_width;
  }

  CandidateList candidates(std::int64_t begin, std::int64_t end, std::int32_t min_score, std::size_t limit,
                           std::uint32_t seq, Strand strand) override {
    set_scanning(false);  // scan_sections runs nothing more for this target
    if (!(0 <= begin && begin <= end && end <= n_)) fail("candidate range outside the target");
    rt::DeviceGuard guard(device_);
    if (end - begin <= kCandidatePiece) return reduce_piece(begin, end, min_score, limit, seq, strand);
    std::vector<CandidateList> lists;
    for (std::int64_t b = begin; b < end; b += kCandidatePiece)
      lists.push_back(reduce_piece(b, std::min(end, b + kCandidatePiece), min_score, limit, seq, strand));
    return merge_lists(std::move(lists), limit);
  }

  LaunchInfo last_launch() const { return last_; }

  std::vector<ColumnRecord> records(std::int64_t begin, std::int64_t end) {
    if (!(0 <= begin && begin <= end && end <= n_)) fail("record range outside the target");
    rt::DeviceGuard guard(device_);
    std::vector<ColumnRecord> out(static_cast<std::size_t>(end - begin));
    d_records_.download_async(std::span<ColumnRecord>(out), stream_, static_cast<std::size_t>(begin));
    stream_.synchronize();
    return out;
  }

  // Minimizes the modelled time of pass 1 (sections with scan_sections' automatic overlap) plus one
  // fixup of one section: more sections cost overlap, fewer make fixups more expensive and may leave
  // the GPU idle.
  std::size_t preferred_sections(std::int64_t n, std::int64_t m, std::size_t max_sections) const override {
    if (n <= kMinSectionWidth || m <= 0 || max_sections <= 1) return 1;
    // Every section returns a probe and an end state of m rows to the host, which keeps them.
    const double state_bytes = 2.0 * static_cast<double>(m) * sizeof(RowState);
    const auto by_memory = static_cast<std::int64_t>(kStateBudgetBytes / state_bytes);
    const std::int64_t most = std::max<std::int64_t>(
        1, std::min({n / kMinSectionWidth, by_memory, std::int64_t{65536},
                     static_cast<std::int64_t>(std::min<std::size_t>(max_sections, 65536))}));
    std::int64_t best_t = 1;
    double best = 0;
    // Every count up to 256, then steps of 1/64.
    for (std::int64_t t = 1; t <= most; t = t < 256 ? t + 1 : t + t / 64) {
      const std::int64_t width = (n + t - 1) / t;
      // scan_sections' automatic overlap (sections.cpp): max(clamp(width / 8, 256, 16384), 2m + 256).
      const std::int64_t overlap =
          t > 1 ? std::max(std::clamp<std::int64_t>(n / t / 8, 256, 16384), 2 * m + 256) : 0;
      // One section is exact by itself; more may need a fixup: one section recomputed alone, or split
      // into parts with the pass-1 overlap (scan_sections does what its runner prefers: the cheaper).
      double fixup = 0.0;
      if (t > 1) {
        fixup = fastest(m, 1, width).second;
        const std::int64_t floor = std::max(overlap, kMinSplitWidth);
        if (width >= 2 * floor)
          fixup = std::min(fixup, fastest(m, width / floor, width / (width / floor) + overlap).second);
      }
      const double cost = fastest(m, t, width + overlap).second + fixup +
                          static_cast<double>(t) * state_bytes / kStateBandwidth;
      if (t == 1 || cost < best * 0.995) best = cost, best_t = t;
    }
    return static_cast<std::size_t>(best_t);
  }

 private:
  // Uploads `infos` and runs them in one launch on stream_ (timed by launch_start_/launch_stop_): on
  // this runner's share of the device, or on all of it (`whole`: a combined launch of a pair).
  void launch_infos(const std::vector<TaskInfo>& infos, Shape shape, std::int64_t strips, bool whole) {
    if (whole) shape.slots *= sharing_;
    const auto count = static_cast<std::int64_t>(infos.size());
    std::int64_t widest = 0;
    for (const TaskInfo& info : infos) widest = std::max<std::int64_t>(widest, info.width);
    const std::int64_t groups = (strips + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const std::int64_t block_width =
        forced_block_width_ > 0 ? forced_block_width_ : block_width_for(shape, groups * count, widest);
    const std::int64_t units = (widest + block_width - 1) / block_width * groups * count;
    if (units > std::numeric_limits<std::int32_t>::max()) fail("too many work units");
    grow(d_tasks_, infos.size());
    d_tasks_.upload_async(std::span<const TaskInfo>(infos), stream_);
    WS_CUDA_CHECK(cudaMemsetAsync(d_counter_.data(), 0, sizeof(std::uint32_t), stream_.get()));
    KernelParams p;
    p.class_scores = d_class_scores_.data();
    p.tasks = d_tasks_.data();
    p.counter = d_counter_.data();
    p.m = static_cast<std::int32_t>(m_);
    p.pad = static_cast<std::int32_t>(strips * 32 * shape.r - m_);
    p.strips = static_cast<std::int32_t>(strips);
    p.tasks_count = static_cast<std::int32_t>(count);
    p.classes = classes_;
    p.ox = model_.open + model_.extend;
    p.x = model_.extend;
    p.groups = static_cast<std::int32_t>(groups);
    p.block_width = static_cast<std::int32_t>(block_width);
    p.units = static_cast<std::uint32_t>(units);
    launch_start_.record(stream_);
    launch(shape, p, stream_.get());
    launch_stop_.record(stream_);
    last_.block_width = block_width;
    if (whole) {
      std::lock_guard lock(pair_->mu);
      pair_->block_width = block_width;
    }
  }

  // Classes of identical score columns; class_scores_[c * kMaxCodes + a] = s(a, representative of c).
  void build_classes() {
    std::array<int, kMaxCodes> rep{};
    classes_ = 0;
    for (int b = 0; b < kMaxCodes; ++b) {
      int found = -1;
      for (int c = 0; c < classes_ && found < 0; ++c) {
        bool same = true;
        for (int a = 0; a < kMaxCodes && same; ++a)
          same = model_.table[a * kMaxCodes + b] ==
                 model_.table[a * kMaxCodes + rep[static_cast<std::size_t>(c)]];
        if (same) found = c;
      }
      if (found < 0) {
        found = classes_;
        rep[static_cast<std::size_t>(classes_++)] = b;
      }
      code_class_[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(found);
    }
    class_scores_.assign(static_cast<std::size_t>(classes_) * kMaxCodes, 0);
    for (int c = 0; c < classes_; ++c)
      for (int a = 0; a < kMaxCodes; ++a)
        class_scores_[static_cast<std::size_t>(c * kMaxCodes + a)] =
            model_.table[a * kMaxCodes + rep[static_cast<std::size_t>(c)]];
  }

  // The shape with the smallest modelled time for `count` tasks of `width` columns, and that time.
  std::pair<const Shape*, double> fastest(std::int64_t m, std::int64_t count, std::int64_t width) const {
    const Shape* best = &shapes_[0];
    double best_cost = modelled_seconds(shapes_[0], m, count, width, sms_, sharing_);
    for (const Shape& s : shapes_) {
      const double c = modelled_seconds(s, m, count, width, sms_, sharing_);
      if (c < best_cost * 0.97) best = &s, best_cost = c;
    }
    return {best, best_cost};
  }
  Shape choose_shape(std::int64_t count, std::int64_t width) const {
    if (forced_r_ != 0)
      for (const Shape& s : shapes_)
        if (s.r == forced_r_) return s;
    return *fastest(m_, count, width).first;
  }

  CandidateList reduce_piece(std::int64_t begin, std::int64_t end, std::int32_t min_score, std::size_t limit,
                             std::uint32_t seq, Strand strand) {
    CandidateList out;
    const std::int64_t n = end - begin;
    if (n <= 0) return out;
    const std::int32_t floor = std::max<std::int32_t>(min_score, 1);
    const auto cap = static_cast<std::size_t>(n);
    grow(d_cols_, cap);
    grow(d_okeys_, 2 * cap);
    grow(d_rkeys_, 2 * cap);
    grow(d_counts_, 2);
    cudaStream_t s = stream_.get();

    // 1. Columns with score >= floor.
    const thrust::counting_iterator<std::int32_t> first(static_cast<std::int32_t>(begin));
    const RecordAtLeast pred{d_records_.data(), floor};
    std::size_t bytes = 0;
    WS_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, first, d_cols_.data(), d_counts_.data(), n, pred, s));
    grow(d_temp_, bytes);
    WS_CUDA_CHECK(
        cub::DeviceSelect::If(d_temp_.data(), bytes, first, d_cols_.data(), d_counts_.data(), n, pred, s));
    std::int64_t selected = 0;
    {
      std::int64_t c = 0;
      WS_CUDA_CHECK(cudaMemcpyAsync(&c, d_counts_.data(), sizeof(c), cudaMemcpyDeviceToHost, s));
      stream_.synchronize();
      selected = c;
    }
    if (selected == 0) return out;

    // 2. Keys; 3. sort by origin; 4. best rank key per origin.
    const int tbits = bits_for(static_cast<std::uint64_t>(std::max<std::int64_t>(n_ - 1, 1)));
    const int qbits = bits_for(static_cast<std::uint64_t>(std::max<std::int64_t>(m_ - 1, 1)));
    std::uint64_t* ok = d_okeys_.data();
    std::uint64_t* ok_alt = ok + cap;
    std::uint64_t* rk = d_rkeys_.data();
    std::uint64_t* rk_alt = rk + cap;
    candidate_keys_kernel<<<blocks_for(selected, 256), 256, 0, s>>>(d_records_.data(), d_cols_.data(),
                                                                    selected, tbits, ok, rk);
    WS_CUDA_CHECK_LAUNCH();
    cub::DoubleBuffer<std::uint64_t> okb(ok, ok_alt), rkb(rk, rk_alt);
    bytes = 0;
    WS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, okb, rkb, selected, 0, tbits + qbits, s));
    grow(d_temp_, bytes);
    WS_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(d_temp_.data(), bytes, okb, rkb, selected, 0, tbits + qbits, s));
    // Unique origins go to the other halves of the buffers.
    std::uint64_t* uniq = okb.Alternate();
    std::uint64_t* best = rkb.Alternate();
    bytes = 0;
    WS_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, okb.Current(), uniq, rkb.Current(), best,
                                                 d_counts_.data() + 1, MinKey{}, selected, s));
    grow(d_temp_, bytes);
    WS_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(d_temp_.data(), bytes, okb.Current(), uniq, rkb.Current(),
                                                 best, d_counts_.data() + 1, MinKey{}, selected, s));
    std::int64_t origins = 0;
    WS_CUDA_CHECK(
        cudaMemcpyAsync(&origins, d_counts_.data() + 1, sizeof(origins), cudaMemcpyDeviceToHost, s));
    stream_.synchronize();

    // 5. Rank the per-origin bests; 6. the first `limit` records.
    std::uint64_t* ranked = okb.Current();  // free again
    bytes = 0;
    WS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, best, ranked, origins, 0, 64, s));
    grow(d_temp_, bytes);
    WS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(d_temp_.data(), bytes, best, ranked, origins, 0, 64, s));
    const auto keep =
        static_cast<std::int64_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(origins), limit));
    out.truncated = static_cast<std::uint64_t>(origins) > limit;
    if (keep == 0) return out;
    grow(d_picked_, static_cast<std::size_t>(keep));
    gather_kernel<<<blocks_for(keep, 256), 256, 0, s>>>(d_records_.data(), ranked, keep, d_picked_.data(),
                                                        d_cols_.data());
    WS_CUDA_CHECK_LAUNCH();
    std::vector<ColumnRecord> recs(static_cast<std::size_t>(keep));
    std::vector<std::int32_t> cols(static_cast<std::size_t>(keep));
    d_picked_.download_async(std::span<ColumnRecord>(recs), stream_);
    WS_CUDA_CHECK(cudaMemcpyAsync(cols.data(), d_cols_.data(), cols.size() * sizeof(std::int32_t),
                                  cudaMemcpyDeviceToHost, s));
    stream_.synchronize();
    out.items.reserve(recs.size());
    for (std::size_t k = 0; k < recs.size(); ++k)
      out.items.push_back(
          Candidate{recs[k].score, seq, strand, recs[k].qstart, recs[k].qend, recs[k].tstart, cols[k]});
    return out;
  }

  int device_;
  ScanModel model_;
  std::vector<std::uint8_t> query_;
  std::int64_t m_ = 0;
  std::int64_t n_ = 0;
  int sms_ = 1;
  int classes_ = 0;
  std::array<std::uint8_t, kMaxCodes> code_class_{};
  std::vector<std::int8_t> class_scores_;
  int forced_r_ = 0;
  int forced_block_width_ = 0;
  int sharing_ = 1;
  std::array<Shape, 3> shapes_{};
  LaunchInfo last_;

  std::shared_ptr<LaunchPair> pair_;
  int pair_index_ = 0;
  rt::Stream stream_{};
  rt::Event launch_start_{}, launch_stop_{}, ready_{};
  rt::DeviceBuffer<std::uint8_t> d_query_, d_code_class_, d_codes_, d_target_;
  rt::DeviceBuffer<std::int8_t> d_class_scores_;
  rt::DeviceBuffer<std::uint32_t> d_bad_, d_flags_, d_counter_;
  rt::DeviceBuffer<ColumnRecord> d_records_, d_picked_;
  rt::DeviceBuffer<TaskInfo> d_tasks_;
  rt::DeviceBuffer<RowState> d_states_in_, d_states_out_;
  rt::DeviceBuffer<BoundaryCell> d_boundary_;
  rt::DeviceBuffer<int4> d_diag_;
  rt::PinnedBuffer<RowState> h_states_;
  ThreadPool pool_{std::min(8u, ThreadPool::resolve(0))};
  rt::DeviceBuffer<std::int32_t> d_cols_;
  rt::DeviceBuffer<std::uint64_t> d_okeys_, d_rkeys_;
  rt::DeviceBuffer<std::int64_t> d_counts_;
  rt::DeviceBuffer<std::uint8_t> d_temp_;
};

}  // namespace

std::unique_ptr<SectionRunner> make_runner(const ScanModel& model, std::span<const std::uint8_t> query,
                                           int device, const RunnerOptions& options) {
  return std::make_unique<GpuRunner>(model, query, device, options);
}

std::pair<std::unique_ptr<SectionRunner>, std::unique_ptr<SectionRunner>> make_runner_pair(
    const ScanModel& model, std::span<const std::uint8_t> first, std::span<const std::uint8_t> second,
    int device, RunnerOptions options) {
  if (first.size() != second.size())
    throw Error(ErrorKind::kUsage, "scan GPU runner pair: the two queries must have the same length");
  options.sharing = 2;
  auto a = std::make_unique<GpuRunner>(model, first, device, options);
  auto b = std::make_unique<GpuRunner>(model, second, device, options);
  auto pair = std::make_shared<LaunchPair>();
  a->join(pair, 0);
  b->join(pair, 1);
  return {std::move(a), std::move(b)};
}

LaunchInfo last_launch(const SectionRunner& runner) {
  const auto* gpu = dynamic_cast<const GpuRunner*>(&runner);
  if (gpu == nullptr) fail("last_launch: not a GPU runner");
  return gpu->last_launch();
}

std::vector<ColumnRecord> download_records(SectionRunner& runner, std::int64_t begin, std::int64_t end) {
  auto* gpu = dynamic_cast<GpuRunner*>(&runner);
  if (gpu == nullptr) fail("download_records: not a GPU runner");
  return gpu->records(begin, end);
}

}  // namespace gpu

std::unique_ptr<SectionRunner> make_gpu_runner(const ScanModel& model, std::span<const std::uint8_t> query,
                                               int device, int sharing) {
  gpu::RunnerOptions options;
  options.sharing = sharing;
  return gpu::make_runner(model, query, device, options);
}

std::pair<std::unique_ptr<SectionRunner>, std::unique_ptr<SectionRunner>> make_gpu_runner_pair(
    const ScanModel& model, std::span<const std::uint8_t> first, std::span<const std::uint8_t> second,
    int device) {
  return gpu::make_runner_pair(model, first, second, device, gpu::RunnerOptions{});
}

}  // namespace warpsearch::scan
