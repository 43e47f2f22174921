// blast_db_harness.hpp: turns one fuzz input into a BLAST+ protein database file set and reads all of it.
// Shared by fuzz_blast_db.cpp and the corpus replay in tests/core/test_blast_db.cpp.
//
// Input: byte 0 holds flags (bit 0: also write alias files from the fourth section and open the database
// through them; bit 1: call verify(); bit 2: open with BlastDbOptions::gap_code set), then one section per
// file, in the order vol.pin, vol.psq, vol.phr, aliases: a little-endian u32 length (clamped to the bytes
// left) and that many bytes. Missing sections are empty files. The format version (4 or 5) is whatever the
// .pin says. Without bit 0 the database opened is "vol"; with it, the alias section is split at NUL bytes
// into up to kAliasFiles texts written as db.pal, a.pal, b.pal (so an alias tree can be built: db.pal
// "DBLIST a b", a.pal "DBLIST vol", ...) and the database opened is "db". Files of an earlier input that
// this one does not write are removed.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/blast_db.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::fuzz::blast {

inline constexpr std::size_t kFiles = 4;  // vol.pin vol.psq vol.phr, the alias texts
inline constexpr std::array<const char*, 3> kVolumeExtensions = {".pin", ".psq", ".phr"};
inline constexpr std::size_t kAliasFile = 3;
inline constexpr std::size_t kAliasFiles = 3;
inline constexpr std::array<const char*, kAliasFiles> kAliasNames = {"db.pal", "a.pal", "b.pal"};
using DbFiles = std::array<std::string, kFiles>;

inline constexpr std::uint8_t kWriteAlias = 1;
inline constexpr std::uint8_t kVerify = 2;
inline constexpr std::uint8_t kGapCode = 4;

inline std::uint32_t get_u32le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Reads makeblastdb output BASE.pin/.psq/.phr into the volume sections (for seeds); no alias text.
inline DbFiles read_volume_files(const std::string& base) {
  DbFiles files;
  for (std::size_t f = 0; f < kVolumeExtensions.size(); ++f) {
    std::ifstream in(base + kVolumeExtensions[f], std::ios::binary);
    files[f].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

inline void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Writes dir/vol.pin/.psq/.phr and, when with_alias, the alias files (removing those not written); returns
// the database name to open.
inline std::string write_db_files(const std::string& dir, const DbFiles& files, bool with_alias) {
  for (std::size_t f = 0; f < kVolumeExtensions.size(); ++f)
    write_file(dir + "/vol" + kVolumeExtensions[f], files[f]);
  std::string_view rest = files[kAliasFile];
  for (std::size_t a = 0; a < kAliasFiles; ++a) {
    const std::string path = dir + "/" + kAliasNames[a];
    if (!with_alias || (a > 0 && rest.empty())) {
      std::remove(path.c_str());
      continue;
    }
    const std::size_t nul = a + 1 < kAliasFiles ? rest.find('\0') : std::string_view::npos;
    write_file(path, rest.substr(0, nul));
    rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  }
  return dir + (with_alias ? "/db" : "/vol");
}

inline DbFiles decode_input(const std::uint8_t* data, std::size_t size) {
  DbFiles files;
  std::size_t pos = size > 0 ? 1 : 0;
  for (std::size_t f = 0; f < kFiles && pos + 4 <= size; ++f) {
    const std::size_t length = std::min<std::size_t>(get_u32le(data + pos), size - pos - 4);
    pos += 4;
    files[f].assign(reinterpret_cast<const char*>(data + pos), length);
    pos += length;
  }
  return files;
}

inline std::string encode_input(const DbFiles& files, std::uint8_t flags) {
  std::string out(1, static_cast<char>(flags));
  for (const std::string& file : files) {
    const auto n = static_cast<std::uint32_t>(file.size());
    for (int b = 0; b < 4; ++b) out += static_cast<char>((n >> (8 * b)) & 0xFF);
    out += file;
  }
  return out;
}

// Opens the database `name` and touches everything an application can reach: every OID's residues and
// deflines with all their texts, the index statistics, summarize(); then, separately, SequenceSource to
// the end (it has no gap_code, so it may reject what BlastDb with gap_code accepted). Returns true if
// BlastDb opened and read everything; warpsearch::Error (a rejected file set) gives false; anything else is
// a bug and escapes.
inline bool exercise_db(const std::string& name, bool verify, bool gap_code) {
  std::uint64_t checksum = 0;
  bool ok = false;
  Sequence seq;
  try {
    BlastDbOptions options;
    if (gap_code) options.gap_code = kProteinStop;
    const BlastDb db = BlastDb::open(name, options);
    if (verify) db.verify();
    checksum += db.title().size() + db.date().size() + db.format_version() + db.total_residues() +
                db.max_length() + db.min_length() + db.stats_total_length() + db.stats_num_seqs() +
                static_cast<std::uint64_t>(db.cutoff_min_length()) + db.file_bytes();
    std::vector<std::uint8_t> residues;
    for (std::uint64_t oid = 0; oid < db.size(); ++oid) {
      checksum += db.length(oid) + db.ncbistdaa(oid).size();
      db.residues(oid, residues);
      checksum += residues.size();
      for (const BlastDefline& defline : db.deflines(oid)) {
        checksum += defline.seqid().size() + defline.accession().size() + defline.tabular_title().size() +
                    defline.report_line().size() + defline.has_ordinal_id();
        for (const BlastSeqId& id : defline.ids) checksum += id.fasta().size() + id.content(true).size();
      }
      db.to_sequence(oid, seq);
      checksum += seq.length();
    }
    checksum += summarize(db).sequences;
    ok = true;
  } catch (const Error&) {
  }
  try {
    SequenceSource source = SequenceSource::open(name);
    while (source.next(seq)) checksum += seq.length() + seq.name.size();
  } catch (const Error&) {
  }
  // Keeps the reads from being optimised away.
  [[maybe_unused]] const volatile std::uint64_t sink = checksum;
  return ok;
}

// Writes the input's files into the directory `dir` (private to the caller) and reads the database.
inline bool run_input(const std::string& dir, const std::uint8_t* data, std::size_t size) {
  const std::uint8_t flags = size > 0 ? data[0] : 0;
  const std::string name = write_db_files(dir, decode_input(data, size), (flags & kWriteAlias) != 0);
  return exercise_db(name, (flags & kVerify) != 0, (flags & kGapCode) != 0);
}

}  // namespace warpsearch::fuzz::blast
