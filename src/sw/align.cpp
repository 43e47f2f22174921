// align.cpp: the align:: library API (align.hpp): configuration, batches and the Aligner driver.
//
// Driver pipeline (two stages, each its own host thread, batches in submission order):
//   pass stage   forward passes, then reverse passes for the pairs that need a start. On GPUs each
//                batch is split into contiguous ranges of near-equal cells (not pairs), one per GPU,
//                each GPU's share queued on its PassEngine (which runs its queued calls back to back,
//                three launches in flight). Three batches are in the stage at once: the forward
//                passes of batch k+1 are queued before the stage waits for those of batch k and builds
//                and queues batch k's reverse passes, and only then does it wait for batch k-1's
//                reverse passes, so the GPUs always have queued work while the host builds jobs.
//                On the CPU the striped SIMD pass runs on the thread pool, traceback included.
//   finish stage traceback of GPU results on the CPU thread pool (so the GPUs already run the next
//                batch), then the callback / promise of the batch.
// Every pair's result depends only on the pair and the configuration, so the output is identical for
// any device, GPU count, thread count or batch split.
#include "warpsearch/align.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#if WARPSEARCH_HAVE_CUDA
#include "sw/gpu_engine.hpp"
#endif
#include "sw/model.hpp"
#include "sw/pairwise.hpp"
#include "sw/simd/pass.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::align {

std::optional<Mode> parse_mode(std::string_view text) {
  if (text == "local") return Mode::kLocal;
  if (text == "global") return Mode::kGlobal;
  if (text == "semiglobal") return Mode::kSemiGlobal;
  return std::nullopt;
}

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::kLocal: return "local";
    case Mode::kGlobal: return "global";
    case Mode::kSemiGlobal: return "semiglobal";
  }
  return "local";
}

void Config::validate() const {
  gaps.validate();
  if (static_cast<long long>(gaps.open) + gaps.extend < 1)
    throw Error(ErrorKind::kUsage, "gap open + gap extend must be at least 1 (a gap must cost something)");
}

void Batch::add(std::span<const std::uint8_t> query, std::span<const std::uint8_t> target) {
  for (const std::uint8_t c : query)
    if (c >= kMaxCodes)
      throw Error(ErrorKind::kInput, fmt::format("query residue code {} is not a digital code", c));
  for (const std::uint8_t c : target)
    if (c >= kMaxCodes)
      throw Error(ErrorKind::kInput, fmt::format("target residue code {} is not a digital code", c));
  residues_.insert(residues_.end(), query.begin(), query.end());
  residues_.insert(residues_.end(), target.begin(), target.end());
  qoff_.push_back(residues_.size());
  tlen_.push_back(target.size());
  cells_ += static_cast<std::uint64_t>(query.size()) * target.size();
}

void Batch::add_text(std::string_view query, std::string_view target, AlphabetKind kind) {
  const Alphabet alphabet(kind);
  auto encode = [&](std::string_view text) {
    std::vector<std::uint8_t> codes;
    codes.reserve(text.size());
    for (const char c : text) {
      const std::uint8_t v = alphabet.classify(static_cast<unsigned char>(c));
      if (v == kCodeInvalid) throw Error(ErrorKind::kInput, fmt::format("'{}' is not a sequence letter", c));
      codes.push_back(v == kCodeForeign ? alphabet.unknown() : v);
    }
    return codes;
  };
  add(encode(query), encode(target));
}

void Batch::reserve(std::size_t pairs, std::size_t residues) {
  residues_.reserve(residues);
  qoff_.reserve(pairs + 1);
  tlen_.reserve(pairs);
}

// ---------------------------------------------------------------------------------------------------

struct Aligner::Impl {
#if WARPSEARCH_HAVE_CUDA
  // One GPU's share of a batch (a contiguous range of its pairs) in the pass stage: the engine jobs
  // and results of its forward and reverse passes, and the engine calls' futures.
  struct GpuPart {
    WorkRange range;
    std::vector<sw::gpu::PassJob> fwd_jobs, rev_jobs;
    std::vector<std::size_t> rev_index;  // pair of the batch for each reverse job
    std::vector<sw::EndPoint> rev_out;
    std::vector<std::size_t> chunk_jobs;  // per chunk of pairs: its first reverse job
    std::size_t rev_count = 0;            // reverse jobs: the first rev_count of rev_jobs / rev_out
    std::future<void> fwd_done, rev_done;
  };
#endif
  struct Job {
    Batch batch;
    Callback done;
    std::vector<sw::EndPoint> fwd, rev;
    std::vector<Result> results;
    std::exception_ptr error;
#if WARPSEARCH_HAVE_CUDA
    std::vector<GpuPart> parts;  // one per GPU while the batch is in the pass stage
#endif
  };

  Config config;
  sw::PassModel model;
  DeviceSelection selection;
  ThreadPool pool;
  sw::simd::Isa isa;
#if WARPSEARCH_HAVE_CUDA
  std::vector<std::unique_ptr<sw::gpu::PassEngine>> engines;
#endif

  std::mutex mutex;
  std::condition_variable cv;
  mutable std::mutex stats_mutex;
  Stats totals;  // under stats_mutex

  using Clock = std::chrono::steady_clock;
  static double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  void add_pass_time(double seconds, std::uint64_t batches, std::uint64_t forward, std::uint64_t reverse) {
    std::lock_guard lock(stats_mutex);
    totals.pass_s += seconds;
    totals.batches += batches;
    totals.forward_cells += forward;
    totals.reverse_cells += reverse;
#if WARPSEARCH_HAVE_CUDA
    // Engine totals: read here, by the pass stage's thread, between engine calls.
    totals.gpu_kernel_s = totals.gpu_transfer_s = totals.host_plan_s = totals.host_pack_s = 0;
    totals.host_wait_s = totals.gpu_run_s = totals.host_window_s = totals.host_window_wait_s = 0;
    totals.launches = 0;
    for (const auto& e : engines) {
      const sw::gpu::PassEngine::Stats es = e->stats();
      totals.gpu_kernel_s += es.kernel_s;
      totals.gpu_transfer_s += es.transfer_s;
      totals.host_plan_s += es.host_plan_s;
      totals.host_pack_s += es.host_pack_s;
      totals.host_wait_s += es.host_wait_s;
      totals.gpu_run_s += es.run_s;
      totals.host_window_s += es.host_window_s;
      totals.host_window_wait_s += es.host_window_wait_s;
      totals.launches += es.launches;
    }
#endif
  }
  std::deque<std::unique_ptr<Job>> pass_queue, finish_queue;

#if WARPSEARCH_HAVE_CUDA
  // Buffers of the GPU pass stage are kept from batch to batch: freshly allocated memory is paged in
  // by its first writes (on virtual machines several ns per byte), which on the pass stage's thread
  // would leave the GPUs waiting; reused buffers are written at memory speed.
  static constexpr std::size_t kJobGrain = 16384;  // pairs per chunk when building engine jobs
  std::vector<std::uint64_t> weights;              // pass stage: per pair cells, for split_work
  std::vector<std::vector<GpuPart>> spare_parts;   // pass stage: GpuParts of batches that left it
  // EndPoint vectors of finished batches (Job::fwd / Job::rev), reused by later batches (see above).
  std::mutex spare_mutex;
  std::vector<std::vector<sw::EndPoint>> spare_ends;
  std::vector<sw::EndPoint> take_ends(std::size_t n) {
    std::vector<sw::EndPoint> v;
    {
      std::lock_guard lock(spare_mutex);
      if (!spare_ends.empty()) {
        v = std::move(spare_ends.back());
        spare_ends.pop_back();
      }
    }
    v.assign(n, {});
    return v;
  }
  void give_back_ends(std::vector<sw::EndPoint>&& v) {
    if (v.capacity() == 0) return;
    std::lock_guard lock(spare_mutex);
    if (spare_ends.size() < 8) spare_ends.push_back(std::move(v));
  }
#endif
  bool stopping = false;
  std::thread pass_thread, finish_thread;

  explicit Impl(Config cfg)
      : config(std::move(cfg)),
        model(sw::PassModel::make(config.matrix, config.gaps, config.mode)),
        selection(select_devices(config.device, config.gpus)),
        pool(config.threads),
        isa(sw::simd::best_isa()) {
#if WARPSEARCH_HAVE_CUDA
    if (selection.use_gpu)
      for (const DeviceInfo& d : selection.devices)
        engines.push_back(std::make_unique<sw::gpu::PassEngine>(model, d.id, config.max_pairs_per_launch));
#endif
    pass_thread = std::thread([this] { pass_loop(); });
    finish_thread = std::thread([this] { finish_loop(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    cv.notify_all();
    pass_thread.join();
    finish_thread.join();
  }

  bool gpu() const { return selection.use_gpu; }

  void enqueue(Batch batch, Callback done) {
    auto job = std::make_unique<Job>();
    job->batch = std::move(batch);
    job->done = std::move(done);
    {
      std::lock_guard lock(mutex);
      pass_queue.push_back(std::move(job));
    }
    cv.notify_all();
  }

  std::unique_ptr<Job> pop(std::deque<std::unique_ptr<Job>>& queue, bool finishing) {
    std::unique_lock lock(mutex);
    // The finish stage drains until the pass stage has stopped and handed over everything.
    cv.wait(lock, [&] { return !queue.empty() || (stopping && (!finishing || pass_done)); });
    if (queue.empty()) return nullptr;
    auto job = std::move(queue.front());
    queue.pop_front();
    return job;
  }
  bool pass_done = false;

  // Non-blocking pop for the pass stage (used while a batch waits for its reverse passes).
  std::unique_ptr<Job> try_pop() {
    std::lock_guard lock(mutex);
    if (pass_queue.empty()) return nullptr;
    auto job = std::move(pass_queue.front());
    pass_queue.pop_front();
    return job;
  }

  void hand_over(std::unique_ptr<Job> job) {
    {
      std::lock_guard lock(mutex);
      finish_queue.push_back(std::move(job));
    }
    cv.notify_all();
  }

  // CPU: each batch is finished here. GPUs: a pipeline of three batches (see the top of the file):
  // `forward` has its forward passes queued, `reverse` its reverse passes; a batch that failed moves
  // through the pipeline like the others (with nothing queued), so batches leave in order.
  void pass_loop() {
    std::unique_ptr<Job> forward, reverse;
    const auto advance = [&] {
      if (forward) gpu_reverse(*forward);  // waits for its forward passes, queues its reverse passes
      if (reverse) {
        gpu_collect(*reverse);  // waits for its reverse passes
        hand_over(std::move(reverse));
      }
      reverse = std::move(forward);
    };
    for (;;) {
      std::unique_ptr<Job> job = forward || reverse ? try_pop() : pop(pass_queue, false);
      if (!job) {
        if (!forward && !reverse) break;
        advance();  // nothing new: drain the pipeline by one step
        continue;
      }
      try {
        prepare(*job);
      } catch (...) {
        job->error = std::current_exception();
      }
      if (gpu()) {
        if (!job->error) gpu_forward(*job);
        advance();
        forward = std::move(job);
        continue;
      }
      if (!job->error) {
        try {
          run_cpu(*job);
        } catch (...) {
          job->error = std::current_exception();
        }
      }
      hand_over(std::move(job));
    }
    {
      std::lock_guard lock(mutex);
      pass_done = true;
    }
    cv.notify_all();
  }

  void finish_loop() {
    while (auto job = pop(finish_queue, true)) {
      if (!job->error) {
        try {
          const Clock::time_point t0 = Clock::now();
          finish(*job);
          const double seconds = since(t0);
          std::lock_guard lock(stats_mutex);
          totals.finish_s += seconds;
        } catch (...) {
          job->error = std::current_exception();
        }
      }
      if (job->error) job->results.clear();
      job->done(std::move(job->results), job->error);
    }
  }

  // Pairs per parallel_for chunk on the CPU: small enough to balance lengths, large enough to amortise.
  static constexpr std::size_t kCpuGrain = 64;

  // Validates every pair before any work (a bad pair fails the batch, never a worker). The results
  // are sized where they are computed (run_cpu, or the finish stage after GPU passes), off the
  // thread that feeds the GPUs.
  void prepare(Job& job) {
    const Batch& b = job.batch;
    for (std::size_t k = 0; k < b.size(); ++k) sw::check_pair(model, b.query(k).size(), b.target(k).size());
  }

  // CPU: everything per pair on the pool.
  void run_cpu(Job& job) {
    const Batch& b = job.batch;
    const std::size_t n = b.size();
    const Clock::time_point t0 = Clock::now();
    job.results.resize(n);
    std::atomic<std::uint64_t> reverse_cells{0};
    {
      pool.parallel_for(n, kCpuGrain, [&](std::size_t begin, std::size_t end) {
        thread_local sw::simd::Workspace ws;
        std::vector<std::uint8_t> rq, rt;
        std::uint64_t cells = 0;  // reverse cells of this chunk
        for (std::size_t k = begin; k < end; ++k) {
          const auto q = b.query(k), t = b.target(k);
          const sw::EndPoint fwd = sw::simd::pass(model, q, t, ws, isa);
          sw::EndPoint rev;
          if (sw::needs_reverse(model, fwd, q.size())) {
            const sw::ReverseExtent ext = sw::reverse_extent(model.mode, fwd, q.size());
            sw::reverse_prefix(q, ext.qlen, rq);
            sw::reverse_prefix(t, ext.tlen, rt);
            rev = sw::simd::pass(model, rq, rt, ws, isa, sw::reverse_known_score(model, fwd));
            cells += std::uint64_t{ext.qlen} * ext.tlen;
          }
          job.results[k] = sw::make_result(model, fwd, rev, q.size(), t.size());
          if (config.traceback) sw::traceback(model, q, t, job.results[k]);
        }
        reverse_cells.fetch_add(cells, std::memory_order_relaxed);
      });
    }
    add_pass_time(since(t0), 1, b.cells(), reverse_cells.load());
  }

#if WARPSEARCH_HAVE_CUDA
  // Engine jobs are built (and results copied back) on the pool in fixed chunks of pairs, so they are
  // the same for any thread count.

  // Splits the batch among the GPUs (contiguous ranges of near-equal cells) and queues each range's
  // forward passes, whose results go straight to job.fwd. An error fails the batch, after the calls
  // already queued are complete.
  void gpu_forward(Job& job) {
    const Clock::time_point t0 = Clock::now();
    try {
      const Batch& b = job.batch;
      job.fwd = take_ends(b.size());
      if (spare_parts.empty()) {
        job.parts.resize(engines.size());
      } else {
        job.parts = std::move(spare_parts.back());
        spare_parts.pop_back();
      }
      std::vector<WorkRange> ranges(1, WorkRange{0, b.size()});
      if (engines.size() > 1) {
        weights.resize(b.size());
        for (std::size_t k = 0; k < b.size(); ++k)
          weights[k] = std::max<std::uint64_t>(1, b.query(k).size() * b.target(k).size());
        ranges = split_work(weights, engines.size());
      }
      for (std::size_t g = 0; g < engines.size(); ++g) {
        GpuPart& part = job.parts[g];
        part.range = ranges[g];
        part.rev_count = 0;
        const std::size_t first = part.range.begin, n = part.range.end - first;
        part.fwd_jobs.resize(n);
        pool.parallel_for(n, kJobGrain, [&](std::size_t begin, std::size_t end) {
          for (std::size_t x = begin; x < end; ++x) {
            const auto q = b.query(first + x), t = b.target(first + x);
            part.fwd_jobs[x] = {q.data(), static_cast<std::uint32_t>(q.size()), t.data(),
                                static_cast<std::uint32_t>(t.size()), false};
          }
        });
        part.fwd_done = engines[g]->submit(part.fwd_jobs, std::span<sw::EndPoint>(job.fwd).subspan(first, n));
      }
      // With the forward passes queued, the buffers of the reverse passes are sized for every pair
      // (memory touched for the first time is slow to page in; here the GPUs have work meanwhile, while
      // between the forward results and the reverse passes they may not).
      job.rev = take_ends(b.size());
      for (GpuPart& part : job.parts) {
        const std::size_t n = part.range.end - part.range.begin;
        part.rev_jobs.resize(n);
        part.rev_index.resize(n);
        part.rev_out.resize(n);
      }
    } catch (...) {
      job.error = std::current_exception();
      drain(job);
    }
    add_pass_time(since(t0), 0, 0, 0);
  }

  // Waits for the batch's forward passes, then queues the reverse passes of the pairs that need one
  // (reversed prefixes, read backwards in place by the kernel; in pair order per GPU range).
  void gpu_reverse(Job& job) {
    const Clock::time_point t0 = Clock::now();
    std::atomic<std::uint64_t> reverse_cells{0};
    wait(job, &GpuPart::fwd_done);
    if (!job.error) {
      try {
        const Batch& b = job.batch;
        const auto needs = [&](std::size_t k) {
          return sw::needs_reverse(model, job.fwd[k], b.query(k).size());
        };
        for (std::size_t g = 0; g < engines.size(); ++g) {
          GpuPart& part = job.parts[g];
          const std::size_t first = part.range.begin, n = part.range.end - first;
          std::vector<std::size_t>& at = part.chunk_jobs;  // per chunk: its reverse jobs, then its offset
          at.assign((n + kJobGrain - 1) / kJobGrain, 0);
          pool.parallel_for(n, kJobGrain, [&](std::size_t begin, std::size_t end) {
            std::size_t count = 0;
            for (std::size_t x = begin; x < end; ++x) count += needs(first + x) ? 1 : 0;
            at[begin / kJobGrain] = count;
          });
          std::size_t nrev = 0;
          for (std::size_t& a : at) {
            const std::size_t here = a;
            a = nrev;
            nrev += here;
          }
          part.rev_count = nrev;  // (the buffers hold every pair of the range: gpu_forward)
          pool.parallel_for(n, kJobGrain, [&](std::size_t begin, std::size_t end) {
            std::size_t pos = at[begin / kJobGrain];
            std::uint64_t cells = 0;
            for (std::size_t k = first + begin; k < first + end; ++k) {
              if (!needs(k)) continue;
              const sw::ReverseExtent ext = sw::reverse_extent(model.mode, job.fwd[k], b.query(k).size());
              part.rev_jobs[pos] = {b.query(k).data(), ext.qlen, b.target(k).data(),
                                    ext.tlen,          true,     sw::reverse_known_score(model, job.fwd[k])};
              part.rev_index[pos] = k;
              ++pos;
              cells += std::uint64_t{ext.qlen} * ext.tlen;
            }
            reverse_cells.fetch_add(cells, std::memory_order_relaxed);  // once per chunk
          });
          part.rev_done = engines[g]->submit(std::span<const sw::gpu::PassJob>(part.rev_jobs).first(nrev),
                                             std::span<sw::EndPoint>(part.rev_out).first(nrev));
        }
        // The batch's results are sized here, while the GPUs run its reverse passes (see gpu_forward),
        // so the finish stage only fills them.
        job.results.resize(b.size());
      } catch (...) {
        job.error = std::current_exception();
        drain(job);
      }
    }
    add_pass_time(since(t0), 0, 0, reverse_cells.load());
  }

  // Waits for the batch's reverse passes and copies their results to job.rev; the batch leaves the
  // pass stage (its GpuParts are kept for later batches).
  void gpu_collect(Job& job) {
    const Clock::time_point t0 = Clock::now();
    wait(job, &GpuPart::rev_done);
    if (!job.error) {
      for (GpuPart& part : job.parts)
        pool.parallel_for(part.rev_count, kJobGrain, [&](std::size_t begin, std::size_t end) {
          for (std::size_t x = begin; x < end; ++x) job.rev[part.rev_index[x]] = part.rev_out[x];
        });
    }
    if (!job.parts.empty()) spare_parts.push_back(std::move(job.parts));
    job.parts.clear();
    add_pass_time(since(t0), job.error ? 0 : 1, job.error ? 0 : job.batch.cells(), 0);
  }

  // Waits for every GPU's call of one kind (forward or reverse passes) that was queued; the first error
  // fails the batch. Every call is waited for, since they write the batch's memory.
  static void wait(Job& job, std::future<void> GpuPart::*which) {
    for (GpuPart& part : job.parts) {
      std::future<void>& done = part.*which;
      if (!done.valid()) continue;
      try {
        done.get();
      } catch (...) {
        if (!job.error) job.error = std::current_exception();
      }
    }
  }
  static void drain(Job& job) {
    wait(job, &GpuPart::fwd_done);
    wait(job, &GpuPart::rev_done);
  }
#else
  void gpu_forward(Job&) {}
  void gpu_reverse(Job&) {}
  void gpu_collect(Job&) {}
#endif

  void finish(Job& job) {
    if (!gpu()) return;  // the CPU path finished everything in the pass stage
    const Batch& b = job.batch;
    job.results.resize(b.size());
    pool.parallel_for(b.size(), kCpuGrain, [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) {
        const auto q = b.query(k), t = b.target(k);
        job.results[k] = sw::make_result(model, job.fwd[k], job.rev[k], q.size(), t.size());
        if (config.traceback) sw::traceback(model, q, t, job.results[k]);
      }
    });
#if WARPSEARCH_HAVE_CUDA
    give_back_ends(std::move(job.fwd));
    give_back_ends(std::move(job.rev));
#endif
  }
};

Aligner::Aligner(Config config) {
  config.validate();
  impl_ = std::make_unique<Impl>(std::move(config));
}

Aligner::~Aligner() = default;

std::future<std::vector<Result>> Aligner::submit(Batch batch) {
  auto promise = std::make_shared<std::promise<std::vector<Result>>>();
  auto future = promise->get_future();
  impl_->enqueue(std::move(batch), [promise](std::vector<Result>&& results, std::exception_ptr error) {
    if (error) {
      promise->set_exception(error);
    } else {
      promise->set_value(std::move(results));
    }
  });
  return future;
}

void Aligner::submit(Batch batch, Callback done) { impl_->enqueue(std::move(batch), std::move(done)); }

std::vector<Result> Aligner::align(Batch batch) { return submit(std::move(batch)).get(); }

const Config& Aligner::config() const { return impl_->config; }

bool Aligner::uses_gpu() const { return impl_->gpu(); }

Aligner::Stats Aligner::stats() const {
  std::lock_guard lock(impl_->stats_mutex);
  return impl_->totals;
}

std::string Aligner::describe() const {
  if (impl_->gpu()) {
    std::string names;
    for (const DeviceInfo& d : impl_->selection.devices) names += (names.empty() ? "" : ", ") + d.name;
    return fmt::format("{} GPU{} ({}), {} CPU threads for traceback", impl_->selection.devices.size(),
                       impl_->selection.devices.size() == 1 ? "" : "s", names, impl_->pool.size());
  }
  return fmt::format("CPU, {} threads, {}", impl_->pool.size(), sw::simd::isa_name(impl_->isa));
}

}  // namespace warpsearch::align
