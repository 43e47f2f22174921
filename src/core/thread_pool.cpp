// thread_pool.cpp: worker threads and the deterministic parallel_for (see thread_pool.hpp).
#include "warpsearch/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>

#if defined(__linux__)
#include <sched.h>
#endif

namespace warpsearch {

unsigned ThreadPool::resolve(unsigned requested) { return requested != 0 ? requested : available_cpus(); }

unsigned ThreadPool::available_cpus() { return static_cast<unsigned>(available_cpu_ids().size()); }

std::vector<unsigned> ThreadPool::available_cpu_ids() {
  std::vector<unsigned> ids;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) ids.push_back(static_cast<unsigned>(c));
#endif
  if (ids.empty())
    for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c) ids.push_back(c);
  return ids;
}

ThreadPool::ThreadPool(unsigned threads) : size_(resolve(threads)) {
  // A pool of size N uses the caller plus N-1 workers inside parallel_for.
  workers_.reserve(size_ - 1);
  for (unsigned i = 1; i < size_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  workers_.clear();  // joins
}

void ThreadPool::enqueue(std::function<void()> job) {
  if (workers_.empty()) {  // single-threaded pool: run inline
    job();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

void ThreadPool::parallel_for(std::size_t n, std::size_t grain,
                              const std::function<void(std::size_t, std::size_t)>& body) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks = (n + grain - 1) / grain;
  if (chunks == 1 || workers_.empty()) {
    for (std::size_t c = 0; c < chunks; ++c) body(c * grain, std::min(n, (c + 1) * grain));
    return;
  }
  // Chunk c is always [c*grain, min(n, (c+1)*grain)); threads claim chunk indices dynamically.
  struct Shared {
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> finished{0};
    std::mutex mutex;
    std::condition_variable done;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  auto run = [shared, chunks, grain, n, &body] {
    for (;;) {
      const std::size_t c = shared->next.fetch_add(1);
      if (c >= chunks) return;
      try {
        body(c * grain, std::min(n, (c + 1) * grain));
      } catch (...) {
        std::lock_guard lock(shared->mutex);
        if (!shared->error) shared->error = std::current_exception();
      }
      if (shared->finished.fetch_add(1) + 1 == chunks) {
        std::lock_guard lock(shared->mutex);
        shared->done.notify_all();
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(workers_.size(), chunks - 1);
  for (std::size_t i = 0; i < helpers; ++i) enqueue(run);
  run();
  std::unique_lock lock(shared->mutex);
  shared->done.wait(lock, [&] { return shared->finished.load() == chunks; });
  if (shared->error) std::rethrow_exception(shared->error);
}

}  // namespace warpsearch
