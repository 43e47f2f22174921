// multi_gpu.cu: run_on_devices, the one-host-thread-per-GPU driver (see multi_gpu.cuh).
#include <cuda_runtime.h>

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu/cuda/check.cuh"
#include "gpu/cuda/multi_gpu.cuh"

namespace warpsearch::gpu {

void run_on_devices(std::span<const DeviceInfo> devices, const std::function<void(const DeviceTask&)>& work) {
  // Declared before the threads so that they outlive them: the threads join when `threads` dies.
  std::mutex mutex;
  std::exception_ptr first_error;
  std::stop_source stop;

  std::vector<std::jthread> threads;
  threads.reserve(devices.size());
  try {
    for (std::size_t slot = 0; slot < devices.size(); ++slot) {
      threads.emplace_back([&, slot] {
        try {
          WS_CUDA_CHECK(cudaSetDevice(devices[slot].id));
          work(DeviceTask{slot, &devices[slot], stop.get_token()});
        } catch (...) {
          const std::lock_guard lock(mutex);
          if (!first_error) first_error = std::current_exception();
          stop.request_stop();
        }
      });
    }
  } catch (...) {  // a thread could not be started: stop the started ones, join them, report
    stop.request_stop();
    throw;
  }
  for (std::jthread& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace warpsearch::gpu
