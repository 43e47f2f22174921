// test_stats.cpp: swsearch's E-values and bit scores (src/swsearch/stats.hpp) against ssearch36 -z 3.
//
// With ssearch36 installed (fasta36; skipped cleanly without it):
//   - the lambda, K, H that Statistics::make picks equal those ssearch36 prints ("Altschul/Gish params")
//     over grids of gap costs for BLOSUM50/62/80, PAM250 and DNA 5/-4 (its lookup rule:
//     nearest cheaper row, ungapped parameters above the table);
//   - on real searches (testdata: mmseqs QUERY500 queries vs a DB20k subset plus the queries, several
//     matrices, -Z; mitochondrial DNA pieces) every listed hit's bit score and E-value, printed the way
//     ssearch36 prints them (%.1f, %7.2g), equal ssearch36's, computed from ssearch36's own raw score
//     and lengths (so the check is independent of our SW engines).
// Always: the error for unsupported scoring systems, BLAST+-table matrices, matrix files with built-in
// scores, and the relations between evalue, bits and the search space.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "stats/karlin.hpp"
#include "swsearch/stats.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::swsearch {
namespace {

bool have_ssearch36() { return std::system("command -v ssearch36 >/dev/null 2>&1") == 0; }

std::string run_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

// The C printf conversions ssearch36 prints with: %5.3f (parameters), %.1f (bits), %7.2g (E-values).
std::string f5_3(double v) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%5.3f", v);
  return buf.data();
}
std::string f1(double v) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.1f", v);
  return buf.data();
}
std::string g7_2(double v) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%7.2g", v);
  return buf.data();
}

// The first `count` FASTA records of `path` (all when count is 0), as text.
std::string fasta_records(const std::string& path, std::size_t count) {
  std::ifstream in(path);
  std::string out, line;
  std::size_t seen = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>' && count != 0 && ++seen > count) break;
    out += line + "\n";
  }
  return out;
}

std::string sequence_of(const std::string& fasta_path) {
  std::ifstream in(fasta_path);
  std::string seq, line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '>') seq += line;
  }
  return seq;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// An ssearch36 scoring option set and our equivalent.
struct Scoring {
  std::string ssearch_args;  // -s / -n -r options (gap costs are added separately)
  ScoringMatrix matrix;
};

Scoring protein(const std::string& ssearch_name, const std::string& builtin) {
  return {"-s " + ssearch_name, ScoringMatrix::builtin(builtin)};
}
Scoring dna(int match, int mismatch) {
  return {"-n -3 -r '+" + std::to_string(match) + "/" + std::to_string(mismatch) + "'",
          ScoringMatrix::dna(match, mismatch)};
}

std::string gap_args(GapCosts g) {
  return " -f " + std::to_string(g.open) + " -g " + std::to_string(g.extend);
}

TEST(SwsearchStats, ParametersAreSsearch36s) {
  if (!have_ssearch36()) GTEST_SKIP() << "ssearch36 not installed";
  const test::TempDir dir("swstats");
  write(dir / "p.fa",
        ">q\nMKVLAAGIVGLLLAQSAWAEDKTPEELIKRAQEGNHEGGCW\n>t\nMKVLSAGIVALLLSQSAFAEDKSPEELVKRAQEGNYQGGCW\n");
  write(dir / "d.fa",
        ">q\nACGTTGCAAGGCTTACGATCGATCGGATCCATGCAAGTCGATCGGCTA\n"
        ">t\nACGTAGCAAGGCTAACGATCGTTCGGATCCATGCTAGTCGATCGGCTA\n");
  const std::vector<Scoring> scorings = {protein("BL50", "BLOSUM50"),
                                         protein("BL62", "BLOSUM62"),
                                         protein("BL80", "BLOSUM80"),
                                         protein("P250", "PAM250"),
                                         dna(5, -4),
                                         dna(3, -2),
                                         dna(1, -3)};
  const std::regex params_re(R"(Altschul/Gish params: n0: \d+ Lambda: (\S+) K: (\S+) H: (\S+))");
  int compared = 0;
  for (const Scoring& s : scorings) {
    const bool is_dna = s.matrix.alphabet() != AlphabetKind::kProtein;
    // Exact rows, costs between rows (nearest cheaper row), above the table (ungapped row), below it.
    const std::vector<int> opens =
        is_dna ? std::vector<int>{8, 11, 12, 13} : std::vector<int>{5, 8, 10, 11, 12, 13, 15};
    const std::vector<int> extends = is_dna ? std::vector<int>{2, 4, 5} : std::vector<int>{1, 2, 3};
    for (const int open : opens) {
      for (const int extend : extends) {
        const GapCosts gaps{open, extend};
        std::optional<Statistics> st;
        try {
          st = Statistics::make(s.matrix, gaps);
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::kUsage);
          // No parameters of ours: ssearch36 would fall back to BLOSUM62's table; nothing to compare.
          continue;
        }
        if (st->source != Statistics::Source::kSsearch36) continue;
        const std::string file = dir / (is_dna ? "d.fa" : "p.fa");
        const std::string out = run_output("ssearch36 -q -z 3 " + s.ssearch_args + gap_args(gaps) + " " +
                                           file + " " + file + " 2>&1");
        std::smatch m;
        ASSERT_TRUE(std::regex_search(out, m, params_re)) << out;
        const std::string where = s.matrix.name() + " " + std::to_string(open) + "/" + std::to_string(extend);
        EXPECT_EQ(f5_3(st->lambda), m[1].str()) << where;
        EXPECT_EQ(f5_3(st->K), m[2].str()) << where;
        EXPECT_EQ(f5_3(st->H), m[3].str()) << where;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 70);
}

// One hit of ssearch36's "The best scores are:" list.
struct ListedHit {
  std::uint32_t length = 0;
  std::int32_t score = 0;
  std::string bits, evalue;
};

// The hits of every query's list, in output order (queries concatenated).
std::vector<ListedHit> listed_hits(const std::string& report, std::vector<std::uint32_t>& query_lengths) {
  std::vector<ListedHit> hits;
  const std::regex query_re(R"(^\s*\d+>>>.* - (\d+) (aa|nt)\b)");
  const std::regex hit_re(R"(\(\s*(\d+)\)\s+(?:\[[fr]\]\s+)?(\d+)\s+(\S+)\s+(\S+)\s*$)");
  std::istringstream in(report);
  bool in_list = false;
  std::uint32_t query_length = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, query_re))
      query_length = static_cast<std::uint32_t>(std::stoul(m[1].str()));
    if (line.starts_with("The best scores are:")) {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.empty() || line.starts_with(">>>") || line.starts_with("!!")) {
      in_list = false;
      continue;
    }
    if (std::regex_search(line, m, hit_re)) {
      hits.push_back({static_cast<std::uint32_t>(std::stoul(m[1].str())), std::stoi(m[2].str()), m[3].str(),
                      m[4].str()});
      query_lengths.push_back(query_length);
    }
  }
  return hits;
}

// Runs ssearch36 -z 3 and checks every listed hit's bits and E-value against ours. Returns the hits.
std::vector<ListedHit> expect_same_as_ssearch36(const Scoring& s, GapCosts gaps, const std::string& query,
                                                const std::string& db, const SearchSpace& space,
                                                const std::string& extra = "") {
  const Statistics st = Statistics::make(s.matrix, gaps);
  const std::string out = run_output("ssearch36 -q -z 3 -b =150 -d 0 -E 1e9 " + s.ssearch_args +
                                     gap_args(gaps) + extra + " " + query + " " + db + " 2>&1");
  std::vector<std::uint32_t> query_lengths;
  const std::vector<ListedHit> hits = listed_hits(out, query_lengths);
  EXPECT_GT(hits.size(), 100u) << out.substr(0, 2000);
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const ListedHit& h = hits[i];
    const std::string where = s.matrix.name() + " hit " + std::to_string(i) + " score " +
                              std::to_string(h.score) + " qlen " + std::to_string(query_lengths[i]) +
                              " tlen " + std::to_string(h.length);
    EXPECT_EQ(f1(st.bits(h.score, query_lengths[i], h.length)), h.bits) << where;
    // ssearch36 pads the E-value column to 7 characters; the regex took it without the padding.
    std::string e = g7_2(st.evalue(h.score, query_lengths[i], h.length, space));
    e.erase(0, e.find_first_not_of(' '));
    EXPECT_EQ(e, h.evalue) << where;
  }
  return hits;
}

// Total residues and sequences of a FASTA file.
SearchSpace space_of(const std::string& path) {
  SearchSpace sp;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] == '>') {
      ++sp.sequences;
    } else {
      sp.residues += line.size();
    }
  }
  return sp;
}

TEST(SwsearchStats, ProteinSearchesMatchSsearch36) {
  if (!have_ssearch36()) GTEST_SKIP() << "ssearch36 not installed";
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const test::TempDir dir("swstats");
  const std::string queries = fasta_records(test::testdata_dir() / "prot/mmseqs_QUERY500.fasta", 3);
  write(dir / "q.fa", queries);
  write(dir / "q1.fa", fasta_records(dir / "q.fa", 1));
  // The queries themselves are in the database: self hits reach ssearch36's E = 0 underflow guard.
  write(dir / "db.fa", fasta_records(test::testdata_dir() / "prot/mmseqs_DB20k.fasta", 2000) + queries);
  const SearchSpace space = space_of(dir / "db.fa");

  const auto hits =
      expect_same_as_ssearch36(protein("BL62", "BLOSUM62"), {11, 1}, dir / "q.fa", dir / "db.fa", space);
  bool zero = false, large = false, tiny = false;
  for (const ListedHit& h : hits) {
    zero = zero || h.evalue == "0";
    large = large || std::stod(h.evalue) > 1.0;  // the 1 - exp(-e) branch
    tiny = tiny || (std::stod(h.evalue) > 0 && std::stod(h.evalue) < 1e-20);
  }
  EXPECT_TRUE(zero && large && tiny) << "the real search should cover every regime of the E-value";

  // -Z: the database size the E-value sees.
  expect_same_as_ssearch36(protein("BL62", "BLOSUM62"), {11, 1}, dir / "q1.fa", dir / "db.fa",
                           {1000000, space.residues}, " -Z 1000000");
  // Other matrices and gap costs, including a nearest-row lookup (BLOSUM50 11/3 reads ssearch36's "14, 3").
  expect_same_as_ssearch36(protein("BL50", "BLOSUM50"), {10, 2}, dir / "q1.fa", dir / "db.fa", space);
  expect_same_as_ssearch36(protein("BL50", "BLOSUM50"), {11, 3}, dir / "q1.fa", dir / "db.fa", space);
  expect_same_as_ssearch36(protein("BL80", "BLOSUM80"), {10, 1}, dir / "q1.fa", dir / "db.fa", space);
  expect_same_as_ssearch36(protein("P250", "PAM250"), {10, 2}, dir / "q1.fa", dir / "db.fa", space);
}

TEST(SwsearchStats, DnaSearchesMatchSsearch36) {
  if (!have_ssearch36()) GTEST_SKIP() << "ssearch36 not installed";
  for (const char* f : {"dna/humanMito.fa", "dna/mouseMito.fa", "dna/chickenMito.fa", "dna/fuguMito.fa"}) {
    WS_REQUIRE_TESTDATA(f);
  }
  const test::TempDir dir("swstats");
  const std::string human = sequence_of(test::testdata_dir() / "dna/humanMito.fa");
  write(dir / "q.fa", ">h1\n" + human.substr(1000, 400) + "\n>h2\n" + human.substr(5000, 250) + "\n");
  // Pieces of 120..1400 bases (lengths cycle deterministically) of three other mitochondrial genomes.
  std::string db;
  int n = 0;
  for (const char* f : {"dna/mouseMito.fa", "dna/chickenMito.fa", "dna/fuguMito.fa"}) {
    const std::string g = sequence_of(test::testdata_dir() / f);
    for (std::size_t pos = 0; pos < g.size(); ++n) {
      const std::size_t len = 120 + static_cast<std::size_t>(n * 397 % 1281);
      db += ">p" + std::to_string(n) + "\n" + g.substr(pos, len) + "\n";
      pos += len;
    }
  }
  write(dir / "db.fa", db);
  const SearchSpace space = space_of(dir / "db.fa");
  expect_same_as_ssearch36(dna(5, -4), {12, 4}, dir / "q.fa", dir / "db.fa", space);
  expect_same_as_ssearch36(dna(5, -4), {16, 2}, dir / "q.fa", dir / "db.fa", space);  // ungapped row
  // DNA E-values use residues / target length, not the -Z sequence count (as ssearch36 does).
  expect_same_as_ssearch36(dna(5, -4), {12, 4}, dir / "q.fa", dir / "db.fa", {7, space.residues},
                           " -Z 100000");
}

TEST(SwsearchStats, UnsupportedScoringIsAUsageErrorSayingWhatIs) {
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  try {
    (void)Statistics::make(b62, {7, 1});  // neither ssearch36's table nor BLAST+'s has it
    FAIL() << "expected Error(kUsage)";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("BLOSUM62 with gap costs 7/1"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("11/1"), std::string::npos) << e.message();
  }
  // A matrix with no tables at all: +4 on the diagonal, -2 elsewhere, over every protein letter.
  std::string text = " ";
  for (const char c : kProteinSymbols) text += std::string("  ") + c;
  text += "\n";
  for (const char a : kProteinSymbols) {
    text += a;
    for (const char b : kProteinSymbols) text += a == b ? " 4" : " -2";
    text += "\n";
  }
  const ScoringMatrix custom = ScoringMatrix::from_ncbi_text(text, "mine");
  try {
    (void)Statistics::make(custom, {11, 1});
    FAIL() << "expected Error(kUsage)";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("mine"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("BLOSUM45"), std::string::npos) << e.message();
  }
  // DNA pairs neither ssearch36 nor blastn tabulates.
  EXPECT_THROW((void)Statistics::make(ScoringMatrix::dna(7, -3), {10, 2}), Error);
  // Gap costs outside GapCosts' range.
  EXPECT_THROW((void)Statistics::make(b62, {-1, 1}), Error);
}

TEST(SwsearchStats, MatricesWithoutSsearch36ParametersUseBlastTables) {
  for (const auto& [name, gaps] : std::vector<std::pair<std::string, GapCosts>>{
           {"BLOSUM45", {14, 2}}, {"BLOSUM90", {10, 1}}, {"PAM30", {9, 1}}, {"PAM70", {10, 1}}}) {
    const ScoringMatrix m = ScoringMatrix::builtin(name);
    const Statistics st = Statistics::make(m, gaps);
    const auto kp = stats::gapped_params(m, gaps);
    ASSERT_TRUE(kp.has_value()) << name;
    EXPECT_EQ(st.source, Statistics::Source::kBlast) << name;
    EXPECT_EQ(st.lambda, kp->lambda) << name;
    EXPECT_EQ(st.K, kp->K) << name;
    EXPECT_EQ(st.H, kp->H) << name;
    EXPECT_NE(st.describe().find("BLAST+"), std::string::npos) << st.describe();
  }
  // blastn's 2/-3 (not in ssearch36's table) with a gap cost blastn tabulates.
  const ScoringMatrix d = ScoringMatrix::dna(2, -3);
  const Statistics st = Statistics::make(d, {5, 2});
  EXPECT_EQ(st.source, Statistics::Source::kBlast);
  EXPECT_EQ(st.lambda, stats::gapped_params(d, {5, 2})->lambda);
  EXPECT_TRUE(st.nucleotide);
}

TEST(SwsearchStats, EveryBuiltinMatrixHasParametersForItsDefaultGaps) {
  for (const std::string_view name : ScoringMatrix::builtin_names()) {
    const ScoringMatrix m = ScoringMatrix::builtin(name);
    EXPECT_NO_THROW((void)Statistics::make(m, m.default_gaps())) << name;
  }
  // DNA: ssearch36's default scoring (+5/-4, 12/4) and blastn's (2/-3, 5/2).
  const Statistics ss = Statistics::make(ScoringMatrix::dna(5, -4), {12, 4});
  EXPECT_EQ(ss.source, Statistics::Source::kSsearch36);
  const ScoringMatrix bn = ScoringMatrix::dna(2, -3);
  EXPECT_EQ(Statistics::make(bn, bn.default_gaps()).source, Statistics::Source::kBlast);
}

TEST(SwsearchStats, MatrixFilesWithBuiltinScoresAreThatMatrix) {
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  // The built-in table written out in NCBI format and read back under another name.
  const Alphabet abc = Alphabet::protein();
  const std::string_view letters = kProteinSymbols;  // every code, so every score is written
  std::string text = " ";
  for (const char c : letters) text += std::string("  ") + c;
  text += "\n";
  for (const char a : letters) {
    text += a;
    for (const char b : letters) {
      text += ' ';
      text += std::to_string(b62.score(*abc.code(a), *abc.code(b)));
    }
    text += "\n";
  }
  const ScoringMatrix file = ScoringMatrix::from_ncbi_text(text, "my_blosum62.txt");
  ASSERT_TRUE(file.same_scores(b62));
  const Statistics a = Statistics::make(b62, {11, 1}), b = Statistics::make(file, {11, 1});
  EXPECT_EQ(a.lambda, b.lambda);
  EXPECT_EQ(a.K, b.K);
  EXPECT_EQ(a.H, b.H);
  EXPECT_EQ(a.describe(), b.describe());
}

TEST(SwsearchStats, EvalueBitsAndSearchSpaceRelations) {
  const Statistics prot = Statistics::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1});
  const Statistics nucl = Statistics::make(ScoringMatrix::dna(5, -4), {12, 4});
  const SearchSpace space{5000, 2'000'000};
  for (const std::uint32_t m : {1u, 30u, 300u, 5000u}) {
    for (const std::uint32_t n : {0u, 1u, 50u, 800u, 40000u}) {
      double previous = INFINITY, previous_bits = -INFINITY;
      for (std::int32_t s = 0; s < 3000; s += 7) {
        const double e = prot.evalue(s, m, n, space);
        const double bits = prot.bits(s, m, n);
        EXPECT_LE(e, previous);
        EXPECT_GT(bits, previous_bits);
        previous = e;
        previous_bits = bits;
        ASSERT_TRUE(std::isfinite(e) && e >= 0.0 && e <= 5000.0);
        // D * P with P <= 1, P linear in D.
        EXPECT_DOUBLE_EQ(prot.evalue(s, m, n, {2 * space.sequences, space.residues}), 2.0 * e);
        // Where P is small, E = D * m * n * 2^-bits: both come from the same pair probability.
        if (e > 1e-300 && e < 1e-4) {
          const double md = m == 0 ? 1.0 : m, nd = n == 0 ? 1.0 : n;
          EXPECT_NEAR(std::log(e), std::log(5000.0 * md * nd) - bits * std::log(2.0), 1e-9);
        }
        // DNA: the database-size factor is residues / target length (at least 1), sequences ignored.
        const double ed = nucl.evalue(s, m, n, space);
        EXPECT_DOUBLE_EQ(nucl.evalue(s, m, n, {1, space.residues}), ed);
        if (n >= 50) {
          EXPECT_DOUBLE_EQ(nucl.evalue(s, m, n, {1, 2 * space.residues}), 2.0 * ed);
        }
      }
    }
  }
  // The plain Karlin-Altschul bit score plus log2(m n / (m' n')) with m' = m - l, n' = n - l.
  const double l = (std::log(prot.K * 300) + std::log(800.0)) / prot.H;
  EXPECT_NEAR(prot.bits(100, 300, 800),
              (prot.lambda * 100 - std::log(prot.K)) / std::log(2.0) +
                  std::log2(300.0 * 800.0 / ((300.0 - l) * (800.0 - l))),
              1e-9);
  EXPECT_NE(prot.describe().find("ssearch36"), std::string::npos) << prot.describe();
}

}  // namespace
}  // namespace warpsearch::swsearch
