// db_format.hpp: byte layout of the packed database files (docs/FORMATS.md is the specification),
// shared by the writer (db_make.cpp), the reader (packed_db.cpp), tests and the fuzz harness.
//
// All integers are little-endian and fixed-width. The index arrays of .wsx/.wsm/.wso are mapped and
// used in place, so this implementation requires a little-endian host.
#pragma once

#include <zlib.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace warpsearch::db_format {

static_assert(std::endian::native == std::endian::little,
              "the packed database is mapped in place and needs a little-endian host");

// "\x89WSDB\r\n\x1a": the high byte and the CR/LF/EOF trio catch 7-bit and text-mode mangling.
inline constexpr std::array<unsigned char, 8> kMagic = {0x89, 'W', 'S', 'D', 'B', '\r', '\n', 0x1a};
inline constexpr std::uint32_t kVersion = 1;

inline constexpr std::string_view kHeaderExtension = ".wsdb";
// The data files, in the order of the header's file table.
enum DataFile : std::size_t { kResidueFile = 0, kHeaderFile, kIndexFile, kMaskFile, kOrderFile, kDataFiles };
inline constexpr std::array<std::string_view, kDataFiles> kExtensions = {".wsq", ".wsh", ".wsx", ".wsm",
                                                                         ".wso"};

// Byte offsets of the fixed part of PREFIX.wsdb.
inline constexpr std::size_t kOffMagic = 0;            // 8 bytes
inline constexpr std::size_t kOffVersion = 8;          // u32
inline constexpr std::size_t kOffHeaderBytes = 12;     // u32: size of the whole .wsdb file
inline constexpr std::size_t kOffAlphabet = 16;        // u8: AlphabetKind
inline constexpr std::size_t kOffReserved = 17;        // 3 bytes, zero
inline constexpr std::size_t kOffPartitionCount = 20;  // u32
inline constexpr std::size_t kOffSequences = 24;       // u64
inline constexpr std::size_t kOffResidues = 32;        // u64
inline constexpr std::size_t kOffMinLength = 40;       // u64
inline constexpr std::size_t kOffMaxLength = 48;       // u64
inline constexpr std::size_t kOffMaskRuns = 56;        // u64
inline constexpr std::size_t kOffMaskedResidues = 64;  // u64
inline constexpr std::size_t kOffUnknownLetters = 72;  // u64
inline constexpr std::size_t kOffFileTable = 80;       // kDataFiles entries of kFileEntryBytes
inline constexpr std::size_t kFileEntryBytes = 16;     // u64 size, u32 crc32, u32 reserved (zero)
inline constexpr std::size_t kOffTitleBytes = kOffFileTable + kDataFiles * kFileEntryBytes;  // u32 (160)
inline constexpr std::size_t kOffSourceBytes = kOffTitleBytes + 4;                           // u32
inline constexpr std::size_t kFixedBytes = kOffSourceBytes + 4;                              // 168
// Then: partition_count entries of kPartitionBytes (7 x u64, DbPartition's fields in declaration
// order), the title, the source path, and the CRC32 of all preceding bytes (u32).
inline constexpr std::size_t kPartitionBytes = 56;
inline constexpr std::size_t kCrcBytes = 4;
inline constexpr std::size_t kMaxTextBytes = 65535;        // title and source each
inline constexpr std::size_t kMaxHeaderBytes = 16u << 20;  // readers refuse larger .wsdb files
inline constexpr std::size_t kMaxPartitions = 65535;

inline constexpr std::size_t kMaskRunBytes = 16;  // u64 begin, u64 end

// Size of PREFIX.wsx for n sequences: three u64 offset arrays of n+1 entries, then n u32 name lengths.
inline constexpr std::uint64_t index_file_bytes(std::uint64_t n) { return 24 * (n + 1) + 4 * n; }

inline std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void put_u32(unsigned char* p, std::uint32_t v) { std::memcpy(p, &v, sizeof v); }
inline void put_u64(unsigned char* p, std::uint64_t v) { std::memcpy(p, &v, sizeof v); }

// CRC-32 (zlib's polynomial), continuing from crc (0 to start).
inline std::uint32_t crc32(const void* data, std::size_t bytes, std::uint32_t crc = 0) {
  return static_cast<std::uint32_t>(::crc32_z(crc, static_cast<const Bytef*>(data), bytes));
}

}  // namespace warpsearch::db_format
