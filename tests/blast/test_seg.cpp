// test_seg.cpp: SEG masking (src/blast/seg.hpp) against BLAST+ 2.12.
//
// Oracles:
//   - `segmasker -outfmt interval` (BLAST+ 2.12, same code and defaults as blastp -seg yes: window 12,
//     locut 2.2, hicut 2.5) on every query of prot/mmseqs_QUERY500.fasta and the first 2000 records of
//     prot/mmseqs_DB20k.fasta: seg_segments must equal its raw list, order included; skipped when segmasker
//     is not installed.
//   - BLAST+'s libblast.so (dlopen, tests only): SeqBufferSeg with overlaps FALSE (segmasker's call) on
//     random low-complexity-rich sequences and several parameter sets, and the blastp path (overlaps TRUE,
//     then BlastSeqLocCombine) for seg_mask, compared as residue sets; skipped when libblast is absent.
//   - Handcrafted cases whose answer follows from the definition: empty / shorter-than-window sequences,
//     all-X, poly-Q runs, lowercase input, apply_mask.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blast/seg.hpp"
#include "libblast.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::blast {
namespace {

using Codes = std::vector<std::uint8_t>;

Codes encode(std::string_view letters) {
  Codes codes;
  for (const char c : letters) codes.push_back(Alphabet::protein().code(c).value());
  return codes;
}

// Residue set of a list of intervals as a per-position flag vector.
std::vector<bool> covered(const std::vector<Interval>& intervals, std::size_t length) {
  std::vector<bool> flags(length, false);
  for (const Interval& iv : intervals)
    for (auto k = iv.begin; k < iv.end; ++k) flags[static_cast<std::size_t>(k)] = true;
  return flags;
}

std::string show(const std::vector<Interval>& intervals) {
  std::ostringstream os;
  for (const Interval& iv : intervals) os << "[" << iv.begin << "," << iv.end << ") ";
  return os.str();
}

// ---------------------------------------------------------------------------------------------------
// libblast.so as an oracle. Layouts as declared in BLAST+'s include/algo/blast/core (blast_seg.h,
// blast_def.h).

struct BlastSegParameters {
  std::int32_t window;
  double locut;
  double hicut;
  std::int32_t period;
  std::int32_t hilenmin;
  std::uint8_t overlaps;  // Boolean
  std::int32_t maxtrim;
  std::int32_t maxbogus;
};
struct BlastSSeqRange {
  std::int32_t left;
  std::int32_t right;  // inclusive
};
struct BlastSeqLoc {
  BlastSeqLoc* next;
  BlastSSeqRange* ssr;
};

class LibBlastSeg {
 public:
  static const LibBlastSeg* get() {
    static const LibBlastSeg* lib = [] {
      // test::open_libblast(): nullptr when absent or under AddressSanitizer.
      if (void* h = test::open_libblast()) return static_cast<const LibBlastSeg*>(new LibBlastSeg(h));
      return static_cast<const LibBlastSeg*>(nullptr);
    }();
    return lib;
  }

  // BLAST+'s segments of our codes: overlaps FALSE is segmasker's call (raw list, in order); overlaps TRUE
  // plus BlastSeqLocCombine is blastp's (BlastSetUp_Filter, s_GetFilteringLocationsForOneContext).
  // Parameters are set as BlastSetUp_Filter sets them (only positive values replace the defaults).
  std::vector<Interval> segments(const Codes& codes, const SegParams& params, bool blastp_path) const {
    std::vector<std::uint8_t> stdaa;
    stdaa.reserve(codes.size() + 1);
    for (const std::uint8_t c : codes) stdaa.push_back(kToNcbiStdaa[c]);
    stdaa.push_back(0);  // BLAST+'s buffers end with a sentinel (NULLB); SEG may peek at it
    BlastSegParameters* sp = params_new();
    sp->overlaps = blastp_path ? 1 : 0;
    if (params.window > 0) sp->window = params.window;
    if (params.locut > 0.0) sp->locut = params.locut;
    if (params.hicut > 0.0) sp->hicut = params.hicut;
    BlastSeqLoc* locs = nullptr;
    const int status = seg(stdaa.data(), static_cast<std::int32_t>(codes.size()), 0, sp, &locs);
    params_free(sp);
    EXPECT_EQ(status, 0);
    if (blastp_path) combine(&locs, 0);
    std::vector<Interval> out;
    for (BlastSeqLoc* l = locs; l != nullptr; l = l->next)
      out.push_back(Interval{l->ssr->left, l->ssr->right + 1});
    loc_free(locs);
    return out;
  }

 private:
  // Our codes ACDEFGHIKLMNPQRSTVWY B J Z O U X * in NCBIstdaa.
  static constexpr std::array<std::uint8_t, kProteinCodes> kToNcbiStdaa = {
      1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 2, 27, 23, 26, 24, 21, 25};

  explicit LibBlastSeg(void* h) {
    load(h, params_new, "SegParametersNewAa");
    load(h, params_free, "SegParametersFree");
    load(h, seg, "SeqBufferSeg");
    load(h, combine, "BlastSeqLocCombine");
    load(h, loc_free, "BlastSeqLocFree");
    load(h, lnfact, "lnfact");
    load(h, log_win10, "log_win10");
    load(h, seg_window, "kSegWindow");
    load(h, seg_locut, "kSegLocut");
    load(h, seg_hicut, "kSegHicut");
  }
  template <typename F>
  static void load(void* h, F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(h, name));
    if (f == nullptr) throw std::runtime_error(std::string("libblast.so lacks ") + name);
  }

  BlastSegParameters* (*params_new)() = nullptr;
  void (*params_free)(BlastSegParameters*) = nullptr;
  std::int16_t (*seg)(std::uint8_t*, std::int32_t, std::int32_t, BlastSegParameters*,
                      BlastSeqLoc**) = nullptr;
  void (*combine)(BlastSeqLoc**, std::int32_t) = nullptr;
  BlastSeqLoc* (*loc_free)(BlastSeqLoc*) = nullptr;

 public:
  // SEG's data (blast_seg.c): the ln n! table (n = 0..10000), ln(k/10) (k = 0..10), the default parameters.
  const double* lnfact = nullptr;
  const double* log_win10 = nullptr;
  const int* seg_window = nullptr;
  const double* seg_locut = nullptr;
  const double* seg_hicut = nullptr;
};

#define REQUIRE_LIBBLAST(lib)                  \
  const LibBlastSeg* lib = LibBlastSeg::get(); \
  if ((lib) == nullptr) GTEST_SKIP() << "BLAST+'s libblast.so not found (set WARPSEARCH_LIBBLAST)"

// Random sequences rich in low-complexity stretches: concatenated pieces drawn from small sub-alphabets,
// short tandem repeats, uniform residues, and sprinkles or runs of bogus codes (B J Z O U X *).
Codes random_protein(std::mt19937_64& rng, std::size_t length) {
  Codes out;
  std::uniform_int_distribution<int> any20(0, 19);
  std::uniform_int_distribution<int> bogus(20, kProteinCodes - 1);
  std::uniform_int_distribution<int> kind(0, 5);
  while (out.size() < length) {
    const std::size_t piece = std::min<std::size_t>(length - out.size(), 5 + rng() % 80);
    switch (kind(rng)) {
      case 0:  // uniform
        for (std::size_t k = 0; k < piece; ++k) out.push_back(static_cast<std::uint8_t>(any20(rng)));
        break;
      case 1:
      case 2: {  // small sub-alphabet, sometimes with a bogus residue
        std::vector<std::uint8_t> sub(1 + rng() % 4);
        for (auto& s : sub) s = static_cast<std::uint8_t>(any20(rng));
        for (std::size_t k = 0; k < piece; ++k) {
          out.push_back(rng() % 23 == 0 ? static_cast<std::uint8_t>(bogus(rng)) : sub[rng() % sub.size()]);
        }
        break;
      }
      case 3: {  // tandem repeat of a short motif with point changes
        std::vector<std::uint8_t> motif(1 + rng() % 6);
        for (auto& s : motif) s = static_cast<std::uint8_t>(any20(rng));
        for (std::size_t k = 0; k < piece; ++k) {
          out.push_back(rng() % 9 == 0 ? static_cast<std::uint8_t>(any20(rng)) : motif[k % motif.size()]);
        }
        break;
      }
      case 4: {  // run of bogus residues (X mostly)
        const std::size_t run = std::min<std::size_t>(piece, 1 + rng() % 6);
        for (std::size_t k = 0; k < run; ++k)
          out.push_back(rng() % 2 == 0 ? kProteinUnknown : static_cast<std::uint8_t>(bogus(rng)));
        break;
      }
      default: {  // two-letter alternation with noise
        const auto a = static_cast<std::uint8_t>(any20(rng));
        const auto b = static_cast<std::uint8_t>(any20(rng));
        for (std::size_t k = 0; k < piece; ++k)
          out.push_back(rng() % 5 == 0 ? static_cast<std::uint8_t>(any20(rng)) : (k % 2 ? a : b));
        break;
      }
    }
  }
  return out;
}

TEST(SegOracle, TablesAndDefaultsAreLibblasts) {
  REQUIRE_LIBBLAST(lib);
  for (int n = 0; n <= 10000; ++n) ASSERT_EQ(detail::seg_ln_factorial(n), lib->lnfact[n]) << n;
  for (int k = 0; k <= 10; ++k) ASSERT_EQ(detail::seg_ln_tenth(k), lib->log_win10[k]) << k;
  const SegParams defaults;
  EXPECT_EQ(defaults.window, *lib->seg_window);
  EXPECT_EQ(defaults.locut, *lib->seg_locut);
  EXPECT_EQ(defaults.hicut, *lib->seg_hicut);
}

// Entropy of a window whose ten canonical residues are two letters five times each, as SEG computes it
// from its ln(k/10) table (slightly above 1 bit; log() gives 1 bit), and a cut halfway between the two: with
// it, such windows trigger only if the table is NOT used.
double five_five_cut() {
  const double term = 5.0 * detail::seg_ln_tenth(5) / 0.69314718055994530941723212145818;
  const double table_entropy = std::fabs((term + term) / 10.0);
  return (table_entropy + 1.0) / 2.0;
}

TEST(SegEdge, TenResidueWindowsUseTheTable) {
  const double cut = five_five_cut();
  ASSERT_GT(cut, 1.0);
  Codes alternating;
  for (int k = 0; k < 40; ++k) alternating.push_back(encode(k % 2 ? "Q" : "S")[0]);
  EXPECT_TRUE(seg_segments(alternating, SegParams{10, cut, cut}).empty());
  EXPECT_FALSE(seg_segments(alternating, SegParams{10, 1.001, 1.001}).empty());
  // (The oracle test below also runs windows 10 and 12 (two bogus + ten canonical) at this cut.)
}

TEST(SegOracle, RandomSequencesMatchLibblast) {
  REQUIRE_LIBBLAST(lib);
  const double cut = five_five_cut();
  const std::vector<SegParams> param_sets = {
      {},
      {10, 2.2, 2.5},
      {8, 1.5, 1.9},
      {12, 3.0, 3.3},
      {25, 3.0, 3.4},
      {5, 1.0, 1.5},
      {12, 2.6, 2.4},
      {0, -1.0, 0.0},
      {2, 0.5, 0.8},
      {10, cut, cut},
      {12, cut, cut},
  };
  std::mt19937_64 rng(20261121);
  std::size_t segments_seen = 0;
  for (std::size_t p = 0; p < param_sets.size(); ++p) {
    const SegParams& params = param_sets[p];
    const int rounds = p == 0 ? 1500 : 250;
    for (int r = 0; r < rounds; ++r) {
      const Codes seq = random_protein(rng, rng() % 700);
      const std::vector<Interval> ours = seg_segments(seq, params);
      const std::vector<Interval> theirs = lib->segments(seq, params, false);
      ASSERT_EQ(ours, theirs) << "params set " << p << " round " << r << "\nours   " << show(ours)
                              << "\ntheirs " << show(theirs);
      segments_seen += ours.size();
      const std::vector<Interval> mask = seg_mask(seq, params);
      ASSERT_EQ(covered(mask, seq.size()), covered(lib->segments(seq, params, true), seq.size()))
          << "params set " << p << " round " << r;
      for (std::size_t k = 1; k < mask.size(); ++k) ASSERT_LT(mask[k - 1].end, mask[k].begin);
    }
  }
  EXPECT_GT(segments_seen, 5000u);  // the generator does exercise the masking
}

// Long segments: the trim of a segment longer than 10000 residues takes ln n! from Stirling's formula.
TEST(SegOracle, LongLowComplexityRegionsMatchLibblast) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937_64 rng(7);
  for (const std::size_t run : {60u, 997u, 10020u, 12500u}) {
    Codes seq = random_protein(rng, 200);
    for (std::size_t k = 0; k < run; ++k) seq.push_back(rng() % 7 == 0 ? encode("S")[0] : encode("Q")[0]);
    const Codes tail = random_protein(rng, 150);
    seq.insert(seq.end(), tail.begin(), tail.end());
    ASSERT_EQ(seg_segments(seq), lib->segments(seq, {}, false)) << "run " << run;
  }
}

// ---------------------------------------------------------------------------------------------------
// segmasker on real data.

bool have_program(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

std::string run_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

// `segmasker -outfmt interval`: per record a '>' header line, then "a - b" lines (0-based, inclusive).
std::vector<std::vector<Interval>> parse_intervals(const std::string& text) {
  std::vector<std::vector<Interval>> records;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '>') {
      records.emplace_back();
      continue;
    }
    long long a = 0;
    long long b = 0;
    if (records.empty() || std::sscanf(line.c_str(), "%lld - %lld", &a, &b) != 2) {
      ADD_FAILURE() << "unexpected segmasker line: " << line;
      continue;
    }
    records.back().push_back(Interval{a, b + 1});
  }
  return records;
}

std::vector<Sequence> read_proteins(const std::string& path, std::size_t max_records) {
  ReaderOptions options;
  options.alphabet = AlphabetKind::kProtein;
  SequenceReader reader(path, options);
  std::vector<Sequence> out;
  Sequence seq;
  while (out.size() < max_records && reader.next(seq)) out.push_back(seq);
  return out;
}

void expect_segmasker_parity(const std::string& relpath, std::size_t max_records) {
  const std::string path = (test::testdata_dir() / relpath).string();
  const std::vector<Sequence> seqs = read_proteins(path, max_records);
  const std::string command = "awk -v max=" + std::to_string(max_records) +
                              " '/^>/ { if (++n > max) exit } { print }' '" + path +
                              "' | segmasker -outfmt interval 2>/dev/null";
  const std::vector<std::vector<Interval>> expected = parse_intervals(run_output(command));
  ASSERT_EQ(expected.size(), seqs.size()) << command;
  std::size_t masked = 0;
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    const std::vector<Interval> ours = seg_segments(seqs[r].residues);
    EXPECT_EQ(ours, expected[r]) << relpath << " record " << r << " " << seqs[r].name << "\nours      "
                                 << show(ours) << "\nsegmasker " << show(expected[r]);
    for (const Interval& iv : seg_mask(seqs[r].residues))
      masked += static_cast<std::size_t>(iv.end - iv.begin);
  }
  EXPECT_GT(masked, 0u);
}

TEST(SegSegmasker, Query500MatchesSegmasker) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  if (!have_program("segmasker")) GTEST_SKIP() << "segmasker (BLAST+) not installed";
  expect_segmasker_parity("prot/mmseqs_QUERY500.fasta", 500);
}

TEST(SegSegmasker, Db20kFirst2000MatchSegmasker) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_program("segmasker")) GTEST_SKIP() << "segmasker (BLAST+) not installed";
  expect_segmasker_parity("prot/mmseqs_DB20k.fasta", 2000);
}

// ---------------------------------------------------------------------------------------------------
// Handcrafted cases.

TEST(SegEdge, ShorterThanWindowIsNeverMasked) {
  EXPECT_TRUE(seg_segments({}).empty());
  for (std::size_t n = 1; n < 12; ++n) {
    const Codes polyq(n, encode("Q")[0]);
    EXPECT_TRUE(seg_segments(polyq).empty()) << n;
    EXPECT_TRUE(seg_mask(polyq).empty()) << n;
  }
  // A smaller window makes the same residues maskable.
  const Codes polyq(8, encode("Q")[0]);
  EXPECT_EQ(seg_mask(polyq, SegParams{8, 2.2, 2.5}), (std::vector<Interval>{{0, 8}}));
}

TEST(SegEdge, AllBogusIsNeverMasked) {
  // Windows with more than two bogus residues have no entropy and cannot trigger.
  for (const char c : std::string("XBZJOU*")) {
    EXPECT_TRUE(seg_segments(encode(std::string(60, c))).empty()) << c;
  }
  // Exactly two X per window still triggers (the remaining ten Q: entropy 0).
  EXPECT_FALSE(seg_segments(encode("QQQQQXQQQQQXQQQQQXQQQQQX")).empty());
}

TEST(SegEdge, PolyQRunsAreMaskedWhole) {
  // A run of one residue has entropy 0 in every window, and among its sub-ranges the longest has the
  // smallest probability (ln P = (1 - len) ln 20), so the whole run is the segment.
  for (const std::size_t n : {12u, 13u, 40u, 75u, 300u}) {
    EXPECT_EQ(seg_segments(Codes(n, encode("Q")[0])),
              (std::vector<Interval>{{0, static_cast<std::int64_t>(n)}}))
        << n;
  }
  // A poly-Q run inside complex sequence is masked (and at least its core is), the flanks stay unmasked.
  const std::string left = "MKTAYIAKQRISFVKSHFSRWLEERLGLIEVNAPILSRVGDGT";
  const std::string right = "DNLRAVEAERKLAEEIRRHFMWYCP";
  const Codes seq = encode(left + std::string(25, 'Q') + right);
  const std::vector<Interval> mask = seg_mask(seq);
  ASSERT_EQ(mask.size(), 1u) << show(mask);
  EXPECT_LE(mask[0].begin, static_cast<std::int64_t>(left.size()));
  EXPECT_GE(mask[0].end, static_cast<std::int64_t>(left.size() + 25));
  EXPECT_GT(mask[0].begin, 20);
  EXPECT_LT(mask[0].end, static_cast<std::int64_t>(seq.size()) - 10);
}

TEST(SegEdge, LowercaseIsSeggedLikeUppercase) {
  const test::TempDir dir("ws_seg");
  const std::string upper =
      "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQQQQQQQQQQQQQQQQQQQDNLRAVEAERKLAEEQRRHF";
  std::string mixed = upper;
  for (std::size_t k = 30; k < 70; ++k)
    mixed[k] = static_cast<char>(std::tolower(static_cast<unsigned char>(mixed[k])));
  {
    std::FILE* f = std::fopen((dir / "q.fa").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, ">upper\n%s\n>mixed\n%s\n", upper.c_str(), mixed.c_str());
    std::fclose(f);
  }
  const std::vector<Sequence> seqs = read_proteins(dir / "q.fa", 2);
  ASSERT_EQ(seqs.size(), 2u);
  EXPECT_FALSE(seqs[1].soft_mask.empty());  // the reader records the lowercase run, SEG ignores it
  const std::vector<Interval> mask = seg_mask(seqs[0].residues);
  EXPECT_FALSE(mask.empty());
  EXPECT_EQ(seg_mask(seqs[1].residues), mask);
  EXPECT_EQ(seg_segments(seqs[1].residues), seg_segments(seqs[0].residues));
  if (have_program("segmasker")) {  // and segmasker agrees on both records
    const auto expected =
        parse_intervals(run_output("segmasker -outfmt interval -in '" + (dir / "q.fa") + "' 2>/dev/null"));
    ASSERT_EQ(expected.size(), 2u);
    EXPECT_EQ(expected[0], seg_segments(seqs[0].residues));
    EXPECT_EQ(expected[1], seg_segments(seqs[1].residues));
  }
}

TEST(SegEdge, MaskIsTheUnionOfSegments) {
  std::mt19937_64 rng(99);
  std::size_t overlapping = 0;
  for (int r = 0; r < 300; ++r) {
    const Codes seq = random_protein(rng, 50 + rng() % 500);
    const std::vector<Interval> segs = seg_segments(seq);
    const std::vector<Interval> mask = seg_mask(seq);
    EXPECT_EQ(covered(mask, seq.size()), covered(segs, seq.size()));
    for (std::size_t k = 0; k < mask.size(); ++k) {
      EXPECT_LT(mask[k].begin, mask[k].end);
      if (k > 0) {
        EXPECT_LT(mask[k - 1].end, mask[k].begin);  // sorted, disjoint, not adjacent
      }
    }
    overlapping += segs.size() - mask.size();
  }
  EXPECT_GT(overlapping, 0u);  // some segment lists did overlap or touch
}

TEST(SegEdge, ApplyMaskWritesX) {
  Codes seq = encode("MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGT");
  const Codes original = seq;
  const std::vector<Interval> intervals = {{2, 5}, {10, 10}, {40, 44}};
  apply_mask(seq, intervals);
  for (std::size_t k = 0; k < seq.size(); ++k) {
    const bool inside = (k >= 2 && k < 5) || (k >= 40 && k < 44);
    EXPECT_EQ(seq[k], inside ? kProteinUnknown : original[k]) << k;
  }
  EXPECT_THROW(apply_mask(seq, std::vector<Interval>{{40, 45}}), Error);
  EXPECT_THROW(apply_mask(seq, std::vector<Interval>{{-1, 3}}), Error);
  // Masking what SEG found leaves a sequence SEG no longer masks (all-X windows cannot trigger).
  Codes polyq = encode("MKTAYIAKQRISFVKSHFSRWLEERLGLIEVNAPILSRVGDGT" + std::string(30, 'Q') +
                       "DNLRAVEAERKLAEEIRRHFMWYCP");
  apply_mask(polyq, seg_mask(polyq));
  EXPECT_TRUE(seg_mask(polyq).empty());
}

}  // namespace
}  // namespace warpsearch::blast
