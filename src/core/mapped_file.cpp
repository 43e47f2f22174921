// mapped_file.cpp: MappedFile: open, fstat, regular-file check and read-only mmap (mapped_file.hpp).
#include "core/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "warpsearch/error.hpp"

namespace warpsearch {

MappedFile::~MappedFile() { unmap(); }

void MappedFile::unmap() {
  if (addr_ != nullptr) ::munmap(addr_, bytes_);
  addr_ = nullptr;
  bytes_ = 0;
}

void MappedFile::open(const std::string& path, const std::string& what) {
  unmap();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_system_error("cannot open " + what, path);
  // Closes fd on every path out; errno is saved around close() so that throw_system_error reports
  // the failing call's error.
  const auto fail_system = [&](const char* action) {
    const int err = errno;
    ::close(fd);
    errno = err;
    throw_system_error(std::string(action) + " " + what, path);
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_system("cannot stat");
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::kFormat, "not a regular file", path);
  }
  const auto bytes = static_cast<std::uint64_t>(st.st_size);
  if (bytes > 0) {
    void* addr = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) fail_system("cannot map");
    addr_ = addr;
    bytes_ = bytes;
  }
  ::close(fd);
}

const std::uint8_t* MappedFile::data() const {
  alignas(8) static constexpr std::uint8_t kNothing[8] = {};
  return addr_ != nullptr ? static_cast<const std::uint8_t*>(addr_) : kNothing;
}

}  // namespace warpsearch
