// gpu_engine.hpp: the CUDA tier of the pass (model.hpp): a batched engine that computes, for many
// independent (query, target) pairs, exactly the EndPoint of sw::reference::pass (score and end cell
// under the column-major tie rule, local/global/semiglobal), bit for bit.
//
//   PassJob     one pair, optionally read backwards (the start-finding pass of model.hpp)
//   PassPolicy  tuning constants of the engine (gpu_plan.hpp; to be measured on the target GPUs)
//   PassEngine  one GPU: sorts jobs into kernel classes, packs launches, runs three in flight;
//               calls queue up and run back to back on the engine's own thread
//
// Host-only header, usable in every build; the definitions exist only in CUDA builds
// (src/sw/cuda/gpu_engine.cu), so callers guard their use with WARPSEARCH_HAVE_CUDA.
//
// Usage:
//   gpu::PassEngine engine(model, device_id, 0);
//   std::vector<gpu::PassJob> jobs = ...;          // pointers stay valid during run()
//   std::vector<EndPoint> ends(jobs.size());
//   engine.run(jobs, ends);                        // ends[k] == reference::pass(job k)
//   auto done = engine.submit(more_jobs, more_ends);  // queued behind earlier calls; returns at once
//   ...                                            // (build the next call meanwhile)
//   done.get();                                    // more_ends filled, or the call's error rethrown
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <string>

#include "sw/model.hpp"

namespace warpsearch::sw::gpu {

// One pass. reversed: row i reads query[qlen-1-i] and column j reads target[tlen-1-j], i.e. the pass
// over the reversed sequences (pairwise.hpp's reverse prefixes without copying them).
// Preconditions (checked by the caller; run() throws Error(kInternal) for the first three): qlen,
// tlen >= 1, fits_int32(model, qlen, tlen), score >= 0 and 0 outside local mode, codes below kMaxCodes.
// score: 0, or (local mode only) the pass's score S > 0 when the caller already knows it, as for the
// start-finding pass, whose score is the forward pass's. The engine then looks only for the first cell
// holding S and stops sweeping a job once that cell is certain (the reverse pass of a short local
// alignment costs a few columns instead of the whole prefix). The result is the same EndPoint; a wrong
// (too high) score yields score 0 and no cell.
struct PassJob {
  const std::uint8_t* query = nullptr;
  std::uint32_t qlen = 0;
  const std::uint8_t* target = nullptr;
  std::uint32_t tlen = 0;
  bool reversed = false;
  std::int32_t score = 0;
};

struct PassPolicy;  // gpu_plan.hpp

class PassEngine {
 public:
  // Uses CUDA device `device` (made current only inside the engine's calls). max_pairs_per_launch
  // bounds the pairs of one kernel launch (0: sized from free device memory). Throws Error(kGpu) on
  // CUDA failures (no such device, out of memory, ...).
  PassEngine(const PassModel& model, int device, std::size_t max_pairs_per_launch);
  PassEngine(const PassModel& model, int device, std::size_t max_pairs_per_launch, const PassPolicy& policy);
  ~PassEngine();
  PassEngine(const PassEngine&) = delete;
  PassEngine& operator=(const PassEngine&) = delete;

  // out[k] = pass(model, job k) for every k (out.size() == jobs.size(), else Error(kInternal), thrown
  // at once). The results do not depend on how jobs are grouped into calls or launches.
  // submit() queues the call and returns at once; the engine's own thread runs the calls in submission
  // order, back to back: a call's first launches are packed while the previous call's last ones run,
  // so the GPU does not drain between calls. The future is ready when every out[k] is written, or holds
  // the call's error (a job breaking the preconditions fails its call only; the calls before and after
  // it still complete). jobs, the memory they point to and out must stay valid until then.
  // run() is submit(...).get(). Both may be called from any thread.
  std::future<void> submit(std::span<const PassJob> jobs, std::span<EndPoint> out);
  void run(std::span<const PassJob> jobs, std::span<EndPoint> out);

  // e.g. "GPU 0 (NVIDIA H100 80GB HBM3): pass engine, shapes 4x8 8x8 16x8 32x8, 16/32-bit lanes"
  std::string describe() const;

  struct Stats {
    std::uint64_t cells16 = 0;   // matrix cells of pairs run in 16-bit lanes (two pairs per register)
    std::uint64_t cells32 = 0;   // ... in 32-bit lanes
    std::uint64_t launches = 0;  // packed launches (each: one upload, prep + pass kernels, one download)
    // GPU time of the kernels and of the host<->device copies, from CUDA events around each launch's
    // parts, summed over the launches: launches on different streams may run at the same time, so the
    // sums can exceed the wall time the GPU was busy.
    double kernel_s = 0;
    double transfer_s = 0;
    double run_s = 0;               // wall seconds with a call in progress (started, not complete)
    double host_window_s = 0;       // host, helper threads: classifying and sorting windows (overlapped)
    double host_window_wait_s = 0;  // host: the engine's thread waiting for the helpers' next window
    double host_plan_s = 0;         // host, helper threads: cutting sorted windows into launches
    double host_pack_s = 0;         // host: copying residues and records into pinned buffers
    double host_wait_s = 0;         // host: waiting for launches to finish (includes the result scatter)
  };
  Stats stats() const;  // totals over the calls completed so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warpsearch::sw::gpu
