// fuzz_blast_db.cpp: libFuzzer target for the BLAST+ protein database reader (BlastDb, SequenceSource).
// Each input becomes a BLAST+ file set (vol.pin .psq .phr, optionally alias files) in a private temporary
// directory (blast_db_harness.hpp), which is opened and read completely; only warpsearch::Error may come out.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "blast_db_harness.hpp"

namespace {

// The temporary directory, removed at exit.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char templ[] = "/tmp/fuzz_blast_db.XXXXXX";
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
  warpsearch::fuzz::blast::run_input(dir.path, data, size);
  return 0;
}
