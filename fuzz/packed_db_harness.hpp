// packed_db_harness.hpp: turns one fuzz input into a packed database file set and reads all of it.
// Shared by fuzz_packed_db.cpp and the corpus replay in tests/core/test_packed_db.cpp.
//
// Input: byte 0 holds flags (bit 0: repair the checksums, so mutations get past the CRC checks and
// reach the structural ones; bit 1: open with verification), then one section per file, in
// db_file_paths() order (.wsq .wsh .wsx .wsm .wso .wsdb): a little-endian u32 length (clamped to
// the bytes left) and that many bytes. Missing sections are empty files.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/db_format.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::fuzz {

inline constexpr std::size_t kDbFiles = db_format::kDataFiles + 1;  // the header is last
using DbFiles = std::array<std::string, kDbFiles>;

inline constexpr std::uint8_t kRepairChecksums = 1;
inline constexpr std::uint8_t kVerify = 2;

inline DbFiles read_db_files(const std::string& prefix) {
  DbFiles files;
  const std::vector<std::string> paths = db_file_paths(prefix);
  for (std::size_t f = 0; f < kDbFiles; ++f) {
    std::ifstream in(paths[f], std::ios::binary);
    files[f].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

inline void write_db_files(const std::string& prefix, const DbFiles& files) {
  const std::vector<std::string> paths = db_file_paths(prefix);
  for (std::size_t f = 0; f < kDbFiles; ++f) {
    std::ofstream out(paths[f], std::ios::binary | std::ios::trunc);
    out.write(files[f].data(), static_cast<std::streamsize>(files[f].size()));
  }
}

// Makes the magic, the header size, the file table and the header CRC agree with the data, leaving
// every other field as it is. Headers shorter than the fixed part are left alone.
inline void repair_checksums(DbFiles& files) {
  namespace layout = db_format;
  std::string& header = files[layout::kDataFiles];
  if (header.size() < layout::kFixedBytes + layout::kCrcBytes) return;
  auto* h = reinterpret_cast<unsigned char*>(header.data());
  std::copy(layout::kMagic.begin(), layout::kMagic.end(), h + layout::kOffMagic);
  layout::put_u32(h + layout::kOffHeaderBytes, static_cast<std::uint32_t>(header.size()));
  for (std::size_t f = 0; f < layout::kDataFiles; ++f) {
    unsigned char* entry = h + layout::kOffFileTable + f * layout::kFileEntryBytes;
    layout::put_u64(entry, files[f].size());
    layout::put_u32(entry + 8, layout::crc32(files[f].data(), files[f].size()));
  }
  const std::size_t crc_at = header.size() - layout::kCrcBytes;
  layout::put_u32(h + crc_at, layout::crc32(h, crc_at));
}

inline DbFiles decode_input(const std::uint8_t* data, std::size_t size) {
  DbFiles files;
  std::size_t pos = size > 0 ? 1 : 0;
  for (std::size_t f = 0; f < kDbFiles && pos + 4 <= size; ++f) {
    const std::size_t length = std::min<std::size_t>(db_format::get_u32(data + pos), size - pos - 4);
    pos += 4;
    files[f].assign(reinterpret_cast<const char*>(data + pos), length);
    pos += length;
  }
  if (size > 0 && (data[0] & kRepairChecksums) != 0) repair_checksums(files);
  return files;
}

inline std::string encode_input(const DbFiles& files, std::uint8_t flags) {
  std::string out(1, static_cast<char>(flags));
  for (const std::string& file : files) {
    unsigned char length[4];
    db_format::put_u32(length, static_cast<std::uint32_t>(file.size()));
    out.append(reinterpret_cast<const char*>(length), 4);
    out += file;
  }
  return out;
}

// Opens the database at prefix and touches everything an application can reach. Returns true if it
// opened; warpsearch::Error (a rejected file set) returns false; anything else is a bug and escapes.
inline bool exercise_db(const std::string& prefix, bool verify) {
  try {
    const PackedDb db = PackedDb::open(prefix, PackedDbOptions{.verify = verify});
    std::uint64_t checksum = 0;
    for (std::uint64_t i = 0; i < db.size(); ++i) {
      checksum += db.name(i).size() + db.description(i).size() + db.residues(i).size();
      for (const MaskRun& run : db.soft_mask(i)) checksum += run.end - run.begin;
    }
    for (const std::uint32_t id : db.sorted_order()) checksum += db.length(id);
    const DbSummary summary = summarize(db);
    SequenceSource source = SequenceSource::open(prefix);
    Sequence seq;
    while (source.next(seq)) checksum += seq.length();
    return checksum + summary.sequences > 0;
  } catch (const Error&) {
    return false;
  }
}

inline bool run_input(const std::string& prefix, const std::uint8_t* data, std::size_t size) {
  write_db_files(prefix, decode_input(data, size));
  return exercise_db(prefix, size > 0 && (data[0] & kVerify) != 0);
}

}  // namespace warpsearch::fuzz
