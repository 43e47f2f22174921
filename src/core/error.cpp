// error.cpp: Error formatting and exit codes.
#include "warpsearch/error.hpp"

#include <cerrno>
#include <cstring>

namespace warpsearch {
namespace {

std::string compose(const std::string& message, const std::string& file, std::uint64_t line) {
  if (file.empty()) return message;
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

}  // namespace

Error::Error(ErrorKind kind, std::string message, std::string file, std::uint64_t line)
    : std::runtime_error(compose(message, file, line)),
      kind_(kind),
      message_(std::move(message)),
      file_(std::move(file)),
      line_(line) {}

int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::kUsage: return 2;
    case ErrorKind::kIo: return 3;
    case ErrorKind::kFormat:
    case ErrorKind::kInput: return 4;
    case ErrorKind::kGpu: return 5;
    case ErrorKind::kInternal: return 70;
  }
  return 1;
}

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kIo: return "I/O";
    case ErrorKind::kFormat: return "format";
    case ErrorKind::kInput: return "input";
    case ErrorKind::kGpu: return "GPU";
    case ErrorKind::kInternal: return "internal";
  }
  return "unknown";
}

void throw_system_error(const std::string& what, const std::string& path) {
  const int err = errno;
  throw Error(ErrorKind::kIo, what + ": " + std::strerror(err), path);
}

}  // namespace warpsearch
