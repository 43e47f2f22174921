// align.cpp: the align:: library API (align.hpp): configuration, batches and the Aligner driver.
//
// Driver pipeline (two stages, each its own host thread, batches in submission order):
//   pass stage   forward passes, then reverse passes for the pairs that need a start. On GPUs each
//                batch is split into contiguous ranges of near-equal cells (not pairs), one host thread
//                per GPU, each running its PassEngine (which double-buffers its own launches); the
//                reverse passes of batch k share engine calls with the forward passes of batch k+1.
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
  struct Job {
    Batch batch;
    Callback done;
    std::vector<sw::EndPoint> fwd, rev;
    std::vector<Result> results;
    std::exception_ptr error;
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
  // Buffers of one GPU's engine calls, kept from call to call: freshly allocated memory is paged in
  // by its first writes (on virtual machines several ns per byte), which on the pass stage's threads
  // would leave the GPUs waiting; reused buffers are written at memory speed.
  struct GpuScratch {
    std::vector<sw::gpu::PassJob> jobs;
    std::vector<std::size_t> rev_index;  // pair of the reverse batch for each reverse job
    std::vector<sw::EndPoint> out;
    std::vector<std::size_t> chunk_jobs;  // per chunk of reverse pairs: its jobs' first index
  };
  static constexpr std::size_t kJobGrain = 16384;  // pairs per chunk when building engine jobs
  std::vector<GpuScratch> gpu_scratch;             // one per engine, used only by its pass-stage thread
  std::vector<std::uint64_t> weights;              // pass stage: per pair cells, for split_work
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
    gpu_scratch.resize(engines.size());
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

  // CPU: each batch is finished here. GPUs: the reverse passes of batch k run in the same engine
  // calls as the forward passes of batch k+1 (when it is already queued), so the devices never idle
  // between the two passes of a batch; a batch with nothing behind it runs its reverse passes alone.
  void pass_loop() {
    std::unique_ptr<Job> pending;  // forward passes done, reverse passes not yet
    for (;;) {
      std::unique_ptr<Job> job = pending ? try_pop() : pop(pass_queue, false);
      if (!job && !pending) break;
      if (job) {
        try {
          prepare(*job);
        } catch (...) {
          job->error = std::current_exception();
        }
        if (job->error || !gpu()) {
          if (!job->error) {
            try {
              run_cpu(*job);
            } catch (...) {
              job->error = std::current_exception();
            }
          }
          // Keep batches in order: a pending batch goes first.
          if (pending) {
            run_gpu_step(nullptr, pending.get());
            hand_over(std::move(pending));
          }
          hand_over(std::move(job));
          continue;
        }
      }
#if WARPSEARCH_HAVE_CUDA
      run_gpu_step(job.get(), pending.get());
#endif
      if (pending) hand_over(std::move(pending));
      if (job && job->error) {
        hand_over(std::move(job));
      } else {
        pending = std::move(job);
      }
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
  // One engine call per GPU holding the forward passes of `fwd_job` (may be null) and the reverse
  // passes of `rev_job` (may be null). Each batch is split among the GPUs into contiguous ranges of
  // near-equal cells. An error fails both batches.
  void run_gpu_step(Job* fwd_job, Job* rev_job) {
    if (fwd_job == nullptr && rev_job == nullptr) return;
    const Clock::time_point t0 = Clock::now();
    std::atomic<std::uint64_t> reverse_cells{0};
    auto ranges_of = [&](const Job* job) {
      std::vector<WorkRange> ranges(engines.size());
      if (job == nullptr) return ranges;
      const Batch& b = job->batch;
      if (engines.size() == 1) {
        ranges[0] = {0, b.size()};
        return ranges;
      }
      weights.resize(b.size());
      for (std::size_t k = 0; k < b.size(); ++k)
        weights[k] = std::max<std::uint64_t>(1, b.query(k).size() * b.target(k).size());
      return split_work(weights, engines.size());
    };
    if (fwd_job != nullptr) fwd_job->fwd = take_ends(fwd_job->batch.size());
    if (rev_job != nullptr) rev_job->rev = take_ends(rev_job->batch.size());
    const std::vector<WorkRange> fwd_ranges = ranges_of(fwd_job), rev_ranges = ranges_of(rev_job);
    std::vector<std::exception_ptr> errors(engines.size());
    std::vector<std::thread> threads;
    for (std::size_t g = 0; g < engines.size(); ++g) {
      threads.emplace_back([&, g] {
        try {
          GpuScratch& scratch = gpu_scratch[g];
          std::vector<sw::gpu::PassJob>& jobs = scratch.jobs;
          std::vector<std::size_t>& rev_index = scratch.rev_index;
          // The jobs are built (and the results copied back) on the pool, in fixed chunks of pairs:
          // forward jobs first, then the reverse jobs of the pairs that need one, in pair order (per
          // chunk counts, then offsets), so the job list is the same for any thread count.
          const WorkRange fr = fwd_job != nullptr ? fwd_ranges[g] : WorkRange{};
          const WorkRange rr = rev_job != nullptr ? rev_ranges[g] : WorkRange{};
          const std::size_t nf = fr.end - fr.begin, nr = rr.end - rr.begin;
          std::vector<std::size_t>& at = scratch.chunk_jobs;  // per reverse chunk: jobs, then offset
          at.assign((nr + kJobGrain - 1) / kJobGrain, 0);
          const auto needs = [&](std::size_t k) {
            return sw::needs_reverse(model, rev_job->fwd[k], rev_job->batch.query(k).size());
          };
          pool.parallel_for(nr, kJobGrain, [&](std::size_t begin, std::size_t end) {
            std::size_t count = 0;
            for (std::size_t x = begin; x < end; ++x) count += needs(rr.begin + x) ? 1 : 0;
            at[begin / kJobGrain] = count;
          });
          std::size_t nrev = 0;
          for (std::size_t& a : at) {
            const std::size_t here = a;
            a = nf + nrev;
            nrev += here;
          }
          jobs.resize(nf + nrev);
          rev_index.resize(nrev);
          if (fwd_job != nullptr) {
            const Batch& b = fwd_job->batch;
            pool.parallel_for(nf, kJobGrain, [&](std::size_t begin, std::size_t end) {
              for (std::size_t x = begin; x < end; ++x) {
                const auto q = b.query(fr.begin + x), t = b.target(fr.begin + x);
                jobs[x] = {q.data(), static_cast<std::uint32_t>(q.size()), t.data(),
                           static_cast<std::uint32_t>(t.size()), false};
              }
            });
          }
          if (rev_job != nullptr) {
            // The reversed prefixes are read backwards in place by the kernel.
            const Batch& b = rev_job->batch;
            pool.parallel_for(nr, kJobGrain, [&](std::size_t begin, std::size_t end) {
              std::size_t pos = at[begin / kJobGrain];
              std::uint64_t cells = 0;
              for (std::size_t k = rr.begin + begin; k < rr.begin + end; ++k) {
                if (!needs(k)) continue;
                const sw::ReverseExtent ext =
                    sw::reverse_extent(model.mode, rev_job->fwd[k], b.query(k).size());
                jobs[pos] = {b.query(k).data(), ext.qlen, b.target(k).data(),
                             ext.tlen,          true,     sw::reverse_known_score(model, rev_job->fwd[k])};
                rev_index[pos - nf] = k;
                ++pos;
                cells += std::uint64_t{ext.qlen} * ext.tlen;
              }
              reverse_cells.fetch_add(cells, std::memory_order_relaxed);  // once per chunk
            });
          }
          if (jobs.empty()) return;
          std::vector<sw::EndPoint>& out = scratch.out;
          out.resize(jobs.size());
          engines[g]->run(jobs, out);
          pool.parallel_for(jobs.size(), kJobGrain, [&](std::size_t begin, std::size_t end) {
            for (std::size_t x = begin; x < std::min(end, nf); ++x) fwd_job->fwd[fr.begin + x] = out[x];
            for (std::size_t x = std::max(begin, nf); x < end; ++x) rev_job->rev[rev_index[x - nf]] = out[x];
          });
        } catch (...) {
          errors[g] = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    add_pass_time(since(t0), fwd_job != nullptr ? 1 : 0, fwd_job != nullptr ? fwd_job->batch.cells() : 0,
                  reverse_cells.load());
    for (auto& e : errors) {
      if (!e) continue;
      if (fwd_job != nullptr) fwd_job->error = e;
      if (rev_job != nullptr) rev_job->error = e;
      break;
    }
  }
#else
  void run_gpu_step(Job*, Job*) {}
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
