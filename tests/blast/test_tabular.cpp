// test_tabular.cpp: tests of src/blast/tabular (BLAST+ 2.12 blastp -outfmt 6 / 7).
//
// TabularFormat*: spec parsing and refusal of unknown fields; the number formats on a grid of doubles
// against the printf rules documented in tabular.hpp (boundaries probed with nextafter).
// TabularBlastp*: blastp 2.12 runs (globins all-vs-all, UniProt queries vs part of DB20k) with all supported
// fields; every HSP is rebuilt from blastp's own qstart/qend/sstart/send/score/evalue/bitscore/BTOP and the
// FASTA records, re-formatted with several field lists in outfmt 6 and 7, and compared byte for byte with
// blastp's output for the same lists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "blast/tabular.hpp"
#include "blastp_oracle.hpp"
#include "protein_fasta.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {
namespace {
using test::have_blastp;
using test::split_on;

TEST(TabularFormat, ParsesSpecs) {
  const TabularFormat def = parse_tabular_format("6");
  EXPECT_EQ(def.outfmt, 6);
  ASSERT_EQ(def.fields.size(), 12u);
  EXPECT_EQ(def.fields.front(), TabularField::kQaccver);
  EXPECT_EQ(def.fields.back(), TabularField::kBitscore);
  // Repeats are dropped, also those "std" brings (blastp 2.12 prints "query acc.ver, ..." for "7 qaccver
  // std").
  const TabularFormat seven = parse_tabular_format("  7  qseqid qseqid\tsaccver std qlen std qseqid ");
  EXPECT_EQ(seven.outfmt, 7);
  ASSERT_EQ(seven.fields.size(), 14u);
  EXPECT_EQ(seven.fields[0], TabularField::kQseqid);
  EXPECT_EQ(seven.fields[1], TabularField::kSaccver);
  EXPECT_EQ(seven.fields[2], TabularField::kQaccver);
  EXPECT_EQ(seven.fields[3], TabularField::kPident);
  EXPECT_EQ(seven.fields[13], TabularField::kQlen);
  EXPECT_EQ(field_name(TabularField::kQcovhsp), "qcovhsp");
  EXPECT_EQ(def.delimiter, "\t");
  // 10: comma-separated; delim= right after the number chooses the separator (empty: the format's own).
  const TabularFormat ten = parse_tabular_format("10 qseqid sseqid");
  EXPECT_EQ(ten.outfmt, 10);
  EXPECT_EQ(ten.delimiter, ",");
  EXPECT_EQ(ten.fields.size(), 2u);
  EXPECT_EQ(parse_tabular_format("10").fields.size(), 12u);
  EXPECT_EQ(parse_tabular_format("7 delim=@@ std").delimiter, "@@");
  EXPECT_EQ(parse_tabular_format("6 delim=; qseqid").fields.size(), 1u);
  EXPECT_EQ(parse_tabular_format("10 delim=").delimiter, ",");
  EXPECT_EQ(parse_tabular_format("6 delim= qseqid").delimiter, "\t");
  for (const std::string& bad : std::vector<std::string>{"6 qseqid foo", "5", "", "0 qseqid",
                                                         "6 qseqid sallgis", "11", "6 qseqid delim=@"}) {
    try {
      (void)parse_tabular_format(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      if (bad.find("delim=") != std::string::npos) {
        EXPECT_NE(e.message().find("must come right after the format number"), std::string::npos)
            << e.message();
      } else if (bad.find('q') != std::string::npos && bad[0] == '6') {
        EXPECT_NE(e.message().find("supported fields: std qseqid"), std::string::npos) << e.message();
      }
    }
  }
}

// The rules' C formats are passed as arguments; each call site passes a literal.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
std::string printf_string(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
#pragma GCC diagnostic pop

// The rules of tabular.hpp written with the C formats blastp uses.
std::string evalue_rule(double e) {
  if (e < 1.0e-180) return "0.0";
  if (e < 0.0009) return printf_string("%2.2le", e);
  if (e < 0.1) return printf_string("%4.3lf", e);
  if (e < 1.0) return printf_string("%3.2lf", e);
  if (e < 10.0) return printf_string("%2.1lf", e);
  return printf_string("%2.0lf", e);
}
std::string bits_rule(double b) {
  if (b > 99999) return printf_string("%5.3le", b);
  if (b > 99.9) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%3.0ld", static_cast<long>(b));
    return buf;
  }
  return printf_string("%4.1lf", b);
}

TEST(TabularFormat, NumberGridMatchesPrintfRules) {
  std::vector<double> values{0.0,   1e-300, 1.0e-180, 1e-100,  1e-99,  0.0009, 0.1,  1.0,  10.0, 99.9, 99.95,
                             100.0, 99999,  1e6,      0.00095, 0.0995, 0.995,  9.95, 9.96, 0.05, 0.5,  5.5};
  for (double e = 1e-200; e < 1e7; e *= 1.37) values.push_back(e);
  for (double b = 0; b < 2e5; b += 0.0625) {
    if (b > 1000) b += 97.3;
    values.push_back(b);
  }
  const std::size_t n = values.size();
  for (std::size_t i = 0; i < n; ++i) {
    values.push_back(std::nextafter(values[i], 0.0));
    values.push_back(std::nextafter(values[i], 1e300));
  }
  for (double v : values) {
    EXPECT_EQ(format_tabular_evalue(v), evalue_rule(v)) << v;
    EXPECT_EQ(format_tabular_bitscore(v), bits_rule(v)) << v;
  }
  // Spot values seen in blastp 2.12 output.
  EXPECT_EQ(format_tabular_evalue(4.42e-115), "4.42e-115");
  EXPECT_EQ(format_tabular_evalue(17399), "17399");
  EXPECT_EQ(format_tabular_bitscore(9.6), " 9.6");
  EXPECT_EQ(format_tabular_bitscore(100.908), "100");
}

// ---------------------------------------------------------------------------------------------------------
// blastp 2.12 oracles.

using test::read_fasta;
using test::Record;
using test::write_fasta;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// target: "-subject FILE" or "-db NAME".
std::string run_blastp(const std::string& q, const std::string& target, const std::string& spec,
                       const std::string& out) {
  const std::string cmd = "blastp -query " + q + " " + target +
                          " -comp_based_stats 0 -seg no -num_threads 1 -outfmt '" + spec + "' > " + out +
                          " 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return slurp(out);
}

// BTOP -> edit runs (digits: identities; "XY": substitution; "X-": insertion; "-Y": deletion).
std::vector<EditRun> script_from_btop(const std::string& btop) {
  std::vector<EditRun> runs;
  auto add = [&](EditOp op, int n) {
    if (!runs.empty() && runs.back().op == op)
      runs.back().length += n;
    else
      runs.push_back({op, n});
  };
  for (std::size_t i = 0; i < btop.size();) {
    if (std::isdigit(static_cast<unsigned char>(btop[i]))) {
      int n = 0;
      while (i < btop.size() && std::isdigit(static_cast<unsigned char>(btop[i])))
        n = n * 10 + (btop[i++] - '0');
      add(EditOp::kSubstitution, n);
    } else {
      const char a = btop[i], b = btop[i + 1];
      i += 2;
      add(a == '-' ? EditOp::kDeletion : b == '-' ? EditOp::kInsertion : EditOp::kSubstitution, 1);
    }
  }
  return runs;
}

struct Parsed {
  std::size_t query = 0;
  TabularHit hit;
};

// Rebuilds blastp's HSPs from a run with the reconstruction columns; ids without -parse_deflines are the
// deflines' first tokens (checked by the comparisons that follow).
std::vector<Parsed> rebuild(const std::string& text, const std::vector<Record>& qs,
                            const std::vector<Record>& ss) {
  std::map<std::string, std::size_t> qi, si;
  for (std::size_t i = 0; i < qs.size(); ++i) qi[split_on(qs[i].defline, ' ')[0]] = i;
  for (std::size_t i = 0; i < ss.size(); ++i) si[split_on(ss[i].defline, ' ')[0]] = i;
  std::vector<Parsed> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = split_on(line, '\t');
    EXPECT_EQ(f.size(), 10u) << line;
    if (f.size() != 10u) continue;
    Parsed p;
    p.query = qi.at(f[0]);
    p.hit.subject = si.at(f[1]);
    TabularHsp& h = p.hit.hsp;
    h.q_start = std::stoi(f[2]) - 1;
    h.q_end = std::stoi(f[3]);
    h.s_start = std::stoi(f[4]) - 1;
    h.s_end = std::stoi(f[5]);
    h.score = std::stoi(f[6]);
    h.evalue = std::strtod(f[7].c_str(), nullptr);
    h.bits = std::strtod(f[8].c_str(), nullptr);
    h.script = script_from_btop(f[9]);
    out.push_back(std::move(p));
  }
  return out;
}

std::string all_fields() {
  std::string s = supported_tabular_fields();
  return s.substr(s.find(' ') + 1);  // without "std"
}

struct Case {
  std::string q_path, s_path;
  std::vector<Record> qs, ss;
  std::string db;  // when set: blastp -db db (made from s_path by makeblastdb) instead of -subject s_path

  std::string target() const { return db.empty() ? "-subject " + s_path : "-db " + db; }
};

void compare_with_blastp(const Case& c, const std::string& out_path, int* lines_checked) {
  const std::string recon = run_blastp(
      c.q_path, c.target(), "6 qseqid sseqid qstart qend sstart send score evalue bitscore btop", out_path);
  const std::vector<Parsed> parsed = rebuild(recon, c.qs, c.ss);
  ASSERT_FALSE(parsed.empty());
  std::vector<std::vector<TabularHit>> per_query(c.qs.size());
  for (const Parsed& p : parsed) per_query[p.query].push_back(p.hit);
  std::vector<TabularSequence> subjects;
  for (const Record& r : c.ss) subjects.push_back({r.defline, r.codes});
  const ScoringMatrix matrix = ScoringMatrix::builtin("BLOSUM62");
  const std::string all = all_fields();
  for (const std::string& spec :
       {std::string("6"), std::string("7"), "6 " + all, "7 " + all,
        std::string("7 qcovs qcovhsp std ppos qseq sseq qseqid qseqid saccver qlen")}) {
    const std::string expected = run_blastp(c.q_path, c.target(), spec, out_path);
    const TabularOptions options =
        c.db.empty() ? TabularOptions{subject_database_label(c.s_path), true} : TabularOptions{c.db, false};
    TabularWriter writer(parse_tabular_format(spec), matrix, options);
    std::string got;
    for (std::size_t q = 0; q < c.qs.size(); ++q)
      got += writer.query({c.qs[q].defline, c.qs[q].codes}, subjects, per_query[q]);
    got += writer.footer(c.qs.size());
    // Compare line by line for a readable failure.
    const auto e_lines = split_on(expected, '\n'), g_lines = split_on(got, '\n');
    EXPECT_EQ(e_lines.size(), g_lines.size()) << spec;
    for (std::size_t i = 0; i < std::min(e_lines.size(), g_lines.size()); ++i) {
      ASSERT_EQ(g_lines[i], e_lines[i]) << spec << " line " << i;
      ++*lines_checked;
    }
    EXPECT_EQ(got, expected) << spec;
  }
}

TEST(TabularBlastp, GlobinsAllVsAll) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  test::TempDir dir("ws_tabular");
  Case c;
  c.qs = read_fasta(test::testdata_dir() / "prot/globins45.fa", 1000);
  c.ss = c.qs;
  c.q_path = (dir.path() / "q.fa").string();
  c.s_path = (dir.path() / "s.fa").string();
  write_fasta(c.qs, c.q_path);
  write_fasta(c.ss, c.s_path);
  int lines = 0;
  compare_with_blastp(c, (dir.path() / "out.txt").string(), &lines);
  EXPECT_GT(lines, 5000);
}

TEST(TabularBlastp, UniProtQueriesVsDb) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  test::TempDir dir("ws_tabular");
  Case c;
  c.qs = read_fasta(test::testdata_dir() / "prot/mmseqs_QUERY500.fasta", 6);
  c.ss = read_fasta(test::testdata_dir() / "prot/mmseqs_DB20k.fasta", 600);
  // Id forms blastp keeps whole without -parse_deflines, and a query without hits.
  const std::vector<std::uint8_t> hba = c.qs[0].codes;
  for (const std::string& id : std::vector<std::string>{"sp|P69905.2|HBA_HUMAN desc", "ref|NP_000509.1| x",
                                                        "gnl|db|id7", "XP_123456.4 t"})
    c.ss.push_back({id, hba});
  c.qs.push_back({"lonely  ", {0, 1, 2}});
  c.q_path = (dir.path() / "q.fa").string();
  c.s_path = (dir.path() / "s.fa").string();
  write_fasta(c.qs, c.q_path);
  write_fasta(c.ss, c.s_path);
  int lines = 0;
  compare_with_blastp(c, (dir.path() / "out.txt").string(), &lines);
  EXPECT_GT(lines, 200);
}

// The same against a BLAST database (makeblastdb without -parse_seqids): "# Database: <name as given>" and
// stitle / salltitles are the whole defline as written, trailing blank included.
TEST(TabularBlastp, UniProtQueriesVsBlastDb) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp() || std::system("makeblastdb -version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "blastp / makeblastdb not installed";
  test::TempDir dir("ws_tabular");
  Case c;
  c.qs = read_fasta(test::testdata_dir() / "prot/mmseqs_QUERY500.fasta", 4);
  c.ss = read_fasta(test::testdata_dir() / "prot/mmseqs_DB20k.fasta", 400);
  c.q_path = (dir.path() / "q.fa").string();
  c.s_path = (dir.path() / "s.fa").string();
  c.db = (dir.path() / "sdb").string();
  write_fasta(c.qs, c.q_path);
  write_fasta(c.ss, c.s_path);
  const std::string cmd = "makeblastdb -in " + c.s_path + " -dbtype prot -out " + c.db + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  int lines = 0;
  compare_with_blastp(c, (dir.path() / "out.txt").string(), &lines);
  EXPECT_GT(lines, 100);
}

// Coverage rounding and the per-subject union: prefixes of a 381-residue protein give 380/381 = 99.7 %
// (blastp prints 99, not 100), 98.95 % (99) and 98.4 % (98); rearranged copies give two HSPs per subject
// whose query ranges are disjoint or overlap, so qcovs (union) differs from qcovhsp.
TEST(TabularBlastp, CoverageRoundingAndUnion) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  test::TempDir dir("ws_tabular");
  Case c;
  const std::vector<Record> db = read_fasta(test::testdata_dir() / "prot/mmseqs_DB20k.fasta", 2);
  const std::vector<std::uint8_t>& full = db[1].codes;
  ASSERT_EQ(full.size(), 381u);
  c.qs.push_back({db[1].defline, full});
  auto part = [&](std::size_t b, std::size_t e) {
    return std::vector<std::uint8_t>(full.begin() + static_cast<std::ptrdiff_t>(b),
                                     full.begin() + static_cast<std::ptrdiff_t>(e));
  };
  auto join = [](std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  c.ss.push_back({"prefix380", part(0, 380)});
  c.ss.push_back({"prefix377", part(0, 377)});
  c.ss.push_back({"prefix375", part(0, 375)});
  c.ss.push_back({"disjoint", join(part(200, 381), part(0, 150))});
  c.ss.push_back({"overlap", join(part(100, 381), part(0, 200))});
  c.q_path = (dir.path() / "q.fa").string();
  c.s_path = (dir.path() / "s.fa").string();
  write_fasta(c.qs, c.q_path);
  write_fasta(c.ss, c.s_path);
  const std::string text =
      run_blastp(c.q_path, c.target(), "6 sseqid qcovs qcovhsp", (dir.path() / "o").string());
  EXPECT_NE(text.find("prefix380\t99\t99\n"), std::string::npos) << text;
  EXPECT_NE(text.find("overlap\t100\t"), std::string::npos) << text;
  int lines = 0;
  compare_with_blastp(c, (dir.path() / "out.txt").string(), &lines);
  EXPECT_GT(lines, 20);
}

// "positive" as BLAST's formatter counts it (display_matrix.hpp): an identity always (X with X scores -1
// in BLOSUM62), U with C as C with C, and letters outside ARNDCQEGHILKMFPSTWYVBZX* (J, O) never against
// another letter. Without blastp: the counts of one gapless HSP.
TEST(TabularWriter, PositivesFollowTheFormattersMatrix) {
  const Alphabet alpha = Alphabet::protein();
  auto codes = [&](std::string_view text) {
    std::vector<std::uint8_t> v;
    for (const char c : text) v.push_back(*alpha.code(c));
    return v;
  };
  const std::vector<std::uint8_t> q = codes("AXUJWOOU"), s = codes("AXCLWOAU");
  TabularHit hit;
  hit.hsp.score = 10;
  hit.hsp.q_end = hit.hsp.s_end = 8;
  hit.hsp.script = {EditRun{EditOp::kSubstitution, 8}};
  const std::vector<TabularSequence> subjects{{"s", s}};
  const TabularWriter writer(parse_tabular_format("6 nident positive mismatch"),
                             ScoringMatrix::builtin("BLOSUM62"), TabularOptions{});
  // Identities A X W O U (5); positives those and U/C (6); J/L and O/A are not.
  EXPECT_EQ(writer.query({"q", q}, subjects, std::vector<TabularHit>{hit}), "5\t6\t3\n");
}

// The same against blastp: a protein with one position replaced by X, U, O, J, C or L, all against all.
TEST(TabularBlastp, RareLettersAgainstEachOther) {
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  test::TempDir dir("ws_tabular");
  const Alphabet alpha = Alphabet::protein();
  const std::string base = "MKTAYIAKQRQISFVKSHFSRQLEERLGLI?VQAPILSRVGDGTQDNLSGAEKAVQVKVK";
  Case c;
  for (const char letter : std::string("XUOJCL")) {
    std::string text = base;
    text[text.find('?')] = letter;
    std::vector<std::uint8_t> v;
    for (const char ch : text) v.push_back(*alpha.code(ch));
    c.qs.push_back({std::string("q_") + letter, v});
    c.ss.push_back({std::string("s_") + letter, v});
  }
  c.q_path = (dir.path() / "q.fa").string();
  c.s_path = (dir.path() / "s.fa").string();
  write_fasta(c.qs, c.q_path);
  write_fasta(c.ss, c.s_path);
  int lines = 0;
  compare_with_blastp(c, (dir.path() / "out.txt").string(), &lines);
  EXPECT_GT(lines, 100);
}

// Bit scores from their real double values (not from blastp's text): BLOSUM62 11/1's tabulated lambda 0.267
// and K 0.041, bits = (lambda * score - ln K) / ln 2, formatted must give blastp's column (truncation above
// 99.9, %4.1f below).
TEST(TabularBlastp, BitScoresFromDoubles) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  test::TempDir dir("ws_tabular");
  const std::string fa = (test::testdata_dir() / "prot/globins45.fa").string();
  const std::string text = run_blastp(fa, "-subject " + fa, "6 score bitscore", (dir.path() / "o").string());
  std::istringstream in(text);
  std::string line;
  int n = 0, truncated = 0;
  while (std::getline(in, line)) {
    const auto f = split_on(line, '\t');
    ASSERT_EQ(f.size(), 2u);
    const double bits = (0.267 * std::stoi(f[0]) - std::log(0.041)) / std::log(2.0);
    EXPECT_EQ(format_tabular_bitscore(bits), f[1]) << line;
    truncated += bits > 99.9 && bits - std::floor(bits) >= 0.5;
    ++n;
  }
  EXPECT_GT(n, 1000);
  EXPECT_GT(truncated, 100);  // values that rounding instead of truncation would print differently
}

}  // namespace
}  // namespace warpsearch::blast
