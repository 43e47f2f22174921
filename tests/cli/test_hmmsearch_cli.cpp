// test_hmmsearch_cli.cpp: `warpsearch hmmsearch` as a user runs it: outputs and their files, HMMER's
// options, the result against the installed hmmsearch (when present), usage and input errors with
// their exit statuses, and no partial output files after a failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
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
        Case{"--cut_ga --cut_tc", "mutually exclusive"}, Case{"--tformat embl", "--tformat"}}) {
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

}  // namespace
