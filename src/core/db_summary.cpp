// db_summary.cpp: summarize(): counts, length statistics and histogram of a database (packed or BLAST+) or
// sequence file.
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <bit>

#include "core/blast_db.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/progress.hpp"

namespace warpsearch {
namespace {

// Fills the length statistics from all lengths, sorted ascending.
void add_length_stats(DbSummary& summary, const std::vector<std::uint64_t>& sorted_lengths) {
  summary.sequences = sorted_lengths.size();
  summary.residues = 0;
  std::array<LengthBucket, 65> buckets{};  // [0,0], then [2^(k-1), 2^k - 1] for k = 1..64
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    buckets[k].lo = k == 0 ? 0 : std::uint64_t{1} << (k - 1);
    buckets[k].hi = k == 0 ? 0 : (k == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1);
  }
  for (const std::uint64_t len : sorted_lengths) {
    summary.residues += len;
    LengthBucket& b = buckets[static_cast<std::size_t>(std::bit_width(len))];
    ++b.sequences;
    b.residues += len;
  }
  summary.histogram.clear();
  if (sorted_lengths.empty()) return;
  summary.min_length = sorted_lengths.front();
  summary.max_length = sorted_lengths.back();
  summary.mean_length = static_cast<double>(summary.residues) / static_cast<double>(summary.sequences);
  std::uint64_t longest = 0;
  for (auto it = sorted_lengths.rbegin(); it != sorted_lengths.rend(); ++it) {
    longest += *it;
    if (2 * longest >= summary.residues) {
      summary.n50 = *it;
      break;
    }
  }
  const std::size_t first = static_cast<std::size_t>(std::bit_width(summary.min_length));
  const std::size_t last = static_cast<std::size_t>(std::bit_width(summary.max_length));
  summary.histogram.assign(buckets.begin() + static_cast<std::ptrdiff_t>(first),
                           buckets.begin() + static_cast<std::ptrdiff_t>(last) + 1);
}

}  // namespace

DbSummary summarize(const PackedDb& db) {
  DbSummary summary;
  summary.path = db.prefix();
  summary.packed = true;
  summary.format_version = db.format_version();
  summary.title = db.title();
  summary.source = db.source();
  summary.files = 6;
  summary.file_bytes = db.file_bytes();
  summary.alphabet = db.alphabet().kind();
  summary.unknown_letters = db.unknown_letters();
  summary.masked_residues = db.masked_residues();
  summary.mask_runs = db.mask_runs();
  summary.partitions.assign(db.partitions().begin(), db.partitions().end());
  std::vector<std::uint64_t> lengths;
  lengths.reserve(db.size());
  for (const std::uint32_t id : db.sorted_order()) lengths.push_back(db.length(id));
  add_length_stats(summary, lengths);
  return summary;
}

DbSummary summarize(const BlastDb& db) {
  DbSummary summary;
  summary.path = db.name();
  summary.blast = true;
  summary.format_version = db.format_version();
  summary.title = db.title();
  summary.date = db.date();
  summary.volumes = db.volumes().size();
  summary.files = 3 * db.volumes().size() + db.alias_files().size();
  summary.file_bytes = db.file_bytes();
  summary.alphabet = AlphabetKind::kProtein;
  std::vector<std::uint64_t> lengths(db.size());
  for (std::uint64_t oid = 0; oid < db.size(); ++oid) lengths[oid] = db.length(oid);
  std::sort(lengths.begin(), lengths.end());
  add_length_stats(summary, lengths);
  return summary;
}

DbSummary summarize(SequenceSource& source, bool progress) {
  if (source.is_packed()) return summarize(*source.packed_db());
  if (source.blast_db() != nullptr) return summarize(*source.blast_db());
  const SequenceReader& reader = *source.reader();
  std::uint64_t total = 0;
  struct stat st {};
  if (!reader.gzipped() && ::stat(reader.path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    total = static_cast<std::uint64_t>(st.st_size);
  }
  Progress bar("dbinfo", total, "bytes", progress);
  DbSummary summary;
  summary.path = source.path();
  std::vector<std::uint64_t> lengths;
  Sequence seq;
  std::uint64_t reported = 0;
  while (source.next(seq)) {
    lengths.push_back(seq.length());
    summary.mask_runs += seq.soft_mask.size();
    for (const MaskRun& run : seq.soft_mask) summary.masked_residues += run.end - run.begin;
    bar.advance(reader.bytes_read() - reported);
    reported = reader.bytes_read();
  }
  bar.finish();
  summary.alphabet = source.alphabet().kind();
  summary.unknown_letters = source.unknown_letters();
  summary.file_bytes = reader.bytes_read();
  std::sort(lengths.begin(), lengths.end());
  add_length_stats(summary, lengths);
  return summary;
}

}  // namespace warpsearch
