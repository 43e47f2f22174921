// test_output_file.cpp: outputs appear whole on commit and not at all on failure; errors are clear.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "warpsearch/error.hpp"
#include "warpsearch/output_file.hpp"

namespace fs = std::filesystem;

namespace warpsearch {
namespace {

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ws_output_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

TEST_F(OutputFileTest, CommitPublishesTheWholeFile) {
  const fs::path target = dir_ / "out.txt";
  {
    OutputFile out(target.string(), 16);  // tiny buffer: exercises flushing and large writes
    out.write(nullptr, 0);                // empty writes are allowed with a null pointer
    out.write("hello ");
    out.write(std::string(100, 'x'));
    EXPECT_FALSE(fs::exists(target));  // nothing visible before commit
    out.commit();
    EXPECT_EQ(out.bytes_written(), 106u);
  }
  EXPECT_EQ(slurp(target), "hello " + std::string(100, 'x'));
  EXPECT_EQ(entries(), 1u);  // no temporary left
}

TEST_F(OutputFileTest, ReplacesAnExistingFileOnlyOnCommit) {
  const fs::path target = dir_ / "out.txt";
  std::ofstream(target) << "old";
  {
    OutputFile out(target.string());
    out.write("new");
  }  // destroyed without commit
  EXPECT_EQ(slurp(target), "old");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, FailureLeavesNothingBehind) {
  const fs::path target = dir_ / "out.txt";
  try {
    OutputFile out(target.string());
    out.write("partial");
    throw std::runtime_error("failed halfway");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(OutputFileTest, GroupCommitsAllOrNothing) {
  {
    OutputGroup group;
    group.add((dir_ / "a").string()).write("A");
    group.add((dir_ / "b").string()).write("B");
  }
  EXPECT_EQ(entries(), 0u);
  OutputGroup group;
  group.add((dir_ / "a").string()).write("A");
  group.add((dir_ / "b").string()).write("B");
  group.commit();
  EXPECT_EQ(slurp(dir_ / "a"), "A");
  EXPECT_EQ(slurp(dir_ / "b"), "B");
  EXPECT_EQ(entries(), 2u);
}

TEST_F(OutputFileTest, UnwritableDirectoryIsAClearIoError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can write anywhere";
  fs::permissions(dir_, fs::perms::owner_write, fs::perm_options::remove);
  try {
    OutputFile out((dir_ / "x").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("cannot create output file"), std::string::npos);
  }
}

TEST_F(OutputFileTest, MissingDirectoryIsAClearIoError) {
  try {
    OutputFile out((dir_ / "no" / "such" / "dir" / "x").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(e.file(), (dir_ / "no" / "such" / "dir" / "x").string());
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos);
  }
}

TEST_F(OutputFileTest, DevNullIsWrittenDirectlyAndNeverReplaced) {
  OutputFile out("/dev/null");
  out.write("discarded");
  out.commit();
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(ErrorTest, WhatNamesFileAndLine) {
  EXPECT_STREQ(Error(ErrorKind::kFormat, "bad", "x.fa", 12).what(), "x.fa:12: bad");
  EXPECT_STREQ(Error(ErrorKind::kIo, "gone", "x.fa").what(), "x.fa: gone");
  EXPECT_STREQ(Error(ErrorKind::kUsage, "plain").what(), "plain");
  EXPECT_EQ(exit_code(ErrorKind::kUsage), 2);
  EXPECT_NE(exit_code(ErrorKind::kFormat), 0);
  EXPECT_NE(exit_code(ErrorKind::kGpu), 0);
}

}  // namespace
}  // namespace warpsearch
