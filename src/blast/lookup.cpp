// lookup.cpp: building the blastp query lookup table (lookup.hpp) and BLAST+'s per-matrix defaults.
//
// Where each BLAST+ rule comes from (algo/blast/core, read for behaviour only):
//   - blast_aalookup.c BlastAaLookupTableNew: charsize = ilog2(28) + 1 = 5 bits per letter, threshold
//     truncated to an integer ((Int4)opt->threshold), alphabet_size = BLASTAA_SIZE (28).
//   - blast_lookup.c BlastLookupIndexQueryExactMatches: within each unmasked range (the complement of
//     the mask, BLAST_ComplementMaskLocations in blast_filter.c) every offset whose word fits is indexed;
//     a letter is "ambiguous" only if code & (0xff << charsize), which no protein letter is.
//     Offsets are appended in increasing order, grouped per exact word.
//   - blast_aalookup.c s_AddNeighboringWords / s_AddWordHits / s_AddWordHitsCore: the exact-word
//     backbone is walked in index order; each word's offsets are added to itself when threshold == 0 or
//     its self-score < threshold, and (threshold > 0) to every word s with score >= threshold, found by
//     a depth-first walk over all 28 letters pruned with the row maxima.
//   - BlastAaLookupFinalize: chains copied unchanged (<= 3 hits in the cell, else the overflow array),
//     so the order above is the scan order.
//   - blast_options.c BLAST_GetSuggestedThreshold: per-matrix default thresholds (checked against
//     blastp 2.12 -export_search_strategy: BLOSUM62 11, BLOSUM45 14, BLOSUM80 12, PAM30 16, PAM70 14,
//     BLOSUM50/BLOSUM90/PAM250 11). LookupTableOptionsValidate refuses threshold <= 0 for blastp, but a
//     fractional -threshold below 1 truncates to 0 and gives the exact-only table.
//   - BLAST_FillLookupTableOptions: word size > 5 switches blastp to BlastCompressedAaLookupTable.
#include "blast/lookup.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch::blast {
namespace {

// ncbistdaa code of each of our protein codes (ACDEFGHIKLMNPQRSTVWY B J Z O U X *); ncbistdaa is
// "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ" by code.
constexpr std::array<std::uint8_t, kProteinCodes> kToNcbiStdAa = {
    1, 3,  4,  5,  6,  7,  8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22,  // ACDEFGHIKLMNPQRSTVWY
    2, 27, 23, 26, 24, 21, 25};                                                   // B J Z O U X *

bool iequals(std::string_view a, std::string_view b) {
  auto up = [](char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; };
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return up(x) == up(y); });
}

}  // namespace

ScoreTable blast_score_table(const ScoringMatrix& matrix) {
  if (matrix.alphabet() != AlphabetKind::kProtein)
    throw Error(ErrorKind::kUsage, "the blastp lookup table needs a protein matrix, not " + matrix.name());
  ScoreTable t{};
  std::copy_n(matrix.row(0), t.size(), t.begin());
  constexpr std::uint8_t kC = 1, kU = 24, kO = 23, kX = kProteinUnknown;
  // Same sequence of copies as BLAST+ (row then column, U before O), so U/O crossings match too.
  for (int i = 0; i < kMaxCodes; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    t[kU * kMaxCodes + ui] = t[kC * kMaxCodes + ui];
    t[ui * kMaxCodes + kU] = t[ui * kMaxCodes + kC];
    t[kO * kMaxCodes + ui] = t[kX * kMaxCodes + ui];
    t[ui * kMaxCodes + kO] = t[ui * kMaxCodes + kX];
  }
  return t;
}

int blastp_default_threshold(std::string_view name) {
  if (iequals(name, "BLOSUM45")) return 14;
  if (iequals(name, "BLOSUM80")) return 12;
  if (iequals(name, "PAM30")) return 16;
  if (iequals(name, "PAM70")) return 14;
  if (iequals(name, "BLOSUM62_20")) return 100;
  if (iequals(name, "IDENTITY")) return 27;
  return 11;  // BLOSUM62 and every other name
}

int blastp_default_window(std::string_view name) {
  if (iequals(name, "BLOSUM45")) return 60;
  if (iequals(name, "BLOSUM80")) return 25;
  if (iequals(name, "PAM30")) return 15;
  if (iequals(name, "PAM70")) return 20;
  return 40;  // BLOSUM62 and every other name
}

std::uint8_t ncbistdaa_code(std::uint8_t code) { return kToNcbiStdAa[code]; }

std::uint32_t blast_word_key(const std::uint8_t* codes, int word_size) {
  std::uint32_t key = 0;
  for (int i = 0; i < word_size; ++i) key = (key << kLookupCharBits) | kToNcbiStdAa[codes[i]];
  return key;
}

AaLookupTable AaLookupTable::build(std::span<const std::uint8_t> query, std::span<const MaskRun> masked,
                                   const ScoringMatrix& matrix, int word_size, int threshold) {
  return build(query, masked, blast_score_table(matrix), matrix.size(), word_size, threshold);
}

AaLookupTable AaLookupTable::build(std::span<const std::uint8_t> query, std::span<const MaskRun> masked,
                                   const ScoreTable& scores, int alphabet_size, int word_size,
                                   int threshold) {
  if (word_size < kMinLookupWordSize || word_size > kMaxLookupWordSize)
    throw Error(ErrorKind::kUsage,
                "lookup word size must be 2..5 (BLAST+ builds a compressed-alphabet table "
                "for 6 and 7), not " +
                    std::to_string(word_size));
  if (threshold < 0) throw Error(ErrorKind::kUsage, "negative lookup threshold " + std::to_string(threshold));
  if (alphabet_size < 1 || alphabet_size > kMaxCodes)
    throw Error(ErrorKind::kUsage,
                "lookup alphabet size must be 1..32, not " + std::to_string(alphabet_size));
  if (query.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw Error(ErrorKind::kInput, "query too long for the lookup table");
  for (std::uint8_t c : query)
    if (c >= alphabet_size)
      throw Error(ErrorKind::kInput, "query code " + std::to_string(c) + " outside the matrix alphabet");

  const auto n = static_cast<std::uint32_t>(query.size());
  const auto w = static_cast<std::uint32_t>(word_size);
  AaLookupTable t;
  t.word_size_ = word_size;
  t.threshold_ = threshold;
  t.alphabet_size_ = alphabet_size;
  t.query_length_ = query.size();
  t.word_mask_ = (std::uint32_t{1} << (kLookupCharBits * word_size)) - 1U;
  // Largest index of a word over codes < alphabet_size: every letter alphabet_size - 1.
  std::uint32_t max_index = 0;
  for (int i = 0; i < word_size; ++i)
    max_index = (max_index << kLookupCharBits) | static_cast<std::uint32_t>(alphabet_size - 1);
  const std::uint32_t cells = max_index + 1;

  // 1. Offsets whose word avoids every masked residue.
  std::vector<std::uint8_t> is_masked(n, 0);
  for (const MaskRun& r : masked) {
    const std::uint64_t b = std::min<std::uint64_t>(r.begin, n), e = std::min<std::uint64_t>(r.end, n);
    for (std::uint64_t i = b; i < e; ++i) is_masked[i] = 1;
  }
  // (BLAST+ key of the word, offset), sorted: BLAST+'s exact-word backbone order, offsets ascending.
  std::vector<std::uint64_t> exact;
  exact.reserve(n);
  std::uint32_t clean_run = 0;  // unmasked residues ending at i
  for (std::uint32_t i = 0; i < n; ++i) {
    clean_run = is_masked[i] ? 0 : clean_run + 1;
    if (clean_run >= w) {
      const std::uint32_t p = i + 1 - w;
      exact.push_back((std::uint64_t{blast_word_key(query.data() + p, word_size)} << 32) | p);
    }
  }
  std::sort(exact.begin(), exact.end());
  t.indexed_words_ = exact.size();
  std::vector<std::uint32_t> offsets(exact.size());
  for (std::size_t i = 0; i < exact.size(); ++i) offsets[i] = static_cast<std::uint32_t>(exact[i]);

  // 2. Neighbourhood of each distinct query word, as a list of cells per group of equal words.
  //    Letters of each row by decreasing score so the walk stops at the first letter that cannot reach
  //    the threshold (the set is the same as BLAST+'s full walk; only the cell order within one query
  //    word differs, which does not change any cell's list).
  std::array<std::array<std::uint8_t, kMaxCodes>, kMaxCodes> by_score{};
  std::array<int, kMaxCodes> row_max{};
  for (int a = 0; a < alphabet_size; ++a) {
    auto& order = by_score[static_cast<std::size_t>(a)];
    std::iota(order.begin(), order.begin() + alphabet_size, std::uint8_t{0});
    const std::int8_t* row = scores.data() + a * kMaxCodes;
    std::stable_sort(order.begin(), order.begin() + alphabet_size,
                     [&](std::uint8_t x, std::uint8_t y) { return row[x] > row[y]; });
    row_max[static_cast<std::size_t>(a)] = row[order[0]];
  }

  std::vector<std::uint32_t> group_begin;    // groups of equal words in `offsets`
  std::vector<std::uint32_t> pair_begin{0};  // cells of group g: pair_cells[pair_begin[g] .. pair_begin[g+1])
  std::vector<std::uint32_t> pair_cells;
  std::vector<std::uint32_t> counts(cells, 0);
  std::array<int, kMaxLookupWordSize + 1> suffix_max{};
  std::array<std::uint8_t, kMaxLookupWordSize> word{};
  std::uint32_t group_size = 0;

  // Depth-first walk: position `pos`, partial score and index of the subject letters chosen so far.
  auto walk = [&](auto&& self, int pos, int score, std::uint32_t index) -> void {
    if (pos == word_size) {
      pair_cells.push_back(index);
      counts[index] += group_size;
      return;
    }
    const std::uint8_t q = word[static_cast<std::size_t>(pos)];
    const std::int8_t* row = scores.data() + q * kMaxCodes;
    const int rest = suffix_max[static_cast<std::size_t>(pos + 1)];
    for (int k = 0; k < alphabet_size; ++k) {
      const std::uint8_t c = by_score[q][static_cast<std::size_t>(k)];
      const int s = score + row[c];
      if (s + rest < threshold) break;
      self(self, pos + 1, s, (index << kLookupCharBits) | c);
    }
  };

  for (std::size_t g0 = 0; g0 < exact.size();) {
    std::size_t g1 = g0 + 1;
    while (g1 < exact.size() && (exact[g1] >> 32) == (exact[g0] >> 32)) ++g1;
    group_begin.push_back(static_cast<std::uint32_t>(g0));
    group_size = static_cast<std::uint32_t>(g1 - g0);
    const std::uint8_t* q = query.data() + offsets[g0];
    int self_score = 0;
    for (int i = 0; i < word_size; ++i) {
      word[static_cast<std::size_t>(i)] = q[i];
      self_score += scores[static_cast<std::size_t>(q[i] * kMaxCodes + q[i])];
    }
    if (threshold == 0 || self_score < threshold) {  // the exact word, which the walk would not reach
      const std::uint32_t index = word_index(q, word_size);
      pair_cells.push_back(index);
      counts[index] += group_size;
    }
    if (threshold > 0) {
      suffix_max[static_cast<std::size_t>(word_size)] = 0;
      for (int i = word_size - 1; i >= 0; --i)
        suffix_max[static_cast<std::size_t>(i)] =
            suffix_max[static_cast<std::size_t>(i + 1)] + row_max[word[static_cast<std::size_t>(i)]];
      walk(walk, 0, 0, 0U);
    }
    pair_begin.push_back(static_cast<std::uint32_t>(pair_cells.size()));
    g0 = g1;
  }
  group_begin.push_back(static_cast<std::uint32_t>(exact.size()));

  // 3. CSR: counts -> starts, then each group's offsets appended to its cells in group order, which
  //    is BLAST+'s order of (query word key, offset) within every cell.
  t.starts_.assign(static_cast<std::size_t>(cells) + 1, 0);
  std::uint64_t total = 0;
  for (std::uint32_t c = 0; c < cells; ++c) {
    t.starts_[c] = static_cast<std::uint32_t>(total);
    total += counts[c];
    if (counts[c] != 0) {
      ++t.occupied_cells_;
      t.longest_chain_ = std::max<std::size_t>(t.longest_chain_, counts[c]);
    }
  }
  if (total > std::numeric_limits<std::uint32_t>::max())
    throw Error(ErrorKind::kInput, "lookup table over 2^32 hits: lower the word threshold's reach");
  t.starts_[cells] = static_cast<std::uint32_t>(total);
  t.hits_.resize(static_cast<std::size_t>(total));
  std::vector<std::uint32_t>& cursor = counts;  // reused as the fill position of each cell
  std::copy(t.starts_.begin(), t.starts_.end() - 1, cursor.begin());
  const std::size_t groups = group_begin.size() - 1;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::uint32_t* src = offsets.data() + group_begin[g];
    const std::uint32_t len = group_begin[g + 1] - group_begin[g];
    for (std::uint32_t k = pair_begin[g]; k < pair_begin[g + 1]; ++k) {
      std::uint32_t& at = cursor[pair_cells[k]];
      std::copy_n(src, len, t.hits_.begin() + at);
      at += len;
    }
  }

  t.presence_.assign((static_cast<std::size_t>(t.word_mask_) >> 6) + 1, 0);
  for (std::uint32_t c = 0; c < cells; ++c)
    if (t.starts_[c + 1] != t.starts_[c]) t.presence_[c >> 6] |= std::uint64_t{1} << (c & 63U);
  return t;
}

}  // namespace warpsearch::blast
