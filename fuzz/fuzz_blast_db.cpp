// fuzz_blast_db.cpp: libFuzzer target for the BLAST+ protein database reader (BlastDb, SequenceSource).
// Each input becomes a BLAST+ file set (vol.pin .psq .phr, optionally alias files) in a private temporary
// directory (blast_db_harness.hpp), which is opened and read completely; only warpsearch::Error may come out.
#include <cstddef>
#include <cstdint>
#include <string>

#include "blast_db_harness.hpp"
#include "scratch_dir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const warpsearch::fuzz::ScratchDir dir("/tmp/fuzz_blast_db");
  warpsearch::fuzz::blast::run_input(dir.path, data, size);
  return 0;
}
