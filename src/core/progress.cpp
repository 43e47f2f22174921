// progress.cpp: rate-limited progress lines on a terminal's stderr (see progress.hpp).
#include "warpsearch/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace warpsearch {
namespace {

constexpr std::int64_t kRenderIntervalNs = 250'000'000;

std::string human(double value) {
  if (value >= 1e9) return fmt::format("{:.2f}G", value / 1e9);
  if (value >= 1e6) return fmt::format("{:.2f}M", value / 1e6);
  if (value >= 1e3) return fmt::format("{:.1f}k", value / 1e3);
  return fmt::format("{:.0f}", value);
}

}  // namespace

bool Progress::wanted(bool quiet) { return !quiet && ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, std::uint64_t total, std::string unit, bool enabled)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      active_(enabled && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (active_ && !finished_) finish();
}

void Progress::set_total(std::uint64_t total) { total_.store(total, std::memory_order_relaxed); }

void Progress::advance(std::uint64_t amount) {
  done_.fetch_add(amount, std::memory_order_relaxed);
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now() - start_;
  const std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  std::int64_t due = next_render_ns_.load(std::memory_order_relaxed);
  if (ns < due) return;
  if (!next_render_ns_.compare_exchange_strong(due, ns + kRenderIntervalNs)) return;
  render(false);
}

void Progress::finish() {
  if (!active_ || finished_) return;
  render(true);
  finished_ = true;
}

void Progress::render(bool final_line) {
  std::lock_guard lock(render_mutex_);
  if (finished_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::uint64_t done = done_.load(std::memory_order_relaxed);
  const std::uint64_t total = total_.load(std::memory_order_relaxed);
  std::string line = fmt::format("\r{}: {} {}", label_, human(static_cast<double>(done)), unit_);
  if (total > 0) {
    line += fmt::format(" / {} ({:.1f}%)", human(static_cast<double>(total)),
                        100.0 * static_cast<double>(done) / static_cast<double>(total));
  }
  if (seconds > 0) line += fmt::format(", {}/s", human(static_cast<double>(done) / seconds));
  line += final_line ? fmt::format(", {:.1f} s\n", seconds) : std::string("\x1b[K");
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace warpsearch
