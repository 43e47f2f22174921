// cli_run.hpp: running the built `warpsearch` binary from tests as a user would, capturing its exit
// status, stdout and stderr separately. WARPSEARCH_CLI (set by tests/CMakeLists.txt) is its path.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace warpsearch::test {

// One shell word: single-quoted, with embedded single quotes escaped.
inline std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (const char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct CliResult {
  int status = -1;  // exit status; -1 if the process did not exit normally
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `warpsearch ARGS` (ARGS already shell-quoted where needed) with stdin from stdin_path.
inline CliResult run_cli(const std::string& args, const std::string& stdin_path = "/dev/null") {
  const TempDir scratch("cli_run");
  const std::string err_path = scratch / "stderr";
  const std::string command = std::string(WARPSEARCH_CLI) + " " + args + " <" + shell_quote(stdin_path) +
                              " 2>" + shell_quote(err_path);
  CliResult r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_path);
  return r;
}

// True if `part` occurs in `text`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The lines of `text` (without their '\n').
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace warpsearch::test
