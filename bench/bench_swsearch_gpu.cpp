// bench_swsearch_gpu.cpp: kernel throughput of swsearch's GPU score engine (issue 9; make_gpu_engine,
// src/swsearch/engine.hpp): every query against one resident protein database, CUDASW++4.0 style.
// CUDA builds only (the entry does not exist otherwise).
//
// Entry gpu-swsearch-score: reads --input (protein FASTA, plain or gzip) and the queries, builds the
// database (optionally enlarged, below), uploads it once (set_database, reported on its own), scores one
// warm-up query, then every query; a per-query table (length, device seconds, wall seconds, GCUPS) goes to
// stderr and, with WARPSEARCH_BENCH_SW_CSV, one CSV row per query.
//
// Settings (environment):
//   WARPSEARCH_BENCH_SW_QUERIES   query FASTA (default: the first 20 sequences of --input)
//   WARPSEARCH_BENCH_SW_COPIES    database = the input plus COPIES - 1 copies of every sequence with its
//                                 residues shuffled (a fixed seed per copy): real lengths and composition,
//                                 unrelated sequences (default 1)
//   WARPSEARCH_BENCH_SW_MATRIX, _OPEN, _EXTEND   scoring (default BLOSUM62 11/1)
//   WARPSEARCH_BENCH_SW_DEVICE    CUDA device (default the first usable one)
//   WARPSEARCH_BENCH_SW_WRITE_DB  also write the database built here as FASTA to this path (for peers)
//   WARPSEARCH_BENCH_SW_VERIFY    N targets per query (spread evenly) rescored with sw::simd::pass; any
//                                 difference fails the entry (default 64)
//   WARPSEARCH_BENCH_SW_PAIRS     1: score the queries two at a time (scores2: queries 0+1, 2+3, ...; the
//                                 rows show each pair's time on its first query, 0 on the second)
// Cells = query length x database residues; GCUPS per query from the engine's device seconds (kernels) and
// from the wall time of scores() (query upload, kernels, score download, saturation rescoring). The
// harness's GCUPS is the wall-time throughput over all queries.
#ifdef WARPSEARCH_HAVE_CUDA

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env.hpp"
#include "registry.hpp"
#include "sw/model.hpp"
#include "sw/simd/pass.hpp"
#include "swsearch/engine.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::bench {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<std::vector<std::uint8_t>> read_codes(const std::string& path, std::size_t max_records,
                                                  std::vector<std::string>* names) {
  ReaderOptions options;
  options.alphabet = AlphabetKind::kProtein;
  SequenceReader reader(path, options);
  std::vector<std::vector<std::uint8_t>> out;
  Sequence seq;
  while (out.size() < max_records && reader.next(seq)) {
    out.emplace_back(seq.residues.begin(), seq.residues.end());
    if (names != nullptr) names->push_back(seq.name);
  }
  return out;
}

Work run_score(const Context& ctx) {
  std::vector<std::string> qnames;
  const std::string qpath = env_string("WARPSEARCH_BENCH_SW_QUERIES", "");
  const auto queries =
      qpath.empty() ? read_codes(ctx.input, 20, &qnames) : read_codes(qpath, SIZE_MAX, &qnames);
  const auto base = read_codes(ctx.input, SIZE_MAX, nullptr);
  const long long copies = std::max(1LL, env_integer<long long>("WARPSEARCH_BENCH_SW_COPIES", 1));
  std::vector<std::uint8_t> residues;
  std::vector<std::uint64_t> offsets{0};
  for (long long c = 0; c < copies; ++c) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(c) * 7919u + 1u);
    for (const auto& s : base) {
      const std::size_t at = residues.size();
      residues.insert(residues.end(), s.begin(), s.end());
      if (c > 0) std::shuffle(residues.begin() + static_cast<std::ptrdiff_t>(at), residues.end(), rng);
      offsets.push_back(residues.size());
    }
  }
  const swsearch::DbBatch batch{residues, offsets};
  if (const std::string dump = env_string("WARPSEARCH_BENCH_SW_WRITE_DB", ""); !dump.empty()) {
    // The enlarged database as FASTA, for running peer tools on the same sequences.
    std::ofstream out(dump);
    const std::string_view symbols = Alphabet(AlphabetKind::kProtein).symbols();
    std::string line;
    for (std::size_t k = 0; k + 1 < offsets.size(); ++k) {
      out << ">s" << k << '\n';
      line.clear();
      for (std::uint64_t i = offsets[k]; i < offsets[k + 1]; ++i) line.push_back(symbols[residues[i]]);
      out << line << '\n';
    }
    if (!out) throw Error(ErrorKind::kIo, "cannot write " + dump);
  }

  const sw::PassModel model =
      sw::PassModel::make(ScoringMatrix::builtin(env_string("WARPSEARCH_BENCH_SW_MATRIX", "BLOSUM62")),
                          GapCosts{static_cast<int>(env_integer<long long>("WARPSEARCH_BENCH_SW_OPEN", 11)),
                                   static_cast<int>(env_integer<long long>("WARPSEARCH_BENCH_SW_EXTEND", 1))},
                          sw::Mode::kLocal);
  int device = static_cast<int>(env_integer<long long>("WARPSEARCH_BENCH_SW_DEVICE", -1));
  if (device < 0) {
    const DeviceProbe probe = probe_devices();
    if (probe.devices.empty()) throw Error(ErrorKind::kGpu, "no usable GPU: " + probe.unavailable_reason);
    device = probe.devices.front().id;
  }
  const auto engine = swsearch::make_gpu_engine(model, device);
  const Clock::time_point up = Clock::now();
  engine->set_database(batch);
  const double upload_wall = seconds_since(up);
  std::vector<std::int32_t> scores(batch.size());
  engine->scores(queries.front(), scores);  // warm-up (module loading, first allocations)

  const long long verify = env_integer<long long>("WARPSEARCH_BENCH_SW_VERIFY", 64);
  sw::simd::Workspace ws;
  const std::string csv_path = env_string("WARPSEARCH_BENCH_SW_CSV", "");
  std::ofstream csv;
  if (!csv_path.empty()) {
    const bool fresh = !std::filesystem::exists(csv_path);
    csv.open(csv_path, std::ios::app);
    if (fresh) csv << "label,query,length,targets,residues,cells,device_s,wall_s,gcups,wall_gcups,rescored\n";
  }
  const std::string label = env_string("WARPSEARCH_BENCH_LABEL", engine->describe());
  std::fprintf(stderr, "%s\ndatabase: %zu sequences, %zu residues (upload %.3f s)\n",
               engine->describe().c_str(), batch.size(), residues.size(), upload_wall);
  std::fprintf(stderr, "%-28s %6s %10s %10s %9s %9s\n", "query", "length", "device_s", "wall_s", "GCUPS",
               "wall");
  Work work;
  double total_wall = 0, total_dev = 0;
  const bool pairs = env_integer<long long>("WARPSEARCH_BENCH_SW_PAIRS", 0) != 0;
  std::vector<std::int32_t> scores_b(batch.size());
  for (std::size_t qi = 0; qi < queries.size(); ++qi) {
    const auto before = engine->stats();
    const Clock::time_point t = Clock::now();
    const bool second = pairs && qi % 2 == 1;
    if (second)
      scores.swap(scores_b);  // scored with the previous query
    else if (pairs && qi + 1 < queries.size())
      engine->scores2(queries[qi], queries[qi + 1], scores, scores_b);
    else
      engine->scores(queries[qi], scores);
    const double wall = seconds_since(t);
    const auto after = engine->stats();
    const double dev = after.kernel_seconds - before.kernel_seconds;
    const std::size_t qcells = pairs && !second && qi + 1 < queries.size()
                                   ? queries[qi].size() + queries[qi + 1].size()
                                   : (second ? 0 : queries[qi].size());
    const double cells = static_cast<double>(qcells) * static_cast<double>(residues.size());
    total_wall += wall;
    total_dev += dev;
    work.cells += static_cast<std::uint64_t>(cells);
    std::fprintf(stderr, "%-28.28s %6zu %10.4f %10.4f %9.1f %9.1f\n", qnames[qi].c_str(), queries[qi].size(),
                 dev, wall, dev > 0 ? cells / dev * 1e-9 : 0.0, wall > 0 ? cells / wall * 1e-9 : 0.0);
    if (csv.is_open())
      csv << fmt::format("{},{},{},{},{},{:.0f},{:.6f},{:.6f},{:.1f},{:.1f},{}\n", label, qnames[qi],
                         queries[qi].size(), batch.size(), residues.size(), cells, dev, wall,
                         dev > 0 ? cells / dev * 1e-9 : 0.0, wall > 0 ? cells / wall * 1e-9 : 0.0,
                         after.overflow_rescored - before.overflow_rescored);
    for (long long v = 0; v < verify && batch.size() > 0; ++v) {
      const std::size_t k = static_cast<std::size_t>(v) * batch.size() / static_cast<std::size_t>(verify);
      const auto target = batch.sequence(k);
      const int want = target.empty() ? 0 : sw::simd::pass(model, queries[qi], target, ws).score;
      if (scores[k] != want)
        throw Error(ErrorKind::kInternal, fmt::format("query {} vs target {}: GPU score {} != CPU {}",
                                                      qnames[qi], k, scores[k], want));
    }
  }
  std::fprintf(stderr, "total: %.3e cells, device %.3f s = %.3f TCUPS, wall %.3f s = %.3f TCUPS\n",
               static_cast<double>(work.cells), total_dev,
               static_cast<double>(work.cells) / total_dev * 1e-12, total_wall,
               static_cast<double>(work.cells) / total_wall * 1e-12);
  work.residues = residues.size() * queries.size();
  work.records = batch.size();
  work.timed_s = total_wall;
  return work;
}

std::string unavailable() {
  if (!gpu_support_compiled()) return "built without CUDA";
  if (!std::filesystem::exists("/dev/nvidiactl")) return "no NVIDIA driver device files";
  return "";
}

const Registration kScoreEntry{Entry{
    .name = "gpu-swsearch-score",
    .description = "swsearch GPU score engine: every query vs the resident database (CUDASW++4.0 class)",
    .headline = Headline::kCells,
    .body = InternalRun{run_score},
    .unavailable = unavailable,
}};

}  // namespace
}  // namespace warpsearch::bench

#endif  // WARPSEARCH_HAVE_CUDA
