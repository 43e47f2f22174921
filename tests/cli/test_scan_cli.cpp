// test_scan_cli.cpp: `warpsearch scan` run as a user would, on small generated files: two random
// targets with planted copies of two queries (q1 copied into chr1, the reverse complement of q2 into
// chr2), so the best alignment of each query is known exactly: the whole query, every column a match.
// Checked: the TSV header and the planted hits' coordinates (minus strand tstart > tend), SAM and PAF
// structure, the view, --no-traceback, output independent of threads/overlap/pool, and every error's
// exit status with no output file left behind.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

using warpsearch::test::CliResult;
using warpsearch::test::contains;
using warpsearch::test::lines;
using warpsearch::test::read_file;
using warpsearch::test::run_cli;
using warpsearch::test::write_file;

class TempDir : public warpsearch::test::TempDir {
 public:
  TempDir() : warpsearch::test::TempDir("test_scan_cli") {}
};

std::string quote(const std::string& arg) { return warpsearch::test::shell_quote(arg); }

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; std::getline(in, f, '\t');) out.push_back(f);
  return out;
}

std::string random_dna(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> base(0, 3);
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += "ACGT"[base(rng)];
  return s;
}

std::string reverse_complement(const std::string& s) {
  std::string out;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    out += *it == 'A' ? 'T' : *it == 'C' ? 'G' : *it == 'G' ? 'C' : 'A';
  }
  return out;
}

std::string fasta(const std::string& name, const std::string& seq) {
  std::string out = ">" + name + "\n";
  for (std::size_t i = 0; i < seq.size(); i += 70) out += seq.substr(i, 70) + "\n";
  return out;
}

// q1 (200 bp) is copied into chr1 (8000 bp) at 0-based 5000; the reverse complement of q2 (150 bp)
// into chr2 (3000 bp) at 1000. Whole-query exact matches score 5 * length, the most any alignment of
// the query can score, and no random stretch of 11 kbp holds a second copy, so:
//   q1: chr1 + 1000, query 1..200, target 5001..5200, 200=
//   q2: chr2 - 750, query 1..150, target 1150..1001 (BLAST's minus-strand order), 150=
void write_planted(const TempDir& dir) {
  std::mt19937 rng(20240611);
  const std::string q1 = random_dna(rng, 200);
  const std::string q2 = random_dna(rng, 150);
  std::string chr1 = random_dna(rng, 8000);
  std::string chr2 = random_dna(rng, 3000);
  chr1.replace(5000, q1.size(), q1);
  chr2.replace(1000, q2.size(), reverse_complement(q2));
  write_file(dir / "q.fa", fasta("q1", q1) + fasta("q2", q2));
  write_file(dir / "t.fa", fasta("chr1 first", chr1) + fasta("chr2", chr2));
  write_file(dir / "q1.fa", fasta("q1", q1));
}

CliResult scan(const TempDir& dir, const std::string& extra, const std::string& query = "q.fa",
               const std::string& target = "t.fa") {
  return run_cli("-q scan --query " + quote(dir / query) + " --target " + quote(dir / target) + " " + extra);
}

constexpr const char* kTsvHeader =
    "query\ttarget\tstrand\tscore\tqstart\tqend\ttstart\ttend\tcigar\tidentity\tevalue";

// The row without its E-value column (whether BLAST+ has statistics for 5/-3 with gaps 8/1 is the
// statistics module's business; the column is checked to be present).
std::string without_evalue(const std::string& row) {
  const std::size_t tab = row.rfind('\t');
  EXPECT_NE(tab, std::string::npos) << row;
  EXPECT_LT(tab + 1, row.size()) << row;
  return row.substr(0, tab);
}

TEST(CliScan, TsvPlantedHits) {
  TempDir dir;
  write_planted(dir);
  const CliResult r = scan(dir, "--top 1");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> got = lines(r.out);
  ASSERT_EQ(got.size(), 3u) << r.out;
  EXPECT_EQ(got[0], kTsvHeader);
  EXPECT_EQ(without_evalue(got[1]), "q1\tchr1\t+\t1000\t1\t200\t5001\t5200\t200=\t100.00");
  EXPECT_EQ(without_evalue(got[2]), "q2\tchr2\t-\t750\t1\t150\t1150\t1001\t150=\t100.00");

  // More alignments: the planted one first, then weaker chance alignments, ranked by score.
  const CliResult top = scan(dir, "--top 5");
  ASSERT_EQ(top.status, 0) << top.err;
  const std::vector<std::string> rows = lines(top.out);
  ASSERT_EQ(rows.size(), 11u) << top.out;
  EXPECT_EQ(rows[1], got[1]);
  for (std::size_t i = 2; i <= 5; ++i) {
    EXPECT_EQ(fields(rows[i]).at(0), "q1") << rows[i];
    EXPECT_GE(std::stoi(fields(rows[i - 1]).at(3)), std::stoi(fields(rows[i]).at(3)));
    EXPECT_LT(std::stoi(fields(rows[i]).at(3)), 1000);
  }
  EXPECT_EQ(rows[6], got[2]);

  // One strand only: q2's planted hit is on the minus strand.
  const CliResult plus = scan(dir, "--top 1 --strand plus");
  ASSERT_EQ(plus.status, 0) << plus.err;
  EXPECT_EQ(lines(plus.out).at(1), got[1]);
  EXPECT_NE(fields(lines(plus.out).at(2)).at(2), "-");
  const CliResult minus = scan(dir, "--top 1 --strand minus");
  ASSERT_EQ(minus.status, 0) << minus.err;
  EXPECT_EQ(lines(minus.out).at(2), got[2]);

  // Without traceback: the same scores and coordinates, '*' for cigar and identity.
  const CliResult fast = scan(dir, "--top 1 --no-traceback");
  ASSERT_EQ(fast.status, 0) << fast.err;
  EXPECT_EQ(without_evalue(lines(fast.out).at(1)), "q1\tchr1\t+\t1000\t1\t200\t5001\t5200\t*\t*");
  EXPECT_EQ(without_evalue(lines(fast.out).at(2)), "q2\tchr2\t-\t750\t1\t150\t1150\t1001\t*\t*");
}

TEST(CliScan, SamAndPaf) {
  TempDir dir;
  write_planted(dir);
  const CliResult sam = scan(dir, "--top 3 --format sam");
  ASSERT_EQ(sam.status, 0) << sam.err;
  const std::vector<std::string> got = lines(sam.out);
  ASSERT_EQ(got.size(), 4u + 6u) << sam.out;
  EXPECT_EQ(got[0], "@HD\tVN:1.6\tSO:unsorted");
  EXPECT_EQ(got[1], "@SQ\tSN:chr1\tLN:8000");
  EXPECT_EQ(got[2], "@SQ\tSN:chr2\tLN:3000");
  EXPECT_TRUE(got[3].starts_with("@PG\tID:warpsearch\tPN:warpsearch\tVN:")) << got[3];
  for (std::size_t i = 4; i < got.size(); ++i) {
    const std::vector<std::string> f = fields(got[i]);
    ASSERT_GE(f.size(), 13u) << got[i];
    const int flag = std::stoi(f[1]);
    EXPECT_EQ((flag & 256) != 0, i != 4 && i != 7) << got[i];  // each query's first record is primary
    EXPECT_EQ(f[4], "255");
    EXPECT_EQ(f[6] + f[7] + f[8] + f[9] + f[10], "*00**");
    EXPECT_TRUE(f[11].starts_with("AS:i:")) << got[i];
    EXPECT_TRUE(f[12].starts_with("NM:i:")) << got[i];
  }
  const std::vector<std::string> first = fields(got[4]);
  EXPECT_EQ(std::vector<std::string>(first.begin(), first.begin() + 6),
            (std::vector<std::string>{"q1", "0", "chr1", "5001", "255", "200="}));
  EXPECT_EQ(first.at(11), "AS:i:1000");
  EXPECT_EQ(first.at(12), "NM:i:0");
  const std::vector<std::string> second = fields(got[7]);
  EXPECT_EQ(std::vector<std::string>(second.begin(), second.begin() + 6),
            (std::vector<std::string>{"q2", "16", "chr2", "1001", "255", "150="}));

  const CliResult paf = scan(dir, "--top 3 --format paf");
  ASSERT_EQ(paf.status, 0) << paf.err;
  const std::vector<std::string> rows = lines(paf.out);
  ASSERT_EQ(rows.size(), 6u) << paf.out;
  EXPECT_TRUE(
      rows[0].starts_with("q1\t200\t0\t200\t+\tchr1\t8000\t5000\t5200\t200\t200\t255\ttp:A:P\tAS:i:1000\t"
                          "cg:Z:200="))
      << rows[0];
  EXPECT_TRUE(
      rows[3].starts_with("q2\t150\t0\t150\t-\tchr2\t3000\t1000\t1150\t150\t150\t255\ttp:A:P\tAS:i:750\t"
                          "cg:Z:150="))
      << rows[3];
  for (const std::size_t i : {1, 2, 4, 5}) EXPECT_TRUE(contains(rows[i], "\ttp:A:S\t")) << rows[i];
}

TEST(CliScan, View) {
  TempDir dir;
  write_planted(dir);
  const CliResult r = scan(dir, "--top 1 --format view");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(
      r.out.starts_with("Query: q1 (200 residues): 1 alignment\n\nAlignment 1: q1 vs chr1 (8000 "
                        "residues), strand +\n  Score = 1000"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "  Identities = 200/200 (100.00%), Gaps = 0/200 (0.00%)\n")) << r.out;
  const std::string q1 = lines(read_file(dir / "q1.fa")).at(1);  // the first 70 letters
  EXPECT_TRUE(contains(r.out, "Query     1 " + q1.substr(0, 60) + " 60\n" + std::string(12, ' ') +
                                  std::string(60, '|') + "\nTarget 5001 " + q1.substr(0, 60) + " 5060\n"))
      << r.out;
  // Minus strand: the forward query against the reverse-complemented target, positions counting down.
  EXPECT_TRUE(contains(r.out, "Alignment 1: q2 vs chr2 (3000 residues), strand -\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nTarget 1150 ")) << r.out;
  EXPECT_TRUE(contains(r.out, " 1091\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nTarget 1030 ")) << r.out;
  EXPECT_TRUE(r.out.ends_with(" 1001\n\n")) << r.out;
}

TEST(CliScan, OutputDoesNotDependOnThreadsOverlapOrPool) {
  TempDir dir;
  write_planted(dir);
  const CliResult base = scan(dir, "--top 20");
  ASSERT_EQ(base.status, 0) << base.err;
  for (const char* extra : {"--threads 1 --overlap 1", "--threads 2 --max-alignment-length 5000 --pool 1",
                            "--device cpu --overlap 300 --pool 25"}) {
    const CliResult other = scan(dir, std::string("--top 20 ") + extra);
    ASSERT_EQ(other.status, 0) << extra << ": " << other.err;
    EXPECT_EQ(other.out, base.out) << extra;
  }
}

TEST(CliScan, OutputFileStdinStatsAndSummary) {
  TempDir dir;
  write_planted(dir);
  const CliResult to_stdout = scan(dir, "--top 2");
  ASSERT_EQ(to_stdout.status, 0) << to_stdout.err;
  const CliResult to_file = scan(dir, "--top 2 -o " + quote(dir / "out.tsv"));
  ASSERT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(read_file(dir / "out.tsv"), to_stdout.out);

  // Query from stdin; target from stdin with one query.
  const CliResult q_stdin =
      run_cli("-q scan --top 2 --query - --target " + quote(dir / "t.fa"), dir / "q.fa");
  ASSERT_EQ(q_stdin.status, 0) << q_stdin.err;
  EXPECT_EQ(q_stdin.out, to_stdout.out);
  const CliResult t_stdin =
      run_cli("-q scan --top 2 --query " + quote(dir / "q1.fa") + " --target -", dir / "t.fa");
  ASSERT_EQ(t_stdin.status, 0) << t_stdin.err;
  EXPECT_EQ(t_stdin.out,
            lines(to_stdout.out)[0] + "\n" + lines(to_stdout.out)[1] + "\n" + lines(to_stdout.out)[2] + "\n");

  // --stats and the summary go to stderr, never to the output.
  const CliResult loud =
      run_cli("scan --top 2 --stats --query " + quote(dir / "q.fa") + " --target " + quote(dir / "t.fa"));
  ASSERT_EQ(loud.status, 0) << loud.err;
  EXPECT_EQ(loud.out, to_stdout.out);
  EXPECT_TRUE(contains(loud.err, "scan stats: query q1 (200 residues): 2 target sequences")) << loud.err;
  EXPECT_TRUE(contains(loud.err, "scan stats: query q2 (150 residues)")) << loud.err;
  EXPECT_TRUE(contains(loud.err,
                       "scan: 2 queries (350 residues) vs 2 target sequences (11000 residues), "
                       "dna:+5/-3 8/1, both strands: 4 alignments"))
      << loud.err;
}

TEST(CliScan, ErrorsExitWithTheirStatusAndLeaveNoFile) {
  TempDir dir;
  write_planted(dir);
  write_file(dir / "p.fa", ">p\nMKVLAWHEAGAWGHEE\n");
  write_file(dir / "bad.fa", ">q1\nACGTACGTACGT\n>q2\nACGTACGT\n>q3\nACGT1ACGT\n");
  const std::string out = " -o " + quote(dir / "out.tsv");
  const auto before = dir.listing();

  CliResult r = scan(dir, out, "missing.fa");
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "missing.fa")) << r.err;
  r = scan(dir, out, "q.fa", "missing.fa");
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "missing.fa")) << r.err;
  // Unwritable output: a directory that does not exist.
  r = scan(dir, "-o " + quote(dir / "no_dir/out.tsv"));
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, "no_dir")) << r.err;
  // A malformed third query, found after the first query's records were written: no partial output.
  r = scan(dir, out, "bad.fa");
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "bad.fa" + ":6:")) << r.err;

  // Usage errors (exit 2).
  EXPECT_EQ(scan(dir, "--no-such-option" + out).status, 2);
  EXPECT_EQ(scan(dir, "--top" + out).status, 2);
  EXPECT_EQ(scan(dir, "--top 0" + out).status, 2);
  EXPECT_EQ(scan(dir, "--min-score 0" + out).status, 2);
  EXPECT_EQ(scan(dir, "--strand sideways" + out).status, 2);
  EXPECT_EQ(scan(dir, "--format bam" + out).status, 2);
  for (const char* format : {"sam", "paf", "view"}) {
    r = scan(dir, std::string("--no-traceback --format ") + format + out);
    EXPECT_EQ(r.status, 2) << format;
    EXPECT_TRUE(contains(r.err, "--no-traceback")) << r.err;
  }
  r = scan(dir, "--matrix BLOSUM62" + out);  // protein matrix, DNA query
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "protein matrix")) << r.err;
  r = scan(dir, "--match 2" + out, "p.fa", "p.fa");  // DNA scoring, protein query
  EXPECT_EQ(r.status, 2);
  r = scan(dir, "--strand minus" + out, "p.fa", "p.fa");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "protein")) << r.err;
  r = run_cli("-q scan --query " + quote(dir / "q.fa") + " --target -" + out, dir / "t.fa");
  EXPECT_EQ(r.status, 2);  // two queries, but stdin can be scanned once
  EXPECT_TRUE(contains(r.err, "one query only")) << r.err;
  r = run_cli("-q scan --query " + quote(dir / "q.fa") + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--target is required")) << r.err;

  EXPECT_EQ(dir.listing(), before) << "an output file was left behind";
}

TEST(CliScan, ProteinScan) {
  TempDir dir;
  // HEAGAWGHEE inside a longer protein: BLOSUM62 11/1, one strand; the whole query matches itself.
  write_file(dir / "p.fa", ">p\nHEAGAWGHEE\n");
  write_file(dir / "t.fa", ">t\nMKVLPRSTNDHEAGAWGHEELLKQ\n");
  const CliResult r = scan(dir, "--top 1", "p.fa", "t.fa");
  ASSERT_EQ(r.status, 0) << r.err;
  // BLOSUM62 self-scores: H 8, E 5, A 4, G 6, W 11: 8+5+4+6+4+11+6+8+5+5 = 62.
  EXPECT_EQ(without_evalue(lines(r.out).at(1)), "p\tt\t+\t62\t1\t10\t11\t20\t10=\t100.00");
}

TEST(CliScan, HelpDocumentsConventions) {
  const CliResult r = run_cli("scan --help");
  EXPECT_EQ(r.status, 0);
  for (const char* part :
       {"Examples", "open + k*extend", "match 5, mismatch -3", "--top", "--strand", "--format",
        "--no-traceback", "--max-alignment-length", "1-based", "docs/SCAN.md"}) {
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
  }
}

}  // namespace
