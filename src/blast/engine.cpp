// engine.cpp: the blastp driver (engine.hpp): queries x database batches on a thread pool, preliminary
// selections per query, subjects kept while selected, traceback per (query, subject), final selection.
// In three steps: prepare (query contexts, groups), scan_part (the database or one part of it: stages 3-5,
// the pruned selections) and finish (the parts' selections merged, stages 6-7); under MPI each rank scans
// its part, rank 0 merges the selections, each rank traces its own selected subjects and rank 0 selects
// the final lists (finish_distributed).
#include "blast/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "blast/gpu_stage.hpp"
#include "blast/kappa.hpp"
#include "blast/scanner.hpp"
#include "blast/split.hpp"
#include "core/blast_db.hpp"
#include "dist/blast_wire.hpp"
#include "dist/shard.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::blast {

namespace {

// BLAST_SEQSRC_MINLENGTH (blast_seqsrc.h).
constexpr int kSeqSrcMinLength = 10;
// Subjects per scan task: about this many residues (with one query group, the unit of work of a thread).
constexpr std::size_t kTaskResidues = 1u << 18;
// The longest subject: diagonal offsets (subject offset + running offset, cleared past INT32_MAX / 4) and
// HSP coordinates are 32-bit, so a subject must stay well below 2^31 - INT32_MAX / 4 residues (the longest
// known protein has about 36,000).
constexpr std::size_t kMaxSubjectLength = std::size_t{1} << 30;
// The longest query: its diagonal array (a power of two >= length + window, 8 bytes a slot) stays <= 256 MiB.
constexpr std::size_t kMaxQueryLength = std::size_t{1} << 24;
// Threads decoding a batch of a BLAST+ or packed database: up to this many (the hardware's threads).
constexpr std::size_t kMaxReadThreads = 16;
// GPU seed stages (one stream each) per GPU.
constexpr std::size_t kStagesPerGpu = 2;
// With GPUs, a part of the database is read in at least this many batches (each of at least
// kMinGpuBatchResidues, at most gpu_batch_residues): the GPU's first batches and the CPU's work on the last
// one do not overlap, so a small part (one of several MPI ranks) in a few large batches waits longer; but
// every batch also costs the GPU a fixed latency (the tails of its scan and screen launches), so more
// batches slow a light search down (3 queries vs 453 M residues on an H200: 0.58 s with 16, 0.54 s with 8,
// and 20 queries 6.47 s vs 6.07 s).
constexpr std::size_t kMinGpuBatches = 8;
constexpr std::size_t kMinGpuBatchResidues = std::size_t{4} << 20;
// The reader thread reads ahead while fewer than this many residues wait in its queue (at least one batch
// waits): the database is read while the GPUs start up and while earlier batches are searched.
constexpr std::size_t kReadAheadResidues = std::size_t{512} << 20;
// Query groups (GroupScanner): up to this many query residues share one lookup table and subject pass.
constexpr std::size_t kGroupResidues = 1u << 14;
constexpr std::size_t kGroupDiagonals = 1u << 18;

// The preliminary selection of one query: the best `limit` entries by compare_hit_lists. Entries are
// appended per batch and pruned when the vector holds more than twice the limit; since compare_hit_lists
// is a total order over distinct oids, the survivors are the best `limit` whatever the arrival order.
struct Selection {
  std::size_t limit = 0;
  std::vector<PrelimEntry> entries;

  void prune(bool force) {
    if (entries.size() <= limit || (!force && entries.size() <= 2 * limit)) return;
    const auto better = [](const PrelimEntry& a, const PrelimEntry& b) {
      return compare_hit_lists(a.list, b.list) < 0;
    };
    std::nth_element(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(limit), entries.end(),
                     better);
    entries.resize(limit);
  }
  void sort() {
    std::sort(entries.begin(), entries.end(), [](const PrelimEntry& a, const PrelimEntry& b) {
      return compare_hit_lists(a.list, b.list) < 0;
    });
  }
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A batch of database sequences; first_oid: database id of the first.
struct Batch {
  std::vector<Sequence> seqs;  // read from a sequence file: the records (empty when read by id)
  // Read by id from a BLAST+ or packed database (names and deflines not read): the residues back to back,
  // sequence i at [starts[i], starts[i + 1]) of packed (one allocation, filled in parallel).
  std::unique_ptr<std::uint8_t[]> packed;
  std::vector<std::uint64_t> starts;
  std::int64_t first_oid = 0;
  bool by_id = false;

  std::size_t size() const { return by_id ? starts.size() - 1 : seqs.size(); }
  Residues residues(std::size_t i) const {
    return by_id ? Residues(packed.get() + starts[i], starts[i + 1] - starts[i]) : Residues(seqs[i].residues);
  }
  std::size_t length(std::size_t i) const { return by_id ? starts[i + 1] - starts[i] : seqs[i].length(); }
  std::size_t total() const {
    if (by_id) return starts.back();
    std::size_t n = 0;
    for (const Sequence& s : seqs) n += s.length();
    return n;
  }
};

// Reads batches on its own thread ahead of the consumer, while fewer than `budget` residues wait (at least
// one batch is read ahead). next() hands them over in order; nullptr at the end; an error of the reader is
// rethrown by next() once the batches read before it are taken. The destructor stops and joins the thread
// (a read in progress finishes first), so the reader never outlives what `read` refers to.
class BatchReader {
 public:
  using ReadFn = std::function<bool(Batch&)>;  // fills the next batch; false at the end
  BatchReader(ReadFn read, std::size_t budget)
      : read_(std::move(read)), budget_(budget), thread_([this](std::stop_token stop) { loop(stop); }) {}
  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;
  ~BatchReader() {
    thread_.request_stop();
    thread_.join();
  }

  // A new read-ahead budget (from the next read on).
  void set_budget(std::size_t budget) {
    const std::lock_guard lock(mutex_);
    budget_ = budget;
    ready_.notify_all();
  }

  std::unique_ptr<Batch> next() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return !queue_.empty() || finished_; });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return nullptr;
    }
    std::unique_ptr<Batch> b = std::move(queue_.front().first);
    queued_ -= queue_.front().second;
    queue_.pop_front();
    ready_.notify_all();
    return b;
  }

 private:
  void loop(std::stop_token stop) {
    try {
      for (;;) {
        {
          std::unique_lock lock(mutex_);
          ready_.wait(lock, stop, [this] { return queue_.empty() || queued_ < budget_; });
        }
        if (stop.stop_requested()) return;  // the consumer is gone
        auto b = std::make_unique<Batch>();
        if (!read_(*b)) break;
        const std::size_t residues = b->total();
        const std::lock_guard lock(mutex_);
        queue_.emplace_back(std::move(b), residues);
        queued_ += residues;
        ready_.notify_all();
      }
    } catch (...) {
      const std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    const std::lock_guard lock(mutex_);
    finished_ = true;
    ready_.notify_all();
  }

  ReadFn read_;
  std::size_t budget_;
  std::mutex mutex_;
  std::condition_variable_any ready_;
  std::deque<std::pair<std::unique_ptr<Batch>, std::size_t>> queue_;  // (batch, residues)
  std::size_t queued_ = 0;
  bool finished_ = false;
  std::exception_ptr error_;
  std::jthread thread_;  // last: started once the members above exist
};

// Entries found per task: (scan unit, entry).
using Found = std::vector<std::vector<std::pair<std::size_t, PrelimEntry>>>;

PrelimEntry make_entry(const Batch& batch, std::size_t i, std::vector<PrelimHsp> prelim) {
  PrelimEntry e;
  e.list.oid = static_cast<int>(batch.first_oid + static_cast<std::int64_t>(i));
  e.list.hsps.reserve(prelim.size());
  for (const PrelimHsp& p : prelim) e.list.hsps.push_back(p.hsp);
  e.prelim = std::move(prelim);
  return e;
}

void add_counts(SearchCounts& into, const SearchCounts& c) {
  into.word_hits += c.word_hits;
  into.ungapped_extensions += c.ungapped_extensions;
  into.ungapped_saved += c.ungapped_saved;
  into.gapped_extensions += c.gapped_extensions;
  into.prelim_hsps += c.prelim_hsps;
  into.redone_subjects += c.redone_subjects;
}

// The texts blastp prints apart for a subject of a -parse_seqids database (subject_ids.hpp); nullopt for
// a database made without them (the defline as read serves).
std::optional<ParsedSubjectIds> parsed_subject_ids(const std::vector<BlastDefline>& set) {
  if (set.empty() || set.front().has_ordinal_id()) return std::nullopt;
  const BlastDefline& first = set.front();
  ParsedSubjectIds ids;
  ids.seqid = first.seqid();
  ids.acc = first.accession();
  const BlastSeqId* best = first.best_id();
  ids.accver = best == nullptr ? std::string("Unknown") : best->content(true);
  ids.title = first.tabular_title();
  ids.plain_title = first.title;
  ids.xml_accession = best != nullptr && best->kind == SeqIdKind::kGeneral
                          ? (best->numeric ? std::to_string(best->number) : best->name)
                          : ids.acc;
  ids.report_line = first.report_line();
  ids.report_id = first.report_id();
  for (std::size_t k = 0; k < set.size(); ++k) {
    if (k > 0) {
      ids.all_seqids += ';';
      ids.all_accs += ';';
      ids.all_titles += "<>";
    }
    ids.all_seqids += set[k].seqid();
    ids.all_accs += set[k].accession();
    ids.all_titles += set[k].tabular_title();
  }
  return ids;
}

// A subject's defline (BlastpRunOptions::subject_mode).
std::string defline_of(const Sequence& seq, bool subject_mode) {
  std::string defline = !seq.header.empty()       ? seq.header
                        : seq.description.empty() ? seq.name
                                                  : seq.name + " " + seq.description;
  if (subject_mode || defline.find('\t') == std::string::npos) return defline;
  std::string titled;
  for (const char c : defline) titled += c == '\t' ? std::string_view("   ") : std::string_view(&c, 1);
  return titled;
}

}  // namespace

ReaderOptions subject_reader_options(bool subject_mode) {
  ReaderOptions options;
  options.alphabet = AlphabetKind::kProtein;
  options.strict_letters = true;
  options.keep_header = true;  // the deflines (BlastpRunOptions::subject_mode)
  options.allow_unnamed = subject_mode;
  options.allow_empty_sequences = subject_mode;
  options.skip_hyphens = subject_mode;
  return options;
}

DatabaseTotals database_totals(const std::string& path, bool subject_mode) {
  DatabaseTotals totals;
  SequenceSource source = SequenceSource::open(path, subject_reader_options(subject_mode));
  if (!subject_mode && source.packed_db() != nullptr) {
    const PackedDb& db = *source.packed_db();
    totals.length = static_cast<std::int64_t>(db.total_residues());
    totals.sequences = static_cast<std::int64_t>(db.size());
    totals.min_length = kSeqSrcMinLength;
    return totals;
  }
  if (!subject_mode && source.blast_db() != nullptr) {
    const BlastDb& db = *source.blast_db();  // the alias statistics blastp uses (STATS_*, MIN_SEQ_LENGTH)
    totals.length = static_cast<std::int64_t>(db.stats_total_length());
    totals.sequences = static_cast<std::int64_t>(db.stats_num_seqs());
    totals.min_length = db.cutoff_min_length();
    return totals;
  }
  Sequence seq;
  int shortest = INT_MAX;
  while (source.next(seq)) {
    totals.length += static_cast<std::int64_t>(seq.length());
    ++totals.sequences;
    shortest = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(shortest), seq.length()));
    if (seq.length() == 0) {
      ++totals.empty_sequences;
      if (totals.first_empty.size() < kMaxNotedEmpty)
        totals.first_empty.emplace_back(totals.sequences, defline_of(seq, subject_mode));
    }
  }
  if (const SequenceReader* reader = source.reader()) {
    totals.hyphens = reader->hyphens();
    totals.first_hyphen_line = reader->first_hyphen_line();
  }
  totals.min_length = subject_mode ? std::max(shortest, kSeqSrcMinLength) : kSeqSrcMinLength;
  return totals;
}

namespace {

// The queries of one call prepared for the search (stages 1-2), their scan units and the units cut into scan
// groups. A scan unit is what stages 3-5 search as one query, with a preliminary selection of its own: a
// whole query, or with BLAST+'s query splitting (split.hpp: a BLAST query batch of 19,800 residues or more)
// the query's piece in one chunk; the units of a split query are merged into its selection before stage 6.
struct Prepared {
  BlastpOptions search;                               // the options with the database totals
  std::vector<std::optional<QueryContext>> contexts;  // per query: the whole query (stages 1-2, 6, 7)
  std::vector<std::size_t> active;                    // queries that can have hits
  // Scan units of the active queries, in query order and each query's in chunk order: the query it belongs
  // to, its offset in that query (split.hpp's piece begin) and the context it is searched with (the
  // query's own for a whole query, else one of piece_contexts).
  std::vector<std::size_t> unit_query;
  std::vector<int> unit_offset;
  std::vector<const QueryContext*> unit_contexts;
  std::vector<std::unique_ptr<QueryContext>> piece_contexts;
  std::vector<std::vector<std::size_t>> query_units;  // per query: its units (none when inactive)
  std::vector<bool> query_split;                      // per query: searched in pieces
  std::vector<std::size_t> active_units;              // units that can have hits
  std::vector<std::vector<const QueryContext*>> group_contexts;
  std::vector<std::vector<std::size_t>> group_units;

  bool searching(const DatabaseTotals& totals) const { return !active.empty() && totals.sequences > 0; }
};

// Checks the queries, builds their contexts (in parallel; errors rethrown here), sets each
// result.queries[q].setup and forms the query groups.
Prepared prepare(std::span<const BlastpQuery> queries, const DatabaseTotals& totals,
                 const BlastpRunOptions& options, ThreadPool& pool, BlastpRunResult& result) {
  Prepared p;
  BlastpOptions& search = p.search;
  search = options.search;
  std::vector<std::optional<QueryContext>>& contexts = p.contexts;
  std::vector<std::size_t>& active = p.active;
  std::vector<std::vector<const QueryContext*>>& group_contexts = p.group_contexts;
  std::vector<std::vector<std::size_t>>& group_units = p.group_units;
  const std::size_t nq = queries.size();
  // -dbsize (options.search.db_length > 0) replaces the database length in the statistics.
  search.db_length = options.search.db_length > 0 ? options.search.db_length : totals.length;
  search.db_num_seqs = totals.sequences;
  search.min_subject_length = totals.min_length;

  for (std::size_t q = 0; q < nq; ++q)
    if (queries[q].residues.size() > kMaxQueryLength)
      throw Error(ErrorKind::kInput,
                  fmt::format("query {} has {} residues; blastp handles at most {} per query",
                              queries[q].defline.substr(0, queries[q].defline.find(' ')),
                              queries[q].residues.size(), kMaxQueryLength));
  // Queries (stages 1-2): contexts built in parallel, errors (matrix / gap costs) rethrown here.
  contexts.resize(nq);
  pool.parallel_for(nq, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t q = begin; q < end; ++q)
      contexts[q].emplace(QueryContext::create(queries[q].residues, search, search.db_length,
                                               totals.sequences, totals.min_length));
  });
  for (std::size_t q = 0; q < nq; ++q) {
    result.queries[q].setup = contexts[q]->setup();
    if (contexts[q]->searchable()) active.push_back(q);
  }
  p.query_units.resize(nq);
  p.query_split.assign(nq, false);
  if (!p.searching(totals)) return p;

  // Scan units: BLAST+'s query batches (the CLI cuts its calls at their boundaries), each split into chunks
  // when long enough (split.hpp); a piece that is not its whole query gets a context of its own (built in
  // parallel), from the query's residues as given.
  std::vector<std::size_t> lengths(nq);
  for (std::size_t q = 0; q < nq; ++q) lengths[q] = queries[q].residues.size();
  const std::vector<std::size_t> bounds = blastp_query_batches(lengths);
  std::vector<std::vector<QueryPiece>> pieces(nq);
  for (std::size_t b = 0; b + 1 < bounds.size(); ++b) {
    const auto batch = std::span<const std::size_t>(lengths).subspan(bounds[b], bounds[b + 1] - bounds[b]);
    std::vector<std::vector<QueryPiece>> split = split_query_batch(batch);
    for (std::size_t i = 0; i < split.size(); ++i) pieces[bounds[b] + i] = std::move(split[i]);
  }
  std::vector<std::pair<std::size_t, QueryPiece>> own;  // (unit, piece) needing a context
  for (const std::size_t q : active) {
    const bool whole = pieces[q].size() == 1 && pieces[q][0].begin == 0 && pieces[q][0].end == lengths[q];
    p.query_split[q] = !whole;
    for (const QueryPiece& piece : pieces[q]) {
      p.query_units[q].push_back(p.unit_query.size());
      if (!whole) own.emplace_back(p.unit_query.size(), piece);
      p.unit_query.push_back(q);
      p.unit_offset.push_back(static_cast<int>(piece.begin));
      p.unit_contexts.push_back(whole ? &*contexts[q] : nullptr);
    }
  }
  p.piece_contexts.resize(own.size());
  pool.parallel_for(own.size(), 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const auto& [u, piece] = own[k];
      const std::vector<std::uint8_t>& r = queries[p.unit_query[u]].residues;
      p.piece_contexts[k] = std::make_unique<QueryContext>(
          QueryContext::create(Residues(r.data() + piece.begin, piece.end - piece.begin), search,
                               search.db_length, totals.sequences, totals.min_length));
    }
  });
  for (std::size_t k = 0; k < own.size(); ++k) p.unit_contexts[own[k].first] = p.piece_contexts[k].get();
  for (std::size_t u = 0; u < p.unit_contexts.size(); ++u)
    if (p.unit_contexts[u]->searchable()) p.active_units.push_back(u);

  // Unit groups (GroupScanner), formed in order of length so that similar lengths share a group: up to
  // kGroupResidues residues and kGroupDiagonals diagonal slots (units x the group's diagonal stride),
  // at least one unit. Grouping changes no result (scanner.hpp), only speed and memory.
  std::vector<std::size_t> by_length = p.active_units;
  std::stable_sort(by_length.begin(), by_length.end(), [&](std::size_t a, std::size_t b) {
    return p.unit_contexts[a]->query().size() < p.unit_contexts[b]->query().size();
  });
  std::size_t group_fill = 0;
  for (const std::size_t u : by_length) {
    const QueryContext& context = *p.unit_contexts[u];
    const std::size_t len = context.query().size();
    const std::size_t stride = std::bit_ceil(len + static_cast<std::size_t>(context.setup().window));
    const bool fits = !group_contexts.empty() && group_fill + len <= kGroupResidues &&
                      (group_units.back().size() + 1) * stride <= kGroupDiagonals;
    if (!fits) {
      group_contexts.emplace_back();
      group_units.emplace_back();
      group_fill = 0;
    }
    group_contexts.back().push_back(&context);
    group_units.back().push_back(u);
    group_fill += len;
  }

  return p;
}

// Stages 3-5 over part shard_index of shard_count of the database (all of it for 1 part): the preliminary
// selection of each scan unit, pruned to its limit, and the subjects it holds.
BlastpScanPart scan_part(const Prepared& prepared, const std::string& db_path, const DatabaseTotals& totals,
                         const BlastpRunOptions& options, ThreadPool& pool, int shard_index, int shard_count,
                         BlastpTimings& timings) {
  const std::vector<const QueryContext*>& contexts = prepared.unit_contexts;  // per scan unit
  const std::vector<std::size_t>& active = prepared.active_units;
  const std::vector<std::vector<const QueryContext*>>& group_contexts = prepared.group_contexts;
  const std::vector<std::vector<std::size_t>>& group_units = prepared.group_units;
  const std::size_t units = contexts.size();
  const std::size_t groups = group_contexts.size();
  const auto t_scan = Clock::now();
  BlastpScanPart shard;
  shard.entries.resize(units);

  const std::size_t prelim_limit = prelim_list_limit(prepared.search);
  std::vector<Selection> selections(units);
  for (Selection& s : selections) s.limit = prelim_limit;
  // Residues and deflines of the subjects some selection holds (database id -> subject).
  std::unordered_map<std::int64_t, BlastpSubject> kept;

  // The database in batches.
  SequenceSource source = SequenceSource::open(db_path, subject_reader_options(options.subject_mode));
  std::int64_t next_oid = 0;
  bool done = false;
  // A BLAST+ or packed database is read by id: a batch's residues are decoded on kReadThreads threads and
  // the deflines only of the subjects kept (the same sequences in the same order as source.next()).
  const BlastDb* blast_db = source.blast_db();
  const PackedDb* packed_db = source.packed_db();
  const std::uint64_t db_size = blast_db != nullptr    ? blast_db->size()
                                : packed_db != nullptr ? packed_db->size()
                                                       : 0;
  const auto db_length = [&](std::uint64_t oid) {
    return blast_db != nullptr ? blast_db->length(oid) : packed_db->length(oid);
  };
  // This part's sequences (dist/shard.hpp): a database's shard comes from its length table; a sequence
  // file's is found while reading it, with the totals' weight (the file's own totals, database_totals).
  std::uint64_t shard_end = db_size;
  if (shard_count > 1 && db_size > 0) {
    const dist::ShardRange range = dist::shard_range(db_size, db_length, shard_index, shard_count);
    next_oid = static_cast<std::int64_t>(range.begin);
    shard_end = range.end;
  }
  dist::ShardPlanner planner(dist::shard_weight(static_cast<std::uint64_t>(totals.length),
                                                static_cast<std::uint64_t>(totals.sequences)),
                             shard_count);
  const auto db_sequence = [&](std::uint64_t oid, Sequence& seq) {
    if (blast_db != nullptr)
      blast_db->to_sequence(oid, seq);
    else
      packed_db->to_sequence(oid, seq);
  };
  const auto too_long = [&](const std::string& name, std::size_t length, std::uint64_t line) {
    return Error(ErrorKind::kInput,
                 fmt::format("subject {} ({}) has {} residues; blastp handles at most {} per sequence",
                             next_oid + 1, name, length, kMaxSubjectLength),
                 db_path, line);
  };
  const std::size_t read_threads =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, kMaxReadThreads);
  // Reads the next batch of about `want` residues (at least one sequence); false at the end.
  const auto read_batch = [&](std::size_t want, Batch& batch) {
    const auto t0 = Clock::now();
    batch.seqs.clear();
    batch.packed.reset();
    batch.starts.clear();
    batch.first_oid = next_oid;
    batch.by_id = db_size > 0;
    std::size_t residues = 0;
    if (batch.by_id) {
      batch.starts.push_back(0);
      auto oid = static_cast<std::uint64_t>(next_oid);
      while (oid < shard_end && (residues < want || oid == static_cast<std::uint64_t>(next_oid))) {
        const std::uint64_t length = db_length(oid);
        if (length > kMaxSubjectLength) {
          Sequence seq;
          db_sequence(oid, seq);
          next_oid = static_cast<std::int64_t>(oid);
          throw too_long(seq.name, seq.length(), 0);
        }
        residues += length;
        batch.starts.push_back(residues);
        ++oid;
      }
      // Uninitialized: the decoding threads write every byte (first touch in parallel).
      batch.packed.reset(new std::uint8_t[std::max<std::size_t>(residues, 1)]);
      const std::size_t n = batch.size();
      const std::size_t parts = std::min<std::size_t>(read_threads, n);
      std::vector<std::future<void>> decoded;
      for (std::size_t p = 0; p < parts; ++p)
        decoded.push_back(std::async(std::launch::async, [&, p] {
          // Equal residue shares: part k starts at the first sequence that starts at or past its share.
          const auto first_of = [&](std::size_t k) {
            if (k == parts) return n;
            const auto b = batch.starts.begin();
            return static_cast<std::size_t>(
                std::lower_bound(b, b + static_cast<std::ptrdiff_t>(n), residues * k / parts) - b);
          };
          const std::size_t first = first_of(p), last = first_of(p + 1);
          for (std::size_t i = first; i < last; ++i) {
            const auto id = static_cast<std::uint64_t>(batch.first_oid) + i;
            const std::span<std::uint8_t> out(batch.packed.get() + batch.starts[i], batch.length(i));
            if (blast_db != nullptr) {
              blast_db->residues(id, out);
            } else {
              const std::span<const std::uint8_t> r = packed_db->residues(id);
              std::copy(r.begin(), r.end(), out.begin());
            }
          }
        }));
      for (std::future<void>& f : decoded) f.wait();
      for (std::future<void>& f : decoded) f.get();  // the first error, once all threads are done
      next_oid = static_cast<std::int64_t>(oid);
      done = oid >= shard_end;
    } else {
      while (!done && (residues < want || batch.seqs.empty())) {
        batch.seqs.emplace_back();
        if (!source.next(batch.seqs.back())) {
          batch.seqs.pop_back();
          done = true;
          break;
        }
        if (shard_count > 1) {
          const int owner = planner.next(batch.seqs.back().length());
          if (owner > shard_index) {  // past this part: done
            batch.seqs.pop_back();
            done = true;
            break;
          }
          if (owner < shard_index) {  // before this part (the batch is still empty)
            batch.seqs.pop_back();
            batch.first_oid = ++next_oid;
            continue;
          }
        }
        if (batch.seqs.back().length() > kMaxSubjectLength)
          throw too_long(batch.seqs.back().name, batch.seqs.back().length(), batch.seqs.back().line);
        residues += batch.seqs.back().length();
        ++next_oid;
      }
    }
    timings.read += seconds_since(t0);
    timings.read_at = seconds_since(t_scan);
    return batch.size() > 0;
  };
  // The defline of subject i of a batch (read now for a batch read by id).
  const auto defline_at = [&](const Batch& batch, std::size_t i) {
    if (!batch.by_id) return defline_of(batch.seqs[i], options.subject_mode);
    Sequence seq;
    db_sequence(static_cast<std::uint64_t>(batch.first_oid) + i, seq);
    return defline_of(seq, options.subject_mode);
  };

  // The CPU seed stages (scan, ungapped, preliminary gapped) of the given subjects of a batch: tasks = query
  // groups x chunks of about kTaskResidues residues; found entries per task.
  const auto cpu_seed = [&](const Batch& batch, std::span<const std::size_t> subjects, Found& found,
                            std::vector<SearchCounts>& task_counts) {
    std::vector<std::size_t> chunk_begin{0};
    std::size_t acc = 0;
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      acc += batch.length(subjects[i]) + 1;
      if (acc >= kTaskResidues && i + 1 < subjects.size()) {
        chunk_begin.push_back(i + 1);
        acc = 0;
      }
    }
    chunk_begin.push_back(subjects.size());
    const std::size_t chunks = chunk_begin.size() - 1;
    const std::size_t tasks = groups * chunks;
    const std::size_t base = found.size();
    found.resize(base + tasks);
    task_counts.resize(base + tasks);
    pool.parallel_for(tasks, 1, [&](std::size_t begin, std::size_t end) {
      std::vector<std::pair<std::uint32_t, std::vector<PrelimHsp>>> subject_out;
      for (std::size_t t = begin; t < end; ++t) {
        const std::size_t g = t / chunks;
        const std::size_t c = t % chunks;
        GroupScanner scanner(group_contexts[g]);
        for (std::size_t k = chunk_begin[c]; k < chunk_begin[c + 1]; ++k) {
          const std::size_t i = subjects[k];
          scanner.run(batch.residues(i), task_counts[base + t], subject_out);
          for (auto& [q, prelim] : subject_out)
            found[base + t].emplace_back(group_units[g][q], make_entry(batch, i, std::move(prelim)));
        }
      }
    });
  };

  // Selection: the found entries join their queries' selections, which are pruned; exactly the subjects
  // some selection still holds are kept.
  const auto absorb = [&](Batch& batch, Found& found, const std::vector<SearchCounts>& task_counts) {
    for (const SearchCounts& c : task_counts) add_counts(shard.counts, c);
    for (auto& task : found)
      for (auto& [q, e] : task) selections[q].entries.push_back(std::move(e));
    found.clear();
    for (const std::size_t q : active) selections[q].prune(false);
    std::unordered_set<std::int64_t> held;
    for (const std::size_t q : active)
      for (const PrelimEntry& e : selections[q].entries) held.insert(e.list.oid);
    for (auto it = kept.begin(); it != kept.end();)
      it = held.contains(it->first) ? std::next(it) : kept.erase(it);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const std::int64_t oid = batch.first_oid + static_cast<std::int64_t>(i);
      if (!held.contains(oid)) continue;
      BlastpSubject& subject = kept[oid];
      subject.defline = defline_at(batch, i);
      if (blast_db != nullptr)
        subject.ids = parsed_subject_ids(blast_db->deflines(static_cast<std::uint64_t>(oid)));
      if (batch.by_id) {
        const Residues r = batch.residues(i);
        subject.residues.assign(r.begin(), r.end());
      } else {
        subject.residues = std::move(batch.seqs[i].residues);
      }
    }
  };

  // The batches are read on a reader thread ahead of the search (BatchReader), from now on: with GPUs the
  // database is read while they start up (options.resolve_gpus) and the stages are set up. Batches are
  // sized for the GPUs when they may be used; the results do not depend on the size.
  const bool may_use_gpus = !options.gpus.empty() || static_cast<bool>(options.resolve_gpus);
  const std::size_t part_residues =
      static_cast<std::size_t>(totals.length) / static_cast<std::size_t>(shard_count);
  const std::size_t batch_residues =
      may_use_gpus ? std::min(options.gpu_batch_residues,
                              std::max(kMinGpuBatchResidues, part_residues / kMinGpuBatches))
                   : options.batch_residues;
  BatchReader reader([&](Batch& b) { return read_batch(batch_residues, b); },
                     std::max(kReadAheadResidues, batch_residues));
  const auto since_scan = [&t_scan] { return seconds_since(t_scan); };
  std::vector<int> gpus = options.gpus;
  if (options.resolve_gpus) {
    gpus = options.resolve_gpus();
    timings.devices_at = since_scan();
  }

  if (gpus.empty()) {
    // The CPU stages take longer than reading: a batch read ahead is enough.
    reader.set_budget(batch_residues);
    std::vector<std::size_t> all;
    while (std::unique_ptr<Batch> batch = reader.next()) {
      const auto t0 = Clock::now();
      all.resize(batch->size());
      for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
      Found found;
      std::vector<SearchCounts> task_counts;
      cpu_seed(*batch, all, found, task_counts);
      absorb(*batch, found, task_counts);
      timings.seed += seconds_since(t0);
    }
    timings.seeds_at = since_scan();
  } else {
#ifdef WARPSEARCH_HAVE_CUDA
    const auto t_setup = Clock::now();
    std::vector<const QueryContext*> active_contexts;
    for (const std::size_t q : active) active_contexts.push_back(contexts[q]);
    // kStagesPerGpu stages (streams) per GPU, so that one batch's scan overlaps another's grouping, screen
    // and transfers, and the tails of the per-query launches fill up.
    const std::size_t devices = gpus.size() * kStagesPerGpu;
    std::vector<std::unique_ptr<GpuStage>> stages(devices);
    for (std::size_t d = 0; d < devices; ++d)
      stages[d] = std::make_unique<GpuStage>(active_contexts, gpus[d % gpus.size()]);
    timings.setup += seconds_since(t_setup);
    timings.stages_at = since_scan();
    struct InFlight {
      std::unique_ptr<Batch> batch;
      std::future<StageOutput> output;  // destroyed (waited for) before the batch it reads
    };
    std::vector<std::mutex> locks(devices);
    std::deque<InFlight> inflight;
    // The oldest batch in flight: its GPU output, then on the pool the CPU preliminary stage of the pairs
    // the screen passed on and the CPU seed stages of subjects too long for the GPU, then the selection.
    const auto finish_front = [&] {
      InFlight f = std::move(inflight.front());
      inflight.pop_front();
      const auto t0 = Clock::now();
      StageOutput out = f.output.get();
      timings.seed += seconds_since(t0);
      const auto t1 = Clock::now();
      Batch& batch = *f.batch;
      std::vector<std::size_t> full;
      for (std::size_t k = 0; k < out.pairs.size(); ++k)
        if (out.pairs[k].screen == ScreenResult::kFull) full.push_back(k);
      timings.gpu_pairs += static_cast<std::int64_t>(out.pairs.size());
      timings.gpu_full_pairs += static_cast<std::int64_t>(full.size());
      constexpr std::size_t kPairsPerTask = 4;
      const std::size_t tasks = (full.size() + kPairsPerTask - 1) / kPairsPerTask;
      Found found(tasks);
      std::vector<SearchCounts> task_counts(tasks);
      pool.parallel_for(tasks, 1, [&](std::size_t begin, std::size_t end) {
        std::vector<UngappedHsp> ungapped;
        for (std::size_t t = begin; t < end; ++t) {
          for (std::size_t k = t * kPairsPerTask; k < std::min(full.size(), (t + 1) * kPairsPerTask); ++k) {
            const StagePair& pair = out.pairs[full[k]];
            const std::size_t q = active[pair.query];
            const auto first = out.hsps.begin() + pair.first;
            ungapped.assign(first, first + pair.count);
            std::vector<PrelimHsp> prelim =
                preliminary_hsps(*contexts[q], batch.residues(pair.subject), ungapped, task_counts[t]);
            if (!prelim.empty()) found[t].emplace_back(q, make_entry(batch, pair.subject, std::move(prelim)));
          }
        }
      });
      std::vector<std::size_t> long_subjects;
      for (std::size_t i = 0; i < batch.size(); ++i)
        if (batch.length(i) > kGpuMaxSubjectLength) long_subjects.push_back(i);
      if (!long_subjects.empty()) cpu_seed(batch, long_subjects, found, task_counts);
      task_counts.push_back(out.counts);
      absorb(batch, found, task_counts);
      timings.prelim += seconds_since(t1);
    };
    std::size_t next_device = 0;
    while (std::unique_ptr<Batch> batch = reader.next()) {
      const std::size_t d = next_device++ % devices;
      const Batch* b = batch.get();
      std::future<StageOutput> output = std::async(std::launch::async, [&stages, &locks, d, b] {
        const std::lock_guard lock(locks[d]);
        StageOutput o;
        if (b->by_id) {  // back to back already: uploaded as it is
          stages[d]->run(std::span<const std::uint8_t>(b->packed.get(), b->starts.back()), b->starts, false,
                         o);
          return o;
        }
        std::vector<Residues> subjects(b->size());
        for (std::size_t i = 0; i < subjects.size(); ++i) subjects[i] = b->residues(i);
        stages[d]->run(subjects, false, o);
        return o;
      });
      inflight.push_back({std::move(batch), std::move(output)});
      if (inflight.size() > devices) finish_front();
    }
    while (!inflight.empty()) finish_front();
    timings.seeds_at = since_scan();
    for (const auto& stage : stages) {
      const GpuStage::Stats st = stage->stats();
      timings.gpu_scan += st.scan_s;
      timings.gpu_screen += st.screen_s;
      timings.gpu_upload += st.upload_s;
      timings.gpu_download += st.download_s;
    }
    stages.clear();
    if (options.gpus_done) options.gpus_done(gpus);
#else
    throw Error(ErrorKind::kGpu,
                "blastp: GPUs requested, but this build has no GPU support (built without CUDA)");
#endif
  }
  if (next_oid > INT_MAX)
    throw Error(ErrorKind::kInput, "blastp: more than 2^31 - 1 database sequences", db_path);

  // The selections pruned to their limit (the best entries of this part: the best of the whole database
  // are among the parts' best), and the subjects they hold.
  std::unordered_set<std::int64_t> held;
  for (const std::size_t q : active) {
    selections[q].prune(true);
    for (PrelimEntry& e : selections[q].entries) held.insert(e.list.oid);
    shard.entries[q] = std::move(selections[q].entries);
  }
  for (auto& [oid, subject] : kept)
    if (held.contains(oid)) shard.subjects.emplace_back(oid, std::move(subject));
  std::sort(shard.subjects.begin(), shard.subjects.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return shard;
}

// The parts' selections and subjects together (the order of arrival changes nothing: selection uses a
// total order), each unit's pruned to the limit, a split query's units merged (split.hpp), each query's
// selection sorted; work: the (query, entry) pairs of stage 6 in output order.
struct Merged {
  std::vector<Selection> selections;
  std::unordered_map<std::int64_t, BlastpSubject> kept;
  std::vector<std::pair<std::size_t, std::size_t>> work;  // (query, entry index)
};

Merged merge_parts(const Prepared& p, std::vector<BlastpScanPart>& parts, SearchCounts& counts) {
  Merged m;
  const std::size_t limit = prelim_list_limit(p.search);
  std::vector<Selection> units(p.unit_contexts.size());
  for (Selection& s : units) s.limit = limit;
  for (BlastpScanPart& part : parts) {
    if (part.entries.size() != units.size())
      throw Error(ErrorKind::kInternal,
                  "blastp: a scan part has another number of scan units (protocol mismatch)");
    add_counts(counts, part.counts);
    for (const std::size_t u : p.active_units)
      for (PrelimEntry& e : part.entries[u]) units[u].entries.push_back(std::move(e));
    for (auto& [oid, subject] : part.subjects) m.kept.emplace(oid, std::move(subject));
    part = BlastpScanPart();
  }
  m.selections.resize(p.contexts.size());
  for (const std::size_t q : p.active) {
    m.selections[q].limit = limit;
    if (!p.query_split[q]) {
      m.selections[q] = std::move(units[p.query_units[q].front()]);
      m.selections[q].prune(true);
    } else {
      std::optional<std::vector<PrelimEntry>> combined;
      for (const std::size_t u : p.query_units[q]) {
        units[u].prune(true);
        shift_query(units[u].entries, p.unit_offset[u]);
        merge_chunk_hits(combined, std::move(units[u].entries), p.unit_offset[u], limit);
      }
      if (combined) m.selections[q].entries = std::move(*combined);
    }
    m.selections[q].sort();
    for (std::size_t k = 0; k < m.selections[q].entries.size(); ++k) m.work.emplace_back(q, k);
  }
  return m;
}

// One (query, subject) of stage 6.
struct TraceItem {
  std::size_t query = 0;
  const PrelimEntry* entry = nullptr;
  Residues subject;
};

// Stage 6 on the pool for every item: the traceback (traced[i]) without composition-based statistics, the
// composition-based redo (redone[i]) with them (speculatively: BLAST may skip some lists, whose results
// finish_composition_redo then never asks for). Pure per item: any subset, on any rank, gives the same.
void trace_items(const Prepared& p, std::span<const TraceItem> items, ThreadPool& pool,
                 std::vector<std::vector<Hsp>>& traced, std::vector<SubjectRedo>& redone) {
  const bool redo = p.search.comp_based_stats != 0;
  if (redo)
    redone.resize(items.size());
  else
    traced.resize(items.size());
  pool.parallel_for(items.size(), 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const TraceItem& t = items[i];
      const QueryContext& context = *p.contexts[t.query];
      if (redo)
        redone[i] = redo_subject(context, t.subject, t.entry->prelim);
      else
        traced[i] = traceback_subject(context, t.subject, t.entry->prelim);
    }
  });
}

// Stage 7: the final hit lists of every query from the results of stage 6 for m.work (traced or
// redone, indexed like m.work), and the subjects they report, into result.
void final_lists(const Prepared& p, std::span<const BlastpQuery> queries, Merged& m,
                 std::vector<std::vector<Hsp>>& traced, std::vector<SubjectRedo>& redone,
                 BlastpRunResult& result) {
  const BlastpOptions& search = p.search;
  const std::size_t nq = p.contexts.size();
  std::unordered_set<std::int64_t> reported;
  if (search.comp_based_stats == 0) {
    std::size_t w = 0;
    for (const std::size_t q : p.active) {
      std::vector<SubjectHits> lists;
      for (std::size_t k = 0; k < m.selections[q].entries.size(); ++k, ++w) {
        if (traced[w].empty()) continue;
        SubjectHits h;
        h.oid = m.selections[q].entries[k].list.oid;
        h.hsps = std::move(traced[w]);
        lists.push_back(std::move(h));
      }
      select_hit_lists(lists, static_cast<std::size_t>(search.max_target_seqs));
      reap_by_query_coverage(lists, result.queries[q].adjust_rules,
                             static_cast<int>(queries[q].residues.size()), search.qcov_hsp_perc);
      for (const SubjectHits& h : lists) reported.insert(h.oid);
      result.queries[q].hits = std::move(lists);
    }
  } else {
    // With composition-based statistics (kappa.hpp): BLAST's heap is simulated sequentially per BLAST
    // query batch (blastp_query_batches over this call's queries; the CLI cuts its calls at BLAST batch
    // boundaries) on the redone lists, so the answer is BLAST's exactly.
    std::vector<std::vector<SubjectHits>> prelim_lists(nq);
    std::vector<std::size_t> first_work(nq, 0);
    for (std::size_t w = 0; w < m.work.size(); ++w) {
      const auto [q, k] = m.work[w];
      if (k == 0) first_work[q] = w;
      prelim_lists[q].push_back(m.selections[q].entries[k].list);
    }
    std::vector<std::size_t> lengths(nq);
    for (std::size_t q = 0; q < nq; ++q) lengths[q] = queries[q].residues.size();
    const std::vector<std::size_t> bounds = blastp_query_batches(lengths);
    for (std::size_t b = 0; b + 1 < bounds.size(); ++b) {
      std::vector<RedoQueryInput> inputs;
      for (std::size_t q = bounds[b]; q < bounds[b + 1]; ++q) {
        const std::size_t base = first_work[q];
        inputs.push_back({prelim_lists[q], [&redone, &result, base](std::size_t i) {
                            ++result.counts.composition_redone;
                            return std::move(redone[base + i]);
                          }});
      }
      std::vector<RedoneQuery> finished = finish_composition_redo(inputs, search);
      for (std::size_t q = bounds[b]; q < bounds[b + 1]; ++q) {
        RedoneQuery& f = finished[q - bounds[b]];
        reap_by_query_coverage(f.hits, f.rules, static_cast<int>(queries[q].residues.size()),
                               search.qcov_hsp_perc);
        drop_zero_score_hsps(f.hits, f.rules);
        for (const SubjectHits& h : f.hits) reported.insert(h.oid);
        result.queries[q].hits = std::move(f.hits);
        result.queries[q].adjust_rules = std::move(f.rules);
      }
    }
  }
  for (const std::int64_t oid : reported) result.subjects.emplace(oid, std::move(m.kept.at(oid)));
}

// Stages 6-7 in one process on the parts' preliminary selections, into result.
void finish(const Prepared& p, std::span<const BlastpQuery> queries, std::vector<BlastpScanPart>& parts,
            ThreadPool& pool, BlastpRunResult& result) {
  const auto t_traceback = Clock::now();
  Merged m = merge_parts(p, parts, result.counts);
  std::vector<TraceItem> items;
  items.reserve(m.work.size());
  for (const auto& [q, k] : m.work) {
    const PrelimEntry& e = m.selections[q].entries[k];
    items.push_back({q, &e, m.kept.at(e.list.oid).residues});
  }
  std::vector<std::vector<Hsp>> traced;
  std::vector<SubjectRedo> redone;
  trace_items(p, items, pool, traced, redone);
  final_lists(p, queries, m, traced, redone, result);
  result.timings.traceback += seconds_since(t_traceback);
}

// Which rank traces each work item of m (indexed like m.work) under MPI: longest first, each to the
// rank with the least work so far (the lowest on ties), an item's cost estimated as query length times
// subject length. Rank 0 holds every item's entry and subject after the merge, so the work is spread
// evenly whichever shards hold the subjects (homologs are often clustered in a database). Deterministic;
// the results do not depend on it (trace_items is pure per item).
std::vector<int> balance_trace_work(std::span<const BlastpQuery> queries, const Merged& m, int ranks) {
  std::vector<std::uint64_t> cost(m.work.size());
  for (std::size_t w = 0; w < m.work.size(); ++w) {
    const auto [q, k] = m.work[w];
    const std::size_t subject = m.kept.at(m.selections[q].entries[k].list.oid).residues.size();
    cost[w] = static_cast<std::uint64_t>(queries[q].residues.size() + 1) * (subject + 1);
  }
  std::vector<std::size_t> order(m.work.size());
  for (std::size_t w = 0; w < order.size(); ++w) order[w] = w;
  std::stable_sort(order.begin(), order.end(),
                   [&cost](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<std::uint64_t> load(static_cast<std::size_t>(ranks), 0);
  std::vector<int> owner(m.work.size(), 0);
  for (const std::size_t w : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[w] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += cost[w];
  }
  return owner;
}

// Stages 6-7 under MPI, after the scan parts went to rank 0 (parts: all of them, on rank 0): rank 0
// merges the selections and sends every rank its share of the work items (balance_trace_work) with
// their entries and subjects; each rank traces its items and sends the results to rank 0, which selects
// the final lists.
void finish_distributed(const Prepared& p, std::span<const BlastpQuery> queries,
                        std::vector<BlastpScanPart>& parts, const dist::Comm& comm, ThreadPool& pool,
                        BlastpRunResult& result) {
  const auto t_traceback = Clock::now();
  std::optional<Merged> m;
  std::vector<dist::Bytes> outgoing;  // rank 0: each rank's work items
  dist::agree(comm, [&] {
    if (!comm.is_root()) return;
    m.emplace(merge_parts(p, parts, result.counts));
    const std::vector<int> owner = balance_trace_work(queries, *m, comm.size());
    std::vector<std::vector<dist::TraceWorkView>> items(static_cast<std::size_t>(comm.size()));
    for (std::size_t w = 0; w < m->work.size(); ++w) {
      const auto [q, k] = m->work[w];
      const PrelimEntry& e = m->selections[q].entries[k];
      items[static_cast<std::size_t>(owner[w])].push_back({static_cast<std::uint64_t>(w),
                                                           static_cast<std::uint64_t>(q), &e,
                                                           m->kept.at(e.list.oid).residues});
    }
    for (const auto& rank_items : items) outgoing.push_back(dist::encode_trace_work(rank_items));
  });
  dist::Bytes work = comm.scatter(outgoing);
  std::vector<dist::Bytes> traced_parts = dist::exchange(comm, [&] {
    const std::vector<dist::TraceWork> received = dist::decode_trace_work(work);
    work = dist::Bytes();
    std::vector<std::uint64_t> index;
    std::vector<TraceItem> items;
    for (const dist::TraceWork& t : received) {
      if (t.query >= p.contexts.size())
        throw Error(ErrorKind::kInternal, "MPI message: query index out of range (protocol mismatch)");
      index.push_back(t.index);
      items.push_back({static_cast<std::size_t>(t.query), &t.entry, t.residues});
    }
    std::vector<std::vector<Hsp>> traced;
    std::vector<SubjectRedo> redone;
    trace_items(p, items, pool, traced, redone);
    return dist::encode_traced(index, traced, redone);
  });
  if (!comm.is_root()) {  // its own items traced (and the wait for the others'), for --timing
    result.timings.traceback += seconds_since(t_traceback);
    return;
  }
  std::vector<std::vector<Hsp>> traced;
  std::vector<SubjectRedo> redone;
  if (p.search.comp_based_stats != 0)
    redone.resize(m->work.size());
  else
    traced.resize(m->work.size());
  for (dist::Bytes& message : traced_parts) {
    dist::decode_traced(message, traced, redone);
    message = dist::Bytes();
  }
  final_lists(p, queries, *m, traced, redone, result);
  result.timings.traceback += seconds_since(t_traceback);
}

}  // namespace

BlastpRunResult blastp_run(std::span<const BlastpQuery> queries, const std::string& db_path,
                           const DatabaseTotals& totals, const BlastpRunOptions& options) {
  const auto t_start = Clock::now();
  BlastpRunResult result;
  result.totals = totals;
  result.queries.resize(queries.size());
  ThreadPool pool(ThreadPool::resolve(options.threads));
  std::optional<Prepared> p;
  std::vector<BlastpScanPart> parts;
  const dist::Comm* comm = options.comm;
  if (comm == nullptr || comm->size() == 1) {
    p.emplace(prepare(queries, totals, options, pool, result));
    if (!p->searching(totals)) return result;
    result.timings.setup += seconds_since(t_start);
    parts.push_back(scan_part(*p, db_path, totals, options, pool, 0, 1, result.timings));
  } else {
    // Distributed: every rank prepares the queries and scans its part; rank 0 gathers the parts and
    // merges them; every rank traces its share of the merged selection; rank 0 selects the final lists
    // (the other ranks return the setups without hits).
    BlastpScanPart mine;
    std::vector<dist::Bytes> messages = dist::exchange(*comm, [&] {
      p.emplace(prepare(queries, totals, options, pool, result));
      if (!p->searching(totals)) return dist::Bytes();
      result.timings.setup += seconds_since(t_start);
      mine = scan_part(*p, db_path, totals, options, pool, comm->rank(), comm->size(), result.timings);
      if (comm->is_root()) return dist::Bytes();
      dist::Bytes message = dist::encode_scan_part(mine);
      mine = BlastpScanPart();  // rank 0 now sends this rank the work it traces
      return message;
    });
    if (!p->searching(totals)) return result;  // the same on every rank
    if (comm->is_root()) {
      parts.push_back(std::move(mine));
      for (std::size_t r = 1; r < messages.size(); ++r) {
        parts.push_back(dist::decode_scan_part(messages[r]));
        messages[r] = dist::Bytes();
      }
    }
    finish_distributed(*p, queries, parts, *comm, pool, result);
    result.timings.total = seconds_since(t_start);
    return result;
  }
  finish(*p, queries, parts, pool, result);
  result.timings.total = seconds_since(t_start);
  return result;
}

BlastpScanPart blastp_scan_part(std::span<const BlastpQuery> queries, const std::string& db_path,
                                const DatabaseTotals& totals, const BlastpRunOptions& options, int part,
                                int parts) {
  BlastpRunResult result;
  result.queries.resize(queries.size());
  ThreadPool pool(ThreadPool::resolve(options.threads));
  const Prepared p = prepare(queries, totals, options, pool, result);
  if (!p.searching(totals)) {
    BlastpScanPart none;
    none.entries.resize(p.unit_contexts.size());
    return none;
  }
  return scan_part(p, db_path, totals, options, pool, part, parts, result.timings);
}

BlastpRunResult blastp_merge_parts(std::span<const BlastpQuery> queries, const DatabaseTotals& totals,
                                   const BlastpRunOptions& options, std::vector<BlastpScanPart> parts) {
  BlastpRunResult result;
  result.totals = totals;
  result.queries.resize(queries.size());
  ThreadPool pool(ThreadPool::resolve(options.threads));
  const Prepared p = prepare(queries, totals, options, pool, result);
  if (!p.searching(totals)) return result;
  finish(p, queries, parts, pool, result);
  return result;
}

}  // namespace warpsearch::blast
