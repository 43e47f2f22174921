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
// Under MPI (the collective overload) the runner list is every rank's runners in rank order and the
// steps are the same. Each rank runs its own runners' tasks and keeps their states; after every pass or
// fixup it reports to rank 0 the checks it can make itself (probe k against end k-1 when both are its
// own), the states of sections whose neighbour is on another rank, and its runners' preferred parts for
// wide sections it computed; rank 0 extends the exact prefix, picks the next fixup (with the left end
// state when that is on another rank) and broadcasts the decision. One process is the case R = 1, in
// which nothing is encoded or sent.
// States that are no longer needed (a probe once its section's exactness is settled, an end state once
// the right neighbour is exact) are released early: they hold m rows each.
#include "scan/sections.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "dist/bytes.hpp"
#include "scan/reference.hpp"
#include "warpsearch/dist.hpp"
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

namespace {

static_assert(sizeof(RowState) == 6 * sizeof(std::int32_t) && std::is_trivially_copyable_v<RowState>);
void put_state(dist::ByteWriter& w, const ColumnState& s) { w.int32s(s.data(), s.size() * 6); }
ColumnState get_state(dist::ByteReader& in, std::size_t m) {
  ColumnState s(m);
  in.int32s(s.data(), m * 6);
  return s;
}
// What a rank tells rank 0 after a round, about the sections it (re)computed in that round.
struct Report {
  std::vector<std::pair<std::size_t, bool>> matches;        // (k, probe k == end k-1): both on this rank
  std::vector<std::pair<std::size_t, ColumnState>> ends;    // end state of k; section k+1 is elsewhere
  std::vector<std::pair<std::size_t, ColumnState>> probes;  // probe of k; section k-1 is elsewhere
  std::vector<std::pair<std::size_t, std::size_t>> parts;   // preferred fixup parts of a wide section
};

// Rank 0's verdict after a round: the exact prefix, and the next fixup.
struct Decision {
  std::size_t settled = 0;
  std::size_t parts = 1;  // parts of section `settled` (when < the section count)
  ColumnState left;       // end state of section settled - 1, when it is on another rank than `settled`
};

// One scan_sections call (sections.hpp; the steps in this file's comment). Sections are owned by global
// runners (the ranks' runners in rank order); a section's probe and end states stay on its rank.
class SectionScan {
 public:
  SectionScan(const dist::Comm& comm, std::span<const std::size_t> runners_per_rank,
              std::span<SectionRunner* const> local, std::span<const std::uint8_t> target,
              std::int64_t query_length, const SectionPlanOptions& options, SectionStats& stats)
      : comm_(comm),
        me_(static_cast<std::size_t>(comm.rank())),
        local_(local),
        target_(target),
        m_(query_length),
        options_(options),
        st_(stats) {
    if (runners_per_rank.size() != static_cast<std::size_t>(comm.size()))
      fail("one runner count per rank expected");
    if (runners_per_rank[me_] != local.size()) fail("this rank's runner count differs from its runners");
    for (std::size_t r = 0; r < runners_per_rank.size(); ++r) {
      if (r == me_) base_ = runner_rank_.size();
      runner_rank_.insert(runner_rank_.end(), runners_per_rank[r], r);
    }
    if (runner_rank_.empty()) fail("no runners");
    for (SectionRunner* r : local)
      if (r == nullptr) fail("null runner");
    if (query_length < 0 || query_length > kMaxLength) fail("bad query length");
    if (static_cast<std::int64_t>(target.size()) > kMaxLength) fail("target too long");
  }

  CandidateList run(std::uint32_t seq, Strand strand, std::int32_t min_score, std::size_t limit) {
    st_ = SectionStats{};
    if (target_.empty()) return CandidateList{};
    plan();
    // 2. Pass 1, then 3. rounds of fixups until every section is exact.
    std::vector<std::size_t> all(ns_);
    for (std::size_t k = 0; k < ns_; ++k) all[k] = k;
    Decision d = round(
        all,
        [&](std::size_t k) {
          const std::int64_t b = bounds_[k];
          return SectionTask{k == 0 ? 0 : std::max<std::int64_t>(0, b - overlap_), b, bounds_[k + 1],
                             nullptr};
        },
        std::nullopt);
    while (d.settled < ns_) {
      const std::size_t k = d.settled;
      if (d.parts > 1) split(k, d.parts);
      std::vector<std::size_t> fix(d.parts);
      for (std::size_t p = 0; p < d.parts; ++p) fix[p] = k + p;
      const ColumnState* left = mine(k - 1) ? &ends_[k - 1] : &d.left;
      ++st_.fixups;
      ++st_.fixup_rounds;
      d = round(
          fix,
          [&](std::size_t j) {
            if (j == k) return SectionTask{bounds_[j], bounds_[j], bounds_[j + 1], left};
            return SectionTask{std::max(bounds_[k], bounds_[j] - overlap_), bounds_[j], bounds_[j + 1],
                               nullptr};
          },
          k);
    }
    probes_.clear();
    ends_.clear();
    return candidates(seq, strand, min_score, limit);
  }

 private:
  std::size_t rank_of(std::size_t k) const { return runner_rank_[owner_[k]]; }
  bool mine(std::size_t k) const { return rank_of(k) == me_; }
  bool distributed() const { return comm_.size() > 1; }

  // 1. Plan.
  void plan() {
    const std::size_t nr = runner_rank_.size();
    const auto n = static_cast<std::int64_t>(target_.size());
    const auto ncols = static_cast<std::size_t>(n);
    // Cap: every section has >= 1 column and, with the automatic overlap, is at least 8 overlaps wide
    // (but every runner may keep one section), so that pass 1 stays cheap. Each runner chooses its count
    // within its part of the cap for its share of the columns.
    std::size_t cap = ncols;
    if (options_.overlap <= 0) {
      const std::int64_t wide = 8 * auto_overlap_floor(m_);
      cap = std::min(cap, std::max<std::size_t>(nr, static_cast<std::size_t>(n / wide)));
    }
    const std::size_t per_runner_max = std::max<std::size_t>(1, cap / nr);
    const std::int64_t per_runner_cols =
        (n + static_cast<std::int64_t>(nr) - 1) / static_cast<std::int64_t>(nr);
    // Every runner's wish, gathered from the ranks. 1 <= share <= n keeps every product below 2^62
    // (n <= kMaxLength < 2^31).
    std::vector<std::size_t> share;
    const std::vector<dist::Bytes> wishes = dist::exchange_all(comm_, [&] {
      dist::ByteWriter w;
      for (SectionRunner* r : local_) {
        r->begin_target(target_);
        w.integer(static_cast<std::uint64_t>(std::clamp<std::size_t>(
            r->preferred_sections(per_runner_cols, m_, per_runner_max), 1, per_runner_max)));
      }
      return w.take();
    });
    for (const dist::Bytes& b : wishes) {
      dist::ByteReader in(b);
      while (!in.done()) share.push_back(in.integer<std::uint64_t>());
    }
    if (share.size() != nr) fail("runner wishes of the wrong count");
    std::size_t total = 0;
    for (const std::size_t s : share) {
      if (s < 1 || s > per_runner_max) fail("a runner wish out of range");
      total += s;
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
    ns_ = total;
    bounds_.resize(ns_ + 1);
    for (std::size_t k = 0; k <= ns_; ++k) bounds_[k] = static_cast<std::int64_t>(k * ncols / ns_);
    owner_.resize(ns_);
    first_.resize(nr);
    last_.resize(nr);
    for (std::size_t r = 0, k = 0; r < nr; ++r) {
      first_[r] = k;
      for (std::size_t c = 0; c < share[r]; ++c) owner_[k++] = r;
      last_[r] = k;
    }
    overlap_ = options_.overlap > 0
                   ? options_.overlap
                   : std::max(std::clamp<std::int64_t>(n / static_cast<std::int64_t>(ns_) / 8, 256, 16384),
                              auto_overlap_floor(m_));
    st_.sections = ns_;
    probes_.assign(ns_, std::nullopt);
    ends_.assign(ns_, ColumnState());
    dirty_.assign(ns_, 0);
    match_.assign(ns_, -1);
    pref_.assign(ns_, 0);
    cached_end_.assign(ns_, std::nullopt);
    cached_probe_.assign(ns_, std::nullopt);
  }

  // Runs this rank's tasks for the sections `which` (its runners concurrently) and keeps their states.
  void run_local(const std::vector<std::size_t>& which,
                 const std::function<SectionTask(std::size_t)>& make_task) {
    const auto m = static_cast<std::size_t>(m_);
    std::vector<std::vector<std::size_t>> per_runner(local_.size());
    for (const std::size_t k : which)
      if (mine(k)) per_runner[owner_[k] - base_].push_back(k);
    std::vector<std::size_t> busy;
    for (std::size_t r = 0; r < local_.size(); ++r)
      if (!per_runner[r].empty()) busy.push_back(r);
    std::vector<std::vector<SectionTask>> tasks(local_.size());
    for (const std::size_t r : busy)
      for (const std::size_t k : per_runner[r]) {
        tasks[r].push_back(make_task(k));
        cells_ += static_cast<std::uint64_t>(tasks[r].back().end - tasks[r].back().start) * m;
      }
    std::vector<std::vector<SectionResult>> results(local_.size());
    for_each_concurrently(busy, [&](std::size_t r) { results[r] = local_[r]->run(tasks[r]); });
    for (const std::size_t r : busy) {
      if (results[r].size() != tasks[r].size()) fail("runner returned a wrong number of results");
      for (std::size_t t = 0; t < tasks[r].size(); ++t) {
        const std::size_t k = per_runner[r][t];
        SectionResult& res = results[r][t];
        if (res.end.size() != m) fail("runner returned an end state of the wrong size");
        probes_[k].reset();
        if (tasks[r][t].own_begin > tasks[r][t].start) {
          if (res.probe.size() != m) fail("runner returned a probe state of the wrong size");
          probes_[k] = std::move(res.probe);
        }
        ends_[k] = std::move(res.end);
        dirty_[k] = 1;
      }
    }
  }

  // This rank's report on the sections it computed since the last one.
  Report make_report() {
    Report rep;
    const std::int64_t floor = std::max(overlap_, kMinSplitWidth);
    for (std::size_t k = 0; k < ns_; ++k) {
      if (!mine(k)) continue;
      const bool left_mine = k > 0 && mine(k - 1);
      if (k > 0 && left_mine && probes_[k] && (dirty_[k] || dirty_[k - 1]))
        rep.matches.emplace_back(k, *probes_[k] == ends_[k - 1]);
      if (!dirty_[k]) continue;
      if (k + 1 < ns_ && !mine(k + 1)) rep.ends.emplace_back(k, ends_[k]);
      if (k > 0 && !left_mine && probes_[k]) rep.probes.emplace_back(k, *probes_[k]);
      const std::int64_t width = bounds_[k + 1] - bounds_[k];
      if (width >= 2 * floor) {
        const auto most = static_cast<std::size_t>(width / floor);
        rep.parts.emplace_back(
            k,
            std::clamp<std::size_t>(local_[owner_[k] - base_]->preferred_sections(width, m_, most), 1, most));
      }
    }
    std::fill(dirty_.begin(), dirty_.end(), 0);
    return rep;
  }

  dist::Bytes encode(const Report& rep) const {
    dist::ByteWriter w;
    w.integer(static_cast<std::uint64_t>(rep.matches.size()));
    for (const auto& [k, same] : rep.matches) {
      w.integer(static_cast<std::uint64_t>(k));
      w.boolean(same);
    }
    w.integer(static_cast<std::uint64_t>(rep.ends.size()));
    for (const auto& [k, s] : rep.ends) {
      w.integer(static_cast<std::uint64_t>(k));
      put_state(w, s);
    }
    w.integer(static_cast<std::uint64_t>(rep.probes.size()));
    for (const auto& [k, s] : rep.probes) {
      w.integer(static_cast<std::uint64_t>(k));
      put_state(w, s);
    }
    w.integer(static_cast<std::uint64_t>(rep.parts.size()));
    for (const auto& [k, p] : rep.parts) {
      w.integer(static_cast<std::uint64_t>(k));
      w.integer(static_cast<std::uint64_t>(p));
    }
    return w.take();
  }
  Report decode(std::span<const std::uint8_t> bytes) const {
    const auto m = static_cast<std::size_t>(m_);
    dist::ByteReader in(bytes);
    Report rep;
    const auto index = [&] {
      const auto k = in.integer<std::uint64_t>();
      if (k >= ns_) fail("a report names a section that does not exist");
      return static_cast<std::size_t>(k);
    };
    rep.matches.resize(in.count(9));
    for (auto& [k, same] : rep.matches) {
      k = index();
      same = in.boolean();
    }
    rep.ends.resize(in.count(16));
    for (auto& [k, s] : rep.ends) {
      k = index();
      s = get_state(in, m);
    }
    rep.probes.resize(in.count(16));
    for (auto& [k, s] : rep.probes) {
      k = index();
      s = get_state(in, m);
    }
    rep.parts.resize(in.count(16));
    for (auto& [k, p] : rep.parts) {
      k = index();
      p = static_cast<std::size_t>(in.integer<std::uint64_t>());
    }
    in.expect_done();
    return rep;
  }

  // Rank 0: takes in a report.
  void absorb(Report rep) {
    for (const auto& [k, same] : rep.matches) match_[k] = same ? 1 : 0;
    for (const auto& [k, p] : rep.parts) pref_[k] = p;
    std::vector<std::size_t> touched;
    for (auto& [k, s] : rep.ends) {
      cached_end_[k] = std::move(s);
      touched.push_back(k + 1);
    }
    for (auto& [k, s] : rep.probes) {
      cached_probe_[k] = std::move(s);
      touched.push_back(k);
    }
    for (const std::size_t j : touched)
      if (j < ns_ && cached_end_[j - 1] && cached_probe_[j])
        match_[j] = *cached_probe_[j] == *cached_end_[j - 1] ? 1 : 0;
  }

  // Rank 0: the exact prefix after a round (section `fixed` was recomputed exactly) and the next fixup.
  Decision decide(std::optional<std::size_t> fixed) {
    Decision d;
    d.settled = fixed ? *fixed + 1 : settled_;
    while (d.settled < ns_ && match_[d.settled] == 1) ++d.settled;
    if (d.settled < ns_) {
      const std::size_t k = d.settled;
      const std::int64_t width = bounds_[k + 1] - bounds_[k];
      const std::int64_t floor = std::max(overlap_, kMinSplitWidth);
      if (width >= 2 * floor) {
        if (pref_[k] == 0) fail("no fixup parts reported for a wide section");
        d.parts = std::clamp<std::size_t>(pref_[k], 1, static_cast<std::size_t>(width / floor));
      }
      if (rank_of(k - 1) != rank_of(k)) {
        if (!cached_end_[k - 1]) fail("the end state of a section on another rank was not reported");
        d.left = *cached_end_[k - 1];
      }
    }
    return d;
  }

  // Every rank: section `settled` and everything before it are exact; releases the states no longer
  // needed (a probe once its section is exact, an end state once the right neighbour is).
  void settle(std::size_t settled) {
    if (settled < settled_ || settled > ns_) fail("the exact prefix went back");
    settled_ = settled;
    for (; released_ < settled_; ++released_) {
      probes_[released_].reset();
      cached_probe_[released_].reset();
      if (released_ + 1 < settled_ || settled_ == ns_) {
        ColumnState().swap(ends_[released_]);
        cached_end_[released_].reset();
      } else {
        break;  // the end state of settled - 1 is still needed for the next fixup
      }
    }
  }

  // One round on every rank: this rank runs its share of the tasks and reports; rank 0 decides; every
  // rank applies the decision.
  Decision round(const std::vector<std::size_t>& which,
                 const std::function<SectionTask(std::size_t)>& make_task, std::optional<std::size_t> fixed) {
    Report own;
    const std::vector<dist::Bytes> reports = dist::exchange(comm_, [&] {
      run_local(which, make_task);
      own = make_report();
      return distributed() ? encode(own) : dist::Bytes();
    });
    Decision d;
    dist::Bytes message;
    if (comm_.is_root()) {
      if (distributed()) {
        for (const dist::Bytes& b : reports) absorb(decode(b));
      } else {
        absorb(std::move(own));
      }
      d = decide(fixed);
      if (distributed()) {
        dist::ByteWriter w;
        w.integer(static_cast<std::uint64_t>(d.settled));
        w.integer(static_cast<std::uint64_t>(d.parts));
        const bool has_left = d.settled < ns_ && rank_of(d.settled - 1) != rank_of(d.settled);
        w.boolean(has_left);
        if (has_left) put_state(w, d.left);
        message = w.take();
      }
    }
    if (distributed()) {
      comm_.broadcast(message);
      if (!comm_.is_root()) {
        dist::ByteReader in(message);
        d.settled = static_cast<std::size_t>(in.integer<std::uint64_t>());
        d.parts = static_cast<std::size_t>(in.integer<std::uint64_t>());
        if (in.boolean()) d.left = get_state(in, static_cast<std::size_t>(m_));
        in.expect_done();
      }
    }
    if (d.parts < 1) fail("a fixup of no parts");
    settle(d.settled);
    return d;
  }

  // Every rank: section k becomes parts k .. k + parts - 1 of the same runner.
  void split(std::size_t k, std::size_t parts) {
    const std::int64_t b = bounds_[k];
    const std::int64_t width = bounds_[k + 1] - b;
    std::vector<std::int64_t> inner;
    for (std::size_t p = 1; p < parts; ++p)
      inner.push_back(b + static_cast<std::int64_t>(p) * width / static_cast<std::int64_t>(parts));
    const auto at = static_cast<std::ptrdiff_t>(k) + 1;
    const std::size_t added = parts - 1;
    bounds_.insert(bounds_.begin() + at, inner.begin(), inner.end());
    owner_.insert(owner_.begin() + at, added, owner_[k]);
    probes_.insert(probes_.begin() + at, added, std::nullopt);
    ends_.insert(ends_.begin() + at, added, ColumnState());
    dirty_.insert(dirty_.begin() + at, added, 0);
    match_.insert(match_.begin() + at, added, -1);
    pref_.insert(pref_.begin() + at, added, 0);
    cached_end_.insert(cached_end_.begin() + at, added, std::nullopt);
    cached_probe_.insert(cached_probe_.begin() + at, added, std::nullopt);
    last_[owner_[k]] += added;
    for (std::size_t r = owner_[k] + 1; r < runner_rank_.size(); ++r) first_[r] += added, last_[r] += added;
    ns_ += added;
    st_.split_parts += added;
  }

  // 4. Candidates: each runner reduces its own columns; the lists are merged on each rank, then over the
  // ranks (merge_lists of merged lists with one common limit is the merge of all of them).
  CandidateList candidates(std::uint32_t seq, Strand strand, std::int32_t min_score, std::size_t limit) {
    std::vector<std::size_t> owners;
    for (std::size_t r = 0; r < local_.size(); ++r)
      if (last_[base_ + r] > first_[base_ + r]) owners.push_back(r);
    CandidateList merged;
    const std::vector<dist::Bytes> parts = dist::exchange(comm_, [&] {
      std::vector<CandidateList> lists(local_.size());
      for_each_concurrently(owners, [&](std::size_t r) {
        lists[r] = local_[r]->candidates(bounds_[first_[base_ + r]], bounds_[last_[base_ + r]], min_score,
                                         limit, seq, strand);
      });
      merged = merge_lists(std::move(lists), limit);
      if (!distributed()) return dist::Bytes();
      dist::ByteWriter w;
      w.integer(cells_);
      write_list(w, merged);
      return w.take();
    });
    if (!distributed()) {
      st_.cells = cells_;
      return merged;
    }
    dist::Bytes message;
    if (comm_.is_root()) {
      std::vector<CandidateList> lists;
      std::uint64_t cells = 0;
      for (const dist::Bytes& b : parts) {
        dist::ByteReader in(b);
        cells += in.integer<std::uint64_t>();
        lists.push_back(read_list(in));
        in.expect_done();
      }
      merged = merge_lists(std::move(lists), limit);
      dist::ByteWriter w;
      w.integer(cells);
      write_list(w, merged);
      message = w.take();
    }
    comm_.broadcast(message);
    dist::ByteReader in(message);
    st_.cells = in.integer<std::uint64_t>();
    merged = read_list(in);
    in.expect_done();
    return merged;
  }

  const dist::Comm& comm_;
  const std::size_t me_;
  const std::span<SectionRunner* const> local_;
  const std::span<const std::uint8_t> target_;
  const std::int64_t m_;
  const SectionPlanOptions options_;
  SectionStats& st_;
  std::vector<std::size_t> runner_rank_;   // global runner -> rank
  std::size_t base_ = 0;                   // global index of this rank's first runner
  std::size_t ns_ = 0;                     // sections, split parts included
  std::vector<std::int64_t> bounds_;       // section k: columns [bounds_[k], bounds_[k + 1])
  std::vector<std::size_t> owner_;         // section -> global runner
  std::vector<std::size_t> first_, last_;  // global runner r owns sections [first_[r], last_[r])
  std::int64_t overlap_ = 0;
  std::uint64_t cells_ = 0;  // computed by this rank
  // This rank's sections: probe states (none for a section computed from its exact start), end states,
  // computed since the last report.
  std::vector<std::optional<ColumnState>> probes_;
  std::vector<ColumnState> ends_;
  std::vector<char> dirty_;
  // Rank 0: per section k, probe k == end k-1 (1), != (0), not known (-1); the owner's preferred fixup
  // parts (0: not reported); the states of sections next to another rank's.
  std::vector<std::int8_t> match_;
  std::vector<std::size_t> pref_;
  std::vector<std::optional<ColumnState>> cached_end_, cached_probe_;
  std::size_t settled_ = 1;   // sections [0, settled_) are exact (section 0 always is)
  std::size_t released_ = 0;  // states of sections below it released
};

}  // namespace

void write_list(dist::ByteWriter& w, const CandidateList& list) {
  w.boolean(list.truncated);
  w.integer(static_cast<std::uint64_t>(list.items.size()));
  for (const Candidate& c : list.items) {
    w.integer(c.score);
    w.integer(c.seq);
    w.u8(static_cast<std::uint8_t>(c.strand));
    w.integer(c.qstart);
    w.integer(c.qend);
    w.integer(c.tstart);
    w.integer(c.tend);
  }
}
CandidateList read_list(dist::ByteReader& in) {
  CandidateList list;
  list.truncated = in.boolean();
  list.items.resize(in.count(33));
  for (Candidate& c : list.items) {
    c.score = in.integer<std::int32_t>();
    c.seq = in.integer<std::uint32_t>();
    c.strand = static_cast<Strand>(in.u8());
    c.qstart = in.integer<std::int32_t>();
    c.qend = in.integer<std::int32_t>();
    c.tstart = in.integer<std::int64_t>();
    c.tend = in.integer<std::int64_t>();
  }
  return list;
}

CandidateList scan_sections(const dist::Comm& comm, std::span<const std::size_t> runners_per_rank,
                            std::span<SectionRunner* const> runners, std::span<const std::uint8_t> target,
                            std::int64_t query_length, std::uint32_t seq, Strand strand,
                            std::int32_t min_score, std::size_t limit, const SectionPlanOptions& options,
                            SectionStats* stats) {
  SectionStats local_stats;
  SectionScan scan(comm, runners_per_rank, runners, target, query_length, options,
                   stats != nullptr ? *stats : local_stats);
  return scan.run(seq, strand, min_score, limit);
}

CandidateList scan_sections(std::span<SectionRunner* const> runners, std::span<const std::uint8_t> target,
                            std::int64_t query_length, std::uint32_t seq, Strand strand,
                            std::int32_t min_score, std::size_t limit, const SectionPlanOptions& options,
                            SectionStats* stats) {
  const dist::Comm one_process;
  const std::size_t count[1] = {runners.size()};
  return scan_sections(one_process, count, runners, target, query_length, seq, strand, min_score, limit,
                       options, stats);
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
