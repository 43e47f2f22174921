// search.cpp: the swsearch driver behind include/warpsearch/swsearch.hpp.
//
// Contents:
//   1. Options::validate.
//   2. Inputs: every query read up front (SequenceReader); the database streamed (SequenceSource) into
//      batches of at most batch_residues residues (at least one sequence each), double-buffered: a reader
//      thread fills the next batch while the engines score the current one.
//   3. Scoring: one CPU engine on the thread pool, or one GPU engine per device of Options::gpus with each
//      batch split among them by residues (split_work; every engine gets its own rebased DbBatch view and
//      the engines score one query at a time in parallel). Per query a bounded TopK of candidates keeps
//      the `top` best positive scores over all batches (merged on a side thread while the engines score
//      the next query); a candidate's defline (and residues, for the alignment) is copied out of the batch
//      when it first enters some query's TopK and is shared among queries, so memory holds the queries,
//      two batches and the candidates only. detail::search_with_cpu_engines runs the multi-engine path on
//      CPU engines for tests.
//   4. After the stream, in rounds of kQueriesPerRound queries: E-values and bit scores (Statistics, search
//      space known only now), the E-value filter, the alignments of the round's reported hits in one
//      parallel loop, largest first (sw::simd passes + sw::traceback on the pool, as the align family's CPU
//      path computes them), then the callbacks, in query order.
//   5. Distributed (MPI, docs/MPI.md): each rank streams its shard of the database (ShardSpec: a packed or
//      BLAST+ database read by id, a sequence file through dist::ShardPlanner after one pass for its total
//      weight) or, under a query split, scores only its queries; the totals are summed over the ranks, and
//      finish_round picks each query's global best `top` on rank 0, has the ranks holding them compute
//      their E-values and alignments, and merges the hits on rank 0 (rounds of kQueriesPerRound queries).
//
// Determinism: ranking is a total order (score descending, then database id ascending) and TopK keeps the
// same set for any insertion order, so hits do not depend on the batch size, the thread count, the
// number of engines or of ranks; every engine returns the exact score of engine.hpp.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/blast_db.hpp"
#include "dist/bytes.hpp"
#include "dist/shard.hpp"
#include "dist/sw_wire.hpp"
#include "sw/model.hpp"
#include "sw/pairwise.hpp"
#include "sw/simd/pass.hpp"
#include "swsearch/engine.hpp"
#include "swsearch/stats.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/swsearch.hpp"
#include "warpsearch/thread_pool.hpp"
#include "warpsearch/topk.hpp"

namespace warpsearch::swsearch {

// ---------------------------------------------------------------------------------------------------
// 1. Options
// ---------------------------------------------------------------------------------------------------

void Options::validate() const {
  if (top == 0) throw Error(ErrorKind::kUsage, "the number of reported hits (--top) must be at least 1");
  if (!(evalue > 0.0) || std::isnan(evalue))
    throw Error(ErrorKind::kUsage, fmt::format("the E-value threshold must be positive (got {})", evalue));
  gaps.validate();
  if (static_cast<long long>(gaps.open) + gaps.extend < 1)
    throw Error(ErrorKind::kUsage, "gap open + gap extend must be at least 1 (a gap must cost something)");
  if (matrix.max_score() <= 0)
    throw Error(
        ErrorKind::kUsage,
        fmt::format("matrix {} has no positive score: every local alignment would score 0", matrix.name()));
  if (Z && *Z == 0) throw Error(ErrorKind::kUsage, "the effective database size (-Z) must be at least 1");
  std::set<int> seen;
  for (const int gpu : gpus) {
    if (gpu < 0) throw Error(ErrorKind::kUsage, fmt::format("GPU id {} is negative", gpu));
    if (!seen.insert(gpu).second) throw Error(ErrorKind::kUsage, fmt::format("GPU {} is listed twice", gpu));
  }
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---------------------------------------------------------------------------------------------------
// 2. Inputs
// ---------------------------------------------------------------------------------------------------

// Error(kInput) unless the file's alphabet and the matrix's are both protein or both nucleotide (DNA and
// RNA share codes).
void check_alphabet(const Alphabet& found, const ScoringMatrix& matrix, const std::string& what,
                    const std::string& path) {
  if (found.is_nucleotide() != Alphabet(matrix.alphabet()).is_nucleotide())
    throw Error(ErrorKind::kInput,
                fmt::format("the {} is {} but matrix {} scores {} sequences", what, to_string(found.kind()),
                            matrix.name(), to_string(matrix.alphabet())),
                path);
}

std::vector<QueryResult> read_queries(const std::string& path, const ScoringMatrix& matrix) {
  ReaderOptions options;
  options.allow_empty_sequences = true;  // reported below with the record's line
  SequenceReader reader(path, options);
  check_alphabet(reader.alphabet(), matrix, "query file", path);
  std::vector<QueryResult> queries;
  Sequence seq;
  while (reader.next(seq)) {
    if (seq.residues.empty())
      throw Error(ErrorKind::kInput, fmt::format("query {} is empty", seq.name), path, seq.line);
    if (seq.residues.size() > std::numeric_limits<std::uint32_t>::max())
      throw Error(ErrorKind::kInput, fmt::format("query {} is longer than 2^32-1 residues", seq.name), path,
                  seq.line);
    QueryResult q;
    q.name = std::move(seq.name);
    q.description = std::move(seq.description);
    q.residues = std::move(seq.residues);
    queries.push_back(std::move(q));
    seq = Sequence{};
  }
  if (queries.empty()) throw Error(ErrorKind::kInput, "the query file holds no sequences", path);
  return queries;
}

// One database batch: sequences first_id .. first_id + size() - 1 back to back, and for each engine the
// offsets of its share rebased to 0 (the engine's DbBatch views point into this buffer, which therefore
// stays unchanged while an engine holds it).
struct Batch {
  std::uint64_t first_id = 0;
  std::vector<std::uint8_t> residues;
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::string> names, descriptions;
  std::vector<WorkRange> shares;                          // sequence ranges per engine
  std::vector<std::vector<std::uint64_t>> share_offsets;  // rebased offsets per engine (several engines)
  double read_seconds = 0.0;

  std::size_t size() const { return offsets.size() - 1; }
  std::uint64_t length(std::size_t k) const { return offsets[k + 1] - offsets[k]; }
  std::span<const std::uint8_t> sequence(std::size_t k) const {
    return std::span<const std::uint8_t>(residues).subspan(offsets[k], offsets[k + 1] - offsets[k]);
  }
  DbBatch view(std::size_t engine) const {
    if (share_offsets.empty()) return DbBatch{residues, offsets};
    const WorkRange& r = shares[engine];
    return DbBatch{
        std::span<const std::uint8_t>(residues).subspan(offsets[r.begin], offsets[r.end] - offsets[r.begin]),
        share_offsets[engine]};
  }
  void clear() {
    residues.clear();
    offsets.assign(1, 0);
    names.clear();
    descriptions.clear();
    shares.clear();
    share_offsets.clear();
  }
};

// This process's part of the database: part `part` of `parts` (dist/shard.hpp); all of it for one part.
struct ShardSpec {
  int part = 0;
  int parts = 1;
  // A sequence file's total weight (residues + sequences, dist::shard_weight), which its shards need
  // before reading it; a packed or BLAST+ database's shard comes from its length table.
  std::uint64_t total_weight = 0;
};

// Reads the database (or this process's shard of it) in batches; one fill() at a time (the caller's
// reader thread).
class BatchReader {
 public:
  BatchReader(SequenceSource& source, std::uint64_t max_residues, std::size_t engines, const ShardSpec& shard)
      : source_(source), max_residues_(max_residues), engines_(engines), part_(shard.part) {
    if (shard.parts <= 1) return;
    const PackedDb* packed = source.packed_db();
    const BlastDb* blast = source.blast_db();
    if (packed != nullptr || blast != nullptr) {
      const std::uint64_t size = packed != nullptr ? packed->size() : blast->size();
      const dist::ShardRange r = dist::shard_range(
          size, [&](std::uint64_t i) { return packed != nullptr ? packed->length(i) : blast->length(i); },
          shard.part, shard.parts);
      by_id_ = true;
      next_id_ = r.begin;
      end_id_ = r.end;
    } else {
      planner_.emplace(shard.total_weight, shard.parts);
    }
  }

  // Fills `batch` with the next sequences; false when the database (shard) has none left.
  bool fill(Batch& batch) {
    const Clock::time_point start = Clock::now();
    batch.clear();
    if (!have_pending_) have_pending_ = next_mine();
    batch.first_id = pending_id_;
    // Invariant: pending_ holds the next unread sequence of the shard (id pending_id_) when have_pending_.
    while (have_pending_) {
      const std::uint64_t len = pending_.residues.size();
      if (batch.size() > 0 && batch.residues.size() + len > max_residues_) break;
      if (len > std::numeric_limits<std::uint32_t>::max())
        throw Error(ErrorKind::kInput,
                    fmt::format("database sequence {} is longer than 2^32-1 residues", pending_.name),
                    source_.path(), pending_.line);
      batch.residues.insert(batch.residues.end(), pending_.residues.begin(), pending_.residues.end());
      batch.offsets.push_back(batch.residues.size());
      batch.names.push_back(std::move(pending_.name));
      batch.descriptions.push_back(std::move(pending_.description));
      ++sequences_;
      have_pending_ = next_mine();
    }
    split(batch);
    batch.read_seconds = seconds_since(start);
    return batch.size() > 0;
  }

  // Sequences read into batches so far (of the shard).
  std::uint64_t sequences() const { return sequences_; }

 private:
  // Reads the shard's next sequence into pending_ (its database id into pending_id_); false at its end.
  // The ids of a shard are consecutive (shards are contiguous ranges).
  bool next_mine() {
    if (finished_) return false;
    if (by_id_) {
      if (next_id_ >= end_id_) {
        finished_ = true;
        return false;
      }
      if (source_.packed_db() != nullptr)
        source_.packed_db()->to_sequence(next_id_, pending_);
      else
        source_.blast_db()->to_sequence(next_id_, pending_);
      pending_id_ = next_id_++;
      return true;
    }
    while (source_.next(pending_)) {
      const std::uint64_t id = next_id_++;
      if (planner_) {
        const int owner = planner_->next(pending_.residues.size());
        if (owner < part_) continue;  // an earlier shard's
        if (owner > part_) break;     // past this shard: the rest of the file is not read
      }
      pending_id_ = id;
      return true;
    }
    finished_ = true;
    return false;
  }

  // Shares of several engines: contiguous ranges of near-equal residues.
  void split(Batch& batch) const {
    if (engines_ <= 1) return;
    std::vector<std::uint64_t> weights(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) weights[k] = batch.length(k);
    batch.shares = split_work(weights, engines_);
    batch.share_offsets.resize(engines_);
    for (std::size_t e = 0; e < engines_; ++e) {
      const WorkRange& r = batch.shares[e];
      std::vector<std::uint64_t>& offs = batch.share_offsets[e];
      offs.assign(batch.offsets.begin() + static_cast<std::ptrdiff_t>(r.begin),
                  batch.offsets.begin() + static_cast<std::ptrdiff_t>(r.end) + 1);
      const std::uint64_t base = offs.front();
      for (std::uint64_t& o : offs) o -= base;
    }
  }

  SequenceSource& source_;
  std::uint64_t max_residues_;
  std::size_t engines_;
  int part_ = 0;
  Sequence pending_;
  bool have_pending_ = false;
  std::uint64_t pending_id_ = 0;
  std::uint64_t next_id_ = 0;  // database id of the next sequence read from the source
  std::uint64_t sequences_ = 0;
  bool finished_ = false;
  // Several shards: a database read by id in [next_id_, end_id_), or a sequence file's shard planner.
  bool by_id_ = false;
  std::uint64_t end_id_ = 0;
  std::optional<dist::ShardPlanner> planner_;
};

// One or two queries scored together (ScoreEngine::scores2).
inline constexpr std::size_t kNoQuery = static_cast<std::size_t>(-1);
struct Unit {
  std::size_t a = 0;
  std::size_t b = kNoQuery;
};
// The queries `mine` sorted by length (ties by index), each paired with the next when the shorter has at
// least half the longer's length, else scored alone. The GPU's pair kernels pad the shorter query to the
// longer's rows and still score more of the real cells per second than one query at a time for the
// standard queries paired this way (on an H200: 144 + 189 aa 3.96 TCUPS against 2.95 and 3.08 alone; 222
// + 375 3.52 against 3.13 and 3.34; docs/PERFORMANCE.md, 2026-11-28).
std::vector<Unit> pair_queries(const std::vector<std::size_t>& mine,
                               const std::vector<QueryResult>& queries) {
  std::vector<std::size_t> order = mine;
  auto length = [&](std::size_t q) { return queries[q].residues.size(); };
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return length(x) != length(y) ? length(x) < length(y) : x < y;
  });
  std::vector<Unit> units;
  for (std::size_t k = 0; k < order.size();) {
    if (k + 1 < order.size() && 2 * length(order[k]) >= length(order[k + 1])) {
      units.push_back(Unit{order[k], order[k + 1]});
      k += 2;
    } else {
      units.push_back(Unit{order[k], kNoQuery});
      ++k;
    }
  }
  return units;
}

// Batch size when Options::batch_residues is 0: at most 2^30 residues, two batches within an eighth of
// the host memory (shared by the `local_processes` ranks of a distributed search on this node), and on GPUs
// each engine's share within a quarter of its free memory.
std::uint64_t auto_batch_residues(const Options& options, int local_processes) {
  std::uint64_t limit = std::uint64_t{1} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0)
    limit = std::min(limit, static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 16 /
                                static_cast<std::uint64_t>(std::max(local_processes, 1)));
  if (!options.gpus.empty()) {
    const DeviceProbe probe = probe_devices();
    std::uint64_t least_free = std::numeric_limits<std::uint64_t>::max();
    for (const int id : options.gpus)
      for (const DeviceInfo& d : probe.devices)
        if (d.id == id) least_free = std::min(least_free, d.free_memory);
    if (least_free != std::numeric_limits<std::uint64_t>::max())
      limit = std::min(limit, least_free / 4 * options.gpus.size());
  }
  return std::max<std::uint64_t>(limit, std::uint64_t{1} << 16);
}

// ---------------------------------------------------------------------------------------------------
// 3. Candidates
// ---------------------------------------------------------------------------------------------------

struct Target {
  std::string name, description;
  std::uint32_t length = 0;
  std::vector<std::uint8_t> residues;  // with Options::alignments only
};

struct Candidate {
  std::int32_t score = 0;
  std::uint64_t id = 0;
  std::shared_ptr<const Target> target;
};

// Score descending, then database id ascending: a total order on candidates (ids are unique).
struct Better {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  }
};

using Candidates = TopK<Candidate, Better>;

// Offers every positive score of one query over one batch to its TopK. Targets are copied out of the
// batch once, when first needed by any query (records[k], shared).
void merge(const Batch& batch, std::span<const std::int32_t> scores, bool keep_residues, Candidates& top,
           std::vector<std::shared_ptr<const Target>>& records) {
  for (std::size_t k = 0; k < scores.size(); ++k) {
    Candidate c{scores[k], batch.first_id + k, nullptr};
    if (c.score <= 0 || !top.would_accept(c)) continue;  // score 0: no local alignment at all
    if (!records[k]) {
      auto t = std::make_shared<Target>();
      t->name = batch.names[k];
      t->description = batch.descriptions[k];
      t->length = static_cast<std::uint32_t>(batch.length(k));
      if (keep_residues) t->residues.assign(batch.sequence(k).begin(), batch.sequence(k).end());
      records[k] = std::move(t);
    }
    c.target = records[k];
    top.push(std::move(c));
  }
}

// Runs `body(e)` for every engine index, in parallel threads when there are several; rethrows the first
// error after all finished.
template <class F>
void for_each_engine(std::size_t engines, const F& body) {
  if (engines == 1) {
    body(std::size_t{0});
    return;
  }
  std::vector<std::future<void>> futures;
  futures.reserve(engines);
  for (std::size_t e = 0; e < engines; ++e)
    futures.push_back(std::async(std::launch::async, [&body, e] { body(e); }));
  std::exception_ptr error;
  for (auto& f : futures) {
    try {
      f.get();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// ---------------------------------------------------------------------------------------------------
// 4. Alignments
// ---------------------------------------------------------------------------------------------------

// The alignment of one reported hit, computed as the align family's CPU path does (forward pass, reverse
// pass on the reversed prefixes, traceback), and the counts derived from its CIGAR.
void align_hit(const sw::PassModel& model, std::span<const std::uint8_t> query, const Target& target,
               Hit& hit, sw::simd::Workspace& workspace, std::vector<std::uint8_t>& rq,
               std::vector<std::uint8_t>& rt) {
  const std::span<const std::uint8_t> t(target.residues);
  const sw::EndPoint fwd = sw::simd::pass(model, query, t, workspace);
  sw::EndPoint rev;
  if (sw::needs_reverse(model, fwd, query.size())) {
    const sw::ReverseExtent ext = sw::reverse_extent(model.mode, fwd, query.size());
    sw::reverse_prefix(query, ext.qlen, rq);
    sw::reverse_prefix(t, ext.tlen, rt);
    rev = sw::simd::pass(model, rq, rt, workspace, sw::simd::best_isa(), sw::reverse_known_score(model, fwd));
  }
  align::Result r = sw::make_result(model, fwd, rev, query.size(), t.size());
  sw::traceback(model, query, t, r);
  if (r.score != hit.score)
    throw Error(ErrorKind::kInternal,
                fmt::format("swsearch: the alignment of {} scores {} but the engine said {}", target.name,
                            r.score, hit.score));
  // Walk the CIGAR: positives are aligned pairs with a positive substitution score; every I or D run is
  // one gap opening (an I run next to a D run counts twice, as BLAST+ counts it).
  std::uint32_t qi = r.query_begin, ti = r.target_begin, count = 0;
  hit.positives = hit.gap_opens = hit.gaps = 0;
  for (const char ch : r.cigar) {
    if (ch >= '0' && ch <= '9') {
      count = count * 10 + static_cast<std::uint32_t>(ch - '0');
      continue;
    }
    if (ch == '=' || ch == 'X') {
      for (std::uint32_t k = 0; k < count; ++k, ++qi, ++ti)
        if (model.score(query[qi], t[ti]) > 0) ++hit.positives;
    } else if (ch == 'I' || ch == 'D') {
      ++hit.gap_opens;
      hit.gaps += count;
      (ch == 'I' ? qi : ti) += count;
    } else {
      throw Error(ErrorKind::kInternal, fmt::format("swsearch: unexpected CIGAR operation '{}'", ch));
    }
    count = 0;
  }
  if (qi != r.query_end || ti != r.target_end)
    throw Error(ErrorKind::kInternal,
                fmt::format("swsearch: the CIGAR of {} does not span its ranges", target.name));
  hit.alignment = std::move(r);
}

// ---------------------------------------------------------------------------------------------------
// search()
// ---------------------------------------------------------------------------------------------------

using EngineFactory =
    std::function<std::vector<std::unique_ptr<ScoreEngine>>(const sw::PassModel& model, ThreadPool& pool)>;

// The reported hits of queries [q0, q1) (ranked[q - q0]: the query's best candidates, ranked): those with
// E-value <= the threshold, with bit scores, and (Options::alignments) their alignments, computed in one
// parallel loop over every hit of the range, the largest (query x target) first, so that a few long
// alignments do not leave the threads of one query waiting.
std::vector<std::vector<Hit>> report_hits(const std::vector<QueryResult>& queries, std::size_t q0,
                                          const std::vector<std::vector<Candidate>>& ranked,
                                          const Statistics& statistics, const SearchSpace& space,
                                          const Options& options, const sw::PassModel& model,
                                          ThreadPool& pool) {
  std::vector<std::vector<Hit>> hits(ranked.size());
  struct Job {
    std::size_t query = 0, hit = 0;
    const Target* target = nullptr;
    std::uint64_t cells = 0;
  };
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const QueryResult& query = queries[q0 + i];
    const auto qlen = static_cast<std::uint32_t>(query.residues.size());
    for (const Candidate& c : ranked[i]) {
      const double e = statistics.evalue(c.score, qlen, c.target->length, space);
      if (!(e <= options.evalue)) continue;
      Hit hit;
      hit.target_id = c.id;
      hit.target_name = c.target->name;
      hit.target_description = c.target->description;
      hit.target_length = c.target->length;
      hit.target_residues = c.target->residues;
      hit.score = c.score;
      hit.bits = statistics.bits(c.score, qlen, c.target->length);
      hit.evalue = e;
      jobs.push_back(Job{i, hits[i].size(), c.target.get(), std::uint64_t{qlen} * c.target->length});
      hits[i].push_back(std::move(hit));
    }
  }
  if (options.alignments) {
    std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.cells > b.cells; });
    pool.parallel_for(jobs.size(), 1, [&](std::size_t begin, std::size_t end) {
      thread_local sw::simd::Workspace workspace;
      std::vector<std::uint8_t> rq, rt;
      for (std::size_t k = begin; k < end; ++k) {
        const Job& j = jobs[k];
        align_hit(model, queries[q0 + j.query].residues, *j.target, hits[j.query][j.hit], workspace, rq, rt);
      }
    });
  }
  return hits;
}

// A sequence file's shard weight (dist::shard_weight of its residues and sequences): one pass over it.
std::uint64_t sequence_file_weight(const std::string& path, const ReaderOptions& options) {
  SequenceSource source = SequenceSource::open(path, options);
  std::uint64_t residues = 0;
  Sequence seq;
  while (source.next(seq)) residues += seq.residues.size();
  return dist::shard_weight(residues, source.records());
}

// Queries finished together: their hits are aligned in one parallel loop (and, in a distributed search,
// merged on rank 0 in one exchange); bounds the memory the hits of finished queries take.
constexpr std::size_t kQueriesPerRound = 64;

// The end of a distributed search, for queries [q0, q1) (Summary and tops of every rank; on_query on rank
// 0 only). Three steps: every rank sends rank 0 the (score, id) of its ranked candidates of each query;
// rank 0 finds each query's cut (the `top`-th best over all ranks, when there are more) and broadcasts it;
// every rank reports its candidates not worse than the cut (E-values with the whole database's size,
// alignments), and rank 0 merges them by rank order (score, then database id) and calls on_query.
void finish_round(const dist::Comm& world, std::size_t q0, std::size_t q1, std::vector<QueryResult>& queries,
                  std::vector<Candidates>& tops, const Statistics& statistics, const SearchSpace& space,
                  const Options& options, const sw::PassModel& model, ThreadPool& pool,
                  const QueryCallback& on_query) {
  const Clock::time_point t0 = Clock::now();
  std::vector<std::vector<Candidate>> ranked(q1 - q0);
  for (std::size_t q = q0; q < q1; ++q) ranked[q - q0] = tops[q].take_sorted();
  const std::vector<dist::Bytes> lists = dist::exchange(world, [&] {
    dist::ByteWriter w;
    for (const std::vector<Candidate>& r : ranked) {
      w.integer(static_cast<std::uint64_t>(r.size()));
      for (const Candidate& c : r) {
        w.integer(c.score);
        w.integer(c.id);
      }
    }
    return w.take();
  });
  dist::Bytes cuts;
  if (world.is_root()) {
    std::vector<dist::ByteReader> readers;
    for (const dist::Bytes& b : lists) readers.emplace_back(b);
    dist::ByteWriter w;
    std::vector<Candidate> all;
    for (std::size_t q = q0; q < q1; ++q) {
      all.clear();
      for (dist::ByteReader& r : readers) {
        const std::size_t n = r.count(12);
        for (std::size_t k = 0; k < n; ++k) {
          Candidate c;
          c.score = r.integer<std::int32_t>();
          c.id = r.integer<std::uint64_t>();
          all.push_back(std::move(c));
        }
      }
      const bool cut = all.size() > options.top;
      w.boolean(cut);
      if (cut) {
        std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(options.top - 1), all.end(),
                         Better{});
        const Candidate& last = all[options.top - 1];
        w.integer(last.score);
        w.integer(last.id);
      }
    }
    for (const dist::ByteReader& r : readers) r.expect_done();
    cuts = w.take();
  }
  world.broadcast(cuts);
  const double cut_seconds = seconds_since(t0);
  double align_seconds = 0.0;

  const std::vector<dist::Bytes> parts = dist::exchange(world, [&] {
    dist::ByteReader cr(cuts);
    for (std::vector<Candidate>& mine : ranked) {
      if (!cr.boolean()) continue;
      Candidate last;
      last.score = cr.integer<std::int32_t>();
      last.id = cr.integer<std::uint64_t>();
      std::size_t keep = 0;
      while (keep < mine.size() && !Better{}(last, mine[keep])) ++keep;
      mine.resize(keep);
    }
    cr.expect_done();
    const Clock::time_point a0 = Clock::now();
    const std::vector<std::vector<Hit>> hits =
        report_hits(queries, q0, ranked, statistics, space, options, model, pool);
    align_seconds = seconds_since(a0);
    dist::ByteWriter w;
    for (const std::vector<Hit>& query_hits : hits) {
      w.integer(static_cast<std::uint64_t>(query_hits.size()));
      for (const Hit& h : query_hits) dist::write_sw_hit(w, h);
    }
    return w.take();
  });
  ranked.clear();
  if (options.timing)
    fmt::print(stderr,
               "swsearch timing: rank {}: queries {}-{}: cut {:.3f} s, E-values and alignments {:.3f} s, "
               "round {:.3f} s\n",
               world.rank(), q0 + 1, q1, cut_seconds, align_seconds, seconds_since(t0));
  if (!world.is_root()) return;
  std::vector<dist::ByteReader> readers;
  for (const dist::Bytes& b : parts) readers.emplace_back(b);
  for (std::size_t q = q0; q < q1; ++q) {
    QueryResult& query = queries[q];
    for (dist::ByteReader& r : readers) {
      const std::size_t n = r.count(8);
      for (std::size_t k = 0; k < n; ++k) query.hits.push_back(dist::read_sw_hit(r));
    }
    std::sort(query.hits.begin(), query.hits.end(), [](const Hit& a, const Hit& b) {
      return a.score != b.score ? a.score > b.score : a.target_id < b.target_id;
    });
    if (on_query) on_query(query);
    query = QueryResult{};
  }
  for (const dist::ByteReader& r : readers) r.expect_done();
}

Summary search_impl(const std::string& query_path, const std::string& db_path, const Options& options,
                    const QueryCallback& on_query, const EngineFactory& make_engines, const dist::Comm& world,
                    dist::Split split) {
  const bool distributed = world.size() > 1;
  const bool db_split = distributed && split == dist::Split::kDatabase;
  const bool timing = options.timing;
  const Clock::time_point search_start = Clock::now();

  // Inputs and engines. Under MPI every rank does this and all agree that it worked before going on.
  std::optional<Statistics> statistics;
  std::optional<sw::PassModel> model;
  std::vector<QueryResult> queries;
  std::optional<SequenceSource> source;
  std::unique_ptr<ThreadPool> pool;
  std::vector<std::unique_ptr<ScoreEngine>> engines;
  ShardSpec shard;
  ReaderOptions db_options;
  db_options.allow_empty_sequences = true;  // an empty database sequence scores 0 against everything
  dist::agree(world, [&] {
    options.validate();
    if (distributed && (query_path == "-" || db_path == "-"))
      throw Error(
          ErrorKind::kUsage,
          "under MPI every rank reads the queries and the database itself: neither may be '-' (stdin)");
    statistics.emplace(Statistics::make(options.matrix, options.gaps));  // kUsage before any input
    model.emplace(sw::PassModel::make(options.matrix, options.gaps, sw::Mode::kLocal));
    queries = read_queries(query_path, options.matrix);
    source.emplace(SequenceSource::open(db_path, db_options));
    check_alphabet(source->alphabet(), options.matrix, "database", db_path);
    if (db_split) {
      shard.part = world.rank();
      shard.parts = world.size();
      if (source->packed_db() == nullptr && source->blast_db() == nullptr)
        shard.total_weight = sequence_file_weight(db_path, db_options);
    }
    pool = std::make_unique<ThreadPool>(options.threads);
    engines = make_engines(*model, *pool);
    if (engines.empty()) throw Error(ErrorKind::kInternal, "swsearch: no score engine");
  });

  // The queries this rank scores: all of them, or under a query split query i on rank i mod N.
  std::vector<std::size_t> mine;
  for (std::size_t q = 0; q < queries.size(); ++q)
    if (!distributed || split == dist::Split::kDatabase ||
        q % static_cast<std::size_t>(world.size()) == static_cast<std::size_t>(world.rank()))
      mine.push_back(q);
  std::uint64_t mine_residues = 0;
  for (const std::size_t q : mine) mine_residues += queries[q].residues.size();
  // Scoring units: the queries by length, neighbours paired (ScoreEngine::scores2: a GPU engine scores both
  // in one pass); results do not depend on the pairing.
  const std::vector<Unit> units = pair_queries(mine, queries);

  Summary summary;
  summary.queries = queries.size();
  for (const auto& e : engines) summary.engines.push_back(e->describe());
  const std::uint64_t batch_limit =
      options.batch_residues > 0 ? options.batch_residues : auto_batch_residues(options, world.local_size());
  if (timing)
    fmt::print(stderr,
               "swsearch timing: {}{} queries, batches of <= {} residues, engines: {} (inputs and engines "
               "ready in {:.3f} s)\n",
               distributed ? fmt::format("rank {} of {}: ", world.rank(), world.size()) : std::string(),
               mine.size(), batch_limit, fmt::join(summary.engines, "; "), seconds_since(search_start));

  // Scoring stage: batch `current` on the engines while the reader fills `next`.
  std::vector<Candidates> tops;
  tops.reserve(queries.size());
  for (std::size_t q = 0; q < queries.size(); ++q) tops.emplace_back(options.top);
  std::vector<double> query_score_seconds(queries.size(), 0.0);
  std::uint64_t local_sequences = 0, local_residues = 0, local_batches = 0;
  const Clock::time_point stage_start = Clock::now();
  dist::agree(world, [&] {
    BatchReader reader(*source, batch_limit, engines.size(), shard);
    auto current = std::make_unique<Batch>(), next = std::make_unique<Batch>();
    bool have = reader.fill(*current);
    std::array<std::vector<std::int32_t>, 4> scores;
    std::vector<std::shared_ptr<const Target>> records;
    while (have) {
      const Batch& batch = *current;
      ++local_batches;
      local_residues += batch.residues.size();
      Clock::time_point t0 = Clock::now();
      for_each_engine(engines.size(), [&](std::size_t e) {
        if (engines.size() == 1 || batch.shares[e].end > batch.shares[e].begin)
          engines[e]->set_database(batch.view(e));
      });
      const double upload = seconds_since(t0);
      // The engines no longer hold *next: read into it meanwhile.
      std::future<bool> reading =
          std::async(std::launch::async, [&reader, &next] { return reader.fill(*next); });
      records.assign(batch.size(), nullptr);
      double score_seconds = 0.0, merge_seconds = 0.0;
      // Unit u (one query or two, `units`) is scored into scores[2 * (u % 2)] (and the next buffer) while
      // the merges of the unit before (one query at a time: they share `records`) read the other two.
      std::future<void> merging;
      for (std::size_t u = 0; u < units.size(); ++u) {
        const Unit unit = units[u];
        const bool two = unit.b != kNoQuery;
        std::vector<std::int32_t>& out_a = scores[2 * (u % 2)];
        std::vector<std::int32_t>& out_b = scores[2 * (u % 2) + 1];
        out_a.assign(batch.size(), 0);
        if (two) out_b.assign(batch.size(), 0);
        t0 = Clock::now();
        const std::span<const std::uint8_t> qa(queries[unit.a].residues);
        const std::span<const std::uint8_t> qb =
            two ? std::span<const std::uint8_t>(queries[unit.b].residues) : std::span<const std::uint8_t>();
        for_each_engine(engines.size(), [&](std::size_t e) {
          const WorkRange r = engines.size() == 1 ? WorkRange{0, batch.size(), 0} : batch.shares[e];
          if (r.end <= r.begin && engines.size() > 1) return;
          const std::span<std::int32_t> sa = std::span<std::int32_t>(out_a).subspan(r.begin, r.end - r.begin);
          if (two)
            engines[e]->scores2(qa, qb, sa, std::span<std::int32_t>(out_b).subspan(r.begin, r.end - r.begin));
          else
            engines[e]->scores(qa, sa);
        });
        const double s = seconds_since(t0);
        // A pair's time is shared by its queries in proportion to their lengths.
        if (two) {
          const double la = static_cast<double>(qa.size()), lb = static_cast<double>(qb.size());
          query_score_seconds[unit.a] += s * la / (la + lb);
          query_score_seconds[unit.b] += s * lb / (la + lb);
        } else {
          query_score_seconds[unit.a] += s;
        }
        score_seconds += s;
        if (merging.valid()) merging.get();
        merging = std::async(std::launch::async, [&, unit, two, u] {
          const Clock::time_point m0 = Clock::now();
          merge(batch, scores[2 * (u % 2)], options.alignments, tops[unit.a], records);
          if (two) merge(batch, scores[2 * (u % 2) + 1], options.alignments, tops[unit.b], records);
          merge_seconds += seconds_since(m0);
        });
      }
      if (merging.valid()) merging.get();
      t0 = Clock::now();
      have = reading.get();
      const double wait = seconds_since(t0);
      if (timing) {
        const double cells = static_cast<double>(mine_residues) * static_cast<double>(batch.residues.size());
        fmt::print(
            stderr,
            "swsearch timing: {}batch {}: {} sequences, {} residues: read {:.3f} s, set_database {:.3f} s, "
            "score {:.3f} s ({:.2f} GCUPS), merge {:.3f} s, wait for next batch {:.3f} s\n",
            distributed ? fmt::format("rank {}: ", world.rank()) : std::string(), local_batches, batch.size(),
            batch.residues.size(), batch.read_seconds, upload, score_seconds,
            score_seconds > 0 ? cells / score_seconds * 1e-9 : 0.0, merge_seconds, wait);
      }
      std::swap(current, next);
    }
    local_sequences = reader.sequences();
    // The engines still hold views of the last batch but are not called again (only stats()).
  });
  const double local_seconds = seconds_since(stage_start);
  std::uint64_t local_overflow = 0;
  for (const auto& e : engines) local_overflow += e->stats().overflow_rescored;
  // Whole-run totals: the shards add up to the database; under a query split every rank read all of it.
  if (db_split) {
    summary.db_sequences = world.allreduce_sum(local_sequences);
    summary.db_residues = world.allreduce_sum(local_residues);
    summary.batches = world.allreduce_sum(local_batches);
  } else {
    summary.db_sequences = local_sequences;
    summary.db_residues = local_residues;
    summary.batches = world.allreduce_max(local_batches);
  }
  summary.overflow_rescored = world.allreduce_sum(local_overflow);
  summary.score_seconds =
      static_cast<double>(world.allreduce_max(static_cast<std::uint64_t>(local_seconds * 1e6))) * 1e-6;
  if (!distributed) summary.score_seconds = local_seconds;
  dist::agree(world, [&] {
    if (summary.db_sequences == 0) throw Error(ErrorKind::kInput, "the database holds no sequences", db_path);
  });
  for (const QueryResult& q : queries) summary.cells += q.residues.size() * summary.db_residues;
  if (timing && world.is_root())
    fmt::print(
        stderr, "swsearch timing: scoring {:.3f} s for {} cells ({:.2f} GCUPS), {} pairs rescored wider\n",
        summary.score_seconds, summary.cells,
        summary.score_seconds > 0 ? static_cast<double>(summary.cells) / summary.score_seconds * 1e-9 : 0.0,
        summary.overflow_rescored);

  // E-values (the whole database's size), alignments, callbacks.
  const SearchSpace space{options.Z.value_or(summary.db_sequences), summary.db_residues};
  if (distributed) {
    for (std::size_t q0 = 0; q0 < queries.size(); q0 += kQueriesPerRound)
      finish_round(world, q0, std::min(queries.size(), q0 + kQueriesPerRound), queries, tops, *statistics,
                   space, options, *model, *pool, on_query);
    return summary;
  }
  for (std::size_t q0 = 0; q0 < queries.size(); q0 += kQueriesPerRound) {
    const std::size_t q1 = std::min(queries.size(), q0 + kQueriesPerRound);
    std::vector<std::vector<Candidate>> ranked;
    for (std::size_t q = q0; q < q1; ++q) ranked.push_back(tops[q].take_sorted());
    const Clock::time_point t0 = Clock::now();
    std::vector<std::vector<Hit>> hits =
        report_hits(queries, q0, ranked, *statistics, space, options, *model, *pool);
    ranked.clear();
    if (timing) {
      std::size_t n = 0;
      for (const std::vector<Hit>& h : hits) n += h.size();
      fmt::print(stderr, "swsearch timing: queries {}-{}: {} hits, E-values and alignments {:.3f} s\n",
                 q0 + 1, q1, n, seconds_since(t0));
    }
    for (std::size_t q = q0; q < q1; ++q) {
      QueryResult& query = queries[q];
      query.hits = std::move(hits[q - q0]);
      if (timing)
        fmt::print(stderr, "swsearch timing: query {} ({}, {} residues): score {:.3f} s, {} hits\n", q + 1,
                   query.name, query.residues.size(), query_score_seconds[q], query.hits.size());
      if (on_query) on_query(query);
      query = QueryResult{};  // release the query's hits once reported
    }
  }
  return summary;
}

}  // namespace

Summary search(const std::string& query_path, const std::string& db_path, const Options& options,
               const QueryCallback& on_query, const dist::Comm* comm, dist::Split split) {
  const dist::Comm one_process;
  return search_impl(
      query_path, db_path, options, on_query,
      [&](const sw::PassModel& model, ThreadPool& pool) {
        std::vector<std::unique_ptr<ScoreEngine>> engines;
        if (options.gpus.empty()) {
          engines.push_back(make_cpu_engine(model, pool));
        } else {
          for (const int device : options.gpus) engines.push_back(make_gpu_engine(model, device));
        }
        return engines;
      },
      comm != nullptr ? *comm : one_process, split);
}

namespace detail {
// For tests (declared in tests/swsearch/test_search.cpp): search() with `engines` CPU engines sharing the
// pool, each batch split among them exactly as among GPUs (Options::gpus must be empty).
Summary search_with_cpu_engines(const std::string& query_path, const std::string& db_path,
                                const Options& options, const QueryCallback& on_query, std::size_t engines) {
  return search_impl(
      query_path, db_path, options, on_query,
      [engines](const sw::PassModel& model, ThreadPool& pool) {
        std::vector<std::unique_ptr<ScoreEngine>> out;
        for (std::size_t e = 0; e < engines; ++e) out.push_back(make_cpu_engine(model, pool));
        return out;
      },
      dist::Comm(), dist::Split::kDatabase);
}
}  // namespace detail

}  // namespace warpsearch::swsearch
