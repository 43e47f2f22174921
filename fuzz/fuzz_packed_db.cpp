// fuzz_packed_db.cpp: libFuzzer target for the packed database reader (PackedDb, SequenceSource).
// Each input becomes a database file set in a private temporary directory (packed_db_harness.hpp),
// which is opened and read completely; only warpsearch::Error may come out.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "packed_db_harness.hpp"

namespace {

// The temporary directory, removed at exit.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char templ[] = "/tmp/fuzz_packed_db.XXXXXX";
    if (::mkdtemp(templ) == nullptr) std::abort();
    path = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ScratchDir dir;
  warpsearch::fuzz::run_input(dir.path + "/db", data, size);
  return 0;
}
