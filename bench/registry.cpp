// registry.cpp: storage and lookup of the benchmark entries, and locating peer programs.
#include "registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace warpsearch::bench {
namespace {

// Function-local so that registrations in any translation unit can run in any order.
std::vector<Entry>& storage() {
  static std::vector<Entry> all;
  return all;
}

bool is_executable(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::filesystem::path testdata_bin_dir() {
  if (const char* env = std::getenv("WARPSEARCH_TESTDATA"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env) / "bin";
  }
  return std::filesystem::path(WARPSEARCH_TESTDATA_DIR) / "bin";
}

std::vector<std::filesystem::path> search_dirs() {
  std::vector<std::filesystem::path> dirs{testdata_bin_dir()};
  if (const char* path = std::getenv("PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');) dirs.emplace_back(dir.empty() ? "." : dir);
  }
  return dirs;
}

}  // namespace

Registration::Registration(Entry entry) {
  if (find_entry(entry.name) != nullptr) {
    std::fprintf(stderr, "warpsearch-bench: benchmark entry '%s' is registered twice\n", entry.name.c_str());
    std::abort();
  }
  storage().push_back(std::move(entry));
}

std::vector<const Entry*> entries() {
  std::vector<const Entry*> sorted;
  for (const Entry& entry : storage()) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) { return a->name < b->name; });
  return sorted;
}

const Entry* find_entry(const std::string& name) {
  for (const Entry& entry : storage()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

bool is_peer(const Entry& entry) { return std::holds_alternative<ExternalRun>(entry.body); }

std::string unavailable_reason(const Entry& entry) {
  if (const auto* peer = std::get_if<ExternalRun>(&entry.body)) {
    const std::string& program = peer->argv.at(0);
    if (!find_program(program)) return program + " not found in $WARPSEARCH_TESTDATA/bin or $PATH";
  }
  return entry.unavailable ? entry.unavailable() : std::string();
}

std::optional<std::string> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (is_executable(name)) return name;
    return std::nullopt;
  }
  for (const std::filesystem::path& dir : search_dirs()) {
    if (is_executable(dir / name)) return (dir / name).string();
  }
  return std::nullopt;
}

const char* to_string(Headline headline) {
  switch (headline) {
    case Headline::kBytes: return "MB/s";
    case Headline::kResidues: return "Mres/s";
    case Headline::kCells: return "GCUPS";
  }
  return "?";
}

}  // namespace warpsearch::bench
