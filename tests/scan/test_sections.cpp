// test_sections.cpp: src/scan/sections.cpp. reduce_records against a brute-force per-origin reduction;
// merge_lists' truncation semantics on synthetic runner lists (result is always a prefix of the true
// ranked per-origin list, as long as the truncation bounds allow, and exact with one common limit);
// scan_sections with 1..3 CPU runners, many section counts and overlaps (overlap 1 forces fixups;
// planted long alignments cross section boundaries) against reduce_records(reference_scan(...)) over
// the whole target; stats (sections, fixups, cells); error propagation from runners; real mito data.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "scan/model.hpp"
#include "scan/reference.hpp"
#include "scan/sections.hpp"
#include "testdata.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::scan {
namespace {

using Codes = std::vector<std::uint8_t>;
constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();

Codes random_dna(std::mt19937_64& rng, std::size_t len, int letters = 4) {
  Codes s(len);
  for (auto& c : s) c = static_cast<std::uint8_t>(rng() % static_cast<std::uint64_t>(letters));
  return s;
}

// Copies q[qs, qs+len) into t at ts with ~1/20 substitutions and occasional short indels (the copy is
// written until the target ends).
void plant(std::mt19937_64& rng, const Codes& q, std::size_t qs, std::size_t len, Codes& t, std::size_t ts) {
  std::size_t x = ts;
  for (std::size_t k = qs; k < qs + len && x < t.size(); ++k) {
    const auto roll = rng() % 100;
    if (roll < 5) {
      t[x++] = static_cast<std::uint8_t>(rng() % 4);  // substitution
    } else if (roll < 6) {
      continue;  // deletion from the target copy
    } else if (roll < 7 && x + 1 < t.size()) {
      t[x++] = static_cast<std::uint8_t>(rng() % 4);  // insertion
      t[x++] = q[k];
    } else {
      t[x++] = q[k];
    }
  }
}

// A runner wrapper that asks for a fixed number of sections and counts what it was given.
class FixedRunner final : public SectionRunner {
 public:
  FixedRunner(std::unique_ptr<SectionRunner> inner, std::size_t sections)
      : inner_(std::move(inner)), sections_(sections) {}
  void begin_target(std::span<const std::uint8_t> target) override { inner_->begin_target(target); }
  std::vector<SectionResult> run(std::span<const SectionTask> tasks) override {
    tasks_ += tasks.size();
    return inner_->run(tasks);
  }
  CandidateList candidates(std::int64_t begin, std::int64_t end, std::int32_t min_score, std::size_t limit,
                           std::uint32_t seq, Strand strand) override {
    ranges_.emplace_back(begin, end);
    return inner_->candidates(begin, end, min_score, limit, seq, strand);
  }
  std::size_t preferred_sections(std::int64_t, std::int64_t, std::size_t) const override { return sections_; }

  std::size_t tasks_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges_;

 private:
  std::unique_ptr<SectionRunner> inner_;
  std::size_t sections_;
};

struct ScanInput {
  ScanModel model;
  Codes q, t;
  mutable std::vector<ColumnRecord> truth = {};  // reference_scan(model, q, t), filled on first use
};

// Runs scan_sections with runners asking for `per_runner[r]` sections each and checks it against the
// one-shot reference over the whole target. Returns the stats.
SectionStats check_sections(const ScanInput& s, const std::vector<std::size_t>& per_runner,
                            std::int64_t overlap, std::int32_t min_score, std::size_t limit,
                            const std::string& what, unsigned threads = 1) {
  std::vector<std::unique_ptr<FixedRunner>> owned;
  std::vector<SectionRunner*> runners;
  for (std::size_t p : per_runner) {
    owned.push_back(std::make_unique<FixedRunner>(make_cpu_runner(s.model, s.q, threads), p));
    runners.push_back(owned.back().get());
  }
  SectionStats stats;
  const CandidateList got =
      scan_sections(runners, s.t, static_cast<std::int64_t>(s.q.size()), 3, Strand::kMinus, min_score, limit,
                    SectionPlanOptions{overlap}, &stats);
  if (s.truth.size() != s.t.size()) s.truth = reference_scan(s.model, s.q, s.t);
  const CandidateList want = reduce_records(s.truth, 0, min_score, limit, 3, Strand::kMinus);
  EXPECT_EQ(got.items, want.items) << what;
  EXPECT_EQ(got.truncated, want.truncated) << what;
  // Plan: each runner gets min(its wish, its part of the cap) sections, the cap being n or, with the
  // automatic overlap, max(runners, n / (8 * (2m + 256))); the total is capped at n; runners' candidate
  // ranges tile the target.
  const std::size_t nr = per_runner.size();
  std::size_t cap = s.t.size();
  if (overlap <= 0) cap = std::min(cap, std::max(nr, s.t.size() / (8 * (2 * s.q.size() + 256))));
  const std::size_t part = std::max<std::size_t>(1, cap / nr);
  std::size_t wished = 0;
  for (std::size_t p : per_runner) wished += std::clamp<std::size_t>(p, 1, part);
  EXPECT_EQ(stats.sections, std::min(wished, s.t.size())) << what;
  EXPECT_EQ(stats.fixups, stats.fixup_rounds) << what;  // exactness is a prefix: one fixup per round
  const std::uint64_t m = s.q.size(), n = s.t.size();
  EXPECT_GE(stats.cells, m * n + stats.fixups) << what;
  std::int64_t next = 0;
  std::size_t tasks = 0;
  for (const auto& r : owned) {
    for (const auto& [b, e] : r->ranges_) {
      EXPECT_EQ(b, next) << what;
      EXPECT_LT(b, e) << what;
      next = e;
    }
    tasks += r->tasks_;
  }
  EXPECT_EQ(next, static_cast<std::int64_t>(s.t.size())) << what;
  EXPECT_EQ(tasks, stats.sections + stats.fixups + stats.split_parts) << what;
  return stats;
}

// ---------------------------------------------------------------------------------------------------
// reduce_records

TEST(SectionsReduce, MatchesBruteForcePerOriginReduction) {
  std::mt19937_64 rng(1);
  for (int iter = 0; iter < 200; ++iter) {
    // Records with few distinct origins and small scores: many ties within and across origins.
    const std::size_t n = rng() % 60;
    std::vector<ColumnRecord> recs(n);
    for (auto& r : recs) {
      if (rng() % 4 == 0) continue;  // score 0 column
      r.score = static_cast<std::int32_t>(1 + rng() % 6);
      r.qend = static_cast<std::int32_t>(rng() % 5);
      r.qstart = static_cast<std::int32_t>(rng() % 3);
      r.tstart = static_cast<std::int32_t>(rng() % 4);
    }
    const std::int64_t begin = static_cast<std::int64_t>(rng() % 1000);
    const std::int32_t min_score = static_cast<std::int32_t>(rng() % 5) - 1;
    const std::size_t limit = iter % 5 == 0 ? kAll : rng() % 8;

    // Brute force: per origin, the first in candidate order; then ranked.
    std::map<std::pair<std::int32_t, std::int32_t>, Candidate> best;
    for (std::size_t k = 0; k < n; ++k) {
      const ColumnRecord& r = recs[k];
      if (r.score <= 0 || r.score < min_score) continue;
      const Candidate c{
          r.score, 7, Strand::kPlus, r.qstart, r.qend, r.tstart, begin + static_cast<std::int64_t>(k)};
      auto [it, fresh] = best.try_emplace({r.qstart, r.tstart}, c);
      if (!fresh && candidate_before(c, it->second)) it->second = c;
    }
    std::vector<Candidate> all;
    for (const auto& [key, c] : best) all.push_back(c);
    std::sort(all.begin(), all.end(), candidate_before);

    const CandidateList got = reduce_records(recs, begin, min_score, limit, 7, Strand::kPlus);
    const std::size_t keep = std::min(limit, all.size());
    EXPECT_EQ(got.items,
              std::vector<Candidate>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep)));
    EXPECT_EQ(got.truncated, all.size() > limit);
  }
}

// ---------------------------------------------------------------------------------------------------
// merge_lists

// Synthetic runner lists: origins with several versions (distinct tend/qend, tied scores) spread over
// `lists` runners; each runner's list is its per-origin best, ranked, cut at its own limit.
struct MergeCase {
  std::vector<Candidate> truth;  // ranked per-origin best over everything (incl. what lists dropped)
  std::vector<CandidateList> lists;
};

MergeCase make_merge_case(std::mt19937_64& rng, std::size_t nlists, const std::vector<std::size_t>& limits) {
  const std::size_t origins = 1 + rng() % 25;
  std::vector<std::vector<Candidate>> versions(nlists);
  std::int64_t tend = 0;
  std::map<std::pair<std::int32_t, std::int64_t>, Candidate> best;
  for (std::size_t o = 0; o < origins; ++o) {
    const auto qs = static_cast<std::int32_t>(rng() % 4);
    const auto ts = static_cast<std::int64_t>(o);
    const std::size_t count = 1 + rng() % 3;
    for (std::size_t v = 0; v < count; ++v) {
      tend += 1 + static_cast<std::int64_t>(rng() % 2);
      const Candidate c{static_cast<std::int32_t>(1 + rng() % 5),  2,  Strand::kPlus, qs,
                        qs + static_cast<std::int32_t>(rng() % 3), ts, tend};
      versions[rng() % nlists].push_back(c);
      auto [it, fresh] = best.try_emplace({qs, ts}, c);
      if (!fresh && candidate_before(c, it->second)) it->second = c;
    }
  }
  MergeCase mc;
  for (const auto& [key, c] : best) mc.truth.push_back(c);
  std::sort(mc.truth.begin(), mc.truth.end(), candidate_before);
  for (std::size_t l = 0; l < nlists; ++l) {
    std::map<std::pair<std::int32_t, std::int64_t>, Candidate> local;
    for (const Candidate& c : versions[l]) {
      auto [it, fresh] = local.try_emplace({c.qstart, c.tstart}, c);
      if (!fresh && candidate_before(c, it->second)) it->second = c;
    }
    CandidateList list;
    for (const auto& [key, c] : local) list.items.push_back(c);
    std::sort(list.items.begin(), list.items.end(), candidate_before);
    if (list.items.size() > limits[l]) {
      list.items.resize(limits[l]);
      list.truncated = true;
    }
    mc.lists.push_back(std::move(list));
  }
  return mc;
}

TEST(SectionsMerge, ResultIsAnExactPrefixAndAsLongAsTheBoundsAllow) {
  std::mt19937_64 rng(2);
  std::size_t truncated_inputs = 0, cut_results = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const std::size_t nlists = 1 + rng() % 4;
    std::vector<std::size_t> limits(nlists);
    for (auto& l : limits) l = rng() % 3 == 0 ? kAll : rng() % 10;
    const std::size_t limit = rng() % 3 == 0 ? kAll : rng() % 12;
    MergeCase mc = make_merge_case(rng, nlists, limits);

    // The bound: the best-ranked back() of the truncated lists; an empty truncated list bounds all.
    bool any_truncated = false, cut_all = false;
    const Candidate* bound = nullptr;
    for (const auto& l : mc.lists) {
      if (!l.truncated) continue;
      any_truncated = true;
      if (l.items.empty()) {
        cut_all = true;
      } else if (bound == nullptr || candidate_before(l.items.back(), *bound)) {
        bound = &l.items.back();
      }
    }
    std::size_t allowed = 0;  // truth items ranked before-or-equal to the bound
    if (!cut_all)
      for (const Candidate& c : mc.truth)
        if (bound == nullptr || !candidate_before(*bound, c)) ++allowed;

    const CandidateList got = merge_lists(mc.lists, limit);
    // Exact: a prefix of the true ranked per-origin list, of the largest length the bounds allow.
    const std::size_t want_len = std::min(limit, allowed);
    ASSERT_EQ(got.items, std::vector<Candidate>(mc.truth.begin(),
                                                mc.truth.begin() + static_cast<std::ptrdiff_t>(want_len)))
        << "iteration " << iter;
    // truncated: an input was truncated or the true list is longer than the result.
    EXPECT_EQ(got.truncated, any_truncated || mc.truth.size() > got.items.size()) << "iteration " << iter;
    // Every true candidate missing from the result ranks after its back().
    if (!got.items.empty()) {
      for (std::size_t k = got.items.size(); k < mc.truth.size(); ++k)
        EXPECT_TRUE(candidate_before(got.items.back(), mc.truth[k]));
    }
    truncated_inputs += any_truncated;
    cut_results += (any_truncated && want_len < std::min(limit, mc.truth.size()));
  }
  EXPECT_GT(truncated_inputs, 500u);
  EXPECT_GT(cut_results, 100u);  // the bound really shortened results in many cases
}

TEST(SectionsMerge, CommonLimitGivesTheExactTopList) {
  // With the same limit for every input and the merge, the result is the true first `limit`.
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 2000; ++iter) {
    const std::size_t nlists = 1 + rng() % 4;
    const std::size_t limit = rng() % 8;
    MergeCase mc = make_merge_case(rng, nlists, std::vector<std::size_t>(nlists, limit));
    const CandidateList got = merge_lists(mc.lists, limit);
    const std::size_t keep = std::min(limit, mc.truth.size());
    ASSERT_EQ(got.items,
              std::vector<Candidate>(mc.truth.begin(), mc.truth.begin() + static_cast<std::ptrdiff_t>(keep)))
        << "iteration " << iter;
    EXPECT_EQ(got.truncated, mc.truth.size() > limit) << "iteration " << iter;
  }
}

TEST(SectionsMerge, EdgeCases) {
  const Candidate a{9, 0, Strand::kPlus, 0, 5, 0, 10};
  const Candidate b{7, 0, Strand::kPlus, 1, 6, 3, 12};
  const Candidate a_worse{8, 0, Strand::kPlus, 0, 7, 0, 20};  // same origin as a
  EXPECT_EQ(merge_lists({}, 5).items.size(), 0u);
  EXPECT_FALSE(merge_lists({}, 5).truncated);
  // Dedup keeps the better version of an origin regardless of list order.
  const CandidateList m1 = merge_lists({CandidateList{{a_worse}, false}, CandidateList{{a, b}, false}}, kAll);
  EXPECT_EQ(m1.items, (std::vector<Candidate>{a, b}));
  EXPECT_FALSE(m1.truncated);
  // A truncated empty list (limit 0) may have dropped anything: nothing can be kept.
  const CandidateList m2 = merge_lists({CandidateList{{}, true}, CandidateList{{a, b}, false}}, kAll);
  EXPECT_TRUE(m2.items.empty());
  EXPECT_TRUE(m2.truncated);
  // Limit 0: empty, truncated iff something existed.
  EXPECT_TRUE(merge_lists({CandidateList{{b}, false}}, 0).truncated);
  EXPECT_FALSE(merge_lists({CandidateList{{}, false}}, 0).truncated);
  // An unranked input is a broken invariant.
  try {
    merge_lists({CandidateList{{b, a}, false}}, kAll);
    ADD_FAILURE() << "unranked list accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

// ---------------------------------------------------------------------------------------------------
// scan_sections

ScanInput planted_setup(std::uint64_t seed, std::size_t m, std::size_t n, int plants, std::size_t plant_len) {
  std::mt19937_64 rng(seed);
  ScanInput s{ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1}), random_dna(rng, m),
              random_dna(rng, n)};
  for (int p = 0; p < plants; ++p) {
    const std::size_t len = std::min(plant_len, m);
    plant(rng, s.q, rng() % (m - len + 1), len, s.t, rng() % n);
  }
  return s;
}

TEST(SectionsScan, ManySectionCountsOverlapsAndRunnersMatchOneShot) {
  const ScanInput s = planted_setup(4, 90, 2500, 6, 80);
  std::size_t fixups = 0;
  const std::vector<std::vector<std::size_t>> plans = {{1},    {2},       {7},       {40},
                                                       {3, 5}, {1, 1, 1}, {2, 9, 4}, {25, 1, 25}};
  for (const auto& plan : plans)
    for (std::int64_t overlap : {1, 3, 20, 0, 5000})
      for (const auto& [min_score, limit] :
           std::vector<std::pair<std::int32_t, std::size_t>>{{0, kAll}, {25, 6}, {0, 1}, {40, 0}}) {
        std::string what = "plan";
        for (std::size_t p : plan) what += fmt::format(" {}", p);
        what += fmt::format(" overlap {} min {} limit {}", overlap, min_score, limit);
        fixups += check_sections(s, plan, overlap, min_score, limit, what).fixups;
      }
  EXPECT_GT(fixups, 0u);
}

TEST(SectionsScan, TieHeavyAndProteinInputsMatchOneShot) {
  std::mt19937_64 rng(5);
  // Two letters, free gap opens: long positive runs everywhere, every tie rule exercised at the seams.
  ScanInput two{ScanModel::make(ScoringMatrix::dna(1, -1), GapCosts{0, 1}), random_dna(rng, 40, 2),
                random_dna(rng, 700, 2)};
  for (std::int64_t overlap : {1, 10, 100})
    check_sections(two, {5, 6}, overlap, 0, kAll, "two letters overlap " + std::to_string(overlap));
  ScanInput prot{ScanModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}), {}, {}};
  for (int k = 0; k < 60; ++k) prot.q.push_back(static_cast<std::uint8_t>(rng() % 20));
  for (int k = 0; k < 900; ++k) prot.t.push_back(static_cast<std::uint8_t>(rng() % 20));
  std::copy(prot.q.begin(), prot.q.end(), prot.t.begin() + 300);  // a 60-residue hit across sections
  for (std::int64_t overlap : {1, 7, 64})
    check_sections(prot, {4, 4, 4}, overlap, 10, 20, "protein overlap " + std::to_string(overlap));
}

TEST(SectionsScan, LongPlantedAlignmentForcesFixupsAndStaysExact) {
  // BLASTN scoring (2/-3, gaps 5/2) is in the logarithmic phase on random DNA: chance paths are short,
  // so an overlap of 150 columns converges everywhere except where the 1500-column near-copy of the
  // whole query runs through ~7 sections of 200 columns. Overlap 1 fails (nearly) everywhere.
  ScanInput s = planted_setup(6, 1500, 9000, 0, 0);
  s.model = ScanModel::make(ScoringMatrix::dna(2, -3), GapCosts{5, 2});
  std::mt19937_64 rng(60);
  plant(rng, s.q, 0, s.q.size(), s.t, 3100);
  const SectionStats forced = check_sections(s, {15, 15, 15}, 1, 0, 50, "overlap 1", 2);
  EXPECT_GT(forced.fixups, 30u);
  EXPECT_GT(forced.fixup_rounds, 0u);
  const SectionStats partial = check_sections(s, {15, 15, 15}, 150, 0, 50, "overlap 150", 2);
  // (Gap paths leaving the high-scoring copy keep later sections busy for a while too.)
  EXPECT_GE(partial.fixups, 5u);
  EXPECT_LT(partial.fixups, forced.fixups / 2);
}

TEST(SectionsScan, LinearPhaseScoringNeedsOverlapsLongerThanTheQuery) {
  // SSCA#1 scoring (5/-3, gaps 8/1) is in the linear phase on random DNA: the optimal path into row i
  // starts near row 0, about 1.5 * i columns to the left. Probes converge only when the overlap
  // exceeds that span for every row; with a shorter overlap every section needs a fixup, and the
  // result is still exact.
  std::mt19937_64 rng(61);
  const ScanInput s{ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1}), random_dna(rng, 400),
                    random_dna(rng, 6000)};
  EXPECT_EQ(check_sections(s, {6}, 150, 0, 20, "overlap 150").fixups, 5u);
  EXPECT_EQ(check_sections(s, {6}, 900, 0, 20, "overlap 900").fixups, 0u);
}

TEST(SectionsScan, WideFixupsAreSplitIntoPartsAndStayExact) {
  // SSCA#1 scoring with an overlap far below 1.5 m: every section fails. Sections of 15,000 columns are
  // wide enough (>= 2 x 4096) to be split into parts when recomputed: the first part from the exact
  // state, the others as in pass 1; parts that fail again are recomputed (narrow ones whole).
  std::mt19937_64 rng(62);
  ScanInput s{ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1}), random_dna(rng, 300),
              random_dna(rng, 45'000)};
  plant(rng, s.q, 0, s.q.size(), s.t, 14'900);  // across the first cut
  const SectionStats one = check_sections(s, {3}, 150, 0, 30, "one runner, 3 sections, overlap 150", 2);
  EXPECT_GT(one.split_parts, 0u);
  EXPECT_GE(one.fixups, 2u);
  // Two runners: the first one's sections are split (it wants 3 parts), the second one's is not (it
  // wants 1); the second runner's range moves with the first one's added parts.
  const SectionStats two = check_sections(s, {3, 1}, 150, 0, 30, "two runners, overlap 150", 2);
  EXPECT_GT(two.split_parts, 0u);
  // Narrow sections are not split.
  EXPECT_EQ(check_sections(s, {6}, 150, 0, 30, "6 sections of 7500 columns").split_parts, 0u);
}

TEST(SectionsScan, CollectiveFormWithOneProcessIsThePlainScan) {
  // The MPI form with the one-process communicator: the same plan and result; the runner counts must
  // describe this rank's runners (a mismatch is an internal error). Several ranks: tests/dist
  // (mpi_compare_scan.sh, tiny overlaps so that fixups cross rank boundaries).
  std::mt19937_64 rng(63);
  const ScanModel model = ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1});
  const Codes q = random_dna(rng, 120), t = random_dna(rng, 20'000);
  auto a = make_cpu_runner(model, q, 2), b = make_cpu_runner(model, q, 1);
  std::vector<SectionRunner*> runners{a.get(), b.get()};
  SectionStats plain_stats, collective_stats;
  const CandidateList plain =
      scan_sections(runners, t, 120, 1, Strand::kPlus, 1, 50, SectionPlanOptions{60}, &plain_stats);
  const dist::Comm one;
  const std::size_t counts[] = {2};
  const CandidateList collective = scan_sections(one, counts, runners, t, 120, 1, Strand::kPlus, 1, 50,
                                                 SectionPlanOptions{60}, &collective_stats);
  EXPECT_EQ(collective.items, plain.items);
  EXPECT_EQ(collective.truncated, plain.truncated);
  EXPECT_EQ(collective_stats.sections, plain_stats.sections);
  EXPECT_EQ(collective_stats.fixups, plain_stats.fixups);
  EXPECT_GT(plain_stats.fixups, 0u);
  EXPECT_EQ(collective_stats.cells, plain_stats.cells);
  const std::size_t wrong[] = {3};
  try {
    (void)scan_sections(one, wrong, runners, t, 120, 1, Strand::kPlus, 1, 50, SectionPlanOptions{60});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

TEST(SectionsScan, NoFixupsWithLargeOverlapOnRandomData) {
  std::mt19937_64 rng(7);
  const ScanInput s{ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1}), random_dna(rng, 150),
                    random_dna(rng, 24000)};
  const SectionStats st = check_sections(s, {3, 2, 3}, 1500, 0, 100, "overlap 1500");
  EXPECT_EQ(st.sections, 8u);
  EXPECT_EQ(st.fixups, 0u);
  EXPECT_EQ(st.fixup_rounds, 0u);
  // cells = m * (n + overlap * 7): every section but the first computes 1500 extra columns.
  EXPECT_EQ(st.cells, 150u * (24000u + 1500u * 7u));
  // Automatic plan: cap max(3 runners, 24000 / (8 * (2m + 256))) = 5 sections, one per runner (5 / 3),
  // overlap max(clamp(8000 / 8, 256, 16384), 2m + 256) = 1000; it converges here.
  const SectionStats autost = check_sections(s, {3, 2, 3}, 0, 0, 100, "overlap auto");
  EXPECT_EQ(autost.sections, 3u);
  EXPECT_EQ(autost.fixups, 0u);
  EXPECT_EQ(autost.cells, 150u * (24000u + 1000u * 2u));
}

TEST(SectionsScan, TinyTargetsCapTheSectionCount) {
  std::mt19937_64 rng(8);
  for (std::size_t n : {1u, 2u, 5u, 13u}) {
    const ScanInput s{ScanModel::make(ScoringMatrix::dna(2, -3), GapCosts{5, 2}), random_dna(rng, 7),
                      random_dna(rng, n)};
    check_sections(s, {4, 4, 4}, 1, 0, kAll, "n=" + std::to_string(n));
    check_sections(s, {1, 30}, 2, 0, 3, "n=" + std::to_string(n) + " skewed");
  }
  // Empty target: nothing to do.
  const ScanModel model = ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1});
  const Codes q = {0, 1, 2};
  const auto cpu = make_cpu_runner(model, q, 1);
  SectionRunner* runners[] = {cpu.get()};
  SectionStats st;
  st.sections = 99;
  const CandidateList got = scan_sections(runners, Codes{}, 3, 0, Strand::kPlus, 0, kAll, {}, &st);
  EXPECT_TRUE(got.items.empty());
  EXPECT_FALSE(got.truncated);
  EXPECT_EQ(st.sections, 0u);
}

TEST(SectionsScan, CpuRunnerPreferredSections) {
  const ScanModel model = ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1});
  const Codes q = {0, 1, 2};
  EXPECT_EQ(make_cpu_runner(model, q, 1)->preferred_sections(1 << 20, 3, 1000), 1u);
  EXPECT_EQ(make_cpu_runner(model, q, 3)->preferred_sections(1 << 20, 3, 1000), 12u);
  EXPECT_EQ(make_cpu_runner(model, q, 3)->preferred_sections(5000, 3, 1000), 4u);  // >= 1024 columns each
  EXPECT_EQ(make_cpu_runner(model, q, 3)->preferred_sections(100, 3, 1000), 1u);
  // The default runner (automatic sections and overlap) is exact too.
  std::mt19937_64 rng(9);
  const ScanInput s = planted_setup(10, 120, 6000, 4, 100);
  const auto cpu = make_cpu_runner(s.model, s.q, 2);
  SectionRunner* runners[] = {cpu.get()};
  const CandidateList got =
      scan_sections(runners, s.t, static_cast<std::int64_t>(s.q.size()), 1, Strand::kPlus, 0, 30, {});
  const CandidateList want = reduce_records(reference_scan(s.model, s.q, s.t), 0, 0, 30, 1, Strand::kPlus);
  EXPECT_EQ(got.items, want.items);
  EXPECT_EQ(got.truncated, want.truncated);
}

// A runner that fails in run() after a while (tests error propagation across runner threads).
class FailingRunner final : public SectionRunner {
 public:
  explicit FailingRunner(std::unique_ptr<SectionRunner> inner) : inner_(std::move(inner)) {}
  void begin_target(std::span<const std::uint8_t> target) override { inner_->begin_target(target); }
  std::vector<SectionResult> run(std::span<const SectionTask>) override {
    throw Error(ErrorKind::kGpu, "device lost");
  }
  CandidateList candidates(std::int64_t b, std::int64_t e, std::int32_t s, std::size_t l, std::uint32_t q,
                           Strand st) override {
    return inner_->candidates(b, e, s, l, q, st);
  }
  std::size_t preferred_sections(std::int64_t, std::int64_t, std::size_t) const override { return 2; }

 private:
  std::unique_ptr<SectionRunner> inner_;
};

TEST(SectionsScan, RunnerErrorsPropagate) {
  std::mt19937_64 rng(11);
  const ScanInput s{ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1}), random_dna(rng, 30),
                    random_dna(rng, 800)};
  FixedRunner good1(make_cpu_runner(s.model, s.q, 1), 3), good2(make_cpu_runner(s.model, s.q, 1), 3);
  FailingRunner bad(make_cpu_runner(s.model, s.q, 1));
  SectionRunner* runners[] = {&good1, &bad, &good2};
  try {
    scan_sections(runners, s.t, 30, 0, Strand::kPlus, 0, kAll, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kGpu);
    EXPECT_EQ(e.message(), "device lost");
  }
}

TEST(SectionsScan, MitochondrialGenomesMatchOneShot) {
  WS_REQUIRE_TESTDATA("dna/humanMito.fa");
  WS_REQUIRE_TESTDATA("dna/mouseMito.fa");
  auto read_first = [](const std::string& rel) {
    SequenceReader reader((test::testdata_dir() / rel).string(), ReaderOptions{AlphabetKind::kDna});
    Sequence seq;
    EXPECT_TRUE(reader.next(seq));
    return seq.residues;
  };
  const Codes human = read_first("dna/humanMito.fa");
  const Codes mouse = read_first("dna/mouseMito.fa");
  ASSERT_GT(human.size(), 4000u);
  // A 700-residue piece of the human genome against the whole mouse genome (homologous: long hits).
  const ScanInput s{ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1}),
                    Codes(human.begin() + 1000, human.begin() + 1700), mouse};
  const SectionStats st = check_sections(s, {6, 6, 6}, 16, 30, 40, "mito overlap 16", 2);
  EXPECT_GT(st.fixups, 0u);
  check_sections(s, {4, 8}, 0, 0, kAll, "mito auto overlap");
}

}  // namespace
}  // namespace warpsearch::scan
