// blastp_oracle.hpp: small helpers of the tests that compare with the installed BLAST+ blastp (skipped when
// it is missing): whether blastp runs, the non-empty lines of its output, and fields of a line.
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

// The fields of `line` separated by `sep` (empty fields kept); split_tabs: by tabs.
inline std::vector<std::string> split_on(const std::string& line, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (const char c : line) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

inline std::vector<std::string> split_tabs(const std::string& line) { return split_on(line, '\t'); }

}  // namespace warpsearch::test
