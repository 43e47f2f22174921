// protein_fasta.hpp: small protein FASTA reader/writer for tests that feed the same records to warpsearch
// and to the BLAST+ oracles (blastp, makeblastdb): Record, read_fasta, write_fasta.
//
// Records hold the defline (the header line without '>') and residue codes of Alphabet::protein().
// Reading drops every letter the alphabet does not know (digits, spaces, '*' where unknown), so a
// written-then-read file gives back the same records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "warpsearch/alphabet.hpp"

namespace warpsearch::test {

struct Record {
  std::string defline;              // without the leading '>'
  std::vector<std::uint8_t> codes;  // Alphabet::protein() codes
};

// Reads records skip, skip + 1, ... of the FASTA file at path, at most max_records of them. Lines
// before the first header are ignored; a missing file gives no records.
inline std::vector<Record> read_fasta(const std::string& path,
                                      std::size_t max_records = std::numeric_limits<std::size_t>::max(),
                                      std::size_t skip = 0) {
  std::vector<Record> out;
  std::ifstream in(path);
  std::string line;
  const Alphabet alpha = Alphabet::protein();
  std::size_t seen = 0;
  bool take = false;  // whether the current record is kept
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      take = seen++ >= skip;
      if (take && out.size() == max_records) break;
      if (take) out.push_back({line.substr(1), {}});
    } else if (take) {
      for (const char c : line)
        if (const auto code = alpha.code(c)) out.back().codes.push_back(*code);
    }
  }
  return out;
}

// Writes records as FASTA: '>' defline, then the residue letters, line_width letters a line (0: the
// whole sequence on one line). An empty sequence still gets its (empty) sequence line.
inline void write_fasta(const std::vector<Record>& records, const std::string& path,
                        std::size_t line_width = 0) {
  std::ofstream out(path, std::ios::binary);
  const Alphabet alpha = Alphabet::protein();
  for (const Record& r : records) {
    out << '>' << r.defline << '\n';
    for (std::size_t i = 0; i < r.codes.size(); ++i) {
      out << alpha.symbol(r.codes[i]);
      if (line_width != 0 && i % line_width == line_width - 1) out << '\n';
    }
    out << '\n';
  }
}

}  // namespace warpsearch::test
