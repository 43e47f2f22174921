// runner.hpp: runs one setup, internal run or peer command in its own child process and measures it.
//
// Internal functions run in a fork()ed child that times the work itself and sends the result back over a
// pipe; peers are fork()/execv()ed with no shell. Either way the harness reaps the child with wait4(),
// whose ru_maxrss is that one run's peak resident set (it includes the few MiB the harness itself had
// mapped when it forked). A crash, non-zero exit or timeout becomes RunRecord::error, never a harness
// failure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "registry.hpp"

namespace warpsearch::bench {

struct RunRecord {
  std::string error;               // empty when the run succeeded
  double work_s = 0;               // wall time around the work, measured in the child (peers: child_s)
  double child_s = 0;              // wall time from fork to reaping the child
  std::uint64_t peak_rss_kib = 0;  // wait4 ru_maxrss of the child
  Work work;

  bool ok() const { return error.empty(); }
};

// timeout_s > 0 kills the child (SIGALRM) after that many seconds.
RunRecord run_internal(const std::function<Work(const Context&)>& fn, const Context& ctx, unsigned timeout_s);
RunRecord run_external(const ExternalRun& peer, const Context& ctx, unsigned timeout_s);

// The peer's argv with {input}, {threads}, {tmp} and {scratch} replaced and argv[0] resolved to a path.
std::vector<std::string> peer_command(const ExternalRun& peer, const Context& ctx);

}  // namespace warpsearch::bench
