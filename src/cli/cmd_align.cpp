// cmd_align.cpp: `warpsearch align`: batched one-to-one pairwise alignment of two sequence files
// (pair i = sequence i of --query with sequence i of --target), or of explicit name pairs (--pairs),
// written as TSV, SAM or PAF in input order (formats: align_output.hpp, docs/ALIGN.md).
//
// Data flow (one-to-one mode): both files stream; pairs are read in chunks (--batch-pairs pairs or
// --batch-residues residues, whichever comes first), each chunk is submitted to align::Aligner, and
// at most kChunksInFlight chunks are queued while the next one is read, so memory stays bounded
// whatever the input size. Results are written chunk by chunk in submission order, which is input
// order. --pairs needs random access by name, so it loads both sequence files (and the pair list)
// into memory first.
//
// Under MPI (docs/ALIGN.md "Under MPI", docs/MPI.md): every rank reads both inputs the same way (same
// chunks), aligns its cell-balanced contiguous part of each chunk (dist::align_split) on its own GPUs
// (select_local_devices) or CPU threads, and sends the results to rank 0 (dist::exchange), which writes
// them in input order: the output is a one-process run's, byte for byte. One process keeps run_pipeline.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <fstream>
#include <future>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cli/align_output.hpp"
#include "cli/commands.hpp"
#include "dist/align_wire.hpp"
#include "sw/model.hpp"
#include "sw/pairwise.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/output_file.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/version.hpp"

namespace warpsearch::cli {
namespace {

// Chunks submitted and not yet written while the next chunk is being read: one being written, and
// three behind it, as many as the Aligner's GPU pipeline holds (forward passes queued, reverse passes
// queued, finishing; align.cpp), so that it has the next chunk while this thread writes (and frees) the
// oldest, and the GPUs never wait for the reader or the writer. With three, the GPU queue ran dry
// whenever writing a chunk took longer than the GPU's remaining work (docs/PERFORMANCE.md, 2026-12-03).
constexpr std::size_t kChunksInFlight = 4;

struct AlignOptions {
  std::string query;
  std::string target;
  std::string pairs;
  std::string output = "-";
  std::string format = "tsv";
  std::string mode = "local";
  std::string alphabet = "auto";
  std::string matrix;
  int match = 2;
  int mismatch = -3;
  int gap_open = 0;
  int gap_extend = 0;
  bool cigar = false;
  std::size_t batch_pairs = 100000;
  std::uint64_t batch_residues = 50000000;
  // Set when the option was given (CLI11 counts), to tell defaults from explicit values.
  const CLI::Option* matrix_opt = nullptr;
  const CLI::Option* match_opt = nullptr;
  const CLI::Option* mismatch_opt = nullptr;
  const CLI::Option* gap_open_opt = nullptr;
  const CLI::Option* gap_extend_opt = nullptr;
};

// What the writer needs about a pair once its result is back.
struct PairMeta {
  std::string query_name;
  std::uint64_t query_length = 0;
  std::string target_name;
  std::uint64_t target_length = 0;
  std::string query_letters;  // SAM only
  std::string query_quality;  // SAM only (FASTQ)
};

struct Chunk {
  align::Batch batch;
  std::vector<PairMeta> meta;
  std::uint64_t first_pair = 0;  // 0-based index of the chunk's first pair in the whole run
  std::uint64_t residues = 0;
};

// When a chunk is full: whichever limit is reached first (a chunk always holds at least one pair).
struct ChunkLimits {
  std::size_t max_pairs = 1;
  std::uint64_t max_residues = 1;
};

bool chunk_full(const Chunk& chunk, const ChunkLimits& limits) {
  return chunk.meta.size() >= limits.max_pairs || chunk.residues >= limits.max_residues;
}

// Adds one pair to the chunk after checking that it can be aligned exactly (sw::check_pair: DP values
// within 32 bits), so that an oversized pair is reported with its names and place before any work.
class PairAdder {
 public:
  PairAdder(const sw::PassModel& model, const Alphabet& alphabet, bool keep_letters, std::string query_path)
      : model_(model), alphabet_(alphabet), keep_letters_(keep_letters), query_path_(std::move(query_path)) {}

  void add(Chunk& chunk, std::uint64_t pair_index, const Sequence& q, const Sequence& t) const {
    try {
      sw::check_pair(model_, q.length(), t.length());
    } catch (const Error& e) {
      throw Error(e.kind(),
                  fmt::format("pair {} ('{}', {} residues, vs '{}', {} residues): {}", pair_index + 1, q.name,
                              q.length(), t.name, t.length(), e.message()),
                  query_path_, q.line);
    }
    chunk.batch.add(q.residues, t.residues);
    PairMeta m;
    m.query_name = q.name;
    m.query_length = q.length();
    m.target_name = t.name;
    m.target_length = t.length();
    if (keep_letters_) {
      m.query_letters = to_letters(q, alphabet_, false);
      m.query_quality = q.quality;
    }
    chunk.meta.push_back(std::move(m));
    chunk.residues += q.length() + t.length();
  }

 private:
  const sw::PassModel& model_;
  const Alphabet& alphabet_;
  bool keep_letters_;
  std::string query_path_;
};

// Source of chunks: the zipped files (one-to-one) or the --pairs list over in-memory files.
class PairFeed {
 public:
  virtual ~PairFeed() = default;
  // Fills an empty chunk with the next pairs; false when no pair is left.
  virtual bool fill(Chunk& chunk, const ChunkLimits& limits, const PairAdder& adder) = 0;
};

// One-to-one: pair i is record i of each file. Streams both files.
class ZipFeed final : public PairFeed {
 public:
  ZipFeed(SequenceReader& query, SequenceReader& target) : query_(query), target_(target) {}

  bool fill(Chunk& chunk, const ChunkLimits& limits, const PairAdder& adder) override {
    chunk.first_pair = pairs_;
    while (!chunk_full(chunk, limits)) {
      const bool have_q = query_.next(q_);
      const bool have_t = target_.next(t_);
      if (have_q != have_t) {
        const SequenceReader& ended = have_q ? target_ : query_;
        const SequenceReader& longer = have_q ? query_ : target_;
        const Sequence& next = have_q ? q_ : t_;
        throw Error(
            ErrorKind::kInput,
            fmt::format("ran out of sequences after {} pairs, but {} has more (next: '{}' at line {}); "
                        "--query and --target must hold the same number of sequences",
                        pairs_, longer.path(), next.name, next.line),
            ended.path());
      }
      if (!have_q) break;
      adder.add(chunk, pairs_, q_, t_);
      ++pairs_;
    }
    return !chunk.meta.empty();
  }

 private:
  SequenceReader& query_;
  SequenceReader& target_;
  Sequence q_, t_;
  std::uint64_t pairs_ = 0;
};

// A whole sequence file in memory, with a name index (names must be unique).
struct SequenceTable {
  std::string path;
  std::vector<Sequence> seqs;
  std::unordered_map<std::string_view, std::uint32_t> index;  // views into seqs[i].name
};

SequenceTable load_table(SequenceReader& reader) {
  SequenceTable table;
  table.path = reader.path();
  Sequence seq;
  while (reader.next(seq)) {
    if (table.seqs.size() >= std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ErrorKind::kInput, "too many sequences for --pairs (at most 2^32 - 1)", table.path,
                  seq.line);
    }
    seq.description.clear();
    seq.description.shrink_to_fit();
    seq.soft_mask.clear();
    table.seqs.push_back(std::move(seq));
    seq = Sequence();
  }
  // Built after loading: a std::string's characters may live inside the object while the vector grows.
  table.index.reserve(table.seqs.size());
  for (std::size_t i = 0; i < table.seqs.size(); ++i) {
    const auto [it, inserted] = table.index.emplace(table.seqs[i].name, static_cast<std::uint32_t>(i));
    if (!inserted) {
      throw Error(ErrorKind::kInput,
                  fmt::format("duplicate sequence name '{}' (first at line {}); --pairs needs unique names",
                              table.seqs[i].name, table.seqs[it->second].line),
                  table.path, table.seqs[i].line);
    }
  }
  return table;
}

struct PairIndex {
  std::uint32_t query = 0;
  std::uint32_t target = 0;
};

// Reads the --pairs file: one "QUERY TARGET" pair per line (whitespace separated, so TSV too), blank
// lines and lines starting with '#' ignored. Every name must be in its table.
std::vector<PairIndex> load_pairs(const std::string& path, const SequenceTable& queries,
                                  const SequenceTable& targets) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_system_error("cannot open pairs file", path);
  std::vector<PairIndex> pairs;
  std::string line;
  std::uint64_t line_no = 0;
  constexpr std::string_view kSpace = " \t\r\v\f";
  while (std::getline(in, line)) {
    ++line_no;
    std::vector<std::string_view> fields;
    const std::string_view text(line);
    std::size_t pos = text.find_first_not_of(kSpace);
    if (pos == std::string_view::npos || text[pos] == '#') continue;
    while (pos != std::string_view::npos) {
      const std::size_t end = text.find_first_of(kSpace, pos);
      fields.push_back(text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
      pos = end == std::string_view::npos ? end : text.find_first_not_of(kSpace, end);
    }
    if (fields.size() != 2) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("expected 2 fields (query name, target name), found {}", fields.size()), path,
                  line_no);
    }
    const auto q = queries.index.find(fields[0]);
    if (q == queries.index.end()) {
      throw Error(ErrorKind::kInput, fmt::format("query '{}' is not in {}", fields[0], queries.path), path,
                  line_no);
    }
    const auto t = targets.index.find(fields[1]);
    if (t == targets.index.end()) {
      throw Error(ErrorKind::kInput, fmt::format("target '{}' is not in {}", fields[1], targets.path), path,
                  line_no);
    }
    pairs.push_back({q->second, t->second});
  }
  if (in.bad()) throw_system_error("cannot read pairs file", path);
  return pairs;
}

// --pairs: the listed pairs, in list order, over the in-memory files.
class ListFeed final : public PairFeed {
 public:
  ListFeed(const SequenceTable& queries, const SequenceTable& targets, std::vector<PairIndex> pairs)
      : queries_(queries), targets_(targets), pairs_(std::move(pairs)) {}

  bool fill(Chunk& chunk, const ChunkLimits& limits, const PairAdder& adder) override {
    chunk.first_pair = next_;
    while (!chunk_full(chunk, limits) && next_ < pairs_.size()) {
      const PairIndex& p = pairs_[next_];
      adder.add(chunk, next_, queries_.seqs[p.query], targets_.seqs[p.target]);
      ++next_;
    }
    return !chunk.meta.empty();
  }

  const std::vector<PairIndex>& pairs() const { return pairs_; }

 private:
  const SequenceTable& queries_;
  const SequenceTable& targets_;
  std::vector<PairIndex> pairs_;
  std::size_t next_ = 0;
};

// SAM @SQ lines for one-to-one mode: a first pass over the target file collecting each distinct
// name once, in order of first appearance. A name seen again with another length cannot be
// described by one @SQ line: Error(kInput).
std::vector<SamReference> scan_sam_references(const std::string& path, const ReaderOptions& options) {
  if (path == "-") {
    throw Error(ErrorKind::kUsage,
                "--format sam reads --target twice (first for the @SQ header lines), so it cannot be stdin");
  }
  SequenceReader reader(path, options);
  std::vector<SamReference> refs;
  std::unordered_map<std::string, std::pair<std::size_t, std::uint64_t>> seen;  // name -> (ref, line)
  Sequence seq;
  while (reader.next(seq)) {
    const auto [it, inserted] = seen.emplace(seq.name, std::pair{refs.size(), seq.line});
    if (inserted) {
      refs.push_back({seq.name, seq.length()});
    } else if (refs[it->second.first].length != seq.length()) {
      throw Error(
          ErrorKind::kInput,
          fmt::format("target name '{}' is used for sequences of different lengths (line {}: {}, here: "
                      "{}); SAM @SQ names must be unique",
                      seq.name, it->second.second, refs[it->second.first].length, seq.length()),
          path, seq.line);
    }
  }
  return refs;
}

// The scoring system from --matrix / --match / --mismatch and the sequences' alphabet.
ScoringMatrix choose_matrix(const AlignOptions& o, AlphabetKind kind) {
  const bool nucleotide = Alphabet(kind).is_nucleotide();
  const bool matrix_given = o.matrix_opt->count() > 0;
  const bool match_given = o.match_opt->count() > 0 || o.mismatch_opt->count() > 0;
  if (!nucleotide && match_given) {
    throw Error(
        ErrorKind::kUsage,
        "--match/--mismatch score DNA, but the sequences are protein (use --matrix, or --alphabet dna)");
  }
  if (matrix_given && match_given)
    throw Error(ErrorKind::kUsage, "give either --matrix or --match/--mismatch");
  if (nucleotide && !matrix_given) return ScoringMatrix::dna(o.match, o.mismatch, kind);
  ScoringMatrix matrix = ScoringMatrix::load(matrix_given ? o.matrix : std::string("BLOSUM62"));
  if (Alphabet(matrix.alphabet()).is_nucleotide() != nucleotide) {
    throw Error(ErrorKind::kUsage, fmt::format("--matrix {} is a {} matrix, but the sequences are {}{}",
                                               o.matrix, to_string(matrix.alphabet()), to_string(kind),
                                               o.alphabet == "auto" ? " (detected; set --alphabet)" : ""));
  }
  return matrix;
}

// Writes the results of the oldest chunk in flight.
class ResultWriter {
 public:
  ResultWriter(OutputFile& out, AlignFormat format, bool cigar) : out_(out), format_(format), cigar_(cigar) {}

  void write(std::vector<align::Result>&& results, const Chunk& chunk) {
    if (results.size() != chunk.meta.size()) {
      throw Error(ErrorKind::kInternal, fmt::format("the aligner returned {} results for {} pairs",
                                                    results.size(), chunk.meta.size()));
    }
    text_.clear();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const PairMeta& m = chunk.meta[i];
      const PairView view{m.query_name,    m.query_length,  m.target_name,
                          m.target_length, m.query_letters, m.query_quality};
      switch (format_) {
        case AlignFormat::kTsv: append_tsv(text_, view, results[i], cigar_); break;
        case AlignFormat::kSam: append_sam(text_, view, results[i]); break;
        case AlignFormat::kPaf: append_paf(text_, view, results[i]); break;
      }
    }
    out_.write(text_);
  }

 private:
  OutputFile& out_;
  AlignFormat format_;
  bool cigar_;
  std::string text_;
};

struct InFlight {
  std::future<std::vector<align::Result>> results;
  Chunk chunk;  // batch moved out; meta kept for writing
};

struct RunTotals {
  std::uint64_t pairs = 0;
  std::uint64_t cells = 0;
};

// The chunk pipeline: read a chunk, wait for the oldest chunk in flight if kChunksInFlight are
// queued, submit the new one; finally drain. Writes happen in submission order = input order.
RunTotals run_pipeline(PairFeed& feed, const ChunkLimits& limits, const PairAdder& adder,
                       align::Aligner& aligner, ResultWriter& writer) {
  RunTotals totals;
  std::deque<InFlight> in_flight;
  const auto write_oldest = [&] {
    InFlight& oldest = in_flight.front();
    std::vector<align::Result> results;
    try {
      results = oldest.results.get();
    } catch (const Error& e) {
      const std::uint64_t first = oldest.chunk.first_pair + 1;
      throw Error(
          e.kind(),
          fmt::format("aligning pairs {}..{}: {}", first, first + oldest.chunk.meta.size() - 1, e.message()),
          e.file(), e.line());
    }
    writer.write(std::move(results), oldest.chunk);
    in_flight.pop_front();
  };
  for (;;) {
    Chunk chunk;
    if (!feed.fill(chunk, limits, adder)) break;
    totals.pairs += chunk.meta.size();
    totals.cells += chunk.batch.cells();
    while (in_flight.size() >= kChunksInFlight) write_oldest();
    InFlight job;
    job.results = aligner.submit(std::move(chunk.batch));
    job.chunk = std::move(chunk);
    in_flight.push_back(std::move(job));
  }
  while (!in_flight.empty()) write_oldest();
  return totals;
}

// A chunk in flight under MPI: this rank's part of it (pairs [begin, end) of the chunk), submitted to its
// own aligner (no future when the part is empty), and the chunk's pairs (rank 0 writes them all).
struct DistInFlight {
  std::future<std::vector<align::Result>> results;
  std::vector<std::uint64_t> bounds;  // dist::align_split of the chunk: rank r aligns bounds[r]..bounds[r+1]
  Chunk chunk;                        // batch released; meta kept
};

// The chunk pipeline under MPI (comm.size() > 1). Every rank reads every chunk (the same chunks: same
// inputs, same limits), aligns its cell-balanced part of it (dist::align_split) with its own aligner, and
// sends the results to rank 0 (dist::exchange), which writes the chunk in input order; kChunksInFlight
// chunks are queued as in run_pipeline, so a rank's aligner works on the next chunk during an exchange.
// Each step that can fail on some ranks only (reading, aligning, rank 0's writing) goes through
// dist::agree / dist::exchange, so every rank stops together; rank 0's write errors are kept and raised at
// the next agreed step. writer is set on rank 0 only.
RunTotals run_pipeline_distributed(const dist::Comm& comm, PairFeed& feed, const ChunkLimits& limits,
                                   const PairAdder& adder, align::Aligner& aligner, ResultWriter* writer,
                                   OutputFile* out) {
  RunTotals totals;
  std::deque<DistInFlight> in_flight;
  std::exception_ptr write_error;  // rank 0: the first error writing the output
  const auto raise_write_error = [&] {
    if (write_error) std::rethrow_exception(write_error);
  };
  const auto range_text = [](const Chunk& chunk, std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t first = chunk.first_pair + begin + 1;
    return fmt::format("pairs {}..{}", first, chunk.first_pair + end);
  };
  const auto write_oldest = [&] {
    DistInFlight& oldest = in_flight.front();
    const auto rank = static_cast<std::size_t>(comm.rank());
    std::vector<align::Result> own;
    const std::vector<dist::Bytes> parts = dist::exchange(comm, [&] {
      std::vector<align::Result> results;
      if (oldest.results.valid()) {
        try {
          results = oldest.results.get();
        } catch (const Error& e) {
          throw Error(e.kind(),
                      fmt::format("aligning {}: {}",
                                  range_text(oldest.chunk, oldest.bounds[rank], oldest.bounds[rank + 1]),
                                  e.message()),
                      e.file(), e.line());
        }
      }
      if (!comm.is_root()) return dist::encode_align_results(results);
      own = std::move(results);
      return dist::Bytes();
    });
    if (comm.is_root() && !write_error) {
      try {
        std::vector<align::Result> all = std::move(own);
        all.reserve(oldest.chunk.meta.size());
        for (std::size_t r = 1; r < parts.size(); ++r) {
          std::vector<align::Result> part = dist::decode_align_results(parts[r]);
          if (part.size() != oldest.bounds[r + 1] - oldest.bounds[r]) {
            throw Error(ErrorKind::kInternal,
                        fmt::format("rank {} returned {} results for {}", r, part.size(),
                                    range_text(oldest.chunk, oldest.bounds[r], oldest.bounds[r + 1])));
          }
          std::move(part.begin(), part.end(), std::back_inserter(all));
        }
        writer->write(std::move(all), oldest.chunk);
      } catch (...) {
        write_error = std::current_exception();
      }
    }
    in_flight.pop_front();
  };
  for (;;) {
    Chunk chunk;
    bool more = false;
    dist::agree(comm, [&] {
      raise_write_error();
      more = feed.fill(chunk, limits, adder);
    });
    // Every rank must have read the same chunk (the same files): otherwise their collectives would no
    // longer match. The test uses only all-reduced values, so all ranks take the same branch.
    const std::uint64_t pairs = chunk.meta.size();
    const std::uint64_t most = comm.allreduce_max(pairs);
    if (comm.allreduce_sum(pairs) != most * static_cast<std::uint64_t>(comm.size())) {
      throw dist::CollectiveError(
          ErrorKind::kInput,
          fmt::format("the ranks read different numbers of pairs after pair {} (were --query and --target "
                      "changed during the run, or do the ranks see different files?)",
                      totals.pairs));
    }
    if (!more) break;
    totals.pairs += pairs;
    totals.cells += chunk.batch.cells();
    while (in_flight.size() >= kChunksInFlight) write_oldest();
    DistInFlight job;
    std::vector<std::uint64_t> cells(chunk.meta.size());
    for (std::size_t i = 0; i < cells.size(); ++i)
      cells[i] = std::uint64_t{chunk.batch.query(i).size()} * chunk.batch.target(i).size();
    job.bounds = dist::align_split(cells, comm.size());
    const auto rank = static_cast<std::size_t>(comm.rank());
    const std::uint64_t begin = job.bounds[rank], end = job.bounds[rank + 1];
    if (end > begin) {
      align::Batch mine;
      std::size_t residues = 0;
      for (std::uint64_t i = begin; i < end; ++i)
        residues += chunk.batch.query(i).size() + chunk.batch.target(i).size();
      mine.reserve(end - begin, residues);
      for (std::uint64_t i = begin; i < end; ++i) mine.add(chunk.batch.query(i), chunk.batch.target(i));
      job.results = aligner.submit(std::move(mine));
    }
    chunk.batch = align::Batch();
    job.chunk = std::move(chunk);
    in_flight.push_back(std::move(job));
  }
  while (!in_flight.empty()) write_oldest();
  dist::agree(comm, [&] {
    raise_write_error();
    if (out != nullptr) out->commit();
  });
  return totals;
}

void run_align(const AlignOptions& o, const GlobalOptions& global) {
  const dist::Comm one_process;
  const dist::Comm& comm = global.comm != nullptr ? *global.comm : one_process;
  const bool distributed = comm.size() > 1;
  // Under MPI every rank runs this with the same arguments and reads both inputs itself; the steps that
  // can fail run inside dist::agree (an error on any rank stops all of them together, rank 0 reports it),
  // and rank 0 alone writes. With one process agree() is just the call.
  std::optional<AlignFormat> format;
  std::optional<SequenceReader> query_reader, target_reader;
  std::optional<Alphabet> alphabet;
  align::Config config;
  std::optional<sw::PassModel> model;
  std::optional<SequenceTable> queries, targets;
  std::unique_ptr<PairFeed> feed;
  std::vector<SamReference> references;
  std::optional<OutputFile> out;
  std::unique_ptr<align::Aligner> aligner;
  std::chrono::steady_clock::time_point start;
  dist::agree(comm, [&] {
    // Options that need no data.
    format = parse_align_format(o.format);
    if (!format)
      throw Error(ErrorKind::kUsage, fmt::format("--format {}: expected tsv, sam or paf", o.format));
    const std::optional<align::Mode> mode = align::parse_mode(o.mode);
    if (!mode)
      throw Error(ErrorKind::kUsage, fmt::format("--mode {}: expected local, global or semiglobal", o.mode));
    const std::optional<DeviceMode> device = parse_device_mode(global.device);
    if (!device)
      throw Error(ErrorKind::kUsage, fmt::format("--device {}: expected auto, cpu or gpu", global.device));
    if (o.batch_pairs == 0 || o.batch_residues == 0) {
      throw Error(ErrorKind::kUsage, "--batch-pairs and --batch-residues must be at least 1");
    }
    if (o.query == "-" && o.target == "-") {
      throw Error(ErrorKind::kUsage, "--query and --target cannot both be stdin");
    }
    if (distributed && (o.query == "-" || o.target == "-")) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("--{} - : under MPI every rank reads --query and --target itself, so they "
                              "cannot be stdin",
                              o.query == "-" ? "query" : "target"));
    }

    // The alphabet: given, or guessed from the start of the query file; the target is read with it.
    ReaderOptions reader_options;
    reader_options.alphabet = alphabet_option(o.alphabet == "auto" ? std::string() : o.alphabet);
    query_reader.emplace(o.query, reader_options);
    alphabet.emplace(query_reader->alphabet());
    reader_options.alphabet = alphabet->kind();
    target_reader.emplace(o.target, reader_options);

    config.matrix = choose_matrix(o, alphabet->kind());
    config.gaps = config.matrix.default_gaps();
    if (o.gap_open_opt->count() > 0) config.gaps.open = o.gap_open;
    if (o.gap_extend_opt->count() > 0) config.gaps.extend = o.gap_extend;
    config.mode = *mode;
    config.traceback = *format != AlignFormat::kTsv || o.cigar;
    config.device = *device;
    config.gpus = global.gpus;
    config.threads = global.thread_request();
    config.validate();
    model.emplace(sw::PassModel::make(config.matrix, config.gaps, config.mode));

    // The header first (SAM needs the targets), then the pairs.
    if (!o.pairs.empty()) {
      // One table when both options name the same file (all-vs-some pairs within one set).
      queries = load_table(*query_reader);
      if (o.target != o.query) targets = load_table(*target_reader);
      const SequenceTable& target_table = targets ? *targets : *queries;
      auto list =
          std::make_unique<ListFeed>(*queries, target_table, load_pairs(o.pairs, *queries, target_table));
      if (*format == AlignFormat::kSam && comm.is_root()) {
        std::vector<bool> listed(target_table.seqs.size(), false);
        for (const PairIndex& p : list->pairs()) {
          if (listed[p.target]) continue;
          listed[p.target] = true;
          references.push_back({target_table.seqs[p.target].name, target_table.seqs[p.target].length()});
        }
      }
      feed = std::move(list);
    } else {
      if (*format == AlignFormat::kSam && comm.is_root())
        references = scan_sam_references(o.target, reader_options);
      feed = std::make_unique<ZipFeed>(*query_reader, *target_reader);
    }

    start = std::chrono::steady_clock::now();
    if (comm.is_root()) {
      out.emplace(o.output);
      if (*format == AlignFormat::kTsv) out->write(tsv_header(o.cigar));
      if (*format == AlignFormat::kSam) out->write(sam_header(references, kVersion));
    }
    if (distributed) {
      // The ranks of a node share its GPUs (resolve_devices gives this rank's share, select_local_devices);
      // a rank without one aligns on its CPU threads. The results are the same either way.
      global.resolve_engine_devices(config.device, config.gpus);
    }
    aligner = std::make_unique<align::Aligner>(config);
  });

  // SAM letters are needed only where records are formatted (rank 0).
  const PairAdder adder(*model, *alphabet, *format == AlignFormat::kSam && comm.is_root(), o.query);
  const ChunkLimits limits{o.batch_pairs, o.batch_residues};
  std::optional<ResultWriter> writer;
  if (comm.is_root()) writer.emplace(*out, *format, o.cigar);
  RunTotals totals;
  if (distributed) {
    totals = run_pipeline_distributed(comm, *feed, limits, adder, *aligner, writer ? &*writer : nullptr,
                                      out ? &*out : nullptr);
  } else {
    totals = run_pipeline(*feed, limits, adder, *aligner, *writer);
    out->commit();
  }
  if (!comm.is_root()) return;

  // Every rank read both files whole: rank 0's counts are those of one process.
  const std::uint64_t unknown = query_reader->unknown_letters() + target_reader->unknown_letters();
  if (unknown > 0) {
    fmt::print(stderr, "warpsearch: warning: {} letters outside the {} alphabet were aligned as {}\n",
               unknown, to_string(alphabet->kind()), alphabet->is_nucleotide() ? "N" : "X");
  }
  if (!global.quiet) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string where = distributed
                                  ? fmt::format("{} MPI ranks (rank 0: {})", comm.size(), aligner->describe())
                                  : aligner->describe();
    fmt::print(stderr, "align: {} pair{} ({}, {}, {} {}/{}), {} cells in {:.2f} s ({:.2f} GCUPS) on {}\n",
               totals.pairs, totals.pairs == 1 ? "" : "s", align::mode_name(config.mode),
               to_string(alphabet->kind()), config.matrix.name(), config.gaps.open, config.gaps.extend,
               totals.cells, seconds, seconds > 0 ? static_cast<double>(totals.cells) / seconds / 1e9 : 0.0,
               where);
  }
}

}  // namespace

void register_align(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<AlignOptions>();
  CLI::App* cmd =
      app.add_subcommand("align", "Align pairs of sequences one-to-one (local, global or semiglobal)");
  cmd->add_option("--query", opts->query, "Queries: FASTA or FASTQ, plain or gzip ('-' reads stdin)")
      ->required();
  cmd->add_option("--target", opts->target, "Targets: FASTA or FASTQ, plain or gzip ('-' reads stdin)")
      ->required();
  cmd->add_option("--pairs", opts->pairs,
                  "Align these pairs instead of query i with target i: one 'QUERY_NAME TARGET_NAME' per line "
                  "(whitespace or tab separated, '#' starts a comment line); loads both sequence files into "
                  "memory");
  cmd->add_option("-o,--output", opts->output, "Output file ('-' is stdout); never left partial on error")
      ->capture_default_str();
  cmd->add_option("--format", opts->format, "tsv (BLAST-like table), sam or paf (both imply the alignment)")
      ->capture_default_str()
      ->check(CLI::IsMember({"tsv", "sam", "paf"}));
  cmd->add_flag("--cigar", opts->cigar, "TSV: add the columns cigar, identity (percent) and alnlen");
  cmd->add_option("--mode", opts->mode,
                  "local (Smith-Waterman), global (Needleman-Wunsch) or semiglobal (whole query, free target "
                  "ends)")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "global", "semiglobal"}));
  cmd->add_option("--alphabet", opts->alphabet,
                  "dna, rna, protein or auto (auto: DNA when >= 90% of the query file's first letters are "
                  "ACGTUN)")
      ->capture_default_str();
  opts->matrix_opt =
      cmd->add_option("--matrix", opts->matrix,
                      "Protein (or nucleotide) substitution matrix: a built-in name (BLOSUM45/50/62/"
                      "80/90, PAM30/70/250) or an NCBI-format file [default: BLOSUM62 for protein]");
  opts->match_opt =
      cmd->add_option("--match", opts->match, "DNA: score of a match (1..127)")->capture_default_str();
  opts->mismatch_opt = cmd->add_option("--mismatch", opts->mismatch, "DNA: score of a mismatch (-128..-1)")
                           ->capture_default_str();
  opts->gap_open_opt = cmd->add_option("--gap-open", opts->gap_open,
                                       "Gap open cost; a gap of length k costs open + k*extend [default: the "
                                       "matrix's BLAST+ default: BLOSUM62 11, DNA 5]");
  opts->gap_extend_opt = cmd->add_option("--gap-extend", opts->gap_extend,
                                         "Gap extension cost per residue [default: BLOSUM62 1, DNA 2]");
  cmd->add_option("--batch-pairs", opts->batch_pairs, "Pairs per chunk handed to the aligner")
      ->capture_default_str();
  cmd->add_option("--batch-residues", opts->batch_residues,
                  "Residues (queries + targets) per chunk; a chunk ends at whichever limit comes first")
      ->capture_default_str();
  cmd->footer(
      "Pairs: query i is aligned with target i (the files must hold the same number of sequences), or\n"
      "the pairs named in --pairs. Output is in input order, whatever --threads/--device/--gpus.\n"
      "Scoring: protein BLOSUM62 with gap open 11, extend 1; DNA match 2, mismatch -3, gap open 5,\n"
      "extend 2 (BLAST+ blastn's). A gap of length k costs open + k*extend (BLAST+ convention; parasail's\n"
      "and EMBOSS's open = our open + extend). Another --matrix gets its BLAST+ gap defaults.\n"
      "Formats: TSV columns query target score qstart qend tstart tend [cigar identity alnlen], 1-based\n"
      "inclusive coordinates as in BLAST tabular, 0 0 0 0 for an empty local alignment (score 0);\n"
      "identity = 100 * matches / alignment columns (BLAST pident). SAM: one record per pair, CIGAR with\n"
      "=/X/I/D and soft clips, AS/NM tags, FLAG 4 when empty. PAF: 0-based half-open coordinates, AS and\n"
      "cg tags. The one-to-one mode streams (bounded memory); --pairs loads both files into memory.\n"
      "Details: docs/ALIGN.md.\n"
      "Examples:\n"
      "  warpsearch align --query reads.fa --target refs.fa > scores.tsv\n"
      "  warpsearch align --query a.fa --target b.fa --mode global --cigar -o aln.tsv\n"
      "  warpsearch align --query q.fq --target t.fa --alphabet dna --format sam -o aln.sam\n"
      "  warpsearch align --query prot.fa --target prot.fa --pairs pairs.tsv --matrix BLOSUM50 --format paf\n"
      "  warpsearch --device cpu --threads 8 align --query a.fa --target b.fa --gap-open 10 --gap-extend 2");
  cmd->callback([opts, &global] { run_align(*opts, global); });
}

}  // namespace warpsearch::cli
