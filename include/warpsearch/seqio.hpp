// seqio.hpp: streaming FASTA/FASTQ reader (plain or gzip, detected from content, "-" for stdin).
//
// The reader holds one record at a time plus a fixed-size input buffer, so files of any size and
// sequences of any length (> 100 Mbp) stream. Handles CRLF line ends, empty lines, very long lines,
// multi-line FASTA and FASTQ (sequence lines until the '+' separator). Residues are digitized with the
// alphabet given or guessed from the start of the file (guess_alphabet on up to the first 64 KiB of
// residue letters). Lowercase letters become soft-mask runs. Letters outside the alphabet become X
// (protein) or N (nucleotide) and are counted (unknown_letters()), or are an error with strict_letters.
// Any other character in sequence data, a record without a header, a FASTQ record whose quality length
// differs from its sequence, a truncated/corrupt gzip stream: Error(kFormat, ..., path, line).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch {

enum class SeqFormat : std::uint8_t { kAuto, kFasta, kFastq };

struct ReaderOptions {
  std::optional<AlphabetKind> alphabet;  // nullopt: guess from the data
  SeqFormat format = SeqFormat::kAuto;   // kAuto: '>' starts FASTA, '@' starts FASTQ
  bool strict_letters = false;           // letters outside the alphabet are an error, not X/N
  bool allow_empty_sequences = false;    // zero-length records are an error unless set
  bool keep_header = false;              // also fill Sequence::header (the header line as written)
  // BLAST+'s query reader (blastp's queries): FASTA text before the first header line is a record without a
  // header, and a header line without a name (">", "> " or ">  text") gives a record with an empty name;
  // blanks before a name are skipped (">  id text": name "id"). Otherwise both are format errors.
  bool allow_unnamed = false;
  bool skip_hyphens = false;  // '-' in sequence lines is skipped (counted in hyphens()), not an error
  std::size_t buffer_bytes = 1 << 20;  // input buffer size
};

class SequenceReader {
 public:
  // Opens path ("-" reads stdin) and looks ahead to resolve format and alphabet. Throws Error(kIo) if
  // it cannot be opened, Error(kFormat) if the start of the input is already damaged (e.g. bad gzip).
  explicit SequenceReader(const std::string& path, ReaderOptions options = {});
  ~SequenceReader();
  SequenceReader(SequenceReader&&) noexcept;
  SequenceReader& operator=(SequenceReader&&) noexcept;
  SequenceReader(const SequenceReader&) = delete;
  SequenceReader& operator=(const SequenceReader&) = delete;

  // Reads the next record into seq (cleared first). Returns false at end of input.
  bool next(Sequence& seq);

  const std::string& path() const;
  SeqFormat format() const;          // resolved format (after the first byte)
  const Alphabet& alphabet() const;  // resolved alphabet (guessed before the first record returns)
  bool gzipped() const;
  std::uint64_t records() const;            // records returned so far
  std::uint64_t residues() const;           // residues returned so far
  std::uint64_t unknown_letters() const;    // letters mapped to X/N so far
  std::uint64_t hyphens() const;            // '-' skipped so far (ReaderOptions::skip_hyphens)
  std::uint64_t first_hyphen_line() const;  // the line of the first one (0: none)
  std::uint64_t bytes_read() const;         // uncompressed bytes consumed so far
  std::uint64_t line() const;               // current 1-based line number

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warpsearch
