// scan.hpp: one long query against chromosome-sized target sequences: the K best distinct local
// alignments (affine gaps, exact Smith-Waterman), with traceback, on CPU threads or one or more GPUs
// (SSCA#1 kernels 1 and 2, Khajeh-Saeed & Perot). docs/SCAN.md defines "distinct" and every rule.
//
//   scan::Config   options with documented defaults (SSCA#1 DNA scoring: match 5, mismatch -3, a gap
//                  of length k costs 8 + k)
//   scan::Hit      one reported alignment, 0-based half-open coordinates on the query and the forward
//                  target strand, CIGAR in forward-target orientation (as SAM)
//   scan::Scanner  scans queries against a target file (FASTA/FASTQ, plain or gzip; streamed one
//                  target sequence at a time)
//
// Results never depend on the device, the number of GPUs or threads, or on the section layout.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::dist {
class Comm;  // warpsearch/dist.hpp
}  // namespace warpsearch::dist

namespace warpsearch::scan {

enum class StrandMode : std::uint8_t { kBoth, kPlus, kMinus };
std::optional<StrandMode> parse_strand_mode(std::string_view text);  // "both" | "plus" | "minus"

struct Config {
  ScoringMatrix matrix = ScoringMatrix::dna(5, -3);  // protein: e.g. ScoringMatrix::builtin("BLOSUM62")
  GapCosts gaps{8, 1};                               // a gap of length k costs open + k * extend
  std::size_t top = 200;                             // K: alignments reported per query
  std::int32_t min_score = 1;                        // alignments scoring below are not reported
  StrandMode strands = StrandMode::kBoth;            // nucleotide only; protein scans are plus only
  bool soft_mask = false;  // lowercase target/query residues score like N (X for protein)
  bool traceback = true;   // compute CIGARs and identity (kernel 2)
  DeviceMode device = DeviceMode::kAuto;
  std::string gpus;      // "0,2"; empty: all visible
  unsigned threads = 0;  // CPU threads (CPU engine, traceback); 0: all the CPUs this process may use
  // Pass-1 overlap between sections (columns); 0 picks it automatically. Any value gives the same
  // results: sections whose start state did not converge are recomputed (docs/SCAN.md).
  std::int64_t overlap = 0;
  // Candidate pool capacity (per query); 0: max(64 * top, 65536). Too small a pool is detected and the
  // scan is repeated with a larger one, so this only tunes memory and time.
  std::size_t pool = 0;
  // Under MPI (docs/SCAN.md "Under MPI"): the ranks that scan every target together, each computing its
  // share of the target's sections on its own GPUs or CPU threads (null, or one process: this process
  // alone). Scanner::scan is then collective: every rank calls it with the same query and target path
  // and gets the same QueryResult. Not stdin. The communicator must outlive the Scanner.
  const dist::Comm* comm = nullptr;
  void validate() const;  // Error(kUsage) on bad values or matrix/alphabet mismatches
};

struct Hit {
  std::uint32_t target_index = 0;  // target sequence in file order
  std::string target_name;
  std::uint64_t target_length = 0;
  bool minus = false;  // reverse-complement strand
  std::int32_t score = 0;
  // 0-based half-open: query [query_begin, query_end) aligns to forward-strand target
  // [target_begin, target_end) (on the minus strand, to its reverse complement).
  std::uint64_t query_begin = 0, query_end = 0;
  std::uint64_t target_begin = 0, target_end = 0;
  std::string cigar;  // forward-target orientation, '=' 'X' 'I' 'D' (empty without traceback)
  std::uint32_t matches = 0, mismatches = 0, gap_opens = 0, gap_columns = 0, length = 0;
  std::optional<double> evalue;  // when Karlin-Altschul statistics exist for the scoring
  std::optional<double> bits;
};

struct ScanStats {
  std::uint64_t target_sequences = 0;
  std::uint64_t target_residues = 0;
  std::uint64_t empty_targets = 0;   // zero-length records: listed in QueryResult::targets, not scanned
  std::uint64_t cells = 0;           // query length x target residues x strands (useful cells)
  std::uint64_t computed_cells = 0;  // including overlaps and fixups
  std::size_t sections = 0, fixups = 0, rescans = 0;
  double kernel1_seconds = 0;  // DP over the targets (all strands)
  double kernel2_seconds = 0;  // tracebacks
  double total_seconds = 0;
};

struct QueryResult {
  std::string query_name;
  std::uint64_t query_length = 0;
  std::vector<Hit> hits;  // ranked: score descending, then target order, strand, end
  // Every target sequence scanned (name, length), in file order (SAM @SQ lines).
  std::vector<std::pair<std::string, std::uint64_t>> targets;
  ScanStats stats;
};

class Scanner {
 public:
  explicit Scanner(Config config);  // validates, selects devices (Error(kGpu) for --device gpu without one)
  ~Scanner();
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;

  // Scans one query (digital codes in the config's alphabet) against every sequence of target_path.
  // Collective under Config::comm (every rank calls it with the same arguments).
  QueryResult scan(const Sequence& query, const std::string& target_path);
  // Throws, before any work, the Error(kInput) scan() throws about the query itself (empty, longer than
  // the scan's limit, codes outside the alphabet).
  void check_query(const Sequence& query) const;
  const Config& config() const;
  std::string describe() const;  // e.g. "2 GPUs (NVIDIA H100 80GB HBM3 x2)" or "CPU, 16 threads"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warpsearch::scan
