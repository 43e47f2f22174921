// gpu_runner.hpp: the CUDA tier of the scan (kernel 1): a SectionRunner (sections.hpp) on one GPU that
// computes exactly the column records and column states of reference_columns() (reference.hpp).
//
// Host-only header, usable in every build; the definition exists only in CUDA builds
// (src/scan/cuda/gpu_runner.cu), so callers guard its use with WARPSEARCH_HAVE_CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "scan/model.hpp"
#include "scan/sections.hpp"

namespace warpsearch::scan {

// Uses CUDA device `device`. The query is uploaded once; targets arrive through begin_target().
// `sharing`: how many runners run kernels on this device at the same time (each then plans for, and
// launches on, that share of it). Throws Error(kGpu) on CUDA failures (no such device, out of memory, ...).
std::unique_ptr<SectionRunner> make_gpu_runner(const ScanModel& model, std::span<const std::uint8_t> query,
                                               int device, int sharing = 1);

// Two runners sharing `device` (the scan's two strands: queries of one length, else Error(kUsage)) whose
// launches run as one kernel when both submit work at about the same time, so the device's scheduler
// balances the two strands' work.
std::pair<std::unique_ptr<SectionRunner>, std::unique_ptr<SectionRunner>> make_gpu_runner_pair(
    const ScanModel& model, std::span<const std::uint8_t> first, std::span<const std::uint8_t> second,
    int device);

}  // namespace warpsearch::scan
