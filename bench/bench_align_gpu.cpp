// bench_align_gpu.cpp: GPU pairwise alignment entries: the CUDA pass engine (sw/gpu_engine.hpp) over
// the ADEPT-shaped pair sets of align_dataset.hpp (10^6 pairs), local mode, score and end cell.
//
//   gpu-align-protein         forward passes of 10^6 protein pairs (20..600 vs 200..1664), BLOSUM62 11/1
//   gpu-align-dna             forward passes of 10^6 DNA pairs (150..300 vs 150..1131), +2/-3 5/2
//   gpu-align-protein-fwdrev  forward passes, then the start-finding reverse passes over the reversed
//                             prefixes with the forward scores known (what `warpsearch align` without
//                             --cigar runs); -fwdrev-full: the reverse passes without known scores
//   gpu-align-dna-fwdrev      the same two passes over the DNA pairs
//
// The timed region is PassEngine::run itself: sorting and packing on the host, host->device copies,
// kernels, result copies and the scatter back to pair order (plus building the reverse jobs for
// fwdrev). Outside it: synthesizing the pairs, creating the CUDA context and the engine, and one
// untimed warm-up run over the same pairs (it grows the engine's buffers to their launch caps and
// wakes the GPU clocks, as a long-running aligner would have). Work::cells is the sum of m * n over the
// passes run, so the harness reports GCUPS. The engine's own split (kernel vs transfer seconds,
// launches, 16/32-bit cells) goes to stderr. No CUDA call happens before the harness forks a run.
//
// Tuning knobs (environment; unset: the engine's defaults), to measure sw::gpu::PassPolicy:
//   WARPSEARCH_PASS_MAX_ROWS=32,64,128,256,0   PassPolicy::max_rows (one entry per kernel shape)
//   WARPSEARCH_PASS_LONG_SHAPE=1               PassPolicy::long_shape (index into sw::gpu::kPassShapes)
//   WARPSEARCH_PASS_KNOWN_MAX_ROWS, _KNOWN_LONG_SHAPE   the same for the jobs with known scores
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "align_dataset.hpp"
#include "registry.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"

#ifdef WARPSEARCH_HAVE_CUDA
#include "sw/gpu_engine.hpp"
#include "sw/gpu_plan.hpp"
#include "sw/model.hpp"
#include "sw/pairwise.hpp"
#include "warpsearch/scoring.hpp"
#endif

namespace warpsearch::bench {
namespace {

#ifdef WARPSEARCH_HAVE_CUDA
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kSeed = 0xADE97;  // the CPU entries' seed: same pair shapes
constexpr std::size_t kPairs = 1'000'000;

sw::PassModel local_model(AlignSetKind kind) {
  if (kind == AlignSetKind::kProtein)
    return sw::PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, align::Mode::kLocal);
  return sw::PassModel::make(ScoringMatrix::dna(2, -3), {5, 2}, align::Mode::kLocal);
}

void rows_from_env(const char* name, std::array<int, sw::gpu::kPassShapes.size()>& max_rows) {
  if (const char* rows = std::getenv(name); rows != nullptr && *rows != '\0') {
    std::istringstream in(rows);
    std::string item;
    for (std::size_t s = 0; s < max_rows.size() && std::getline(in, item, ','); ++s)
      max_rows[s] = std::stoi(item);
  }
}

void shape_from_env(const char* name, int& shape) {
  if (const char* text = std::getenv(name); text != nullptr && *text != '\0') {
    shape = std::stoi(text);
    if (shape < 0 || static_cast<std::size_t>(shape) >= sw::gpu::kPassShapes.size())
      throw Error(ErrorKind::kUsage, std::string(name) + " out of range: " + text);
  }
}

sw::gpu::PassPolicy policy_from_env() {
  sw::gpu::PassPolicy policy;
  rows_from_env("WARPSEARCH_PASS_MAX_ROWS", policy.max_rows);
  shape_from_env("WARPSEARCH_PASS_LONG_SHAPE", policy.long_shape);
  rows_from_env("WARPSEARCH_PASS_KNOWN_MAX_ROWS", policy.known_max_rows);
  shape_from_env("WARPSEARCH_PASS_KNOWN_LONG_SHAPE", policy.known_long_shape);
  return policy;
}

std::uint64_t job_cells(const std::vector<sw::gpu::PassJob>& jobs) {
  std::uint64_t cells = 0;
  for (const sw::gpu::PassJob& j : jobs) cells += std::uint64_t{j.qlen} * j.tlen;
  return cells;
}

Work gpu_align(const Context& ctx, AlignSetKind kind, bool with_reverse, bool known_scores = true) {
  const align::Batch batch = make_align_dataset(kind, kPairs, kSeed, ctx.input);
  const DeviceProbe probe = probe_devices();
  if (probe.devices.empty()) throw Error(ErrorKind::kGpu, "no usable GPU: " + probe.unavailable_reason);
  const sw::PassModel model = local_model(kind);
  std::vector<sw::gpu::PassJob> forward(batch.size());
  Work work;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const auto q = batch.query(i);
    const auto t = batch.target(i);
    forward[i] = {q.data(), static_cast<std::uint32_t>(q.size()), t.data(),
                  static_cast<std::uint32_t>(t.size()), false};
    work.residues += q.size() + t.size();
  }
  work.records = batch.size();
  sw::gpu::PassEngine engine(model, probe.devices.front().id, 0, policy_from_env());
  std::vector<sw::EndPoint> ends(forward.size());
  engine.run(forward, ends);  // warm-up
  const sw::gpu::PassEngine::Stats before = engine.stats();

  const Clock::time_point start = Clock::now();
  engine.run(forward, ends);
  work.cells = job_cells(forward);
  if (with_reverse) {
    std::vector<sw::gpu::PassJob> reverse;
    reverse.reserve(forward.size());
    for (std::size_t i = 0; i < forward.size(); ++i) {
      if (!sw::needs_reverse(model, ends[i], forward[i].qlen)) continue;
      const sw::ReverseExtent e = sw::reverse_extent(model.mode, ends[i], forward[i].qlen);
      reverse.push_back({forward[i].query, e.qlen, forward[i].target, e.tlen, true,
                         known_scores ? sw::reverse_known_score(model, ends[i]) : 0});
    }
    std::vector<sw::EndPoint> starts(reverse.size());
    engine.run(reverse, starts);
    work.cells += job_cells(reverse);
  }
  work.timed_s = std::chrono::duration<double>(Clock::now() - start).count();

  const sw::gpu::PassEngine::Stats s = engine.stats();
  std::fprintf(
      stderr,
      "  %s\n  timed run: GPU kernels %.4f s, transfers %.4f s; host windows %.4f s (waited for %.4f s), "
      "plan %.4f s, pack %.4f s, wait %.4f s; "
      "%llu launches, %llu/%llu cells in 16x2/32-bit lanes\n",
      engine.describe().c_str(), s.kernel_s - before.kernel_s, s.transfer_s - before.transfer_s,
      s.host_window_s - before.host_window_s, s.host_window_wait_s - before.host_window_wait_s,
      s.host_plan_s - before.host_plan_s, s.host_pack_s - before.host_pack_s,
      s.host_wait_s - before.host_wait_s, static_cast<unsigned long long>(s.launches - before.launches),
      static_cast<unsigned long long>(s.cells16 - before.cells16),
      static_cast<unsigned long long>(s.cells32 - before.cells32));
  return work;
}

std::string gpu_unavailable() {
  if (!gpu_support_compiled()) return "built without CUDA";
  // No CUDA call here: the harness forks runs, and a CUDA context must not exist before fork.
  if (!std::filesystem::exists("/dev/nvidiactl")) return "no NVIDIA driver device files";
  return "";
}

const Registration kGpuProtein{{
    .name = "gpu-align-protein",
    .description =
        "CUDA local pass (score + end), 10^6 ADEPT-shaped protein pairs, BLOSUM62 11/1, with transfers",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return gpu_align(ctx, AlignSetKind::kProtein, false); }},
    .unavailable = gpu_unavailable,
}};

const Registration kGpuDna{{
    .name = "gpu-align-dna",
    .description = "CUDA local pass (score + end), 10^6 ADEPT-shaped DNA pairs, +2/-3 5/2, with transfers",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return gpu_align(ctx, AlignSetKind::kDna, false); }},
    .unavailable = gpu_unavailable,
}};

const Registration kGpuProteinFwdRev{{
    .name = "gpu-align-protein-fwdrev",
    .description =
        "CUDA local forward + reverse (start) passes, 10^6 ADEPT-shaped protein pairs, with transfers",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return gpu_align(ctx, AlignSetKind::kProtein, true); }},
    .unavailable = gpu_unavailable,
}};

const Registration kGpuDnaFwdRev{{
    .name = "gpu-align-dna-fwdrev",
    .description = "CUDA local forward + reverse (start) passes, 10^6 ADEPT-shaped DNA pairs, with transfers",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return gpu_align(ctx, AlignSetKind::kDna, true); }},
    .unavailable = gpu_unavailable,
}};

const Registration kGpuProteinFwdRevFull{{
    .name = "gpu-align-protein-fwdrev-full",
    .description = "as gpu-align-protein-fwdrev, but the reverse passes sweep their whole prefixes (no "
                   "known scores): the cost the known-score stop saves",
    .headline = Headline::kCells,
    .body =
        InternalRun{[](const Context& ctx) { return gpu_align(ctx, AlignSetKind::kProtein, true, false); }},
    .unavailable = gpu_unavailable,
}};
#endif

}  // namespace
}  // namespace warpsearch::bench
