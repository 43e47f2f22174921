// display_matrix.hpp: which aligned protein letters BLAST+'s formatters count as "positive".
//
// BLAST+ 2.12 counts a pair of aligned letters as positive when they are the same letter or when the
// formatter's ASCII protein matrix (CAlignFormatUtil::GetAsciiProteinMatrix) scores them above zero. That
// matrix holds the search matrix over ARNDCQEGHILKMFPSTWYVBZX only, '*' against anything -4 ('*' with '*'
// 1), and U scored as C against U and C; every other letter (J, O, U against the rest) scores below zero.
// So X with X is positive (an identity) although BLOSUM62 scores it -1, U with C is positive, J with L is
// not. Used by -outfmt 0 (the middle line and "Positives") and -outfmt 6/7 ("positive", "ppos").
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

class DisplayMatrix {
 public:
  explicit DisplayMatrix(const ScoringMatrix& m) {
    constexpr std::string_view kSymbols = "ARNDCQEGHILKMFPSTWYVBZX";
    const Alphabet alpha = Alphabet::protein();
    for (auto& row : table_) row.fill(-1000);
    for (char a : kSymbols)
      for (char b : kSymbols) table_[index(a)][index(b)] = m.score(*alpha.code(a), *alpha.code(b));
    for (char a : kSymbols) table_[index(a)][index('*')] = table_[index('*')][index(a)] = -4;
    table_[index('*')][index('*')] = 1;
    const int cc = table_[index('C')][index('C')];
    table_[index('U')][index('U')] = table_[index('U')][index('C')] = table_[index('C')][index('U')] = cc;
  }
  // The ASCII matrix's score of two upper-case letters.
  int score(char a, char b) const { return table_[index(a)][index(b)]; }
  // BLAST's "positive": the same letter, or a score above zero.
  bool positive(char a, char b) const { return a == b || score(a, b) > 0; }

 private:
  static std::size_t index(char c) { return static_cast<unsigned char>(c) & 0x7Fu; }
  std::array<std::array<int, 128>, 128> table_{};
};

}  // namespace warpsearch::blast
