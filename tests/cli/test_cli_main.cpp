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
