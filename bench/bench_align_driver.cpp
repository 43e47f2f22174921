// bench_align_driver.cpp: the whole align:: library path (Aligner: checks, passes on every visible GPU
// or on the CPU pool, reverse passes, results; optionally traceback) on 10^6 ADEPT-shaped pairs, the
// number users see. Timed from submit() to the results, so host->device transfers, packing and the
// CPU finish stage are included; Aligner construction (device probe, CUDA contexts) is not.
//
//   align-protein / align-dna            device auto: all visible GPUs (CUDA_VISIBLE_DEVICES picks
//                                        them), else CPU; coordinates, no CIGAR
//   align-protein-cigar                  the same with traceback (CIGARs computed on CPU threads)
// The pairs are submitted in batches of kBatchPairs with four batches in flight, as the CLI does
// (WARPSEARCH_BENCH_ALIGN_BATCH=N: batches of N pairs instead, to measure the per-batch cost; batches
// other than 250,000 are other pairs, with the same shapes; WARPSEARCH_BENCH_ALIGN_INFLIGHT=N: N
// batches in flight; WARPSEARCH_BENCH_ALIGN_PAIRS=N: N pairs instead of 10^6 (10^7 shows the steady
// rate that long runs see, without the first batch's start and the last one's drain)).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <string>
#include <vector>

#include "align_dataset.hpp"
#include "env.hpp"
#include "registry.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::bench {
namespace {

constexpr std::uint64_t kSeed = 0xADE97;
constexpr std::size_t kPairs = 1'000'000;
constexpr std::size_t kBatchPairs = 250'000;
constexpr std::size_t kInFlight = 4;  // cmd_align.cpp's kChunksInFlight

Work run_aligner(const Context& ctx, AlignSetKind kind, bool traceback, std::size_t pairs) {
  pairs = env_count("WARPSEARCH_BENCH_ALIGN_PAIRS", pairs);
  align::Config config;
  if (kind == AlignSetKind::kDna) {
    config.matrix = ScoringMatrix::dna(2, -3);
    config.gaps = {5, 2};
  }
  config.traceback = traceback;
  config.threads = ctx.threads;
  // The dataset is built in batches up front (not timed).
  const std::size_t batch_pairs = env_count("WARPSEARCH_BENCH_ALIGN_BATCH", kBatchPairs);
  std::vector<align::Batch> batches;
  Work work;
  for (std::size_t done = 0, b = 0; done < pairs; done += batch_pairs, ++b) {
    batches.push_back(make_align_dataset(kind, std::min(batch_pairs, pairs - done), kSeed + b, ctx.input));
    work.records += batches.back().size();
    work.cells += batches.back().cells();
    for (std::size_t i = 0; i < batches.back().size(); ++i)
      work.residues += batches.back().query(i).size() + batches.back().target(i).size();
  }
  align::Aligner aligner(config);
  const auto start = std::chrono::steady_clock::now();
  std::deque<std::future<std::vector<align::Result>>> in_flight;
  std::int64_t checksum = 0;
  const std::size_t max_in_flight = env_count("WARPSEARCH_BENCH_ALIGN_INFLIGHT", kInFlight);
  for (align::Batch& b : batches) {
    in_flight.push_back(aligner.submit(std::move(b)));
    if (in_flight.size() == max_in_flight) {
      for (const align::Result& r : in_flight.front().get()) checksum += r.score;
      in_flight.pop_front();
    }
  }
  for (auto& f : in_flight)
    for (const align::Result& r : f.get()) checksum += r.score;
  work.timed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const align::Aligner::Stats s = aligner.stats();
  std::fprintf(
      stderr,
      "  %s\n  aligner: %llu batches, pass stage %.4f s, finish stage %.4f s; reverse cells %.3g "
      "(forward %.3g); engine calls %.4f s: GPU kernels %.4f s, transfers %.4f s; host windows %.4f s "
      "(waited for %.4f s), plan %.4f s, pack %.4f s, wait %.4f s; %llu launches\n",
      aligner.describe().c_str(), static_cast<unsigned long long>(s.batches), s.pass_s, s.finish_s,
      static_cast<double>(s.reverse_cells), static_cast<double>(s.forward_cells), s.gpu_run_s, s.gpu_kernel_s,
      s.gpu_transfer_s, s.host_window_s, s.host_window_wait_s, s.host_plan_s, s.host_pack_s, s.host_wait_s,
      static_cast<unsigned long long>(s.launches));
  if (checksum < 0) work.records = 0;  // keeps the results observable; local scores are never negative
  return work;
}

const Registration kProtein{{
    .name = "align-protein",
    .description =
        "Aligner end to end (all visible GPUs, else CPU), 10^6 ADEPT-shaped protein pairs, coordinates",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) {
      return run_aligner(ctx, AlignSetKind::kProtein, false, kPairs);
    }},
}};

const Registration kDna{{
    .name = "align-dna",
    .description =
        "Aligner end to end (all visible GPUs, else CPU), 10^6 ADEPT-shaped DNA pairs, coordinates",
    .headline = Headline::kCells,
    .body =
        InternalRun{[](const Context& ctx) { return run_aligner(ctx, AlignSetKind::kDna, false, kPairs); }},
}};

const Registration kProteinCigar{{
    .name = "align-protein-cigar",
    .description =
        "Aligner end to end with CIGARs (traceback on CPU threads), 10^5 ADEPT-shaped protein pairs",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) {
      return run_aligner(ctx, AlignSetKind::kProtein, true, kPairs / 10);
    }},
}};

}  // namespace
}  // namespace warpsearch::bench
