// test_cli_db.cpp: `warpsearch makedb` and `warpsearch dbinfo` run as a user would: exit statuses,
// stdout, stderr messages for bad input, and no files left behind by a failed makedb.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"

namespace {

namespace fs = std::filesystem;

using warpsearch::test::read_file;
using warpsearch::test::write_file;

// A scratch directory named after this suite.
class TempDir : public warpsearch::test::TempDir {
 public:
  TempDir() : warpsearch::test::TempDir("test_cli_db") {}
};

using Result = warpsearch::test::CliResult;
using warpsearch::test::contains;
using warpsearch::test::run_cli;

std::string quote(const std::string& arg) { return warpsearch::test::shell_quote(arg); }

Result run(const std::string& args, const std::string& stdin_path = "/dev/null") {
  return run_cli(args, stdin_path);
}

constexpr const char* kFasta =
    ">sp|P1|ONE first protein\nMKVLAAGIVGLLLAcdefGH\n>two\nACDEFGHIKLMNPQRSTVWY\n>three d\nmmmmKKKKkk\n";

TEST(CliDb, MakedbThenDbinfo) {
  TempDir dir;
  write_file(dir / "in.fa", kFasta);
  const Result made = run("makedb " + quote(dir / "in.fa") + " " + quote(dir / "db") + " --title 'my db'");
  ASSERT_EQ(made.status, 0) << made.err;
  EXPECT_EQ(made.out, "");
  EXPECT_TRUE(contains(made.err, "3 sequences, 50 residues (protein)")) << made.err;
  EXPECT_EQ(dir.listing(),
            (std::set<std::string>{"in.fa", "db.wsdb", "db.wsq", "db.wsh", "db.wsx", "db.wsm", "db.wso"}));

  const Result info = run("dbinfo " + quote(dir / "db") + " --verify");
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_TRUE(contains(info.out, "title        my db\n")) << info.out;
  EXPECT_TRUE(contains(info.out, "sequences    3\n")) << info.out;
  EXPECT_TRUE(contains(info.out, "residues     50\n")) << info.out;
  EXPECT_TRUE(contains(info.out, "soft-masked  10 residues in 3 runs\n")) << info.out;
  EXPECT_TRUE(contains(info.out, "verified     OK")) << info.out;
  EXPECT_TRUE(contains(info.out, "length histogram")) << info.out;
  EXPECT_TRUE(contains(info.out, "partitions")) << info.out;

  const Result json = run("dbinfo " + quote(dir / "db.wsdb") + " --json");
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out.front(), '{');
  EXPECT_TRUE(contains(json.out, "\"sequences\": 3,")) << json.out;
  EXPECT_TRUE(contains(json.out, "\"title\": \"my db\",")) << json.out;
  EXPECT_TRUE(contains(json.out, "\"packed\": true,")) << json.out;
  EXPECT_TRUE(contains(json.out, "\"length_hi\": 64,")) << json.out;

  const Result fasta = run("dbinfo " + quote(dir / "in.fa") + " --json");
  ASSERT_EQ(fasta.status, 0) << fasta.err;
  EXPECT_TRUE(contains(fasta.out, "\"packed\": false,")) << fasta.out;
  EXPECT_TRUE(contains(fasta.out, "\"residues\": 50,")) << fasta.out;
}

TEST(CliDb, QuietGzipAndStdin) {
  TempDir dir;
  gzFile gz = gzopen((dir / "in.fa.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzputs(gz, kFasta);
  gzclose(gz);
  const Result gzipped = run("--quiet makedb " + quote(dir / "in.fa.gz") + " " + quote(dir / "gz"));
  ASSERT_EQ(gzipped.status, 0) << gzipped.err;
  EXPECT_EQ(gzipped.err, "");

  write_file(dir / "in.fa", kFasta);
  const Result piped = run("makedb - " + quote(dir / "piped") + " -q", dir / "in.fa");
  ASSERT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
  EXPECT_EQ(read_file(dir / "gz.wsq"), read_file(dir / "piped.wsq"));
  EXPECT_TRUE(contains(run("dbinfo " + quote(dir / "piped")).out, "title        stdin\n"));
}

TEST(CliDb, UnknownLettersWarnAndStrictRejects) {
  TempDir dir;
  write_file(dir / "in.fa", ">a\nACGTACGTXXQACGT\n>b\nACGT\n");
  const Result lenient =
      run("-q makedb " + quote(dir / "in.fa") + " " + quote(dir / "db") + " --alphabet dna");
  ASSERT_EQ(lenient.status, 0) << lenient.err;
  EXPECT_TRUE(contains(lenient.err, "warning")) << lenient.err;
  EXPECT_TRUE(contains(lenient.err, "3 letters outside the dna alphabet")) << lenient.err;

  const Result strict =
      run("makedb " + quote(dir / "in.fa") + " " + quote(dir / "strict") + " --alphabet dna --strict");
  EXPECT_EQ(strict.status, 4);
  EXPECT_TRUE(contains(strict.err, dir / "in.fa" + ":2:")) << strict.err;
  EXPECT_FALSE(fs::exists(dir / "strict.wsdb"));

  const Result bad = run("makedb " + quote(dir / "in.fa") + " " + quote(dir / "x") + " --alphabet klingon");
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(contains(bad.err, "--alphabet klingon")) << bad.err;
}

TEST(CliDb, BadInputLeavesNoFiles) {
  TempDir dir;
  write_file(dir / "text.txt", "hello world\nthis is not a sequence file\n");
  write_file(dir / "dup.fa", ">a\nMK\n>b\nMK\n>a\nMK\n");
  write_file(dir / "empty.fa", "");
  const auto before = dir.listing();

  Result r = run("makedb " + quote(dir / "missing.fa") + " " + quote(dir / "db"));
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, "warpsearch: error: " + dir / "missing.fa")) << r.err;

  r = run("makedb " + quote(dir / "text.txt") + " " + quote(dir / "db"));
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "text.txt" + ":1:")) << r.err;

  r = run("makedb " + quote(dir / "dup.fa") + " " + quote(dir / "db"));
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "dup.fa" + ":5: duplicate sequence name 'a' (first at line 1)")) << r.err;

  r = run("makedb " + quote(dir / "empty.fa") + " " + quote(dir / "db"));
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, "no sequences")) << r.err;

  r = run("makedb " + quote(dir / "dup.fa") + " " + quote(dir / "no/such/dir/db"));
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "no/such/dir/db")) << r.err;

  EXPECT_EQ(dir.listing(), before);
}

TEST(CliDb, ReadOnlyDirectoryLeavesNoFiles) {
  TempDir dir;
  write_file(dir / "in.fa", kFasta);
  fs::create_directory(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  // Root ignores directory permissions; sysfs refuses new files even to root.
  if (::geteuid() == 0 && !fs::is_directory("/sys")) GTEST_SKIP() << "running as root without /sys";
  const std::string target = ::geteuid() == 0 ? "/sys/warpsearch_test_db" : dir / "ro/db";
  const Result r = run("makedb " + quote(dir / "in.fa") + " " + quote(target));
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, target + ".wsq: cannot create output file")) << r.err;
  EXPECT_TRUE(fs::is_empty(dir / "ro"));
  EXPECT_FALSE(fs::exists(target + ".wsq"));
}

TEST(CliDb, ExistingDatabaseNeedsForce) {
  TempDir dir;
  write_file(dir / "in.fa", kFasta);
  write_file(dir / "small.fa", ">x\nMKV\n");
  ASSERT_EQ(run("-q makedb " + quote(dir / "in.fa") + " " + quote(dir / "db")).status, 0);
  const Result refused = run("makedb " + quote(dir / "small.fa") + " " + quote(dir / "db"));
  EXPECT_EQ(refused.status, 2);
  EXPECT_TRUE(contains(refused.err, dir / "db.wsdb: database file already exists (use --force to overwrite)"))
      << refused.err;
  const Result forced = run("-q makedb " + quote(dir / "small.fa") + " " + quote(dir / "db") + " --force");
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_TRUE(contains(run("dbinfo " + quote(dir / "db")).out, "sequences    1\n"));
}

TEST(CliDb, DbinfoReportsCorruptionAndMissingFiles) {
  TempDir dir;
  write_file(dir / "in.fa", kFasta);
  ASSERT_EQ(run("-q makedb " + quote(dir / "in.fa") + " " + quote(dir / "db")).status, 0);
  const std::string original = read_file(dir / "db.wsq");
  std::string residues = original;
  residues[5] = static_cast<char>(residues[5] ^ 1);
  write_file(dir / "db.wsq", residues);
  EXPECT_EQ(run("dbinfo " + quote(dir / "db")).status, 0);  // only --verify reads the residues
  Result r = run("dbinfo " + quote(dir / "db") + " --verify");
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "db.wsq: checksum mismatch")) << r.err;
  EXPECT_EQ(r.out, "");

  residues.pop_back();
  write_file(dir / "db.wsq", residues);
  r = run("dbinfo " + quote(dir / "db"));
  EXPECT_EQ(r.status, 4);
  EXPECT_TRUE(contains(r.err, dir / "db.wsq: file has 49 bytes but the database header says 50")) << r.err;

  write_file(dir / "db.wsq", original);
  fs::remove(dir / "db.wsx");
  r = run("dbinfo " + quote(dir / "db"));
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "db.wsx")) << r.err;

  r = run("dbinfo " + quote(dir / "nothing"));
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(contains(r.err, dir / "nothing")) << r.err;
}

TEST(CliDb, RealProteinDatabase) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  TempDir dir;
  const std::string input = (warpsearch::test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  const Result made = run("makedb " + quote(input) + " " + quote(dir / "db"));
  ASSERT_EQ(made.status, 0) << made.err;
  EXPECT_TRUE(contains(made.err, "20000 sequences")) << made.err;
  const Result info = run("dbinfo " + quote(dir / "db") + " --verify --json");
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_TRUE(contains(info.out, "\"sequences\": 20000,")) << info.out;
  EXPECT_TRUE(contains(info.out, "\"verified\": true,")) << info.out;
}

}  // namespace
