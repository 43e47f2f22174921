// runner_options.cuh: the GPU runner with explicit options (tests and benchmarks); host-only declarations,
// includable from .cpp files. make_gpu_runner() (gpu_runner.hpp) is make_runner() with the defaults.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "scan/model.hpp"
#include "scan/sections.hpp"

namespace warpsearch::scan::gpu {

struct RunnerOptions {
  // Query rows per lane (strip height 32 * R): 4, 8 or 16; 0 chooses per launch from the parallelism.
  int rows_per_lane = 0;
  // Columns per column block of a work unit (a positive multiple of 32); 0 chooses per launch (small
  // enough for dozens of units per resident block, large enough to make a unit's set-up negligible).
  int block_width = 0;
  // How many runners launch kernels on this device at the same time (the scan's two strands): each
  // launch then uses 1/sharing of the resident blocks, and the models that choose shapes and section
  // counts see that share of the device.
  int sharing = 1;
};

// Throws Error(kUsage) for an unsupported rows_per_lane, Error(kGpu) on CUDA failures.
std::unique_ptr<SectionRunner> make_runner(const ScanModel& model, std::span<const std::uint8_t> query,
                                           int device, const RunnerOptions& options);

// Two runners on one device whose launches run as one kernel when they arrive together (the scan's two
// strands; each uses options with sharing = 2). The queries must have the same length (else kUsage).
std::pair<std::unique_ptr<SectionRunner>, std::unique_ptr<SectionRunner>> make_runner_pair(
    const ScanModel& model, std::span<const std::uint8_t> first, std::span<const std::uint8_t> second,
    int device, RunnerOptions options);

// What the last run() of a GPU runner launched (zeros before the first launch).
struct LaunchInfo {
  int rows_per_lane = 0;         // R of the kernel used
  std::int64_t block_width = 0;  // columns per column block of a work unit
  std::size_t tasks = 0;         // tasks with columns
  std::uint64_t cells = 0;       // DP cells of those tasks (query rows x columns)
  double kernel_seconds = 0;     // kernel time (CUDA events; launches combined with a paired runner's: from
                                 // this runner's submission to the end of the combined kernel)
};
// Both throw Error(kInternal) unless `runner` was made by make_runner() / make_gpu_runner().
LaunchInfo last_launch(const SectionRunner& runner);
// The runner's column records of [begin, end) of the current target (columns it computed).
std::vector<ColumnRecord> download_records(SectionRunner& runner, std::int64_t begin, std::int64_t end);

}  // namespace warpsearch::scan::gpu
