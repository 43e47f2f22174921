// gpu.hpp: GPU discovery, device selection and multi-GPU work splitting (host-side API).
//
// This header is usable in every build: in a CPU-only build (no CUDA compiler at configure time)
// probe_devices() reports no devices and says why, so --device auto falls back to the CPU and
// --device gpu fails with a clear message. CUDA-specific RAII types (device/pinned buffers, streams,
// error checks) live in src/gpu/cuda/ and are used only by .cu files and GPU code paths.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace warpsearch {

struct DeviceInfo {
  int id = 0;                      // CUDA device ordinal
  std::string name;                // e.g. "NVIDIA H100 80GB HBM3"
  int sm_count = 0;                // streaming multiprocessors
  int cc_major = 0, cc_minor = 0;  // compute capability
  std::uint64_t total_memory = 0;  // bytes
  std::uint64_t free_memory = 0;   // bytes, at probe time
  std::uint64_t l2_bytes = 0;
  std::uint64_t shared_per_block_optin = 0;  // max dynamic shared memory per block, bytes
};

enum class DeviceMode : std::uint8_t { kAuto, kCpu, kGpu };
std::optional<DeviceMode> parse_device_mode(std::string_view text);  // "auto" | "cpu" | "gpu"

// True when this build contains GPU code (compiled with CUDA).
bool gpu_support_compiled();

struct DeviceProbe {
  std::vector<DeviceInfo> devices;  // visible, usable devices (compute capability the build targets)
  std::string unavailable_reason;   // why devices is empty ("built without CUDA", "no CUDA driver", ...)
};
DeviceProbe probe_devices();
// Like probe_devices(), but inspects only the devices choose(count) returns (count: the visible devices;
// ids outside 0..count-1 are ignored): no CUDA context is started on the others.
DeviceProbe probe_devices(const std::function<std::vector<int>(int count)>& choose);

// Ends this process's use of the given devices early: each one's primary context is reset (its memory,
// streams and modules freed), which the driver would otherwise do when the process exits (about 0.1 s on
// an H200). A command that has finished its GPU work calls it on a background thread so that the
// teardown overlaps its remaining CPU work. No other thread may use these devices meanwhile; a later use
// starts a new context. Best effort: errors are ignored. Nothing to do without CUDA.
void release_devices(std::span<const int> ids);

struct DeviceSelection {
  bool use_gpu = false;
  std::vector<DeviceInfo> devices;  // chosen devices, in the order given by --gpus (or id order)
  std::string note;                 // e.g. why auto fell back to the CPU; empty if nothing to say
};

// Resolves --device and --gpus ("0,2"; empty = all visible). kGpu without a usable device, an
// unknown or duplicate id in gpu_list: Error(kGpu / kUsage). kAuto without devices: CPU plus note.
DeviceSelection select_devices(DeviceMode mode, std::string_view gpu_list);
DeviceSelection select_devices(DeviceMode mode, std::string_view gpu_list, const DeviceProbe& probe);
// select_devices() for one of `local_size` processes sharing this machine's GPUs (an MPI rank with its
// node-local rank): the listed ids (or every visible device) are dealt out as dist::local_devices does
// (warpsearch/dist.hpp), and only this process's share is probed and selected, so processes do not start
// CUDA contexts on each other's GPUs. local_size <= 1: select_devices(mode, gpu_list).
DeviceSelection select_local_devices(DeviceMode mode, std::string_view gpu_list, int local_rank,
                                     int local_size);

// Contiguous split of items with the given weights (e.g. residues per sequence or per batch) into
// `parts` ranges of near-equal total weight; deterministic, ranges in order, empty ranges allowed when
// there are fewer items than parts. Used to share database batches among GPUs.
struct WorkRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::uint64_t weight = 0;
};
std::vector<WorkRange> split_work(std::span<const std::uint64_t> weights, std::size_t parts);

}  // namespace warpsearch
