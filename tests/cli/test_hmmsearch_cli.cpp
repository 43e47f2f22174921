// test_hmmsearch_cli.cpp: `warpsearch hmmsearch` as a user runs it: outputs and their files, HMMER's
// options, the result against the installed hmmsearch (when present), usage and input errors with
// their exit statuses, and no partial output files after a failure.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"

namespace {

using warpsearch::test::CliResult;
using warpsearch::test::read_file;
using warpsearch::test::run_cli;
using warpsearch::test::shell_quote;
using warpsearch::test::TempDir;
using warpsearch::test::write_file;

std::string tdata(const std::string& rel) { return (warpsearch::test::testdata_dir() / rel).string(); }

// Lines not starting with '#'.
std::string data_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.empty() || line[0] != '#') out += line + "\n";
  return out;
}

bool have_hmmsearch() { return std::system("command -v hmmsearch >/dev/null 2>&1") == 0; }

TEST(HmmsearchCli, WritesTheReportAndTablesLikeHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h8_cli");
  const std::string hmm = tdata("hmm/globins4.hmm"), db = tdata("prot/globins45.fa");
  const CliResult r = run_cli("hmmsearch --cpu 2 -A " + shell_quote(dir / "o.sto") + " --tblout " +
                              shell_quote(dir / "o.tbl") + " --domtblout " + shell_quote(dir / "o.dom") +
                              " " + shell_quote(hmm) + " " + shell_quote(db));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Query:       globins4  [M=149]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Passed MSV filter:"), std::string::npos);
  EXPECT_NE(r.out.find("# Alignment of 45 hits satisfying inclusion thresholds saved to: "),
            std::string::npos);
  EXPECT_EQ(r.out.substr(r.out.size() - 5), "[ok]\n");
  const std::string tbl = read_file(dir / "o.tbl");
  EXPECT_EQ(std::count(tbl.begin(), tbl.end(), '\n'), 3 + 45 + 10);  // header, 45 globins, tail
  EXPECT_NE(tbl.find("# Option settings: warpsearch hmmsearch -A "), std::string::npos) << tbl;
  if (!have_hmmsearch()) GTEST_SKIP() << "hmmsearch not installed: oracle comparison skipped";
  const std::string cmd = "hmmsearch --cpu 1 -A " + shell_quote(dir / "r.sto") + " -o " +
                          shell_quote(dir / "r.out") + " --tblout " + shell_quote(dir / "r.tbl") +
                          " --domtblout " + shell_quote(dir / "r.dom") + " " + shell_quote(hmm) + " " +
                          shell_quote(db);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(data_lines(tbl), data_lines(read_file(dir / "r.tbl")));
  EXPECT_EQ(data_lines(read_file(dir / "o.dom")), data_lines(read_file(dir / "r.dom")));
  EXPECT_EQ(data_lines(r.out), data_lines(read_file(dir / "r.out")));
  EXPECT_EQ(read_file(dir / "o.sto"), read_file(dir / "r.sto"));
}

TEST(HmmsearchCli, OutputFileAndEchoedOptions) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h8_cli");
  const CliResult r =
      run_cli("-q hmmsearch -o " + shell_quote(dir / "rep.txt") + " -E 0.5 --domT 3 --max --seed 9 --noali " +
              shell_quote(tdata("hmm/fn3.hmm")) + " " + shell_quote(tdata("prot/globins45.fa")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string rep = read_file(dir / "rep.txt");
  for (const char* echoed :
       {"# output directed to file:", "# sequence reporting threshold:    E-value <= 0.5",
        "# domain reporting threshold:      score >= 3", "# Max sensitivity mode:            on",
        "# random number seed set to:       9", "# show alignments in output:       no"}) {
    EXPECT_NE(rep.find(echoed), std::string::npos) << echoed << "\n" << rep;
  }
  EXPECT_NE(rep.find("45  (1); expected 45.0 (1)"), std::string::npos) << rep;
}

// The header's option lines as HMMER prints them: an option given with exactly its default text ("-E
// 10.0", "--textw 120", "--cpu 2", "--seed 42") is not echoed, the same value written otherwise is
// ("-E 10"); --seed 0 prints both seed lines.
TEST(HmmsearchCli, EchoedOptionsAsHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!have_hmmsearch()) GTEST_SKIP() << "hmmsearch not installed";
  const TempDir dir("h8_cli");
  auto header = [](const std::string& text) {
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line) && line.rfind("Query:", 0) != 0)
      if (line.rfind("# query HMM file", 0) != 0 && line.rfind("# target sequence", 0) != 0)
        out += line + "\n";
    return out;
  };
  const std::string files =
      " " + shell_quote(tdata("hmm/globins4.hmm")) + " " + shell_quote(tdata("prot/globins45.fa"));
  for (const char* opts :
       {"-E 10.0 --domE 10.0 --incE 0.01 --incdomE 0.01", "-E 10 --incE 0.010",
        "--F1 0.02 --F2 1e-3 --F3 1e-5", "--F2 0.001", "--textw 120 --cpu 2", "--textw 130", "--seed 42",
        "--seed 0", "--seed 7 --cpu 3",
        // Integers are decimal, leading zeros and all (not octal), and echoed as HMMER does.
        "--seed 042", "--seed 010", "--textw 0130", "--cpu 02",
        // Long options abbreviated to an unambiguous prefix, as HMMER takes them.
        "--acc --notex --nob", "--max --incdomE 0.5 --tbl=/dev/null --text 130"}) {
    const CliResult r = run_cli(std::string("hmmsearch --noali ") + opts + files);
    ASSERT_EQ(r.status, 0) << opts << "\n" << r.err;
    const std::string cmd =
        std::string("hmmsearch --noali ") + opts + files + " > " + shell_quote(dir / "h.out");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(header(r.out), header(read_file(dir / "h.out"))) << opts;
  }
}

TEST(HmmsearchCli, UsageErrors) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  const std::string args =
      " " + shell_quote(tdata("hmm/fn3.hmm")) + " " + shell_quote(tdata("prot/globins45.fa"));
  struct Case {
    std::string options;
    std::string message;
  };
  for (const Case& c :
       {Case{"-E 1 -T 5", "incompatible"}, Case{"--max --F1 0.1", "incompatible"},
        Case{"--textw 100", "--textw"}, Case{"-E 0", "-E must be > 0"},
        Case{"--cut_ga --cut_tc", "mutually exclusive"}, Case{"--tformat embl", "--tformat"},
        Case{"--seed 0x2A", "not a decimal integer"}, Case{"--textw 1e3", "not a decimal integer"},
        Case{"--dom 5", "abbreviated option --dom is ambiguous: --domE, --domT, --domZ, --domtblout"},
        Case{"--inc=0.1", "abbreviated option --inc is ambiguous"}}) {
    const CliResult r = run_cli("hmmsearch " + c.options + args);
    EXPECT_EQ(r.status, 2) << c.options << ": " << r.err;
    EXPECT_NE((r.out + r.err).find(c.message), std::string::npos) << c.options << ": " << r.err;
  }
  // Errors found by the option parser itself (CLI11's exit statuses).
  EXPECT_NE(run_cli("hmmsearch " + shell_quote(tdata("hmm/fn3.hmm"))).status, 0);  // missing <seqdb>
  const CliResult cpu = run_cli("hmmsearch --cpu -1" + args);
  EXPECT_NE(cpu.status, 0);
  EXPECT_NE(cpu.err.find("--cpu"), std::string::npos) << cpu.err;
}

TEST(HmmsearchCli, InputErrorsLeaveNoOutputFiles) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h8_cli");
  const std::string outs = " -o " + shell_quote(dir / "rep.txt") + " --tblout " + shell_quote(dir / "t.tbl") +
                           " --domtblout " + shell_quote(dir / "d.tbl") + " ";
  // A model without GA cutoffs with --cut_ga: HMMER's message, exit status of an input error.
  CliResult r = run_cli("hmmsearch --cut_ga" + outs + shell_quote(tdata("hmm/globins4.hmm")) + " " +
                        shell_quote(tdata("prot/globins45.fa")));
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_NE(r.err.find("GA bit thresholds unavailable on model globins4"), std::string::npos) << r.err;
  EXPECT_TRUE(dir.listing().empty());
  // An illegal residue: file, line and character.
  write_file(dir / "bad.fa", ">ok\nACDEF\n>bad seq\nACD\nAC9EF\n");
  r = run_cli("hmmsearch" + outs + shell_quote(tdata("hmm/globins4.hmm")) + " " +
              shell_quote(dir / "bad.fa"));
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_NE(r.err.find("bad.fa:5: illegal character '9' in sequence 'bad'"), std::string::npos) << r.err;
  EXPECT_EQ(dir.listing(), std::set<std::string>{"bad.fa"});
  // Missing files.
  r = run_cli("hmmsearch" + outs + shell_quote(dir / "none.hmm") + " " + shell_quote(dir / "bad.fa"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("none.hmm"), std::string::npos) << r.err;
  r = run_cli("hmmsearch" + outs + shell_quote(tdata("hmm/globins4.hmm")) + " " +
              shell_quote(dir / "none.fa"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("none.fa"), std::string::npos) << r.err;
  EXPECT_EQ(dir.listing(), std::set<std::string>{"bad.fa"});
}

TEST(HmmsearchCli, ReadsGzipAndStdin) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h8_cli");
  const std::string gz = dir / "db.fa.gz";
  ASSERT_EQ(
      std::system(("gzip -c " + shell_quote(tdata("prot/globins45.fa")) + " > " + shell_quote(gz)).c_str()),
      0);
  const std::string hmm = shell_quote(tdata("hmm/globins4.hmm"));
  const CliResult plain = run_cli("hmmsearch --noali " + hmm + " " + shell_quote(tdata("prot/globins45.fa")));
  const CliResult zipped = run_cli("hmmsearch --noali " + hmm + " " + shell_quote(gz));
  const CliResult piped = run_cli("hmmsearch --noali " + hmm + " -", tdata("prot/globins45.fa"));
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(zipped.status, 0) << zipped.err;
  ASSERT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(data_lines(zipped.out), data_lines(plain.out));
  EXPECT_EQ(data_lines(piped.out), data_lines(plain.out));
}

// ---------------------------------------------------------------------------------------------------
// Bad input: every case gives a clear message and a non-zero exit status, writes nothing to stdout and
// leaves no output file behind.
// ---------------------------------------------------------------------------------------------------

// Runs `hmmsearch` with -o/--tblout/--domtblout/-A into dir and checks the failure: exit status (0: any
// non-zero), a message in stderr, nothing on stdout, no file created or left in dir.
void expect_failure(const TempDir& dir, const std::string& args, int status, const std::string& message,
                    const std::string& stdin_path = "/dev/null") {
  const std::set<std::string> before = dir.listing();
  const std::string outs = " -o " + shell_quote(dir / "rep.txt") + " --tblout " + shell_quote(dir / "t.tbl") +
                           " --domtblout " + shell_quote(dir / "d.tbl") + " -A " +
                           shell_quote(dir / "a.sto") + " ";
  const CliResult r = run_cli("hmmsearch" + outs + args, stdin_path);
  if (status != 0) {
    EXPECT_EQ(r.status, status) << args << "\n" << r.err;
  } else {
    EXPECT_NE(r.status, 0) << args;
  }
  EXPECT_NE(r.err.find(message), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_EQ(r.out, "") << args;
  EXPECT_EQ(dir.listing(), before) << args;
}

TEST(HmmsearchCli, MalformedModelFiles) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h11_cli");
  const std::string db = " " + shell_quote(tdata("prot/globins45.fa"));
  const std::string globins = read_file(tdata("hmm/globins4.hmm"));
  const std::string fn3 = read_file(tdata("hmm/fn3.hmm"));
  // Cut inside the node lines: the error names the file and the line where the model ends.
  const std::size_t cut = globins.find('\n', globins.size() / 2) + 1;
  const auto cut_line =
      static_cast<int>(std::count(globins.begin(), globins.begin() + static_cast<long>(cut), '\n'));
  write_file(dir / "cut.hmm", globins.substr(0, cut));
  expect_failure(dir, shell_quote(dir / "cut.hmm") + db, 4, "cut.hmm:" + std::to_string(cut_line) + ": ");
  // Cut inside the header (after NAME): an error too (HMMER would silently see no model).
  write_file(dir / "header.hmm", globins.substr(0, globins.find("LENG")));
  expect_failure(dir, shell_quote(dir / "header.hmm") + db, 4, "header.hmm:");
  // Not an HMM file, an empty file, a bad number of match states, a bad probability field.
  write_file(dir / "text.hmm", "hello world\n");
  expect_failure(dir, shell_quote(dir / "text.hmm") + db, 4,
                 "text.hmm:1: Format tag is 'hello': unrecognized");
  write_file(dir / "empty.hmm", "");
  expect_failure(dir, shell_quote(dir / "empty.hmm") + db, 4, "empty.hmm");
  std::string bad_leng = globins;
  bad_leng.replace(bad_leng.find("LENG  149"), 9, "LENG  -3 ");
  write_file(dir / "leng.hmm", bad_leng);
  expect_failure(dir, shell_quote(dir / "leng.hmm") + db, 4, "leng.hmm:");
  // The second model of a file is truncated: the first one was searched, but no output file remains.
  write_file(dir / "two.hmm", globins + fn3.substr(0, fn3.size() / 3));
  expect_failure(dir, shell_quote(dir / "two.hmm") + db, 4, "two.hmm:");
  // Models of two alphabets in one file.
  WS_REQUIRE_TESTDATA("hmm/MADE1.hmm");
  write_file(dir / "mixed.hmm", globins + read_file(tdata("hmm/MADE1.hmm")));
  expect_failure(dir, shell_quote(dir / "mixed.hmm") + db, 4, "mixed.hmm:");
}

TEST(HmmsearchCli, AlphabetMismatchAsHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/MADE1.hmm");
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("dna/humanMito.fa");
  const TempDir dir("h11_cli");
  // A DNA model against a protein database: HMMER's "Line 2: illegal character L", with the file name.
  expect_failure(dir, shell_quote(tdata("hmm/MADE1.hmm")) + " " + shell_quote(tdata("prot/globins45.fa")), 4,
                 "globins45.fa:2: illegal character 'L' in sequence 'MYG_ESCGI' for the DNA alphabet");
  // ... and against a packed protein database.
  ASSERT_EQ(
      run_cli("-q makedb " + shell_quote(tdata("prot/globins45.fa")) + " " + shell_quote(dir / "g45")).status,
      0);
  expect_failure(dir, shell_quote(tdata("hmm/MADE1.hmm")) + " " + shell_quote(dir / "g45"), 4,
                 "residue 'L' at position 2 of sequence 'MYG_ESCGI' (#1) of this protein database");
  // A protein model reads a DNA database as protein, as hmmsearch does.
  const CliResult r =
      run_cli("hmmsearch --tblout " + shell_quote(dir / "o.tbl") + " " +
              shell_quote(tdata("hmm/globins4.hmm")) + " " + shell_quote(tdata("dna/humanMito.fa")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Target sequences:                          1  (16571 residues searched)"),
            std::string::npos)
      << r.out;
  if (!have_hmmsearch()) GTEST_SKIP() << "hmmsearch not installed: oracle comparison skipped";
  const std::string cmd = "hmmsearch --cpu 1 -o " + shell_quote(dir / "r.out") + " --tblout " +
                          shell_quote(dir / "r.tbl") + " " + shell_quote(tdata("hmm/globins4.hmm")) + " " +
                          shell_quote(tdata("dna/humanMito.fa"));
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(data_lines(read_file(dir / "o.tbl")), data_lines(read_file(dir / "r.tbl")));
  EXPECT_EQ(data_lines(r.out), data_lines(read_file(dir / "r.out")));
}

TEST(HmmsearchCli, UnknownOptionsAndMissingCutoffs) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("hmm/XYPPX.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h11_cli");
  const std::string args =
      shell_quote(tdata("hmm/globins4.hmm")) + " " + shell_quote(tdata("prot/globins45.fa"));
  expect_failure(dir, "--no_such_option " + args, 0, "--no_such_option");
  expect_failure(dir, "--cut_nc " + args, 4, "NC bit thresholds unavailable on model globins4");
  expect_failure(dir, "--cut_tc " + args, 4, "TC bit thresholds unavailable on model globins4");
  expect_failure(dir, "--cut_ga -E 1 " + args, 2, "incompatible");
  expect_failure(dir, "--F1 abc " + args, 0, "--F1");
  expect_failure(dir, "-Z 0 " + args, 2, "-Z must be > 0");
  expect_failure(dir, args + " extra_argument", 0, "extra_argument");
  // The first model has GA lines and is searched; the second has none: no output file remains.
  // (XYPPX converted to HMMER3/f by hmmconvert: all models of a file share one format.)
  write_file(dir / "ga.hmm", read_file(warpsearch::test::source_dir() / "fuzz/corpus/hmmfile/xyppx_3f.hmm") +
                                 read_file(tdata("hmm/globins4.hmm")));
  expect_failure(dir,
                 "--cut_ga " + shell_quote(dir / "ga.hmm") + " " + shell_quote(tdata("prot/globins45.fa")), 4,
                 "GA bit thresholds unavailable on model globins4");
}

TEST(HmmsearchCli, UnreadableAndUnwritablePaths) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h11_cli");
  const std::string hmm = shell_quote(tdata("hmm/globins4.hmm")),
                    db = shell_quote(tdata("prot/globins45.fa"));
  std::filesystem::create_directory(dir / "sub");  // a directory in the way
  expect_failure(dir, shell_quote(dir / "sub") + " " + db, 3, "is a directory");
  expect_failure(dir, hmm + " " + shell_quote(dir / "sub"), 3, "is a directory");
  expect_failure(dir, shell_quote(dir / "missing.hmm") + " " + db, 3, "missing.hmm");
  expect_failure(dir, hmm + " " + shell_quote(dir / "missing.fa"), 3, "missing.fa");
  expect_failure(dir, hmm + " " + shell_quote(dir / "missing.wsdb"), 3, "missing.wsdb");
  write_file(dir / "empty.fa", "\n\n");
  expect_failure(dir, hmm + " " + shell_quote(dir / "empty.fa"), 4, "empty.fa: sequence file is empty");
  write_file(dir / "bin.fa", std::string("\x1f\x8b\x08\x00garbage", 11));
  expect_failure(dir, hmm + " " + shell_quote(dir / "bin.fa"), 4, "bin.fa");
  if (::geteuid() != 0) {  // root reads anything
    write_file(dir / "locked.hmm", read_file(tdata("hmm/globins4.hmm")));
    ASSERT_EQ(::chmod((dir / "locked.hmm").c_str(), 0), 0);
    expect_failure(dir, shell_quote(dir / "locked.hmm") + " " + db, 3, "locked.hmm");
  }
  // Outputs that cannot be created: nothing else is left behind either.
  const std::set<std::string> before = dir.listing();
  for (const std::string& opt : {std::string("-o"), std::string("--tblout"), std::string("--domtblout"),
                                 std::string("--pfamtblout"), std::string("-A")}) {
    // A second, writable output that must not appear either.
    const std::string other =
        (opt == "-o" ? " --tblout " + shell_quote(dir / "ok.tbl") : " -o " + shell_quote(dir / "ok.out")) +
        " ";
    const CliResult r = run_cli("hmmsearch" + other + opt + " " + shell_quote(dir / "no/such/dir/out") + " " +
                                hmm + " " + db);
    EXPECT_EQ(r.status, 3) << opt << ": " << r.err;
    EXPECT_NE(r.err.find("no/such/dir/out: cannot create output file"), std::string::npos)
        << opt << ": " << r.err;
    EXPECT_EQ(dir.listing(), before) << opt;
    const CliResult d =
        run_cli("hmmsearch" + other + opt + " " + shell_quote(dir / "sub") + " " + hmm + " " + db);
    EXPECT_EQ(d.status, 3) << opt << ": " << d.err;
    EXPECT_EQ(dir.listing(), before) << opt;
  }
}

TEST(HmmsearchCli, StdinPackedDatabaseAndFastq) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const TempDir dir("h11_cli");
  const std::string hmm = tdata("hmm/globins4.hmm"), fa = tdata("prot/globins45.fa");
  write_file(dir / "two.hmm", read_file(hmm) + read_file(tdata("hmm/fn3.hmm")));
  const CliResult plain =
      run_cli("hmmsearch --noali " + shell_quote(dir / "two.hmm") + " " + shell_quote(fa));
  ASSERT_EQ(plain.status, 0) << plain.err;
  // The models from stdin (plain or gzip); the database from stdin with several models (HMMER can not
  // rewind stdin for a second model; the database is in memory here).
  ASSERT_EQ(
      std::system(
          ("gzip -c " + shell_quote(dir / "two.hmm") + " > " + shell_quote(dir / "two.hmm.gz")).c_str()),
      0);
  const std::string db = " " + shell_quote(fa);
  for (const CliResult& r : {run_cli("hmmsearch --noali -" + db, dir / "two.hmm"),
                             run_cli("hmmsearch --noali -" + db, dir / "two.hmm.gz"),
                             run_cli("hmmsearch --noali " + shell_quote(dir / "two.hmm") + " -", fa)}) {
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(data_lines(r.out), data_lines(plain.out));
  }
  expect_failure(dir, "- -", 2, "either <hmmfile> or <seqdb> may be '-'", fa);
  // A packed database and a FASTQ file of the same sequences.
  ASSERT_EQ(run_cli("-q makedb " + shell_quote(fa) + " " + shell_quote(dir / "g45")).status, 0);
  std::string fastq;
  {
    std::istringstream in(read_file(fa));
    std::string line, seq;
    auto flush = [&] {
      if (seq.empty() && fastq.empty()) return;
      fastq += seq + "\n+\n" + std::string(seq.size(), '5') + "\n";
      seq.clear();
    };
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '>') {
        flush();
        fastq += "@" + line.substr(1) + "\n";
      } else {
        seq += line;
      }
    }
    flush();
  }
  write_file(dir / "g45.fq", fastq);
  for (const std::string& other : {dir / "g45", dir / "g45.wsdb", dir / "g45.fq"}) {
    const CliResult r =
        run_cli("hmmsearch --noali " + shell_quote(dir / "two.hmm") + " " + shell_quote(other));
    ASSERT_EQ(r.status, 0) << other << ": " << r.err;
    EXPECT_EQ(data_lines(r.out), data_lines(plain.out)) << other;
  }
}

}  // namespace
