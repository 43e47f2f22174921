// alphabet.cpp: alphabet names and alphabet guessing.
#include "warpsearch/alphabet.hpp"

namespace warpsearch {

std::string_view to_string(AlphabetKind kind) {
  switch (kind) {
    case AlphabetKind::kProtein: return "protein";
    case AlphabetKind::kDna: return "dna";
    case AlphabetKind::kRna: return "rna";
  }
  return "protein";
}

std::optional<AlphabetKind> parse_alphabet(std::string_view name) {
  if (name == "protein" || name == "aa" || name == "amino") return AlphabetKind::kProtein;
  if (name == "dna" || name == "nt" || name == "nucleotide") return AlphabetKind::kDna;
  if (name == "rna") return AlphabetKind::kRna;
  return std::nullopt;
}

AlphabetKind guess_alphabet(std::string_view letters) {
  std::uint64_t total = 0, nucleotide = 0, t = 0, u = 0;
  for (const char ch : letters) {
    const char c = static_cast<char>(ch & ~0x20);  // upper-case letters
    if (c < 'A' || c > 'Z') continue;
    ++total;
    switch (c) {
      case 'A':
      case 'C':
      case 'G':
      case 'N': ++nucleotide; break;
      case 'T':
        ++nucleotide;
        ++t;
        break;
      case 'U':
        ++nucleotide;
        ++u;
        break;
      default: break;
    }
  }
  if (total == 0 || nucleotide * 10 < total * 9) return AlphabetKind::kProtein;
  return (u > 0 && t == 0) ? AlphabetKind::kRna : AlphabetKind::kDna;
}

}  // namespace warpsearch
