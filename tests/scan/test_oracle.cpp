// test_oracle.cpp: the scan engines against independent Smith-Waterman implementations on real sequence,
// and the planted-copy benchmark data of scripts/make_scan_data.sh against the Scanner.
//
//   ScanOracleParasail  the best score of reference_scan() (largest column record) and the Scanner's best
//                       hit per strand / per target sequence equal parasail's optimal local score
//                       (parasail_sw_striped_32): human vs mouse mitochondrial genomes on both strands
//                       (minus: the reverse complement of the query), globin and UniProt protein pairs
//                       with BLOSUM62 11/1, one globin query against all of globins45 through the Scanner.
//   ScanOracleWater     EMBOSS water's reported Score equals the reference's best score on kbp-sized DNA
//                       pairs (both strands) and protein pairs (skipped when water is not installed).
//   ScanOracleData      make_scan_data.sh plants mutated copies (5-10 % substitutions, indels) of a chrX
//                       query in a 1 Mbp chrX window: the Scanner's first reports are exactly the planted
//                       copies (strand, >= 90 % overlap with the planted interval, >= 90 % of the query),
//                       and its best score per strand equals parasail's.
// Scoring conversions: parasail's and water's gap open is the cost of a length-1 gap, our open + extend;
// their extend is ours. Both score with a copy of our substitution table (parasail_matrix_set_value over
// our alphabet's symbols; a matrix file in EMBOSS format for water), so ambiguity codes score as ours: any
// pair with R..N is a mismatch, N/N included (parasail_matrix_create("ACGT...N", 5, -3) would score N/N
// as a match). The real inputs have no ambiguity codes; lowercase letters are ordinary residues here.
// Inputs are sized for about 1.5e9 reference/CPU-engine cells in all (a few seconds per 1e9 cells).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "scan/model.hpp"
#include "scan/reference.hpp"
#include "scan/strand.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scan.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

#ifdef WARPSEARCH_HAVE_PARASAIL
#include <parasail.h>
#endif

namespace warpsearch::scan {
namespace {

using Codes = std::vector<std::uint8_t>;
using test::TempDir;

const ScoringMatrix& dna_matrix() {
  static const ScoringMatrix m = ScoringMatrix::dna(5, -3);
  return m;
}
const ScoringMatrix& blosum62() {
  static const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  return m;
}
constexpr GapCosts kDnaGaps{8, 1};
constexpr GapCosts kProteinGaps{11, 1};

std::vector<Sequence> read_all(const std::string& path, AlphabetKind kind) {
  SequenceReader reader(path, ReaderOptions{.alphabet = kind});
  std::vector<Sequence> seqs;
  Sequence s;
  while (reader.next(s)) seqs.push_back(s);
  return seqs;
}

Sequence read_first(const std::string& path, AlphabetKind kind) {
  std::vector<Sequence> all = read_all(path, kind);
  if (all.empty()) throw std::runtime_error("no sequence in " + path);
  return all.front();
}

// One shell word.
std::string quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string data(const std::string& relpath) { return (test::testdata_dir() / relpath).string(); }

Codes slice(const Codes& c, std::size_t begin, std::size_t end) {
  return {c.begin() + static_cast<std::ptrdiff_t>(begin), c.begin() + static_cast<std::ptrdiff_t>(end)};
}

const Codes& longest_residues(const std::vector<Sequence>& seqs) {
  return std::max_element(seqs.begin(), seqs.end(),
                          [](const Sequence& a, const Sequence& b) { return a.length() < b.length(); })
      ->residues;
}

std::string letters(const Codes& codes, AlphabetKind kind) {
  const Alphabet a(kind);
  std::string s;
  s.reserve(codes.size());
  for (const std::uint8_t c : codes) s += a.symbol(c);
  return s;
}

// The best score of the whole table: the largest column record.
std::int32_t reference_best(const ScoringMatrix& matrix, GapCosts gaps, const Codes& query,
                            const Codes& target) {
  const ScanModel model = ScanModel::make(matrix, gaps);
  std::int32_t best = 0;
  for (const ColumnRecord& r : reference_scan(model, query, target)) best = std::max(best, r.score);
  return best;
}

#ifdef WARPSEARCH_HAVE_PARASAIL
constexpr bool kHaveParasail = true;

// parasail's optimal local score with a copy of our substitution table.
int parasail_best(const ScoringMatrix& m, GapCosts gaps, const Codes& query, const Codes& target) {
  const std::string symbols(Alphabet(m.alphabet()).symbols());
  parasail_matrix_t* matrix = parasail_matrix_create(symbols.c_str(), 0, 0);
  for (int a = 0; a < m.size(); ++a)
    for (int b = 0; b < m.size(); ++b)
      parasail_matrix_set_value(matrix, a, b,
                                m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
  const std::string q = letters(query, m.alphabet()), t = letters(target, m.alphabet());
  parasail_result_t* r =
      parasail_sw_striped_32(q.data(), static_cast<int>(q.size()), t.data(), static_cast<int>(t.size()),
                             gaps.open + gaps.extend, gaps.extend, matrix);
  const int score = parasail_result_get_score(r);
  parasail_result_free(r);
  parasail_matrix_free(matrix);
  return score;
}
#else
constexpr bool kHaveParasail = false;
int parasail_best(const ScoringMatrix&, GapCosts, const Codes&, const Codes&) {
  ADD_FAILURE() << "parasail_best called without parasail";
  return -1;
}
#endif

#define WS_REQUIRE_PARASAIL()                                                                               \
  do {                                                                                                      \
    if (!kHaveParasail) GTEST_SKIP() << "built without parasail (install libparasail-dev and reconfigure)"; \
  } while (0)

// The best score of the Scanner's hits satisfying pred (hits are ranked, so the first one), or nullopt.
template <typename Pred>
std::optional<std::int32_t> first_hit_score(const QueryResult& r, Pred pred) {
  for (const Hit& h : r.hits)
    if (pred(h)) return h.score;
  return std::nullopt;
}

// --- parasail -----------------------------------------------------------------------------------

TEST(ScanOracleParasail, MitochondriaHumanVsMouseBothStrands) {
  WS_REQUIRE_TESTDATA("dna/humanMito.fa");
  WS_REQUIRE_TESTDATA("dna/mouseMito.fa");
  WS_REQUIRE_PARASAIL();
  const Codes human = read_first(data("dna/humanMito.fa"), AlphabetKind::kDna).residues;
  const Codes mouse = read_first(data("dna/mouseMito.fa"), AlphabetKind::kDna).residues;
  ASSERT_EQ(human.size(), 16571u);
  ASSERT_EQ(mouse.size(), 16299u);
  const Codes human_rc = reverse_complement(human);
  // The two strands' reference scans run side by side (2.7e8 cells each).
  std::int32_t plus = 0, minus = 0;
  std::thread other([&] { minus = reference_best(dna_matrix(), kDnaGaps, human_rc, mouse); });
  plus = reference_best(dna_matrix(), kDnaGaps, human, mouse);
  other.join();
  EXPECT_EQ(plus, parasail_best(dna_matrix(), kDnaGaps, human, mouse));
  EXPECT_EQ(minus, parasail_best(dna_matrix(), kDnaGaps, human_rc, mouse));
  EXPECT_GT(plus, 10000);  // homologous genomes: a long alignment on the plus strand
  EXPECT_LT(minus, plus);
}

TEST(ScanOracleParasail, ProteinPairsBlosum62) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_PARASAIL();
  std::vector<std::pair<Codes, Codes>> pairs;
  // Every globin against the next three (homologs, ~150 aa).
  const std::vector<Sequence> globins = read_all(data("prot/globins45.fa"), AlphabetKind::kProtein);
  ASSERT_EQ(globins.size(), 45u);
  for (std::size_t i = 0; i < globins.size(); ++i)
    for (std::size_t d = 1; d <= 3; ++d)
      pairs.emplace_back(globins[i].residues, globins[(i + d) % globins.size()].residues);
  // UniProt queries against unrelated database sequences (random-level scores, X and rare letters), and
  // the longest query against a few of them.
  const std::vector<Sequence> queries = read_all(data("prot/mmseqs_QUERY500.fasta"), AlphabetKind::kProtein);
  std::vector<Sequence> db;
  {
    SequenceReader reader(data("prot/mmseqs_DB20k.fasta"), ReaderOptions{.alphabet = AlphabetKind::kProtein});
    Sequence s;
    while (db.size() < 40 && reader.next(s)) db.push_back(s);
  }
  ASSERT_GE(queries.size(), 40u);
  ASSERT_EQ(db.size(), 40u);
  for (std::size_t i = 0; i < 40; ++i) pairs.emplace_back(queries[i].residues, db[i].residues);
  const Codes& longest = longest_residues(queries);
  for (std::size_t i = 0; i < 5; ++i) pairs.emplace_back(longest, db[i].residues);

  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const auto& [q, t] = pairs[p];
    EXPECT_EQ(reference_best(blosum62(), kProteinGaps, q, t), parasail_best(blosum62(), kProteinGaps, q, t))
        << "pair " << p << " (" << q.size() << " x " << t.size() << ")";
  }
}

// One globin against all 45 (a multi-sequence target file) through the public Scanner: the first hit
// of each target sequence is its best alignment, whose score parasail computes pair by pair.
TEST(ScanOracleParasail, ScannerProteinBestHitPerTarget) {
  WS_REQUIRE_TESTDATA("prot/HBB_HUMAN");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_PARASAIL();
  const Sequence query = read_first(data("prot/HBB_HUMAN"), AlphabetKind::kProtein);
  const std::vector<Sequence> targets = read_all(data("prot/globins45.fa"), AlphabetKind::kProtein);
  Config config;
  config.matrix = blosum62();
  config.gaps = kProteinGaps;
  config.top = 10000;  // every target sequence's best hit is reported
  config.device = DeviceMode::kCpu;
  config.strands = StrandMode::kPlus;
  Scanner scanner(config);
  const QueryResult r = scanner.scan(query, data("prot/globins45.fa"));
  ASSERT_EQ(r.targets.size(), targets.size());
  for (std::uint32_t s = 0; s < targets.size(); ++s) {
    const std::optional<std::int32_t> best =
        first_hit_score(r, [s](const Hit& h) { return h.target_index == s; });
    ASSERT_TRUE(best.has_value()) << targets[s].name;
    EXPECT_EQ(*best, parasail_best(blosum62(), kProteinGaps, query.residues, targets[s].residues))
        << targets[s].name;
  }
}

// --- EMBOSS water ---------------------------------------------------------------------------------

bool have_water() { return std::system("command -v water >/dev/null 2>&1") == 0; }

// Our substitution table as an EMBOSS matrix file (a symbol header row, then one row per symbol).
void write_emboss_matrix(const ScoringMatrix& m, const std::string& path) {
  const std::string symbols(Alphabet(m.alphabet()).symbols());
  std::ofstream out(path);
  out << "# " << m.name() << " as scored by warpsearch\n   ";
  for (const char c : symbols) out << "  " << c;
  out << '\n';
  for (int a = 0; a < m.size(); ++a) {
    out << symbols[static_cast<std::size_t>(a)];
    for (int b = 0; b < m.size(); ++b) {
      const int v = m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
      out << (v < -9 ? " " : v < 0 || v > 9 ? "  " : "   ") << v;
    }
    out << '\n';
  }
}

// water's "# Score:" of the pair; throws when water fails.
double water_score(const ScoringMatrix& m, GapCosts gaps, const Codes& query, const Codes& target) {
  const TempDir dir("scan_water");
  const std::string a = dir / "a.fa", b = dir / "b.fa", mat = dir / "matrix", out = dir / "water.out";
  std::ofstream(a) << ">a\n" << letters(query, m.alphabet()) << '\n';
  std::ofstream(b) << ">b\n" << letters(target, m.alphabet()) << '\n';
  write_emboss_matrix(m, mat);
  const std::string cmd = "water -auto -asequence " + a + " -bsequence " + b + " -datafile " + mat +
                          " -gapopen " + std::to_string(gaps.open + gaps.extend) + " -gapextend " +
                          std::to_string(gaps.extend) + " -outfile " + out + " >" + (dir / "log") + " 2>&1";
  if (std::system(cmd.c_str()) != 0)
    throw std::runtime_error("water failed: " + test::read_file(dir / "log"));
  std::istringstream report(test::read_file(out));
  for (std::string line; std::getline(report, line);)
    if (line.rfind("# Score:", 0) == 0) return std::stod(line.substr(8));
  throw std::runtime_error("no Score line in water's report");
}

TEST(ScanOracleWater, DnaPairsBothStrands) {
  WS_REQUIRE_TESTDATA("dna/humanMito.fa");
  WS_REQUIRE_TESTDATA("dna/mouseMito.fa");
  WS_REQUIRE_TESTDATA("dna/ce2_chrX.fa");
  if (!have_water()) GTEST_SKIP() << "EMBOSS water not installed (Debian: emboss)";
  const Codes human = read_first(data("dna/humanMito.fa"), AlphabetKind::kDna).residues;
  const Codes mouse = read_first(data("dna/mouseMito.fa"), AlphabetKind::kDna).residues;
  std::vector<std::pair<Codes, Codes>> pairs = {
      {slice(human, 0, 3000), slice(mouse, 0, 3000)},
      {slice(human, 6000, 9000), slice(mouse, 5500, 9500)},
      {reverse_complement(slice(human, 12000, 14500)), slice(mouse, 11500, 15000)},  // minus strand
      {slice(human, 2000, 4000), reverse_complement(slice(mouse, 1000, 5000))},
  };
  // chrX against itself a few kbp further on: repeats and low-complexity stretches, unrelated otherwise.
  {
    SequenceReader reader(data("dna/ce2_chrX.fa"), ReaderOptions{.alphabet = AlphabetKind::kDna});
    Sequence chrx;
    ASSERT_TRUE(reader.next(chrx));
    pairs.emplace_back(slice(chrx.residues, 3'000'000, 3'002'500),
                       slice(chrx.residues, 3'001'000, 3'004'000));
    pairs.emplace_back(reverse_complement(slice(chrx.residues, 7'000'000, 7'002'000)),
                       slice(chrx.residues, 7'002'000, 7'005'000));
  }
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const auto& [q, t] = pairs[p];
    EXPECT_EQ(static_cast<double>(reference_best(dna_matrix(), kDnaGaps, q, t)),
              water_score(dna_matrix(), kDnaGaps, q, t))
        << "pair " << p;
  }
}

TEST(ScanOracleWater, ProteinPairsBlosum62) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_water()) GTEST_SKIP() << "EMBOSS water not installed (Debian: emboss)";
  const std::vector<Sequence> globins = read_all(data("prot/globins45.fa"), AlphabetKind::kProtein);
  const Codes longest =
      longest_residues(read_all(data("prot/mmseqs_QUERY500.fasta"), AlphabetKind::kProtein));
  const Codes first_db = read_first(data("prot/mmseqs_DB20k.fasta"), AlphabetKind::kProtein).residues;
  const std::vector<std::pair<Codes, Codes>> pairs = {
      {globins[0].residues, globins[20].residues},
      {globins[5].residues, globins[44].residues},
      {longest, first_db},
      {first_db, globins[3].residues},
  };
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const auto& [q, t] = pairs[p];
    EXPECT_EQ(static_cast<double>(reference_best(blosum62(), kProteinGaps, q, t)),
              water_score(blosum62(), kProteinGaps, q, t))
        << "pair " << p;
  }
}

// --- planted copies (scripts/make_scan_data.sh) ------------------------------------------------------

struct Planted {
  std::int64_t start = 0, end = 0;  // 0-based half-open in window.fa
  bool minus = false;
};

std::vector<Planted> read_truth(const std::string& path) {
  std::vector<Planted> truth;
  std::istringstream in(test::read_file(path));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string record, strand;
    Planted p;
    fields >> record >> p.start >> p.end >> strand;
    if (!fields || (strand != "+" && strand != "-")) throw std::runtime_error("bad truth line: " + line);
    p.minus = strand == "-";
    truth.push_back(p);
  }
  return truth;
}

std::int64_t overlap(std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) {
  return std::max<std::int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

TEST(ScanOracleData, PlantedCopiesInMegabaseWindow) {
  WS_REQUIRE_TESTDATA("dna/ce2_chrX.fa");
  WS_REQUIRE_PARASAIL();
  const TempDir dir("scan_planted");
  constexpr int kCopies = 6;
  constexpr int kQueryLength = 400;
  // 1 Mbp window x 400 bp x 2 strands = 8e8 cells for the CPU engine.
  const std::string cmd = "SEED=8 ONLY=window WINDOW=1000000 PLANT_LEN=" + std::to_string(kQueryLength) +
                          " COPIES=" + std::to_string(kCopies) + " bash " +
                          quote((test::source_dir() / "scripts/make_scan_data.sh").string()) + " " +
                          quote(dir.path().string()) + " " + quote(data("dna/ce2_chrX.fa")) + " >" +
                          (dir / "log") + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << test::read_file(dir / "log");
  const std::vector<Planted> truth = read_truth(dir / "window.truth.tsv");
  ASSERT_EQ(truth.size(), static_cast<std::size_t>(kCopies));
  const Sequence query = read_first(dir / "window_query.fa", AlphabetKind::kDna);
  const Sequence window = read_first(dir / "window.fa", AlphabetKind::kDna);
  ASSERT_EQ(query.length(), static_cast<std::size_t>(kQueryLength));
  ASSERT_GT(window.length(), 1'000'000u);

  Config config;
  config.device = DeviceMode::kCpu;
  config.top = 50;
  Scanner scanner(config);
  const QueryResult r = scanner.scan(query, dir / "window.fa");
  ASSERT_GE(r.hits.size(), truth.size());

  // The best hit of each strand scores parasail's optimum of that strand.
  const std::optional<std::int32_t> plus = first_hit_score(r, [](const Hit& h) { return !h.minus; });
  const std::optional<std::int32_t> minus = first_hit_score(r, [](const Hit& h) { return h.minus; });
  ASSERT_TRUE(plus.has_value());
  ASSERT_TRUE(minus.has_value());
  EXPECT_EQ(*plus, parasail_best(dna_matrix(), kDnaGaps, query.residues, window.residues));
  EXPECT_EQ(*minus,
            parasail_best(dna_matrix(), kDnaGaps, reverse_complement(query.residues), window.residues));

  // The first kCopies reports are the planted copies, one each: same strand, the target interval covers
  // >= 90 % of the planted interval and the query interval >= 90 % of the query.
  std::vector<int> found(truth.size(), 0);
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const Hit& h = r.hits[i];
    SCOPED_TRACE("hit " + std::to_string(i) + ": target [" + std::to_string(h.target_begin) + ", " +
                 std::to_string(h.target_end) + ") " + (h.minus ? "-" : "+") + " score " +
                 std::to_string(h.score));
    EXPECT_GE(10 * (h.query_end - h.query_begin), 9u * query.length());
    bool matched = false;
    for (std::size_t c = 0; c < truth.size(); ++c) {
      const Planted& p = truth[c];
      const std::int64_t common = overlap(static_cast<std::int64_t>(h.target_begin),
                                          static_cast<std::int64_t>(h.target_end), p.start, p.end);
      if (p.minus == h.minus && 10 * common >= 9 * (p.end - p.start)) {
        ++found[c];
        matched = true;
      }
    }
    EXPECT_TRUE(matched);
  }
  for (std::size_t c = 0; c < truth.size(); ++c)
    EXPECT_EQ(found[c], 1) << "planted copy " << c << " [" << truth[c].start << ", " << truth[c].end << ")";
  // Everything after them is background: far weaker than the weakest copy.
  if (r.hits.size() > truth.size()) {
    EXPECT_LT(2 * r.hits[truth.size()].score, r.hits[truth.size() - 1].score);
  }
}

}  // namespace
}  // namespace warpsearch::scan
