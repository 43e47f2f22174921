// harness.hpp: runs the selected entries on each input: setups once, warm-ups, measured repeats.
#pragma once

#include <string>
#include <vector>

#include "registry.hpp"
#include "report.hpp"

namespace warpsearch::bench {

struct HarnessOptions {
  std::vector<const Entry*> entries;
  std::vector<std::string> inputs;
  int repeat = 3;          // measured runs per entry and input
  int warmup = 1;          // unmeasured runs before them
  unsigned threads = 1;    // {threads} and Context::threads
  unsigned timeout_s = 0;  // per run; 0: none
  std::string tmp_root;    // parent of the harness's temporary directory
};

// Runs every entry on every input (inputs outer, entries in the given order) and returns one result per
// pair. Progress goes to stderr. Unavailable entries and failing runs become statuses, not exceptions.
std::vector<EntryResult> run_benchmarks(const HarnessOptions& options);

}  // namespace warpsearch::bench
