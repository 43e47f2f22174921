// test_cli_main.cpp: the `warpsearch` binary's global behaviour: version, help, usage errors, devices.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.hpp"

namespace {

// The tests below look at what a user sees on the terminal: stdout and stderr together.
struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run_cli(const std::string& args) {
  const warpsearch::test::CliResult r = warpsearch::test::run_cli(args);
  return {r.status, r.out + r.err};
}

TEST(CliMain, VersionNamesTheBuild) {
  const CliRun r = run_cli("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("warpsearch 0."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU support"), std::string::npos) << r.out;
}

TEST(CliMain, NoCommandIsAUsageError) {
  const CliRun r = run_cli("");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("makedb"), std::string::npos) << r.out;  // help lists the commands
}

TEST(CliMain, UnknownOptionAndBadDeviceAreUsageErrors) {
  // Mistakes the option parser catches exit with the usage status 2, like the commands' own checks.
  EXPECT_EQ(run_cli("--no-such-option dbinfo x").status, 2);
  EXPECT_EQ(run_cli("hmmsearch --cpu").status, 2);                 // missing value
  EXPECT_EQ(run_cli("align --query a.fa --target").status, 2);     // missing value
  EXPECT_EQ(run_cli("hmmsearch --cpu -3 m.hmm db.fa").status, 2);  // out of range
  const CliRun r = run_cli("--device tpu devices");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--device"), std::string::npos) << r.out;
}

// CLI11 alone would read "010" as octal 8, "0x3" as hex 3 and "-1" for a 64-bit count as 2^64 - 1: every
// integer option takes decimal digits only (blastp's also 0x and hexadecimal digits, as BLAST+).
TEST(CliMain, IntegerOptionsAreDecimal) {
  const CliRun leading_zeros = run_cli("--device cpu --threads 010 devices");
  EXPECT_EQ(leading_zeros.status, 0) << leading_zeros.out;
  for (const char* args : {"--threads 0x3 devices", "--threads 1e1 devices", "--threads 3x devices",
                           "--threads - devices", "devices --threads ' 2'"}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.out.find("not a decimal integer"), std::string::npos) << args << ": " << r.out;
  }
  const CliRun negative = run_cli("--threads -1 devices");
  EXPECT_EQ(negative.status, 2);
  EXPECT_NE(negative.out.find("'-1': expected a number >= 0"), std::string::npos) << negative.out;
  const CliRun top = run_cli("swsearch --query q.fa --db d.fa --top 0x10");
  EXPECT_EQ(top.status, 2);
  EXPECT_NE(top.out.find("--top: '0x10' is not a decimal integer"), std::string::npos) << top.out;
  // Lower bounds say so (CLI11's own checks printed a range up to 1.8e308), in the format of every error.
  const CliRun zero = run_cli("swsearch --query q.fa --db d.fa --top 000");
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.out.find("warpsearch: error: --top: 0 given; it must be >= 1"), std::string::npos)
      << zero.out;
  const CliRun overlap = run_cli("scan --query q.fa --target t.fa --overlap -5");
  EXPECT_EQ(overlap.status, 2);
  EXPECT_NE(overlap.out.find("warpsearch: error: --overlap: -5 given; it must be >= 0"), std::string::npos)
      << overlap.out;
  const CliRun hex = run_cli("blastp -query q.fa -subject s.fa -max_target_seqs 0xZ");
  EXPECT_EQ(hex.status, 2);
  EXPECT_NE(hex.out.find("'0xZ' is not an integer"), std::string::npos) << hex.out;
}

TEST(CliMain, EveryCommandHasHelpWithExamples) {
  for (const char* cmd : {"makedb", "dbinfo", "devices", "align", "hmmsearch", "scan", "blastp"}) {
    const CliRun r = run_cli(std::string(cmd) + " --help");
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_NE(r.out.find("Examples"), std::string::npos) << cmd << ": " << r.out;
  }
}

TEST(CliMain, DevicesReportsTheSelection) {
  const CliRun cpu = run_cli("--device cpu devices");
  EXPECT_EQ(cpu.status, 0) << cpu.out;
  EXPECT_NE(cpu.out.find("selection (--device cpu): CPU"), std::string::npos) << cpu.out;
#ifndef WARPSEARCH_HAVE_CUDA
  // Without GPU code, asking for a GPU must fail clearly, and auto falls back to the CPU.
  const CliRun gpu = run_cli("--device gpu devices");
  EXPECT_NE(gpu.status, 0);
  EXPECT_NE(gpu.out.find("without CUDA"), std::string::npos) << gpu.out;
  const CliRun aut = run_cli("devices");
  EXPECT_EQ(aut.status, 0);
  EXPECT_NE(aut.out.find("CPU"), std::string::npos) << aut.out;
#endif
}

TEST(CliMain, GlobalOptionsMayFollowTheCommand) {
  const CliRun r = run_cli("devices --device cpu --quiet --threads 2");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("CPU"), std::string::npos) << r.out;
}

}  // namespace
