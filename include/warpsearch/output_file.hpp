// output_file.hpp: all-or-nothing output files.
//
// A regular file is written to a temporary name beside it ("NAME.tmp.XXXXXX") and renamed over NAME
// only by commit(); if the writer is destroyed without commit() (an error was thrown), the temporary
// file is removed, so a failed run never leaves a partial or corrupt output behind. "-", /dev/stdout,
// pipes, character devices and other non-regular targets are written directly and never replaced.
// OutputGroup commits several files together (e.g. the files of a packed database).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace warpsearch {

class OutputFile {
 public:
  OutputFile() = default;
  // Opens (creates) the output. Throws Error(kIo) naming path if that is impossible.
  explicit OutputFile(const std::string& path, std::size_t buffer_bytes = 1 << 20);
  ~OutputFile();
  OutputFile(OutputFile&&) noexcept;
  OutputFile& operator=(OutputFile&&) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, std::size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes, syncs and renames the temporary file into place (no-op rename for direct targets).
  void commit();
  // Flushes and closes without renaming, leaving the temporary in place; for OutputGroup.
  void finish_unrenamed();
  // Renames a finished temporary into place.
  void rename_into_place();

  const std::string& path() const { return path_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  void flush_buffer();
  void discard() noexcept;

  std::string path_;
  std::string temp_path_;  // empty for direct targets
  int fd_ = -1;
  bool direct_ = false;
  bool finished_ = false;
  std::vector<char> buffer_;
  std::size_t used_ = 0;
  std::uint64_t bytes_written_ = 0;
};

// Several outputs that appear together or not at all: commit() finishes every file, then renames
// them all; if anything throws before that, every temporary is removed.
class OutputGroup {
 public:
  OutputFile& add(const std::string& path, std::size_t buffer_bytes = 1 << 20);
  void commit();

 private:
  std::vector<std::unique_ptr<OutputFile>> files_;
};

}  // namespace warpsearch
