// probe.cu: CUDA device discovery behind probe_devices() (compiled only in CUDA builds).
//
// A device is usable when (1) its compute capability is at least the lowest architecture this build
// targets (nvcc's __CUDA_ARCH_LIST__, i.e. CMAKE_CUDA_ARCHITECTURES) and (2) the binary holds a kernel
// image the device can run (checked on a probe kernel compiled with the same flags as every other
// kernel of the library: catches e.g. "90-real" builds on a newer GPU). Failures of the CUDA runtime
// itself (no driver, driver too old, no device) give an empty list and a human-readable reason, never
// an exception; the runtime's error state is cleared afterwards so later checks start clean.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <string>

#include "warpsearch/gpu.hpp"

namespace warpsearch {
namespace {

// The architectures nvcc compiles this file for, as 100 * major + 10 * minor (e.g. 900 for sm_90).
#ifdef __CUDA_ARCH_LIST__
constexpr int kTargetArchs[] = {__CUDA_ARCH_LIST__};
#else
constexpr int kTargetArchs[] = {900};  // the project default, CMAKE_CUDA_ARCHITECTURES=90
#endif
constexpr int kMinTargetArch = *std::min_element(std::begin(kTargetArchs), std::end(kTargetArchs));

__global__ void probe_kernel() {}

std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")";
}

std::string runtime_version_text() {
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}

std::string visible_devices_text() {
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  return env == nullptr ? std::string() : std::string(" (CUDA_VISIBLE_DEVICES=\"") + env + "\")";
}

// Why cudaGetDeviceCount failed, in words a user can act on.
std::string count_failure_reason(cudaError_t status) {
  switch (status) {
    case cudaErrorNoDevice:
      return "no CUDA device is visible" + visible_devices_text() + ": " + cuda_error_text(status);
    case cudaErrorInsufficientDriver:
      return "no usable NVIDIA driver (missing, or older than this build's CUDA runtime " +
             runtime_version_text() + "): " + cuda_error_text(status);
    case cudaErrorInitializationError:
      return "the CUDA driver failed to initialize: " + cuda_error_text(status);
    default: return "CUDA device discovery failed: " + cuda_error_text(status);
  }
}

// Fills `info` for device `id` and says why it cannot be used (empty when usable).
std::string inspect_device(int id, DeviceInfo& info) {
  cudaDeviceProp prop{};
  cudaError_t status = cudaGetDeviceProperties(&prop, id);
  if (status != cudaSuccess) return "device " + std::to_string(id) + ": " + cuda_error_text(status);
  info.id = id;
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.total_memory = prop.totalGlobalMem;
  info.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  const std::string label = "device " + std::to_string(id) + " (" + info.name + ")";

  const int arch = 100 * prop.major + 10 * prop.minor;
  if (arch < kMinTargetArch) {
    return label + " has compute capability " + std::to_string(prop.major) + "." +
           std::to_string(prop.minor) + " but this build targets " + std::to_string(kMinTargetArch / 100) +
           "." + std::to_string(kMinTargetArch % 100 / 10) + " and newer (CMAKE_CUDA_ARCHITECTURES)";
  }
  // The remaining calls need the device current; the caller restores the previous device.
  status = cudaSetDevice(id);
  if (status != cudaSuccess) return label + ": " + cuda_error_text(status);
  cudaFuncAttributes attributes{};
  status = cudaFuncGetAttributes(&attributes, probe_kernel);
  if (status != cudaSuccess) {
    return label + ": this build has no kernel image for compute capability " + std::to_string(prop.major) +
           "." + std::to_string(prop.minor) + " (CMAKE_CUDA_ARCHITECTURES): " + cuda_error_text(status);
  }
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  status = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (status != cudaSuccess) return label + ": " + cuda_error_text(status);
  info.free_memory = free_bytes;
  return {};
}

}  // namespace

DeviceProbe probe_cuda_devices(const std::function<std::vector<int>(int count)>& choose) {
  DeviceProbe probe;
  int count = 0;
  const cudaError_t count_status = cudaGetDeviceCount(&count);
  if (count_status != cudaSuccess) {
    (void)cudaGetLastError();
    probe.unavailable_reason = count_failure_reason(count_status);
    return probe;
  }
  if (count == 0) {
    probe.unavailable_reason = "no CUDA device is visible" + visible_devices_text();
    return probe;
  }

  int previous = 0;
  const bool restore = cudaGetDevice(&previous) == cudaSuccess;
  std::string skipped;  // why each unusable device was left out, "; "-separated
  for (const int id : choose(count)) {
    if (id < 0 || id >= count) continue;
    DeviceInfo info;
    const std::string problem = inspect_device(id, info);
    if (problem.empty()) {
      probe.devices.push_back(std::move(info));
    } else {
      (void)cudaGetLastError();
      skipped += (skipped.empty() ? "" : "; ") + problem;
    }
  }
  if (restore) (void)cudaSetDevice(previous);
  (void)cudaGetLastError();
  if (probe.devices.empty()) probe.unavailable_reason = "no usable CUDA device: " + skipped;
  return probe;
}

void release_cuda_devices(std::span<const int> ids) {
  for (const int id : ids)
    if (cudaSetDevice(id) == cudaSuccess) (void)cudaDeviceReset();
  (void)cudaGetLastError();
}

}  // namespace warpsearch
