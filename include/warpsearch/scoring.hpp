// scoring.hpp: scoring systems: substitution matrices (built-in NCBI tables, NCBI-format files,
// match/mismatch DNA scoring) and affine gap costs.
//
// Contents:
//   GapCosts       open/extend gap penalties under the project convention (a gap of length k costs
//                  open + k * extend, as BLAST+ and ssearch36 count it).
//   ScoringMatrix  a substitution matrix over the digital codes of one alphabet (alphabet.hpp),
//                  stored as int8 in a 32 x 32 row-major table ready for SIMD/GPU upload.
// docs/SCORING.md describes the accepted file format, the scores given to letters a file leaves out,
// ambiguity codes in DNA scoring and how to convert gap penalties from parasail or EMBOSS.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "warpsearch/alphabet.hpp"

namespace warpsearch {

// Affine gap penalties, both non-negative and subtracted from the score. A gap of length k >= 1 costs
// open + k * extend, so a single-residue gap costs open + extend. parasail's and EMBOSS's "open" is the
// cost of the first gap position, i.e. our open + extend (docs/SCORING.md).
struct GapCosts {
  int open = 11;
  int extend = 1;

  // Cost of a gap of length k (k >= 0): 0 for k == 0, else open + k * extend.
  constexpr int cost(int k) const { return k == 0 ? 0 : open + k * extend; }
  // Throws Error(kUsage) unless 0 <= open, extend <= kMaxGapCost (the 8-bit kernels hold them in one byte).
  void validate() const;
  static constexpr int kMaxGapCost = 127;

  friend constexpr bool operator==(const GapCosts&, const GapCosts&) = default;
};

class ScoringMatrix {
 public:
  // The built-in NCBI matrices (BLOSUM45/50/62/80/90, PAM30/70/250); the name is case-insensitive.
  // Throws Error(kUsage) naming the built-in matrices for an unknown name.
  static ScoringMatrix builtin(std::string_view name);
  // Names of the built-in matrices, upper case, in the order BLOSUM45 ... PAM250.
  static std::span<const std::string_view> builtin_names();
  // True if `name` names a built-in matrix (case-insensitive).
  static bool is_builtin(std::string_view name);

  // Reads a matrix in NCBI text format (docs/SCORING.md). The alphabet is nucleotide when every
  // letter of the header row is a nucleotide symbol (ACGTU and the IUPAC codes), protein otherwise.
  // Throws Error(kIo) if the file cannot be read and Error(kFormat, ..., path, line) for a malformed
  // one; line is 0 only when the problem concerns the whole file (no header row).
  static ScoringMatrix from_ncbi_file(const std::string& path);
  // As from_ncbi_file, for text already in memory; `source_name` is the matrix's name and the file
  // named in errors.
  static ScoringMatrix from_ncbi_text(std::string_view text, const std::string& source_name);
  // A built-in matrix if `name_or_path` is a built-in name, otherwise the NCBI-format file at that
  // path (so "./BLOSUM62" reads a file while "BLOSUM62" is the built-in table).
  static ScoringMatrix load(const std::string& name_or_path);

  // Nucleotide match/mismatch scoring (kind kDna or kRna): `match` for identical A/C/G/T(U),
  // `mismatch` for any other pair, including every pair with an ambiguity code (R..N, N/N too).
  // Like BLASTN's reward/penalty, match must be in 1..127 and mismatch in -128..-1, else
  // Error(kUsage).
  static ScoringMatrix dna(int match, int mismatch, AlphabetKind kind = AlphabetKind::kDna);

  // "BLOSUM62" for built-ins, the file name (last path component) for files, the source name for
  // text, "dna:+2/-3" (or "rna:...") for match/mismatch scoring.
  const std::string& name() const { return name_; }
  AlphabetKind alphabet() const { return alphabet_; }
  // Number of digital codes of the alphabet (27 protein, 15 nucleotide); codes >= size() are padding.
  int size() const { return Alphabet(alphabet_).size(); }

  // Score of aligning codes a and b (both < kMaxCodes).
  int score(std::uint8_t a, std::uint8_t b) const { return table_[a * kMaxCodes + b]; }
  // Row a of the table: kMaxCodes entries, score(a, b) at index b. Rows are contiguous, so row(0) is
  // the whole kMaxCodes x kMaxCodes row-major table (64-byte aligned).
  const std::int8_t* row(std::uint8_t a) const { return table_.data() + a * kMaxCodes; }

  // Extremes over every pair of codes of the alphabet (ambiguity codes and '*' included), hence
  // over the whole padded table too: the bounds a kernel can meet.
  int min_score() const { return min_score_; }
  int max_score() const { return max_score_; }
  // Extremes over pairs of canonical residues only (the 20 amino acids or A/C/G/T).
  int canonical_min_score() const { return canonical_min_; }
  int canonical_max_score() const { return canonical_max_; }
  // Padding entries (rows and columns of codes >= size()) all hold min_score().
  int padding_score() const { return min_score_; }
  // score(a, b) == score(b, a) for all codes.
  bool symmetric() const;

  // BLAST+ default gap costs: BLOSUM62 11/1, BLOSUM45 14/2, BLOSUM50 13/2, BLOSUM80 10/1,
  // BLOSUM90 10/1, PAM30 9/1, PAM70 10/1, PAM250 14/2; nucleotide match/mismatch 5/2. A file whose
  // scores equal a built-in matrix gets that matrix's defaults; any other file 11/1.
  GapCosts default_gaps() const { return default_gaps_; }

  // True if both matrices score every pair of codes alike (names and default gaps are not compared).
  bool same_scores(const ScoringMatrix& other) const;

 private:
  using Table = std::array<std::int8_t, kMaxCodes * kMaxCodes>;

  ScoringMatrix(std::string name, AlphabetKind alphabet, const Table& table, GapCosts default_gaps);
  // The NCBI text parser, without the default-gap lookup of from_ncbi_text.
  static ScoringMatrix parse(std::string_view text, const std::string& file, std::string name);
  // The parsed built-in matrices in builtin_names() order, each with its default gap costs.
  static std::span<const ScoringMatrix> builtins();

  std::string name_;
  AlphabetKind alphabet_;
  alignas(64) Table table_;
  int min_score_;
  int max_score_;
  int canonical_min_;
  int canonical_max_;
  GapCosts default_gaps_;
};

}  // namespace warpsearch
