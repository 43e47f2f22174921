// report.hpp: the results of a harness run and their three forms: the text table, CSV and JSON.
//
// Times are summarized by median and minimum over the measured runs (warm-up runs excluded); the
// throughputs (MB/s, Mres/s, GCUPS) divide the first run's Work by the median time. The CSV columns are
// fixed and documented in bench/README.md.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "registry.hpp"
#include "runner.hpp"

namespace warpsearch::bench {

// One entry on one input.
struct EntryResult {
  std::string name;
  bool peer = false;
  Headline headline = Headline::kBytes;
  std::string input;
  unsigned threads = 1;
  std::string status;           // "ok", "unavailable: <why>" or "failed: <why>"
  std::string command;          // peers: the command line that ran; empty for internal entries
  std::vector<RunRecord> runs;  // the measured (successful) runs, warm-ups excluded
};

struct Summary {
  double median_s = 0;
  double min_s = 0;
  double child_median_s = 0;
  std::uint64_t peak_rss_kib = 0;  // maximum over the measured runs
  Work work;                       // from the first measured run
  double mb_per_s = 0;             // 0: not known
  double mres_per_s = 0;
  double gcups = 0;
};

Summary summarize(const EntryResult& result);

// Who, where and how: printed above the table and stored in every CSV row and the JSON.
struct RunMeta {
  std::string label;
  std::string date;     // UTC, ISO 8601
  std::string machine;  // CPU model and logical CPU count
  std::string version;  // warpsearch version
  std::string command;  // the harness command line
  int repeat = 0;
  int warmup = 0;
};

RunMeta describe_run(const std::string& label, const std::string& command, int repeat, int warmup);

void print_table(std::FILE* out, const RunMeta& meta, const std::vector<EntryResult>& results);
void write_csv(const std::string& path, const RunMeta& meta, const std::vector<EntryResult>& results);
void write_json(const std::string& path, const RunMeta& meta, const std::vector<EntryResult>& results);

}  // namespace warpsearch::bench
