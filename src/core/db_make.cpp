// db_make.cpp: make_db(): FASTA/FASTQ -> packed database (layout in db_format.hpp, docs/FORMATS.md).
//
// One streaming pass: each record's residues, header text and mask runs go straight to .wsq, .wsh
// and .wsm (CRC32 computed on the way); only the per-sequence index arrays and the set of names stay
// in memory. Then the sorted order, partitions, .wsx, .wso and finally the .wsdb header are written
// and the OutputGroup renames all six files into place together.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "core/db_format.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/output_file.hpp"
#include "warpsearch/progress.hpp"

namespace warpsearch {
namespace layout = db_format;

namespace {

// An output file that also accumulates its CRC32.
class ChecksummedOutput {
 public:
  explicit ChecksummedOutput(OutputFile& file) : file_(file) {}
  void write(const void* data, std::size_t bytes) {
    file_.write(data, bytes);
    crc_ = layout::crc32(data, bytes, crc_);
  }
  std::uint32_t crc() const { return crc_; }
  std::uint64_t bytes() const { return file_.bytes_written(); }

 private:
  OutputFile& file_;
  std::uint32_t crc_ = 0;
};

// Sequence names seen so far and the line of each one's header. The names are copied into large
// blocks, so the map's string_view keys stay valid and small names cost no allocation each.
class NameSet {
 public:
  // Returns the line of an earlier record with this name, or 0 after recording it.
  std::uint64_t insert(std::string_view name, std::uint64_t line) {
    if (const auto it = lines_.find(name); it != lines_.end()) return it->second;
    lines_.emplace(store(name), line);
    return 0;
  }

 private:
  static constexpr std::size_t kBlockBytes = 1 << 20;

  std::string_view store(std::string_view name) {
    if (name.size() > kBlockBytes - used_ || blocks_.empty()) {
      blocks_.push_back(std::make_unique<char[]>(std::max(kBlockBytes, name.size())));
      used_ = 0;
    }
    char* p = blocks_.back().get() + used_;
    std::copy(name.begin(), name.end(), p);
    used_ += name.size();
    return {p, name.size()};
  }

  std::unordered_map<std::string_view, std::uint64_t> lines_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::size_t used_ = 0;
};

void validate_options(const MakeDbOptions& options) {
  std::uint64_t previous = 0;
  for (const std::uint64_t bound : options.partition_bounds) {
    if (bound <= previous) {
      throw Error(ErrorKind::kUsage, "partition bounds must be positive and strictly increasing");
    }
    previous = bound;
  }
  if (options.partition_bounds.size() >= layout::kMaxPartitions) {
    throw Error(ErrorKind::kUsage, fmt::format("at most {} partition bounds", layout::kMaxPartitions - 1));
  }
  if (options.title.size() > layout::kMaxTextBytes) {
    throw Error(ErrorKind::kUsage, fmt::format("database title longer than {} bytes", layout::kMaxTextBytes));
  }
}

// Length classes over the ids sorted by (length, id); only non-empty classes are kept.
std::vector<DbPartition> make_partitions(const std::vector<std::uint32_t>& order,
                                         const std::vector<std::uint64_t>& residue_offsets,
                                         const std::vector<std::uint64_t>& bounds) {
  std::vector<DbPartition> partitions;
  std::size_t pos = 0;
  for (std::size_t k = 0; k <= bounds.size() && pos < order.size(); ++k) {
    DbPartition p;
    p.length_lo = k == 0 ? 0 : bounds[k - 1] + 1;
    p.length_hi = k < bounds.size() ? bounds[k] : std::numeric_limits<std::uint64_t>::max();
    p.begin = pos;
    while (pos < order.size()) {
      const std::uint64_t len = residue_offsets[order[pos] + 1] - residue_offsets[order[pos]];
      if (len > p.length_hi) break;
      if (pos == p.begin) p.min_length = len;
      p.max_length = len;
      p.residues += len;
      ++pos;
    }
    p.end = pos;
    if (p.size() > 0) partitions.push_back(p);
  }
  return partitions;
}

std::string default_title(const std::string& input_path) {
  if (input_path == "-") return "stdin";
  return std::filesystem::path(input_path).filename().string();
}

// Total input size for the progress line, when it is known in advance (a plain regular file).
std::uint64_t progress_total(const SequenceReader& reader) {
  struct stat st {};
  if (reader.gzipped() || reader.path() == "-" || ::stat(reader.path().c_str(), &st) != 0 ||
      !S_ISREG(st.st_mode)) {
    return 0;
  }
  return static_cast<std::uint64_t>(st.st_size);
}

template <class T>
void write_array(ChecksummedOutput& out, const std::vector<T>& values) {
  out.write(values.data(), values.size() * sizeof(T));
}

}  // namespace

std::vector<std::uint64_t> default_partition_bounds() {
  return {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
}

std::string db_prefix(const std::string& path) {
  const std::string_view ext = layout::kHeaderExtension;
  if (path.size() > ext.size() && std::string_view(path).substr(path.size() - ext.size()) == ext) {
    return path.substr(0, path.size() - ext.size());
  }
  return path;
}

std::vector<std::string> db_file_paths(const std::string& prefix) {
  std::vector<std::string> paths;
  for (const std::string_view ext : layout::kExtensions) paths.push_back(prefix + std::string(ext));
  paths.push_back(prefix + std::string(layout::kHeaderExtension));
  return paths;
}

MakeDbResult make_db(const std::string& input_path, const std::string& db_path,
                     const MakeDbOptions& options) {
  validate_options(options);
  const std::string prefix = db_prefix(db_path);
  if (prefix.empty()) throw Error(ErrorKind::kUsage, "empty database name");
  const std::vector<std::string> paths = db_file_paths(prefix);
  if (!options.overwrite) {
    for (auto path = paths.rbegin(); path != paths.rend(); ++path) {  // the header (.wsdb) first
      std::error_code ec;
      if (std::filesystem::exists(*path, ec)) {
        throw Error(ErrorKind::kUsage, "database file already exists (use --force to overwrite)", *path);
      }
    }
  }

  if (SequenceSource::is_packed_db(input_path)) {
    throw Error(ErrorKind::kInput, "this is a packed database already; makedb reads FASTA or FASTQ",
                input_path);
  }
  ReaderOptions reader_options;
  reader_options.alphabet = options.alphabet;
  reader_options.strict_letters = options.strict_letters;
  SequenceReader reader(input_path, reader_options);

  // Every output is created up front, so an unwritable destination fails before any reading.
  OutputGroup group;
  std::array<OutputFile*, layout::kDataFiles> files{};
  for (std::size_t f = 0; f < layout::kDataFiles; ++f) files[f] = &group.add(paths[f]);
  OutputFile& header_file = group.add(paths[layout::kDataFiles], 1 << 16);
  ChecksummedOutput residues_out(*files[layout::kResidueFile]);
  ChecksummedOutput headers_out(*files[layout::kHeaderFile]);
  ChecksummedOutput mask_out(*files[layout::kMaskFile]);

  std::vector<std::uint64_t> residue_offsets{0};
  std::vector<std::uint64_t> header_offsets{0};
  std::vector<std::uint64_t> mask_offsets{0};
  std::vector<std::uint32_t> name_lengths;
  NameSet names;
  std::uint64_t masked_residues = 0;
  std::vector<unsigned char> run_bytes;

  Progress progress("makedb", progress_total(reader), "bytes", options.progress);
  std::uint64_t progress_bytes = 0;
  Sequence seq;
  while (reader.next(seq)) {
    if (name_lengths.size() == std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ErrorKind::kInput, "more than 2^32-1 sequences", input_path, seq.line);
    }
    if (const std::uint64_t first = names.insert(seq.name, seq.line); first != 0) {
      throw Error(ErrorKind::kInput,
                  fmt::format("duplicate sequence name '{}' (first at line {})", seq.name, first), input_path,
                  seq.line);
    }
    if (seq.name.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ErrorKind::kInput, "sequence name longer than 4 GiB", input_path, seq.line);
    }
    residues_out.write(seq.residues.data(), seq.residues.size());
    headers_out.write(seq.name.data(), seq.name.size());
    if (!seq.description.empty()) {
      headers_out.write(" ", 1);
      headers_out.write(seq.description.data(), seq.description.size());
    }
    run_bytes.resize(seq.soft_mask.size() * layout::kMaskRunBytes);
    for (std::size_t r = 0; r < seq.soft_mask.size(); ++r) {
      layout::put_u64(&run_bytes[r * layout::kMaskRunBytes], seq.soft_mask[r].begin);
      layout::put_u64(&run_bytes[r * layout::kMaskRunBytes + 8], seq.soft_mask[r].end);
      masked_residues += seq.soft_mask[r].end - seq.soft_mask[r].begin;
    }
    mask_out.write(run_bytes.data(), run_bytes.size());

    residue_offsets.push_back(residues_out.bytes());
    header_offsets.push_back(headers_out.bytes());
    mask_offsets.push_back(mask_offsets.back() + seq.soft_mask.size());
    name_lengths.push_back(static_cast<std::uint32_t>(seq.name.size()));

    progress.advance(reader.bytes_read() - progress_bytes);
    progress_bytes = reader.bytes_read();
  }
  const std::uint64_t n = name_lengths.size();
  if (n == 0) throw Error(ErrorKind::kInput, "no sequences in input", input_path);

  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const auto length_of = [&](std::uint32_t id) { return residue_offsets[id + 1] - residue_offsets[id]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return length_of(a) < length_of(b); });
  const std::vector<DbPartition> partitions =
      make_partitions(order, residue_offsets, options.partition_bounds);

  ChecksummedOutput index_out(*files[layout::kIndexFile]);
  write_array(index_out, residue_offsets);
  write_array(index_out, header_offsets);
  write_array(index_out, mask_offsets);
  write_array(index_out, name_lengths);
  ChecksummedOutput order_out(*files[layout::kOrderFile]);
  write_array(order_out, order);

  MakeDbResult result;
  result.prefix = prefix;
  result.alphabet = reader.alphabet().kind();
  result.sequences = n;
  result.residues = residue_offsets.back();
  result.min_length = length_of(order.front());
  result.max_length = length_of(order.back());
  result.unknown_letters = reader.unknown_letters();
  result.masked_residues = masked_residues;
  result.partitions = partitions.size();

  const std::string title = options.title.empty() ? default_title(input_path) : options.title;
  const std::string source = input_path.substr(0, layout::kMaxTextBytes);
  std::vector<unsigned char> header(layout::kFixedBytes + partitions.size() * layout::kPartitionBytes +
                                    title.size() + source.size() + layout::kCrcBytes);
  unsigned char* const h = &header.at(0);  // never empty: the fixed part alone is kFixedBytes
  std::copy(layout::kMagic.begin(), layout::kMagic.end(), h + layout::kOffMagic);
  layout::put_u32(h + layout::kOffVersion, layout::kVersion);
  layout::put_u32(h + layout::kOffHeaderBytes, static_cast<std::uint32_t>(header.size()));
  h[layout::kOffAlphabet] = static_cast<unsigned char>(result.alphabet);
  layout::put_u32(h + layout::kOffPartitionCount, static_cast<std::uint32_t>(partitions.size()));
  layout::put_u64(h + layout::kOffSequences, n);
  layout::put_u64(h + layout::kOffResidues, result.residues);
  layout::put_u64(h + layout::kOffMinLength, result.min_length);
  layout::put_u64(h + layout::kOffMaxLength, result.max_length);
  layout::put_u64(h + layout::kOffMaskRuns, mask_offsets.back());
  layout::put_u64(h + layout::kOffMaskedResidues, masked_residues);
  layout::put_u64(h + layout::kOffUnknownLetters, result.unknown_letters);
  const std::array<const ChecksummedOutput*, layout::kDataFiles> outputs = {
      &residues_out, &headers_out, &index_out, &mask_out, &order_out};
  for (std::size_t f = 0; f < layout::kDataFiles; ++f) {
    unsigned char* entry = h + layout::kOffFileTable + f * layout::kFileEntryBytes;
    layout::put_u64(entry, outputs[f]->bytes());
    layout::put_u32(entry + 8, outputs[f]->crc());
  }
  layout::put_u32(h + layout::kOffTitleBytes, static_cast<std::uint32_t>(title.size()));
  layout::put_u32(h + layout::kOffSourceBytes, static_cast<std::uint32_t>(source.size()));
  unsigned char* p = h + layout::kFixedBytes;
  for (const DbPartition& part : partitions) {
    for (const std::uint64_t v : {part.length_lo, part.length_hi, part.min_length, part.max_length,
                                  part.begin, part.end, part.residues}) {
      layout::put_u64(p, v);
      p += 8;
    }
  }
  p = std::copy(title.begin(), title.end(), p);
  p = std::copy(source.begin(), source.end(), p);
  layout::put_u32(p, layout::crc32(h, header.size() - layout::kCrcBytes));
  header_file.write(header.data(), header.size());

  for (const ChecksummedOutput* out : outputs) result.bytes_written += out->bytes();
  result.bytes_written += header.size();
  group.commit();
  progress.finish();
  return result;
}

}  // namespace warpsearch
