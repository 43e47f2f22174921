// blastp_oracle.hpp: small helpers of the tests that compare with the installed BLAST+ blastp (skipped when
// it is missing): whether blastp runs, the non-empty lines of its output, and tab-separated fields.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace warpsearch::test {

inline bool have_blastp() { return std::system("blastp -version > /dev/null 2>&1") == 0; }

// The non-empty lines of text.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

// The tab-separated fields of a line (empty fields kept).
inline std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> parts;
  std::string cur;
  for (const char c : line) {
    if (c == '\t') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

}  // namespace warpsearch::test
