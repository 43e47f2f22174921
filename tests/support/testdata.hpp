// testdata.hpp: locating the real test data fetched by scripts/fetch_testdata.sh.
//
// Tests that need real data call WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta"): the test is skipped
// when the file is missing, unless WARPSEARCH_REQUIRE_TESTDATA=1 is set (the README's test command and
// CI set it), in which case a missing file fails the test.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace warpsearch::test {

inline std::filesystem::path testdata_dir() {
  if (const char* env = std::getenv("WARPSEARCH_TESTDATA")) return env;
  return WARPSEARCH_TESTDATA_DIR;
}

inline std::filesystem::path source_dir() { return WARPSEARCH_SOURCE_DIR; }

inline bool testdata_required() {
  const char* env = std::getenv("WARPSEARCH_REQUIRE_TESTDATA");
  return env != nullptr && std::string(env) == "1";
}

}  // namespace warpsearch::test

#define WS_REQUIRE_TESTDATA(relpath)                                                           \
  do {                                                                                         \
    if (!std::filesystem::exists(::warpsearch::test::testdata_dir() / (relpath))) {            \
      if (::warpsearch::test::testdata_required())                                             \
        FAIL() << "missing test data " << (::warpsearch::test::testdata_dir() / (relpath))     \
               << " (run scripts/fetch_testdata.sh)";                                          \
      GTEST_SKIP() << "test data " << (relpath) << " not fetched (scripts/fetch_testdata.sh)"; \
    }                                                                                          \
  } while (0)
