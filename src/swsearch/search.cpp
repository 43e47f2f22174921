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
//   4. After the stream: E-values and bit scores (Statistics, search space known only now), the E-value
//      filter, the alignments of the reported hits (sw::simd passes + sw::traceback on the pool, as the
//      align family's CPU path computes them), then the callback, in query order.
//
// Determinism: ranking is a total order (score descending, then database id ascending) and TopK keeps the
// same set for any insertion order, so hits do not depend on the batch size, the thread count or the
// number of engines; every engine returns the exact score of engine.hpp.
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

#include "sw/model.hpp"
#include "sw/pairwise.hpp"
#include "sw/simd/pass.hpp"
#include "swsearch/engine.hpp"
#include "swsearch/stats.hpp"
#include "warpsearch/db.hpp"
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
  if (gaps.open + gaps.extend < 1)
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

// Reads the database in batches; one fill() at a time (the caller's reader thread).
class BatchReader {
 public:
  BatchReader(SequenceSource& source, std::uint64_t max_residues, std::size_t engines)
      : source_(source), max_residues_(max_residues), engines_(engines) {}

  // Fills `batch` with the next sequences; false when the database has none left.
  bool fill(Batch& batch) {
    const Clock::time_point start = Clock::now();
    batch.clear();
    batch.first_id = next_id_;
    if (!have_pending_) have_pending_ = source_.next(pending_);
    // Invariant: pending_ holds the next unread sequence when have_pending_.
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
      ++next_id_;
      have_pending_ = source_.next(pending_);
    }
    split(batch);
    batch.read_seconds = seconds_since(start);
    return batch.size() > 0;
  }

  std::uint64_t sequences() const { return next_id_; }

 private:
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
  Sequence pending_;
  bool have_pending_ = false;
  std::uint64_t next_id_ = 0;
};

// Batch size when Options::batch_residues is 0: at most 2^30 residues, two batches within an eighth of
// the host memory, and on GPUs each engine's share within a quarter of its free memory.
std::uint64_t auto_batch_residues(const Options& options) {
  std::uint64_t limit = std::uint64_t{1} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0)
    limit = std::min(limit, static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 16);
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
    rev = sw::simd::pass(model, rq, rt, workspace);
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

Summary search_impl(const std::string& query_path, const std::string& db_path, const Options& options,
                    const QueryCallback& on_query, const EngineFactory& make_engines) {
  options.validate();
  const Statistics statistics = Statistics::make(options.matrix, options.gaps);  // kUsage before any input
  const sw::PassModel model = sw::PassModel::make(options.matrix, options.gaps, sw::Mode::kLocal);
  const bool timing = options.timing;

  std::vector<QueryResult> queries = read_queries(query_path, options.matrix);

  ReaderOptions db_options;
  db_options.allow_empty_sequences = true;  // an empty database sequence scores 0 against everything
  SequenceSource source = SequenceSource::open(db_path, db_options);
  check_alphabet(source.alphabet(), options.matrix, "database", db_path);

  ThreadPool pool(options.threads);
  const std::vector<std::unique_ptr<ScoreEngine>> engines = make_engines(model, pool);
  if (engines.empty()) throw Error(ErrorKind::kInternal, "swsearch: no score engine");

  Summary summary;
  summary.queries = queries.size();
  for (const auto& e : engines) summary.engines.push_back(e->describe());
  const std::uint64_t batch_limit =
      options.batch_residues > 0 ? options.batch_residues : auto_batch_residues(options);
  if (timing)
    fmt::print(stderr, "swsearch timing: {} queries, batches of <= {} residues, engines: {}\n",
               queries.size(), batch_limit, fmt::join(summary.engines, "; "));

  // Scoring stage: batch `current` on the engines while the reader fills `next`.
  std::vector<Candidates> tops;
  tops.reserve(queries.size());
  for (std::size_t q = 0; q < queries.size(); ++q) tops.emplace_back(options.top);
  std::vector<double> query_score_seconds(queries.size(), 0.0);
  BatchReader reader(source, batch_limit, engines.size());
  auto current = std::make_unique<Batch>(), next = std::make_unique<Batch>();
  const Clock::time_point stage_start = Clock::now();
  bool have = reader.fill(*current);
  std::array<std::vector<std::int32_t>, 2> scores;
  std::vector<std::shared_ptr<const Target>> records;
  while (have) {
    const Batch& batch = *current;
    ++summary.batches;
    summary.db_residues += batch.residues.size();
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
    // Query q is scored into scores[q % 2] while the merge of query q - 1 (one at a time: they share
    // `records`) reads the other buffer.
    std::future<void> merging;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      std::vector<std::int32_t>& out = scores[q % 2];
      out.assign(batch.size(), 0);
      t0 = Clock::now();
      const std::span<const std::uint8_t> query(queries[q].residues);
      for_each_engine(engines.size(), [&](std::size_t e) {
        if (engines.size() == 1) {
          engines[0]->scores(query, out);
          return;
        }
        const WorkRange& r = batch.shares[e];
        if (r.end > r.begin)
          engines[e]->scores(query, std::span<std::int32_t>(out).subspan(r.begin, r.end - r.begin));
      });
      const double s = seconds_since(t0);
      query_score_seconds[q] += s;
      score_seconds += s;
      if (merging.valid()) merging.get();
      merging = std::async(std::launch::async, [&, q] {
        const Clock::time_point m0 = Clock::now();
        merge(batch, scores[q % 2], options.alignments, tops[q], records);
        merge_seconds += seconds_since(m0);
      });
    }
    if (merging.valid()) merging.get();
    t0 = Clock::now();
    have = reading.get();
    const double wait = seconds_since(t0);
    if (timing) {
      std::uint64_t qres = 0;
      for (const QueryResult& q : queries) qres += q.residues.size();
      const double cells = static_cast<double>(qres) * static_cast<double>(batch.residues.size());
      fmt::print(
          stderr,
          "swsearch timing: batch {}: {} sequences, {} residues: read {:.3f} s, set_database {:.3f} s, "
          "score {:.3f} s ({:.2f} GCUPS), merge {:.3f} s, wait for next batch {:.3f} s\n",
          summary.batches, batch.size(), batch.residues.size(), batch.read_seconds, upload, score_seconds,
          score_seconds > 0 ? cells / score_seconds * 1e-9 : 0.0, merge_seconds, wait);
    }
    std::swap(current, next);
  }
  summary.score_seconds = seconds_since(stage_start);
  summary.db_sequences = reader.sequences();
  // The engines still hold views of the last batch but are not called again (only stats()).
  records.clear();
  current.reset();
  next.reset();
  if (summary.db_sequences == 0) throw Error(ErrorKind::kInput, "the database holds no sequences", db_path);
  for (const auto& e : engines) summary.overflow_rescored += e->stats().overflow_rescored;
  for (const QueryResult& q : queries) summary.cells += q.residues.size() * summary.db_residues;
  if (timing)
    fmt::print(
        stderr, "swsearch timing: scoring {:.3f} s for {} cells ({:.2f} GCUPS), {} pairs rescored wider\n",
        summary.score_seconds, summary.cells,
        summary.score_seconds > 0 ? static_cast<double>(summary.cells) / summary.score_seconds * 1e-9 : 0.0,
        summary.overflow_rescored);

  // E-values, alignments, callbacks.
  const SearchSpace space{options.Z.value_or(summary.db_sequences), summary.db_residues};
  for (std::size_t q = 0; q < queries.size(); ++q) {
    QueryResult& query = queries[q];
    const auto qlen = static_cast<std::uint32_t>(query.residues.size());
    std::vector<Candidate> ranked = tops[q].take_sorted();
    std::vector<const Target*> targets;
    for (Candidate& c : ranked) {
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
      query.hits.push_back(std::move(hit));
      targets.push_back(c.target.get());
    }
    const Clock::time_point t0 = Clock::now();
    if (options.alignments) {
      pool.parallel_for(query.hits.size(), 1, [&](std::size_t begin, std::size_t end) {
        thread_local sw::simd::Workspace workspace;
        std::vector<std::uint8_t> rq, rt;
        for (std::size_t k = begin; k < end; ++k)
          align_hit(model, query.residues, *targets[k], query.hits[k], workspace, rq, rt);
      });
    }
    if (timing)
      fmt::print(stderr,
                 "swsearch timing: query {} ({}, {} residues): score {:.3f} s, {} hits, align {:.3f} s\n",
                 q + 1, query.name, qlen, query_score_seconds[q], query.hits.size(), seconds_since(t0));
    ranked.clear();
    if (on_query) on_query(query);
    query = QueryResult{};  // release the query's hits once reported
  }
  return summary;
}

}  // namespace

Summary search(const std::string& query_path, const std::string& db_path, const Options& options,
               const QueryCallback& on_query) {
  return search_impl(query_path, db_path, options, on_query,
                     [&](const sw::PassModel& model, ThreadPool& pool) {
                       std::vector<std::unique_ptr<ScoreEngine>> engines;
                       if (options.gpus.empty()) {
                         engines.push_back(make_cpu_engine(model, pool));
                       } else {
                         for (const int device : options.gpus)
                           engines.push_back(make_gpu_engine(model, device));
                       }
                       return engines;
                     });
}

namespace detail {
// For tests (declared in tests/swsearch/test_search.cpp): search() with `engines` CPU engines sharing the
// pool, each batch split among them exactly as among GPUs (Options::gpus must be empty).
Summary search_with_cpu_engines(const std::string& query_path, const std::string& db_path,
                                const Options& options, const QueryCallback& on_query, std::size_t engines) {
  return search_impl(query_path, db_path, options, on_query,
                     [engines](const sw::PassModel& model, ThreadPool& pool) {
                       std::vector<std::unique_ptr<ScoreEngine>> out;
                       for (std::size_t e = 0; e < engines; ++e) out.push_back(make_cpu_engine(model, pool));
                       return out;
                     });
}
}  // namespace detail

}  // namespace warpsearch::swsearch
