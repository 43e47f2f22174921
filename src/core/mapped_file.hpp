// mapped_file.hpp: MappedFile, one regular file mapped read-only into memory (the database readers'
// shared way to read large files: BlastDb's .pin/.psq/.phr and PackedDb's data files).
#pragma once

#include <cstdint>
#include <string>

namespace warpsearch {

// One file mapped read-only; an empty file maps nothing but data() still gives a valid pointer.
// Not copyable; the mapping lives until the object is destroyed or open() is called again.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Maps path. `what` names the file in error messages: a system error "cannot open|stat|map <what>"
  // (errno kept), and ErrorKind::kFormat "not a regular file" when path is a directory, FIFO, etc.
  void open(const std::string& path, const std::string& what);

  // The file's bytes (page-aligned; an empty file gives an 8-byte-aligned pointer to nothing).
  const std::uint8_t* data() const;
  std::uint64_t size() const { return bytes_; }

 private:
  void unmap();

  void* addr_ = nullptr;
  std::uint64_t bytes_ = 0;
};

}  // namespace warpsearch
