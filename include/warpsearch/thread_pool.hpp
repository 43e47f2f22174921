// thread_pool.hpp: a fixed pool of worker threads with deterministic parallel loops.
//
// parallel_for(n, grain, body) calls body(begin, end) on disjoint chunks covering [0, n). Chunk
// boundaries depend only on n and grain (never on timing or thread count), so a body that writes its
// results by index produces identical output for any number of threads. The first exception thrown by
// a body is rethrown in the caller after all chunks finish. submit() runs one task and returns a future.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace warpsearch {

class ThreadPool {
 public:
  // threads == 0: std::thread::hardware_concurrency(). A pool of 1 runs everything on the caller.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return size_; }

  void parallel_for(std::size_t n, std::size_t grain,
                    const std::function<void(std::size_t, std::size_t)>& body);

  template <class F>
  auto submit(F&& f) -> std::future<decltype(f())> {
    using R = decltype(f());
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(f));
    std::future<R> result = task->get_future();
    enqueue([task] { (*task)(); });
    return result;
  }

  // Number of threads to use for a --threads value (0 = available_cpus()).
  static unsigned resolve(unsigned requested);
  // The CPUs this process may run on (its affinity mask, as set by taskset, cgroup cpusets, Slurm or an
  // MPI launcher's binding; all hardware threads where the mask cannot be read), at least 1.
  static unsigned available_cpus();
  // Their ids, ascending (0 .. hardware threads - 1 where the mask cannot be read), at least one.
  static std::vector<unsigned> available_cpu_ids();

 private:
  void enqueue(std::function<void()> job);
  void worker_loop();

  unsigned size_;
  std::vector<std::jthread> workers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
};

}  // namespace warpsearch
