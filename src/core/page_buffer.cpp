// page_buffer.cpp: the anonymous mappings behind PageBuffer (see page_buffer.hpp).
#include "core/page_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>

namespace warpsearch::detail {
namespace {

std::size_t page_size() {
  static const std::size_t size = [] {
    const long s = ::sysconf(_SC_PAGESIZE);
    return s > 0 ? static_cast<std::size_t>(s) : std::size_t{4096};
  }();
  return size;
}

std::size_t round_to_pages(std::size_t bytes) {
  const std::size_t page = page_size();
  if (bytes > static_cast<std::size_t>(-1) - page) throw std::bad_alloc();
  return (bytes + page - 1) / page * page;
}

}  // namespace

void* page_map(std::size_t bytes, std::size_t* mapped) {
  const std::size_t len = round_to_pages(bytes == 0 ? 1 : bytes);
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  *mapped = len;
  return p;
}

void* page_grow(void* p, std::size_t* mapped, std::size_t bytes) {
  if (p == nullptr || *mapped == 0) return page_map(bytes, mapped);
  const std::size_t len = round_to_pages(bytes);
  if (len <= *mapped) return p;
#if defined(__linux__)
  void* q = ::mremap(p, *mapped, len, MREMAP_MAYMOVE);
  if (q == MAP_FAILED) throw std::bad_alloc();
#else
  std::size_t got = 0;
  void* q = page_map(len, &got);
  std::memcpy(q, p, *mapped);
  page_unmap(p, *mapped);
#endif
  *mapped = len;
  return q;
}

void page_unmap(void* p, std::size_t mapped) noexcept {
  if (p != nullptr && mapped != 0) ::munmap(p, mapped);
}

}  // namespace warpsearch::detail
