// cmd_scan.cpp: `warpsearch scan`: the K best distinct local alignments of each long query (10^6
// residues and more) against chromosome-sized target sequences (SSCA#1 kernels 1 and 2), written as
// TSV, SAM, PAF or a readable view (library: include/warpsearch/scan.hpp; formats: src/scan/output.hpp;
// user documentation: docs/SCAN.md).
//
// Data flow: the query file streams one record at a time (one record of look-ahead, so that a target
// read from stdin, which can be scanned only once, is refused before any work when a second query
// follows); each query is scanned against the whole target file by one scan::Scanner (which streams
// the targets), and its result is formatted and written before the next query's. The output is an
// OutputFile created before the first scan (an unwritable path fails at once) and committed at the end,
// so a failed run leaves no partial file. --format view also needs the aligned target letters: the
// target file is read once more per query with hits, keeping only the aligned segments.
//
// Under MPI (docs/SCAN.md "Under MPI") every rank reads the query file itself. --mpi-split db (the
// default): every query is scanned by all ranks together (scan::Config::comm: each rank computes its share
// of every target's sections on its own GPUs, select_local_devices, or CPU threads), and rank 0 formats and
// writes it. --mpi-split queries: in rounds of R records (R ranks), record i is scanned by rank i mod R
// against the whole target file, formatted there, and the text sent to rank 0 (dist::exchange), which
// alone opens the OutputFile and writes the queries in file order. Setup and each round are collective steps
// (dist::agree / dist::exchange): an error on any rank stops every rank, rank 0 reports it once, and no
// output file is left.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "dist/bytes.hpp"
#include "scan/output.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/output_file.hpp"
#include "warpsearch/scan.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/version.hpp"

namespace warpsearch::cli {
namespace {

struct ScanOptions {
  std::string query;
  std::string target;
  std::string output = "-";
  std::string format = "tsv";
  std::size_t top = 200;
  std::string strand = "both";
  std::string alphabet = "auto";
  std::string matrix;
  int match = 5;
  int mismatch = -3;
  int gap_open = 8;
  int gap_extend = 1;
  std::int32_t min_score = 1;
  bool soft_mask = false;
  bool no_traceback = false;
  std::int64_t overlap = 0;
  std::size_t pool = 0;
  bool stats = false;
  // Set when the option was given (CLI11 counts), to tell defaults from explicit values.
  const CLI::Option* matrix_opt = nullptr;
  const CLI::Option* match_opt = nullptr;
  const CLI::Option* mismatch_opt = nullptr;
  const CLI::Option* gap_open_opt = nullptr;
  const CLI::Option* gap_extend_opt = nullptr;
  const CLI::Option* strand_opt = nullptr;
};

// The scoring system from --matrix / --match / --mismatch and the query's alphabet.
ScoringMatrix choose_matrix(const ScanOptions& o, AlphabetKind kind) {
  const bool nucleotide = Alphabet(kind).is_nucleotide();
  const bool matrix_given = o.matrix_opt->count() > 0;
  const bool match_given = o.match_opt->count() > 0 || o.mismatch_opt->count() > 0;
  if (!nucleotide && match_given) {
    throw Error(ErrorKind::kUsage,
                "--match/--mismatch score DNA, but the query is protein (use --matrix, or --alphabet dna)");
  }
  if (matrix_given && match_given)
    throw Error(ErrorKind::kUsage, "give either --matrix or --match/--mismatch");
  if (nucleotide && !matrix_given) return ScoringMatrix::dna(o.match, o.mismatch, kind);
  ScoringMatrix matrix = ScoringMatrix::load(matrix_given ? o.matrix : std::string("BLOSUM62"));
  if (Alphabet(matrix.alphabet()).is_nucleotide() != nucleotide) {
    throw Error(ErrorKind::kUsage, fmt::format("--matrix {} is a {} matrix, but the query is {}{}", o.matrix,
                                               to_string(matrix.alphabet()), to_string(kind),
                                               o.alphabet == "auto" ? " (detected; set --alphabet)" : ""));
  }
  return matrix;
}

// The letters of residues [begin, end) of seq: upper case, lower case inside soft-mask runs (as the
// input had them).
std::string segment_letters(const Sequence& seq, const Alphabet& alphabet, std::uint64_t begin,
                            std::uint64_t end) {
  std::string out;
  out.reserve(end - begin);
  auto run = std::upper_bound(seq.soft_mask.begin(), seq.soft_mask.end(), begin,
                              [](std::uint64_t pos, const MaskRun& r) { return pos < r.end; });
  for (std::uint64_t i = begin; i < end; ++i) {
    while (run != seq.soft_mask.end() && run->end <= i) ++run;
    const char c = alphabet.symbol(seq.residues[i]);
    const bool masked = run != seq.soft_mask.end() && run->begin <= i;
    out += masked && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// The aligned target letters of every hit (view format): one more pass over the target file, keeping
// only the segments [target_begin, target_end) of the hits, and stopping after the last target needed.
std::vector<std::string> aligned_target_letters(const std::string& path, const ReaderOptions& options,
                                                const Alphabet& alphabet, const scan::QueryResult& result) {
  std::vector<std::string> letters(result.hits.size());
  if (result.hits.empty()) return letters;
  std::map<std::uint32_t, std::vector<std::size_t>> by_target;  // record index -> hits
  for (std::size_t k = 0; k < result.hits.size(); ++k) by_target[result.hits[k].target_index].push_back(k);
  SequenceReader reader(path, options);
  Sequence seq;
  std::uint32_t index = 0;
  for (const auto& [wanted, hits] : by_target) {
    bool found = false;
    while (reader.next(seq)) {
      if (index++ != wanted) continue;
      found = true;
      break;
    }
    const scan::Hit& first = result.hits[hits.front()];
    if (!found || seq.name != first.target_name || seq.length() != first.target_length) {
      throw Error(ErrorKind::kIo, "the target file changed during the scan", path, found ? seq.line : 0);
    }
    for (const std::size_t k : hits) {
      const scan::Hit& hit = result.hits[k];
      letters[k] = segment_letters(seq, alphabet, hit.target_begin, hit.target_end);
    }
  }
  return letters;
}

// One query's scan statistics (--stats), a line for stderr.
std::string stats_line(const scan::QueryResult& r) {
  const scan::ScanStats& s = r.stats;
  const double extra = s.cells > 0
                           ? 100.0 * (static_cast<double>(s.computed_cells) - static_cast<double>(s.cells)) /
                                 static_cast<double>(s.cells)
                           : 0.0;
  return fmt::format(
      "scan stats: query {} ({} residues): {} target sequences ({} empty), {} residues; {} cells, {} "
      "computed ({:+.2f}%); {} sections, {} fixups, {} rescans; kernel 1 {:.3f} s ({:.2f} GCUPS), "
      "kernel 2 {:.3f} s, total {:.3f} s; {} alignments\n",
      r.query_name, r.query_length, s.target_sequences, s.empty_targets, s.target_residues, s.cells,
      s.computed_cells, extra, s.sections, s.fixups, s.rescans, s.kernel1_seconds,
      s.kernel1_seconds > 0 ? static_cast<double>(s.cells) / s.kernel1_seconds / 1e9 : 0.0, s.kernel2_seconds,
      s.total_seconds, r.hits.size());
}

// What the rank that scanned a query sends to rank 0: the formatted output, the --stats line and the
// counts of the summary. `scanned` is false for a rank without a query in the round.
struct QueryOutput {
  bool scanned = false;
  std::string text;
  std::string stats;
  std::uint64_t query_residues = 0, hits = 0, cells = 0;
  std::uint64_t target_sequences = 0, target_residues = 0;
};

dist::Bytes encode_output(const QueryOutput& q) {
  dist::ByteWriter w;
  w.boolean(q.scanned);
  w.str(q.text);
  w.str(q.stats);
  w.integer(q.query_residues);
  w.integer(q.hits);
  w.integer(q.cells);
  w.integer(q.target_sequences);
  w.integer(q.target_residues);
  return w.take();
}

QueryOutput decode_output(std::span<const std::uint8_t> bytes) {
  dist::ByteReader r(bytes);
  QueryOutput q;
  q.scanned = r.boolean();
  q.text = r.str();
  q.stats = r.str();
  q.query_residues = r.integer<std::uint64_t>();
  q.hits = r.integer<std::uint64_t>();
  q.cells = r.integer<std::uint64_t>();
  q.target_sequences = r.integer<std::uint64_t>();
  q.target_residues = r.integer<std::uint64_t>();
  return q;
}

void run_scan(const ScanOptions& o, const GlobalOptions& global) {
  const dist::Comm one_process;
  const dist::Comm& comm = global.comm != nullptr ? *global.comm : one_process;
  const bool distributed = comm.size() > 1;
  const auto ranks = static_cast<std::size_t>(comm.size());
  const auto rank = static_cast<std::size_t>(comm.rank());
  // --mpi-split db (the default): the ranks split every target's columns; queries: query i is scanned by
  // rank i mod R against the whole target.
  const bool target_split = distributed && global.split() == dist::Split::kDatabase;
  // Under MPI every rank runs this with the same arguments and reads the query file itself; query i (in
  // file order) is scanned by rank i mod R against the whole target file, in rounds of R queries. The
  // steps that can fail run inside dist::agree / dist::exchange (an error on any rank stops all of them
  // together, rank 0 reports it), and rank 0 alone writes, in query order. With one process agree() and
  // exchange() are just the call.
  std::optional<scan::OutputFormat> format;
  std::optional<SequenceReader> query_reader;
  std::optional<Alphabet> alphabet;
  ReaderOptions reader_options;
  scan::Config config;
  std::vector<Sequence> pending;  // records read ahead (the first query and one of look-ahead)
  std::optional<OutputFile> out;
  std::unique_ptr<scan::Scanner> scanner;
  std::optional<scan::ResultFormatter> formatter;
  std::chrono::steady_clock::time_point start;
  dist::agree(comm, [&] {
    // Options that need no data.
    format = scan::parse_output_format(o.format);
    if (!format)
      throw Error(ErrorKind::kUsage, fmt::format("--format {}: expected tsv, sam, paf or view", o.format));
    if (o.no_traceback && scan::needs_traceback(*format)) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("--format {} prints the alignment, so it cannot be combined with "
                              "--no-traceback (only tsv can)",
                              o.format));
    }
    const std::optional<scan::StrandMode> strands = scan::parse_strand_mode(o.strand);
    if (!strands)
      throw Error(ErrorKind::kUsage, fmt::format("--strand {}: expected both, plus or minus", o.strand));
    const std::optional<DeviceMode> device = parse_device_mode(global.device);
    if (!device)
      throw Error(ErrorKind::kUsage, fmt::format("--device {}: expected auto, cpu or gpu", global.device));
    if (o.query == "-" && o.target == "-")
      throw Error(ErrorKind::kUsage, "--query and --target cannot both be stdin");
    if (distributed && (o.query == "-" || o.target == "-")) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("--{} - : under MPI every rank reads --query and --target itself, so they "
                              "cannot be stdin",
                              o.query == "-" ? "query" : "target"));
    }
    if (o.target == "-" && *format == scan::OutputFormat::kView) {
      throw Error(ErrorKind::kUsage,
                  "--format view reads --target again for the aligned letters, so it cannot be stdin");
    }

    // The alphabet: given, or guessed from the start of the query file; the targets are read with it.
    reader_options.alphabet = alphabet_option(o.alphabet == "auto" ? std::string() : o.alphabet);
    query_reader.emplace(o.query, reader_options);
    alphabet.emplace(query_reader->alphabet());
    reader_options.alphabet = alphabet->kind();
    reader_options.allow_empty_sequences = true;  // the scanner lists empty targets and skips them

    config.matrix = choose_matrix(o, alphabet->kind());
    // DNA scoring: SSCA#1's gaps (8 + k); protein matrices: BLAST+'s defaults for the matrix.
    config.gaps = alphabet->is_nucleotide() ? GapCosts{8, 1} : config.matrix.default_gaps();
    if (o.gap_open_opt->count() > 0) config.gaps.open = o.gap_open;
    if (o.gap_extend_opt->count() > 0) config.gaps.extend = o.gap_extend;
    config.top = o.top;
    config.min_score = o.min_score;
    if (alphabet->is_nucleotide()) {
      config.strands = *strands;
    } else {
      if (o.strand_opt->count() > 0 && *strands != scan::StrandMode::kPlus) {
        throw Error(ErrorKind::kUsage,
                    fmt::format("--strand {}: protein scans have one strand (plus)", o.strand));
      }
      config.strands = scan::StrandMode::kPlus;
    }
    config.soft_mask = o.soft_mask;
    config.traceback = !o.no_traceback;
    config.device = *device;
    config.gpus = global.gpus;
    config.threads = global.thread_request();
    config.overlap = o.overlap;
    config.pool = o.pool;
    config.validate();

    // The first query, and one of look-ahead: stdin as the target can be scanned for one query only.
    Sequence first, next;
    if (!query_reader->next(first)) {
      throw Error(ErrorKind::kInput, "the query file holds no sequences", query_reader->path());
    }
    pending.push_back(std::move(first));
    if (query_reader->next(next)) {
      if (o.target == "-") {
        throw Error(ErrorKind::kUsage,
                    fmt::format("--target - (stdin) can be scanned for one query only, but {} holds more "
                                "('{}' at line {})",
                                query_reader->path(), next.name, next.line));
      }
      pending.push_back(std::move(next));
    }

    if (comm.is_root()) out.emplace(o.output);
    start = std::chrono::steady_clock::now();
    if (distributed) {
      // The ranks of a node share its GPUs (resolve_devices gives this rank's share, select_local_devices);
      // a rank without one scans on its CPU threads. The results are the same either way.
      global.resolve_engine_devices(config.device, config.gpus);
    }
    if (target_split) config.comm = &comm;
    scanner = std::make_unique<scan::Scanner>(config);
    // Query 0 (rank 0's) carries the header (TSV columns, SAM @HD/@SQ/@PG); the other ranks format the
    // bodies only: their formatter starts with the header already given out. (Under a target split only
    // rank 0 formats.)
    formatter.emplace(*format, kVersion);
    if (!comm.is_root()) (void)formatter->finish();
  });

  // The next query record in file order: the ones read ahead first.
  const auto read_query = [&](Sequence& seq) {
    if (pending.empty()) return query_reader->next(seq);
    seq = std::move(pending.front());
    pending.erase(pending.begin());
    return true;
  };
  // An error while scanning `query`, naming it; errors about the query itself point at its record.
  const auto query_error = [&](const Sequence& query, const Error& e) {
    const bool about_query = e.file().empty();
    return Error(e.kind(), fmt::format("scanning query '{}': {}", query.name, e.message()),
                 about_query ? query_reader->path() : e.file(), about_query ? query.line : e.line());
  };
  // Scans one query (collective when the ranks split the target).
  const auto scan_only = [&](const Sequence& query) {
    try {
      return scanner->scan(query, o.target);
    } catch (const dist::CollectiveError&) {
      throw;  // already names the failing rank
    } catch (const Error& e) {
      throw query_error(query, e);
    }
  };
  // Formats one query's result.
  const auto format_query = [&](const Sequence& query, const scan::QueryResult& result) {
    QueryOutput q;
    q.scanned = true;
    q.query_residues = query.length();
    q.hits = result.hits.size();
    q.cells = result.stats.cells;
    q.target_sequences = result.stats.target_sequences;
    q.target_residues = result.stats.target_residues;
    if (o.stats) q.stats = stats_line(result);
    if (*format == scan::OutputFormat::kView) {
      const std::string query_letters = to_letters(query, *alphabet, true);
      const std::vector<std::string> target_letters =
          aligned_target_letters(o.target, reader_options, *alphabet, result);
      std::vector<scan::ViewLetters> letters;
      letters.reserve(result.hits.size());
      for (const std::string& t : target_letters) {
        letters.push_back({query_letters, t, alphabet->kind() == AlphabetKind::kRna});
      }
      q.text = formatter->format(result, letters);
    } else {
      q.text = formatter->format(result);
    }
    return q;
  };
  const auto scan_query = [&](const Sequence& query) { return format_query(query, scan_only(query)); };
  std::uint64_t queries = 0, query_residues = 0, hits = 0, cells = 0;
  std::uint64_t target_sequences = 0, target_residues = 0;
  std::exception_ptr write_error;
  // Rank 0: prints a query's --stats line and writes its output (errors kept for the next agreed step).
  const auto write_query = [&](const QueryOutput& q) {
    ++queries;
    query_residues += q.query_residues;
    hits += q.hits;
    cells += q.cells;
    target_sequences = q.target_sequences;
    target_residues = q.target_residues;
    if (!q.stats.empty()) fmt::print(stderr, "{}", q.stats);
    out->write(q.text);
  };

  // Rounds of R queries: every rank reads the round's records (the same ones), scans its own (record
  // `rank` of the round), and sends the output to rank 0, which writes the round in query order. Rank
  // 0's write errors are kept and raised at the next agreed step.
  // Every rank must have read the same number of query records (the same file): otherwise the ranks no
  // longer scan the same queries. Uses only all-reduced values, so all ranks take the same branch; returns
  // the count.
  const auto same_count = [&](std::uint64_t read) {
    const std::uint64_t most = comm.allreduce_max(read);
    if (comm.allreduce_sum(read) != most * ranks) {
      throw dist::CollectiveError(
          ErrorKind::kInput,
          fmt::format("the ranks read different numbers of queries after query {} (was --query changed "
                      "during the run, or do the ranks see different files?)",
                      queries));
    }
    return most;
  };
  // Target split: every rank reads every query and scans it together with the others (each computes its
  // share of every target's sections); rank 0 formats and writes.
  while (target_split) {
    Sequence query;
    bool got = false;
    dist::agree(comm, [&] {
      if (write_error) std::rethrow_exception(write_error);
      got = read_query(query);
      if (!got) return;
      try {
        scanner->check_query(query);
      } catch (const Error& e) {
        throw query_error(query, e);
      }
    });
    if (same_count(got ? 1 : 0) == 0) break;
    const scan::QueryResult result = scan_only(query);
    if (comm.is_root() && !write_error) {
      try {
        write_query(format_query(query, result));
      } catch (...) {
        write_error = std::current_exception();
      }
    }
  }
  while (!target_split) {
    std::uint64_t read = 0;
    const std::vector<dist::Bytes> parts = dist::exchange(comm, [&] {
      if (write_error) std::rethrow_exception(write_error);
      Sequence seq, mine;
      bool have_mine = false;
      while (read < ranks && read_query(seq)) {
        if (read == rank) {
          mine = std::move(seq);
          have_mine = true;
        }
        ++read;
      }
      QueryOutput q;
      if (have_mine) q = scan_query(mine);
      return encode_output(q);
    });
    if (distributed) (void)same_count(read);  // otherwise the rounds no longer match
    if (comm.is_root() && !write_error) {
      try {
        for (std::size_t r = 0; r < read; ++r) {
          const QueryOutput q = decode_output(parts.at(r));
          if (!q.scanned) throw Error(ErrorKind::kInternal, fmt::format("rank {} sent no query output", r));
          write_query(q);
        }
      } catch (...) {
        write_error = std::current_exception();
      }
    }
    if (read < ranks) break;
  }
  dist::agree(comm, [&] {
    if (write_error) std::rethrow_exception(write_error);
    if (out) {
      out->write(formatter->finish());
      out->commit();
    }
  });
  if (!comm.is_root()) return;

  // Every rank read the whole query file: rank 0's count is that of one process.
  if (query_reader->unknown_letters() > 0) {
    fmt::print(stderr, "warpsearch: warning: {} query letters outside the {} alphabet were scanned as {}\n",
               query_reader->unknown_letters(), to_string(alphabet->kind()),
               alphabet->is_nucleotide() ? "N" : "X");
  }
  if (!global.quiet) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string where = distributed
                                  ? fmt::format("{} MPI ranks (rank 0: {})", comm.size(), scanner->describe())
                                  : scanner->describe();
    fmt::print(stderr,
               "scan: {} quer{} ({} residues) vs {} target sequence{} ({} residues), {} {}/{}, {}: {} "
               "alignment{}, {} cells in {:.2f} s ({:.2f} GCUPS) on {}\n",
               queries, queries == 1 ? "y" : "ies", query_residues, target_sequences,
               target_sequences == 1 ? "" : "s", target_residues, config.matrix.name(), config.gaps.open,
               config.gaps.extend,
               !alphabet->is_nucleotide()                  ? "plus strand"
               : config.strands == scan::StrandMode::kBoth ? "both strands"
               : config.strands == scan::StrandMode::kPlus ? "plus strand"
                                                           : "minus strand",
               hits, hits == 1 ? "" : "s", cells, seconds,
               seconds > 0 ? static_cast<double>(cells) / seconds / 1e9 : 0.0, where);
  }
}

}  // namespace

void register_scan(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<ScanOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scan", "The best distinct local alignments of long queries against chromosome-sized targets (SSCA#1)");
  cmd->add_option("--query", opts->query,
                  "Queries: FASTA or FASTQ, plain or gzip ('-' reads stdin); each record is scanned in turn")
      ->required();
  cmd->add_option(
         "--target", opts->target,
         "Targets: FASTA or FASTQ, plain or gzip, streamed one sequence at a time ('-' reads stdin: one "
         "query only, not with --format view)")
      ->required();
  cmd->add_option("-o,--output", opts->output, "Output file ('-' is stdout); never left partial on error")
      ->capture_default_str();
  cmd->add_option("--format", opts->format,
                  "tsv (table), sam, paf or view (readable alignments); sam, paf and view need the traceback")
      ->capture_default_str()
      ->check(CLI::IsMember({"tsv", "sam", "paf", "view"}));
  cmd->add_option("--top", opts->top, "K: alignments reported per query")->capture_default_str();
  opts->strand_opt =
      cmd->add_option("--strand", opts->strand,
                      "Nucleotide strands of the target to search: both, plus or minus (protein: plus)")
          ->capture_default_str()
          ->check(CLI::IsMember({"both", "plus", "minus"}));
  cmd->add_option(
         "--alphabet", opts->alphabet,
         "dna, rna, protein or auto (auto: DNA when >= 90% of the query file's first letters are ACGTUN)")
      ->capture_default_str();
  opts->match_opt =
      cmd->add_option("--match", opts->match, "DNA: score of a match (1..127)")->capture_default_str();
  opts->mismatch_opt = cmd->add_option("--mismatch", opts->mismatch, "DNA: score of a mismatch (-128..-1)")
                           ->capture_default_str();
  opts->matrix_opt =
      cmd->add_option("--matrix", opts->matrix,
                      "Substitution matrix: a built-in name (BLOSUM45/50/62/80/90, PAM30/70/250) or "
                      "an NCBI-format file [default: BLOSUM62 for protein]");
  opts->gap_open_opt =
      cmd->add_option("--gap-open", opts->gap_open,
                      "Gap open cost; a gap of length k costs open + k*extend [default: DNA 8 "
                      "(SSCA#1), protein the matrix's BLAST+ default: BLOSUM62 11]");
  opts->gap_extend_opt = cmd->add_option("--gap-extend", opts->gap_extend,
                                         "Gap extension cost per residue [default: DNA 1, BLOSUM62 1]");
  cmd->add_option("--min-score", opts->min_score, "Alignments scoring below this are not reported")
      ->capture_default_str();
  cmd->add_flag("--soft-mask", opts->soft_mask,
                "Lowercase (soft-masked) query and target residues score as N (protein: X)");
  cmd->add_flag("--no-traceback", opts->no_traceback,
                "Scores and coordinates only, no CIGAR/identity (faster; --format tsv only)");
  cmd->add_option(
         "--overlap,--max-alignment-length", opts->overlap,
         "Hint: alignment length in target residues that sections overlap by (0: automatic). Results "
         "are exact for any value; only the time changes")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option(
         "--pool", opts->pool,
         "Candidate pool per query (0: max(64 x top, 65536)); too small a pool is detected and the scan "
         "repeated, so results never depend on it")
      ->capture_default_str();
  cmd->add_flag("--stats", opts->stats,
                "Print each query's scan statistics to stderr (cells, sections, times)");
  cmd->footer(
      "Reports the --top best distinct local alignments (affine-gap Smith-Waterman, exact) of each query\n"
      "over all target sequences and strands: ranked by score, then target order, strand (plus first),\n"
      "target end, query end; an alignment is distinct unless its query AND target ranges both overlap\n"
      "those of a better one on the same target and strand. Results never depend on --device, --gpus,\n"
      "--threads, --overlap or --pool. Defaults: DNA match 5, mismatch -3, gap open 8, extend 1 (SSCA#1;\n"
      "a gap of length k costs open + k*extend); protein BLOSUM62 11/1. Global options --device, --gpus,\n"
      "--threads and --quiet may follow the command name.\n"
      "TSV columns: query target strand score qstart qend tstart tend cigar identity evalue, 1-based\n"
      "inclusive as BLAST (minus strand: tstart > tend); E-values when BLAST+ has statistics for the\n"
      "scoring, else '-'. SAM: hard clips, FLAG 16 minus / 256 secondary, SEQ '*'. Details: docs/SCAN.md.\n"
      "Examples:\n"
      "  warpsearch scan --query read.fa --target chr1.fa.gz > hits.tsv\n"
      "  warpsearch scan --query q.fa --target genome.fa --top 50 --format sam -o hits.sam\n"
      "  warpsearch scan --query q.fa --target genome.fa --strand plus --format view --top 5\n"
      "  warpsearch scan --query prot.fa --target proteome.fa --matrix BLOSUM62 --format paf\n"
      "  warpsearch --device gpu --gpus 0,1 scan --query q.fa --target chrX.fa --no-traceback --stats");
  cmd->callback([opts, &global] { run_scan(*opts, global); });
}

}  // namespace warpsearch::cli
