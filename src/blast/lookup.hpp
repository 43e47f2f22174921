// lookup.hpp: the blastp query lookup table with BLAST+ 2.12's contents and hit order.
//
// Contents:
//   blast_score_table()        a ScoringMatrix as BLAST+ scores it (U takes C's scores).
//   blastp_default_threshold() BLAST+'s default neighbourhood threshold T for a matrix name.
//   blastp_default_window()    BLAST+'s default two-hit window for a matrix name.
//   blast_word_key()           a word's index in BLAST+'s own alphabet (ncbistdaa): the hit-order key.
//   AaLookupTable              for every word over our 27 protein codes, the query offsets whose word
//                              scores >= T against it (plus the exact words), in BLAST+'s order.
//
// Rules (BLAST+ core sources; see lookup.cpp for the file/function of each):
//   - A query word at offset p (residues p..p+w-1) is indexed only when none of its residues lies in a
//     masked interval (BLAST_ComplementMaskLocations + BlastLookupIndexQueryExactMatches). Every other
//     letter is indexed, X, B, Z, J, U, O and * included: only codes >= 32 would count as ambiguous.
//   - T > 0: subject word s holds offset p iff score(word(p), s) >= T, or s == word(p) (the exact word
//     is added even when its self-score is below T; s_AddWordHits). T == 0: exact words only.
//   - Neighbour words range over every letter of the matrix (all 27 codes, not only the 20 standard
//     residues); BLAST+ also tries the gap letter, which scores BLAST_SCORE_MIN and never qualifies.
//   - Hit order within a cell: by the BLAST+ (ncbistdaa) index of the query word at the offset, then by
//     increasing offset, i.e. by (blast_word_key(query + p), p). BLAST+ walks the exact-word backbone
//     in index order and appends each word's ascending offset list to every neighbour's chain.
//   - Word sizes 2..5 (BLAST+ uses this table, BlastAaLookupTable, up to 5; 6 and 7 use the
//     compressed-alphabet table BlastCompressedAaLookupTable, which this class does not build).
//
// Layout (ours, not BLAST+'s thin/thick backbone + overflow): a word's index packs its codes 5 bits
// each, first letter in the highest bits (index = ((index << 5) | code) & word_mask() rolls along a
// subject); flat CSR arrays give each index its hit list, and a presence bitvector covers the whole
// 2^(5w) index range so present() needs no bounds check on a rolled index.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::blast {

inline constexpr int kLookupCharBits = 5;  // bits per residue in a word index (kMaxCodes == 32)
inline constexpr int kMinLookupWordSize = 2;
inline constexpr int kMaxLookupWordSize = 5;

// A kMaxCodes x kMaxCodes row-major score table (the layout of ScoringMatrix::row(0)).
using ScoreTable = std::array<std::int8_t, kMaxCodes * kMaxCodes>;

// The matrix as BLAST+ scores it: U (selenocysteine) takes C's row and column and O takes X's
// (blast_stat.c, BlastScoreBlkProteinMatrixLoad / BlastScoreBlkProteinMatrixRead); every other entry
// is the matrix's own. Throws Error(kUsage) for a nucleotide matrix.
ScoreTable blast_score_table(const ScoringMatrix& matrix);

// BLAST+ 2.12's default word threshold for blastp (BLAST_GetSuggestedThreshold in blast_options.c):
// BLOSUM62 11, BLOSUM45 14, BLOSUM80 12, PAM30 16, PAM70 14, any other name (BLOSUM50, BLOSUM90,
// PAM250, files) 11; the name is case-insensitive.
int blastp_default_threshold(std::string_view matrix_name);
// BLAST+ 2.12's default two-hit window for blastp (BLAST_GetSuggestedWindowSize in blast_options.c, applied
// when -window_size is not given): BLOSUM45 60, BLOSUM80 25, PAM30 15, PAM70 20, any other name 40.
int blastp_default_window(std::string_view matrix_name);

// BLAST+'s ncbistdaa code of one of our protein codes (alphabet.hpp): A 1, B 2, C 3, ... J 27.
std::uint8_t ncbistdaa_code(std::uint8_t code);

// The index BLAST+ gives the word codes[0..word_size) (ncbistdaa codes, 5 bits each, first letter
// highest): the order key of hits within a cell.
std::uint32_t blast_word_key(const std::uint8_t* codes, int word_size);

class AaLookupTable {
 public:
  AaLookupTable() = default;

  // Builds the table for `query` (protein codes < alphabet_size) with the given score table.
  // `masked`: [begin, end) intervals (any order, may overlap or extend past the end) whose residues
  // start no word. threshold 0 keeps exact words only. Throws Error(kUsage) unless word_size is in
  // 2..5, threshold >= 0 and 1 <= alphabet_size <= kMaxCodes, Error(kInput) for a query code
  // >= alphabet_size or a query longer than 2^31 - 1.
  static AaLookupTable build(std::span<const std::uint8_t> query, std::span<const MaskRun> masked,
                             const ScoreTable& scores, int alphabet_size, int word_size, int threshold);
  // As above with blast_score_table(matrix) over the matrix's alphabet: BLAST+'s table.
  static AaLookupTable build(std::span<const std::uint8_t> query, std::span<const MaskRun> masked,
                             const ScoringMatrix& matrix, int word_size, int threshold);

  int word_size() const { return word_size_; }
  int threshold() const { return threshold_; }
  int alphabet_size() const { return alphabet_size_; }
  std::size_t query_length() const { return query_length_; }

  // Mask of a rolled word index: (1 << (5 * word_size)) - 1.
  std::uint32_t word_mask() const { return word_mask_; }
  // Number of CSR cells: every word over codes < alphabet_size has an index below it.
  std::uint32_t num_cells() const { return static_cast<std::uint32_t>(starts_.size() - 1); }

  // Index of the word codes[0..word_size) (codes < kMaxCodes).
  static std::uint32_t word_index(const std::uint8_t* codes, int word_size) {
    std::uint32_t index = 0;
    for (int i = 0; i < word_size; ++i) index = (index << kLookupCharBits) | codes[i];
    return index;
  }
  std::uint32_t word_index(const std::uint8_t* codes) const { return word_index(codes, word_size_); }

  // True if the word has hits; valid for any index <= word_mask().
  bool present(std::uint32_t word) const { return (presence_[word >> 6] >> (word & 63U)) & 1U; }
  // Query offsets (word starts) hit by the word, in BLAST+'s order; word < num_cells().
  std::span<const std::uint32_t> hits(std::uint32_t word) const {
    return {hits_.data() + starts_[word], hits_.data() + starts_[word + 1]};
  }

  // Raw arrays (for upload): presence bits (bit i of word i / 64), CSR starts (num_cells() + 1) and
  // the concatenated hit lists.
  std::span<const std::uint64_t> presence() const { return presence_; }
  std::span<const std::uint32_t> starts() const { return starts_; }
  std::span<const std::uint32_t> all_hits() const { return hits_; }

  std::size_t total_hits() const { return hits_.size(); }
  std::size_t longest_chain() const { return longest_chain_; }
  std::size_t occupied_cells() const { return occupied_cells_; }
  std::size_t indexed_words() const { return indexed_words_; }  // query offsets that start a word

 private:
  int word_size_ = 0;
  int threshold_ = 0;
  int alphabet_size_ = 0;
  std::size_t query_length_ = 0;
  std::uint32_t word_mask_ = 0;
  std::vector<std::uint64_t> presence_{0};
  std::vector<std::uint32_t> starts_{0};
  std::vector<std::uint32_t> hits_;
  std::size_t longest_chain_ = 0;
  std::size_t occupied_cells_ = 0;
  std::size_t indexed_words_ = 0;
};

}  // namespace warpsearch::blast
