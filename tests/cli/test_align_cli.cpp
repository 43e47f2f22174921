// test_align_cli.cpp: `warpsearch align` run as a user would: TSV/SAM/PAF output on small cases whose
// expected values were worked out by hand (and checked with parasail 2.6, whose gap open is our
// open + extend), --pairs, every bad-input error (message, exit status, no output file left behind),
// input order under any chunking, and identical output for any number of threads.
//
// The classic example is Durbin et al., "Biological Sequence Analysis", section 2.3: HEAGAWGHEE vs
// PAWHEAE with BLOSUM50 and a linear gap cost of 8 per residue (here open 0, extend 8):
//   local:  score 28, AWGHE / AW-HE  (query residues 5..9, target residues 2..5, 1-based)
//   global: score 1
// With affine gaps open 10, extend 2 (parasail open 12, extend 2) the local alignment is the same
// (28 - 12 + 8 = 24) and the global score is 5 (HEA inserted: -16, G/P -2, AW +20, GHE/HEA -3, E/E +6).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>
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
  TempDir() : warpsearch::test::TempDir("test_align_cli") {}
};

std::string quote(const std::string& arg) { return warpsearch::test::shell_quote(arg); }

// `-q align --query Q --target T EXTRA` on files in dir.
CliResult align(const TempDir& dir, const std::string& query, const std::string& target,
                const std::string& extra, const std::string& stdin_path = "/dev/null") {
  return run_cli("-q align --query " + quote(dir / query) + " --target " + quote(dir / target) + " " + extra,
                 stdin_path);
}

constexpr const char* kTsvHeader = "query\ttarget\tscore\tqstart\tqend\ttstart\ttend\n";
constexpr const char* kTsvCigarHeader =
    "query\ttarget\tscore\tqstart\tqend\ttstart\ttend\tcigar\tidentity\talnlen\n";

// Three DNA pairs, scored with the DNA defaults (match 2, mismatch -3, open 5, extend 2):
//   d1: ACGTACGT inside TTACGTACGTCC: local/semiglobal 16 (8=), global 16 - 2 * (5 + 2*2) = -2 (2D8=2D,
//       the only way to keep all 8 matches)
//   d2: ACGTTCGT vs ACGTACGT: one mismatch, 7 * 2 - 3 = 11 (4=1X3=) in every mode
//   d3: AAAA vs CCCC: local score 0 (empty alignment); global/semiglobal four mismatches, -12 (4X)
void write_dna_pairs(const TempDir& dir) {
  write_file(dir / "q.fa", ">d1 first\nACGTACGT\n>d2\nACGTTCGT\n>d3\naaaa\n");
  write_file(dir / "t.fa", ">t1\nTTACGTACGTCC\n>t2\nACGTACGT\n>t3\nCCCC\n");
}

TEST(CliAlign, DnaTsvAllModes) {
  TempDir dir;
  write_dna_pairs(dir);
  const CliResult local = align(dir, "q.fa", "t.fa", "--cigar");
  ASSERT_EQ(local.status, 0) << local.err;
  EXPECT_EQ(local.out, std::string(kTsvCigarHeader) +
                           "d1\tt1\t16\t1\t8\t3\t10\t8=\t100.00\t8\n"
                           "d2\tt2\t11\t1\t8\t1\t8\t4=1X3=\t87.50\t8\n"
                           "d3\tt3\t0\t0\t0\t0\t0\t*\t0.00\t0\n");

  const CliResult global = align(dir, "q.fa", "t.fa", "--cigar --mode global");
  ASSERT_EQ(global.status, 0) << global.err;
  EXPECT_EQ(global.out, std::string(kTsvCigarHeader) +
                            "d1\tt1\t-2\t1\t8\t1\t12\t2D8=2D\t66.67\t12\n"
                            "d2\tt2\t11\t1\t8\t1\t8\t4=1X3=\t87.50\t8\n"
                            "d3\tt3\t-12\t1\t4\t1\t4\t4X\t0.00\t4\n");

  const CliResult semi = align(dir, "q.fa", "t.fa", "--mode semiglobal");
  ASSERT_EQ(semi.status, 0) << semi.err;
  EXPECT_EQ(semi.out, std::string(kTsvHeader) +
                          "d1\tt1\t16\t1\t8\t3\t10\n"
                          "d2\tt2\t11\t1\t8\t1\t8\n"
                          "d3\tt3\t-12\t1\t4\t1\t4\n");

  // Explicit DNA scoring: match 1, mismatch -1, gaps 0 + 1 per residue: d1 local 8, global 8 - 4 = 4.
  const CliResult custom =
      align(dir, "q.fa", "t.fa",
            "--mode global --alphabet dna --match 1 --mismatch -1 --gap-open 0 --gap-extend 1");
  ASSERT_EQ(custom.status, 0) << custom.err;
  EXPECT_EQ(lines(custom.out).at(1), "d1\tt1\t4\t1\t8\t1\t12");
}

TEST(CliAlign, DurbinProteinExample) {
  TempDir dir;
  write_file(dir / "q.fa", ">q\nHEAGAWGHEE\n");
  write_file(dir / "t.fa", ">t\nPAWHEAE\n");
  const std::string linear = "--matrix BLOSUM50 --gap-open 0 --gap-extend 8 --cigar";
  const CliResult local = align(dir, "q.fa", "t.fa", linear);
  ASSERT_EQ(local.status, 0) << local.err;
  EXPECT_EQ(local.out, std::string(kTsvCigarHeader) + "q\tt\t28\t5\t9\t2\t5\t2=1I2=\t80.00\t5\n");

  const CliResult global =
      align(dir, "q.fa", "t.fa", "--matrix BLOSUM50 --gap-open 0 --gap-extend 8 --mode global");
  ASSERT_EQ(global.status, 0) << global.err;
  EXPECT_EQ(global.out, std::string(kTsvHeader) + "q\tt\t1\t1\t10\t1\t7\n");

  const std::string affine = "--matrix BLOSUM50 --gap-open 10 --gap-extend 2";
  const CliResult local_affine = align(dir, "q.fa", "t.fa", affine + " --cigar");
  ASSERT_EQ(local_affine.status, 0) << local_affine.err;
  EXPECT_EQ(local_affine.out, std::string(kTsvCigarHeader) + "q\tt\t24\t5\t9\t2\t5\t2=1I2=\t80.00\t5\n");
  const CliResult global_affine = align(dir, "q.fa", "t.fa", affine + " --mode global");
  ASSERT_EQ(global_affine.status, 0) << global_affine.err;
  EXPECT_EQ(global_affine.out, std::string(kTsvHeader) + "q\tt\t5\t1\t10\t1\t7\n");
  // Semiglobal, target ends free: 5 two ways, HEA inserted + G/P (target from residue 1) or HEAG inserted
  // (-18) + AW, G inserted, HE, E/A (target from residue 2); the tie rule takes the largest target start.
  const CliResult semi = align(dir, "q.fa", "t.fa", affine + " --mode semiglobal");
  ASSERT_EQ(semi.status, 0) << semi.err;
  EXPECT_EQ(semi.out, std::string(kTsvHeader) + "q\tt\t5\t1\t10\t2\t6\n");

  // BLOSUM62 defaults (11/1): HEA/HEA (8 + 5 + 4 = 17) beats AWGHE/AW-HE (4 + 11 - 12 + 8 + 5 = 16).
  const CliResult defaults = align(dir, "q.fa", "t.fa", "");
  ASSERT_EQ(defaults.status, 0) << defaults.err;
  EXPECT_EQ(defaults.out, std::string(kTsvHeader) + "q\tt\t17\t1\t3\t4\t6\n");
}

TEST(CliAlign, SamFormat) {
  TempDir dir;
  // FASTQ queries: QUAL is copied; the fourth pair reuses target t1 (one @SQ line for it).
  write_file(
      dir / "q.fq",
      "@d1\nACGTACGT\n+\nABCDEFGH\n@d2\nACGTTCGT\n+\nIIIIIIII\n@d3\nAAAA\n+\n!!!!\n@d4\nTTACG\n+\n#####\n");
  write_file(dir / "t.fa", ">t1\nTTACGTACGTCC\n>t2\nACGTACGT\n>t3\nCCCC\n>t1\nTTACGTACGTCC\n");
  const CliResult r = align(dir, "q.fq", "t.fa", "--format sam");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> got = lines(r.out);
  ASSERT_EQ(got.size(), 9u) << r.out;
  EXPECT_EQ(got[0], "@HD\tVN:1.6\tSO:unsorted");
  EXPECT_EQ(got[1], "@SQ\tSN:t1\tLN:12");
  EXPECT_EQ(got[2], "@SQ\tSN:t2\tLN:8");
  EXPECT_EQ(got[3], "@SQ\tSN:t3\tLN:4");
  EXPECT_TRUE(got[4].starts_with("@PG\tID:warpsearch\tPN:warpsearch\tVN:")) << got[4];
  EXPECT_EQ(got[5], "d1\t0\tt1\t3\t255\t8=\t*\t0\t0\tACGTACGT\tABCDEFGH\tAS:i:16\tNM:i:0");
  EXPECT_EQ(got[6], "d2\t0\tt2\t1\t255\t4=1X3=\t*\t0\t0\tACGTTCGT\tIIIIIIII\tAS:i:11\tNM:i:1");
  EXPECT_EQ(got[7], "d3\t4\tt3\t1\t0\t*\t*\t0\t0\tAAAA\t!!!!\tAS:i:0");
  EXPECT_EQ(got[8], "d4\t0\tt1\t1\t255\t5=\t*\t0\t0\tTTACG\t#####\tAS:i:10\tNM:i:0");

  // Soft clips for the unaligned query ends, I for a query residue against a gap, FASTA: QUAL '*'.
  write_file(dir / "p.fa", ">q\nheagawghee\n");
  write_file(dir / "pt.fa", ">t\nPAWHEAE\n");
  const CliResult prot =
      align(dir, "p.fa", "pt.fa", "--format sam --matrix BLOSUM50 --gap-open 10 --gap-extend 2");
  ASSERT_EQ(prot.status, 0) << prot.err;
  EXPECT_EQ(lines(prot.out).at(1), "@SQ\tSN:t\tLN:7");
  EXPECT_EQ(lines(prot.out).at(3), "q\t0\tt\t2\t255\t4S2=1I2=1S\t*\t0\t0\tHEAGAWGHEE\t*\tAS:i:24\tNM:i:1");

  // The @SQ lines need a second pass over the targets: not possible on stdin.
  const CliResult piped =
      run_cli("-q align --query " + quote(dir / "p.fa") + " --target - --format sam", dir / "pt.fa");
  EXPECT_EQ(piped.status, 2);
  EXPECT_TRUE(contains(piped.err, "cannot be stdin")) << piped.err;
}

TEST(CliAlign, SamRejectsOneTargetNameWithTwoLengths) {
  TempDir dir;
  write_file(dir / "q.fa", ">a\nACGT\n>b\nACGT\n");
  write_file(dir / "t.fa", ">t\nACGT\n>t\nACGTA\n");
  const CliResult r = align(dir, "q.fa", "t.fa", "--format sam -o " + quote(dir / "out.sam"));
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "t.fa" + ":3:")) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.sam"));
  // TSV does not care.
  EXPECT_EQ(align(dir, "q.fa", "t.fa", "").status, 0);
}

TEST(CliAlign, PafFormat) {
  TempDir dir;
  write_dna_pairs(dir);
  const CliResult r = align(dir, "q.fa", "t.fa", "--format paf");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "d1\t8\t0\t8\t+\tt1\t12\t2\t10\t8\t8\t255\tAS:i:16\tcg:Z:8=\n"
            "d2\t8\t0\t8\t+\tt2\t8\t0\t8\t7\t8\t255\tAS:i:11\tcg:Z:4=1X3=\n"
            "d3\t4\t0\t0\t*\tt3\t4\t0\t0\t0\t0\t0\tAS:i:0\n");

  write_file(dir / "p.fa", ">q\nHEAGAWGHEE\n");
  write_file(dir / "pt.fa", ">t\nPAWHEAE\n");
  const CliResult prot =
      align(dir, "p.fa", "pt.fa", "--format paf --matrix BLOSUM50 --gap-open 10 --gap-extend 2");
  ASSERT_EQ(prot.status, 0) << prot.err;
  EXPECT_EQ(prot.out, "q\t10\t4\t9\t+\tt\t7\t1\t5\t4\t5\t255\tAS:i:24\tcg:Z:2=1I2=\n");
}

TEST(CliAlign, PairsFile) {
  TempDir dir;
  write_dna_pairs(dir);
  write_file(dir / "pairs.tsv", "# query target\nd2\tt1\n\n  d1 t1\nd3\tt2\n# done\nd1\tt1\n");
  const CliResult r = align(dir, "q.fa", "t.fa", "--pairs " + quote(dir / "pairs.tsv") + " --cigar");
  ASSERT_EQ(r.status, 0) << r.err;
  // d2 ACGTTCGT in TTACGTACGTCC: ACGT, the T/A mismatch, CGT = 8 - 3 + 6 = 11 at target 3..10.
  // d3 AAAA vs ACGTACGT: no AA in the target, so one A/A (2); the first maximal cell in column-major
  // order is query 1, target 1.
  EXPECT_EQ(r.out, std::string(kTsvCigarHeader) +
                       "d2\tt1\t11\t1\t8\t3\t10\t4=1X3=\t87.50\t8\n"
                       "d1\tt1\t16\t1\t8\t3\t10\t8=\t100.00\t8\n"
                       "d3\tt2\t2\t1\t1\t1\t1\t1=\t100.00\t1\n"
                       "d1\tt1\t16\t1\t8\t3\t10\t8=\t100.00\t8\n");

  // SAM lists the targets the pairs use, in order of first use.
  const CliResult sam = align(dir, "q.fa", "t.fa", "--pairs " + quote(dir / "pairs.tsv") + " --format sam");
  ASSERT_EQ(sam.status, 0) << sam.err;
  const std::vector<std::string> got = lines(sam.out);
  ASSERT_EQ(got.size(), 8u) << sam.out;
  EXPECT_EQ(got[1], "@SQ\tSN:t1\tLN:12");
  EXPECT_EQ(got[2], "@SQ\tSN:t2\tLN:8");
  EXPECT_TRUE(got[3].starts_with("@PG")) << got[3];

  // The counts of the files need not match in --pairs mode; an empty list gives just the header.
  write_file(dir / "few.fa", ">t2\nACGTACGT\n");
  write_file(dir / "one.tsv", "d1 t2\n");
  const CliResult few = align(dir, "q.fa", "few.fa", "--pairs " + quote(dir / "one.tsv"));
  ASSERT_EQ(few.status, 0) << few.err;
  EXPECT_EQ(few.out, std::string(kTsvHeader) + "d1\tt2\t16\t1\t8\t1\t8\n");
  write_file(dir / "none.tsv", "# nothing\n");
  const CliResult none = align(dir, "q.fa", "t.fa", "--pairs " + quote(dir / "none.tsv"));
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out, kTsvHeader);

  // Pairs within one file (it is loaded once).
  write_file(dir / "self.tsv", "d1 d2\nd2 d2\n");
  const CliResult self = align(dir, "q.fa", "q.fa", "--pairs " + quote(dir / "self.tsv"));
  ASSERT_EQ(self.status, 0) << self.err;
  EXPECT_EQ(self.out, std::string(kTsvHeader) + "d1\td2\t11\t1\t8\t1\t8\nd2\td2\t16\t1\t8\t1\t8\n");
}

TEST(CliAlign, PairsFileErrors) {
  TempDir dir;
  write_dna_pairs(dir);
  const std::string out = " -o " + quote(dir / "out.tsv");
  const auto before = dir.listing();

  write_file(dir / "unknown_q.tsv", "d1 t1\n# c\nnope t2\n");
  CliResult r = align(dir, "q.fa", "t.fa", "--pairs " + quote(dir / "unknown_q.tsv") + out);
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "unknown_q.tsv" + ":3: query 'nope' is not in " + dir / "q.fa")) << r.err;

  write_file(dir / "unknown_t.tsv", "d1\tt9\n");
  r = align(dir, "q.fa", "t.fa", "--pairs " + quote(dir / "unknown_t.tsv") + out);
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "unknown_t.tsv" + ":1: target 't9' is not in " + dir / "t.fa")) << r.err;

  write_file(dir / "three.tsv", "d1 t1 extra\n");
  r = align(dir, "q.fa", "t.fa", "--pairs " + quote(dir / "three.tsv") + out);
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "three.tsv" + ":1: expected 2 fields")) << r.err;

  r = align(dir, "q.fa", "t.fa", "--pairs " + quote(dir / "missing.tsv") + out);
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "missing.tsv")) << r.err;

  // Duplicate names in a file that --pairs looks names up in.
  write_file(dir / "dup.fa", ">t1\nACGT\n>t2\nACGT\n>t1\nAC\n");
  write_file(dir / "ok.tsv", "d1 t2\n");
  r = align(dir, "q.fa", "dup.fa", "--pairs " + quote(dir / "ok.tsv") + out);
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "dup.fa" + ":5: duplicate sequence name 't1' (first at line 1)"))
      << r.err;
  r = align(dir, "dup.fa", "t.fa", "--pairs " + quote(dir / "ok.tsv") + out);
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, "duplicate sequence name 't1'")) << r.err;

  auto after = dir.listing();
  for (const char* f : {"unknown_q.tsv", "unknown_t.tsv", "three.tsv", "dup.fa", "ok.tsv"}) after.erase(f);
  EXPECT_EQ(after, before);
}

TEST(CliAlign, MismatchedCountsNameTheFileThatRanOut) {
  TempDir dir;
  write_dna_pairs(dir);
  write_file(dir / "two.fa", ">t1\nACGT\n>t2\nACGT\n");
  const auto before = dir.listing();
  for (const char* batch : {"1", "100000"}) {
    const std::string extra = std::string("--batch-pairs ") + batch + " -o " + quote(dir / "out.tsv");
    CliResult r = align(dir, "q.fa", "two.fa", extra);
    EXPECT_EQ(r.status, 4);
    EXPECT_TRUE(contains(r.err, dir / "two.fa" + ": ran out of sequences after 2 pairs, but " + dir / "q.fa" +
                                    " has more (next: 'd3' at line 5)"))
        << r.err;
    r = align(dir, "two.fa", "q.fa", extra);
    EXPECT_EQ(r.status, 4);
    EXPECT_TRUE(contains(
        r.err, dir / "two.fa" + ": ran out of sequences after 2 pairs, but " + dir / "q.fa" + " has more"))
        << r.err;
    EXPECT_EQ(dir.listing(), before) << "an output file was left behind";
  }
}

TEST(CliAlign, BadInputIsAClearErrorAndLeavesNoFile) {
  TempDir dir;
  write_dna_pairs(dir);
  write_file(dir / "empty_seq.fa", ">a\nACGT\n>b\n>c\nACGT\n");
  write_file(dir / "bad.mat", "   A  C  G  T\nA  1 -1 -1 -1\nC -1  1 -1 -1\nG -1 -1 zz -1\nT -1 -1 -1  1\n");
  write_file(dir / "p.fa", ">p\nMKVLA\n");
  const std::string out = " -o " + quote(dir / "out.tsv");
  const auto before = dir.listing();

  CliResult r = align(dir, "empty_seq.fa", "t.fa", out);
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "empty_seq.fa" + ":3:")) << r.err;
  EXPECT_TRUE(contains(r.err, "empty sequence 'b'")) << r.err;

  r = align(dir, "q.fa", "t.fa", "--alphabet dna --matrix " + quote(dir / "bad.mat") + out);
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "bad.mat" + ":4:")) << r.err;
  r = align(dir, "p.fa", "p.fa", "--matrix NOSUCH62" + out);  // neither a built-in name nor a file
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "NOSUCH62: not a built-in matrix (BLOSUM45, ")) << r.err;
  r = align(dir, "p.fa", "p.fa", "--matrix " + quote(dir / "no_such.mat") + out);  // a path: I/O error
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "no_such.mat")) << r.err;
  r = align(dir, "q.fa", "t.fa", "--gap-open 128" + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "gap costs must be at most 127")) << r.err;
  r = align(dir, "q.fa", "t.fa", "--gap-open 1 --gap-extend 2147483647" + out);
  EXPECT_EQ(r.status, 2);
  r = align(dir, "q.fa", "t.fa", "--gap-open 2147483647 --gap-extend 1" + out);
  EXPECT_EQ(r.status, 2);
  r = align(dir, "q.fa", "t.fa", "--matrix BLOSUM62" + out);  // protein matrix, DNA sequences
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "protein matrix")) << r.err;
  r = align(dir, "p.fa", "p.fa", "--match 3" + out);  // DNA scoring, protein sequences
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--match")) << r.err;
  r = align(dir, "q.fa", "t.fa", "--mismatch 2" + out);
  EXPECT_EQ(r.status, 2);
  r = align(dir, "q.fa", "t.fa", "--gap-extend -1" + out);
  EXPECT_EQ(r.status, 2);
  // Values outside an option's choices and missing options are CLI11 parse errors (non-zero status).
  r = align(dir, "q.fa", "t.fa", "--mode glocal" + out);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.err, "--mode")) << r.err;
  r = align(dir, "q.fa", "t.fa", "--format bam" + out);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.err, "--format")) << r.err;
  r = align(dir, "q.fa", "t.fa", "--alphabet klingon" + out);
  EXPECT_EQ(r.status, 2);
  r = align(dir, "q.fa", "no_such.fa", out);
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "no_such.fa")) << r.err;
  r = run_cli("-q align --query " + quote(dir / "q.fa") + out);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.err, "--target is required")) << r.err;
  EXPECT_EQ(dir.listing(), before);
}

TEST(CliAlign, PairTooLongForExactScoresIsAnError) {
  TempDir dir;
  // Global DNA with gap costs 127/127: DP values can reach (m + n + 2) * 254, beyond the exact 32-bit
  // bound (2^30) once m + n > 4.23 million. The check runs before any alignment work.
  const std::string big(2200000, 'A');
  write_file(dir / "q.fa", ">small\nACGT\n>big\n" + big + "\n");
  write_file(dir / "t.fa", ">t1\nACGT\n>t2\n" + big + "\n");
  const auto before = dir.listing();
  const CliResult r = align(dir, "q.fa", "t.fa",
                            "--mode global --gap-open 127 --gap-extend 127 -o " + quote(dir / "out.tsv"));
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(
      contains(r.err, dir / "q.fa" + ":3: pair 2 ('big', 2200000 residues, vs 't2', 2200000 residues)"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "beyond 32-bit range")) << r.err;
  EXPECT_EQ(dir.listing(), before);
}

// Random DNA pairs with a fixed seed: FASTA text of queries and targets.
void write_random_pairs(const TempDir& dir, int pairs, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> length(1, 120);
  std::uniform_int_distribution<int> base(0, 3);
  std::string q, t;
  for (int i = 0; i < pairs; ++i) {
    std::string a, b;
    for (int k = length(rng); k > 0; --k) a += "ACGT"[base(rng)];
    b = a.substr(a.size() / 3);  // related pairs: a suffix with point mutations
    for (char& c : b)
      if (base(rng) == 0) c = "ACGT"[base(rng)];
    if (b.empty()) b.push_back('G');
    q += fmt::format(">q{}\n{}\n", i, a);
    t += fmt::format(">t{}\n{}\n", i, b);
  }
  write_file(dir / "q.fa", q);
  write_file(dir / "t.fa", t);
}

TEST(CliAlign, OutputOrderIsInputOrderForAnyChunking) {
  TempDir dir;
  constexpr int kPairs = 150;
  write_random_pairs(dir, kPairs, 7);
  for (const char* mode : {"local", "global", "semiglobal"}) {
    const std::string base = std::string("--cigar --mode ") + mode;
    const CliResult whole = align(dir, "q.fa", "t.fa", base);
    ASSERT_EQ(whole.status, 0) << whole.err;
    const std::vector<std::string> rows = lines(whole.out);
    ASSERT_EQ(rows.size(), kPairs + 1u);
    for (int i = 0; i < kPairs; ++i) {
      const std::string& row = rows[static_cast<std::size_t>(i) + 1];
      EXPECT_TRUE(row.starts_with(fmt::format("q{}\tt{}\t", i, i))) << row;
    }
    for (const char* chunking : {"--batch-pairs 1", "--batch-pairs 2", "--batch-pairs 7",
                                 "--batch-residues 50", "--batch-residues 1"}) {
      const CliResult chunked = align(dir, "q.fa", "t.fa", base + " " + chunking);
      ASSERT_EQ(chunked.status, 0) << chunked.err;
      EXPECT_EQ(chunked.out, whole.out) << mode << " " << chunking;
    }
    // The same pairs listed explicitly, in reverse order, come out reversed.
    std::string list;
    for (int i = kPairs - 1; i >= 0; --i) list += fmt::format("q{}\tt{}\n", i, i);
    write_file(dir / "rev.tsv", list);
    const CliResult reversed =
        align(dir, "q.fa", "t.fa", base + " --batch-pairs 3 --pairs " + quote(dir / "rev.tsv"));
    ASSERT_EQ(reversed.status, 0) << reversed.err;
    const std::vector<std::string> rev_rows = lines(reversed.out);
    ASSERT_EQ(rev_rows.size(), rows.size());
    for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rev_rows[i], rows[rows.size() - i]);
  }
}

TEST(CliAlign, ThreadCountDoesNotChangeTheOutput) {
  TempDir dir;
  write_random_pairs(dir, 300, 11);
  for (const char* format : {"tsv --cigar", "sam", "paf"}) {
    const std::string extra = std::string("--batch-pairs 64 --format ") + format;
    const CliResult one = run_cli("-q --device cpu --threads 1 align --query " + quote(dir / "q.fa") +
                                  " --target " + quote(dir / "t.fa") + " " + extra);
    const CliResult two = run_cli("-q --device cpu align --threads 2 --query " + quote(dir / "q.fa") +
                                  " --target " + quote(dir / "t.fa") + " " + extra);
    ASSERT_EQ(one.status, 0) << one.err;
    ASSERT_EQ(two.status, 0) << two.err;
    EXPECT_EQ(one.out, two.out) << format;
  }
}

TEST(CliAlign, OutputFileStdinAndSummary) {
  TempDir dir;
  write_dna_pairs(dir);
  const CliResult to_file = align(dir, "q.fa", "t.fa", "-o " + quote(dir / "out.tsv"));
  ASSERT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  const CliResult to_stdout = align(dir, "q.fa", "t.fa", "");
  EXPECT_EQ(read_file(dir / "out.tsv"), to_stdout.out);

  const CliResult piped = run_cli("-q align --query - --target " + quote(dir / "t.fa"), dir / "q.fa");
  ASSERT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.out, to_stdout.out);

  // Without --quiet a one-line summary goes to stderr, never to the output.
  const CliResult loud = run_cli("align --query " + quote(dir / "q.fa") + " --target " + quote(dir / "t.fa"));
  ASSERT_EQ(loud.status, 0) << loud.err;
  EXPECT_EQ(loud.out, to_stdout.out);
  EXPECT_TRUE(contains(loud.err, "align: 3 pairs (local, dna, dna:+2/-3 5/2)")) << loud.err;
}

TEST(CliAlign, AlphabetDetectionAndOverride) {
  TempDir dir;
  // Mostly ACGT: DNA, scored +2 per match by default.
  write_file(dir / "n.fa", ">n\nACGTNACGTA\n");
  CliResult r = align(dir, "n.fa", "n.fa", "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines(r.out).at(1), "n\tn\t15\t1\t10\t1\t10");  // 9 matches * 2, N/N scores -3: still all 10
  // As protein, BLOSUM62: A 4, C 9, G 6, T 5, N 6 -> 2*(4+9+6+5)+6+4 = 58.
  r = align(dir, "n.fa", "n.fa", "--alphabet protein");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines(r.out).at(1), "n\tn\t58\t1\t10\t1\t10");
}

TEST(CliAlign, HelpDocumentsConventions) {
  const CliResult r = run_cli("align --help");
  EXPECT_EQ(r.status, 0);
  for (const char* part : {"Examples", "open + k*extend", "BLOSUM62", "match 2, mismatch -3", "--pairs",
                           "--format", "--batch-pairs", "1-based"}) {
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
  }
}

}  // namespace
