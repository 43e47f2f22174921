// test_swsearch_cli.cpp: `warpsearch swsearch` as a user runs it: raw scores, E-values and bit scores
// compared with the installed ssearch36 (fasta3 package; skipped without it) run with the same scoring on
// real proteins (BLOSUM62 11/1 and BLOSUM50 10/2) and on DNA (+5/-4, gaps 12/4, forward strand); the
// ranking (score, ties by database order) and --top / -E; outfmt 6 / 7 / report structure; output that
// does not depend on --threads, --batch-residues or --noalign (for the scores); -o versus stdout; every
// usage / input error with its exit status and no output file left behind.
//
// Inputs: the first 3 queries of mmseqs_QUERY500 against the first 400 sequences of mmseqs_DB20k, and
// DNA pieces of the human and mouse mitochondrial genomes, written into the test's temporary directory.
// ssearch36 runs with -m 9 -d 0 (its best-score list with the FASTA tabular columns), -b =N with N the
// database size (every target listed), -E "1e9 0" (no threshold, no alternative alignments) and -z 3
// (the analytic Altschul-Gish statistics swsearch reproduces, docs/SWSEARCH.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"

namespace {

using warpsearch::test::CliResult;
using warpsearch::test::contains;
using warpsearch::test::lines;
using warpsearch::test::read_file;
using warpsearch::test::run_cli;
using warpsearch::test::shell_quote;
using warpsearch::test::TempDir;
using warpsearch::test::write_file;

std::string tdata(const std::string& rel) { return (warpsearch::test::testdata_dir() / rel).string(); }

bool have_ssearch36() { return std::system("command -v ssearch36 >/dev/null 2>&1") == 0; }

// The first `n` records of a FASTA file, as written there.
std::string first_records(const std::string& path, int n) {
  std::ifstream in(path);
  std::string line, out;
  int records = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>' && ++records > n) break;
    out += line + "\n";
  }
  return out;
}

// The sequence of the first record of a FASTA file.
std::string first_sequence(const std::string& path) {
  std::ifstream in(path);
  std::string line, seq;
  bool seen = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      if (seen) break;
      seen = true;
      continue;
    }
    seq += line;
  }
  return seq;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The names (first words of the deflines) of a FASTA file, in order.
std::vector<std::string> names_of(const std::string& path) {
  std::vector<std::string> out;
  for (const std::string& line : lines(read_file(path)))
    if (!line.empty() && line[0] == '>') out.push_back(words(line.substr(1)).at(0));
  return out;
}

// Runs `warpsearch swsearch ARGS` and expects success.
std::string ws(const std::string& args, const std::string& stdin_path = "/dev/null") {
  const CliResult r = run_cli("swsearch " + args, stdin_path);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return r.out;
}

struct Scored {
  int score = 0;
  double bits = 0, evalue = 0;
};

// Per query name: per target name, ssearch36's score, bits and E-value (its -m 9 best-score list).
using OracleHits = std::map<std::string, std::map<std::string, Scored>>;

OracleHits ssearch36(const TempDir& dir, const std::string& args, const std::string& query,
                     const std::string& db) {
  const std::string out = dir / "ssearch36.out";
  const std::string cmd = "ssearch36 -q -m 9 -d 0 -E '1e9 0' -z 3 " + args + " " + shell_quote(query) + " " +
                          shell_quote(db) + " > " + shell_quote(out) + " 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  OracleHits hits;
  std::string current;
  bool in_list = false;
  for (const std::string& line : lines(read_file(out))) {
    const std::size_t q = line.find(">>>");
    if (q != std::string::npos && line.find(">>><<<") == std::string::npos &&
        line.find(">>>///") == std::string::npos) {
      current = words(line.substr(q + 3)).at(0);  // "1>>>NAME desc - 144 aa"
      in_list = false;
      continue;
    }
    if (line.rfind("The best scores are:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.empty() || line.find('\t') == std::string::npos) {
      in_list = false;
      continue;
    }
    // "NAME description ( len)   s-w bits E(N)\t%_id %_sim sw alen ..."
    const std::vector<std::string> left = words(line.substr(0, line.find('\t')));
    EXPECT_GE(left.size(), 4u) << line;
    if (left.size() < 4) continue;
    Scored s;
    s.score = std::stoi(left[left.size() - 3]);
    s.bits = std::stod(left[left.size() - 2]);
    s.evalue = std::stod(left[left.size() - 1]);
    hits[current][left[0]] = s;
  }
  return hits;
}

// One row of "6 qseqid sseqid score evalue bitscore".
struct Row {
  std::string query, target;
  Scored s;
};

std::vector<Row> parse_rows(const std::string& text) {
  std::vector<Row> rows;
  for (const std::string& line : lines(text)) {
    const std::vector<std::string> v = split(line, '\t');
    EXPECT_EQ(v.size(), 5u) << line;
    if (v.size() != 5) continue;
    rows.push_back({v[0], v[1], {std::stoi(v[2]), std::stod(v[4]), std::stod(v[3])}});
  }
  return rows;
}

// Compares swsearch's hits (outfmt "6 qseqid sseqid score evalue bitscore", --top top, -E huge) with
// ssearch36's full lists: per query, the scores are the `top` best of ssearch36's (same multiset), each
// target's score is ssearch36's, ties are ranked by database order, and (with_statistics) E-values and bit
// scores agree to the precision both print.
void compare_with_ssearch36(const std::vector<Row>& rows, const OracleHits& oracle,
                            const std::vector<std::string>& db_names, std::size_t top, bool with_statistics) {
  std::map<std::string, std::size_t> db_index;
  for (std::size_t i = 0; i < db_names.size(); ++i) db_index.emplace(db_names[i], i);
  ASSERT_FALSE(oracle.empty());
  ASSERT_FALSE(rows.empty());
  std::map<std::string, std::vector<Row>> by_query;
  for (const Row& r : rows) by_query[r.query].push_back(r);
  ASSERT_EQ(by_query.size(), oracle.size());
  for (const auto& [query, theirs] : oracle) {
    ASSERT_TRUE(by_query.count(query)) << query;
    const std::vector<Row>& ours = by_query[query];
    std::vector<int> expected;
    for (const auto& [name, s] : theirs)
      if (s.score > 0) expected.push_back(s.score);
    std::sort(expected.rbegin(), expected.rend());
    if (expected.size() > top) expected.resize(top);
    std::vector<int> got;
    for (const Row& r : ours) got.push_back(r.s.score);
    EXPECT_EQ(got, expected) << query;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const Row& r = ours[i];
      const auto it = theirs.find(r.target);
      ASSERT_NE(it, theirs.end()) << r.target;
      EXPECT_EQ(r.s.score, it->second.score) << query << " vs " << r.target;
      if (i > 0 && ours[i - 1].s.score == r.s.score) {
        EXPECT_LT(db_index.at(ours[i - 1].target), db_index.at(r.target)) << "tie order " << r.target;
      }
      if (!with_statistics) continue;
      // Both sides are rounded for printing: ssearch36's E-value to 2 significant digits (up to 5 % off),
      // its bits to one decimal; ours in BLAST's formats (format_tabular_evalue: 3 significant digits below
      // 0.0009, then 3, 2, 1, 0 decimals; bits one decimal, truncated to an integer above 99.9).
      const double e1 = r.s.evalue, e2 = it->second.evalue;
      const double ours_unit = e1 < 0.0009 ? 0.005 * e1
                               : e1 < 0.1  ? 0.0005
                               : e1 < 1    ? 0.005
                               : e1 < 10   ? 0.05
                                           : 0.5;
      EXPECT_LE(std::fabs(e1 - e2), ours_unit + 0.05 * e2 + 1e-300)
          << query << " vs " << r.target << ": E " << e1 << " (ssearch36 " << e2 << ")";
      const double b1 = r.s.bits, b2 = it->second.bits;
      if (b1 > 99.9) {
        EXPECT_TRUE(b2 - b1 >= -0.0501 && b2 - b1 <= 1.0501)
            << query << " vs " << r.target << ": bits " << b1 << " " << b2;
      } else {
        EXPECT_LE(std::fabs(b1 - b2), 0.1001) << query << " vs " << r.target << ": bits " << b1 << " " << b2;
      }
    }
  }
}

class SwsearchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
    WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
    write_file(dir / "q3.fa", first_records(tdata("prot/mmseqs_QUERY500.fasta"), 3));
    write_file(dir / "db.fa", first_records(tdata("prot/mmseqs_DB20k.fasta"), kDbSize));
    q3 = shell_quote(dir / "q3.fa");
    db = shell_quote(dir / "db.fa");
  }

  static constexpr int kDbSize = 400;
  TempDir dir{"swsearch_cli"};
  std::string q3, db;
};

constexpr const char* kScoreFields = "'6 qseqid sseqid score evalue bitscore'";

TEST_F(SwsearchCli, ProteinScoresAndStatisticsEqualSsearch36) {
  if (!have_ssearch36()) GTEST_SKIP() << "ssearch36 (fasta3) not installed";
  const std::vector<std::string> db_names = names_of(dir / "db.fa");
  const std::string b = "-b =" + std::to_string(kDbSize) + " ";
  {
    const OracleHits oracle = ssearch36(dir, b + "-s BL62 -f -11 -g -1", dir / "q3.fa", dir / "db.fa");
    const std::string out = ws("--query " + q3 + " --db " + db + " --top 30 -E 1e9 --outfmt " + kScoreFields);
    compare_with_ssearch36(parse_rows(out), oracle, db_names, 30, true);
  }
  {
    const OracleHits oracle = ssearch36(dir, b + "-s BL50 -f -10 -g -2", dir / "q3.fa", dir / "db.fa");
    const std::string out = ws(
        "--query " + q3 + " --db " + db +
        " --matrix BLOSUM50 --gapopen 10 --gapextend 2 --top 25 -E 1e9 --noalign --outfmt " + kScoreFields);
    compare_with_ssearch36(parse_rows(out), oracle, db_names, 25, true);
  }
}

TEST_F(SwsearchCli, DnaScoresEqualSsearch36) {
  if (!have_ssearch36()) GTEST_SKIP() << "ssearch36 (fasta3) not installed";
  WS_REQUIRE_TESTDATA("dna/humanMito.fa");
  WS_REQUIRE_TESTDATA("dna/mouseMito.fa");
  // Queries: 3 pieces of 300 nt of the human mitochondrion; database: the mouse one in 40 pieces of 400 nt.
  const std::string human = first_sequence(tdata("dna/humanMito.fa"));
  const std::string mouse = first_sequence(tdata("dna/mouseMito.fa"));
  ASSERT_GE(human.size(), 12000u);
  ASSERT_GE(mouse.size(), 16000u);
  std::string queries, pieces;
  for (int i = 0; i < 3; ++i)
    queries += ">hq" + std::to_string(i) + "\n" +
               human.substr(static_cast<std::size_t>(1000 + 4000 * i), 300) + "\n";
  for (int i = 0; i < 40; ++i)
    pieces += ">mp" + std::to_string(i) + " mouse piece\n" +
              mouse.substr(static_cast<std::size_t>(400 * i), 400) + "\n";
  write_file(dir / "dq.fa", queries);
  write_file(dir / "dd.fa", pieces);
  const OracleHits oracle =
      ssearch36(dir, "-n -3 -b =40 -r +5/-4 -f -12 -g -4", dir / "dq.fa", dir / "dd.fa");
  const std::string out = ws("--query " + shell_quote(dir / "dq.fa") + " --db " + shell_quote(dir / "dd.fa") +
                             " --dna --top 40 -E 1e9 --outfmt " + kScoreFields);
  compare_with_ssearch36(parse_rows(out), oracle, names_of(dir / "dd.fa"), 40, false);
}

// The same hits whatever the threads, the batch size or the alignments; -o writes what stdout shows.
TEST_F(SwsearchCli, OutputDoesNotDependOnThreadsBatchesOrAlignments) {
  const std::string base = "--query " + q3 + " --db " + db + " --top 20 --outfmt '6 std score qlen slen'";
  const std::string one = ws("--device cpu --threads 1 " + base);
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(ws("--device cpu --threads 2 --batch-residues 3000 " + base), one);
  EXPECT_EQ(ws("--threads 2 " + base), one);  // auto: the GPUs when there are any
  const std::string path = dir / "hits.tsv";
  const CliResult r = run_cli("swsearch " + base + " -o " + shell_quote(path));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_file(path), one);
  EXPECT_TRUE(contains(r.err, "swsearch: 3 queries vs 400 sequences")) << r.err;
  EXPECT_EQ(run_cli("swsearch -q " + base + " -o " + shell_quote(dir / "quiet.tsv")).err, "");
  // --noalign: the same scores, E-values and bits.
  const std::string all_args = "--query " + q3 + " --db " + db + " -E 1e9 --outfmt " + kScoreFields;
  const std::string scores = ws(all_args + " --top 20");
  EXPECT_EQ(ws("--noalign " + all_args + " --top 20"), scores);
  // --top: per query a prefix of the longer list; -E: the hits of the list with E-value <= the threshold.
  const std::vector<Row> all = parse_rows(scores);
  ASSERT_EQ(all.size(), 60u);
  const std::vector<Row> five = parse_rows(ws(all_args + " --top 5"));
  ASSERT_EQ(five.size(), 15u);
  for (std::size_t i = 0; i < five.size(); ++i) {
    const Row& a = all[(i / 5) * 20 + i % 5];
    EXPECT_EQ(five[i].query + five[i].target + std::to_string(five[i].s.score),
              a.query + a.target + std::to_string(a.s.score));
  }
  const std::vector<Row> strict =
      parse_rows(ws("--query " + q3 + " --db " + db + " --top 20 -E 1e-3 --outfmt " + kScoreFields));
  std::size_t expected = 0;
  for (const Row& row : all) expected += row.s.evalue <= 1e-3 ? 1 : 0;
  EXPECT_EQ(strict.size(), expected);
  for (const Row& row : strict) EXPECT_LE(row.s.evalue, 1e-3);
}

TEST_F(SwsearchCli, TabularAndReportFormats) {
  const std::string base = "--query " + q3 + " --db " + db + " --top 4 -E 1e9";
  // outfmt 6: blastp's 12 standard columns.
  const std::vector<std::string> six = lines(ws(base + " --outfmt 6"));
  ASSERT_EQ(six.size(), 12u);
  for (const std::string& line : six) EXPECT_EQ(split(line, '\t').size(), 12u) << line;
  // outfmt 7: per query a comment block naming swsearch, the fields and the hit count; a closing line.
  const std::vector<std::string> seven = lines(ws(base + " --outfmt '7 qseqid sseqid score'"));
  ASSERT_EQ(seven.size(), 3u * (5 + 4) + 1);
  EXPECT_EQ(seven[0].rfind("# warpsearch swsearch ", 0), 0u) << seven[0];
  EXPECT_EQ(seven[1].rfind("# Query: ", 0), 0u);
  EXPECT_EQ(seven[2], "# Database: " + (dir / "db.fa"));
  EXPECT_EQ(seven[3], "# Fields: query id, subject id, score");
  EXPECT_EQ(seven[4], "# 4 hits found");
  EXPECT_EQ(seven.back(), "# warpsearch swsearch processed 3 queries");
  // The report: header, one section per query with 4 hits and their alignments, the totals.
  const std::string report = ws(base);
  EXPECT_EQ(report.rfind("warpsearch swsearch ", 0), 0u);
  EXPECT_TRUE(contains(report, "Scoring:    BLOSUM62, gap open 11, extend 1"));
  EXPECT_TRUE(contains(report, "Statistics: "));
  std::size_t queries = 0, blocks = 0;
  for (const std::string& line : lines(report)) {
    queries += line.rfind("Length: ", 0) == 0 ? 1 : 0;  // "Query: <defline>" then "Length: N aa"
    blocks += line.rfind(">>", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(queries, 3u);
  EXPECT_EQ(blocks, 12u);
  EXPECT_TRUE(contains(report, "\n3 queries searched against 400 database sequences ("));
  const std::string brief = ws(base + " --noalign");
  EXPECT_FALSE(contains(brief, "\n>>"));
  EXPECT_TRUE(contains(brief, "4 hits:"));
}

// Every error: its exit status, a message naming the problem, no output file left behind and nothing on
// stdout.
TEST_F(SwsearchCli, ErrorsExitWithTheirStatusAndLeaveNoOutput) {
  write_file(dir / "empty.fa", "");
  write_file(dir / "bad_tail.fa", first_records(tdata("prot/mmseqs_DB20k.fasta"), 50) + ">broken\nACD#!%\n");
  const std::string out = dir / "out.txt";
  struct Case {
    std::string args;
    int status;
    std::string message;
  };
  const std::string qd = "--query " + q3 + " --db " + db;
  const std::vector<Case> cases = {
      {"--query " + shell_quote(dir / "missing.fa") + " --db " + db, 3, "missing.fa"},
      {"--query " + q3 + " --db " + shell_quote(dir / "missing_db.fa"), 3, "missing_db.fa"},
      {qd + " --matrix NOSUCH", 2, "--matrix NOSUCH"},
      {qd + " --matrix " + shell_quote(dir / "no_such.mat"), 3, "no_such.mat"},  // a path: I/O error
      {qd + " --outfmt '6 qseqid nosuchfield'", 2, "nosuchfield"},
      {qd + " --outfmt 5", 2, "--outfmt"},
      {qd + " --noalign --outfmt '6 qseqid qstart'", 2, "qstart"},
      {qd + " --match 2", 2, "--dna"},
      {qd + " --dna --matrix BLOSUM62", 2, "protein matrix"},
      {qd + " -E 0", 2, ""},
      {qd + " --top 0", 2, ""},
      {qd + " -Z 0", 2, "-Z"},
      {qd + " --gapopen -1", 2, ""},
      {"--query - --db -", 2, "stdin"},
      {"--query " + shell_quote(dir / "empty.fa") + " --db " + db, 4, ""},
      {"--query " + q3 + " --db " + shell_quote(dir / "empty.fa"), 4, ""},
      {"--query " + q3 + " --db " + shell_quote(dir / "bad_tail.fa"), 4, "bad_tail.fa"},
  };
  for (const Case& c : cases) {
    const CliResult r = run_cli("swsearch " + c.args + " -o " + shell_quote(out));
    EXPECT_EQ(r.status, c.status) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
    EXPECT_EQ(dir.listing().count("out.txt"), 0u);
    for (const std::string& name : dir.listing())
      EXPECT_EQ(name.find("out.txt.tmp"), std::string::npos) << name;
    // Without -o nothing reaches stdout either (the report's header waits for the first results).
    const CliResult to_stdout = run_cli("swsearch " + c.args);
    EXPECT_EQ(to_stdout.status, c.status) << c.args;
    EXPECT_EQ(to_stdout.out, "") << c.args;
  }
  // Unwritable output: an I/O error before any work.
  const CliResult r = run_cli("swsearch " + qd + " -o " + shell_quote(dir / "no_dir/out.txt"));
  EXPECT_EQ(r.status, 3) << r.err;
}

}  // namespace
