// registry.hpp: the named benchmark entries of warpsearch-bench and how a bench_<family>.cpp adds one.
//
// An entry is either an internal function (run in a forked child so each run's peak RSS is its own and a
// crash cannot take the harness down) or an external peer command (fork/exec, no shell). Both may name a
// Setup that prepares files once per input (e.g. a gzip copy); the harness runs each distinct setup once
// per input, untimed, and the entries read its products from Context::tmp.
//
// Adding an entry is one static object in a bench_<family>.cpp file:
//
//   const warpsearch::bench::Registration kMyEntry{{
//       .name = "sw-cpu-striped16",
//       .description = "striped 16-bit Smith-Waterman, every query vs every target",
//       .headline = warpsearch::bench::Headline::kCells,
//       .body = warpsearch::bench::InternalRun{[](const warpsearch::bench::Context& ctx) { ... }},
//   }};
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace warpsearch::bench {

// What one run processed; the harness turns these into MB/s, Mres/s and GCUPS. Zero means "not known".
struct Work {
  std::uint64_t bytes = 0;     // input bytes (uncompressed FASTA bytes for compressed inputs)
  std::uint64_t residues = 0;  // residues read or searched
  std::uint64_t records = 0;   // sequence records
  std::uint64_t cells = 0;     // dynamic-programming cells computed (GCUPS)
  std::uint64_t length = 0;    // x axis of throughput-vs-length charts (e.g. query length); 0: none
  // Seconds of the region the entry timed itself (e.g. leaving out GPU context creation, which is paid
  // once per process, not per search); 0: the harness's time of the whole call is used.
  double timed_s = 0;
};

// Everything a setup, run or peer command sees. Peer argv elements may use the placeholders {input},
// {threads}, {tmp} and {scratch}, which are replaced by these fields.
struct Context {
  std::string input;              // the --input file as given
  std::uint64_t input_bytes = 0;  // its size in bytes
  std::string tmp;                // per-input directory with setup products; shared by entries and runs
  std::string scratch;            // empty directory for one run's outputs; removed after the run
  unsigned threads = 1;           // --threads
};

// Preparation shared by entries: runs once per input (identified by name), before any entry needing it.
struct Setup {
  std::string name;
  std::function<void(const Context&)> fn;  // writes its products under ctx.tmp; throws on failure
};

// An internal benchmark: the timed work, run in a forked child. Throws warpsearch::Error on failure.
struct InternalRun {
  std::function<Work(const Context&)> fn;
};

// An external peer: argv[0] is a program name looked up by find_program, the rest are arguments.
struct ExternalRun {
  std::vector<std::string> argv;
  bool capture_stdout = false;  // false: stdout goes to /dev/null
  // The work one run did, from the captured stdout (empty unless capture_stdout). Null: Work{}.
  std::function<Work(const Context&, const std::string& out)> work = {};
};

// The throughput an entry is judged by (the others are still reported when known).
enum class Headline : std::uint8_t { kBytes, kResidues, kCells };

struct Entry {
  std::string name;         // "read-fasta", "peer:esl-seqstat", "gpu-sw", ...
  std::string description;  // one line for `warpsearch-bench list`
  Headline headline = Headline::kBytes;
  std::optional<Setup> setup = {};
  std::variant<InternalRun, ExternalRun> body;
  // Why the entry cannot run on this machine ("" when it can), e.g. "no CUDA device". Optional; a peer's
  // program being absent is detected without it.
  std::function<std::string()> unavailable = {};
};

// Adds an entry to the registry at static-initialization time. Duplicate names abort at startup.
class Registration {
 public:
  explicit Registration(Entry entry);
};

// All registered entries, sorted by name.
std::vector<const Entry*> entries();

// The entry with this name, or nullptr.
const Entry* find_entry(const std::string& name);

bool is_peer(const Entry& entry);

// Why the entry cannot run here ("" when it can): its own check, or its peer program not being found.
std::string unavailable_reason(const Entry& entry);

// Full path of an executable: names with '/' are checked as given; bare names are looked up in
// $WARPSEARCH_TESTDATA/bin (default: the build's test data directory), then in $PATH.
std::optional<std::string> find_program(const std::string& name);

const char* to_string(Headline headline);  // "MB/s", "Mres/s", "GCUPS"

}  // namespace warpsearch::bench
