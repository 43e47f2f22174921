// main.cpp: the warpsearch-bench command line: `list` the entries, `run` some of them on inputs.
//
//   warpsearch-bench list
//   warpsearch-bench run NAME... --input FILE [--input FILE ...] [--repeat 3] [--warmup 1] [--threads T]
//                        [--all | --match REGEX] [--csv out.csv] [--json out.json] [--label TEXT]
//
// The result table goes to stdout after everything else, so the tail of a remote run's log shows it.
// Exit status: 0 when every selected entry ran or was unavailable, 1 when any failed, 2 for usage errors.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <regex>
#include <thread>

#include "harness.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::bench {
namespace {

struct RunCommand {
  std::vector<std::string> names;
  bool all = false;
  std::string match;
  std::string csv;
  std::string json;
  std::string label;
  HarnessOptions harness;
};

void print_list() {
  std::size_t width = 4;
  for (const Entry* entry : entries()) width = std::max(width, entry->name.size());
  fmt::print("{:<{}}  {:<8}  {:<8}  {:<9}  {}\n", "name", width, "kind", "headline", "available",
             "description");
  for (const Entry* entry : entries()) {
    const std::string reason = unavailable_reason(*entry);
    fmt::print("{:<{}}  {:<8}  {:<8}  {:<9}  {}{}\n", entry->name, width,
               is_peer(*entry) ? "peer" : "internal", to_string(entry->headline),
               reason.empty() ? "yes" : "no", entry->description, reason.empty() ? "" : " [" + reason + "]");
  }
}

std::regex compile(const std::string& pattern) {
  try {
    return std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw Error(ErrorKind::kUsage, "--match '" + pattern + "': " + e.what());
  }
}

// Named entries in the order given, then --all or --match entries (sorted by name) not named already.
std::vector<const Entry*> select_entries(const RunCommand& cmd) {
  std::vector<const Entry*> selected;
  for (const std::string& name : cmd.names) {
    const Entry* entry = find_entry(name);
    if (entry == nullptr) {
      throw Error(ErrorKind::kUsage, "unknown entry '" + name + "' (warpsearch-bench list shows them)");
    }
    selected.push_back(entry);
  }
  if (cmd.all || !cmd.match.empty()) {
    const std::regex pattern = compile(cmd.all ? std::string(".*") : cmd.match);
    for (const Entry* entry : entries()) {
      const bool named = std::find(selected.begin(), selected.end(), entry) != selected.end();
      if (!named && std::regex_search(entry->name, pattern)) selected.push_back(entry);
    }
  }
  if (selected.empty())
    throw Error(ErrorKind::kUsage, "no entries selected: name some, or use --all/--match");
  return selected;
}

std::string joined_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i > 0 ? " " : "") + std::string(argv[i]);
  return line;
}

int run_selected(RunCommand& cmd, const std::string& command_line) {
  cmd.harness.entries = select_entries(cmd);
  const RunMeta meta = describe_run(cmd.label, command_line, cmd.harness.repeat, cmd.harness.warmup);
  const std::vector<EntryResult> results = run_benchmarks(cmd.harness);
  if (!cmd.csv.empty()) write_csv(cmd.csv, meta, results);
  if (!cmd.json.empty()) write_json(cmd.json, meta, results);
  print_table(stdout, meta, results);
  const bool failed = std::any_of(results.begin(), results.end(),
                                  [](const EntryResult& r) { return r.status.rfind("failed", 0) == 0; });
  return failed ? 1 : 0;
}

void add_run_options(CLI::App& run, RunCommand& cmd) {
  run.add_option("names", cmd.names, "Entries to run, in this order (see `list`)");
  run.add_flag("--all", cmd.all, "Run every registered entry");
  run.add_option("--match", cmd.match, "Run every entry whose name matches this regular expression");
  run.add_option("--input", cmd.harness.inputs, "Input file; repeat the option for several inputs")
      ->required()
      ->allow_extra_args(false)
      ->check(CLI::ExistingFile);
  run.add_option("--repeat", cmd.harness.repeat, "Measured runs per entry and input (median and min)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  run.add_option("--warmup", cmd.harness.warmup, "Unmeasured runs before them")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  run.add_option("--threads", cmd.harness.threads, "Threads for entries and peers ({threads})")
      ->check(CLI::Range(1U, 4096U))
      ->capture_default_str();
  run.add_option("--timeout", cmd.harness.timeout_s, "Kill a run after this many seconds (0: never)")
      ->capture_default_str();
  run.add_option("--tmp-dir", cmd.harness.tmp_root, "Where setup products and run outputs are written")
      ->capture_default_str();
  run.add_option("--csv", cmd.csv, "Write the results as CSV (columns: bench/README.md)");
  run.add_option("--json", cmd.json, "Write the results, every run included, as JSON");
  run.add_option("--label", cmd.label, "Free text stored with the results (machine, GPU, build, ...)");
}

std::string default_tmp_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

}  // namespace
}  // namespace warpsearch::bench

int main(int argc, char** argv) {
  using namespace warpsearch::bench;
  CLI::App app{"warpsearch-bench: run implementations and peer tools by name on the same input"};
  app.require_subcommand(1);
  CLI::App* list =
      app.add_subcommand("list", "List the entries, what they measure and whether they can run here");
  CLI::App* run =
      app.add_subcommand("run", "Run entries on inputs and report wall time, throughput, peak RSS");
  RunCommand cmd;
  cmd.harness.threads = std::max(1U, std::thread::hardware_concurrency());
  cmd.harness.tmp_root = default_tmp_root();
  add_run_options(*run, cmd);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : warpsearch::exit_code(warpsearch::ErrorKind::kUsage);
  }
  try {
    if (list->parsed()) {
      print_list();
      return 0;
    }
    return run_selected(cmd, joined_command_line(argc, argv));
  } catch (const warpsearch::Error& e) {
    fmt::print(stderr, "warpsearch-bench: {}\n", e.what());
    return warpsearch::exit_code(e.kind());
  } catch (const std::exception& e) {
    fmt::print(stderr, "warpsearch-bench: {}\n", e.what());
    return 1;
  }
}
