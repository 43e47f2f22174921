// packed_db.cpp: PackedDb: opening, validating and verifying a packed database (docs/FORMATS.md).
//
// open() reads the .wsdb header into memory, maps the five data files read-only and checks, in
// order: magic, version, header size and CRC32, the header's internal consistency, every file's size
// against the header, then every index (offsets monotone and in bounds, mask runs sorted and inside
// their sequence, the sorted order a permutation sorted by (length, id), partitions covering it).
// That is O(sequences + mask runs) and touches no residue or header text, so opening is cheap and
// all accessors are memory-safe afterwards. verify() reads everything: CRC32s and residue codes.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/db_format.hpp"
#include "core/mapped_file.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch {
namespace layout = db_format;

static_assert(sizeof(MaskRun) == layout::kMaskRunBytes && std::is_trivially_copyable_v<MaskRun> &&
                  offsetof(MaskRun, end) == 8,
              "mask runs are mapped in place from .wsm");

namespace {

std::vector<unsigned char> read_header_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_system_error("cannot open database", path);
  std::vector<unsigned char> bytes;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    throw_system_error("cannot stat database", path);
  }
  if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > layout::kMaxHeaderBytes) {
    ::close(fd);
    throw Error(ErrorKind::kFormat, "not a warpsearch database header (not a regular file, or too large)",
                path);
  }
  bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      if (n == 0) throw Error(ErrorKind::kFormat, "file shrank while being read", path);
      errno = err;
      throw_system_error("cannot read database", path);
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return bytes;
}

}  // namespace

struct PackedDb::Mappings {
  std::array<std::string, layout::kDataFiles> paths;
  std::array<MappedFile, layout::kDataFiles> files;
  std::array<std::uint32_t, layout::kDataFiles> crcs{};
};

PackedDb::PackedDb() : maps_(std::make_unique<Mappings>()) {}
PackedDb::PackedDb(PackedDb&&) noexcept = default;
PackedDb& PackedDb::operator=(PackedDb&&) noexcept = default;
PackedDb::~PackedDb() = default;

PackedDb PackedDb::open(const std::string& path, PackedDbOptions options) {
  PackedDb db;
  db.prefix_ = db_prefix(path);
  const std::string header_path = db.prefix_ + std::string(layout::kHeaderExtension);
  const auto bad_header = [&](const std::string& message) {
    return Error(ErrorKind::kFormat, message, header_path);
  };

  // The header.
  const std::vector<unsigned char> header = read_header_file(header_path);
  const unsigned char* h = header.data();
  if (header.size() < layout::kMagic.size() || !std::equal(layout::kMagic.begin(), layout::kMagic.end(), h)) {
    throw bad_header("not a warpsearch database (bad magic number)");
  }
  if (header.size() < layout::kFixedBytes + layout::kCrcBytes) throw bad_header("truncated database header");
  const std::uint32_t version = layout::get_u32(h + layout::kOffVersion);
  if (version != layout::kVersion) {
    throw bad_header(fmt::format("unsupported database format version {} (this build reads version {})",
                                 version, layout::kVersion));
  }
  if (layout::get_u32(h + layout::kOffHeaderBytes) != header.size()) {
    throw bad_header(fmt::format("header is {} bytes but says {} (truncated?)", header.size(),
                                 layout::get_u32(h + layout::kOffHeaderBytes)));
  }
  const std::size_t crc_at = header.size() - layout::kCrcBytes;
  const std::uint32_t stored_crc = layout::get_u32(h + crc_at);
  const std::uint32_t header_crc = layout::crc32(h, crc_at);
  if (stored_crc != header_crc) {
    throw bad_header(
        fmt::format("header checksum mismatch (stored {:08x}, computed {:08x})", stored_crc, header_crc));
  }
  if (h[layout::kOffReserved] != 0 || h[layout::kOffReserved + 1] != 0 || h[layout::kOffReserved + 2] != 0) {
    throw bad_header("reserved header bytes are not zero");
  }
  if (h[layout::kOffAlphabet] > static_cast<unsigned char>(AlphabetKind::kRna)) {
    throw bad_header(fmt::format("unknown alphabet code {}", h[layout::kOffAlphabet]));
  }
  db.alphabet_ = Alphabet(static_cast<AlphabetKind>(h[layout::kOffAlphabet]));
  const std::uint64_t partition_count = layout::get_u32(h + layout::kOffPartitionCount);
  const std::uint64_t title_bytes = layout::get_u32(h + layout::kOffTitleBytes);
  const std::uint64_t source_bytes = layout::get_u32(h + layout::kOffSourceBytes);
  if (partition_count > layout::kMaxPartitions || title_bytes > layout::kMaxTextBytes ||
      source_bytes > layout::kMaxTextBytes ||
      layout::kFixedBytes + partition_count * layout::kPartitionBytes + title_bytes + source_bytes +
              layout::kCrcBytes !=
          header.size()) {
    throw bad_header("header layout is inconsistent (partition count, title or source length)");
  }
  const std::uint64_t n = layout::get_u64(h + layout::kOffSequences);
  if (n == 0) throw bad_header("database has no sequences");
  if (n > std::numeric_limits<std::uint32_t>::max()) throw bad_header("more than 2^32-1 sequences");
  if (partition_count == 0) throw bad_header("database has no partitions");
  db.count_ = n;
  db.total_residues_ = layout::get_u64(h + layout::kOffResidues);
  db.min_length_ = layout::get_u64(h + layout::kOffMinLength);
  db.max_length_ = layout::get_u64(h + layout::kOffMaxLength);
  db.mask_run_count_ = layout::get_u64(h + layout::kOffMaskRuns);
  db.masked_residues_ = layout::get_u64(h + layout::kOffMaskedResidues);
  db.unknown_letters_ = layout::get_u64(h + layout::kOffUnknownLetters);
  if (db.mask_run_count_ > std::numeric_limits<std::uint64_t>::max() / layout::kMaskRunBytes) {
    throw bad_header("impossible mask run count");
  }
  const unsigned char* part = h + layout::kFixedBytes;
  for (std::uint64_t k = 0; k < partition_count; ++k, part += layout::kPartitionBytes) {
    DbPartition p;
    std::uint64_t* fields[] = {&p.length_lo, &p.length_hi, &p.min_length, &p.max_length,
                               &p.begin,     &p.end,       &p.residues};
    for (std::size_t f = 0; f < std::size(fields); ++f) *fields[f] = layout::get_u64(part + 8 * f);
    db.partitions_.push_back(p);
  }
  db.title_.assign(reinterpret_cast<const char*>(part), title_bytes);
  db.source_.assign(reinterpret_cast<const char*>(part + title_bytes), source_bytes);

  // The data files, each exactly as large as the header says and the counts imply.
  const std::array<std::uint64_t, layout::kDataFiles> implied = {
      db.total_residues_, 0, layout::index_file_bytes(n), db.mask_run_count_ * layout::kMaskRunBytes, 4 * n};
  Mappings& maps = *db.maps_;
  db.file_bytes_ = header.size();
  for (std::size_t f = 0; f < layout::kDataFiles; ++f) {
    const unsigned char* entry = h + layout::kOffFileTable + f * layout::kFileEntryBytes;
    const std::uint64_t bytes = layout::get_u64(entry);
    maps.crcs[f] = layout::get_u32(entry + 8);
    maps.paths[f] = db.prefix_ + std::string(layout::kExtensions[f]);
    if (layout::get_u32(entry + 12) != 0) throw bad_header("reserved file table bytes are not zero");
    if (f != layout::kHeaderFile && bytes != implied[f]) {
      throw bad_header(fmt::format("file table says {} has {} bytes, but the counts imply {}", maps.paths[f],
                                   bytes, implied[f]));
    }
    maps.files[f].open(maps.paths[f], "database file");
    if (maps.files[f].size() != bytes) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("file has {} bytes but the database header says {} (truncated, or from another "
                              "database?)",
                              maps.files[f].size(), bytes),
                  maps.paths[f]);
    }
    db.file_bytes_ += bytes;
  }
  db.residues_ = maps.files[layout::kResidueFile].data();
  db.headers_ = reinterpret_cast<const char*>(maps.files[layout::kHeaderFile].data());
  const auto* index = reinterpret_cast<const std::uint64_t*>(maps.files[layout::kIndexFile].data());
  db.residue_offsets_ = index;
  db.header_offsets_ = index + (n + 1);
  db.mask_offsets_ = index + 2 * (n + 1);
  db.name_lengths_ = reinterpret_cast<const std::uint32_t*>(index + 3 * (n + 1));
  db.mask_runs_ = reinterpret_cast<const MaskRun*>(maps.files[layout::kMaskFile].data());
  db.order_ = reinterpret_cast<const std::uint32_t*>(maps.files[layout::kOrderFile].data());

  // The per-sequence index.
  const std::string& index_path = maps.paths[layout::kIndexFile];
  const auto bad_index = [&](std::uint64_t i, const std::string& what) {
    return Error(ErrorKind::kFormat, fmt::format("sequence {}: {}", i, what), index_path);
  };
  if (db.residue_offsets_[0] != 0 || db.header_offsets_[0] != 0 || db.mask_offsets_[0] != 0) {
    throw Error(ErrorKind::kFormat, "offset arrays do not start at 0", index_path);
  }
  std::uint64_t min_length = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_length = 0;
  std::uint64_t masked = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (db.residue_offsets_[i + 1] < db.residue_offsets_[i] ||
        db.residue_offsets_[i + 1] > db.total_residues_) {
      throw bad_index(i, "residue offset out of order or beyond the residue file");
    }
    if (db.header_offsets_[i + 1] < db.header_offsets_[i] ||
        db.header_offsets_[i + 1] > maps.files[layout::kHeaderFile].size()) {
      throw bad_index(i, "header offset out of order or beyond the header file");
    }
    if (db.name_lengths_[i] > db.header_offsets_[i + 1] - db.header_offsets_[i]) {
      throw bad_index(i, "name longer than its header text");
    }
    if (db.mask_offsets_[i + 1] < db.mask_offsets_[i] || db.mask_offsets_[i + 1] > db.mask_run_count_) {
      throw bad_index(i, "mask offset out of order or beyond the mask file");
    }
    const std::uint64_t len = db.length(i);
    min_length = std::min(min_length, len);
    max_length = std::max(max_length, len);
    const std::span<const MaskRun> runs = db.soft_mask(i);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const MaskRun& run = runs[r];
      if (run.begin >= run.end || run.end > len || (r > 0 && run.begin <= runs[r - 1].end)) {
        throw Error(
            ErrorKind::kFormat,
            fmt::format("sequence {}: mask run [{}, {}) empty, unsorted, adjacent or beyond length {}", i,
                        run.begin, run.end, len),
            maps.paths[layout::kMaskFile]);
      }
      masked += run.end - run.begin;
    }
  }
  if (db.residue_offsets_[n] != db.total_residues_ ||
      db.header_offsets_[n] != maps.files[layout::kHeaderFile].size() ||
      db.mask_offsets_[n] != db.mask_run_count_) {
    throw Error(ErrorKind::kFormat, "offset arrays do not end at the sizes of their files", index_path);
  }
  if (min_length != db.min_length_ || max_length != db.max_length_) {
    throw Error(ErrorKind::kFormat,
                fmt::format("lengths range {}..{} but the header says {}..{}", min_length, max_length,
                            db.min_length_, db.max_length_),
                index_path);
  }
  if (masked != db.masked_residues_) {
    throw Error(
        ErrorKind::kFormat,
        fmt::format("mask runs cover {} residues but the header says {}", masked, db.masked_residues_),
        maps.paths[layout::kMaskFile]);
  }

  // The sorted order: a permutation of the ids, sorted by (length, id).
  const std::string& order_path = maps.paths[layout::kOrderFile];
  std::vector<bool> seen(n);
  for (std::uint64_t pos = 0; pos < n; ++pos) {
    const std::uint32_t id = db.order_[pos];
    if (id >= n || seen[id]) {
      throw Error(ErrorKind::kFormat, fmt::format("position {}: id {} out of range or repeated", pos, id),
                  order_path);
    }
    seen[id] = true;
    if (pos > 0) {
      const std::uint32_t prev = db.order_[pos - 1];
      if (std::pair(db.length(prev), prev) >= std::pair(db.length(id), id)) {
        throw Error(ErrorKind::kFormat, fmt::format("position {}: not sorted by (length, id)", pos),
                    order_path);
      }
    }
  }

  // The partitions: consecutive, non-empty ranges of the sorted order in increasing length classes.
  std::uint64_t pos = 0;
  for (std::size_t k = 0; k < db.partitions_.size(); ++k) {
    const DbPartition& p = db.partitions_[k];
    const auto bad_partition = [&](const char* what) {
      return bad_header(fmt::format("partition {}: {}", k, what));
    };
    if (p.begin != pos || p.end <= p.begin || p.end > n)
      throw bad_partition("range does not continue the previous one");
    if (k > 0 && p.length_lo <= db.partitions_[k - 1].length_hi)
      throw bad_partition("length classes overlap");
    std::uint64_t residues = 0;
    for (; pos < p.end; ++pos) residues += db.length(db.order_[pos]);
    if (p.min_length != db.length(db.order_[p.begin]) || p.max_length != db.length(db.order_[p.end - 1]) ||
        p.min_length < p.length_lo || p.max_length > p.length_hi || residues != p.residues) {
      throw bad_partition("lengths or residue count disagree with the sequences in it");
    }
  }
  if (pos != n) throw bad_header("partitions do not cover every sequence");

  if (options.verify) db.verify();
  return db;
}

void PackedDb::verify() const {
  for (std::size_t f = 0; f < layout::kDataFiles; ++f) {
    const MappedFile& file = maps_->files[f];
    const std::uint32_t crc = layout::crc32(file.data(), file.size());
    if (crc != maps_->crcs[f]) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("checksum mismatch (stored {:08x}, computed {:08x}): the file is corrupt",
                              maps_->crcs[f], crc),
                  maps_->paths[f]);
    }
  }
  const auto limit = static_cast<std::uint8_t>(alphabet_.size());
  const std::uint8_t* end = residues_ + total_residues_;
  const std::uint8_t* bad = std::find_if(residues_, end, [limit](std::uint8_t c) { return c >= limit; });
  if (bad != end) {
    const auto offset = static_cast<std::uint64_t>(bad - residues_);
    const std::uint64_t id =
        static_cast<std::uint64_t>(std::upper_bound(residue_offsets_, residue_offsets_ + count_ + 1, offset) -
                                   residue_offsets_) -
        1;
    throw Error(ErrorKind::kFormat,
                fmt::format("sequence {} ('{}'): residue code {} is not in the {} alphabet", id, name(id),
                            *bad, to_string(alphabet_.kind())),
                maps_->paths[layout::kResidueFile]);
  }
}

void PackedDb::to_sequence(std::uint64_t i, Sequence& seq) const {
  seq.clear();
  seq.name.assign(name(i));
  seq.description.assign(description(i));
  const std::span<const std::uint8_t> codes = residues(i);
  const auto limit = static_cast<std::uint8_t>(alphabet_.size());
  if (std::any_of(codes.begin(), codes.end(), [limit](std::uint8_t c) { return c >= limit; })) {
    throw Error(ErrorKind::kFormat,
                fmt::format("sequence {} ('{}'): residue code outside the {} alphabet", i, name(i),
                            to_string(alphabet_.kind())),
                maps_->paths[layout::kResidueFile]);
  }
  seq.residues.assign(codes.begin(), codes.end());
  const std::span<const MaskRun> mask = soft_mask(i);
  seq.soft_mask.assign(mask.begin(), mask.end());
}

}  // namespace warpsearch
