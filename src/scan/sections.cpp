// sections.cpp: exact sectioned scanning of one target sequence (scan_sections), the per-origin
// reduction of column records (reduce_records), the merge of ranked per-origin lists (merge_lists) and
// the CPU SectionRunner (make_cpu_runner).
//
// scan_sections, step by step (sections.hpp gives the idea):
//   1. Plan. Every runner asks for preferred_sections(ceil(n / runners), m, max) sections, max being
//      its part of the cap below (at least 1); the total is their sum, capped at n so that every
//      section has >= 1 column (when capped, each runner's share is scaled down
//      proportionally, largest remainders first in runner order; a runner may get none). Section k
//      is [b_k, b_{k+1}) with b_k = floor(k * n / total) (near-equal widths). Runner r gets a
//      contiguous range of sections, runner 0 the leftmost.
//   2. Pass 1. Section 0 computes [0, b_1) from the zero state; section k > 0 computes from
//      max(0, b_k - overlap) from the zero state and keeps [b_k, b_{k+1}); overlap = options.overlap
//      if > 0, else max(clamp(floor(n / total) / 8, 256, 16384), 2m + 256): under scoring systems in
//      the linear (global-like) regime, e.g. SSCA#1's 5/-3 with gaps 8+k on genomic DNA, the best
//      path into row i starts about 1.5 i columns to the left, so probes converge only after ~1.5 m
//      columns. The total is also capped so that sections are >= 8 automatic overlaps wide (every
//      runner keeps at least one section).
//   3. Convergence. Section 0 is exact; section k > 0 is exact iff section k-1 is exact and k's probe
//      equals k-1's (final) end state. Exactness is a prefix, so each round recomputes the first
//      non-exact section from its left neighbour's end state (start = own_begin = b_k): a recomputed
//      section is exact. A wide one (at least two parts of max(overlap, kMinSplitWidth) columns) is
//      first split into P parts, P = its runner's preferred_sections() for its width (at most that
//      many parts): part 0 is recomputed from the exact state, parts i > 0 as in pass 1 (from the zero
//      state, `overlap` columns early), all in one run; then the parts are sections like the others
//      (SectionStats::split_parts counts the added ones). A lone recomputed section has little
//      parallelism on a GPU; its parts run side by side. Rounds repeat until all are exact.
//   4. Candidates. Each runner reduces its own columns [b_first, b_last+1) (candidates()); the lists
//      are merged by merge_lists.
// States that are no longer needed (a probe once its section's exactness is settled, an end state once
// the right neighbour is exact) are released early: they hold m rows each.
#include "scan/sections.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "scan/reference.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::scan {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw Error(ErrorKind::kInternal, "scan sections: " + what);
}

// Calls work(r) for every r in `who`: on the caller when there is one, else one std::thread each. Every
// call finishes before this returns; the first exception (in `who` order) is then rethrown.
void for_each_concurrently(const std::vector<std::size_t>& who,
                           const std::function<void(std::size_t)>& work) {
  if (who.empty()) return;
  if (who.size() == 1) {
    work(who[0]);
    return;
  }
  std::vector<std::exception_ptr> errors(who.size());
  {
    std::vector<std::jthread> threads;  // joined on scope exit, also when starting one fails
    threads.reserve(who.size());
    for (std::size_t k = 0; k < who.size(); ++k)
      threads.emplace_back([&, k] {
        try {
          work(who[k]);
        } catch (...) {
          errors[k] = std::current_exception();
        }
      });
  }
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
}

// Origin identity of a candidate (one (seq, strand) per list, but the key includes them for safety).
bool origin_less(const Candidate& a, const Candidate& b) {
  if (a.seq != b.seq) return a.seq < b.seq;
  if (a.strand != b.strand) return a.strand < b.strand;
  if (a.qstart != b.qstart) return a.qstart < b.qstart;
  return a.tstart < b.tstart;
}
bool same_origin(const Candidate& a, const Candidate& b) {
  return a.seq == b.seq && a.strand == b.strand && a.qstart == b.qstart && a.tstart == b.tstart;
}

// Keeps the best-ranked candidate of each origin; the order of the result is unspecified.
void keep_best_per_origin(std::vector<Candidate>& v) {
  std::sort(v.begin(), v.end(), [](const Candidate& a, const Candidate& b) {
    if (!same_origin(a, b)) return origin_less(a, b);
    return candidate_before(a, b);
  });
  v.erase(std::unique(v.begin(), v.end(), same_origin), v.end());
}

// Ranks v (candidate_before) and keeps the first `limit`; returns true if some were dropped.
bool rank_and_limit(std::vector<Candidate>& v, std::size_t limit) {
  if (v.size() > limit) {
    std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(limit), v.end(), candidate_before);
    v.resize(limit);
    return true;
  }
  std::sort(v.begin(), v.end(), candidate_before);
  return false;
}

}  // namespace

// The candidate of record `col` (tend = begin + col) in 20 bytes: within one call seq and strand are
// fixed, so candidate_before reduces to score descending, tend (col) ascending, qend ascending.
struct RecordCandidate {
  std::int32_t score, qend, qstart, tstart, col;
};
bool record_before(const RecordCandidate& a, const RecordCandidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.col != b.col) return a.col < b.col;
  return a.qend < b.qend;
}
bool record_same_origin(const RecordCandidate& a, const RecordCandidate& b) {
  return a.qstart == b.qstart && a.tstart == b.tstart;
}

CandidateList reduce_records(std::span<const ColumnRecord> records, std::int64_t begin,
                             std::int32_t min_score, std::size_t limit, std::uint32_t seq, Strand strand) {
  if (begin < 0) fail("negative first column");
  if (records.size() > static_cast<std::size_t>(kMaxLength)) fail("too many records");
  // Only positive records are candidates (model.hpp), whatever min_score says.
  const std::int32_t floor = std::max<std::int32_t>(min_score, 1);
  std::vector<RecordCandidate> v;
  for (std::size_t k = 0; k < records.size(); ++k) {
    const ColumnRecord& r = records[k];
    if (r.score < floor) continue;
    const RecordCandidate c{r.score, r.qend, r.qstart, r.tstart, static_cast<std::int32_t>(k)};
    // Neighbouring columns often share an origin: keep only the better of such a run right away.
    if (!v.empty() && record_same_origin(v.back(), c)) {
      if (record_before(c, v.back())) v.back() = c;
      continue;
    }
    v.push_back(c);
  }
  // Best per origin: sort by origin, then rank; keep the first of each origin.
  std::sort(v.begin(), v.end(), [](const RecordCandidate& a, const RecordCandidate& b) {
    if (a.qstart != b.qstart) return a.qstart < b.qstart;
    if (a.tstart != b.tstart) return a.tstart < b.tstart;
    return record_before(a, b);
  });
  v.erase(std::unique(v.begin(), v.end(), record_same_origin), v.end());
  CandidateList out;
  if (v.size() > limit) {
    std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(limit), v.end(), record_before);
    v.resize(limit);
    out.truncated = true;
  } else {
    std::sort(v.begin(), v.end(), record_before);
  }
  out.items.reserve(v.size());
  for (const RecordCandidate& c : v)
    out.items.push_back(Candidate{c.score, seq, strand, c.qstart, c.qend, c.tstart, begin + c.col});
  return out;
}

// Merge semantics. Let U be the ranked per-origin best list of all candidates the inputs stand for
// (their items plus what each truncated input dropped). A truncated input L with items dropped only
// candidates ranking strictly after L.back(); a truncated input with no items (limit 0) may have
// dropped anything. Let B be the best-ranked back() over the truncated inputs (or "before everything"
// when one of them is empty). Every candidate of U ranking before-or-equal to B is in the inputs, and
// the best version of its origin too, so after dedup (keep the better-ranked per origin) and ranking,
// the items ranking before-or-equal to B are exactly U's prefix up to B. Items ranking after B are
// cut (a dropped candidate might rank before them), then the first `limit` are kept. truncated is
// true iff an input was truncated, something was cut, or more than `limit` remained; every candidate
// of U missing from the result then ranks after the result's back() (sections.hpp's definition).
// With one common `limit` for all inputs, at least `limit` items survive the cut whenever an input is
// truncated (each of that input's items either survives or is replaced by a better version of its
// origin, which ranks before B), so the result equals U's first `limit` exactly.
CandidateList merge_lists(std::vector<CandidateList> lists, std::size_t limit) {
  bool any_truncated = false;
  bool cut_all = false;
  const Candidate* bound = nullptr;
  std::size_t total = 0;
  for (const CandidateList& list : lists) {
    for (std::size_t k = 1; k < list.items.size(); ++k)
      if (!candidate_before(list.items[k - 1], list.items[k]))
        fail("merge_lists: an input list is not ranked");
    total += list.items.size();
    if (!list.truncated) continue;
    any_truncated = true;
    if (list.items.empty())
      cut_all = true;
    else if (bound == nullptr || candidate_before(list.items.back(), *bound))
      bound = &list.items.back();
  }

  CandidateList out;
  std::vector<Candidate>& v = out.items;
  if (!cut_all) {
    v.reserve(total);
    for (const CandidateList& list : lists)
      for (const Candidate& c : list.items)
        if (bound == nullptr || !candidate_before(*bound, c)) v.push_back(c);
  }
  // Cutting before dedup is equivalent: a kept candidate's better version ranks before it.
  const bool cut = v.size() < total;
  keep_best_per_origin(v);
  const bool limited = rank_and_limit(v, limit);
  out.truncated = any_truncated || cut || limited;
  return out;
}

// The smallest automatic pass-1 overlap for a query of m rows (see step 2 above).
static std::int64_t auto_overlap_floor(std::int64_t m) { return 2 * m + 256; }

CandidateList scan_sections(std::span<SectionRunner* const> runners, std::span<const std::uint8_t> target,
                            std::int64_t query_length, std::uint32_t seq, Strand strand,
                            std::int32_t min_score, std::size_t limit, const SectionPlanOptions& options,
                            SectionStats* stats) {
  if (runners.empty()) fail("no runners");
  for (SectionRunner* r : runners)
    if (r == nullptr) fail("null runner");
  if (query_length < 0 || query_length > kMaxLength) fail("bad query length");
  const auto n = static_cast<std::int64_t>(target.size());
  if (n > kMaxLength) fail("target too long");
  const auto m = static_cast<std::size_t>(query_length);
  SectionStats local_stats;
  SectionStats& st = stats != nullptr ? *stats : local_stats;
  st = SectionStats{};
  if (n == 0) return CandidateList{};

  // 1. Plan.
  const std::size_t nr = runners.size();
  const auto ncols = static_cast<std::size_t>(n);
  std::vector<std::size_t> share(nr);
  std::size_t total = 0;
  // Cap: every section has >= 1 column and, with the automatic overlap, is at least 8 overlaps wide
  // (but every runner may keep one section), so that pass 1 stays cheap. Each runner chooses its count
  // within its part of the cap for its share of the columns.
  std::size_t cap = ncols;
  if (options.overlap <= 0) {
    const std::int64_t wide = 8 * auto_overlap_floor(query_length);
    cap = std::min(cap, std::max<std::size_t>(nr, static_cast<std::size_t>(n / wide)));
  }
  const std::size_t per_runner_max = std::max<std::size_t>(1, cap / nr);
  const std::int64_t per_runner_cols =
      (n + static_cast<std::int64_t>(nr) - 1) / static_cast<std::int64_t>(nr);
  for (std::size_t r = 0; r < nr; ++r) {
    runners[r]->begin_target(target);
    // 1 <= share <= n keeps every product below 2^62 (n <= kMaxLength < 2^31).
    share[r] = std::clamp<std::size_t>(
        runners[r]->preferred_sections(per_runner_cols, query_length, per_runner_max), 1, per_runner_max);
    total += share[r];
  }
  cap = std::min(ncols, std::max(cap, nr));
  if (total > cap) {
    // Proportional scaling to `cap` sections: floors first, then the largest remainders (runner order
    // on ties) get one more each.
    std::vector<std::pair<std::size_t, std::size_t>> remainders;  // (remainder, runner)
    std::size_t assigned = 0;
    for (std::size_t r = 0; r < nr; ++r) {
      const std::size_t scaled = share[r] * cap;
      remainders.emplace_back(static_cast<std::size_t>(scaled % total), r);
      share[r] = static_cast<std::size_t>(scaled / total);
      assigned += share[r];
    }
    std::stable_sort(remainders.begin(), remainders.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; assigned < cap; ++k, ++assigned) ++share[remainders[k].second];
    total = cap;
  }
  const std::size_t ns = total;
  std::vector<std::int64_t> bounds(ns + 1);
  for (std::size_t k = 0; k <= ns; ++k) bounds[k] = static_cast<std::int64_t>(k * ncols / ns);
  std::vector<std::size_t> owner(ns), first(nr), last(nr);  // runner r owns sections [first, last)
  for (std::size_t r = 0, k = 0; r < nr; ++r) {
    first[r] = k;
    for (std::size_t c = 0; c < share[r]; ++c) owner[k++] = r;
    last[r] = k;
  }
  const std::int64_t overlap =
      options.overlap > 0
          ? options.overlap
          : std::max(std::clamp<std::int64_t>(n / static_cast<std::int64_t>(ns) / 8, 256, 16384),
                     auto_overlap_floor(query_length));
  st.sections = ns;

  std::vector<ColumnState> probes(ns), ends(ns);
  // Runs tasks for sections `which` (each runner its own, runners concurrently); stores probe/end.
  auto run_sections = [&](const std::vector<std::size_t>& which, auto make_task) {
    std::vector<std::vector<std::size_t>> per_runner(nr);
    for (std::size_t k : which) per_runner[owner[k]].push_back(k);
    std::vector<std::size_t> busy;
    for (std::size_t r = 0; r < nr; ++r)
      if (!per_runner[r].empty()) busy.push_back(r);
    std::vector<std::vector<SectionTask>> tasks(nr);
    for (std::size_t r : busy)
      for (std::size_t k : per_runner[r]) {
        tasks[r].push_back(make_task(k));
        st.cells += static_cast<std::uint64_t>(tasks[r].back().end - tasks[r].back().start) * m;
      }
    std::vector<std::vector<SectionResult>> results(nr);
    for_each_concurrently(busy, [&](std::size_t r) { results[r] = runners[r]->run(tasks[r]); });
    for (std::size_t r : busy) {
      if (results[r].size() != tasks[r].size()) fail("runner returned a wrong number of results");
      for (std::size_t t = 0; t < tasks[r].size(); ++t) {
        const std::size_t k = per_runner[r][t];
        SectionResult& res = results[r][t];
        if (res.end.size() != m) fail("runner returned an end state of the wrong size");
        if (tasks[r][t].own_begin > tasks[r][t].start) {
          if (res.probe.size() != m) fail("runner returned a probe state of the wrong size");
          probes[k] = std::move(res.probe);
        }
        ends[k] = std::move(res.end);
      }
    }
  };

  // 2. Pass 1.
  std::vector<std::size_t> all(ns);
  for (std::size_t k = 0; k < ns; ++k) all[k] = k;
  run_sections(all, [&](std::size_t k) {
    const std::int64_t b = bounds[k];
    return SectionTask{k == 0 ? 0 : std::max<std::int64_t>(0, b - overlap), b, bounds[k + 1], nullptr};
  });

  // 3. Convergence. exact[] is always a prefix of the sections; `settled` is its length.
  std::size_t settled = 1;
  auto extend_settled = [&] {
    while (settled < probes.size() && probes[settled] == ends[settled - 1]) {
      ColumnState().swap(probes[settled]);
      ColumnState().swap(ends[settled - 1]);
      ++settled;
    }
  };
  extend_settled();
  std::size_t ns_now = ns;  // sections, split parts included
  while (settled < ns_now) {
    // Non-exact sections whose left neighbour is exact: with exactness a prefix, that is `settled`.
    const std::size_t k = settled;
    const std::int64_t width = bounds[k + 1] - bounds[k];
    const std::int64_t floor = std::max(overlap, kMinSplitWidth);
    std::size_t parts = 1;
    if (width >= 2 * floor) {
      const auto most = static_cast<std::size_t>(width / floor);
      parts =
          std::clamp<std::size_t>(runners[owner[k]]->preferred_sections(width, query_length, most), 1, most);
    }
    if (parts > 1) {
      // Section k becomes parts k .. k + parts - 1 of the same runner.
      const std::int64_t b = bounds[k];
      std::vector<std::int64_t> inner;
      for (std::size_t p = 1; p < parts; ++p)
        inner.push_back(b + static_cast<std::int64_t>(p) * width / static_cast<std::int64_t>(parts));
      const auto at = static_cast<std::ptrdiff_t>(k);
      bounds.insert(bounds.begin() + at + 1, inner.begin(), inner.end());
      owner.insert(owner.begin() + at + 1, parts - 1, owner[k]);
      probes.insert(probes.begin() + at + 1, parts - 1, ColumnState());
      ends.insert(ends.begin() + at + 1, parts - 1, ColumnState());
      last[owner[k]] += parts - 1;
      for (std::size_t r = owner[k] + 1; r < nr; ++r) first[r] += parts - 1, last[r] += parts - 1;
      ns_now += parts - 1;
      st.split_parts += parts - 1;
    }
    std::vector<std::size_t> fix(parts);
    for (std::size_t p = 0; p < parts; ++p) fix[p] = k + p;
    run_sections(fix, [&](std::size_t j) {
      if (j == k) return SectionTask{bounds[j], bounds[j], bounds[j + 1], &ends[j - 1]};
      return SectionTask{std::max(bounds[k], bounds[j] - overlap), bounds[j], bounds[j + 1], nullptr};
    });
    ++st.fixups;
    ++st.fixup_rounds;
    ColumnState().swap(probes[settled]);
    ColumnState().swap(ends[settled - 1]);
    ++settled;
    extend_settled();
  }
  probes.clear();
  ends.clear();

  // 4. Candidates.
  std::vector<std::size_t> owners;
  for (std::size_t r = 0; r < nr; ++r)
    if (last[r] > first[r]) owners.push_back(r);
  std::vector<CandidateList> lists(nr);
  for_each_concurrently(owners, [&](std::size_t r) {
    lists[r] = runners[r]->candidates(bounds[first[r]], bounds[last[r]], min_score, limit, seq, strand);
  });
  return merge_lists(std::move(lists), limit);
}

namespace {

// The CPU engine: reference_columns() per task on a thread pool; records of the whole current target
// in one host vector.
class CpuRunner final : public SectionRunner {
 public:
  CpuRunner(const ScanModel& model, std::span<const std::uint8_t> query, unsigned threads)
      : model_(model), query_(query.begin(), query.end()), pool_(threads) {}

  void begin_target(std::span<const std::uint8_t> target) override {
    target_ = target;
    records_.assign(target.size(), ColumnRecord{});
  }

  std::vector<SectionResult> run(std::span<const SectionTask> tasks) override {
    const auto n = static_cast<std::int64_t>(target_.size());
    std::vector<std::pair<std::int64_t, std::int64_t>> owned;
    for (const SectionTask& t : tasks) {
      if (!(0 <= t.start && t.start <= t.own_begin && t.own_begin <= t.end && t.end <= n))
        fail("CPU runner: task outside the target");
      if (t.own_begin < t.end) owned.emplace_back(t.own_begin, t.end);
    }
    std::sort(owned.begin(), owned.end());
    for (std::size_t k = 1; k < owned.size(); ++k)
      if (owned[k].first < owned[k - 1].second) fail("CPU runner: tasks own overlapping columns");

    std::vector<SectionResult> results(tasks.size());
    pool_.parallel_for(tasks.size(), 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) {
        const SectionTask& t = tasks[k];
        const std::span<ColumnRecord> out = std::span<ColumnRecord>(records_).subspan(
            static_cast<std::size_t>(t.own_begin), static_cast<std::size_t>(t.end - t.own_begin));
        reference_columns(model_, query_, target_, t.start, t.own_begin, t.end, t.initial, out,
                          t.own_begin > t.start ? &results[k].probe : nullptr, &results[k].end);
      }
    });
    return results;
  }

  CandidateList candidates(std::int64_t begin, std::int64_t end, std::int32_t min_score, std::size_t limit,
                           std::uint32_t seq, Strand strand) override {
    if (!(0 <= begin && begin <= end && end <= static_cast<std::int64_t>(records_.size())))
      fail("CPU runner: candidate range outside the target");
    const std::span<const ColumnRecord> part = std::span<const ColumnRecord>(records_).subspan(
        static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
    return reduce_records(part, begin, min_score, limit, seq, strand);
  }

  // One section per thread-pool slot four times over (load balance), but sections of >= 1024 columns
  // when the target allows; a single thread gets a single section (no overlap to pay for).
  std::size_t preferred_sections(std::int64_t n, std::int64_t /*m*/,
                                 std::size_t max_sections) const override {
    if (pool_.size() <= 1) return 1;
    const std::int64_t wanted = 4 * static_cast<std::int64_t>(pool_.size());
    const auto count = static_cast<std::size_t>(std::max<std::int64_t>(1, std::min(wanted, n / 1024)));
    return std::min(count, std::max<std::size_t>(1, max_sections));
  }

 private:
  ScanModel model_;
  std::vector<std::uint8_t> query_;
  std::span<const std::uint8_t> target_;
  std::vector<ColumnRecord> records_;
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<SectionRunner> make_cpu_runner(const ScanModel& model, std::span<const std::uint8_t> query,
                                               unsigned threads) {
  return std::make_unique<CpuRunner>(model, query, threads);
}

}  // namespace warpsearch::scan
