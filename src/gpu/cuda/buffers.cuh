// buffers.cuh: RAII owners of CUDA resources: DeviceBuffer, PinnedBuffer, Stream, Event, DeviceGuard.
//
// Every type is move-only; constructors and member functions throw Error(kGpu) on failure (see
// check.cuh); destructors never throw (a failing free during teardown is ignored). Device memory is
// plain cudaMalloc memory of the device that was current at construction, never managed memory; it is
// freed on that device whichever device is current when the buffer dies.
// Buffers hold trivially copyable elements and are not initialized; counts are in elements.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "gpu/cuda/check.cuh"
#include "warpsearch/error.hpp"

namespace warpsearch::gpu {

// A CUDA stream that does not synchronize with the legacy default stream.
class Stream {
 public:
  Stream() { WS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  // Waits for all work queued so far; kernel faults from that work are thrown here.
  void synchronize() const { WS_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// A timing event. elapsed_ms(start, stop) is valid once both were recorded and `stop` completed.
class Event {
 public:
  Event() { WS_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_ != nullptr) (void)cudaEventDestroy(event_);
  }
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  void record(const Stream& stream) { WS_CUDA_CHECK(cudaEventRecord(event_, stream.get())); }
  void synchronize() const { WS_CUDA_CHECK(cudaEventSynchronize(event_)); }

  // Milliseconds between two recorded events; waits for `stop` first.
  static float elapsed_ms(const Event& start, const Event& stop) {
    stop.synchronize();
    float ms = 0.0f;
    WS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, stop.event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// Makes `device` current for the guard's lifetime and then restores the previous current device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    WS_CUDA_CHECK(cudaGetDevice(&previous_));
    WS_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { (void)cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

namespace detail {
// Frees device memory of `device` whatever device is current, restoring the current one; never throws.
inline void free_device_memory(void* pointer, int device) noexcept {
  int current = device;
  const bool switched =
      cudaGetDevice(&current) == cudaSuccess && current != device && cudaSetDevice(device) == cudaSuccess;
  (void)cudaFree(pointer);
  if (switched) (void)cudaSetDevice(current);
}

// Throws Error(kInternal) unless [offset, offset + count) lies inside a buffer of `size` elements.
inline void check_range(std::size_t offset, std::size_t count, std::size_t size, const char* what) {
  if (offset > size || count > size - offset) {
    throw Error(ErrorKind::kInternal, std::string(what) + ": " + std::to_string(count) +
                                          " elements at offset " + std::to_string(offset) +
                                          " exceed a buffer of " + std::to_string(size));
  }
}
}  // namespace detail

// Device memory for `size()` elements of T. upload/download copy a host span to/from elements
// [offset, offset + span.size()); the *_async forms queue the copy on a stream (the host memory must
// stay alive and untouched until the stream reaches it, and should be pinned for real overlap).
template <typename T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds trivially copyable elements");

 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count == 0) return;
    WS_CUDA_CHECK(cudaGetDevice(&device_));
    WS_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) detail::free_device_memory(data_, device_);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        device_(other.device_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(device_, other.device_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  bool empty() const noexcept { return size_ == 0; }
  // The device that owns the memory (the current device at construction).
  int device() const noexcept { return device_; }

  void upload(std::span<const T> host, std::size_t offset = 0) {
    detail::check_range(offset, host.size(), size_, "DeviceBuffer::upload");
    if (host.empty()) return;
    WS_CUDA_CHECK(cudaMemcpy(data_ + offset, host.data(), host.size_bytes(), cudaMemcpyHostToDevice));
  }
  void download(std::span<T> host, std::size_t offset = 0) const {
    detail::check_range(offset, host.size(), size_, "DeviceBuffer::download");
    if (host.empty()) return;
    WS_CUDA_CHECK(cudaMemcpy(host.data(), data_ + offset, host.size_bytes(), cudaMemcpyDeviceToHost));
  }
  void upload_async(std::span<const T> host, const Stream& stream, std::size_t offset = 0) {
    detail::check_range(offset, host.size(), size_, "DeviceBuffer::upload_async");
    if (host.empty()) return;
    WS_CUDA_CHECK(cudaMemcpyAsync(data_ + offset, host.data(), host.size_bytes(), cudaMemcpyHostToDevice,
                                  stream.get()));
  }
  void download_async(std::span<T> host, const Stream& stream, std::size_t offset = 0) const {
    detail::check_range(offset, host.size(), size_, "DeviceBuffer::download_async");
    if (host.empty()) return;
    WS_CUDA_CHECK(cudaMemcpyAsync(host.data(), data_ + offset, host.size_bytes(), cudaMemcpyDeviceToHost,
                                  stream.get()));
  }
  // Sets every byte to zero.
  void fill_zero() {
    if (data_ != nullptr) WS_CUDA_CHECK(cudaMemset(data_, 0, bytes()));
  }
  void fill_zero_async(const Stream& stream) {
    if (data_ != nullptr) WS_CUDA_CHECK(cudaMemsetAsync(data_, 0, bytes(), stream.get()));
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = 0;
};

// Page-locked host memory for `size()` elements of T (fast, truly asynchronous copies).
template <typename T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "PinnedBuffer holds trivially copyable elements");

 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) : size_(count) {
    if (count > 0) WS_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  ~PinnedBuffer() {
    if (data_ != nullptr) (void)cudaFreeHost(data_);
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::span<T> span() noexcept { return {data_, size_}; }
  std::span<const T> span() const noexcept { return {data_, size_}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace warpsearch::gpu
