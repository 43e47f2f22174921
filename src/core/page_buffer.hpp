// page_buffer.hpp: PageBuffer<T>, a growable array of trivially copyable values kept in whole pages of
// anonymous memory, for large work matrices that only grow (the HMM DP matrices, src/hmm/omx.hpp).
//
// Why not std::vector: growing a vector allocates new storage, copies the old elements and value-
// initializes the new ones, so every growth writes (and page-faults) the whole new size, and the old
// and new storage are held at once. Here grow() extends the mapping in place or moves it (Linux
// mremap): pages already in use are neither copied nor touched, and new pages are zero when first read,
// mapped by the kernel only when first written. Elsewhere it falls back to a new mapping, a copy of the
// old contents and a free of the old mapping (the new part is zero either way).
//
// Contents: elements [0, size()) are the ones grown to; the first old size() keep their values across
// grow(), the rest read as zero. data() is page-aligned (or null when empty). Copying copies size()
// elements into a new mapping.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace warpsearch {

namespace detail {
/// A zeroed mapping of at least `bytes` (rounded up to pages); throws std::bad_alloc when refused.
/// Returns the mapped length in *mapped.
void* page_map(std::size_t bytes, std::size_t* mapped);
/// Grows mapping p (length *mapped, p may be null with *mapped == 0) to at least `bytes`, keeping its
/// contents; the new part is zero. Returns the (possibly moved) mapping and updates *mapped. On
/// failure throws std::bad_alloc and leaves p mapped as it was.
void* page_grow(void* p, std::size_t* mapped, std::size_t bytes);
/// Unmaps p (length mapped); no-op for null.
void page_unmap(void* p, std::size_t mapped) noexcept;
}  // namespace detail

template <class T>
class PageBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "PageBuffer holds trivially copyable values");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  PageBuffer() = default;
  PageBuffer(const PageBuffer& o) { copy_from(o); }
  PageBuffer(PageBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        mapped_(std::exchange(o.mapped_, 0)) {}
  PageBuffer& operator=(const PageBuffer& o) {
    if (this != &o) {
      PageBuffer copy(o);
      swap(copy);
    }
    return *this;
  }
  PageBuffer& operator=(PageBuffer&& o) noexcept {
    PageBuffer moved(std::move(o));
    swap(moved);
    return *this;
  }
  ~PageBuffer() { detail::page_unmap(data_, mapped_); }

  void swap(PageBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(mapped_, o.mapped_);
  }

  /// Makes size() at least n (never shrinks); see the file comment for what the elements hold.
  void grow(std::size_t n) {
    if (n <= size_) return;
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();  // n * sizeof(T) would wrap
    if (n * sizeof(T) > mapped_) data_ = static_cast<T*>(detail::page_grow(data_, &mapped_, n * sizeof(T)));
    size_ = n;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }

  friend bool operator==(const PageBuffer& a, const PageBuffer& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void copy_from(const PageBuffer& o) {
    if (o.size_ == 0) return;
    data_ = static_cast<T*>(detail::page_map(o.size_ * sizeof(T), &mapped_));
    size_ = o.size_;
    std::memcpy(data_, o.data_, size_ * sizeof(T));
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;    // elements
  std::size_t mapped_ = 0;  // bytes mapped (whole pages)
};

}  // namespace warpsearch
