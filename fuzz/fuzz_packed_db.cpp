// fuzz_packed_db.cpp: libFuzzer target for the packed database reader (PackedDb, SequenceSource).
// Each input becomes a database file set in a private temporary directory (packed_db_harness.hpp),
// which is opened and read completely; only warpsearch::Error may come out.
#include <cstddef>
#include <cstdint>
#include <string>

#include "packed_db_harness.hpp"
#include "scratch_dir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const warpsearch::fuzz::ScratchDir dir("/tmp/fuzz_packed_db");
  warpsearch::fuzz::run_input(dir.path + "/db", data, size);
  return 0;
}
