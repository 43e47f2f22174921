// test_scan_gpu.cpp: the scan's CUDA runner (src/scan/cuda, gpu_runner.hpp) against the CPU reference,
// bit for bit. CUDA builds only; every test is skipped without a usable GPU.
//
// Contents: run() on random DNA (SSCA#1 5/-3, 8/1), tie-heavy small alphabets (1/-1 with free or cheap
// gap opens) and protein (BLOSUM62 11/1) with every strip height (R = 4, 8, 16, automatic), each with
// the automatic column block and with blocks of 32 and 96 columns (work units cut the tasks' columns, so
// states cross unit boundaries many times): probe and end
// states and the column records of owned columns == reference_columns(), for many shapes (m below 32,
// not a multiple of 32 R, one row, one column, tasks narrower than their overlap, empty tasks), with
// and without initial states, several tasks per launch and repeated launches on one target;
// candidates() == reduce_records() for many minimum scores and limits (0, 1, small, all) and ranges;
// scan_sections() with GPU runners (alone, two at once, mixed with a CPU runner, overlap 1 forcing
// fixups, two runners sharing the device concurrently) == the CPU runner; a 200 kbp window of C. elegans
// chrX against a mutated planted query.
// ScanGpu.PerfThroughput (skipped unless WARPSEARCH_SCAN_GPU_PERF=1, =2 for one launch to profile, or =3
// for both strands per strip height and section count, as runner pairs and as concurrent runners)
// prints kernel throughput for 10 kbp and 1 Mbp DNA queries against chrX and a protein shape; it asserts
// nothing (a measurement, not a test).
#include <gtest/gtest.h>

#ifdef WARPSEARCH_HAVE_CUDA

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "scan/cuda/runner_options.cuh"
#include "scan/gpu_runner.hpp"
#include "scan/model.hpp"
#include "scan/reference.hpp"
#include "scan/sections.hpp"
#include "scan/strand.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::scan {
namespace {

using Codes = std::vector<std::uint8_t>;
constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
constexpr int kShapes[] = {4, 8, 16, 0};     // rows per lane; 0: the runner's choice
constexpr int kBlockWidths[] = {0, 32, 96};  // columns per work unit; 0: the runner's choice

ScanModel dna_model(int match = 5, int mismatch = -3, int open = 8, int extend = 1) {
  return ScanModel::make(ScoringMatrix::dna(match, mismatch), GapCosts{open, extend});
}
ScanModel protein_model() { return ScanModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}); }

Codes random_codes(std::mt19937_64& rng, std::size_t len, int letters) {
  Codes s(len);
  for (auto& c : s) c = static_cast<std::uint8_t>(rng() % static_cast<std::uint64_t>(letters));
  return s;
}

// DNA with rare ambiguity codes (N and others score as mismatches).
Codes random_dna(std::mt19937_64& rng, std::size_t len) {
  Codes s = random_codes(rng, len, 4);
  for (auto& c : s)
    if (rng() % 97 == 0) c = static_cast<std::uint8_t>(4 + rng() % 11);
  return s;
}

// Copies q[qs, qs+len) into t at ts with ~1/20 substitutions and occasional short indels.
void plant(std::mt19937_64& rng, const Codes& q, std::size_t qs, std::size_t len, Codes& t, std::size_t ts,
           int letters = 4) {
  std::size_t x = ts;
  for (std::size_t k = qs; k < qs + len && k < q.size() && x < t.size(); ++k) {
    const auto roll = rng() % 100;
    if (roll < 5) {
      t[x++] = static_cast<std::uint8_t>(rng() % static_cast<std::uint64_t>(letters));
    } else if (roll < 6) {
      continue;
    } else if (roll < 7 && x + 1 < t.size()) {
      t[x++] = static_cast<std::uint8_t>(rng() % static_cast<std::uint64_t>(letters));
      t[x++] = q[k];
    } else {
      t[x++] = q[k];
    }
  }
}

std::string describe(const RowState& s) {
  return "{h " + std::to_string(s.h) + " e " + std::to_string(s.e) + " ho (" + std::to_string(s.h_qstart) +
         "," + std::to_string(s.h_tstart) + ") eo (" + std::to_string(s.e_qstart) + "," +
         std::to_string(s.e_tstart) + ")}";
}
std::string describe(const ColumnRecord& r) {
  return "{" + std::to_string(r.score) + " qend " + std::to_string(r.qend) + " (" + std::to_string(r.qstart) +
         "," + std::to_string(r.tstart) + ")}";
}

// Number of differing rows; the first few are reported.
template <class T>
std::size_t compare(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  if (got.size() != want.size()) {
    ADD_FAILURE() << what << ": " << got.size() << " entries, expected " << want.size();
    return want.size() + 1;
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (++bad <= 3)
      ADD_FAILURE() << what << " [" << i << "]: " << describe(got[i]) << ", expected " << describe(want[i]);
  }
  if (bad > 3) ADD_FAILURE() << what << ": " << bad << " entries differ in all";
  return bad;
}

std::string describe(const Candidate& c) {
  return "{" + std::to_string(c.score) + " q[" + std::to_string(c.qstart) + "," + std::to_string(c.qend) +
         "] t[" + std::to_string(c.tstart) + "," + std::to_string(c.tend) + "]}";
}
void expect_same_list(const CandidateList& got, const CandidateList& want, const std::string& what) {
  EXPECT_EQ(got.truncated, want.truncated) << what;
  ASSERT_EQ(got.items.size(), want.items.size()) << what;
  std::size_t bad = 0;
  for (std::size_t k = 0; k < got.items.size(); ++k)
    if (!(got.items[k] == want.items[k]) && ++bad <= 3)
      ADD_FAILURE() << what << " item " << k << ": " << describe(got.items[k]) << ", expected "
                    << describe(want.items[k]);
  EXPECT_EQ(bad, 0u) << what;
}

// The exact state after column c - 1 (c > 0), from the reference.
ColumnState exact_state(const ScanModel& model, const Codes& q, const Codes& t, std::int64_t c) {
  ColumnState s;
  std::vector<ColumnRecord> dummy;
  reference_columns(model, q, t, 0, c, c, nullptr, dummy, nullptr, &s);
  return s;
}

class ScanGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const DeviceProbe probe = probe_devices();
    if (probe.devices.empty()) GTEST_SKIP() << probe.unavailable_reason;
    device_ = probe.devices.front().id;
  }

  // Runs `tasks` on a GPU runner with each strip height and compares probe/end states and the records of
  // owned columns with reference_columns(); then candidates() over each task's own range.
  void check_tasks(const ScanModel& model, const Codes& q, const Codes& t,
                   const std::vector<SectionTask>& tasks, const std::string& context,
                   std::span<const int> shapes = kShapes) {
    struct Expected {
      ColumnState probe, end;
      std::vector<ColumnRecord> records;
    };
    std::vector<Expected> want(tasks.size());
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      const SectionTask& task = tasks[k];
      want[k].records.resize(static_cast<std::size_t>(task.end - task.own_begin));
      reference_columns(model, q, t, task.start, task.own_begin, task.end, task.initial, want[k].records,
                        task.own_begin > task.start ? &want[k].probe : nullptr, &want[k].end);
    }
    for (const int r : shapes) {
      for (const int bw : kBlockWidths) {
        const std::string ctx = context + ", R " + std::to_string(r) + ", block " + std::to_string(bw) +
                                ", m " + std::to_string(q.size()) + ", n " + std::to_string(t.size());
        gpu::RunnerOptions options;
        options.rows_per_lane = r;
        options.block_width = bw;
        auto runner = gpu::make_runner(model, q, device_, options);
        runner->begin_target(t);
        const std::vector<SectionResult> got = runner->run(tasks);
        ASSERT_EQ(got.size(), tasks.size()) << ctx;
        if (r != 0) {
          EXPECT_EQ(gpu::last_launch(*runner).rows_per_lane, r) << ctx;
        }
        if (bw != 0) {
          EXPECT_EQ(gpu::last_launch(*runner).block_width, bw) << ctx;
        }
        for (std::size_t k = 0; k < tasks.size(); ++k) {
          const SectionTask& task = tasks[k];
          const std::string tctx = ctx + ", task " + std::to_string(k) + " [" + std::to_string(task.start) +
                                   "," + std::to_string(task.own_begin) + "," + std::to_string(task.end) +
                                   ")" + (task.initial != nullptr ? " with initial state" : "");
          if (task.own_begin > task.start) compare(got[k].probe, want[k].probe, tctx + " probe");
          EXPECT_TRUE(task.own_begin > task.start || got[k].probe.empty()) << tctx;
          compare(got[k].end, want[k].end, tctx + " end state");
          compare(gpu::download_records(*runner, task.own_begin, task.end), want[k].records,
                  tctx + " records");
          if (task.own_begin < task.end)
            expect_same_list(runner->candidates(task.own_begin, task.end, 1, kAll, 3, Strand::kMinus),
                             reduce_records(want[k].records, task.own_begin, 1, kAll, 3, Strand::kMinus),
                             tctx + " candidates");
        }
      }
    }
  }

  // Sections of [0, n) as scan_sections' pass 1 plans them, plus each section's fixup form (exact initial
  // state) on a second target copy: every kind of task in one launch.
  void check_sections(const ScanModel& model, const Codes& q, const Codes& t, std::int64_t sections,
                      std::int64_t overlap, const std::string& context,
                      std::span<const int> shapes = kShapes) {
    const auto n = static_cast<std::int64_t>(t.size());
    std::vector<SectionTask> pass1;
    for (std::int64_t k = 0; k < sections; ++k) {
      const std::int64_t b = k * n / sections, e = (k + 1) * n / sections;
      pass1.push_back(SectionTask{k == 0 ? 0 : std::max<std::int64_t>(0, b - overlap), b, e, nullptr});
    }
    check_tasks(model, q, t, pass1, context + ", pass 1 of " + std::to_string(sections), shapes);
    std::vector<ColumnState> initial(static_cast<std::size_t>(sections));
    std::vector<SectionTask> fixups;
    for (std::int64_t k = 1; k < sections; ++k) {
      const std::int64_t b = k * n / sections, e = (k + 1) * n / sections;
      initial[static_cast<std::size_t>(k)] = exact_state(model, q, t, b);
      fixups.push_back(SectionTask{b, b, e, &initial[static_cast<std::size_t>(k)]});
    }
    if (!fixups.empty()) check_tasks(model, q, t, fixups, context + ", fixups", shapes);
  }

  int device_ = 0;
};

TEST_F(ScanGpu, RandomDnaManyShapes) {
  std::mt19937_64 rng(11);
  const ScanModel model = dna_model();
  const std::size_t ms[] = {1, 5, 31, 32, 33, 127, 128, 129, 300, 511, 513, 700};
  for (const std::size_t m : ms) {
    const Codes q = random_dna(rng, m);
    Codes t = random_dna(rng, 700 + rng() % 400);
    if (m >= 20) plant(rng, q, m / 4, m / 2, t, t.size() / 3);
    check_sections(model, q, t, 3, 90, "random DNA");
  }
}

TEST_F(ScanGpu, TinyTargetsAndColumns) {
  std::mt19937_64 rng(12);
  const ScanModel model = dna_model();
  for (const std::size_t n : {1, 2, 3, 31, 32, 33, 64, 65}) {
    const Codes q = random_dna(rng, 40 + n);
    Codes t(n);
    for (std::size_t k = 0; k < n; ++k) t[k] = q[(k + 7) % q.size()];
    std::vector<SectionTask> tasks{SectionTask{0, 0, static_cast<std::int64_t>(n), nullptr}};
    check_tasks(model, q, t, tasks, "whole tiny target");
    if (n >= 3) {
      // Sections narrower than their overlap, an empty task, a one-column task with a probe.
      const auto ni = static_cast<std::int64_t>(n);
      const ColumnState mid = exact_state(model, q, t, ni / 2);
      std::vector<SectionTask> parts{
          SectionTask{0, 0, ni / 3, nullptr}, SectionTask{0, ni / 3, ni / 2, nullptr},
          SectionTask{ni / 2, ni / 2, ni / 2, &mid}, SectionTask{ni / 2, ni / 2, ni - 1, &mid},
          SectionTask{ni - 2, ni - 1, ni, nullptr}};
      check_tasks(model, q, t, parts, "tiny sections");
    }
  }
}

TEST_F(ScanGpu, TieHeavySmallAlphabets) {
  std::mt19937_64 rng(13);
  struct Case {
    ScanModel model;
    int letters;
    const char* name;
  };
  const Case cases[] = {{dna_model(1, -1, 0, 1), 2, "1/-1 open 0, binary"},
                        {dna_model(1, -1, 1, 1), 2, "1/-1 open 1, binary"},
                        {dna_model(2, -1, 0, 0), 3, "2/-1 free gaps, ternary"},
                        {dna_model(5, -3, 8, 1), 1, "single letter"}};
  for (const Case& c : cases) {
    for (const std::size_t m : {17, 200, 530}) {
      const Codes q = random_codes(rng, m, c.letters);
      Codes t = random_codes(rng, 600, c.letters);
      // Repeats: copies of a short motif make many equal scores and equal-score paths.
      for (std::size_t k = 0; k + 10 < t.size(); k += 37)
        for (std::size_t x = 0; x < 8; ++x) t[k + x] = q[x % q.size()];
      check_sections(c.model, q, t, 4, 50, c.name);
    }
  }
}

TEST_F(ScanGpu, Protein) {
  std::mt19937_64 rng(14);
  const ScanModel model = protein_model();
  for (const std::size_t m : {20, 257, 600}) {
    Codes q = random_codes(rng, m, 20);
    for (auto& c : q)
      if (rng() % 50 == 0) c = static_cast<std::uint8_t>(20 + rng() % 7);  // B J Z O U X *
    Codes t = random_codes(rng, 900, 25);
    plant(rng, q, 0, m, t, 300, 20);
    check_sections(model, q, t, 3, 120, "protein BLOSUM62");
  }
}

TEST_F(ScanGpu, InitialStatesMidAlignmentAndRepeatedLaunches) {
  std::mt19937_64 rng(15);
  const ScanModel model = dna_model();
  const Codes q = random_dna(rng, 1000);
  Codes t = random_dna(rng, 3000);
  plant(rng, q, 0, 1000, t, 500);  // one long alignment across every cut below
  for (const int r : kShapes) {
    auto runner = gpu::make_runner(model, q, device_, gpu::RunnerOptions{r});
    runner->begin_target(t);
    std::vector<ColumnRecord> all(t.size());
    reference_columns(model, q, t, 0, 0, static_cast<std::int64_t>(t.size()), nullptr, all, nullptr, nullptr);
    // Chain of launches, each continuing from the previous launch's end state.
    ColumnState state;
    std::int64_t c = 0;
    for (const std::int64_t cut : {700, 701, 1100, 1500, 1531, 3000}) {
      std::vector<SectionTask> task{SectionTask{c, c, cut, c == 0 ? nullptr : &state}};
      std::vector<SectionResult> res = runner->run(task);
      compare(res[0].end, exact_state(model, q, t, cut), "chained end state at " + std::to_string(cut));
      state = std::move(res[0].end);
      c = cut;
    }
    compare(gpu::download_records(*runner, 0, static_cast<std::int64_t>(t.size())), all,
            "chained records, R " + std::to_string(r));
  }
}

TEST_F(ScanGpu, CandidatesMatchReduceRecords) {
  std::mt19937_64 rng(16);
  const ScanModel model = dna_model();
  const Codes q = random_dna(rng, 400);
  Codes t = random_dna(rng, 5000);
  for (int k = 0; k < 6; ++k) plant(rng, q, rng() % 300, 100 + rng() % 300, t, rng() % 4800);
  const std::vector<ColumnRecord> all = reference_scan(model, q, t);
  auto runner = make_gpu_runner(model, q, device_);
  runner->begin_target(t);
  std::vector<SectionTask> task{SectionTask{0, 0, static_cast<std::int64_t>(t.size()), nullptr}};
  runner->run(task);
  const std::int64_t n = static_cast<std::int64_t>(t.size());
  for (const auto& [b, e] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{0, n}, {0, 1}, {17, 2500}, {2500, n}, {n, n}}) {
    for (const std::int32_t min_score : {-5, 0, 1, 20, 40, 100, 1000000}) {
      for (const std::size_t limit :
           {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100}, kAll}) {
        const std::span<const ColumnRecord> part(all.data() + b, static_cast<std::size_t>(e - b));
        expect_same_list(runner->candidates(b, e, min_score, limit, 9, Strand::kPlus),
                         reduce_records(part, b, min_score, limit, 9, Strand::kPlus),
                         "candidates [" + std::to_string(b) + "," + std::to_string(e) + ") min " +
                             std::to_string(min_score) + " limit " + std::to_string(limit));
      }
    }
  }
}

TEST_F(ScanGpu, ScanSectionsMatchesCpuRunner) {
  std::mt19937_64 rng(17);
  struct Case {
    ScanModel model;
    bool protein;
    std::size_t m, n;
  };
  const Case cases[] = {{dna_model(), false, 700, 40000},
                        {dna_model(1, -1, 0, 1), false, 300, 20000},
                        {protein_model(), true, 500, 30000}};
  for (const Case& c : cases) {
    const Codes q = c.protein ? random_codes(rng, c.m, 20) : random_dna(rng, c.m);
    Codes t = c.protein ? random_codes(rng, c.n, 20) : random_dna(rng, c.n);
    for (int k = 0; k < 5; ++k) plant(rng, q, 0, c.m, t, rng() % (c.n - c.m), c.protein ? 20 : 4);
    auto cpu = make_cpu_runner(c.model, q, 0);
    std::vector<SectionRunner*> cpu_only{cpu.get()};
    for (const std::int64_t overlap : {std::int64_t{0}, std::int64_t{1}, std::int64_t{300}}) {
      const SectionPlanOptions options{overlap};
      const CandidateList want =
          scan_sections(cpu_only, t, static_cast<std::int64_t>(q.size()), 2, Strand::kPlus, 1, kAll, options);
      const CandidateList want10 =
          scan_sections(cpu_only, t, static_cast<std::int64_t>(q.size()), 2, Strand::kPlus, 30, 10, options);
      auto g1 = make_gpu_runner(c.model, q, device_);
      auto g2 = gpu::make_runner(c.model, q, device_, gpu::RunnerOptions{4});
      const std::string ctx = std::string(c.protein ? "protein" : "DNA") + " m " + std::to_string(c.m) +
                              " overlap " + std::to_string(overlap);
      for (const std::vector<SectionRunner*>& runners :
           {std::vector<SectionRunner*>{g1.get()}, std::vector<SectionRunner*>{g1.get(), g2.get()},
            std::vector<SectionRunner*>{g2.get(), cpu.get(), g1.get()}}) {
        SectionStats stats;
        expect_same_list(scan_sections(runners, t, static_cast<std::int64_t>(q.size()), 2, Strand::kPlus, 1,
                                       kAll, options, &stats),
                         want, ctx + ", " + std::to_string(runners.size()) + " runners");
        if (overlap == 1) {
          EXPECT_GT(stats.fixups, 0u) << ctx;
        }
        expect_same_list(
            scan_sections(runners, t, static_cast<std::int64_t>(q.size()), 2, Strand::kPlus, 30, 10, options),
            want10, ctx + ", top 10, " + std::to_string(runners.size()) + " runners");
      }
    }
  }
}

// Runners for two queries of one length on one device: a runner pair, or two separate runners.
std::pair<std::unique_ptr<SectionRunner>, std::unique_ptr<SectionRunner>> two_runners(
    const ScanModel& model, const Codes& first, const Codes& second, int device,
    const gpu::RunnerOptions& options, bool paired) {
  if (paired) return gpu::make_runner_pair(model, first, second, device, options);
  return {gpu::make_runner(model, first, device, options), gpu::make_runner(model, second, device, options)};
}

// Two runners made for a shared device (the scan's two strands): separate runners with sharing 2
// launching at the same time, and a runner pair whose launches combine into one kernel (also with
// fixups on one side only, and with one member running alone, which waits for its partner and then
// launches by itself); automatic and 64-column blocks: results == the CPU runner.
TEST_F(ScanGpu, SharedDeviceConcurrentRunners) {
  std::mt19937_64 rng(21);
  const ScanModel model = dna_model();
  const Codes q = random_dna(rng, 900);
  Codes t = random_dna(rng, 60000);
  for (int k = 0; k < 4; ++k) plant(rng, q, 0, 900, t, rng() % (t.size() - 900));
  const Codes rc = reverse_complement(q);
  const auto m = static_cast<std::int64_t>(q.size());
  std::vector<CandidateList> want;
  for (const Codes* query : std::array<const Codes*, 2>{&q, &rc}) {
    auto cpu = make_cpu_runner(model, *query, 0);
    std::vector<SectionRunner*> runners{cpu.get()};
    want.push_back(scan_sections(runners, t, m, 1, Strand::kPlus, 1, kAll, SectionPlanOptions{}));
  }
  for (const bool paired : {false, true}) {
    for (const int bw : {0, 64}) {
      gpu::RunnerOptions options;
      options.sharing = 2;
      options.block_width = bw;
      auto runners = two_runners(model, q, rc, device_, options, paired);
      std::unique_ptr<SectionRunner>&a = runners.first, &b = runners.second;
      const std::string ctx =
          std::string(paired ? "runner pair" : "separate runners") + ", block " + std::to_string(bw);
      std::vector<SectionRunner*> ra{a.get()}, rb{b.get()};
      // Overlap 1 on one side only: its fixup rounds find no partner.
      for (const std::int64_t overlap_b : {std::int64_t{0}, std::int64_t{1}}) {
        auto other = std::async(std::launch::async, [&] {
          return scan_sections(rb, t, m, 1, Strand::kPlus, 1, kAll, SectionPlanOptions{overlap_b});
        });
        const CandidateList got_a = scan_sections(ra, t, m, 1, Strand::kPlus, 1, kAll, SectionPlanOptions{});
        const CandidateList got_b = other.get();
        expect_same_list(got_a, want[0], ctx + ", first runner");
        expect_same_list(got_b, want[1], ctx + ", second runner, overlap " + std::to_string(overlap_b));
      }
      // One member alone.
      expect_same_list(scan_sections(rb, t, m, 1, Strand::kPlus, 1, kAll, SectionPlanOptions{}), want[1],
                       ctx + ", second runner alone");
    }
  }
  EXPECT_THROW(gpu::make_runner_pair(model, q, Codes(q.begin(), q.end() - 1), device_, gpu::RunnerOptions{}),
               Error);
}

// A 200 kbp window of C. elegans chrX; the query is a 1500 bp piece of it, mutated, plus a shorter
// reverse-complemented piece glued on (so two separate alignments).
TEST_F(ScanGpu, CElegansChrXWindow) {
  WS_REQUIRE_TESTDATA("dna/ce2_chrX.fa");
  SequenceReader reader((test::testdata_dir() / "dna/ce2_chrX.fa").string());
  Sequence chrx;
  ASSERT_TRUE(reader.next(chrx));
  ASSERT_GT(chrx.length(), 5'000'000u);
  const Codes t(chrx.residues.begin() + 3'000'000, chrx.residues.begin() + 3'200'000);
  std::mt19937_64 rng(18);
  Codes q(1500);
  plant(rng, t, 80'000, 1500, q, 0);
  Codes piece(t.begin() + 150'000, t.begin() + 150'400);
  std::reverse(piece.begin(), piece.end());
  for (auto& c : piece) c = c < 4 ? static_cast<std::uint8_t>(3 - c) : c;
  q.insert(q.end(), piece.begin(), piece.end());
  const ScanModel model = dna_model();
  const std::vector<ColumnRecord> all = reference_scan(model, q, t);
  const std::int64_t n = static_cast<std::int64_t>(t.size());

  auto runner = make_gpu_runner(model, q, device_);
  std::vector<SectionRunner*> runners{runner.get()};
  SectionStats stats;
  const CandidateList got = scan_sections(runners, t, static_cast<std::int64_t>(q.size()), 0, Strand::kPlus,
                                          1, kAll, SectionPlanOptions{}, &stats);
  compare(gpu::download_records(*runner, 0, n), all, "chrX records");
  expect_same_list(got, reduce_records(all, 0, 1, kAll, 0, Strand::kPlus), "chrX candidates");
  ASSERT_FALSE(got.items.empty());
  EXPECT_GT(got.items.front().score, 5 * 1000);  // the planted copy
  // Forced fixups on the same data.
  const CandidateList forced = scan_sections(runners, t, static_cast<std::int64_t>(q.size()), 0,
                                             Strand::kPlus, 50, 20, SectionPlanOptions{1}, &stats);
  EXPECT_GT(stats.fixups, 0u);
  expect_same_list(forced, reduce_records(all, 0, 50, 20, 0, Strand::kPlus), "chrX top 20, overlap 1");
}

TEST_F(ScanGpu, PreferredSectionsAndErrors) {
  std::mt19937_64 rng(19);
  const Codes q = random_dna(rng, 10'000);
  auto runner = make_gpu_runner(dna_model(), q, device_);
  EXPECT_EQ(runner->preferred_sections(1000, 10'000, 65536), 1u);
  const std::size_t short_q = runner->preferred_sections(17'700'000, 10'000, 65536);
  const std::size_t long_q = runner->preferred_sections(17'700'000, 1'000'000, 65536);
  EXPECT_GE(short_q, 8u);  // short queries need the target cut for parallelism
  EXPECT_LE(short_q, 17'700'000u / 2048);
  EXPECT_GE(long_q, 1u);
  EXPECT_LE(long_q, short_q);
  EXPECT_LE(runner->preferred_sections(17'700'000, 10'000, 50), 50u);  // never above the driver's cap
  EXPECT_EQ(runner->preferred_sections(17'700'000, 10'000, 1), 1u);
  EXPECT_THROW(gpu::make_runner(dna_model(), q, device_, gpu::RunnerOptions{5}), Error);
  EXPECT_THROW(gpu::make_runner(dna_model(), q, device_, gpu::RunnerOptions{16, 48}), Error);    // not 32k
  EXPECT_THROW(gpu::make_runner(dna_model(), q, device_, gpu::RunnerOptions{16, 0, 0}), Error);  // sharing
  Codes bad = random_dna(rng, 100);
  bad[50] = 40;
  EXPECT_THROW(runner->begin_target(bad), Error);
  const Codes t = random_dna(rng, 100);
  runner->begin_target(t);
  std::vector<SectionTask> outside{SectionTask{0, 0, 101, nullptr}};
  EXPECT_THROW(runner->run(outside), Error);
  std::vector<SectionTask> overlapping{SectionTask{0, 0, 60, nullptr}, SectionTask{0, 50, 100, nullptr}};
  EXPECT_THROW(runner->run(overlapping), Error);
  EXPECT_THROW(runner->candidates(0, 101, 1, 10, 0, Strand::kPlus), Error);
  auto cpu = make_cpu_runner(dna_model(), q, 1);
  EXPECT_THROW(gpu::last_launch(*cpu), Error);
}

// ---- throughput (WARPSEARCH_SCAN_GPU_PERF=1) ----------------------------------------------------------

// "1": the full set; "2": one launch (10 kbp x 4 Mbp DNA, R 16), for profilers.
std::string perf_mode() {
  const char* env = std::getenv("WARPSEARCH_SCAN_GPU_PERF");
  return env == nullptr ? std::string() : std::string(env);
}

// Pass 1 of the runner's own plan for (m, n): tasks as scan_sections makes them; prints TCUPS.
void measure(int device, const ScanModel& model, const Codes& q, const Codes& t, const std::string& name,
             int r = 0, std::int64_t forced_sections = 0) {
  auto runner = gpu::make_runner(model, q, device, gpu::RunnerOptions{r});
  runner->begin_target(t);
  const auto n = static_cast<std::int64_t>(t.size());
  const auto sections = forced_sections > 0 ? forced_sections
                                            : static_cast<std::int64_t>(runner->preferred_sections(
                                                  n, static_cast<std::int64_t>(q.size()), 65536));
  const std::int64_t overlap = sections > 1 ? std::clamp<std::int64_t>(n / sections / 8, 256, 16384) : 0;
  std::vector<SectionTask> tasks;
  for (std::int64_t k = 0; k < sections; ++k) {
    const std::int64_t b = k * n / sections, e = (k + 1) * n / sections;
    tasks.push_back(SectionTask{k == 0 ? 0 : std::max<std::int64_t>(0, b - overlap), b, e, nullptr});
  }
  runner->run(tasks);  // first launch: buffers grow
  const auto t0 = std::chrono::steady_clock::now();
  runner->run(tasks);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const gpu::LaunchInfo info = gpu::last_launch(*runner);
  const double useful = static_cast<double>(q.size()) * static_cast<double>(n);
  std::printf(
      "[perf] %-28s m %8zu n %9lld: %5lld sections, R %2d, kernel %.3f s = %.3f TCUPS computed, %.3f TCUPS "
      "useful (run() wall %.3f s)\n",
      name.c_str(), q.size(), static_cast<long long>(n), static_cast<long long>(sections), info.rows_per_lane,
      info.kernel_seconds, static_cast<double>(info.cells) / info.kernel_seconds / 1e12,
      useful / info.kernel_seconds / 1e12, wall);
  // One fixup-like task (exact initial state, whole section).
  ColumnState zero(q.size());
  std::vector<SectionTask> fix{SectionTask{tasks.back().own_begin, tasks.back().own_begin, n, &zero}};
  runner->run(fix);
  const gpu::LaunchInfo fi = gpu::last_launch(*runner);
  std::printf("[perf] %-28s   one fixup task of %lld columns: R %2d, %.4f s = %.3f TCUPS\n", name.c_str(),
              static_cast<long long>(fix[0].end - fix[0].start), fi.rows_per_lane, fi.kernel_seconds,
              static_cast<double>(fi.cells) / fi.kernel_seconds / 1e12);
  std::fflush(stdout);
}

// Both strands at once on one device (sharing 2, as the scan driver runs them): pass 1 with `sections`
// sections per strand and scan_sections' automatic overlap; prints useful TCUPS of the two launches.
// concurrent false: the strands one after the other (sharing as given); only_first: strand one alone.
void measure_strands(int device, const ScanModel& model, const Codes& q, const Codes& t, int r,
                     std::int64_t sections, int sharing = 2, bool concurrent = true, bool only_first = false,
                     bool paired = false) {
  const Codes rc = reverse_complement(q);
  gpu::RunnerOptions options;
  options.rows_per_lane = r;
  options.sharing = sharing;
  auto runners = two_runners(model, q, rc, device, options, paired);
  std::unique_ptr<SectionRunner>&a = runners.first, &b = runners.second;
  a->begin_target(t);
  b->begin_target(t);
  const auto n = static_cast<std::int64_t>(t.size());
  const auto m = static_cast<std::int64_t>(q.size());
  const std::int64_t overlap =
      sections > 1 ? std::max(std::clamp<std::int64_t>(n / sections / 8, 256, 16384), 2 * m + 256) : 0;
  std::vector<SectionTask> tasks;
  for (std::int64_t k = 0; k < sections; ++k) {
    const std::int64_t begin = k * n / sections, end = (k + 1) * n / sections;
    tasks.push_back(
        SectionTask{k == 0 ? 0 : std::max<std::int64_t>(0, begin - overlap), begin, end, nullptr});
  }
  double best = 1e30;
  for (int rep = 0; rep < 2; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    if (only_first) {
      a->run(tasks);
    } else if (concurrent) {
      auto other = std::async(std::launch::async, [&] { b->run(tasks); });
      a->run(tasks);
      other.get();
    } else {
      a->run(tasks);
      b->run(tasks);
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const gpu::LaunchInfo ia = gpu::last_launch(*a), ib = gpu::last_launch(*b);
  std::printf(
      "[perf] %s m %lld: R %2d, sharing %d, %4lld sections/strand, block %lld: kernels %.3f/%.3f s, "
      "wall %.3f s = %.3f TCUPS useful\n",
      only_first   ? "one strand"
      : paired     ? "paired"
      : concurrent ? "concurrent"
                   : "sequential",
      static_cast<long long>(m), ia.rows_per_lane, sharing, static_cast<long long>(sections),
      static_cast<long long>(ia.block_width), ia.kernel_seconds, ib.kernel_seconds, best,
      (only_first ? 1.0 : 2.0) * static_cast<double>(m) * static_cast<double>(n) / best / 1e12);
  std::fflush(stdout);
}

TEST_F(ScanGpu, PerfThroughput) {
  const std::string mode = perf_mode();
  if (mode != "1" && mode != "2" && mode != "3") GTEST_SKIP() << "set WARPSEARCH_SCAN_GPU_PERF=1";
  if (mode == "3") {
    // Shapes and section counts for a 10 kbp query against chrX, both strands.
    SequenceReader reader((test::testdata_dir() / "dna/ce2_chrX.fa").string());
    Sequence s;
    ASSERT_TRUE(reader.next(s));
    const Codes q(s.residues.begin() + 5'000'000, s.residues.begin() + 5'010'000);
    for (const int r : {16, 8, 4}) {
      for (const std::int64_t sections : {10, 15, 20, 30, 40, 60})
        measure_strands(device_, dna_model(), q, s.residues, r, sections, 2, true, false, true);
      measure_strands(device_, dna_model(), q, s.residues, r, 40);
    }
    const Codes q1m(s.residues.begin() + 1'000'000, s.residues.begin() + 2'000'000);
    const Codes t2m(s.residues.begin() + 9'000'000, s.residues.begin() + 12'000'000);
    for (const int r : {16, 8}) measure_strands(device_, dna_model(), q1m, t2m, r, 1, 2, true, false, true);
    return;
  }
  std::mt19937_64 rng(20);
  if (mode == "2") {
    const Codes t = random_dna(rng, 4'000'000);
    const Codes q(t.begin() + 100'000, t.begin() + 110'000);
    auto runner = gpu::make_runner(dna_model(), q, device_, gpu::RunnerOptions{16});
    runner->begin_target(t);
    std::vector<SectionTask> tasks;
    for (std::int64_t k = 0; k < 200; ++k)
      tasks.push_back(SectionTask{k * 20'000, k * 20'000, (k + 1) * 20'000, nullptr});
    runner->run(tasks);
    std::printf("[perf] one launch: %.3f TCUPS\n", 4e10 / gpu::last_launch(*runner).kernel_seconds / 1e12);
    return;
  }
  Codes chrx;
  if (std::filesystem::exists(test::testdata_dir() / "dna/ce2_chrX.fa")) {
    SequenceReader reader((test::testdata_dir() / "dna/ce2_chrX.fa").string());
    Sequence s;
    if (reader.next(s)) chrx = std::move(s.residues);
  }
  if (chrx.empty()) chrx = random_dna(rng, 17'718'866);
  const ScanModel dna = dna_model();
  const Codes q10k(chrx.begin() + 5'000'000, chrx.begin() + 5'010'000);
  measure(device_, dna, q10k, chrx, "DNA 10 kbp vs chrX");
  const Codes q1m(chrx.begin() + 1'000'000, chrx.begin() + 2'000'000);
  const Codes t2m(chrx.begin() + 9'000'000, chrx.begin() + 10'500'000);
  measure(device_, dna, q1m, t2m, "DNA 1 Mbp vs 1.5 Mbp of chrX");
  for (const std::int64_t sections : {79, 237, 300, 600})
    measure(device_, dna, q10k, chrx, "DNA 10 kbp, R 16, " + std::to_string(sections) + " sections", 16,
            sections);
  measure(device_, dna, q10k, chrx, "DNA 10 kbp, R 8, 600 sections", 8, 600);
  const ScanModel prot = protein_model();
  const Codes pq = random_codes(rng, 5000, 20);
  const Codes pt = random_codes(rng, 6'000'000, 20);
  measure(device_, prot, pq, pt, "protein 5000 vs 6 Maa");
}

}  // namespace
}  // namespace warpsearch::scan

#endif  // WARPSEARCH_HAVE_CUDA
