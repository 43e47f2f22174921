// gpu_engine.cu: PassEngine (gpu_engine.hpp): sorting, launch packing, device memory, three launches
// in flight, and the dispatch table of pass kernel instances (pass_kernel.cuh).
//
// Calls (run() / submit()) queue up and one feeder thread per engine runs them in order, back to
// back: the first launches of a call are packed while the previous call's last launches still run,
// so the GPU does not drain between calls. Jobs are taken in windows of about one launch each, in call
// order. Helper threads (one per window) classify and sort up to five windows ahead (of the same call,
// or of the next calls queued; gpu_plan.hpp; chunks on the thread pool) and cut them into launch plans
// while the feeder packs and queues the current one. Each launch owns a Flight: pinned staging
// buffers, device buffers and a stream; there are three. While launches k and k+1 are queued on two flights'
// streams, the feeder packs launch k+2 into the third flight's pinned buffers (residue copies on the pool),
// so transfers and kernels of consecutive launches overlap and a slow moment of the host does not leave the
// GPU idle. A flight is reused only after its results were scattered back to its call's job order; a
// call is complete when its last launch is.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/check.cuh"
#include "sw/cuda/pass_kernel.cuh"
#include "sw/gpu_engine.hpp"
#include "sw/gpu_plan.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::sw::gpu {
namespace {

namespace rt = ::warpsearch::gpu;  // CUDA RAII types (gpu/cuda/buffers.cuh)

constexpr int kMaxLetters = kMaxCodes + 1;  // letter classes plus an explicit pad letter

// ---- dispatch table: one entry per (lane kind, shape, local/non-local) ----------------------------
using PassLaunchFn = void (*)(const PassParams&, std::uint32_t warp_begin, std::uint32_t warps,
                              std::size_t smem, cudaStream_t stream);
using PassPrepareFn = void (*)(std::size_t max_smem);

struct KernelEntry {
  PassLaunchFn launch;
  PassPrepareFn prepare;
};

template <class L, int G, int R, bool kLocal>
void launch_pass(const PassParams& p, std::uint32_t warp_begin, std::uint32_t warps, std::size_t smem,
                 cudaStream_t stream) {
  const unsigned blocks = (warps + kBlockWarps - 1) / kBlockWarps;
  pass_kernel<L, G, R, kLocal><<<blocks, kBlockWarps * 32, smem, stream>>>(p, warp_begin, warps);
  WS_CUDA_CHECK_LAUNCH();
}

template <class L, int G, int R, bool kLocal>
void prepare_pass(std::size_t max_smem) {
  WS_CUDA_CHECK(cudaFuncSetAttribute(
      pass_kernel<L, G, R, kLocal>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(max_smem)));
}

constexpr std::size_t kShapeCount = kPassShapes.size();
constexpr std::size_t kernel_index(LaneKind lane, std::size_t shape, bool local) {
  return (static_cast<std::size_t>(lane) * kShapeCount + shape) * 2 + (local ? 1 : 0);
}

template <std::size_t I>
constexpr KernelEntry kernel_entry() {
  constexpr std::size_t lane = I / (2 * kShapeCount);
  constexpr std::size_t shape = (I / 2) % kShapeCount;
  constexpr bool local = I % 2 == 1;
  using L = std::conditional_t<lane == 0, Lane16x2, Lane32>;
  constexpr PassShape sh = kPassShapes[shape];
  return {&launch_pass<L, sh.g, sh.r, local>, &prepare_pass<L, sh.g, sh.r, local>};
}

template <std::size_t... I>
constexpr std::array<KernelEntry, sizeof...(I)> make_kernel_table(std::index_sequence<I...>) {
  return {kernel_entry<I>()...};
}

constexpr auto kKernels = make_kernel_table(std::make_index_sequence<2 * kShapeCount * 2>());
static_assert(kernel_index(LaneKind::k32, kShapeCount - 1, true) == kKernels.size() - 1);

void launch_prep(LaneKind lane, const PassParams& p, const Bucket& b, cudaStream_t stream) {
  const PassShape sh = kPassShapes[b.shape];
  const unsigned blocks = b.warp_end - b.warp_begin;
  if (lane == LaneKind::k16x2) {
    prep_kernel<Lane16x2><<<blocks, kPrepThreads, 0, stream>>>(p, b.warp_begin, sh.g, sh.r);
  } else {
    prep_kernel<Lane32><<<blocks, kPrepThreads, 0, stream>>>(p, b.warp_begin, sh.g, sh.r);
  }
  WS_CUDA_CHECK_LAUNCH();
}

// Grows a buffer to hold `need` elements: to at least twice the need, capped at `cap` (never below
// the need), so buffers settle after a few launches.
template <class Buffer>
void grow(Buffer& buffer, std::size_t need, std::size_t cap) {
  if (buffer.size() >= need) return;
  buffer = Buffer();  // free first
  buffer = Buffer(std::max(need, std::min(cap, 2 * need)));
}

// Concatenates the pieces (one string built by appending: GCC 12 reports a false -Wrestrict on
// chains of operator+).
std::string cat(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (const std::string_view piece : pieces) out.append(piece);
  return out;
}

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
double seconds_since(Clock::time_point a) { return seconds_between(a, Clock::now()); }

double seconds_between(const rt::Event& a, const rt::Event& b) {
  return static_cast<double>(rt::Event::elapsed_ms(a, b)) / 1000.0;
}

}  // namespace

struct PassEngine::Impl {
  // One run() / submit() call: its jobs and results, and how many of its launches are in flight.
  struct Call {
    std::span<const PassJob> jobs;
    std::span<EndPoint> out;
    std::promise<void> promise;
    std::size_t in_flight = 0;  // launches queued on the GPU whose results are not yet scattered
    bool fed = false;           // every launch queued, or the call failed
    std::exception_ptr error;
    std::vector<std::size_t> bounds;  // end of each window (cut when the feeder takes the call up)
    std::size_t windows_started = 0;  // windows handed to the helpers so far
  };

  // One launch in flight.
  struct Flight {
    rt::Stream stream;
    rt::Event start, uploaded, computed, done;
    rt::PinnedBuffer<std::uint8_t> h_residues;
    rt::PinnedBuffer<SlotInfo> h_slots;
    rt::PinnedBuffer<WarpInfo> h_warps;
    rt::PinnedBuffer<EndPoint> h_results;
    rt::DeviceBuffer<std::uint8_t> d_residues;
    rt::DeviceBuffer<SlotInfo> d_slots;
    rt::DeviceBuffer<WarpInfo> d_warps;
    rt::DeviceBuffer<std::uint32_t> d_letters;
    rt::DeviceBuffer<std::uint32_t> d_border;  // two words per column
    rt::DeviceBuffer<EndPoint> d_results;
    LaunchPlan plan;  // job indices relative to the window starting at job `base` of `call`
    std::size_t base = 0;
    Call* call = nullptr;
    bool busy = false;
  };

  // A window classified and sorted (by a helper thread, while the feeder packs the previous
  // window and the GPU runs the one before).
  struct Window {
    Call* call = nullptr;  // jobs [begin, end) of this call
    std::size_t begin = 0;
    std::size_t end = 0;
    std::vector<JobClass> classes;
    std::vector<SortedJob> sorted;
    SortScratch scratch;
    std::vector<std::size_t> bad;   // prepare_window: first violating job per chunk
    std::vector<LaunchPlan> plans;  // the window's launches: plans[0, launches); swapped into flights
    std::size_t launches = 0;
    double seconds = 0;       // host time spent classifying and sorting it
    double plan_seconds = 0;  // host time spent cutting it into launches
  };

  PassModel model;
  int device = 0;
  PassPolicy policy;
  LetterClasses letters;
  std::string device_name;
  LaunchCaps caps;
  ThreadPool pool;
  rt::DeviceBuffer<std::int8_t> d_ctab;
  // Everything below the queue is the feeder thread's alone.
  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<std::unique_ptr<Call>> queue;  // submitted, not yet started (under queue_mutex)
  bool stopping = false;                    // the destructor asks the feeder to end (under queue_mutex)
  mutable std::mutex stats_mutex;
  Stats published;  // `stats` as of the last completed call (under stats_mutex): what stats() returns
  // Three flights: the feeder packs launch k+2 while launches k and k+1 are queued on the GPU, so a slow
  // moment of the host (or a short launch) does not leave the GPU idle.
  static constexpr std::size_t kFlights = 3;
  std::array<Flight, kFlights> flights;
  std::size_t next = 0;  // flight of the next launch; from it on, the busy flights in launch order
  void advance_flight() { next = (next + 1) % kFlights; }
  Stats stats;
  std::deque<std::unique_ptr<Call>> active;  // started and not complete, oldest first
  Clock::time_point busy_since;              // when `active` last became non-empty (Stats::run_s)
  // Windows in order, across calls: a ring of windows[(ring_head + i) % kWindows] for i < ring_size, the
  // first being packed, the others being prepared by helpers (ahead[] of the same slot). Preparing a
  // window (4-10 ms for 131,072 jobs on a 16-core host) takes longer than a short launch runs (DNA reverse
  // passes, about 3 ms on an H200), so the ring holds five windows ahead: with two, the feeder waited
  // 20-30 ms per 10^6 DNA forward and reverse passes (docs/PERFORMANCE.md, 2026-12-04).
  static constexpr std::size_t kWindows = 6;
  std::array<Window, kWindows> windows;  // reused across calls
  std::array<std::future<void>, kWindows> ahead;
  std::size_t ring_head = 0, ring_size = 0;
  Call* taking = nullptr;     // the call with windows not yet handed to helpers (it is in `active`)
  std::exception_ptr broken;  // the device could not be made current: every call fails with it
  std::thread feeder;         // started last, joined first

  Impl(const PassModel& m, int dev, std::size_t max_pairs, const PassPolicy& pol)
      : model(m), device(dev), policy(pol), letters(letter_classes(m)), pool(pol.pack_threads) {
    if (letters.count > kMaxLetters)
      throw Error(ErrorKind::kInternal, "pass engine: too many letter classes");
    cudaDeviceProp prop{};
    WS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    device_name = cat({"GPU ", std::to_string(device), " (", prop.name, ", ",
                       std::to_string(prop.multiProcessorCount), " SMs)"});
    std::size_t max_smem = 0;
    for (const PassShape sh : kPassShapes)
      max_smem = std::max(max_smem, pass_smem_bytes(2, kMaxLetters, sh.r));
    for (const KernelEntry& k : kKernels) k.prepare(max_smem);
    d_ctab = rt::DeviceBuffer<std::int8_t>(letters.ctab.size());
    d_ctab.upload(std::span<const std::int8_t>(letters.ctab.data(), letters.ctab.size()));
    size_caps(max_pairs);
    reserve_flights();
    reserve_host();
    feeder = std::thread([this] { feeder_loop(); });
  }

  // The feeder runs every call already submitted before it ends.
  ~Impl() {
    {
      std::lock_guard lock(queue_mutex);
      stopping = true;
    }
    queue_cv.notify_all();
    feeder.join();
  }

  // Sizes (and so pages in) the host buffers of planning for full windows and launches: memory a
  // process touches for the first time is paged in by those writes, on virtual machines at several ns
  // per byte, which made the first engine calls' planning several times slower than the later ones'.
  void reserve_host() {
    const std::size_t jobs = caps.jobs;
    const auto reserve = [&](LaunchPlan& plan) {
      plan.jobs.resize(jobs);
      plan.offsets.resize(jobs);
      plan.slots.resize(std::min(caps.slots, jobs + 1024));  // 16x2 lanes: about jobs / 2
      plan.warps.resize(std::min(caps.warps, jobs / 2 + 64));
      plan.clear();
    };
    for (Window& w : windows) {
      w.classes.resize(jobs);
      w.sorted.resize(jobs);
      w.scratch.items.resize(jobs);
      w.scratch.tmp.resize(jobs);
      w.plans.resize(1);  // a window usually makes one launch
      reserve(w.plans[0]);
    }
    for (Flight& f : flights) reserve(f.plan);
  }

  // Allocates every flight's pinned and device buffers at their caps up front, so that the first
  // batches do not pay for (slow, process-serialising) pinned allocations while GPUs wait.
  void reserve_flights() {
    for (Flight& f : flights) grow_flight(f, caps);
  }

  // Grows every buffer of a flight to hold `need` (never shrinks; see grow()).
  void grow_flight(Flight& f, const LaunchCaps& need) {
    grow(f.h_residues, need.residues, caps.residues);
    grow(f.d_residues, need.residues, caps.residues);
    grow(f.h_slots, need.slots, caps.slots);
    grow(f.d_slots, need.slots, caps.slots);
    grow(f.h_warps, need.warps, caps.warps);
    grow(f.d_warps, need.warps, caps.warps);
    grow(f.h_results, need.jobs, caps.jobs);
    grow(f.d_results, need.jobs, caps.jobs);
    grow(f.d_letters, need.columns, caps.columns);
    grow(f.d_border, 2 * need.columns, 2 * caps.columns);
  }

  // Launch caps from the policy, lowered so that kFlights launches fit memory_fraction of free memory.
  void size_caps(std::size_t max_pairs) {
    std::size_t free_bytes = 0, total_bytes = 0;
    WS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const auto budget =
        static_cast<double>(free_bytes) * policy.memory_fraction / static_cast<double>(kFlights);
    std::size_t residues = std::max<std::size_t>(policy.launch_residues, 1u << 20);
    std::size_t jobs = max_pairs != 0 ? max_pairs : std::max<std::size_t>(policy.launch_jobs, 64);
    for (;;) {
      caps.residues = residues;
      caps.jobs = jobs;
      caps.columns = residues + jobs * 40;  // targets plus per-slot skew and rounding
      caps.warps = jobs + 64;
      caps.slots = 2 * jobs + 1024;
      const double bytes = static_cast<double>(caps.residues) + 12.0 * static_cast<double>(caps.columns) +
                           static_cast<double>(caps.jobs * sizeof(EndPoint) + caps.slots * sizeof(SlotInfo) +
                                               caps.warps * sizeof(WarpInfo));
      if (bytes <= budget || residues <= (std::size_t{1} << 20)) break;
      residues = std::max<std::size_t>(residues / 2, 1u << 20);
      if (max_pairs == 0) jobs = std::max<std::size_t>(jobs / 2, 64);
    }
  }

  // Grows the flight's buffers for its plan and copies the launch's data into the pinned buffers: the
  // residues in chunks of jobs, the slot and warp records in chunks of bytes, all on the pool.
  void pack(Flight& f, std::span<const PassJob> jobs) {
    grow_flight(f, f.plan.needs());
    const LaunchPlan& plan = f.plan;
    constexpr std::size_t kJobChunk = 1024;
    constexpr std::size_t kByteChunk = std::size_t{1} << 20;
    const std::size_t job_chunks = (plan.jobs.size() + kJobChunk - 1) / kJobChunk;
    const std::span<const std::uint8_t> slots(reinterpret_cast<const std::uint8_t*>(plan.slots.data()),
                                              plan.slots.size() * sizeof(SlotInfo));
    const std::span<const std::uint8_t> warps(reinterpret_cast<const std::uint8_t*>(plan.warps.data()),
                                              plan.warps.size() * sizeof(WarpInfo));
    const std::size_t slot_chunks = (slots.size() + kByteChunk - 1) / kByteChunk;
    const std::size_t warp_chunks = (warps.size() + kByteChunk - 1) / kByteChunk;
    std::uint8_t* const dst = f.h_residues.data();
    const auto copy_bytes = [&](std::span<const std::uint8_t> src, std::uint8_t* to, std::size_t chunk) {
      const std::size_t begin = chunk * kByteChunk;
      std::memcpy(to + begin, src.data() + begin, std::min(kByteChunk, src.size() - begin));
    };
    pool.parallel_for(job_chunks + slot_chunks + warp_chunks, 1, [&](std::size_t c0, std::size_t c1) {
      for (std::size_t c = c0; c < c1; ++c) {
        if (c < job_chunks) {
          const std::size_t end = std::min(plan.jobs.size(), (c + 1) * kJobChunk);
          for (std::size_t l = c * kJobChunk; l < end; ++l) {
            const PassJob& job = jobs[plan.jobs[l]];
            std::uint8_t* const to = dst + plan.offsets[l];
            if (job.query + job.qlen == job.target) {  // adjacent, as in align::Batch: one copy
              std::memcpy(to, job.query, std::size_t{job.qlen} + job.tlen);
            } else {
              std::memcpy(to, job.query, job.qlen);
              std::memcpy(to + job.qlen, job.target, job.tlen);
            }
          }
        } else if (c < job_chunks + slot_chunks) {
          copy_bytes(slots, reinterpret_cast<std::uint8_t*>(f.h_slots.data()), c - job_chunks);
        } else {
          copy_bytes(warps, reinterpret_cast<std::uint8_t*>(f.h_warps.data()), c - job_chunks - slot_chunks);
        }
      }
    });
  }

  // Queues upload, prep and pass kernels and the result download on the flight's stream.
  void enqueue(Flight& f) {
    const LaunchPlan& plan = f.plan;
    f.start.record(f.stream);
    f.d_residues.upload_async(std::span<const std::uint8_t>(f.h_residues.data(), plan.residues), f.stream);
    f.d_slots.upload_async(std::span<const SlotInfo>(f.h_slots.data(), plan.slots.size()), f.stream);
    f.d_warps.upload_async(std::span<const WarpInfo>(f.h_warps.data(), plan.warps.size()), f.stream);
    f.uploaded.record(f.stream);

    PassParams p;
    p.residues = f.d_residues.data();
    p.slots = f.d_slots.data();
    p.warps = f.d_warps.data();
    p.letters = f.d_letters.data();
    p.border = f.d_border.data();
    p.results = f.d_results.data();
    p.ctab = d_ctab.data();
    p.open = model.open;
    p.extend = model.extend;
    p.mode = static_cast<std::int32_t>(model.mode);
    p.letters_count = letters.count;
    p.pad_class = letters.pad;
    std::copy(letters.code_class.begin(), letters.code_class.end(), p.code_class);
    const bool local = model.mode == Mode::kLocal;
    for (const Bucket& b : plan.buckets) launch_prep(b.lane, p, b, f.stream.get());
    for (const Bucket& b : plan.buckets) {
      const PassShape sh = kPassShapes[b.shape];
      const std::size_t smem = pass_smem_bytes(lane_pairs(b.lane), letters.count, sh.r);
      kKernels[kernel_index(b.lane, b.shape, local)].launch(p, b.warp_begin, b.warp_end - b.warp_begin, smem,
                                                            f.stream.get());
    }
    f.computed.record(f.stream);
    f.d_results.download_async(std::span<EndPoint>(f.h_results.data(), plan.jobs.size()), f.stream);
    f.done.record(f.stream);
    f.busy = true;
    ++stats.launches;
    stats.cells16 += plan.cells16;
    stats.cells32 += plan.cells32;
  }

  // Waits for the flight's launch, scatters its results to its call's job order and completes the
  // call if that was its last launch. If it throws, the flight is still busy (for abort()).
  void finish(Flight& f) {
    const Clock::time_point t0 = Clock::now();
    f.done.synchronize();
    const double kernel = seconds_between(f.uploaded, f.computed);
    const double transfer = seconds_between(f.start, f.uploaded) + seconds_between(f.computed, f.done);
    stats.kernel_s += kernel;
    stats.transfer_s += transfer;
    const LaunchPlan& plan = f.plan;
    if (!f.call->error) {
      const std::span<EndPoint> out = f.call->out.subspan(f.base);
      for (std::size_t l = 0; l < plan.jobs.size(); ++l) out[plan.jobs[l]] = f.h_results[l];
    }
    stats.host_wait_s += seconds_since(t0);
    release(f);
  }

  // The flight is free again; its call is complete if that was its last launch.
  void release(Flight& f) {
    f.busy = false;
    Call& call = *f.call;
    --call.in_flight;
    if (call.fed && call.in_flight == 0) complete(call);
  }

  bool any_busy() const {
    return std::any_of(flights.begin(), flights.end(), [](const Flight& f) { return f.busy; });
  }
  // The flight of the oldest launch in flight (any_busy() must hold).
  Flight& oldest_busy() {
    for (std::size_t i = 0;; ++i)
      if (Flight& f = flights[(next + i) % kFlights]; f.busy) return f;
  }

  // Satisfies the call's promise, after publishing the stats that include it (a caller reading stats()
  // once its future is ready sees its call counted), and forgets the call.
  void complete(Call& call) {
    const auto it =
        std::find_if(active.begin(), active.end(), [&](const auto& c) { return c.get() == &call; });
    std::unique_ptr<Call> owned = std::move(*it);
    active.erase(it);
    if (active.empty()) stats.run_s += seconds_since(busy_since);
    {
      std::lock_guard lock(stats_mutex);
      published = stats;
    }
    if (owned->error) {
      owned->promise.set_exception(owned->error);
    } else {
      owned->promise.set_value();
    }
  }

  // After an error: `culprit` (if any) fails with it; every launch in flight is waited for, and those
  // whose stream reports no error still deliver their results (an earlier call's launches complete
  // normally when the failure was the culprit's own, e.g. a job breaking the preconditions).
  void abort(const std::exception_ptr& error, Call* culprit) {
    if (culprit != nullptr) {
      if (!culprit->error) culprit->error = error;
      culprit->fed = true;
      if (culprit->in_flight == 0) complete(*culprit);  // else its last launch's release() completes it
    }
    for (std::size_t i = 0; i < kFlights; ++i, advance_flight()) {  // the oldest launch first
      Flight& f = flights[next];
      const bool synced = cudaStreamSynchronize(f.stream.get()) == cudaSuccess;  // (busy or half queued)
      if (!f.busy) continue;
      if (synced) {
        try {
          finish(f);
          continue;
        } catch (...) {  // (the flight stays busy; failed below)
        }
      }
      if (!f.call->error) f.call->error = error;
      release(f);
    }
  }

  // Jobs [begin, end) of a window of at most max_jobs jobs and max_residues residues (at least one job).
  static std::size_t window_end(std::span<const PassJob> jobs, std::size_t begin, std::size_t max_jobs,
                                std::uint64_t max_residues) {
    std::size_t end = begin;
    std::uint64_t residues = 0;
    while (end < jobs.size() && end - begin < max_jobs &&
           residues + jobs[end].qlen + jobs[end].tlen <= max_residues) {
      residues += jobs[end].qlen + jobs[end].tlen;
      ++end;
    }
    return std::max(end, begin + 1);
  }

  // Classifies and sorts a window, in chunks of kSortGrain jobs on the pool, and cuts it into launch
  // plans (on a helper thread: the feeder packs earlier windows' launches on the same pool
  // meanwhile, and another helper may prepare the next window). A job violating the preconditions
  // throws; the first such job of the window is named whatever the thread count.
  void prepare_window(Window& w) {
    const Clock::time_point t0 = Clock::now();
    const std::size_t begin = w.begin;
    const std::span<const PassJob> window = w.call->jobs.subspan(begin, w.end - begin);
    w.classes.resize(window.size());
    const std::size_t chunks = (window.size() + kSortGrain - 1) / kSortGrain;
    w.bad.assign(chunks, window.size());  // per chunk: its first violating job, or window.size()
    pool.parallel_for(window.size(), kSortGrain, [&](std::size_t first, std::size_t last) {
      for (std::size_t k = first; k < last; ++k) {
        const PassJob& job = window[k];
        if (job.qlen == 0 || job.tlen == 0 || !fits_int32(model, job.qlen, job.tlen) || job.score < 0 ||
            (job.score > 0 && model.mode != Mode::kLocal)) {
          w.bad[first / kSortGrain] = k;
          return;
        }
        w.classes[k] = classify(model, job.qlen, job.tlen, policy, job.score > 0);
      }
    });
    for (const std::size_t k : w.bad)
      if (k < window.size())
        throw Error(ErrorKind::kInternal,
                    cat({"PassEngine::run: job ", std::to_string(begin + k), " of lengths ",
                         std::to_string(window[k].qlen), " x ", std::to_string(window[k].tlen),
                         " violates the pass preconditions"}));
    // (explicit spans: nvcc's front end does not convert vectors to spans)
    sort_jobs(std::span<const JobClass>(w.classes.data(), w.classes.size()), window, w.sorted, w.scratch,
              &pool);
    const Clock::time_point t1 = Clock::now();
    w.seconds = seconds_between(t0, t1);
    const std::span<const SortedJob> order(w.sorted.data(), w.sorted.size());
    w.launches = 0;
    for (std::size_t pos = 0; pos < order.size(); ++w.launches) {
      if (w.plans.size() == w.launches) w.plans.emplace_back();
      pos = plan_launch(model, order, pos, caps, w.plans[w.launches]);
    }
    w.plan_seconds = seconds_since(t1);
  }

  // Splits a call's jobs into windows: as many jobs as one launch's caps hold, except at the start. With
  // the GPU idle, the first windows hold the caps >> policy.first_window_shift, then twice that, and so
  // on, so that the GPU starts early. Behind windows of earlier calls still to be packed, the windows
  // are whole launches at once; behind launches in flight only, the first window holds as much as they
  // do (between those two sizes): it is prepared and packed while they run.
  void cut_windows(Call& call) const {
    const int shift = std::clamp(policy.first_window_shift, 0, 16);
    std::size_t max_jobs = std::max<std::size_t>(caps.jobs >> shift, 1);
    std::uint64_t max_residues = caps.residues >> shift;
    if (ring_size > 0) {
      max_jobs = caps.jobs;
      max_residues = caps.residues;
    }
    for (const Flight& f : flights) {
      if (!f.busy) continue;
      max_jobs = std::clamp<std::size_t>(f.plan.jobs.size(), max_jobs, caps.jobs);
      max_residues = std::clamp<std::uint64_t>(f.plan.residues, max_residues, caps.residues);
    }
    call.bounds.clear();
    for (std::size_t begin = 0; begin < call.jobs.size();) {
      begin = window_end(call.jobs, begin, max_jobs, max_residues);
      call.bounds.push_back(begin);
      max_jobs = std::min(caps.jobs, 2 * max_jobs);
      max_residues = std::min<std::uint64_t>(caps.residues, 2 * max_residues);
    }
  }

  // Hands windows to helper threads until the ring holds `limit`: the rest of the call being taken up,
  // then the calls waiting in the queue (taken up in order, without blocking).
  void start_windows(std::size_t limit) {
    while (ring_size < limit) {
      if (taking == nullptr) {
        std::unique_ptr<Call> call;
        {
          std::lock_guard lock(queue_mutex);
          if (queue.empty()) return;
          call = std::move(queue.front());
          queue.pop_front();
        }
        if (broken) {
          call->promise.set_exception(broken);
          continue;
        }
        if (active.empty()) busy_since = Clock::now();
        cut_windows(*call);
        taking = call.get();
        active.push_back(std::move(call));
      }
      const std::size_t slot = (ring_head + ring_size) % kWindows;
      const std::size_t i = taking->windows_started++;
      Window& w = windows[slot];
      w.call = taking;
      w.begin = i == 0 ? 0 : taking->bounds[i - 1];
      w.end = taking->bounds[i];
      if (taking->windows_started == taking->bounds.size()) taking = nullptr;  // (it may complete later)
      ahead[slot] = std::async(std::launch::async, [this, &w] { prepare_window(w); });
      ++ring_size;
    }
  }

  // The first window of the ring leaves it.
  void pop_window() {
    ring_head = (ring_head + 1) % kWindows;
    --ring_size;
  }

  // Waits for the first window of the ring and queues its launches; the call is fed after its last
  // window. Launches of earlier calls may still be in flight.
  void feed_window() {
    Window& w = windows[ring_head];
    Call& call = *w.call;
    try {
      const Clock::time_point wait0 = Clock::now();
      ahead[ring_head].get();
      stats.host_window_wait_s += seconds_since(wait0);
      start_windows(kWindows);  // the next windows are prepared while this one is packed
      stats.host_window_s += w.seconds;
      stats.host_plan_s += w.plan_seconds;
      const std::span<const PassJob> window = call.jobs.subspan(w.begin, w.end - w.begin);
      for (std::size_t l = 0; l < w.launches; ++l, advance_flight()) {
        Flight& f = flights[next];
        if (f.busy) finish(f);
        std::swap(f.plan, w.plans[l]);  // the flight's old plan is reused by a later window
        f.base = w.begin;
        f.call = &call;
        const Clock::time_point t1 = Clock::now();
        pack(f, window);
        stats.host_pack_s += seconds_since(t1);
        enqueue(f);
        ++call.in_flight;
      }
      const bool last = w.end == call.jobs.size();
      pop_window();
      if (last) call.fed = true;  // (its last launch, just queued, completes it when released)
    } catch (...) {
      fail(call, std::current_exception());
    }
  }

  // The call fails: its windows leave the ring (their helpers joined), none more are started, and
  // abort() settles the launches in flight. (The call's windows are the first ones of the ring.)
  void fail(Call& call, const std::exception_ptr& error) {
    while (ring_size > 0 && windows[ring_head].call == &call) {
      if (ahead[ring_head].valid()) ahead[ring_head].wait();
      ahead[ring_head] = {};
      pop_window();
    }
    if (taking == &call) taking = nullptr;
    abort(error, &call);
  }

  // Runs the calls in submission order, back to back. With no window to pack it completes the
  // launches in flight, the oldest first, looking for a new call before each.
  void feeder_loop() {
    try {
      WS_CUDA_CHECK(cudaSetDevice(device));
    } catch (...) {
      broken = std::current_exception();
    }
    for (;;) {
      start_windows(kWindows - 1);
      if (ring_size > 0) {
        feed_window();
        continue;
      }
      std::unique_lock lock(queue_mutex);
      if (!queue.empty()) continue;
      if (any_busy()) {
        lock.unlock();
        try {
          finish(oldest_busy());
        } catch (...) {
          abort(std::current_exception(), nullptr);
        }
        continue;
      }
      queue_cv.wait(lock, [&] { return !queue.empty() || stopping; });
      if (queue.empty()) return;  // stopping, nothing in flight
    }
  }

  std::future<void> submit(std::span<const PassJob> jobs, std::span<EndPoint> out) {
    if (out.size() != jobs.size())
      throw Error(ErrorKind::kInternal, cat({"PassEngine::run: ", std::to_string(jobs.size()), " jobs but ",
                                             std::to_string(out.size()), " results"}));
    auto call = std::make_unique<Call>();
    call->jobs = jobs;
    call->out = out;
    std::future<void> done = call->promise.get_future();
    if (jobs.empty()) {
      call->promise.set_value();
      return done;
    }
    {
      std::lock_guard lock(queue_mutex);
      queue.push_back(std::move(call));
    }
    queue_cv.notify_one();
    return done;
  }

  Stats current_stats() const {
    std::lock_guard lock(stats_mutex);
    return published;
  }
};

PassEngine::PassEngine(const PassModel& model, int device, std::size_t max_pairs_per_launch)
    : PassEngine(model, device, max_pairs_per_launch, PassPolicy{}) {}

PassEngine::PassEngine(const PassModel& model, int device, std::size_t max_pairs_per_launch,
                       const PassPolicy& policy) {
  const rt::DeviceGuard guard(device);
  impl_ = std::make_unique<Impl>(model, device, max_pairs_per_launch, policy);
}

PassEngine::~PassEngine() {
  if (!impl_) return;
  try {
    const rt::DeviceGuard guard(impl_->device);
    impl_.reset();
  } catch (...) {  // a broken device: free what can be freed wherever we are
    impl_.reset();
  }
}

void PassEngine::run(std::span<const PassJob> jobs, std::span<EndPoint> out) {
  impl_->submit(jobs, out).get();
}

std::future<void> PassEngine::submit(std::span<const PassJob> jobs, std::span<EndPoint> out) {
  return impl_->submit(jobs, out);
}

std::string PassEngine::describe() const {
  std::string shapes;
  for (const PassShape sh : kPassShapes)
    shapes += cat({" ", std::to_string(sh.g), "x", std::to_string(sh.r)});
  return cat({impl_->device_name, ": CUDA pass engine, shapes (threads x rows)", shapes,
              ", 16x2/32-bit lanes, launches of up to ", std::to_string(impl_->caps.jobs), " pairs / ",
              std::to_string(impl_->caps.residues >> 20), " MiB of residues"});
}

PassEngine::Stats PassEngine::stats() const { return impl_->current_stats(); }

}  // namespace warpsearch::sw::gpu
