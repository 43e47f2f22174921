// search_internal.hpp: the parts of the hmmsearch driver (search.cpp) that tests use directly: the
// search with a given kind of filter engine (search_with_engines, at the end), and the in-memory target
// database, read with Easel's FASTA rules (esl_sqio_ascii.c, digital mode) from a FASTA
// or FASTQ file or converted from a packed database (`warpsearch makedb`, warpsearch/db.hpp).
//
// The database is read once and kept in memory for all query models: each record keeps its name,
// description (HMMER prints both), its Easel-digitized residues (Dsq layout: sentinels at [0] and
// [L+1]) and the line of its header for messages. A FASTA file is read in blocks (kTargetDbBlockBytes;
// the file text is never held as a whole): each block is cut at the start of its last record (the rest
// carries over to the next block), split into pieces at record starts and the pieces digitized in
// parallel, each from its exact line number, their records appended in file order and the error of the
// first failing piece reported; so the records, their lines and the error are those of a serial parse,
// for any thread count and block size. A FASTQ file (whose quality lines may start with '@') and a file
// not starting with '>' are parsed serially, line by line. Reading rules, as Easel's FASTA parser:
//   - the file may be plain or gzip (detected from content; multi-member gzip), "-" reads stdin;
//   - whitespace before the first record is skipped; the first other byte must be '>' (FASTA) or '@'
//     (FASTQ, an extension: Easel 0.48 has no FASTQ parser); anything else is a format error;
//   - header: '>' (or '@') then optional spaces/tabs, the name up to the first whitespace (must not be
//     empty), spaces/tabs, then the description up to the end of line (or a ctrl-A), trailing spaces
//     kept; later records start at a line whose first byte is the marker;
//   - sequence lines: ' ', '\t', '\r' ignored; letters mapped by the model alphabet's FASTA input map
//     (abc.hpp fasta_inmap: case-insensitive, synonyms, '*' allowed, '-' and digits illegal);
//     an illegal character is Error(kFormat) naming the file, the line, the character and the record;
//   - FASTQ: sequence lines up to a line starting with '+' (its text, if any, must repeat the name or
//     the header), then quality lines ('!'..'~', whitespace ignored) until there are as many quality
//     characters as residues; blank lines between records are skipped;
//   - a record may be empty (length 0: hmmsearch counts it but never scores it);
//   - no length limit (HMMER 3.3.2 refuses targets > 100000 residues; we search them).
// A packed database keeps one code per residue in its own alphabet (alphabet.hpp); each code is turned
// back into its upper-case letter and digitized with the model alphabet's FASTA input map, so the
// database gives the same targets as the FASTA it was made from, with the exceptions documented in
// docs/HMMSEARCH.md (makedb's own input rules, e.g. letters it stored as X/N).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/common.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/hmmsearch.hpp"

namespace warpsearch {
class PackedDb;
class ThreadPool;
}  // namespace warpsearch

namespace warpsearch::hmm {

class FilterEngine;

/// One target sequence (ESL_SQ in digital mode, the fields hmmsearch uses).
struct TargetSeq {
  std::string name;
  std::string acc;   // always empty for FASTA (kept for the output writers, which print '-')
  std::string desc;  // empty when the header has no description
  Dsq dsq;           // dsq[0] = dsq[L+1] = kDsqSentinel, residues dsq[1..L]
  int64_t L = 0;
  uint64_t line = 0;  // 1-based line of the '>' header (0 for a packed database)
};

struct TargetDb {
  std::string path;
  std::vector<TargetSeq> seqs;
  uint64_t nres = 0;  // total residues
};

/// Parses FASTA or FASTQ text (already decompressed) digitized with alphabet a. path is used in
/// messages only.
TargetDb parse_target_db(std::string_view text, const Abc& a, const std::string& path);

/// Converts a packed database, digitizing every residue with alphabet a (a residue whose letter a's
/// FASTA input map rejects is Error(kFormat) naming the database, the record and the letter). Only
/// sequences [begin, end) are converted (a shard of a distributed search); the others stay empty
/// TargetSeqs; seqs.size() and nres are those of the whole database either way.
TargetDb target_db_from_packed(const PackedDb& db, const Abc& a, uint64_t begin = 0,
                               uint64_t end = UINT64_MAX);

/// Default block size of the parallel FASTA reader (TargetDbFile::read): the memory it holds besides the
/// records is about two blocks, one parsed while the next is read (more only while one record is longer
/// than a block). 4 MiB: blocks of many records (about 4 pieces per thread of 16 threads of 64 KiB, each
/// of ~100 records), whose buffers stay small enough to be mostly cache-resident and cheap to map.
inline constexpr std::size_t kTargetDbBlockBytes = std::size_t{4} << 20;

/// A target database opened for reading: a FASTA/FASTQ file (plain or gzip, "-" = stdin) or a packed
/// database (SequenceSource::is_packed_db). Opening checks that the input exists and can be read
/// (Error(kIo) otherwise, a damaged packed database Error(kFormat)); read() then reads the records,
/// digitized with the models' alphabet, once.
class TargetDbFile {
 public:
  explicit TargetDbFile(const std::string& path);
  ~TargetDbFile();
  TargetDbFile(const TargetDbFile&) = delete;
  TargetDbFile& operator=(const TargetDbFile&) = delete;

  /// Reads the whole database, a FASTA file in blocks of block_bytes parsed in pieces on the pool (the
  /// result does not depend on the pool size or block size). Throws Error(kFormat) when it is empty or
  /// misformatted, Error(kIo) on a read error (the format error of a record read before it first, as a
  /// serial parse). Call once.
  TargetDb read(const Abc& a, ThreadPool& pool, std::size_t block_bytes = kTargetDbBlockBytes);
  /// read() for part `part` of `parts` of a distributed search: the shard [begin, end) of dist/shard.hpp's
  /// residue-balanced split is returned in `begin`/`end`, and only its sequences are kept (a packed
  /// database converts only them; a sequence file is read whole, the other records then emptied). The
  /// database's size (seqs.size(), nres) is the whole one. Call once, instead of read().
  TargetDb read_part(const Abc& a, ThreadPool& pool, int part, int parts, std::size_t& begin,
                     std::size_t& end, std::size_t block_bytes = kTargetDbBlockBytes);
  bool is_packed() const { return packed_ != nullptr; }

 private:
  struct Stream;
  std::string path_;
  std::unique_ptr<PackedDb> packed_;
  std::unique_ptr<Stream> stream_;
};

/// TargetDbFile(path).read(a, pool, block_bytes) with a pool of `threads` threads (0: all hardware
/// threads).
TargetDb read_target_db(const std::string& path, const Abc& a, unsigned threads = 1,
                        std::size_t block_bytes = kTargetDbBlockBytes);

/// Makes filter engine `index` (0-based) of a search; pool is the search's worker pool (a CPU engine may
/// run on it). Called once per engine and run, before the first model.
using FilterEngineFactory = std::function<std::unique_ptr<FilterEngine>(std::size_t index, ThreadPool& pool)>;

/// hmmsearch::search() on the filter-engine path with `engines` engines made by `make` (0: the classic
/// CPU pipeline, whatever options.gpus says). Each engine gets a contiguous, residue-balanced share of the
/// process's targets (engines whose share is empty are not made); options.verify checks samples of their
/// results. hmmsearch::search() is this with options.gpus.size() engines from make_gpu_filter_engine;
/// tests pass CPU engines (make_cpu_filter_engine), whose results define the GPU engines'.
hmmsearch::Summary search_with_engines(const std::string& hmmfile, const std::string& seqdb,
                                       const hmmsearch::Options& options, const hmmsearch::Sinks& sinks,
                                       const hmmsearch::RunLabels& labels, std::size_t engines,
                                       const FilterEngineFactory& make, bool keep_hits = true,
                                       const dist::Comm* comm = nullptr,
                                       dist::Split split = dist::Split::kDatabase);

}  // namespace warpsearch::hmm
