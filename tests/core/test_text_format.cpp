// test_text_format.cpp: JSON and CSV quoting.
#include <gtest/gtest.h>

#include "core/text_format.hpp"

namespace warpsearch {
namespace {

TEST(TextFormat, JsonQuoteEscapesWhatJsonRequires) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_quote("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(json_quote(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(json_quote("\xc3\xa9"), "\"\xc3\xa9\"");  // UTF-8 passes through
  EXPECT_EQ(json_quote(""), "\"\"");
}

TEST(TextFormat, CsvFieldQuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("sp|P1|X"), "sp|P1|X");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(""), "");
}

}  // namespace
}  // namespace warpsearch
