// test_pairwise.cpp: tests of src/blast/pairwise (BLAST+ 2.12 blastp -outfmt 0).
//
// PairwiseText*: blast_wrap and blast_defline_title on texts whose blastp 2.12 rendering was observed.
// PairwiseBlastp*: whole reports, byte for byte: blastp_search (comp_based_stats 0, which reproduces blastp)
//   fills the writer, and the text is compared with `blastp -outfmt 0` run on the same files (skipped
//   without blastp / makeblastdb):
//   - Subjects: HBB / globins against globins45 plus HBB copies with deflines that exercise the title rules
//     (long, blank runs, punctuation, prefixes, HTML references, control characters), a query without hits,
//     long and empty query deflines; -subject and a BLAST database (makeblastdb -title).
//   - UniProt queries against the first records of DB20k as a database, with -seg no and -seg yes (masked
//     query letters in lowercase); a query with over 250 subjects with hits (-evalue 1000: blastp lists
//     500 and aligns 250 by default).
//   - Long gaps (whole 60-column lines of gaps in one row, X-drop options raised), E-values >= 10
//     (-evalue 1e5), a 5200-residue self hit (bit score > 9999).
// PairwiseCbs*: composition-based statistics (no engine yet): a real blastp 2.12 snippet (default
//   -comp_based_stats 2) with both ", Method:" suffixes, rebuilt from its inputs embedded below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "blast/hsp.hpp"
#include "blast/pairwise.hpp"
#include "blast/search.hpp"
#include "protein_fasta.hpp"
#include "stats/blast_stats.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {

using test::read_fasta;
using test::Record;
using test::write_fasta;

std::vector<std::uint8_t> codes_of(std::string_view letters) {
  const Alphabet alpha = Alphabet::protein();
  std::vector<std::uint8_t> out;
  for (char c : letters)
    if (const auto code = alpha.code(c)) out.push_back(*code);
  return out;
}

bool have_tool(const char* tool) {
  return std::system((std::string(tool) + " -version > /dev/null 2>&1").c_str()) == 0;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// Big-endian int32 + bytes, as the .pin header stores its strings.
std::string read_pin_string(std::ifstream& in) {
  unsigned char b[4];
  in.read(reinterpret_cast<char*>(b), 4);
  const std::uint32_t n =
      (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  return s;
}

// The date a BLAST database stores (what a driver reading the database prints as "Posted date:"): the .pin
// header holds version, type, [volume (v5)], title, [LMDB name (v5)], date.
std::string database_date(const std::string& db) {
  std::ifstream in(db + ".pin", std::ios::binary);
  unsigned char v[4];
  in.read(reinterpret_cast<char*>(v), 4);
  const int version = v[3];
  in.ignore(4);  // sequence type
  if (version == 5) in.ignore(4);
  (void)read_pin_string(in);  // title
  if (version == 5) (void)read_pin_string(in);
  std::string date = read_pin_string(in);
  while (!date.empty() && date.back() == '\0') date.pop_back();  // NUL padding
  return date;
}

struct Case {
  std::vector<Record> queries, subjects;
  BlastpOptions options;
  std::string blastp_args;  // options given to blastp as well
  bool database = false;
};

// Runs blastp and the engine + writer on the case and compares the whole reports line by line; returns
// blastp's report.
std::string compare_report(const Case& c, const std::string& name, int* lines_checked) {
  test::TempDir dir("ws_pairwise");
  const std::string q_path = dir / "q.fa", s_path = dir / "s.fa", db = dir / "sdb", out = dir / "out.txt";
  write_fasta(c.queries, q_path);
  write_fasta(c.subjects, s_path);
  const std::string db_title = "warpsearch pairwise test database, " + name;
  std::int64_t letters = 0;
  for (const Record& r : c.subjects) letters += static_cast<std::int64_t>(r.codes.size());
  PairwiseOptions po;
  po.gaps = c.options.gaps;
  po.window = c.options.window > 0 ? c.options.window : blastp_default_window(c.options.matrix);
  po.subject_mode = !c.database;
  po.database_sequences = static_cast<std::int64_t>(c.subjects.size());
  po.database_letters = letters;
  if (c.blastp_args.find("-max_target_seqs") != std::string::npos)  // blastp then lists and aligns N subjects
    po.num_descriptions = po.num_alignments = static_cast<std::size_t>(c.options.max_target_seqs);
  std::string target = "-subject " + s_path;
  if (c.database) {
    const std::string cmd = "makeblastdb -in " + s_path + " -dbtype prot -title '" + db_title + "' -out " +
                            db + " > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    target = "-db " + db;
    po.database_title = db_title;
    po.posted_date = database_date(db);
  } else {
    po.database_title = subject_database_title(s_path);
  }
  const std::string cmd = "blastp -query " + q_path + " " + target + " -comp_based_stats 0 -num_threads 1 " +
                          c.blastp_args + " > " + out + " 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string expected = test::read_file(out);

  const ScoringMatrix matrix = ScoringMatrix::builtin(c.options.matrix);
  std::vector<Residues> subjects;
  std::vector<std::string_view> deflines;
  for (const Record& r : c.subjects) {
    subjects.emplace_back(r.codes);
    deflines.emplace_back(r.defline);
  }
  std::vector<BlastpResult> results;
  for (const Record& q : c.queries) results.push_back(blastp_search(q.codes, subjects, c.options));
  if (!results.empty()) po.threshold = results.front().setup.threshold;
  const PairwiseWriter writer(matrix, po);
  std::string got = writer.header();
  for (std::size_t qi = 0; qi < c.queries.size(); ++qi) {
    const BlastpSetup& setup = results[qi].setup;
    PairwiseQuery pq;
    pq.defline = c.queries[qi].defline;
    pq.residues = c.queries[qi].codes;
    pq.mask = setup.mask;
    pq.ungapped = setup.ungapped;
    pq.search_space = setup.lengths.search_space;
    got += writer.query(pq, pairwise_hits(results[qi].hits, subjects, deflines));
  }
  got += writer.footer();

  const auto e_lines = split_lines(expected), g_lines = split_lines(got);
  EXPECT_EQ(e_lines.size(), g_lines.size()) << name;
  for (std::size_t i = 0; i < std::min(e_lines.size(), g_lines.size()); ++i) {
    if (g_lines[i] != e_lines[i]) {
      std::string context;  // blastp's lines around the first difference
      for (std::size_t k = i >= 20 ? i - 20 : 0; k <= std::min(i + 3, e_lines.size() - 1); ++k)
        context += e_lines[k] + "\n";
      ADD_FAILURE() << name << ": line " << i + 1 << "\n  ours:   " << g_lines[i]
                    << "\n  blastp: " << e_lines[i] << "\nblastp's text around it:\n"
                    << context;
      return expected;
    }
    ++*lines_checked;
  }
  EXPECT_EQ(got, expected) << name;
  return expected;
}

// HBB (from prot/HBB_HUMAN) with its residue 3 * i changed, so every copy hits HBB queries.
std::vector<std::uint8_t> hbb_variant(const std::vector<std::uint8_t>& hbb, std::size_t i) {
  std::vector<std::uint8_t> v = hbb;
  v[(3 * i) % v.size()] = codes_of("W")[0];
  return v;
}

// Deflines whose rendering blastp 2.12 was seen to change (see pairwise.hpp's rules).
const std::vector<std::string>& title_deflines() {
  static const std::vector<std::string> names{
      "id1",
      "id2   multiple   spaces  inside  ",
      "",
      std::string(100, 'A'),
      std::string(67, 'B'),
      std::string(68, 'C') + " ",
      std::string(69, 'D'),
      std::string(65, 'E') + " xyz",
      std::string(59, 'F') + " " + std::string(70, 'g') + " h",
      std::string(60, 'G') + " tail",
      std::string(119, 'H') + " x x x x x x x x x x x x x x x x x x x x",
      std::string(58, 'I') +
          "  j k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k k",
      "  leading spaces",
      std::string(30, 'J') + ", comma," + std::string(40, '-') + " dash-dash",
      "p1 ends with period.",
      "p2 ends with dots...",
      "p3 trailing junk ,;~ . ",
      "TSA: p4 prefixed",
      "TPA_exp: p5",
      "UNVERIFIED: p6 x",
      "p7 a ( b ) c , d",
      "p8 sp.",
      "p9 ~tilde~ mid",
      "p10 a,,b  ;  c",
      ".",
      "h1 a&amp;b",
      "h2 &#65;&#x42;",
      "h3 prot [Homo sapiens]",
      "h4 prot. [Homo]",
      "h5 y, [z]",
      "MAG: h6",
      "MULTISPECIES: h7 r",
      "h8 a &lt;b&gt; &nbsp;x &unknown; &",
      "mag h9",
      "h10 (a,b) ; c",
      "h11 ,, x",
      "h12 a ,b",
      "h13 (  a  )",
      "TLS: k1",
      "TPA_reasm: k3",
      "UNVERIFIED_CONTAM: k7",
      "TPA: MAG k13",
      "k11 &#x42;x &#X43;y &#66 &#1234; &#xe9;",
      "k12 &excl;&eacute;&copy;",
      "k14 a ; ; b",
      "k15 x , , y",
      "Isoleucine--tRNA ligase OS=Bacillus sp. G3(2015) GN=ileS PE=3 SV=1 Split=0 with more words to wrap"};
  return names;
}

std::vector<Record> hbb_queries(const std::vector<std::uint8_t>& hbb) {
  std::vector<Record> q;
  q.push_back({"HBB_HUMAN Human beta hemoglobin.", hbb});
  q.push_back({"lonely  ", codes_of("ACDEFGH")});
  q.push_back(
      {"q2 short query two with a much longer description that goes on and on and on past eighty "
       "columns, with commas, and-hyphens-in-words and (parentheses) [brackets] to see wrapping "
       "behaviour " +
           std::string(95, 'x') + " end",
       std::vector<std::uint8_t>(hbb.begin(), hbb.begin() + 100)});
  q.push_back({"", std::vector<std::uint8_t>(hbb.begin() + 20, hbb.end())});
  q.push_back({"  " + std::string(66, 'Q') + ",hyphen-ated-words-" + std::string(70, 'R'), hbb});
  return q;
}

TEST(PairwiseText, WrapAndTitles) {
  // Query= lines of blastp 2.12 (width 68): blanks first, then commas, hyphens, then a forced break.
  const auto lines = blast_wrap(
      "q2 short query two with a much longer description that goes on and on and on past eighty columns, "
      "with "
      "commas, and-hyphens-in-words and (parentheses) [brackets] to see wrapping behaviour " +
          std::string(95, 'x') + " end",
      68);
  const std::vector<std::string> expected{
      "q2 short query two with a much longer description that goes on and",
      "on and on past eighty columns, with commas, and-hyphens-in-words and",
      "(parentheses) [brackets] to see wrapping behaviour", std::string(68, 'x'),
      std::string(27, 'x') + " end"};
  EXPECT_EQ(lines, expected);
  EXPECT_EQ(blast_wrap("", 68).size(), 0u);
  EXPECT_EQ(blast_wrap(std::string(68, 'a'), 68), std::vector<std::string>{std::string(68, 'a')});
  // Titles as blastp 2.12 printed them in the description table.
  EXPECT_EQ(blast_defline_title("id2   multiple   spaces  inside  "), "id2 multiple spaces inside");
  EXPECT_EQ(blast_defline_title(""), "unnamed protein product");
  EXPECT_EQ(blast_defline_title("p2 ends with dots..."), "p2 ends with dots");
  EXPECT_EQ(blast_defline_title("."), ".");
  EXPECT_EQ(blast_defline_title("p7 a ( b ) c , d"), "p7 a (b) c, d");
  EXPECT_EQ(blast_defline_title("p10 a,,b  ;  c"), "p10 a, b; c");
  EXPECT_EQ(blast_defline_title("h11 ,, x"), "h11,, x");
  EXPECT_EQ(blast_defline_title("TPA: MAG k13"), "MAG k13");
  EXPECT_EQ(blast_defline_title("mag tpa: k9"), "k9");
  EXPECT_EQ(blast_defline_title("MULTISPECIES: h7 r"), "MULTISPECIES: h7 r");
  EXPECT_EQ(blast_defline_title("h5 y, [z]"), "h5 y [z]");
  EXPECT_EQ(blast_defline_title("k11 &#x42;x &#X43;y &#66 &#1234; &#xe9;"), "k11 Bx Cy &#66 \xD3\x92 &#xe9");
  EXPECT_EQ(blast_defline_title("k12 &Tab;&excl;&eacute;&copy;"), "k12 \t!\xC3\xA9&copy");
}

TEST(PairwiseBlastp, HbbAgainstGlobinsAndTitles) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/HBB_HUMAN");
  if (!have_tool("blastp") || !have_tool("makeblastdb")) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::vector<std::uint8_t> hbb =
      read_fasta((test::testdata_dir() / "prot/HBB_HUMAN").string(), 1)[0].codes;
  Case c;
  c.queries = hbb_queries(hbb);
  c.subjects = read_fasta((test::testdata_dir() / "prot/globins45.fa").string(), 1000);
  c.queries.push_back(c.subjects[0]);
  const auto& names = title_deflines();
  for (std::size_t i = 0; i < names.size(); ++i) c.subjects.push_back({names[i], hbb_variant(hbb, i)});
  int lines = 0;
  const std::string text = compare_report(c, "subjects", &lines);
  EXPECT_NE(text.find("***** No hits found *****"), std::string::npos);
  EXPECT_NE(text.find("\nQuery= \nLength="), std::string::npos);  // empty query defline
  c.database = true;
  compare_report(c, "database", &lines);
  // Control characters end a FASTA defline (-subject only: makeblastdb rewrites or refuses them). A
  // carriage return is a line break for blastp's reader (a matter for the driver's reader: not here).
  c.database = false;
  for (const std::string& d : {std::string("id3\tTab\tseparated"),
                               std::string("p12 \x01"
                                           "ctl"),
                               std::string("p13 x\x0bvt")})
    c.subjects.push_back({d, hbb_variant(hbb, c.subjects.size())});
  c.queries.push_back({"tabbed\tquery title", hbb});
  compare_report(c, "control characters", &lines);
  EXPECT_GT(lines, 3000);
}

TEST(PairwiseBlastp, UniProtDatabaseWithSeg) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_tool("blastp") || !have_tool("makeblastdb")) GTEST_SKIP() << "blastp / makeblastdb not installed";
  Case c;
  c.queries = read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), 4);
  c.subjects = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 1200);
  // The second query (CD6, 635 residues) has SEG segments and close homologs: put some in the subjects.
  for (const Record& r : c.queries) c.subjects.push_back({"copy of " + r.defline, r.codes});
  c.database = true;
  int lines = 0;
  compare_report(c, "uniprot", &lines);
  c.options.seg = true;
  c.blastp_args = "-seg yes";
  const std::string text = compare_report(c, "uniprot seg", &lines);
  EXPECT_NE(text.find("Query  421  fillRIKGKY"), std::string::npos);  // SEG-masked letters in lowercase
  c.database = false;
  compare_report(c, "uniprot seg subject", &lines);
  // More than 250 subjects with hits: blastp's default limits (500 descriptions, 250 alignments).
  Case many;
  many.queries.assign(c.queries.begin(), c.queries.begin() + 1);
  many.subjects = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 3000);
  many.options.evalue = 1000;
  many.blastp_args = "-seg no -evalue 1000";
  const std::string many_text = compare_report(many, "default limits", &lines);
  EXPECT_GT(many_text.find("\n\nLambda"), many_text.find("\n> ") + 250);
  std::size_t headings = 0;
  for (std::size_t p = many_text.find("\n> "); p != std::string::npos; p = many_text.find("\n> ", p + 1))
    ++headings;
  EXPECT_EQ(headings, 250u);
  EXPECT_GT(lines, 2000);
}

TEST(PairwiseBlastp, GapsEvaluesAndLargeScores) {
  WS_REQUIRE_TESTDATA("prot/HBB_HUMAN");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_tool("blastp")) GTEST_SKIP() << "blastp not installed";
  const std::vector<std::uint8_t> hbb =
      read_fasta((test::testdata_dir() / "prot/HBB_HUMAN").string(), 1)[0].codes;
  std::mt19937 rng(611);
  auto random_protein = [&](std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (auto& x : v) x = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 19)(rng));
    return v;
  };
  auto join = [](std::vector<std::vector<std::uint8_t>> parts) {
    std::vector<std::uint8_t> v;
    for (const auto& p : parts) v.insert(v.end(), p.begin(), p.end());
    return v;
  };
  auto part = [&](std::size_t b, std::size_t e) {
    return std::vector<std::uint8_t>(hbb.begin() + static_cast<std::ptrdiff_t>(b),
                                     hbb.begin() + static_cast<std::ptrdiff_t>(e));
  };
  Case c;
  c.queries.push_back(
      {"HBBins query with insertion", join({part(0, 50), random_protein(65), part(50, hbb.size())})});
  c.subjects.push_back({"ins130 subject with a 130-residue insertion",
                        join({part(0, 70), random_protein(130), part(70, hbb.size())})});
  c.subjects.push_back({"del65 query has extra", join({part(0, 50), part(115, hbb.size())})});
  c.subjects.push_back({"rare letters", join({part(0, 20), codes_of("UUCCOJBZ*"), part(20, hbb.size())})});
  // A one-residue last line whose start has one digit more than the last 0-based position: "Sbjct  100 P".
  c.queries.push_back({"start overflow", join({codes_of("CCCCCCCCCC"), part(39, 100)})});
  c.subjects.push_back(
      {"start overflow subject", join({codes_of(std::string(39, 'W')), part(39, 100), codes_of("GGG")})});
  c.options.xdrop_gap_bits = 200;
  c.options.xdrop_gap_final_bits = 300;
  c.blastp_args = "-seg no -xdrop_gap 200 -xdrop_gap_final 300";
  int lines = 0;
  const std::string gap_text = compare_report(c, "long gaps", &lines);
  EXPECT_NE(gap_text.find("\nSbjct       ------------------------------------------------------------  \n"),
            std::string::npos);  // a line of gaps: no positions
  EXPECT_NE(gap_text.find("\nSbjct  100 "), std::string::npos);

  // E-values of every printed form (-evalue 1e5: up to thousands), bit scores below 10.
  Case e;
  e.queries.push_back({"HBB", hbb});
  e.queries.push_back({"short HBB piece", part(30, 52)});
  e.queries.push_back({"tiny", codes_of("WWCCHHMM")});
  e.subjects = read_fasta((test::testdata_dir() / "prot/globins45.fa").string(), 12);
  const auto db = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 150);
  e.subjects.insert(e.subjects.end(), db.begin(), db.end());
  e.options.evalue = 1e5;
  e.options.max_target_seqs = 60;
  e.blastp_args = "-seg no -evalue 1e5 -max_target_seqs 60";
  const std::string text = compare_report(e, "evalues", &lines);
  EXPECT_TRUE(std::regex_search(text, std::regex(" Score =  [0-9]\\.[0-9] bits")));  // padded bits
  EXPECT_TRUE(std::regex_search(text, std::regex("Expect = [0-9]{4}\n")));           // E >= 1000
  EXPECT_TRUE(std::regex_search(text, std::regex("Expect = [0-9]e-[0-9]{2}\n")));
  // A 5200-residue self hit: over 9999 bits (printed whole: 2.12 switches to %e above 99999), E = 0.0.
  Case b;
  const std::vector<std::uint8_t> big = random_protein(5200);
  b.queries.push_back({"big", big});
  b.subjects = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 20);
  b.subjects.push_back({"big copy", big});
  b.blastp_args = "-seg no";
  const std::string big_text = compare_report(b, "large score", &lines);
  EXPECT_TRUE(
      std::regex_search(big_text, std::regex(" Score = [0-9]{5} bits \\([0-9]+\\),  Expect = 0\\.0\n")));
  EXPECT_GT(lines, 500);
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
    if (btop[i] >= '0' && btop[i] <= '9') {
      int n = 0;
      while (i < btop.size() && btop[i] >= '0' && btop[i] <= '9') n = n * 10 + (btop[i++] - '0');
      add(EditOp::kSubstitution, n);
    } else {
      const char a = btop[i], b = btop[i + 1];
      i += 2;
      add(a == '-' ? EditOp::kDeletion : b == '-' ? EditOp::kInsertion : EditOp::kSubstitution, 1);
    }
  }
  return runs;
}

// blastp 2.12.0+ with its default -comp_based_stats 2, query sp|P84927|DMS7_PHYTS (the 6th record of
// prot/mmseqs_QUERY500.fasta) against prot/mmseqs_DB20k.fasta made into a database by makeblastdb: the
// query's block of the -outfmt 0 report ('$' ends each line, so trailing blanks are visible) and, from
// -outfmt "6 sseqid slen qstart qend sstart send score evalue bitscore btop" of the same search, the HSPs
// (the last column: the ", Method:" suffix the report shows, 2 = matrix adjust, 1 = composition-based).
constexpr std::string_view kCbsQuery = "ALWKDVLKKIGTVALHAGKAALGAVADTISQ";
constexpr std::string_view kCbsHsps =
    "tr|Q7T3K6|Q7T3K6_PHYSA\t79\t1\t31\t46\t76\t82\t1.88e-05\t36.2\t4DTVM3IL2VM11VA6\t2\n"
    "sp|O93452|DMS2_PACDA\t75\t1\t31\t45\t72\t69\t0.002\t31.2\t4DTVL3IV1TK1A-L-H-4AV1GN2ATDNTMIASN1\t2\n"
    "tr|A0A063YDT6|A0A063YDT6_9MOLU\t181\t4\t30\t111\t137\t47\t4.0\t22.7\t"
    "2VILIKS1IL2VTAELFHKARGI1AVAGLI1ARVSAS1TV1SN\t1\n"
    "tr|A0A063YFW1|A0A063YFW1_9MOLU\t181\t4\t30\t111\t137\t47\t4.0\t22.7\t"
    "2VILIKS1IL2VTAELFHKARGI1AVAGLI1ARVSAS1TV1SN\t1\n"
    "tr|T9AIT7|T9AIT7_ECOLX\t835\t2\t31\t479\t508\t45\t6.9\t21.9\t"
    "LV1KEDNVR2KNIRGM1VLAS1HNAQGSKLAGAT2AS1ASDLTSIA2\t1\n";
constexpr std::string_view kCbsReport =
    R"pw(Query= sp|P84927|DMS7_PHYTS Dermaseptin-7 OS=Phyllomedusa tarsius PE=1 SV=1$
Split=0$
$
Length=31$
                                                                      Score     E$
Sequences producing significant alignments:                          (Bits)  Value$
$
tr|Q7T3K6|Q7T3K6_PHYSA Dermaseptin sI OS=Phyllomedusa sauvagei PE...  36.2    2e-05$
sp|O93452|DMS2_PACDA Dermaseptin PD-2-2 OS=Pachymedusa dacnicolor...  31.2    0.002$
tr|A0A063YDT6|A0A063YDT6_9MOLU Peptidyl-tRNA hydrolase OS=Mycopla...  22.7    4.0  $
tr|A0A063YFW1|A0A063YFW1_9MOLU Peptidyl-tRNA hydrolase OS=Mycopla...  22.7    4.0  $
tr|T9AIT7|T9AIT7_ECOLX Uncharacterized protein OS=Escherichia col...  21.9    6.9  $
$
$
>tr|Q7T3K6|Q7T3K6_PHYSA Dermaseptin sI OS=Phyllomedusa sauvagei $
PE=2 SV=1 Split=0 $
Length=79$
$
 Score = 36.2 bits (82),  Expect = 2e-05, Method: Compositional matrix adjust.$
 Identities = 26/31 (84%), Positives = 29/31 (94%), Gaps = 0/31 (0%)$
$
Query  1   ALWKDVLKKIGTVALHAGKAALGAVADTISQ  31$
           ALWK +LKK+GT+ALHAGKAALGA ADTISQ$
Sbjct  46  ALWKTMLKKLGTMALHAGKAALGAAADTISQ  76$
$
$
>sp|O93452|DMS2_PACDA Dermaseptin PD-2-2 OS=Pachymedusa dacnicolor $
PE=2 SV=1 Split=0 $
Length=75$
$
 Score = 31.2 bits (69),  Expect = 0.002, Method: Compositional matrix adjust.$
 Identities = 17/31 (55%), Positives = 21/31 (68%), Gaps = 3/31 (10%)$
$
Query  1   ALWKDVLKKIGTVALHAGKAALGAVADTISQ  31$
           ALWK +LKK+G V   AGKA L AV +  +Q$
Sbjct  45  ALWKTLLKKVGKV---AGKAVLNAVTNMANQ  72$
$
$
>tr|A0A063YDT6|A0A063YDT6_9MOLU Peptidyl-tRNA hydrolase OS=Mycoplasma $
hyosynoviae GN=pth PE=3 SV=1 Split=0 $
Length=181$
$
 Score = 22.7 bits (47),  Expect = 4.0, Method: Composition-based stats.$
 Identities = 9/27 (33%), Positives = 15/27 (56%), Gaps = 0/27 (0%)$
$
Query  4    KDVLKKIGTVALHAGKAALGAVADTIS  30$
            KD++ K+GT      K  +G  +D I+$
Sbjct  111  KDIISKLGTTEFKRIKVGIGRSSDVIN  137$
$
$
>tr|A0A063YFW1|A0A063YFW1_9MOLU Peptidyl-tRNA hydrolase OS=Mycoplasma $
hyosynoviae GN=pth PE=3 SV=1 Split=0 $
Length=181$
$
 Score = 22.7 bits (47),  Expect = 4.0, Method: Composition-based stats.$
 Identities = 9/27 (33%), Positives = 15/27 (56%), Gaps = 0/27 (0%)$
$
Query  4    KDVLKKIGTVALHAGKAALGAVADTIS  30$
            KD++ K+GT      K  +G  +D I+$
Sbjct  111  KDIISKLGTTEFKRIKVGIGRSSDVIN  137$
$
$
>tr|T9AIT7|T9AIT7_ECOLX Uncharacterized protein OS=Escherichia $
coli UMEA 3200-1 GN=G938_05070 PE=3 SV=1 Split=0 $
Length=835$
$
 Score = 21.9 bits (45),  Expect = 6.9, Method: Composition-based stats.$
 Identities = 10/30 (33%), Positives = 19/30 (63%), Gaps = 0/30 (0%)$
$
Query  2    LWKDVLKKIGTVALHAGKAALGAVADTISQ  31$
            +W++ LK   T++L+     LG+V+ + SQ$
Sbjct  479  VWENRLKNRMTLSLNQSLGTLGSVSLSASQ  508$
$
$
$
Lambda      K        H        a         alpha$
   0.317    0.129    0.369    0.792     4.96 $
$
Gapped$
Lambda      K        H        a         alpha    sigma$
   0.267   0.0410    0.140     1.90     42.6     43.6 $
$
Effective search space used: 223389225$)pw";

TEST(PairwiseCbs, CompositionAdjustedSnippet) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::vector<Record> db =
      read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 100000);
  std::int64_t letters = 0;
  for (const Record& r : db) letters += static_cast<std::int64_t>(r.codes.size());
  const ScoringMatrix matrix = ScoringMatrix::builtin("BLOSUM62");
  PairwiseOptions po;
  po.subject_mode = false;
  po.database_title = "mmseqs_DB20k";
  po.database_sequences = static_cast<std::int64_t>(db.size());
  po.database_letters = letters;

  const std::vector<std::uint8_t> query = codes_of(kCbsQuery);
  const auto ungapped = stats::query_ungapped_params(matrix, query);
  const auto gapped = stats::gapped_params(matrix, GapCosts{11, 1});
  ASSERT_TRUE(ungapped && gapped);
  PairwiseQuery pq;
  pq.defline = "sp|P84927|DMS7_PHYTS Dermaseptin-7 OS=Phyllomedusa tarsius PE=1 SV=1 Split=0 ";
  pq.residues = query;
  pq.ungapped = *ungapped;
  pq.search_space =
      effective_lengths(*gapped, static_cast<int>(query.size()), letters, static_cast<int>(db.size()))
          .search_space;

  std::vector<PairwiseSubjectHits> hits;
  std::istringstream in{std::string(kCbsHsps)};
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    ASSERT_EQ(f.size(), 11u);
    const auto it = std::find_if(db.begin(), db.end(), [&](const Record& r) {
      return r.defline.substr(0, r.defline.find(' ')) == f[0];
    });
    ASSERT_NE(it, db.end()) << f[0];
    ASSERT_EQ(it->codes.size(), std::stoul(f[1]));
    PairwiseHsp h;
    h.q_start = std::stoi(f[2]) - 1;
    h.q_end = std::stoi(f[3]);
    h.s_start = std::stoi(f[4]) - 1;
    h.s_end = std::stoi(f[5]);
    h.score = std::stoi(f[6]);
    h.evalue = std::stod(f[7]);
    h.bits = std::stod(f[8]);
    h.script = script_from_btop(f[9]);
    h.method = f[10] == "2" ? CompAdjustMethod::kMatrixAdjust : CompAdjustMethod::kCompositionBasedStats;
    hits.push_back({it->defline, it->codes, {h}, {}});
  }
  std::string expected;
  for (char c : kCbsReport)
    if (c != '$') expected += c;
  expected += "\n\n\n";
  const std::string got = PairwiseWriter(matrix, po).query(pq, hits);
  const auto e_lines = split_lines(expected), g_lines = split_lines(got);
  ASSERT_EQ(e_lines.size(), g_lines.size());
  for (std::size_t i = 0; i < e_lines.size(); ++i) EXPECT_EQ(g_lines[i], e_lines[i]) << "line " << i + 1;
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace warpsearch::blast
