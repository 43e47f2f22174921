// alphabet.hpp: residue alphabets and their digital codes, shared by every reader, database and kernel.
//
// Protein codes (27): 0..19 the canonical residues in HMMER's order ACDEFGHIKLMNPQRSTVWY, then
//   20 B, 21 J, 22 Z, 23 O, 24 U, 25 X (unknown), 26 * (stop).
// DNA/RNA codes (15): 0 A, 1 C, 2 G, 3 T (U in RNA), then the IUPAC ambiguity codes
//   4 R, 5 Y, 6 M, 7 K, 8 S, 9 W, 10 H, 11 B, 12 V, 13 D, 14 N (unknown).
// Case is not part of the code: lowercase (soft-masked) letters are recorded as mask runs on the
// sequence (see sequence.hpp). Letters outside the alphabet map to the unknown code (X or N) and are
// counted; other characters (digits, punctuation, gap symbols) are invalid in sequence data.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace warpsearch {

enum class AlphabetKind : std::uint8_t { kProtein = 0, kDna = 1, kRna = 2 };

inline constexpr int kProteinCodes = 27;
inline constexpr int kDnaCodes = 15;
inline constexpr std::uint8_t kProteinUnknown = 25;  // X
inline constexpr std::uint8_t kProteinStop = 26;     // *
inline constexpr std::uint8_t kDnaUnknown = 14;      // N
inline constexpr int kMaxCodes = 32;                 // codes fit in 5 bits; tables pad to 32

// Result of classifying one input byte (see Alphabet::classify).
inline constexpr std::uint8_t kCodeInvalid = 0xFF;  // not allowed in sequence data
inline constexpr std::uint8_t kCodeForeign = 0xFE;  // a letter outside the alphabet: maps to unknown

inline constexpr std::string_view kProteinSymbols = "ACDEFGHIKLMNPQRSTVWYBJZOUX*";
inline constexpr std::string_view kDnaSymbols = "ACGTRYMKSWHBVDN";
inline constexpr std::string_view kRnaSymbols = "ACGURYMKSWHBVDN";

class Alphabet {
 public:
  constexpr explicit Alphabet(AlphabetKind kind) : kind_(kind), table_(build(kind)) {}

  constexpr AlphabetKind kind() const { return kind_; }
  constexpr bool is_nucleotide() const { return kind_ != AlphabetKind::kProtein; }
  constexpr int size() const { return is_nucleotide() ? kDnaCodes : kProteinCodes; }
  // Number of canonical residues (20 or 4): codes below this are unambiguous.
  constexpr int canonical_size() const { return is_nucleotide() ? 4 : 20; }
  constexpr std::uint8_t unknown() const { return is_nucleotide() ? kDnaUnknown : kProteinUnknown; }
  constexpr std::string_view symbols() const {
    switch (kind_) {
      case AlphabetKind::kProtein: return kProteinSymbols;
      case AlphabetKind::kDna: return kDnaSymbols;
      case AlphabetKind::kRna: return kRnaSymbols;
    }
    return kProteinSymbols;
  }

  // Code for an input byte (either case), kCodeForeign for other letters, kCodeInvalid otherwise.
  constexpr std::uint8_t classify(unsigned char c) const { return table_[c]; }
  // Upper-case symbol for a code (code < size()).
  constexpr char symbol(std::uint8_t code) const { return symbols()[code]; }
  // Code for a symbol, or nullopt if it is not a symbol of this alphabet (either case accepted).
  constexpr std::optional<std::uint8_t> code(char c) const {
    const std::uint8_t v = classify(static_cast<unsigned char>(c));
    if (v >= kCodeForeign) return std::nullopt;
    return v;
  }

  static constexpr Alphabet protein() { return Alphabet(AlphabetKind::kProtein); }
  static constexpr Alphabet dna() { return Alphabet(AlphabetKind::kDna); }
  static constexpr Alphabet rna() { return Alphabet(AlphabetKind::kRna); }

 private:
  static constexpr std::array<std::uint8_t, 256> build(AlphabetKind kind) {
    std::array<std::uint8_t, 256> t{};
    for (auto& v : t) v = kCodeInvalid;
    for (int c = 'A'; c <= 'Z'; ++c) {
      t[static_cast<std::size_t>(c)] = kCodeForeign;
      t[static_cast<std::size_t>(c - 'A' + 'a')] = kCodeForeign;
    }
    std::string_view symbols = kind == AlphabetKind::kProtein ? kProteinSymbols : kDnaSymbols;
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      const char s = symbols[i];
      t[static_cast<unsigned char>(s)] = static_cast<std::uint8_t>(i);
      if (s >= 'A' && s <= 'Z') t[static_cast<unsigned char>(s - 'A' + 'a')] = static_cast<std::uint8_t>(i);
    }
    if (kind != AlphabetKind::kProtein) {  // U and T are the same code in nucleotide alphabets
      t['U'] = 3;
      t['u'] = 3;
    }
    return t;
  }

  AlphabetKind kind_;
  std::array<std::uint8_t, 256> table_;
};

// "protein", "dna" or "rna".
std::string_view to_string(AlphabetKind kind);
// Parses "protein" / "dna" / "rna" (also "aa", "nt", "nucleotide"); nullopt if unknown.
std::optional<AlphabetKind> parse_alphabet(std::string_view name);

// Guesses the alphabet from a sample of residue letters: nucleotide when at least 90% of the letters
// are A, C, G, T, U or N (either case); RNA when U occurs and T does not. An empty sample is protein.
AlphabetKind guess_alphabet(std::string_view letters);

}  // namespace warpsearch
