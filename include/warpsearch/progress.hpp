// progress.hpp: progress reporting for long runs.
//
// A Progress prints "label: done/total unit (pct%, rate/s)" to stderr, at most a few times a second,
// and only when stderr is a terminal and the run is not --quiet; otherwise it is silent and costs one
// relaxed atomic add per advance(). Safe to advance from several threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace warpsearch {

class Progress {
 public:
  // total == 0: unknown total (no percentage). enabled: false silences it whatever stderr is.
  Progress(std::string label, std::uint64_t total, std::string unit, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::uint64_t amount);
  void set_total(std::uint64_t total);
  // Prints the final line (when active) and stops further output.
  void finish();
  bool active() const { return active_; }
  std::uint64_t done() const { return done_.load(std::memory_order_relaxed); }

  // Whether progress output is wanted at all: stderr is a TTY and quiet is false.
  static bool wanted(bool quiet);

 private:
  void render(bool final_line);

  std::string label_;
  std::string unit_;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> total_;
  bool active_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::atomic<std::int64_t> next_render_ns_{0};
  std::mutex render_mutex_;
};

}  // namespace warpsearch
