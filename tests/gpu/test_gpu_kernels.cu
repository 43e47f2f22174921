// test_gpu_kernels.cu: GPU runtime tests that need a device (CUDA builds only; skipped without one):
// buffer round trips, the residue histogram kernel against its CPU reference (bit for bit), the
// multi-GPU driver on every device, DeviceGuard, and the CUDA error checks.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/check.cuh"
#include "gpu/cuda/multi_gpu.cuh"
#include "gpu/cuda/residue_histogram.cuh"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"

namespace warpsearch::gpu {
namespace {

__global__ void empty_kernel() {}

// Every test needs a usable device: skipped (with the probe's reason) without one. The first usable
// device is current when a test body starts.
class GpuRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    probe_ = probe_devices();
    if (probe_.devices.empty()) GTEST_SKIP() << probe_.unavailable_reason;
    WS_CUDA_CHECK(cudaSetDevice(probe_.devices.front().id));
  }

  DeviceProbe probe_;
};

struct PackedBatch {
  std::vector<std::uint8_t> residues;
  std::vector<std::uint64_t> offsets;  // sequences + 1 entries
};

// Random protein-coded sequences with empty ones, one long one, and rare codes 31 (counted, last bin)
// and 200 (out of range, not counted).
PackedBatch random_batch(std::mt19937_64& rng, std::size_t sequences) {
  PackedBatch batch;
  batch.offsets.push_back(0);
  for (std::size_t s = 0; s < sequences; ++s) {
    std::size_t length = (s % 97 == 0) ? 0 : rng() % 1200;
    if (s == sequences / 2) length = 200000;
    for (std::size_t i = 0; i < length; ++i) {
      const std::uint64_t r = rng();
      std::uint8_t code = static_cast<std::uint8_t>(r % kProteinCodes);
      if (r % 1000 == 1) code = 31;
      if (r % 1000 == 2) code = 200;
      batch.residues.push_back(code);
    }
    batch.offsets.push_back(batch.residues.size());
  }
  return batch;
}

// Uploads the batch, runs the kernel on `stream` and returns the downloaded counts.
std::vector<std::uint32_t> gpu_histogram(const PackedBatch& batch, const Stream& stream) {
  const std::size_t sequences = batch.offsets.size() - 1;
  DeviceBuffer<std::uint8_t> residues(batch.residues.size());
  DeviceBuffer<std::uint64_t> offsets(batch.offsets.size());
  DeviceBuffer<std::uint32_t> counts(sequences * kMaxCodes);
  residues.upload_async(batch.residues, stream);
  offsets.upload_async(batch.offsets, stream);
  launch_residue_histogram(residues.data(), offsets.data(), sequences, counts.data(), stream.get());
  std::vector<std::uint32_t> result(counts.size());
  counts.download_async(result, stream);
  stream.synchronize();
  return result;
}

TEST_F(GpuRuntime, BufferRoundTripThroughPinnedMemoryAndStream) {
  std::mt19937 rng(7);
  const std::size_t n = (std::size_t{1} << 20) + 3;
  PinnedBuffer<std::uint32_t> host_in(n);
  PinnedBuffer<std::uint32_t> host_out(n);
  for (std::size_t i = 0; i < n; ++i) {
    host_in[i] = rng();
    host_out[i] = 0;
  }
  DeviceBuffer<std::uint32_t> a(n);
  DeviceBuffer<std::uint32_t> b(n);
  Stream stream;
  Event start;
  Event stop;
  start.record(stream);
  a.upload_async(host_in.span(), stream);
  WS_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice, stream.get()));
  b.download_async(host_out.span(), stream);
  stop.record(stream);
  stream.synchronize();
  EXPECT_GE(Event::elapsed_ms(start, stop), 0.0f);
  EXPECT_TRUE(std::equal(host_in.data(), host_in.data() + n, host_out.data()));

  // Synchronous copies from pageable memory at an offset.
  std::vector<std::uint32_t> part(1000);
  for (std::uint32_t& v : part) v = rng();
  a.upload(part, 500);
  std::vector<std::uint32_t> back(part.size());
  a.download(back, 500);
  EXPECT_EQ(back, part);
  std::vector<std::uint32_t> around(3);
  a.download(around, 499);
  EXPECT_EQ(around[0], host_in[499]);
  EXPECT_EQ(around[1], part[0]);

  // Copies past the end are refused before reaching CUDA.
  EXPECT_THROW(a.upload(part, n - 10), Error);
  EXPECT_THROW(a.download(back, n + 1), Error);
}

TEST_F(GpuRuntime, BuffersMoveAndAllowZeroSize) {
  DeviceBuffer<int> empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_TRUE(empty.empty());
  empty.fill_zero();
  empty.upload({});

  DeviceBuffer<int> a(16);
  int* const pointer = a.data();
  DeviceBuffer<int> b(std::move(a));
  EXPECT_EQ(b.data(), pointer);
  EXPECT_EQ(b.size(), 16u);
  b.fill_zero();
  std::vector<int> zeros(16, -1);
  b.download(zeros);
  EXPECT_EQ(zeros, std::vector<int>(16, 0));
  DeviceBuffer<int> c;
  c = std::move(b);
  EXPECT_EQ(c.data(), pointer);

  PinnedBuffer<double> pinned(8);
  double* const host = pinned.data();
  PinnedBuffer<double> moved(std::move(pinned));
  EXPECT_EQ(moved.data(), host);
  EXPECT_EQ(moved.span().size(), 8u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(GpuRuntime, ResidueHistogramMatchesReferenceBitForBit) {
  std::mt19937_64 rng(42);
  for (const std::size_t sequences : {std::size_t{1}, std::size_t{7}, std::size_t{5000}}) {
    const PackedBatch batch = random_batch(rng, sequences);
    const std::vector<std::uint32_t> expected = residue_histogram_reference(batch.residues, batch.offsets);
    Stream stream;
    EXPECT_EQ(gpu_histogram(batch, stream), expected) << sequences << " sequences";

    std::uint64_t counted = 0;
    for (const std::uint32_t c : expected) counted += c;
    const auto out_of_range = static_cast<std::uint64_t>(std::count_if(
        batch.residues.begin(), batch.residues.end(), [](std::uint8_t r) { return r >= kMaxCodes; }));
    EXPECT_EQ(counted + out_of_range, batch.residues.size());
  }
  // No sequences: nothing is launched.
  launch_residue_histogram(nullptr, nullptr, 0, nullptr, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(GpuRuntime, RunOnDevicesRunsOnEveryDeviceWithItCurrent) {
  int caller_device = -1;
  WS_CUDA_CHECK(cudaGetDevice(&caller_device));
  std::mt19937_64 rng(3);
  const PackedBatch batch = random_batch(rng, 3000);
  const std::vector<std::uint32_t> expected = residue_histogram_reference(batch.residues, batch.offsets);

  const std::size_t n = probe_.devices.size();
  std::vector<int> current(n, -1);
  std::vector<std::vector<std::uint32_t>> results(n);
  run_on_devices(probe_.devices, [&](const DeviceTask& task) {
    WS_CUDA_CHECK(cudaGetDevice(&current[task.slot]));
    Stream stream;
    results[task.slot] = gpu_histogram(batch, stream);
  });
  for (std::size_t slot = 0; slot < n; ++slot) {
    EXPECT_EQ(current[slot], probe_.devices[slot].id);
    EXPECT_EQ(results[slot], expected) << "device " << probe_.devices[slot].id;
  }
  int after = -1;
  WS_CUDA_CHECK(cudaGetDevice(&after));
  EXPECT_EQ(after, caller_device);

  bool called = false;
  run_on_devices({}, [&](const DeviceTask&) { called = true; });
  EXPECT_FALSE(called);
}

TEST_F(GpuRuntime, RunOnDevicesRethrowsTheErrorAndStopsTheOthers) {
  const std::size_t n = probe_.devices.size();
  std::atomic<std::size_t> ran{0};
  std::atomic<std::size_t> saw_stop{0};
  try {
    run_on_devices(probe_.devices, [&](const DeviceTask& task) {
      ++ran;
      if (task.slot == 0) throw Error(ErrorKind::kInput, "work on slot 0 failed");
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!task.stop.stop_requested() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
      if (task.stop.stop_requested()) ++saw_stop;
    });
    FAIL() << "run_on_devices did not rethrow";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_EQ(e.message(), "work on slot 0 failed");
  }
  EXPECT_EQ(ran.load(), n);
  EXPECT_EQ(saw_stop.load(), n - 1);
}

TEST_F(GpuRuntime, DeviceGuardRestoresTheCurrentDevice) {
  const int first = probe_.devices.front().id;
  const int last = probe_.devices.back().id;
  int current = -1;
  {
    const DeviceGuard guard(last);
    WS_CUDA_CHECK(cudaGetDevice(&current));
    EXPECT_EQ(current, last);
  }
  WS_CUDA_CHECK(cudaGetDevice(&current));
  EXPECT_EQ(current, first);
  EXPECT_THROW(DeviceGuard(1 << 20), Error);
  WS_CUDA_CHECK(cudaGetDevice(&current));
  EXPECT_EQ(current, first);

  // A buffer is freed on its own device even when another one is current.
  {
    std::optional<DeviceBuffer<float>> buffer;
    {
      const DeviceGuard guard(last);
      buffer.emplace(1024);
    }
    EXPECT_EQ(buffer->device(), last);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  WS_CUDA_CHECK(cudaGetDevice(&current));
  EXPECT_EQ(current, first);
}

TEST_F(GpuRuntime, CudaCheckThrowsGpuErrorWithFileAndLine) {
  int count = 0;
  WS_CUDA_CHECK(cudaGetDeviceCount(&count));
  int line = 0;
  try {
    line = __LINE__ + 1;
    WS_CUDA_CHECK(cudaSetDevice(count + 1000));
    FAIL() << "no error for an invalid device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kGpu);
    EXPECT_EQ(e.file(), __FILE__);
    EXPECT_EQ(e.line(), static_cast<std::uint64_t>(line));
    EXPECT_NE(e.message().find("cudaSetDevice(count + 1000)"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("cudaErrorInvalidDevice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failed call's error state was not cleared";

  empty_kernel<<<1, 4096>>>();  // more threads per block than any GPU allows
  try {
    line = __LINE__ + 1;
    WS_CUDA_CHECK_LAUNCH();
    FAIL() << "no error for an invalid launch configuration";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kGpu);
    EXPECT_EQ(e.line(), static_cast<std::uint64_t>(line));
    // The runtime reports cudaErrorInvalidConfiguration or (CUDA 13 drivers) cudaErrorInvalidValue.
    EXPECT_NE(e.message().find("kernel launch"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("(cudaErrorInvalid"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // The device still works after these non-sticky errors.
  empty_kernel<<<1, 32>>>();
  WS_CUDA_CHECK_LAUNCH();
  WS_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace warpsearch::gpu
