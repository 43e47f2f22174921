// cmd_swsearch.cpp: `warpsearch swsearch --query Q --db DB`: exhaustive Smith-Waterman database search
// (library: include/warpsearch/swsearch.hpp; outputs: src/swsearch/output.hpp; user documentation:
// docs/SWSEARCH.md).
//
// Data flow: the option checks that need no data come first (scoring system and its statistics, --outfmt,
// thresholds, devices), then the output is opened (an unwritable path fails before any work), then
// swsearch::search() reads the queries, streams the database through the score engines and calls back once
// per query, in query order, after the whole database has been scored; each query's text is written as it
// arrives. The output is an OutputFile committed at the end, so a failed run leaves no partial file behind
// (stdout is written directly, from the first query's results on, so an input error prints nothing). Engines:
// the global --device / --gpus choose the GPUs (auto: the usable GPUs, else the CPU threads of the global
// --threads); results are the same on any engine.
//
// Scoring: protein by default (BLOSUM62, gap costs 11/1; another --matrix gets its BLAST+ default gap costs);
// --dna scores nucleotides +match/-mismatch with ssearch36 -n's defaults (+5/-4, gaps 12/4). A gap of length
// k costs open + k * extend (ssearch36's -f/-g and BLAST+'s convention).
//
// Under MPI (docs/MPI.md) every rank runs this function: the option checks are agreed by all ranks, the
// database (or, with --mpi-split queries, the query set) is split among them by swsearch::search(), and
// rank 0 alone opens and writes the output.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "swsearch/output.hpp"
#include "swsearch/stats.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/output_file.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/swsearch.hpp"

namespace warpsearch::cli {
namespace {

// ssearch36 -n's nucleotide defaults: +5/-4, a gap of length k costs 12 + 4k.
constexpr int kDnaMatch = 5;
constexpr int kDnaMismatch = -4;
constexpr GapCosts kDnaGaps{12, 4};

struct SwsearchCliOptions {
  std::string query;
  std::string db;
  std::string out = "-";
  std::string outfmt = "0";
  std::string matrix = "BLOSUM62";
  int gapopen = 0;
  int gapextend = 0;
  bool dna = false;
  int match = kDnaMatch;
  int mismatch = kDnaMismatch;
  std::size_t top = 50;
  double evalue = 10.0;
  bool noalign = false;
  std::uint64_t Z = 0;
  std::uint64_t batch_residues = 0;
  bool timing = false;
  // Set when the option was given (CLI11 counts), to tell defaults from explicit values.
  const CLI::Option* matrix_opt = nullptr;
  const CLI::Option* gapopen_opt = nullptr;
  const CLI::Option* gapextend_opt = nullptr;
  const CLI::Option* match_opt = nullptr;
  const CLI::Option* mismatch_opt = nullptr;
  const CLI::Option* z_opt = nullptr;
};

// The scoring system of --matrix / --dna / --match / --mismatch. Throws Error(kUsage).
ScoringMatrix choose_matrix(const SwsearchCliOptions& o) {
  const bool matrix_given = o.matrix_opt->count() > 0;
  const bool match_given = o.match_opt->count() > 0 || o.mismatch_opt->count() > 0;
  if (match_given && !o.dna)
    throw Error(ErrorKind::kUsage, "--match/--mismatch score nucleotides: add --dna (protein uses --matrix)");
  if (o.dna && matrix_given && match_given)
    throw Error(ErrorKind::kUsage, "give either --matrix (a nucleotide matrix file) or --match/--mismatch");
  if (o.dna && !matrix_given) return ScoringMatrix::dna(o.match, o.mismatch);
  // A bare name (no '/') that is neither built in nor a file is a mistyped matrix name (usage); a path
  // that does not exist is left to ScoringMatrix::load, an I/O error naming the file (as in align).
  if (!ScoringMatrix::is_builtin(o.matrix) && o.matrix.find('/') == std::string::npos &&
      !std::filesystem::exists(o.matrix)) {
    throw Error(ErrorKind::kUsage, fmt::format("--matrix {}: not a built-in matrix ({}) nor a matrix file",
                                               o.matrix, fmt::join(ScoringMatrix::builtin_names(), ", ")));
  }
  ScoringMatrix matrix = ScoringMatrix::load(o.matrix);
  if (o.dna && matrix.alphabet() == AlphabetKind::kProtein)
    throw Error(ErrorKind::kUsage,
                fmt::format("--matrix {} is a protein matrix, but --dna was given", o.matrix));
  return matrix;
}

void run_swsearch(const SwsearchCliOptions& o, const GlobalOptions& global) {
  const auto start = std::chrono::steady_clock::now();
  const dist::Comm one_process;
  const dist::Comm& comm = global.comm != nullptr ? *global.comm : one_process;
  // Under MPI every rank checks the options (they agree that they are fine) and searches; rank 0 alone
  // creates and writes the output.
  swsearch::Options options;
  std::optional<swsearch::OutputWriter> writer;
  std::optional<OutputFile> out;
  dist::agree(comm, [&] {
    options.matrix = choose_matrix(o);
    const bool nucleotide = options.matrix.alphabet() != AlphabetKind::kProtein;
    options.gaps = nucleotide ? kDnaGaps : options.matrix.default_gaps();
    if (o.gapopen_opt->count() > 0) options.gaps.open = o.gapopen;
    if (o.gapextend_opt->count() > 0) options.gaps.extend = o.gapextend;
    options.top = o.top;
    options.evalue = o.evalue;
    options.alignments = !o.noalign;
    options.threads = global.thread_request();
    options.batch_residues = o.batch_residues;
    options.timing = o.timing;
    if (o.z_opt->count() > 0) {
      if (o.Z == 0) throw Error(ErrorKind::kUsage, "-Z 0: the database size for E-values must be >= 1");
      options.Z = o.Z;
    }
    if (o.query == "-" && o.db == "-")
      throw Error(ErrorKind::kUsage, "either --query or --db may be '-' (to read stdin), but not both");
    options.validate();
    // The statistics of the scoring system: an unsupported one is refused before any work.
    const swsearch::Statistics statistics = swsearch::Statistics::make(options.matrix, options.gaps);

    swsearch::OutputSettings settings;
    settings.format = o.outfmt;
    settings.query_label = o.query;
    settings.database_label = o.db;
    settings.matrix = options.matrix;
    settings.gaps = options.gaps;
    settings.alignments = options.alignments;
    settings.top = options.top;
    settings.evalue = options.evalue;
    settings.statistics = statistics.describe();
    writer.emplace(std::move(settings));  // --outfmt errors before any work

    // The score engines on the GPUs of --device / --gpus (the results are the same either way); under MPI
    // the ranks of a node share its GPUs (resolve_devices gives this rank's share, select_local_devices).
    const DeviceSelection devices = global.resolve_devices();
    std::vector<int> ids;
    if (devices.use_gpu)
      for (const DeviceInfo& d : devices.devices) ids.push_back(d.id);
    options.gpus = ids;
    if (comm.is_root()) out.emplace(o.out);
  });
  // The header goes out with the first query's results: search() reads every input and scores the whole
  // database before its first callback, so an input error leaves stdout empty too (an -o file is
  // all-or-nothing anyway).
  bool started = false;
  std::uint64_t hits = 0;
  const swsearch::Summary summary = swsearch::search(
      o.query, o.db, options,
      [&](const swsearch::QueryResult& result) {
        if (!started) out->write(writer->header());
        started = true;
        hits += result.hits.size();
        out->write(writer->query(result));
      },
      &comm, global.split());
  if (!comm.is_root()) return;
  if (!started) out->write(writer->header());
  out->write(writer->footer(summary));
  out->commit();

  if (!global.quiet && o.out != "-") {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double gcups =
        summary.score_seconds > 0 ? static_cast<double>(summary.cells) / summary.score_seconds / 1e9 : 0.0;
    fmt::print(
        stderr,
        "swsearch: {} quer{} vs {} sequence{} ({} residues): {} hit{} in {:.2f} s (scoring {:.2f} s, {:.1f} "
        "GCUPS on {}{})\n",
        summary.queries, summary.queries == 1 ? "y" : "ies", summary.db_sequences,
        summary.db_sequences == 1 ? "" : "s", summary.db_residues, hits, hits == 1 ? "" : "s", seconds,
        summary.score_seconds, gcups, fmt::join(summary.engines, "; "),
        comm.size() > 1 ? fmt::format(", on each of {} ranks", comm.size()) : std::string());
  }
}

}  // namespace

void register_swsearch(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<SwsearchCliOptions>();
  SwsearchCliOptions& o = *opts;
  CLI::App* cmd = app.add_subcommand(
      "swsearch", "Exhaustive Smith-Waterman database search with E-values and alignments (ssearch36 class)");

  auto in = cmd->add_option_group("Input and output");
  in->add_option("--query", o.query, "Queries: FASTA or FASTQ, plain or gzip ('-' reads stdin)")->required();
  in->add_option("--db", o.db,
                 "Database: FASTA or FASTQ (plain or gzip; '-' reads stdin), a packed database (warpsearch "
                 "makedb) or a BLAST+ protein database; streamed, it need not fit in memory")
      ->required();
  in->add_option("-o,--out", o.out, "Output file ('-' is stdout); never left partial on error")
      ->capture_default_str();
  in->add_option(
        "--outfmt", o.outfmt,
        "0: readable report with alignments; 6, 7 or 10 (comma-separated): BLAST+ tabular, optionally "
        "with delim=TEXT and blastp's field names, e.g. \"6 qseqid sseqid score evalue bitscore\" (score "
        "is the raw SW score)")
      ->capture_default_str();
  in->add_flag("--noalign", o.noalign,
               "Report scores, bits and E-values only: no alignments (tabular fields that need them are "
               "refused)");

  auto rep = cmd->add_option_group("Reporting");
  rep->add_option("--top", o.top, "Hits reported per query: the best N by score (ties: database order)")
      ->capture_default_str()
      ->check(at_least(1));
  rep->add_option("-E,--evalue", o.evalue, "Report hits with E-value <= this")->capture_default_str();
  o.z_opt =
      rep->add_option("-Z", o.Z, "Database size (sequences) for E-values [default: the database's count]");

  auto sc = cmd->add_option_group("Scoring");
  o.matrix_opt =
      sc->add_option("--matrix", o.matrix,
                     "Substitution matrix: BLOSUM45/50/62/80/90, PAM30/70/250 or an NCBI-format file")
          ->capture_default_str();
  o.gapopen_opt =
      sc->add_option("--gapopen,--gap-open", o.gapopen,
                     "Gap open cost; a gap of length k costs open + k*extend [default: BLOSUM62 11, "
                     "other matrices their BLAST+ default, --dna 12]");
  o.gapextend_opt = sc->add_option("--gapextend,--gap-extend", o.gapextend,
                                   "Gap extension cost per residue [default: BLOSUM62 1, --dna 4]");
  sc->add_flag("--dna", o.dna, "Nucleotide sequences, scored +match/-mismatch (forward strands only)");
  o.match_opt = sc->add_option("--match", o.match, "--dna: score of a match")->capture_default_str();
  o.mismatch_opt = sc->add_option("--mismatch", o.mismatch, "--dna: score of a mismatch (negative)")
                       ->capture_default_str();

  auto perf = cmd->add_option_group("Performance");
  perf->add_option("--batch-residues", o.batch_residues,
                   "Most database residues scored at once (0: automatic, from host and GPU memory)")
      ->capture_default_str();
  perf->add_flag("--timing", o.timing, "Print per-batch stage times and cell rates on stderr");

  cmd->footer(
      "Every query is scored against every database sequence with exact local affine-gap (Smith-Waterman)\n"
      "scores; the best --top hits per query with E-value <= -E are reported, with alignments recomputed\n"
      "for them. E-values and bit scores follow ssearch36 (-z 3 statistics; docs/SWSEARCH.md). Results do\n"
      "not depend on --threads, the GPUs or --batch-residues. The global --device / --gpus choose the GPUs\n"
      "that score the database (auto: the usable GPUs, else the CPU threads); --threads the CPU threads.\n"
      "Examples:\n"
      "  warpsearch swsearch --query q.fa --db uniprot_sprot.fasta > report.txt\n"
      "  warpsearch swsearch --query q.fa --db db.fa --outfmt \"6 std score\" --top 100 -E 1e-5 -o hits.tsv\n"
      "  warpsearch swsearch --query q.fa --db db.fa --matrix BLOSUM50 --gapopen 10 --gapextend 2\n"
      "  warpsearch swsearch --query reads.fa --db genes.fa --dna --match 2 --mismatch -3 --outfmt 7\n"
      "  warpsearch --device gpu --gpus 0,1 swsearch --query q.fa --db nr_subset --noalign --outfmt 6");
  cmd->callback([opts, &global] { run_swsearch(*opts, global); });
}

}  // namespace warpsearch::cli
