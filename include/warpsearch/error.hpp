// error.hpp: the one exception type warpsearch throws, with where the problem is (file, line).
//
// Every user-facing failure (bad input, unreadable file, GPU trouble) is an Error whose what()
// reads "FILE:LINE: message" (or "FILE: message" when no line applies). The CLI prints it and exits
// with exit_code(kind()); library users can catch it and inspect the fields.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace warpsearch {

enum class ErrorKind : std::uint8_t {
  kUsage,     // bad option values or combinations
  kIo,        // a file cannot be opened, read or written
  kFormat,    // a file is not in the expected format (FASTA, matrix, packed DB, ...)
  kInput,     // well-formed but unusable input (empty database, duplicate names, ...)
  kGpu,       // CUDA runtime/driver failure, or a GPU was required and none is usable
  kInternal,  // a bug: an invariant did not hold
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string file = {}, std::uint64_t line = 0);

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& file() const noexcept { return file_; }
  std::uint64_t line() const noexcept { return line_; }

 private:
  ErrorKind kind_;
  std::string message_;
  std::string file_;
  std::uint64_t line_;
};

// Process exit status for an error of this kind: 2 usage, 3 I/O, 4 format/input, 5 GPU, 70 internal.
int exit_code(ErrorKind kind) noexcept;

// Name used in messages ("usage", "I/O", "format", ...).
const char* to_string(ErrorKind kind) noexcept;

// Throws Error(kIo, "<what>: <strerror(errno)>", path). Call right after a failing system call.
[[noreturn]] void throw_system_error(const std::string& what, const std::string& path);

}  // namespace warpsearch
