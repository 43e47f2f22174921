// test_lookup.cpp: the blastp query lookup table (src/blast/lookup.hpp), suite Lookup*.
//
//   - brute force: every word over the 27 codes against every query offset, scored directly, for random
//     and real (prot/mmseqs_QUERY500.fasta) queries, BLOSUM62/45/80 and PAM30, thresholds 11, 13, the
//     matrix default and 0 (exact only), word sizes 2 and 3 (one word-size-4 case), with masked ranges;
//     every cell must equal the brute-force list in the documented order (query word's BLAST+ key, offset);
//   - BLAST+ 2.12's own libblast.so (dlopen, as tests/stats does): its BlastAaLookupTable built from the
//     same query, mask and its own matrix must hold, cell for cell and in order, what ours holds, and
//     blast_score_table() must equal BLAST+'s matrix; blastp's -export_search_strategy gives the default
//     thresholds;
//   - edge cases (short, empty, fully masked queries; bad arguments) and a 35,000-residue query (< 1 s).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blast/lookup.hpp"
#include "libblast.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::blast {
namespace {

using Codes = std::vector<std::uint8_t>;

// Random protein: mostly the 20 residues (uneven frequencies, so words repeat), some B J Z O U X *.
Codes random_query(std::mt19937& rng, std::size_t n) {
  std::discrete_distribution<int> dist({8,   2,   5,   6,   4,   7,   2,  6, 6, 9,
                                        2,   4,   5,   4,   5,   7,   5,  7, 1, 3,  //
                                        0.3, 0.2, 0.3, 0.1, 0.2, 1.0, 0.2});
  Codes q(n);
  for (auto& c : q) c = static_cast<std::uint8_t>(dist(rng));
  return q;
}

// Random masked intervals, unsorted, some overlapping and some running past the end.
std::vector<MaskRun> random_mask(std::mt19937& rng, std::size_t n) {
  std::vector<MaskRun> m;
  const int k = std::uniform_int_distribution<int>(0, 5)(rng);
  for (int i = 0; i < k; ++i) {
    const std::uint64_t b = std::uniform_int_distribution<std::uint64_t>(0, n)(rng);
    const std::uint64_t len = std::uniform_int_distribution<std::uint64_t>(0, 25)(rng);
    m.push_back({b, b + len});
  }
  return m;
}

bool word_masked(const std::vector<MaskRun>& mask, std::size_t p, int w) {
  for (const MaskRun& r : mask)
    if (r.begin < p + static_cast<std::size_t>(w) && p < r.end) return true;
  return false;
}

// Brute force: for every word over codes < alphabet, the offsets p with s == word(p) or (T > 0 and
// score(word(p), s) >= T), ordered by (blast_word_key(word(p)), p). Keyed by our word index.
std::vector<std::vector<std::uint32_t>> brute_force(const Codes& q, const std::vector<MaskRun>& mask,
                                                    const ScoreTable& sc, int alphabet, int w,
                                                    int threshold) {
  const std::size_t cells = std::size_t{1} << (kLookupCharBits * w);
  std::vector<std::vector<std::uint32_t>> ref(cells);
  std::vector<std::uint32_t> valid;
  for (std::size_t p = 0; p + static_cast<std::size_t>(w) <= q.size(); ++p)
    if (!word_masked(mask, p, w)) valid.push_back(static_cast<std::uint32_t>(p));
  std::sort(valid.begin(), valid.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::uint32_t ka = blast_word_key(q.data() + a, w), kb = blast_word_key(q.data() + b, w);
    return ka != kb ? ka < kb : a < b;
  });
  std::vector<std::uint8_t> s(static_cast<std::size_t>(w));
  for (std::uint32_t p : valid) {
    const std::uint32_t self = AaLookupTable::word_index(q.data() + p, w);
    // all alphabet^w words, last letter fastest
    std::fill(s.begin(), s.end(), 0);
    while (true) {
      int score = 0;
      for (int i = 0; i < w; ++i)
        score += sc[static_cast<std::size_t>(q[p + static_cast<std::size_t>(i)] * kMaxCodes +
                                             s[static_cast<std::size_t>(i)])];
      const std::uint32_t idx = AaLookupTable::word_index(s.data(), w);
      if (idx == self || (threshold > 0 && score >= threshold)) ref[idx].push_back(p);
      int i = w - 1;
      while (i >= 0 && ++s[static_cast<std::size_t>(i)] == alphabet) s[static_cast<std::size_t>(i--)] = 0;
      if (i < 0) break;
    }
  }
  return ref;
}

void expect_equal_to_brute_force(const Codes& q, const std::vector<MaskRun>& mask, const ScoringMatrix& m,
                                 int w, int threshold, const std::string& what) {
  SCOPED_TRACE(what + " " + m.name() + " w=" + std::to_string(w) + " T=" + std::to_string(threshold));
  const ScoreTable sc = blast_score_table(m);
  const AaLookupTable t = AaLookupTable::build(q, mask, m, w, threshold);
  const auto ref = brute_force(q, mask, sc, m.size(), w, threshold);
  std::size_t total = 0, mismatches = 0;
  for (std::uint32_t idx = 0; idx <= t.word_mask(); ++idx) {
    const auto& want = ref[idx];
    total += want.size();
    const bool has = idx < t.num_cells() && !t.hits(idx).empty();
    if (t.present(idx) != has || t.present(idx) != !want.empty()) ++mismatches;
    if (idx < t.num_cells()) {
      const auto got = t.hits(idx);
      if (!std::equal(got.begin(), got.end(), want.begin(), want.end())) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0U);
  EXPECT_EQ(t.total_hits(), total);
  EXPECT_GT(total, 0U);
}

TEST(LookupBruteForce, RandomQueries) {
  std::mt19937 rng(20261121);
  for (const char* name : {"BLOSUM62", "BLOSUM45", "BLOSUM80", "PAM30"}) {
    const ScoringMatrix m = ScoringMatrix::builtin(name);
    for (int w : {2, 3}) {
      const Codes q = random_query(rng, w == 2 ? 400 : 150);
      const auto mask = random_mask(rng, q.size());
      for (int threshold : {11, 13, blastp_default_threshold(name), 0})
        expect_equal_to_brute_force(q, mask, m, w, threshold, "random");
    }
  }
}

TEST(LookupBruteForce, WordSizeFourAndLowThreshold) {
  std::mt19937 rng(7);
  const Codes q = random_query(rng, 40);
  const auto mask = random_mask(rng, q.size());
  expect_equal_to_brute_force(q, mask, ScoringMatrix::builtin("BLOSUM62"), 4, 15, "w4");
  expect_equal_to_brute_force(q, {}, ScoringMatrix::builtin("BLOSUM62"), 2, 1, "low T");
}

std::vector<Codes> real_queries(std::size_t count) {
  SequenceReader reader((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string());
  std::vector<Codes> out;
  Sequence seq;
  // Take records of moderate length, including one with X, so the brute force stays fast.
  bool have_x = false;
  while (reader.next(seq) && out.size() < count) {
    const bool x = std::find(seq.residues.begin(), seq.residues.end(), kProteinUnknown) != seq.residues.end();
    if (seq.length() < 60 || seq.length() > 400) continue;
    if (out.size() + 1 == count && !have_x && !x) continue;
    have_x = have_x || x;
    out.push_back(seq.residues);
  }
  return out;
}

TEST(LookupBruteForce, RealQueries) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const auto queries = real_queries(3);
  ASSERT_EQ(queries.size(), 3U);
  std::mt19937 rng(3);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const Codes& q = queries[i];
    const auto mask = i == 0 ? std::vector<MaskRun>{} : random_mask(rng, q.size());
    const char* name = std::array{"BLOSUM62", "BLOSUM45", "PAM30"}[i];
    const ScoringMatrix m = ScoringMatrix::builtin(name);
    for (int threshold : {11, 13, 0}) {
      expect_equal_to_brute_force(q, mask, m, 2, threshold, "real " + std::to_string(i));
      if (q.size() <= 250) expect_equal_to_brute_force(q, mask, m, 3, threshold, "real " + std::to_string(i));
    }
    expect_equal_to_brute_force(q, mask, ScoringMatrix::builtin("BLOSUM80"), 3,
                                blastp_default_threshold("BLOSUM80"), "real " + std::to_string(i));
  }
}

// Offsets within a cell: ordered by the BLAST+ key of the query word, then by offset; within one
// query word ascending. The exact-only table puts every offset in exactly its own word's cell.
TEST(LookupOrder, CellsSortedByBlastKeyThenOffset) {
  std::mt19937 rng(11);
  const Codes q = random_query(rng, 3000);
  for (int threshold : {11, 0}) {
    const AaLookupTable t = AaLookupTable::build(q, {}, ScoringMatrix::builtin("BLOSUM62"), 3, threshold);
    std::size_t multi_word_cells = 0;
    for (std::uint32_t idx = 0; idx < t.num_cells(); ++idx) {
      const auto h = t.hits(idx);
      for (std::size_t i = 1; i < h.size(); ++i) {
        const std::uint32_t a = blast_word_key(q.data() + h[i - 1], 3),
                            b = blast_word_key(q.data() + h[i], 3);
        ASSERT_TRUE(a < b || (a == b && h[i - 1] < h[i])) << "cell " << idx << " at " << i;
        if (a != b) ++multi_word_cells;
      }
      if (threshold == 0) {
        for (std::uint32_t p : h) ASSERT_EQ(AaLookupTable::word_index(q.data() + p, 3), idx);
      }
    }
    if (threshold == 0) {
      EXPECT_EQ(t.total_hits(), q.size() - 2);
    } else {
      EXPECT_GT(multi_word_cells, 0U);  // the order across different query words was exercised
    }
  }
}

TEST(LookupEdge, ShortEmptyAndMaskedQueries) {
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  const Codes q = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(AaLookupTable::build(Codes{}, {}, m, 3, 11).total_hits(), 0U);
  EXPECT_EQ(AaLookupTable::build(Codes{0, 1}, {}, m, 3, 11).total_hits(), 0U);
  const std::vector<MaskRun> all = {{0, 100}};
  const AaLookupTable none = AaLookupTable::build(q, all, m, 3, 11);
  EXPECT_EQ(none.total_hits(), 0U);
  EXPECT_EQ(none.occupied_cells(), 0U);
  for (std::uint32_t i = 0; i <= none.word_mask(); ++i) ASSERT_FALSE(none.present(i));
  // Masks [5,6) and [2,3): word size 2 keeps offsets 0, 3 and 6; word size 3 keeps none.
  const std::vector<MaskRun> holes = {{5, 6}, {2, 3}};
  const AaLookupTable two = AaLookupTable::build(q, holes, m, 2, 0);
  EXPECT_EQ(two.indexed_words(), 3U);
  for (std::uint32_t p : {0U, 3U, 6U}) {
    const auto h = two.hits(AaLookupTable::word_index(q.data() + p, 2));
    EXPECT_TRUE(h.size() == 1 && h[0] == p) << p;
  }
  EXPECT_EQ(AaLookupTable::build(q, holes, m, 3, 0).indexed_words(), 0U);
  expect_equal_to_brute_force(q, holes, m, 2, 11, "holes");
  expect_equal_to_brute_force(q, {{5, 6}}, m, 3, 11, "hole");
}

TEST(LookupEdge, BadArguments) {
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  const Codes q = {0, 1, 2, 3};
  EXPECT_THROW(AaLookupTable::build(q, {}, m, 1, 11), Error);
  EXPECT_THROW(AaLookupTable::build(q, {}, m, 6, 11), Error);
  EXPECT_THROW(AaLookupTable::build(q, {}, m, 3, -1), Error);
  EXPECT_THROW(AaLookupTable::build(Codes{0, 27, 1}, {}, m, 2, 11), Error);
  EXPECT_THROW(blast_score_table(ScoringMatrix::dna(1, -2)), Error);
}

// 35,000 residues: arrays sized as documented; a sample of cells
// checked by scoring every query offset against them.
TEST(LookupScale, LongQuery) {
  std::mt19937 rng(35000);
  const Codes q = random_query(rng, 35000);
  const std::vector<MaskRun> mask = {{1000, 1500}, {20000, 20010}};
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  const AaLookupTable t = AaLookupTable::build(q, mask, m, 3, 11);
  EXPECT_EQ(t.presence().size(), std::size_t{1} << (15 - 6));
  EXPECT_EQ(t.starts().size(), std::size_t{t.num_cells()} + 1);
  EXPECT_LE(t.num_cells(), 1U << 15);
  EXPECT_EQ(t.indexed_words(), q.size() - 2 - (500 + 2) - (10 + 2));
  // hits are 4 bytes each: bound the table by an average neighbourhood of 200 words per offset
  EXPECT_LT(t.total_hits(), 200 * q.size());
  const ScoreTable sc = blast_score_table(m);
  for (int k = 0; k < 300; ++k) {
    std::uint8_t s[3];
    for (auto& c : s) c = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 19)(rng));
    const std::uint32_t idx = AaLookupTable::word_index(s, 3);
    std::vector<std::uint32_t> want;
    for (std::uint32_t p = 0; p + 3 <= q.size(); ++p) {
      if (word_masked(mask, p, 3)) continue;
      int score = 0;
      for (int i = 0; i < 3; ++i)
        score += sc[static_cast<std::size_t>(q[p + static_cast<std::uint32_t>(i)] * kMaxCodes + s[i])];
      if (score >= 11 || AaLookupTable::word_index(q.data() + p, 3) == idx) want.push_back(p);
    }
    std::sort(want.begin(), want.end(), [&](std::uint32_t a, std::uint32_t b) {
      const std::uint32_t ka = blast_word_key(q.data() + a, 3), kb = blast_word_key(q.data() + b, 3);
      return ka != kb ? ka < kb : a < b;
    });
    const auto got = t.hits(idx);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end())) << "cell " << idx;
  }
}

// ---------------------------------------------------------------------------------------------------
// BLAST+ 2.12's libblast.so as the oracle. Layouts as declared in include/algo/blast/core
// (blast_stat.h, blast_options.h, blast_aalookup.h, blast_def.h).

using Int2 = std::int16_t;
using Int4 = std::int32_t;
using Uint1 = std::uint8_t;
using Boolean = std::uint8_t;

struct BlastScoreMatrix {
  int** data;
  std::size_t ncols, nrows;
  double* freqs;
  double lambda;
};
struct BlastScoreBlk {  // leading members only; the library allocates it
  Boolean protein_alphabet;
  Uint1 alphabet_code;
  Int2 alphabet_size, alphabet_start;
  char* name;
  void* comments;
  BlastScoreMatrix* matrix;
};
struct LookupTableOptions {
  double threshold;
  int lut_type;
  Int4 word_size, mb_template_length, mb_template_type;
  char* phi_pattern;
  int program_number;
  std::uint32_t stride;
  Boolean db_filter;
  Uint1 max_db_word_count;
};
struct AaLookupBackboneCell {
  Int4 num_used;
  union {
    Int4 overflow_cursor;
    Int4 entries[3];
  } payload;
};
struct BlastAaLookupTable {
  Int4 threshold, mask, charsize, word_length, lut_word_length, alphabet_size, backbone_size, longest_chain;
  Int4** thin_backbone;
  int bone_type;
  void* thick_backbone;
  void* overflow;
  Int4 overflow_size;
  std::uint32_t* pv;
  Boolean use_pssm;
  void* scansub_callback;
  Int4 neighbor_matches, exact_matches;
};
struct SSeqRange {
  Int4 left, right;
};
struct BlastSeqLoc {
  BlastSeqLoc* next;
  SSeqRange* ssr;
};
struct BlastSequenceBlk {  // only `sequence` is read by the lookup code; the rest is zeroed room
  Uint1* sequence;
  unsigned char rest[256];
};

constexpr Uint1 kBlastAaCode = 11;  // BLASTAA_SEQ_CODE

class LibBlast {
 public:
  static const LibBlast* get() {
    static const LibBlast* lib = [] {
      // test::open_libblast(): nullptr when absent or under AddressSanitizer.
      if (void* h = test::open_libblast()) return static_cast<const LibBlast*>(new LibBlast(h));
      return static_cast<const LibBlast*>(nullptr);
    }();
    return lib;
  }

  BlastScoreBlk* (*score_blk_new)(Uint1, Int4);
  BlastScoreBlk* (*score_blk_free)(BlastScoreBlk*);
  Int2 (*matrix_fill)(BlastScoreBlk*, void*);
  Int4 (*lookup_new)(const LookupTableOptions*, BlastAaLookupTable**);
  void (*lookup_index)(BlastAaLookupTable*, Int4**, BlastSequenceBlk*, BlastSeqLoc*, Int4);
  Int4 (*lookup_finalize)(BlastAaLookupTable*, int);
  BlastAaLookupTable* (*lookup_free)(BlastAaLookupTable*);

 private:
  explicit LibBlast(void* h) {
    load(h, score_blk_new, "BlastScoreBlkNew");
    load(h, score_blk_free, "BlastScoreBlkFree");
    load(h, matrix_fill, "Blast_ScoreBlkMatrixFill");
    load(h, lookup_new, "BlastAaLookupTableNew");
    load(h, lookup_index, "BlastAaLookupIndexQuery");
    load(h, lookup_finalize, "BlastAaLookupFinalize");
    load(h, lookup_free, "BlastAaLookupTableDestruct");
  }
  template <typename F>
  static void load(void* h, F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(h, name));
    if (f == nullptr) throw std::runtime_error(std::string("libblast.so lacks ") + name);
  }
};

#define REQUIRE_LIBBLAST(lib)            \
  const LibBlast* lib = LibBlast::get(); \
  if ((lib) == nullptr) GTEST_SKIP() << "BLAST+'s libblast.so not found (set WARPSEARCH_LIBBLAST)"

// BLAST+'s own score block for a built-in matrix (released with score_blk_free).
BlastScoreBlk* blast_matrix(const LibBlast& lib, const char* name) {
  BlastScoreBlk* sbp = lib.score_blk_new(kBlastAaCode, 1);
  sbp->name = ::strdup(name);
  if (lib.matrix_fill(sbp, nullptr) != 0) {
    lib.score_blk_free(sbp);
    return nullptr;
  }
  return sbp;
}

// BLAST+'s lookup table for the query, as lists indexed by BLAST+ word index.
std::vector<std::vector<std::uint32_t>> blast_lookup(const LibBlast& lib, BlastScoreBlk* sbp, const Codes& q,
                                                     const std::vector<MaskRun>& mask, int w, int threshold) {
  // BLAST+'s query: ncbistdaa codes; lookup ranges: the complement of the (merged) mask, inclusive ends.
  std::vector<Uint1> seq(q.size() + 2, 0);
  for (std::size_t i = 0; i < q.size(); ++i) seq[i + 1] = ncbistdaa_code(q[i]);
  BlastSequenceBlk blk{};
  blk.sequence = seq.data() + 1;
  std::vector<bool> masked(q.size(), false);
  for (const MaskRun& r : mask)
    for (std::uint64_t i = r.begin; i < std::min<std::uint64_t>(r.end, q.size()); ++i) masked[i] = true;
  std::vector<SSeqRange> ranges;
  for (std::size_t i = 0; i < q.size();) {
    if (masked[i]) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < q.size() && !masked[j]) ++j;
    ranges.push_back({static_cast<Int4>(i), static_cast<Int4>(j - 1)});
    i = j;
  }
  std::vector<BlastSeqLoc> locs(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i)
    locs[i] = {i + 1 < ranges.size() ? &locs[i + 1] : nullptr, &ranges[i]};

  LookupTableOptions opt{};
  opt.threshold = threshold;
  opt.word_size = w;
  opt.program_number = 0x3;  // eBlastTypeBlastp
  BlastAaLookupTable* lut = nullptr;
  lib.lookup_new(&opt, &lut);
  lib.lookup_index(lut, sbp->matrix->data, &blk, locs.empty() ? nullptr : locs.data(), 0);
  lib.lookup_finalize(lut, 0);  // eBackbone: Int4 entries
  std::vector<std::vector<std::uint32_t>> cells(static_cast<std::size_t>(lut->backbone_size));
  const auto* bone = static_cast<const AaLookupBackboneCell*>(lut->thick_backbone);
  const auto* overflow = static_cast<const Int4*>(lut->overflow);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Int4 k = bone[i].num_used;
    const Int4* src = k <= 3 ? bone[i].payload.entries : overflow + bone[i].payload.overflow_cursor;
    for (Int4 j = 0; j < k; ++j) cells[i].push_back(static_cast<std::uint32_t>(src[j]));
  }
  lib.lookup_free(lut);
  return cells;
}

TEST(LookupLibBlast, ScoreTableMatchesBlast) {
  REQUIRE_LIBBLAST(lib);
  for (std::string_view name : ScoringMatrix::builtin_names()) {
    SCOPED_TRACE(std::string(name));
    BlastScoreBlk* sbp = blast_matrix(*lib, std::string(name).c_str());
    ASSERT_NE(sbp, nullptr);
    const ScoreTable t = blast_score_table(ScoringMatrix::builtin(name));
    for (std::uint8_t a = 0; a < kProteinCodes; ++a)
      for (std::uint8_t b = 0; b < kProteinCodes; ++b)
        ASSERT_EQ(t[static_cast<std::size_t>(a * kMaxCodes + b)],
                  sbp->matrix->data[ncbistdaa_code(a)][ncbistdaa_code(b)])
            << kProteinSymbols[a] << kProteinSymbols[b];
    lib->score_blk_free(sbp);
  }
}

void expect_equal_to_blast(const LibBlast& lib, const Codes& q, const std::vector<MaskRun>& mask,
                           const char* name, int w, int threshold, const std::string& what) {
  SCOPED_TRACE(what + " " + name + " w=" + std::to_string(w) + " T=" + std::to_string(threshold));
  BlastScoreBlk* sbp = blast_matrix(lib, name);
  ASSERT_NE(sbp, nullptr);
  const auto blast = blast_lookup(lib, sbp, q, mask, w, threshold);
  lib.score_blk_free(sbp);
  const AaLookupTable t = AaLookupTable::build(q, mask, ScoringMatrix::builtin(name), w, threshold);
  // Every one of our words against BLAST+'s cell of the same letters; totals equal, so BLAST+ has
  // nothing in cells of words we cannot spell (the gap letter).
  std::size_t blast_total = 0, mismatches = 0;
  for (const auto& c : blast) blast_total += c.size();
  std::vector<std::uint8_t> s(static_cast<std::size_t>(w), 0);
  while (true) {
    const auto got = t.hits(t.word_index(s.data()));
    const auto& want = blast[blast_word_key(s.data(), w)];
    if (!std::equal(got.begin(), got.end(), want.begin(), want.end())) ++mismatches;
    int i = w - 1;
    while (i >= 0 && ++s[static_cast<std::size_t>(i)] == kProteinCodes) s[static_cast<std::size_t>(i--)] = 0;
    if (i < 0) break;
  }
  EXPECT_EQ(mismatches, 0U);
  EXPECT_EQ(t.total_hits(), blast_total);
  EXPECT_GT(blast_total, 0U);
}

TEST(LookupLibBlast, RandomQueriesMatchBlast) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937 rng(99);
  for (const char* name : {"BLOSUM62", "BLOSUM45", "BLOSUM80", "PAM30", "PAM70", "BLOSUM90"}) {
    const Codes q = random_query(rng, 1200);
    const auto mask = random_mask(rng, q.size());
    for (int w : {2, 3})
      for (int threshold : {blastp_default_threshold(name), 13, 0})
        expect_equal_to_blast(*lib, q, mask, name, w, threshold, "random");
  }
  const Codes q = random_query(rng, 300);
  expect_equal_to_blast(*lib, q, {}, "BLOSUM62", 4, 13, "random");
}

TEST(LookupLibBlast, RealQueriesMatchBlast) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  REQUIRE_LIBBLAST(lib);
  SequenceReader reader((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string());
  Codes all;  // the first 40 queries end to end (about 15,000 residues), one run per query masked off
  std::vector<MaskRun> mask;
  Sequence seq;
  for (int i = 0; i < 40 && reader.next(seq); ++i) {
    if (i % 7 == 3) mask.push_back({all.size(), all.size() + seq.length()});
    all.insert(all.end(), seq.residues.begin(), seq.residues.end());
  }
  for (const char* name : {"BLOSUM62", "BLOSUM45", "PAM30"})
    for (int threshold : {blastp_default_threshold(name), 0})
      expect_equal_to_blast(*lib, all, mask, name, 3, threshold, "real");
}

// Default thresholds as blastp 2.12 reports them in a search strategy (skipped without blastp).
TEST(LookupDefaults, ThresholdsMatchBlastp) {
  if (std::system("blastp -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "blastp not installed";
  test::TempDir dir("ws_lookup");
  {
    std::ofstream f(dir / "q.fa");
    f << ">q\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEGLY"
         "\n";
  }
  for (std::string_view name : ScoringMatrix::builtin_names()) {
    const std::string strategy = dir / (std::string(name) + ".asn");
    const std::string cmd = "blastp -query " + (dir / "q.fa") + " -subject " + (dir / "q.fa") + " -matrix " +
                            std::string(name) + " -export_search_strategy " + strategy + " > /dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(strategy);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const std::size_t at = s.find("\"WordThreshold\"");
    ASSERT_NE(at, std::string::npos);
    const std::size_t num = s.find("integer", at);
    ASSERT_NE(num, std::string::npos);
    EXPECT_EQ(std::stoi(s.substr(num + 7)), blastp_default_threshold(name)) << name;
  }
}

}  // namespace
}  // namespace warpsearch::blast
