// multi_gpu.cuh: runs one piece of work per selected GPU, each on its own host thread.
//
// run_on_devices(selection.devices, work) starts one std::jthread per device, makes that device
// current on it (cudaSetDevice) and calls work(task) there. It returns when every call returned. If a
// call throws, the shared stop token is requested so the others can end early (work should check
// task.stop between batches), and once all threads joined the first exception thrown (in time) is
// rethrown on the caller's thread. The caller's current device is not changed. Results are written by
// the work itself, indexed by task.slot, so their order never depends on thread timing.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <stop_token>

#include "warpsearch/gpu.hpp"

namespace warpsearch::gpu {

struct DeviceTask {
  std::size_t slot = 0;                // position of the device in the list passed to run_on_devices
  const DeviceInfo* device = nullptr;  // that device; current on the calling thread
  std::stop_token stop;                // requested when the work of another device failed
};

// Does nothing for an empty list.
void run_on_devices(std::span<const DeviceInfo> devices, const std::function<void(const DeviceTask&)>& work);

}  // namespace warpsearch::gpu
