// harness.cpp: the run loop behind `warpsearch-bench run`.
#include "harness.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <map>

#include "runner.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::bench {
namespace {

namespace fs = std::filesystem;

// The harness's private temporary directory, removed with everything in it when the run ends.
class TempDir {
 public:
  explicit TempDir(const std::string& parent) {
    std::string pattern = (fs::path(parent) / "warpsearch-bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw_system_error("cannot create temporary directory", pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string describe(const RunRecord& run) {
  return fmt::format("{:.4f} s, {:.1f} MiB", run.work_s, static_cast<double>(run.peak_rss_kib) / 1024);
}

// Runs each setup once per input; later requests return the first outcome ("" on success).
class SetupCache {
 public:
  std::string ensure(const Setup& setup, const Context& ctx, unsigned timeout_s) {
    const auto done = outcomes_.find(setup.name);
    if (done != outcomes_.end()) return done->second;
    const auto prepare = [&setup](const Context& c) {
      setup.fn(c);
      return Work{};
    };
    const RunRecord record = run_internal(prepare, ctx, timeout_s);
    fmt::print(stderr, "setup {} for {}: {}\n", setup.name, ctx.input,
               record.ok() ? describe(record) : record.error);
    return outcomes_[setup.name] = record.error;
  }

 private:
  std::map<std::string, std::string> outcomes_;
};

RunRecord run_once(const Entry& entry, const Context& ctx, unsigned timeout_s) {
  if (const auto* peer = std::get_if<ExternalRun>(&entry.body)) return run_external(*peer, ctx, timeout_s);
  return run_internal(std::get<InternalRun>(entry.body).fn, ctx, timeout_s);
}

std::string command_line(const Entry& entry, const Context& ctx) {
  const auto* peer = std::get_if<ExternalRun>(&entry.body);
  if (peer == nullptr) return {};
  std::string line;
  for (const std::string& arg : peer_command(*peer, ctx)) line += (line.empty() ? "" : " ") + arg;
  return line;
}

// Warm-ups then measured runs, each with a fresh scratch directory; stops at the first failure.
void measure(const Entry& entry, Context ctx, const HarnessOptions& options, EntryResult& result) {
  const fs::path scratch = fs::path(ctx.tmp) / "scratch";
  ctx.scratch = scratch.string();
  const int total = options.warmup + options.repeat;
  for (int i = 0; i < total; ++i) {
    fs::create_directories(scratch);
    const RunRecord record = run_once(entry, ctx, options.timeout_s);
    fs::remove_all(scratch);
    const bool warm = i < options.warmup;
    fmt::print(stderr, "{} on {}: {} {}/{}: {}\n", entry.name, ctx.input, warm ? "warm-up" : "run",
               warm ? i + 1 : i - options.warmup + 1, warm ? options.warmup : options.repeat,
               record.ok() ? describe(record) : record.error);
    if (!record.ok()) {
      result.status = "failed: " + record.error;
      return;
    }
    if (!warm) result.runs.push_back(record);
  }
  result.status = "ok";
}

EntryResult run_entry(const Entry& entry, const Context& ctx, const HarnessOptions& options,
                      SetupCache& setups) {
  EntryResult result;
  result.name = entry.name;
  result.peer = is_peer(entry);
  result.headline = entry.headline;
  result.input = ctx.input;
  result.threads = ctx.threads;
  result.command = command_line(entry, ctx);
  if (const std::string reason = unavailable_reason(entry); !reason.empty()) {
    result.status = "unavailable: " + reason;
    fmt::print(stderr, "{}: {}\n", entry.name, result.status);
    return result;
  }
  if (entry.setup) {
    if (const std::string error = setups.ensure(*entry.setup, ctx, options.timeout_s); !error.empty()) {
      result.status = "failed: setup " + entry.setup->name + ": " + error;
      return result;
    }
  }
  measure(entry, ctx, options, result);
  return result;
}

}  // namespace

std::vector<EntryResult> run_benchmarks(const HarnessOptions& options) {
  const TempDir root(options.tmp_root);
  std::vector<EntryResult> results;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    Context ctx;
    ctx.input = options.inputs[i];
    ctx.input_bytes = fs::file_size(ctx.input);
    ctx.tmp = (root.path() / fmt::format("input-{}", i)).string();
    ctx.threads = options.threads;
    fs::create_directories(ctx.tmp);
    SetupCache setups;
    for (const Entry* entry : options.entries) results.push_back(run_entry(*entry, ctx, options, setups));
    fs::remove_all(ctx.tmp);
  }
  return results;
}

}  // namespace warpsearch::bench
