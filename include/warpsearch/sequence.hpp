// sequence.hpp: one digitized sequence record as produced by the readers and the packed database.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpsearch/alphabet.hpp"

namespace warpsearch {

// A run of soft-masked (lowercase in the input) residues: [begin, end), 0-based.
struct MaskRun {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  friend bool operator==(const MaskRun&, const MaskRun&) = default;
};

struct Sequence {
  std::string name;                    // header up to the first whitespace
  std::string description;             // rest of the header line, leading whitespace removed
  std::vector<std::uint8_t> residues;  // digital codes (alphabet.hpp)
  std::vector<MaskRun> soft_mask;      // lowercase runs, sorted, non-overlapping, non-adjacent
  std::string quality;                 // FASTQ quality string (same length as residues); empty for FASTA
  std::uint64_t line = 0;              // 1-based line of the record's header in its source file
  std::string header;  // the header line after '>' / '@' as written (only with ReaderOptions::keep_header)

  std::size_t length() const { return residues.size(); }
  void clear() {
    name.clear();
    description.clear();
    residues.clear();
    soft_mask.clear();
    quality.clear();
    header.clear();
    line = 0;
  }
};

// The residues as letters: upper case, or lower case inside soft-mask runs when keep_case is true.
std::string to_letters(const Sequence& seq, const Alphabet& alphabet, bool keep_case = true);

}  // namespace warpsearch
