// output_file.cpp: temporary-file-and-rename output (see output_file.hpp).
#include "warpsearch/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "warpsearch/error.hpp"

namespace warpsearch {
namespace {

bool is_direct_target(const std::string& path) {
  if (path == "-" || path == "/dev/stdout" || path == "/dev/stderr") return true;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return !S_ISREG(st.st_mode);
  return false;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, std::size_t buffer_bytes)
    : path_(path), buffer_(buffer_bytes == 0 ? 1 : buffer_bytes) {
  if (path.empty()) throw Error(ErrorKind::kUsage, "empty output file name");
  direct_ = is_direct_target(path);
  if (direct_) {
    if (path == "-" || path == "/dev/stdout") {
      fd_ = ::dup(STDOUT_FILENO);
    } else {
      fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    }
    if (fd_ < 0) throw_system_error("cannot open for writing", path);
    return;
  }
  std::string templ = path + ".tmp.XXXXXX";
  fd_ = ::mkostemp(templ.data(), O_CLOEXEC);
  if (fd_ < 0) throw_system_error("cannot create output file", path);
  ::fchmod(
      fd_, 0644 & ~[] {
        mode_t m = ::umask(0);
        ::umask(m);
        return m;
      }());
  temp_path_ = std::move(templ);
}

OutputFile::~OutputFile() { discard(); }

OutputFile::OutputFile(OutputFile&& other) noexcept { *this = std::move(other); }

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    temp_path_ = std::move(other.temp_path_);
    fd_ = std::exchange(other.fd_, -1);
    direct_ = other.direct_;
    finished_ = other.finished_;
    buffer_ = std::move(other.buffer_);
    used_ = std::exchange(other.used_, 0);
    bytes_written_ = other.bytes_written_;
    other.temp_path_.clear();
  }
  return *this;
}

void OutputFile::discard() noexcept {
  if (fd_ >= 0) {
    if (direct_) {
      try {
        flush_buffer();
      } catch (...) {
      }
    }
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

void OutputFile::write(const void* data, std::size_t bytes) {
  if (fd_ < 0) throw Error(ErrorKind::kInternal, "write to a closed output", path_);
  if (bytes == 0) return;  // data may be null for an empty span
  bytes_written_ += bytes;
  const char* p = static_cast<const char*>(data);
  if (used_ + bytes > buffer_.size()) {
    flush_buffer();
    if (bytes >= buffer_.size()) {  // large writes bypass the buffer
      while (bytes > 0) {
        const ssize_t n = ::write(fd_, p, bytes);
        if (n < 0) {
          if (errno == EINTR) continue;
          throw_system_error("write failed", path_);
        }
        p += n;
        bytes -= static_cast<std::size_t>(n);
      }
      return;
    }
  }
  std::memcpy(buffer_.data() + used_, p, bytes);
  used_ += bytes;
}

void OutputFile::flush_buffer() {
  std::size_t done = 0;
  while (done < used_) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error("write failed", path_);
    }
    done += static_cast<std::size_t>(n);
  }
  used_ = 0;
}

void OutputFile::finish_unrenamed() {
  if (fd_ < 0 || finished_) return;
  flush_buffer();
  if (!direct_ && ::fsync(fd_) != 0) throw_system_error("cannot sync output file", path_);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && !direct_) throw_system_error("cannot close output file", path_);
  finished_ = true;
}

void OutputFile::rename_into_place() {
  if (temp_path_.empty()) return;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    throw_system_error("cannot rename output into place", path_);
  temp_path_.clear();
}

void OutputFile::commit() {
  finish_unrenamed();
  rename_into_place();
}

OutputFile& OutputGroup::add(const std::string& path, std::size_t buffer_bytes) {
  files_.push_back(std::make_unique<OutputFile>(path, buffer_bytes));
  return *files_.back();
}

void OutputGroup::commit() {
  for (auto& f : files_) f->finish_unrenamed();
  for (auto& f : files_) f->rename_into_place();
}

}  // namespace warpsearch
