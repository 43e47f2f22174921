// db.hpp: the packed sequence database (`warpsearch makedb`) and the sequence source of every search.
//
// A packed database is six files sharing a prefix (format: docs/FORMATS.md):
//   PREFIX.wsdb  header: counts, alphabet, partition table, size and CRC32 of every other file
//   PREFIX.wsq   residue codes (alphabet.hpp), one byte each, sequences concatenated in input order
//   PREFIX.wsh   header text "name description" of every sequence, concatenated
//   PREFIX.wsx   per-sequence offsets into .wsq, .wsh and .wsm, and name lengths
//   PREFIX.wsm   soft-mask runs (lowercase input letters)
//   PREFIX.wso   sequence ids sorted by (length, id); partitions are ranges of this order
// Sequence ids are the 0-based input order: the canonical id for deterministic output.
//
// Contents:
//   make_db()        FASTA/FASTQ (plain or gzip) -> packed database, streaming, all files or none
//   PackedDb         a memory-mapped database: validated on open, zero-copy accessors, verify()
//   SequenceSource   "FASTA, packed database or BLAST+ protein database": one next() loop in id order
//   summarize()      statistics of a database or FASTA file (for `warpsearch dbinfo`)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch {

class BlastDb;  // a BLAST+ protein database (src/core/blast_db.hpp)

// Format version written by make_db() and the only one PackedDb reads.
inline constexpr std::uint32_t kDbFormatVersion = 1;

// A length class of the database: the sequences at positions [begin, end) of sorted_order(), whose
// lengths lie in [length_lo, length_hi] (class bounds; length_hi is UINT64_MAX for the last class).
// Only non-empty classes are stored; together they cover sorted_order() in order.
struct DbPartition {
  std::uint64_t length_lo = 0;  // class bounds, inclusive
  std::uint64_t length_hi = 0;
  std::uint64_t min_length = 0;  // shortest and longest sequence actually in the partition
  std::uint64_t max_length = 0;
  std::uint64_t begin = 0;  // range of positions in sorted_order()
  std::uint64_t end = 0;
  std::uint64_t residues = 0;  // total residues of its sequences
  std::uint64_t size() const { return end - begin; }
  friend bool operator==(const DbPartition&, const DbPartition&) = default;
};

// Upper length bounds (inclusive) of the default partitions: <=64, 65..128, ..., 8193..16384, >16384.
std::vector<std::uint64_t> default_partition_bounds();

struct MakeDbOptions {
  std::optional<AlphabetKind> alphabet;  // nullopt: guessed from the input (seqio.hpp)
  bool strict_letters = false;           // letters outside the alphabet are an error instead of X/N
  bool overwrite = false;                // replace an existing database instead of refusing
  std::string title;                     // stored in the header; empty: the input file's name
  // Strictly increasing, positive upper bounds of the length classes; a final class holds longer
  // sequences. Empty: one partition for everything.
  std::vector<std::uint64_t> partition_bounds = default_partition_bounds();
  bool progress = false;  // show a Progress line on a terminal's stderr
};

struct MakeDbResult {
  std::string prefix;  // the database prefix (".wsdb" stripped)
  AlphabetKind alphabet = AlphabetKind::kProtein;
  std::uint64_t sequences = 0;
  std::uint64_t residues = 0;
  std::uint64_t min_length = 0;
  std::uint64_t max_length = 0;
  std::uint64_t unknown_letters = 0;  // input letters mapped to X/N
  std::uint64_t masked_residues = 0;  // soft-masked (lowercase) residues
  std::size_t partitions = 0;
  std::uint64_t bytes_written = 0;  // all six files
};

// Reads input_path ("-": stdin) with SequenceReader and writes the database db_path ("PREFIX" or
// "PREFIX.wsdb"). The files appear together on success and not at all on failure. Errors: an
// existing database without overwrite or bad partition bounds (kUsage); unreadable input or
// unwritable output (kIo); malformed input (kFormat, with file:line); no records, zero-length
// records, duplicate names, more than 2^32-1 sequences, an input that is a packed database (kInput).
MakeDbResult make_db(const std::string& input_path, const std::string& db_path,
                     const MakeDbOptions& options = {});

// "PREFIX.wsdb" -> "PREFIX"; any other path is returned unchanged.
std::string db_prefix(const std::string& path);
// The six file names of a database, header (.wsdb) last.
std::vector<std::string> db_file_paths(const std::string& prefix);

struct PackedDbOptions {
  bool verify = false;  // also run verify() (reads every byte of every file)
};

// A read-only, memory-mapped packed database. open() always checks the header (magic, version, CRC),
// the size of every file and the consistency of every index (offsets, masks, sorted order,
// partitions), so every accessor below is safe on any file set that opened; verify() additionally
// checks each file's CRC32 and that every residue code is in the alphabet. Any problem is
// Error(kFormat, ..., file). Accessors take a sequence id i < size().
class PackedDb {
 public:
  // path: "PREFIX" or "PREFIX.wsdb". Missing or unreadable files: Error(kIo).
  static PackedDb open(const std::string& path, PackedDbOptions options = {});

  PackedDb(PackedDb&&) noexcept;
  PackedDb& operator=(PackedDb&&) noexcept;
  PackedDb(const PackedDb&) = delete;
  PackedDb& operator=(const PackedDb&) = delete;
  ~PackedDb();

  // Re-reads every file: CRC32 against the header, residue codes against the alphabet.
  void verify() const;

  const std::string& prefix() const { return prefix_; }
  std::uint32_t format_version() const { return kDbFormatVersion; }
  const Alphabet& alphabet() const { return alphabet_; }
  const std::string& title() const { return title_; }
  const std::string& source() const { return source_; }  // the input path given to make_db
  std::uint64_t size() const { return count_; }
  std::uint64_t total_residues() const { return total_residues_; }
  std::uint64_t min_length() const { return min_length_; }
  std::uint64_t max_length() const { return max_length_; }
  std::uint64_t unknown_letters() const { return unknown_letters_; }  // mapped to X/N by make_db
  std::uint64_t masked_residues() const { return masked_residues_; }
  std::uint64_t mask_runs() const { return mask_run_count_; }
  std::uint64_t file_bytes() const { return file_bytes_; }  // all six files

  std::span<const std::uint8_t> residues(std::uint64_t i) const {
    return {residues_ + residue_offsets_[i], residue_offsets_[i + 1] - residue_offsets_[i]};
  }
  std::uint64_t length(std::uint64_t i) const { return residue_offsets_[i + 1] - residue_offsets_[i]; }
  std::string_view name(std::uint64_t i) const { return {headers_ + header_offsets_[i], name_lengths_[i]}; }
  std::string_view description(std::uint64_t i) const {
    const std::uint64_t text = header_offsets_[i + 1] - header_offsets_[i];
    if (text <= name_lengths_[i]) return {};
    return {headers_ + header_offsets_[i] + name_lengths_[i] + 1, text - name_lengths_[i] - 1};
  }
  std::span<const MaskRun> soft_mask(std::uint64_t i) const {
    return {mask_runs_ + mask_offsets_[i], mask_offsets_[i + 1] - mask_offsets_[i]};
  }
  // The packed batch layout GPU stages upload: every residue back to back in id order, and
  // residue_offsets()[0..size()] with sequence i at [offsets[i], offsets[i+1]).
  std::span<const std::uint8_t> all_residues() const { return {residues_, total_residues_}; }
  std::span<const std::uint64_t> residue_offsets() const { return {residue_offsets_, count_ + 1}; }
  // All ids sorted by (length, id).
  std::span<const std::uint32_t> sorted_order() const { return {order_, count_}; }
  std::span<const DbPartition> partitions() const { return partitions_; }

  // Fills seq (name, description, residues, soft_mask; line = 0). Throws Error(kFormat) if a residue
  // code is outside the alphabet (possible only in a file set that was not verified).
  void to_sequence(std::uint64_t i, Sequence& seq) const;

 private:
  struct Mappings;
  PackedDb();

  std::unique_ptr<Mappings> maps_;
  std::string prefix_;
  Alphabet alphabet_{AlphabetKind::kProtein};
  std::string title_;
  std::string source_;
  std::vector<DbPartition> partitions_;
  std::uint64_t count_ = 0;
  std::uint64_t total_residues_ = 0;
  std::uint64_t min_length_ = 0;
  std::uint64_t max_length_ = 0;
  std::uint64_t unknown_letters_ = 0;
  std::uint64_t masked_residues_ = 0;
  std::uint64_t mask_run_count_ = 0;
  std::uint64_t file_bytes_ = 0;
  // Views into the mapped files (valid while maps_ lives; moving a PackedDb keeps them valid).
  const std::uint8_t* residues_ = nullptr;
  const char* headers_ = nullptr;
  const std::uint64_t* residue_offsets_ = nullptr;
  const std::uint64_t* header_offsets_ = nullptr;
  const std::uint64_t* mask_offsets_ = nullptr;
  const std::uint32_t* name_lengths_ = nullptr;
  const MaskRun* mask_runs_ = nullptr;
  const std::uint32_t* order_ = nullptr;
};

// The input of every search command: a packed database, a BLAST+ protein database (makeblastdb, format 4
// or 5, by name as blastp -db takes it) or a FASTA/FASTQ file (plain or gzip), read in id (input / OID)
// order either way.
class SequenceSource {
 public:
  // A packed database when `path` is a file starting with the database magic, or `path` is not an
  // existing file and `path.wsdb` exists; otherwise a BLAST+ database when is_blast_db(path); otherwise
  // a sequence file read by SequenceReader with `options`. For a database, options.alphabet (if set)
  // must agree with the database's (protein vs nucleotide; DNA and RNA share codes), else
  // Error(kInput); the other options apply to sequence files only. A nucleotide BLAST+ database is
  // Error(kInput). BLAST+ residues are converted to protein codes; deflines follow blastp's (see
  // BlastDb in src/core/blast_db.hpp: name = blastp's sseqid, description = the rest of the title).
  static SequenceSource open(const std::string& path, ReaderOptions options = {});
  // Whether open(path) would open a packed database.
  static bool is_packed_db(const std::string& path);
  // Whether open(path) would open a BLAST+ database: not a packed database, not an existing regular file
  // (except NAME.pal / NAME.pin themselves), and NAME.pal, .pin, .nal or .nin found as blastp looks for
  // it (working directory, then $BLASTDB; a space-separated list of such names also counts).
  static bool is_blast_db(const std::string& path);

  SequenceSource(SequenceSource&&) noexcept;
  SequenceSource& operator=(SequenceSource&&) noexcept;
  ~SequenceSource();

  // Reads the next sequence (id = records() - 1 afterwards). Returns false at the end.
  bool next(Sequence& seq);

  const std::string& path() const { return path_; }
  const Alphabet& alphabet() const;
  bool is_packed() const { return db_ != nullptr; }
  // The database (nullptr for a sequence file or a BLAST+ database).
  const PackedDb* packed_db() const { return db_.get(); }
  // The BLAST+ database (nullptr otherwise).
  const BlastDb* blast_db() const { return blast_.get(); }
  // The reader (nullptr for a database).
  const SequenceReader* reader() const { return reader_.get(); }
  std::uint64_t records() const;          // sequences returned so far
  std::uint64_t unknown_letters() const;  // sequence file: so far; packed: recorded by make_db; BLAST: 0

 private:
  SequenceSource() = default;

  std::string path_;
  std::unique_ptr<PackedDb> db_;
  std::unique_ptr<BlastDb> blast_;
  std::unique_ptr<SequenceReader> reader_;
  std::uint64_t next_id_ = 0;
};

// Sequences with lengths in [lo, hi]: power-of-two buckets [2^k, 2^(k+1)-1] (and [0, 0]).
struct LengthBucket {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  std::uint64_t sequences = 0;
  std::uint64_t residues = 0;
};

struct DbSummary {
  std::string path;
  bool packed = false;
  bool blast = false;                // a BLAST+ database
  std::uint32_t format_version = 0;  // packed; BLAST+: 4 or 5 (of the first volume)
  std::string title;                 // packed, BLAST+
  std::string source;                // packed only
  std::string date;                  // BLAST+ only: the index's date
  std::uint64_t volumes = 0;         // BLAST+ only
  std::uint64_t files = 0;           // packed: 6; BLAST+: volume and alias files
  std::uint64_t file_bytes = 0;      // databases: all files; sequence file: bytes read (uncompressed)
  AlphabetKind alphabet = AlphabetKind::kProtein;
  std::uint64_t sequences = 0;
  std::uint64_t residues = 0;
  std::uint64_t min_length = 0;
  std::uint64_t max_length = 0;
  double mean_length = 0;
  std::uint64_t n50 = 0;  // the largest L such that sequences of length >= L hold >= half the residues
  std::uint64_t unknown_letters = 0;
  std::uint64_t masked_residues = 0;
  std::uint64_t mask_runs = 0;
  std::vector<DbPartition> partitions;  // packed only
  std::vector<LengthBucket> histogram;  // from the shortest to the longest non-empty bucket
};

DbSummary summarize(const PackedDb& db);
// From the index: one pass over the sequence offsets, no residue or header is read.
DbSummary summarize(const BlastDb& db);
// A database is summarized from its index; a sequence file is read to the end (with a Progress line
// when progress is true). An empty sequence file gives a summary with zero sequences.
DbSummary summarize(SequenceSource& source, bool progress = false);

}  // namespace warpsearch
