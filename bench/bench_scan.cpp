// bench_scan.cpp: `warpsearch scan` benchmarks (issue 8, SSCA#1 kernels 1 and 2): one long query against
// the --input target file (FASTA/FASTQ, plain or gzip, one or more sequences).
//
//   gpu-scan-kernel1   kernel 1 alone on the GPUs (CUDA builds only): scan_sections() with one
//                      make_gpu_runner() per selected device, over every target sequence and strand,
//                      per-origin candidates included (sections.hpp)
//   cpu-scan-kernel1   the same with make_cpu_runner(--threads)
//   scan               the public scan::Scanner end to end: kernel 1, candidate selection and kernel 2
//                      (tracebacks of the top hits), reading the target file included
//   parasail-sw-scan   peer: parasail_sw_striped_32 (score only, runtime-dispatched SIMD, one thread
//                      whatever --threads says) of the query, and on DNA its reverse complement, against
//                      every target sequence: what a CPU SIMD Smith-Waterman needs for the same cells
//
// The query: the first record of $WARPSEARCH_BENCH_SCAN_QUERY (FASTA/FASTQ); without it the entries are
// unavailable. Its alphabet is guessed (the target is read with it). Scoring: DNA match 5, mismatch -3,
// gaps 8 + k (SSCA#1); protein BLOSUM62 11/1 (plus strand only). Other settings (environment):
//   WARPSEARCH_BENCH_SCAN_STRANDS    both | plus | minus   (DNA; default both)
//   WARPSEARCH_BENCH_SCAN_TOP        K of the scan entry (default 200)
//   WARPSEARCH_BENCH_SCAN_TRACEBACK  0: the scan entry without kernel 2 (default 1)
//   WARPSEARCH_BENCH_SCAN_DEVICE     auto | cpu | gpu for the scan entry (default auto)
//   WARPSEARCH_BENCH_SCAN_GPUS       GPU ids ("0,1"; default: all visible) for scan and gpu-scan-kernel1
//   WARPSEARCH_BENCH_SCAN_OVERLAP    section overlap in columns (default 0: automatic)
//
// Work of every entry: cells = query length x target residues x strands (the useful cells, so GCUPS
// compare across entries and with the peer; overlap and fixup cells are extra work, reported on stderr),
// residues = target residues, records = target sequences, bytes = input size, length = query length.
// Timed region (Work::timed_s): kernel-1 entries: the scan_sections() calls only; reading the query and
// the targets, creating the runners (CUDA context, query upload) and one warm-up section scan (the first
// <= 1 Mbp of the first target, which loads the CUDA modules) are outside. scan: the Scanner::scan() call
// (it streams the target file itself); constructing the Scanner (device probe) is outside. parasail: the
// alignments; reading and converting to letters is outside. Each entry prints its own details to stderr
// (sections, fixups, computed cells, kernel 1/2 seconds, best score per strand: the scan entries' best
// scores must equal the peer's on the same input).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "env.hpp"
#include "registry.hpp"
#include "scan/model.hpp"
#include "scan/sections.hpp"
#include "scan/strand.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scan.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

#ifdef WARPSEARCH_HAVE_CUDA
#include "scan/gpu_runner.hpp"
#endif
#ifdef WARPSEARCH_HAVE_PARASAIL
#include <parasail.h>
#endif

namespace warpsearch::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Codes = std::vector<std::uint8_t>;

// Per (sequence, strand) candidate limit of the kernel-1 entries: the Scanner's default pool size.
constexpr std::size_t kCandidateLimit = 65536;
// Columns of the untimed warm-up scan.
constexpr std::size_t kWarmupColumns = 1 << 20;

std::string query_path() { return env_string("WARPSEARCH_BENCH_SCAN_QUERY"); }

std::string query_unavailable() {
  const std::string path = query_path();
  if (path.empty()) return "set WARPSEARCH_BENCH_SCAN_QUERY to the query FASTA";
  if (!std::filesystem::exists(path)) return "query file " + path + " not found";
  return "";
}

// The query, its scoring and the strands searched (scan::Config's conventions).
struct Setting {
  Sequence query;
  scan::Config config;
  std::vector<scan::Strand> strands;
};

Setting load_setting() {
  Setting s;
  SequenceReader reader(query_path());
  if (!reader.next(s.query)) throw Error(ErrorKind::kInput, "no sequence in " + query_path());
  const AlphabetKind kind = reader.alphabet().kind();
  if (kind == AlphabetKind::kProtein) {
    s.config.matrix = ScoringMatrix::builtin("BLOSUM62");
    s.config.gaps = {11, 1};
    s.config.strands = scan::StrandMode::kPlus;
  } else {
    s.config.matrix = ScoringMatrix::dna(5, -3, kind);
    s.config.gaps = {8, 1};
    const std::string strands = env_string("WARPSEARCH_BENCH_SCAN_STRANDS", "both");
    const std::optional<scan::StrandMode> mode = scan::parse_strand_mode(strands);
    if (!mode) throw Error(ErrorKind::kUsage, "WARPSEARCH_BENCH_SCAN_STRANDS: expected both, plus or minus");
    s.config.strands = *mode;
  }
  if (s.config.strands != scan::StrandMode::kMinus) s.strands.push_back(scan::Strand::kPlus);
  if (s.config.strands != scan::StrandMode::kPlus) s.strands.push_back(scan::Strand::kMinus);
  s.config.top = env_count("WARPSEARCH_BENCH_SCAN_TOP", 200);
  s.config.traceback = env_string("WARPSEARCH_BENCH_SCAN_TRACEBACK", "1") != "0";
  const std::optional<DeviceMode> device =
      parse_device_mode(env_string("WARPSEARCH_BENCH_SCAN_DEVICE", "auto"));
  if (!device) throw Error(ErrorKind::kUsage, "WARPSEARCH_BENCH_SCAN_DEVICE: expected auto, cpu or gpu");
  s.config.device = *device;
  s.config.gpus = env_string("WARPSEARCH_BENCH_SCAN_GPUS");
  s.config.overlap = env_integer<long long>("WARPSEARCH_BENCH_SCAN_OVERLAP", 0);
  return s;
}

// The query residues scanned for a strand (minus: reverse complement, model.hpp).
Codes strand_query(const Setting& s, scan::Strand strand) {
  if (strand == scan::Strand::kPlus) return s.query.residues;
  return scan::reverse_complement(s.query.residues);
}

std::vector<Sequence> read_targets(const std::string& path, AlphabetKind kind) {
  SequenceReader reader(path, ReaderOptions{.alphabet = kind, .allow_empty_sequences = true});
  std::vector<Sequence> targets;
  Sequence seq;
  while (reader.next(seq)) targets.push_back(std::move(seq));
  return targets;
}

Work base_work(const Context& ctx, const Setting& s, const std::vector<Sequence>& targets) {
  Work work;
  work.bytes = ctx.input_bytes;
  work.records = targets.size();
  for (const Sequence& t : targets) work.residues += t.length();
  work.cells = s.query.length() * work.residues * s.strands.size();
  work.length = s.query.length();
  return work;
}

const char* strand_name(scan::Strand strand) { return strand == scan::Strand::kPlus ? "plus" : "minus"; }

// --- kernel 1 alone ------------------------------------------------------------------------------

using RunnerFactory = std::unique_ptr<scan::SectionRunner> (*)(const scan::ScanModel&,
                                                               std::span<const std::uint8_t>, const Context&,
                                                               int device);

std::unique_ptr<scan::SectionRunner> cpu_runner(const scan::ScanModel& model,
                                                std::span<const std::uint8_t> query, const Context& ctx,
                                                int) {
  return scan::make_cpu_runner(model, query, ctx.threads);
}

Work kernel1(const Context& ctx, RunnerFactory factory, const std::vector<int>& devices) {
  const Setting s = load_setting();
  const std::vector<Sequence> targets = read_targets(ctx.input, s.config.matrix.alphabet());
  const scan::ScanModel model = scan::ScanModel::make(s.config.matrix, s.config.gaps);
  const std::int64_t m = static_cast<std::int64_t>(s.query.length());

  // Per strand: its query (alive as long as the runners) and one runner per device.
  struct StrandRunners {
    scan::Strand strand;
    Codes query;
    std::vector<std::unique_ptr<scan::SectionRunner>> owned;
    std::vector<scan::SectionRunner*> runners;
  };
  std::vector<StrandRunners> per_strand;
  per_strand.reserve(s.strands.size());  // the runners keep spans of the queries
  for (const scan::Strand strand : s.strands) {
    StrandRunners& r = per_strand.emplace_back(StrandRunners{strand, strand_query(s, strand), {}, {}});
    for (const int device : devices) {
      r.owned.push_back(factory(model, r.query, ctx, device));
      r.runners.push_back(r.owned.back().get());
    }
  }
  scan::SectionPlanOptions plan;
  plan.overlap = env_integer<long long>("WARPSEARCH_BENCH_SCAN_OVERLAP", 0);
  if (!targets.empty() && !targets.front().residues.empty()) {
    const std::span<const std::uint8_t> first(targets.front().residues);
    for (StrandRunners& r : per_strand)
      scan::scan_sections(r.runners, first.first(std::min(first.size(), kWarmupColumns)), m, 0, r.strand, 1,
                          kCandidateLimit, plan);
  }

  scan::SectionStats total;
  std::vector<std::int32_t> best(per_strand.size(), 0);
  const Clock::time_point start = Clock::now();
  for (std::uint32_t t = 0; t < targets.size(); ++t) {
    if (targets[t].residues.empty()) continue;
    for (std::size_t k = 0; k < per_strand.size(); ++k) {
      scan::SectionStats stats;
      const scan::CandidateList list =
          scan::scan_sections(per_strand[k].runners, targets[t].residues, m, t, per_strand[k].strand, 1,
                              kCandidateLimit, plan, &stats);
      if (!list.items.empty()) best[k] = std::max(best[k], list.items.front().score);
      total.sections += stats.sections;
      total.fixups += stats.fixups;
      total.fixup_rounds = std::max(total.fixup_rounds, stats.fixup_rounds);
      total.cells += stats.cells;
    }
  }
  Work work = base_work(ctx, s, targets);
  work.timed_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::fprintf(stderr,
               "  %zu runner(s) per strand: %zu sections, %zu fixups (%zu rounds max), %.3f%% extra cells",
               devices.size(), total.sections, total.fixups, total.fixup_rounds,
               work.cells > 0 ? 100.0 * (static_cast<double>(total.cells) - static_cast<double>(work.cells)) /
                                    static_cast<double>(work.cells)
                              : 0.0);
  for (std::size_t k = 0; k < per_strand.size(); ++k)
    std::fprintf(stderr, "; best %s %d", strand_name(per_strand[k].strand), best[k]);
  std::fprintf(stderr, "\n");
  return work;
}

const Registration kCpuKernel1{{
    .name = "cpu-scan-kernel1",
    .description = "scan kernel 1 alone on CPU threads (section runner, candidates included), query "
                   "$WARPSEARCH_BENCH_SCAN_QUERY vs every --input sequence and strand",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return kernel1(ctx, cpu_runner, {0}); }},
    .unavailable = query_unavailable,
}};

#ifdef WARPSEARCH_HAVE_CUDA
std::unique_ptr<scan::SectionRunner> gpu_runner(const scan::ScanModel& model,
                                                std::span<const std::uint8_t> query, const Context&,
                                                int device) {
  return scan::make_gpu_runner(model, query, device);
}

std::string gpu_unavailable() {
  if (!gpu_support_compiled()) return "built without CUDA";
  // No CUDA call here: the harness forks runs, and a CUDA context must not exist before fork.
  if (!std::filesystem::exists("/dev/nvidiactl")) return "no NVIDIA driver device files";
  return query_unavailable();
}

const Registration kGpuKernel1{{
    .name = "gpu-scan-kernel1",
    .description = "scan kernel 1 alone on the GPUs ($WARPSEARCH_BENCH_SCAN_GPUS, default all), candidates "
                   "included, query $WARPSEARCH_BENCH_SCAN_QUERY vs every --input sequence and strand",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) {
      std::vector<int> ids;
      for (const DeviceInfo& d :
           select_devices(DeviceMode::kGpu, env_string("WARPSEARCH_BENCH_SCAN_GPUS")).devices)
        ids.push_back(d.id);
      return kernel1(ctx, gpu_runner, ids);
    }},
    .unavailable = gpu_unavailable,
}};
#endif

// --- the whole Scanner ---------------------------------------------------------------------------

Work scan_end_to_end(const Context& ctx) {
  Setting s = load_setting();
  s.config.threads = ctx.threads;
  scan::Scanner scanner(s.config);
  const Clock::time_point start = Clock::now();
  const scan::QueryResult r = scanner.scan(s.query, ctx.input);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  Work work;
  work.timed_s = seconds;
  work.bytes = ctx.input_bytes;
  work.records = r.stats.target_sequences;
  work.residues = r.stats.target_residues;
  work.cells = r.stats.cells;
  work.length = s.query.length();
  const scan::ScanStats& st = r.stats;
  std::fprintf(stderr,
               "  %s: kernel 1 %.3f s (%.2f GCUPS), kernel 2 %.3f s, total %.3f s; %zu sections, %zu fixups, "
               "%zu rescans, %.3f%% extra cells; %zu hits",
               scanner.describe().c_str(), st.kernel1_seconds,
               st.kernel1_seconds > 0 ? static_cast<double>(st.cells) / st.kernel1_seconds / 1e9 : 0.0,
               st.kernel2_seconds, st.total_seconds, st.sections, st.fixups, st.rescans,
               st.cells > 0
                   ? 100.0 * (static_cast<double>(st.computed_cells) - static_cast<double>(st.cells)) /
                         static_cast<double>(st.cells)
                   : 0.0,
               r.hits.size());
  for (const scan::Strand strand : s.strands) {
    const bool minus = strand == scan::Strand::kMinus;
    const auto it =
        std::find_if(r.hits.begin(), r.hits.end(), [minus](const scan::Hit& h) { return h.minus == minus; });
    std::fprintf(stderr, "; best %s %d", strand_name(strand), it == r.hits.end() ? 0 : it->score);
  }
  std::fprintf(stderr, "\n");
  return work;
}

const Registration kScan{{
    .name = "scan",
    .description =
        "scan::Scanner end to end (kernel 1, selection, kernel 2), query $WARPSEARCH_BENCH_SCAN_QUERY "
        "vs --input, device $WARPSEARCH_BENCH_SCAN_DEVICE (auto), --threads threads",
    .headline = Headline::kCells,
    .body = InternalRun{scan_end_to_end},
    .unavailable = query_unavailable,
}};

// --- the peer ------------------------------------------------------------------------------------

#ifdef WARPSEARCH_HAVE_PARASAIL
std::string letters(std::span<const std::uint8_t> codes, AlphabetKind kind) {
  const Alphabet a(kind);
  std::string s(codes.size(), ' ');
  for (std::size_t i = 0; i < codes.size(); ++i) s[i] = a.symbol(codes[i]);
  return s;
}

Work parasail_scan(const Context& ctx) {
  const Setting s = load_setting();
  const ScoringMatrix& m = s.config.matrix;
  const std::vector<Sequence> targets = read_targets(ctx.input, m.alphabet());
  // A copy of our table (ambiguity codes score as ours).
  const std::string symbols(Alphabet(m.alphabet()).symbols());
  parasail_matrix_t* matrix = parasail_matrix_create(symbols.c_str(), 0, 0);
  for (int a = 0; a < m.size(); ++a)
    for (int b = 0; b < m.size(); ++b)
      parasail_matrix_set_value(matrix, a, b,
                                m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
  std::vector<std::string> queries;
  for (const scan::Strand strand : s.strands)
    queries.push_back(letters(strand_query(s, strand), m.alphabet()));
  std::vector<std::string> target_letters;
  for (const Sequence& t : targets) target_letters.push_back(letters(t.residues, m.alphabet()));
  const int open = s.config.gaps.open + s.config.gaps.extend;  // parasail's open: a length-1 gap

  std::vector<int> best(queries.size(), 0);
  const Clock::time_point start = Clock::now();
  for (const std::string& t : target_letters) {
    if (t.empty()) continue;
    for (std::size_t k = 0; k < queries.size(); ++k) {
      parasail_result_t* r =
          parasail_sw_striped_32(queries[k].data(), static_cast<int>(queries[k].size()), t.data(),
                                 static_cast<int>(t.size()), open, s.config.gaps.extend, matrix);
      best[k] = std::max(best[k], parasail_result_get_score(r));
      parasail_result_free(r);
    }
  }
  Work work = base_work(ctx, s, targets);
  work.timed_s = std::chrono::duration<double>(Clock::now() - start).count();
  parasail_matrix_free(matrix);
  std::fprintf(stderr, "  parasail_sw_striped_32, 1 thread");
  for (std::size_t k = 0; k < s.strands.size(); ++k)
    std::fprintf(stderr, "; best %s %d", strand_name(s.strands[k]), best[k]);
  std::fprintf(stderr, "\n");
  return work;
}

std::string parasail_unavailable() { return query_unavailable(); }
#else
Work parasail_scan(const Context&) {
  throw Error(ErrorKind::kUsage, "warpsearch-bench was built without libparasail");
}
std::string parasail_unavailable() { return "built without libparasail (Debian: libparasail-dev)"; }
#endif

const Registration kParasail{{
    .name = "parasail-sw-scan",
    .description =
        "peer: parasail_sw_striped_32 (1 thread) of the scan query (and its reverse complement) vs "
        "every --input sequence",
    .headline = Headline::kCells,
    .body = InternalRun{parasail_scan},
    .unavailable = parasail_unavailable,
}};

}  // namespace
}  // namespace warpsearch::bench
