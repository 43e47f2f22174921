// sequence.cpp: turning a digitized Sequence back into letters (to_letters).
#include "warpsearch/sequence.hpp"

#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch {

std::string to_letters(const Sequence& seq, const Alphabet& alphabet, bool keep_case) {
  std::string letters(seq.residues.size(), '\0');
  for (std::size_t i = 0; i < seq.residues.size(); ++i) {
    const std::uint8_t code = seq.residues[i];
    if (code >= alphabet.size()) {
      throw Error(ErrorKind::kInternal, "residue code " + std::to_string(code) + " at position " +
                                            std::to_string(i) + " of '" + seq.name + "' is not a " +
                                            std::string(to_string(alphabet.kind())) + " code");
    }
    letters[i] = alphabet.symbol(code);
  }
  if (!keep_case) return letters;
  for (const MaskRun& run : seq.soft_mask) {
    if (run.begin > run.end || run.end > letters.size()) {
      throw Error(ErrorKind::kInternal, "soft-mask run [" + std::to_string(run.begin) + ", " +
                                            std::to_string(run.end) + ") is outside '" + seq.name + "'");
    }
    for (std::uint64_t i = run.begin; i < run.end; ++i) {
      char& c = letters[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');  // '*' has no lower case
    }
  }
  return letters;
}

}  // namespace warpsearch
