// align.hpp: batched one-to-one pairwise alignment (Smith-Waterman / Needleman-Wunsch / semi-global),
// on CPU threads (striped SIMD) or on one or more GPUs, with an asynchronous batch API.
//
//   align::Config   one options struct with documented defaults (scoring, gaps, mode, outputs, devices)
//   align::Batch    pairs of digitally encoded sequences, owned by the batch
//   align::Result   score, 0-based half-open coordinates, optional CIGAR and identity counts
//   align::Aligner  configure once, submit batches, get results through a future or a callback
//
// Usage (as a library, like ADEPT's driver):
//   align::Config cfg;                       // BLOSUM62, gap open 11 extend 1, local, auto device
//   cfg.traceback = true;
//   align::Aligner aligner(cfg);
//   align::Batch batch;
//   batch.add_text("HEAGAWGHEE", "PAWHEAE");   // or add(codes, codes)
//   std::future<std::vector<align::Result>> f = aligner.submit(std::move(batch));
//   for (const align::Result& r : f.get()) ...
//
// Results are in the order of the pairs in the batch and do not depend on the device, the number of
// GPUs or threads, or how work was split. Scores are exact: 16-bit arithmetic is used only for pairs
// whose every DP value provably fits; other pairs run in 32-bit lanes. Pairs whose values could
// exceed 32 bits are rejected with Error(kInput), never truncated.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::align {

// local: Smith-Waterman (Gotoh). global: Needleman-Wunsch, end gaps cost like any gap.
// semiglobal: the whole query aligned inside the target (target ends free; parasail's sg_db_de).
enum class Mode : std::uint8_t { kLocal = 0, kGlobal = 1, kSemiGlobal = 2 };
std::optional<Mode> parse_mode(std::string_view text);  // "local" | "global" | "semiglobal"
std::string_view mode_name(Mode mode);

struct Config {
  // Substitution scores. Protein default BLOSUM62; for DNA use ScoringMatrix::dna(match, mismatch).
  ScoringMatrix matrix = ScoringMatrix::builtin("BLOSUM62");
  // A gap of length k costs open + k * extend (BLAST+/ssearch36 convention; parasail's open is our
  // open + extend). open + extend must be >= 1.
  GapCosts gaps{11, 1};
  Mode mode = Mode::kLocal;
  // Also compute the alignment itself: CIGAR (=, X, I, D), matches and alignment length.
  bool traceback = false;
  DeviceMode device = DeviceMode::kAuto;  // auto: all selected GPUs if any, else CPU threads
  std::string gpus;                       // "0,2" selects devices; empty: every visible GPU
  // CPU threads (SIMD path and traceback); 0 = all the CPUs this process may use.
  unsigned threads = 0;
  // Upper bound on pairs per GPU launch; 0 sizes batches from free device memory.
  std::size_t max_pairs_per_launch = 0;

  void validate() const;  // Error(kUsage) on bad gaps or a matrix/alphabet mismatch
};

// Pairs of digital sequences (codes of Config::matrix's alphabet, see alphabet.hpp).
class Batch {
 public:
  void add(std::span<const std::uint8_t> query, std::span<const std::uint8_t> target);
  // Encodes letters with the alphabet (case-insensitive, foreign letters become X/N); convenience for
  // tests and examples.
  void add_text(std::string_view query, std::string_view target, AlphabetKind kind = AlphabetKind::kProtein);
  void reserve(std::size_t pairs, std::size_t residues);

  std::size_t size() const { return qoff_.size() - 1; }
  bool empty() const { return size() == 0; }
  std::span<const std::uint8_t> query(std::size_t i) const {
    return {residues_.data() + qoff_[i], static_cast<std::size_t>(qoff_[i + 1] - qoff_[i] - tlen_[i])};
  }
  std::span<const std::uint8_t> target(std::size_t i) const {
    return {residues_.data() + qoff_[i + 1] - tlen_[i], static_cast<std::size_t>(tlen_[i])};
  }
  std::uint64_t cells() const { return cells_; }  // sum over pairs of query length * target length

 private:
  std::vector<std::uint8_t> residues_;  // query i then target i, for every pair
  std::vector<std::uint64_t> qoff_{0};  // start of pair i in residues_ (size()+1 entries)
  std::vector<std::uint64_t> tlen_;     // target length of pair i
  std::uint64_t cells_ = 0;
};

// One alignment. Coordinates are 0-based half-open: query residues [query_begin, query_end) align to
// target residues [target_begin, target_end). An empty alignment (local mode, score 0) has all four
// equal to 0 and an empty CIGAR. Which optimal alignment is reported: the end is the first maximal
// cell in column-major order (smallest target end, then smallest query end); the start is the largest
// target start, then largest query start, of an optimal alignment ending there (docs/ALIGN.md). In
// semiglobal mode, when nothing beats leaving the whole query as insertions (score -(open + m*extend)),
// that alignment is reported: target_begin == target_end == 0, CIGAR "<m>I".
struct Result {
  std::int32_t score = 0;
  std::uint32_t query_begin = 0, query_end = 0;
  std::uint32_t target_begin = 0, target_end = 0;
  // Filled only with Config::traceback:
  std::string cigar;          // run-length ops: '=' match, 'X' mismatch, 'I' query residue vs gap,
                              // 'D' target residue vs gap (SAM, query = read, target = reference)
  std::uint32_t matches = 0;  // '=' columns
  std::uint32_t length = 0;   // alignment columns (=, X, I and D)

  bool empty() const { return query_end == query_begin && target_end == target_begin; }
  friend bool operator==(const Result&, const Result&) = default;
};

class Aligner {
 public:
  using Callback = std::function<void(std::vector<Result>&& results, std::exception_ptr error)>;

  // Validates the configuration, selects the devices (Error(kGpu) if device == kGpu and none is
  // usable) and starts the workers.
  explicit Aligner(Config config);
  ~Aligner();  // finishes every submitted batch first
  Aligner(const Aligner&) = delete;
  Aligner& operator=(const Aligner&) = delete;

  // Queues a batch; batches run in submission order. Errors (e.g. a pair too long for 32-bit
  // scores) arrive through the future / the callback's error argument.
  std::future<std::vector<Result>> submit(Batch batch);
  void submit(Batch batch, Callback done);
  // Synchronous convenience: submit and wait.
  std::vector<Result> align(Batch batch);

  const Config& config() const;
  bool uses_gpu() const;
  std::string describe() const;  // e.g. "2 GPUs (NVIDIA H100 80GB HBM3 x2)" or "CPU, 16 threads, AVX2"

  // Where the time went, totals since construction (for --timing and benchmarks).
  struct Stats {
    std::uint64_t batches = 0;
    std::uint64_t forward_cells = 0;  // query length x target length over the pairs
    std::uint64_t reverse_cells = 0;  // cells of the start-finding passes' extents (query x target prefix)
    double pass_s = 0;                // wall seconds of the pass stage's work (GPU engine calls / CPU passes)
    double finish_s = 0;              // wall seconds of the finish stage (results, traceback)
    // GPU engines, summed over the GPUs (gpu_engine.hpp PassEngine::Stats)
    double gpu_kernel_s = 0, gpu_transfer_s = 0;
    double gpu_run_s = 0;  // wall seconds inside the engines' calls (the rest of pass_s: building jobs)
    double host_window_s = 0, host_window_wait_s = 0;  // classify + sort (helper threads), waits for it
    double host_plan_s = 0, host_pack_s = 0, host_wait_s = 0;
    std::uint64_t launches = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warpsearch::align
