// scan.cpp: the scan driver (scan.hpp): Config::validate, parse_strand_mode and Scanner, which streams
// the target file through the section engine (sections.hpp) on CPU threads or GPUs, keeps the query's
// global candidate pool (select.hpp), rescans with a larger pool until the selection is provably
// exact, and traces the reported alignments back (traceback.hpp, kernel 2).
//
// Per query (Scanner::scan):
//   1. Query codes: residues inside soft-mask runs become N / X when Config::soft_mask is set. The plus
//      strand scans the query, the minus strand its reverse complement (strand.hpp), both against the
//      forward target. Protein scans are plus only. One runner set per strand, made for this query: one
//      CPU runner, or GPU runners (Core::make_runners): with both strands on an even number of GPUs
//      each strand gets half of them to itself, otherwise each strand runs on every GPU, sharing each
//      one with the other strand (a runner pair per GPU: both strands' tasks run in one kernel).
//   2. Scan pass: target records are read one at a time with the matrix's alphabet; every record is
//      listed in QueryResult::targets (file order = Hit::target_index = Candidate::seq); empty records
//      are counted (ScanStats::empty_targets) and not scanned; masked like the query. Each record and
//      strand goes through scan_sections() with the pool's admission score as the minimum (ties pass)
//      and the pool capacity as the limit, and the list into the pool.
//   3. pool.select(top, min_score); when it is not exact the whole scan pass is repeated with 16 times
//      the capacity (ScanStats::rescans) until it is: the result never depends on the pool size.
//   4. Traceback pass: reads the target file again, keeping only records with reported hits (one at a
//      time) and stopping after the last one needed; the hits of a record are traced in parallel on
//      the thread pool. The scan pass's last record is still in memory and is used directly, so a
//      single-sequence target file is never read twice for tracebacks.
//   stdin ("-") cannot be read twice: its records (prepared codes) are kept in memory during the first
//   scan pass, and rescans and tracebacks use that copy.
//
// Wrong-alphabet targets: the reader maps letters outside the alphabet to N / X silently, so the driver
// checks the file's first non-empty records (until at least 64 Ki residues, or all of them) with
// guess_alphabet's rule -- nucleotide when >= 90% of the letters are A, C, G, T/U or N -- before scanning
// any of them, and reports a mismatch with the matrix as Error(kInput, ..., file, line of the first
// record). Letters the reader mapped to N count as non-nucleotide.
//
// Under MPI (Config::comm with several ranks; docs/SCAN.md "Under MPI") every rank runs this same driver
// on the same files: every rank reads every target record and scans it with the collective scan_sections
// (each rank computes its share of the sections on its own runners), so every rank holds the same pool
// and the same result. With both strands on an even number of ranks, the plus strand is scanned by the
// first half of the ranks and the minus strand by the second, each half on its own communicator
// (Comm::split; no pass-1 overlap between the strands), and the halves exchange their lists; otherwise
// the strands run one after the other over all ranks (only the main thread may call MPI, so a rank's
// strands cannot run concurrently; no runner pairs). Each rank traces the reported hits i with i mod R =
// its rank, and the alignments are exchanged. Every step that can fail on some ranks only (opening and
// reading the target, a runner, a traceback) is agreed (dist::agree / dist::exchange), and rank 0
// checks that all ranks read the same records.
//
// E-values: when stats::gapped_params() knows the scoring, E = K * m * N * exp(-lambda * S) with the raw
// search space m = query length, N = total target residues x strands searched (no edge/length
// correction); bits = (lambda * S - ln K) / ln 2.
#include "warpsearch/scan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "dist/bytes.hpp"
#include "scan/model.hpp"
#include "scan/sections.hpp"
#include "scan/select.hpp"
#include "scan/strand.hpp"
#include "scan/traceback.hpp"
#include "stats/karlin.hpp"
#if WARPSEARCH_HAVE_CUDA
#include "scan/gpu_runner.hpp"
#endif
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::scan {

std::optional<StrandMode> parse_strand_mode(std::string_view text) {
  if (text == "both") return StrandMode::kBoth;
  if (text == "plus") return StrandMode::kPlus;
  if (text == "minus") return StrandMode::kMinus;
  return std::nullopt;
}

void Config::validate() const {
  const AlphabetKind kind = matrix.alphabet();
  if (kind != AlphabetKind::kDna && kind != AlphabetKind::kRna && kind != AlphabetKind::kProtein)
    throw Error(ErrorKind::kUsage, fmt::format("scoring matrix {} has an unknown alphabet", matrix.name()));
  if (matrix.max_score() <= 0)
    throw Error(
        ErrorKind::kUsage,
        fmt::format("scoring matrix {} has no positive score: no local alignment exists", matrix.name()));
  gaps.validate();
  if (static_cast<long long>(gaps.open) + gaps.extend < 1)
    throw Error(ErrorKind::kUsage, "gap open + gap extend must be at least 1 (a gap must cost something)");
  if (top < 1) throw Error(ErrorKind::kUsage, "the number of alignments to report (top) must be at least 1");
  if (min_score < 1)
    throw Error(ErrorKind::kUsage, fmt::format("minimum score {} must be at least 1", min_score));
  if (kind == AlphabetKind::kProtein && strands == StrandMode::kMinus)
    throw Error(ErrorKind::kUsage,
                "the minus strand needs a nucleotide scoring matrix (protein scans are plus only)");
  if (overlap < 0)
    throw Error(ErrorKind::kUsage, fmt::format("section overlap {} must not be negative", overlap));
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Residues sampled for the alphabet check (the reader's own guess looks at up to 64 KiB).
constexpr std::uint64_t kAlphabetSample = 64 * 1024;

// A non-empty target record ready to scan: soft mask applied.
struct PreparedTarget {
  std::uint32_t index = 0;  // record index in the file
  std::vector<std::uint8_t> codes;
};

// guess_alphabet's rule over the first records' residues (see the file comment).
class AlphabetCheck {
 public:
  explicit AlphabetCheck(const Alphabet& alphabet) : alphabet_(alphabet) {
    for (const char c : std::string_view("ACGTUN")) {
      const auto code = alphabet.code(c);
      if (code) nucleotide_code_[*code] = true;
    }
  }
  bool decided() const { return decided_; }
  bool full() const { return total_ >= kAlphabetSample; }
  // `foreign` letters of this record were mapped to the unknown code by the reader.
  void add(std::span<const std::uint8_t> codes, std::uint64_t foreign, std::uint64_t line) {
    if (total_ == 0) first_line_ = line;
    for (const std::uint8_t c : codes) nucleotide_ += c < kMaxCodes && nucleotide_code_[c] ? 1 : 0;
    // Foreign letters became N (nucleotide) or X (protein); only N is counted above.
    if (alphabet_.is_nucleotide()) nucleotide_ -= std::min(nucleotide_, foreign);
    total_ += codes.size();
  }
  // Throws when the sample's guessed kind does not match the matrix's.
  void check(const std::string& path, const std::string& matrix_name) {
    decided_ = true;
    if (total_ == 0) return;
    const bool looks_nucleotide = static_cast<double>(nucleotide_) >= 0.9 * static_cast<double>(total_);
    if (looks_nucleotide == alphabet_.is_nucleotide()) return;
    throw Error(
        ErrorKind::kInput,
        fmt::format("the target sequences look like {} ({} of the first {} residues are A, C, G, T/U or "
                    "N) but the scoring matrix {} is {}",
                    looks_nucleotide ? "nucleotide" : "protein", nucleotide_, total_, matrix_name,
                    to_string(alphabet_.kind())),
        path, first_line_);
  }

 private:
  Alphabet alphabet_;
  bool nucleotide_code_[kMaxCodes] = {};
  std::uint64_t nucleotide_ = 0, total_ = 0, first_line_ = 0;
  bool decided_ = false;
};

std::size_t default_pool(std::size_t top) {
  const std::size_t scaled =
      top > std::numeric_limits<std::size_t>::max() / 64 ? std::numeric_limits<std::size_t>::max() : 64 * top;
  return std::max<std::size_t>(scaled, 65536);
}

Config validated(Config config) {
  config.validate();
  return config;
}

// Everything a Scanner holds (Scanner::Impl derives from it, so the query code below can name it).
struct Core {
  Config config;
  ScanModel model;
  Alphabet alphabet;
  DeviceSelection selection;
  mutable ThreadPool pool;  // tracebacks
  std::optional<stats::KarlinParams> karlin;
  bool plus = true, minus = false;
  dist::Comm one_process;
  const dist::Comm& comm;  // Config::comm, or this process alone
  bool distributed = false;

  explicit Core(Config cfg)
      : config(validated(std::move(cfg))),
        model(ScanModel::make(config.matrix, config.gaps)),
        alphabet(config.matrix.alphabet()),
        selection(select_devices(config.device, config.gpus)),
        pool(config.threads),
        karlin(stats::gapped_params(config.matrix, config.gaps)),
        comm(config.comm != nullptr ? *config.comm : one_process),
        distributed(comm.size() > 1) {
    const bool nucleotide = alphabet.is_nucleotide();
    plus = !nucleotide || config.strands != StrandMode::kMinus;
    minus = nucleotide && config.strands != StrandMode::kPlus;
    halves = distributed && plus && minus && comm.size() % 2 == 0;
  }

  // Distributed with both strands on an even number of ranks: the plus strand on ranks [0, R/2), the minus
  // strand on [R/2, R), each half scanning its strand on its own communicator, both at once.
  bool halves = false;
  bool plus_half() const { return comm.rank() < comm.size() / 2; }

  // The runners of both strands (a strand that is not searched gets none) for these query codes: one
  // CPU runner per strand, or GPU runners. With both strands on an even number of GPUs each strand gets
  // half of them (no shared SMs, no section overlap between strands); otherwise each GPU gets a pair
  // of runners, one per strand, whose launches run as one kernel (make_gpu_runner_pair). Distributed, a
  // rank's strands run one after the other, each on every GPU of the rank (one runner per strand and GPU,
  // no pairs); with strand halves a rank makes its own strand's runners only.
  void make_runners(std::span<const std::uint8_t> plus_codes, std::span<const std::uint8_t> minus_codes,
                    std::vector<std::unique_ptr<SectionRunner>>& plus_runners,
                    std::vector<std::unique_ptr<SectionRunner>>& minus_runners) const {
    const bool want_plus = plus && (!halves || plus_half());
    const bool want_minus = minus && (!halves || !plus_half());
#if WARPSEARCH_HAVE_CUDA
    if (selection.use_gpu) {
      const std::vector<DeviceInfo>& devices = selection.devices;
      if (distributed) {
        for (const DeviceInfo& d : devices) {
          if (want_plus) plus_runners.push_back(make_gpu_runner(model, plus_codes, d.id));
          if (want_minus) minus_runners.push_back(make_gpu_runner(model, minus_codes, d.id));
        }
        return;
      }
      if (want_plus && want_minus && devices.size() % 2 != 0) {
        for (const DeviceInfo& d : devices) {
          auto pair = make_gpu_runner_pair(model, plus_codes, minus_codes, d.id);
          plus_runners.push_back(std::move(pair.first));
          minus_runners.push_back(std::move(pair.second));
        }
        return;
      }
      const std::size_t half = want_plus && want_minus ? devices.size() / 2 : devices.size();
      for (std::size_t k = 0; k < devices.size(); ++k) {
        if (want_plus && k < half) plus_runners.push_back(make_gpu_runner(model, plus_codes, devices[k].id));
        if (want_minus && (!want_plus || k >= half))
          minus_runners.push_back(make_gpu_runner(model, minus_codes, devices[k].id));
      }
      return;
    }
#endif
    if (selection.use_gpu) throw Error(ErrorKind::kInternal, "GPU selected in a build without CUDA");
    if (want_plus) plus_runners.push_back(make_cpu_runner(model, plus_codes, config.threads));
    if (want_minus) minus_runners.push_back(make_cpu_runner(model, minus_codes, config.threads));
  }

  // Memory for traceback pointers per concurrent traceback (4 GiB shared by the pool, at least 64 MiB).
  TracebackLimits traceback_limits() const {
    TracebackLimits limits;
    limits.max_matrix_bytes =
        std::max<std::uint64_t>(std::uint64_t{64} << 20, (std::uint64_t{4} << 30) / pool.size());
    return limits;
  }

  // The errors of the query itself (Scanner::check_query).
  void check_query(const Sequence& query) const {
    const std::uint64_t m = query.length();
    if (m == 0) throw Error(ErrorKind::kInput, fmt::format("query '{}' is empty", query.name));
    if (m > static_cast<std::uint64_t>(kMaxLength))
      throw Error(ErrorKind::kInput, fmt::format("query '{}' has {} residues; the scan supports at most {}",
                                                 query.name, m, kMaxLength));
    const int size = alphabet.size();
    for (const std::uint8_t c : query.residues)
      if (c >= size)
        throw Error(ErrorKind::kInput, fmt::format("query '{}' has residue code {}, not a {} code",
                                                   query.name, c, to_string(alphabet.kind())));
  }

  ReaderOptions reader_options() const {
    ReaderOptions options;
    options.alphabet = alphabet.kind();
    options.allow_empty_sequences = true;
    return options;
  }
};

// The state of one Scanner::scan call.
class QueryRun {
 public:
  QueryRun(const Core& impl, const Sequence& query, const std::string& path)
      : impl_(impl),
        comm_(impl.comm),
        distributed_(impl.distributed),
        query_(query),
        path_(path),
        from_stdin_(path == "-") {}

  QueryResult run() {
    const auto start = Clock::now();
    result_.query_name = query_.name;
    result_.query_length = query_.length();
    step([&] { prepare_query(); });
    if (impl_.halves) strand_comm_.emplace(comm_.split(impl_.plus_half() ? 0 : 1));
    // The runner count of every rank that scans with this rank (the same for both strands).
    const std::vector<dist::Bytes> counts = dist::exchange_all(section_comm(), [&] {
      dist::ByteWriter w;
      w.integer(static_cast<std::uint64_t>(!plus_ptrs_.empty() ? plus_ptrs_.size() : minus_ptrs_.size()));
      return w.take();
    });
    for (const dist::Bytes& b : counts) {
      dist::ByteReader in(b);
      runners_per_rank_.push_back(static_cast<std::size_t>(in.integer<std::uint64_t>()));
    }
    std::size_t capacity = impl_.config.pool != 0 ? impl_.config.pool : default_pool(impl_.config.top);
    CandidatePool::Selection selection;
    for (bool first = true;; first = false) {
      CandidatePool pool(capacity);
      pool_limit_ = capacity;
      if (first)
        first_pass(pool);
      else
        rescan_pass(pool);
      selection = pool.select(impl_.config.top, impl_.config.min_score);
      if (selection.exact) break;
      if (capacity > std::numeric_limits<std::size_t>::max() / 16)
        throw Error(ErrorKind::kInternal, "candidate pool selection is not exact at the largest capacity");
      capacity *= 16;
      ++result_.stats.rescans;
    }
    const std::uint64_t strands = (impl_.plus ? 1u : 0u) + (impl_.minus ? 1u : 0u);
    ScanStats& st = result_.stats;
    st.target_sequences = result_.targets.size();
    st.cells = static_cast<std::uint64_t>(query_codes_.size()) * st.target_residues * strands;
    make_hits(selection.reported, strands);
    if (impl_.config.traceback && !selection.reported.empty()) {
      traceback_pass(selection.reported);
      if (distributed_) share_alignments();
    }
    st.total_seconds = seconds_since(start);
    return std::move(result_);
  }

 private:
  // The ranks that share this rank's strand scans: its strand half, or all of them.
  const dist::Comm& section_comm() const { return strand_comm_ ? *strand_comm_ : comm_; }

  // Runs f as one step of all ranks (dist::agree: an error on any rank throws CollectiveError on all).
  void step(const std::function<void()>& f) const {
    if (distributed_)
      dist::agree(comm_, f);
    else
      f();
  }

  // Distributed: rank 0 checks that every rank read the same record (name and length; got: any), the
  // record_index-th of the file.
  void check_same_record(bool got, const std::string& name, std::uint64_t length,
                         std::uint64_t record_index) {
    if (!distributed_) return;
    const std::vector<dist::Bytes> ids = dist::exchange(comm_, [&] {
      dist::ByteWriter w;
      w.boolean(got);
      if (got) {
        w.str(name);
        w.integer(length);
      }
      return w.take();
    });
    dist::agree(comm_, [&] {
      for (std::size_t r = 1; r < ids.size(); ++r)
        if (ids[r] != ids[0])
          throw Error(ErrorKind::kIo,
                      fmt::format("rank {} read another target record {} than rank 0 (is the target the same "
                                  "file on every rank?)",
                                  r, record_index + 1),
                      path_);
    });
  }

  void prepare_query() {
    if (distributed_ && from_stdin_)
      throw Error(ErrorKind::kUsage, "under MPI every rank reads the target file itself: it cannot be stdin");
    impl_.check_query(query_);
    query_codes_ = query_.residues;
    if (impl_.config.soft_mask) apply_soft_mask(query_codes_, query_.soft_mask, impl_.alphabet.unknown());
    if (impl_.minus) rc_codes_ = reverse_complement(query_codes_);
    impl_.make_runners(query_codes_, rc_codes_, plus_runners_, minus_runners_);
    for (auto& r : plus_runners_) plus_ptrs_.push_back(r.get());
    for (auto& r : minus_runners_) minus_ptrs_.push_back(r.get());
  }

  // Applies the soft mask (when enabled) and checks the 32-bit limits.
  PreparedTarget prepare(Sequence& seq, std::uint32_t index) const {
    if (!fits_int32(impl_.model, static_cast<std::int64_t>(query_codes_.size()),
                    static_cast<std::int64_t>(seq.length())))
      throw Error(ErrorKind::kInput,
                  fmt::format("target '{}' ({} residues) against query '{}' ({} residues) exceeds the scan's "
                              "32-bit limits (at most {} residues each, and max score x shorter length below "
                              "2^30)",
                              seq.name, seq.length(), query_.name, query_codes_.size(), kMaxLength),
                  path_, seq.line);
    PreparedTarget t;
    t.index = index;
    t.codes = std::move(seq.residues);
    if (impl_.config.soft_mask) apply_soft_mask(t.codes, seq.soft_mask, impl_.alphabet.unknown());
    return t;
  }

  // Scans one prepared target on every strand into the pool.
  void scan_target(const PreparedTarget& t, CandidatePool& pool) {
    const auto start = Clock::now();
    const SectionPlanOptions options{impl_.config.overlap};
    // Both strands filter with the admission score taken before either is added: the pool only needs
    // every list to be filtered at or below its admission score at the time of the add, and that score
    // never decreases.
    const std::int32_t min_score = std::max(impl_.config.min_score, pool.admission_score());
    struct StrandScan {
      CandidateList list;
      SectionStats stats;
    };
    auto one = [&](std::span<SectionRunner* const> runners, Strand strand) {
      StrandScan r;
      r.list = scan_sections(section_comm(), runners_per_rank_, runners, t.codes,
                             static_cast<std::int64_t>(query_codes_.size()), t.index, strand, min_score,
                             pool_limit_, options, &r.stats);
      return r;
    };
    std::vector<StrandScan> done;
    if (impl_.plus && impl_.minus && impl_.selection.use_gpu && !distributed_) {
      // On GPUs the two strands run concurrently (each runner has its own stream; on shared GPUs the
      // runner pairs combine their launches, see Core::make_runners). Results are added in strand order.
      auto minus = std::async(std::launch::async, [&] { return one(minus_ptrs_, Strand::kMinus); });
      StrandScan plus;
      try {
        plus = one(plus_ptrs_, Strand::kPlus);
      } catch (...) {
        minus.wait();
        throw;
      }
      done.push_back(std::move(plus));
      done.push_back(minus.get());
    } else if (impl_.halves) {
      // Each half scans its strand (collectives within the half); then every rank gets both lists from
      // the halves' first ranks, plus first.
      const std::vector<dist::Bytes> lists = dist::exchange_all(comm_, [&] {
        const bool plus = impl_.plus_half();
        const StrandScan r = plus ? one(plus_ptrs_, Strand::kPlus) : one(minus_ptrs_, Strand::kMinus);
        if (!section_comm().is_root()) return dist::Bytes();
        dist::ByteWriter w;
        write_list(w, r.list);
        for (const std::uint64_t v :
             {std::uint64_t{r.stats.sections}, std::uint64_t{r.stats.fixups}, r.stats.cells})
          w.integer(v);
        return w.take();
      });
      for (const std::size_t from : {std::size_t{0}, lists.size() / 2}) {
        dist::ByteReader in(lists.at(from));
        StrandScan r;
        r.list = read_list(in);
        r.stats.sections = static_cast<std::size_t>(in.integer<std::uint64_t>());
        r.stats.fixups = static_cast<std::size_t>(in.integer<std::uint64_t>());
        r.stats.cells = in.integer<std::uint64_t>();
        in.expect_done();
        done.push_back(std::move(r));
      }
    } else {
      if (impl_.plus) done.push_back(one(plus_ptrs_, Strand::kPlus));
      if (impl_.minus) done.push_back(one(minus_ptrs_, Strand::kMinus));
    }
    for (const StrandScan& r : done) {
      pool.add(r.list);
      result_.stats.sections += r.stats.sections;
      result_.stats.fixups += r.stats.fixups;
      result_.stats.computed_cells += r.stats.cells;
    }
    result_.stats.kernel1_seconds += seconds_since(start);
  }

  SequenceReader open() const { return SequenceReader(path_, impl_.reader_options()); }

  void first_pass(CandidatePool& pool) {
    std::optional<SequenceReader> reader;
    step([&] { reader.emplace(open()); });
    Sequence seq;
    AlphabetCheck check(impl_.alphabet);
    std::vector<PreparedTarget> pending;  // read before the alphabet check could decide
    std::vector<PreparedTarget> ready;    // to scan now
    std::uint64_t unknown_before = 0;
    auto deliver = [&](PreparedTarget&& t) {
      scan_target(t, pool);
      if (from_stdin_)
        buffer_.push_back(std::move(t));
      else
        last_ = std::move(t);
    };
    auto decide = [&] {
      check.check(path_, impl_.config.matrix.name());
      for (PreparedTarget& t : pending) ready.push_back(std::move(t));
      pending.clear();
    };
    for (;;) {
      // Reading, checking and preparing a record is one step; scanning it (collective) follows.
      bool got = false;
      std::string name;
      std::uint64_t length = 0;
      step([&] {
        got = reader->next(seq);
        if (!got) {
          if (!check.decided()) decide();
          return;
        }
        name = seq.name;
        length = seq.length();
        const std::uint64_t foreign = reader->unknown_letters() - unknown_before;
        unknown_before = reader->unknown_letters();
        if (result_.targets.size() > std::numeric_limits<std::uint32_t>::max())
          throw Error(ErrorKind::kInput, "more than 2^32 target sequences", path_, seq.line);
        const auto index = static_cast<std::uint32_t>(result_.targets.size());
        result_.targets.emplace_back(seq.name, seq.length());
        if (seq.residues.empty()) {
          ++result_.stats.empty_targets;
          return;
        }
        result_.stats.target_residues += seq.length();
        if (!check.decided()) check.add(seq.residues, foreign, seq.line);
        PreparedTarget t = prepare(seq, index);
        if (check.decided()) {
          ready.push_back(std::move(t));
          return;
        }
        pending.push_back(std::move(t));
        if (check.full()) decide();
      });
      check_same_record(got, name, length, got ? result_.targets.size() - 1 : result_.targets.size());
      for (PreparedTarget& t : ready) deliver(std::move(t));
      ready.clear();
      if (!got) break;
    }
  }

  void rescan_pass(CandidatePool& pool) {
    if (from_stdin_) {
      for (const PreparedTarget& t : buffer_) scan_target(t, pool);
      return;
    }
    read_again(
        [&](PreparedTarget&& t) {
          scan_target(t, pool);
          last_ = std::move(t);
          return true;
        },
        std::numeric_limits<std::uint32_t>::max());
  }

  // Reads the file again up to record `last_index`, checking it against the first pass, and calls
  // fn(target) for each non-empty record for which wanted(index) holds (fn returns false to stop). Each
  // record is read in a step of all ranks; fn runs outside it (it may scan: a collective).
  template <class Fn, class Wanted>
  void read_again(Fn&& fn, std::uint32_t last_index, Wanted&& wanted) {
    std::optional<SequenceReader> reader;
    step([&] { reader.emplace(open()); });
    Sequence seq;
    std::uint64_t index = 0;
    const auto changed = [&](std::uint64_t line) {
      return Error(ErrorKind::kIo, "the target file changed during the scan", path_, line);
    };
    for (;;) {
      // The first pass counted the records (the same on every rank), so every rank stops together.
      if (index > last_index || index >= result_.targets.size()) break;
      std::optional<PreparedTarget> t;
      step([&] {
        if (!reader->next(seq)) throw changed(0);
        if (result_.targets[index].first != seq.name || result_.targets[index].second != seq.length())
          throw changed(seq.line);
        const auto i = static_cast<std::uint32_t>(index++);
        if (!seq.residues.empty() && wanted(i)) t = prepare(seq, i);
      });
      if (t && !fn(std::move(*t))) return;
    }
    if (last_index == std::numeric_limits<std::uint32_t>::max())
      step([&] {
        if (reader->next(seq)) throw changed(seq.line);
      });
  }
  template <class Fn>
  void read_again(Fn&& fn, std::uint32_t last_index) {
    read_again(std::forward<Fn>(fn), last_index, [](std::uint32_t) { return true; });
  }

  void make_hits(const std::vector<Candidate>& reported, std::uint64_t strands) {
    const double space = static_cast<double>(query_codes_.size()) *
                         static_cast<double>(result_.stats.target_residues) * static_cast<double>(strands);
    result_.hits.reserve(reported.size());
    for (const Candidate& c : reported) {
      Hit hit;
      set_hit_coordinates(hit, c, query_codes_.size());
      hit.target_index = c.seq;
      hit.target_name = result_.targets.at(c.seq).first;
      hit.target_length = result_.targets.at(c.seq).second;
      if (impl_.karlin) {
        hit.evalue = stats::evalue(*impl_.karlin, c.score, space);
        hit.bits = stats::bit_score(*impl_.karlin, c.score);
      }
      result_.hits.push_back(std::move(hit));
    }
  }

  // Traces the hits of one target (positions into `reported`) in parallel; distributed, only this rank's
  // (position mod R = rank), as one step of all ranks.
  void trace_target(const PreparedTarget& t, const std::vector<Candidate>& reported,
                    const std::vector<std::size_t>& all_of_target) {
    std::vector<std::size_t> which;
    for (const std::size_t k : all_of_target)
      if (k % static_cast<std::size_t>(comm_.size()) == static_cast<std::size_t>(comm_.rank()))
        which.push_back(k);
    step([&] { trace_hits(t, reported, which); });
  }
  void trace_hits(const PreparedTarget& t, const std::vector<Candidate>& reported,
                  const std::vector<std::size_t>& which) {
    const auto start = Clock::now();
    const TracebackLimits limits = impl_.traceback_limits();
    std::vector<Alignment> alignments(which.size());
    impl_.pool.parallel_for(which.size(), 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) {
        const Candidate& c = reported[which[k]];
        const std::span<const std::uint8_t> q =
            c.strand == Strand::kMinus ? std::span<const std::uint8_t>(rc_codes_) : query_codes_;
        alignments[k] = trace_alignment(impl_.model, q, t.codes, c, limits);
      }
    });
    for (std::size_t k = 0; k < which.size(); ++k) {
      Hit& hit = result_.hits[which[k]];
      Alignment& a = alignments[k];
      hit.cigar = std::move(a.cigar);
      hit.matches = a.matches;
      hit.mismatches = a.mismatches;
      hit.gap_opens = a.gap_opens;
      hit.gap_columns = a.gap_columns;
      hit.length = a.length;
      traced_.push_back(which[k]);
    }
    result_.stats.kernel2_seconds += seconds_since(start);
  }

  // Distributed: every rank's alignments to every rank.
  void share_alignments() {
    const std::vector<dist::Bytes> parts = dist::exchange_all(comm_, [&] {
      dist::ByteWriter w;
      w.integer(static_cast<std::uint64_t>(traced_.size()));
      for (const std::size_t k : traced_) {
        const Hit& h = result_.hits[k];
        w.integer(static_cast<std::uint64_t>(k));
        w.str(h.cigar);
        for (const std::uint32_t v : {h.matches, h.mismatches, h.gap_opens, h.gap_columns, h.length})
          w.integer(v);
      }
      return w.take();
    });
    std::size_t received = 0;
    for (std::size_t r = 0; r < parts.size(); ++r) {
      dist::ByteReader in(parts[r]);
      for (std::size_t n = in.count(8); n > 0; --n) {
        const auto k = in.integer<std::uint64_t>();
        if (k >= result_.hits.size() || k % parts.size() != r)
          throw Error(ErrorKind::kInternal, "a rank sent the alignment of another rank's hit");
        Hit& h = result_.hits[k];
        h.cigar = in.str();
        for (std::uint32_t* v : {&h.matches, &h.mismatches, &h.gap_opens, &h.gap_columns, &h.length})
          *v = in.integer<std::uint32_t>();
        ++received;
      }
      in.expect_done();
    }
    if (received != result_.hits.size())
      throw Error(ErrorKind::kInternal, "alignments missing after the exchange");
  }

  void traceback_pass(const std::vector<Candidate>& reported) {
    std::map<std::uint32_t, std::vector<std::size_t>> by_target;  // record index -> hit positions
    for (std::size_t k = 0; k < reported.size(); ++k) by_target[reported[k].seq].push_back(k);
    if (from_stdin_) {
      for (const auto& [index, which] : by_target) {
        const auto it =
            std::lower_bound(buffer_.begin(), buffer_.end(), index,
                             [](const PreparedTarget& t, std::uint32_t i) { return t.index < i; });
        if (it == buffer_.end() || it->index != index)
          throw Error(ErrorKind::kInternal, "a hit's target record is not buffered");
        trace_target(*it, reported, which);
      }
      return;
    }
    // The scan pass's last record is still in memory.
    if (last_) {
      const auto it = by_target.find(last_->index);
      if (it != by_target.end()) {
        trace_target(*last_, reported, it->second);
        by_target.erase(it);
      }
      last_.reset();
    }
    if (by_target.empty()) return;
    std::size_t remaining = by_target.size();
    read_again(
        [&](PreparedTarget&& t) {
          trace_target(t, reported, by_target.at(t.index));
          return --remaining > 0;
        },
        by_target.rbegin()->first, [&](std::uint32_t i) { return by_target.count(i) != 0; });
    if (remaining != 0) throw Error(ErrorKind::kIo, "the target file changed during the scan", path_);
  }

  const Core& impl_;
  const dist::Comm& comm_;
  const bool distributed_;
  const Sequence& query_;
  const std::string& path_;
  const bool from_stdin_;
  QueryResult result_;
  std::vector<std::uint8_t> query_codes_, rc_codes_;
  std::vector<std::unique_ptr<SectionRunner>> plus_runners_, minus_runners_;
  std::vector<SectionRunner*> plus_ptrs_, minus_ptrs_;
  std::size_t pool_limit_ = 0;                 // the pool's capacity: limit of each scanned list
  std::vector<PreparedTarget> buffer_;         // stdin only: every non-empty record, in file order
  std::optional<PreparedTarget> last_;         // files: the last record of the latest scan pass
  std::optional<dist::Comm> strand_comm_;      // strand halves: this rank's half
  std::vector<std::size_t> runners_per_rank_;  // runners per strand of every rank of section_comm()
  std::vector<std::size_t> traced_;            // hits this rank traced
};

}  // namespace

struct Scanner::Impl : Core {
  using Core::Core;
};

Scanner::Scanner(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Scanner::~Scanner() = default;

const Config& Scanner::config() const { return impl_->config; }

void Scanner::check_query(const Sequence& query) const { impl_->check_query(query); }

QueryResult Scanner::scan(const Sequence& query, const std::string& target_path) {
  return QueryRun(*impl_, query, target_path).run();
}

std::string Scanner::describe() const {
  if (impl_->selection.use_gpu) {
    // Identical consecutive device names are grouped: "NAME x2".
    std::string names;
    const auto& devices = impl_->selection.devices;
    for (std::size_t i = 0; i < devices.size();) {
      std::size_t j = i;
      while (j < devices.size() && devices[j].name == devices[i].name) ++j;
      names += (names.empty() ? "" : ", ") + devices[i].name + (j - i > 1 ? fmt::format(" x{}", j - i) : "");
      i = j;
    }
    return fmt::format("{} GPU{} ({}), {} CPU threads for traceback", devices.size(),
                       devices.size() == 1 ? "" : "s", names, impl_->pool.size());
  }
  return fmt::format("CPU, {} threads", impl_->pool.size());
}

}  // namespace warpsearch::scan
