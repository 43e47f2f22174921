// test_gpu_plan.cpp: the CUDA pass engine without a GPU (runs in every build): the host planning of
// sw/gpu_plan.hpp (letter classes, classification, launch order, launch cutting and layout) and an exact
// host emulation of the kernels over those plans (pass_emulator.hpp) against sw::reference::pass, bit
// for bit: random protein and DNA pairs in every mode, forward and reversed, every kernel shape with one
// and many row tiles, 16x2 and 32-bit lanes, tiny launch caps, edge cases and real records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "pass_emulator.hpp"
#include "pass_test_support.hpp"
#include "sw/cuda/pass_cells.hpp"
#include "sw/gpu_plan.hpp"
#include "sw/model.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::sw::gpu::test {
namespace {

LaunchCaps big_caps() { return {1u << 20, std::size_t{1} << 30, std::size_t{1} << 30, 1u << 20, 1u << 20}; }

// Emulates the set's jobs and compares with the reference; returns the run.
// In local mode the set runs a second time with the reference scores given as known scores
// (PassJob::score: the engine stops each job once its end cell is certain), which must not change a result.
EmulatedRun check_emulated(const JobSet& set, const PassPolicy& policy, const LaunchCaps& caps,
                           const std::string& context) {
  const std::vector<PassJob> jobs = set.jobs();
  EmulatedRun run = emulate_run(set.model(), jobs, policy, caps);
  EXPECT_EQ(set.compare(run.ends, context), 0u) << context;
  if (set.model().mode == Mode::kLocal) {
    const std::vector<PassJob> known = set.jobs(true);
    const EmulatedRun stopped = emulate_run(set.model(), known, policy, caps);
    EXPECT_EQ(set.compare(stopped.ends, context + ", known scores"), 0u) << context;
  }
  return run;
}

TEST(GpuPlanPrmt, MatchesThePtxDefinition) {
  // Bytes of {b, a}: a = 0x80 7F 01 FF (bytes 3..0), b = 0x12 34 F0 0E.
  const std::uint32_t a = 0x807F01FFu, b = 0x1234F00Eu;
  EXPECT_EQ(prmt(a, b, 0x3210u), a);
  EXPECT_EQ(prmt(a, b, 0x7654u), b);
  EXPECT_EQ(prmt(a, b, 0x0123u), 0xFF017F80u);
  EXPECT_EQ(prmt(a, b, 0x8888u), 0xFFFFFFFFu);  // sign of byte 0 (0xFF)
  EXPECT_EQ(prmt(a, b, 0x9999u), 0x00000000u);  // sign of byte 1 (0x01)
  EXPECT_EQ(prmt(a, b, 0xB3A2u), 0xFF80007Fu);
  // Lane16x2::score: byte k of each word, sign-extended into its half.
  EXPECT_EQ(Lane16x2::score(a, b, 0), Lane16x2::pack(-1, 14));
  EXPECT_EQ(Lane16x2::score(a, b, 1), Lane16x2::pack(1, -16));
  EXPECT_EQ(Lane16x2::score(a, b, 3), Lane16x2::pack(-128, 18));
  EXPECT_EQ(static_cast<int>(Lane32::score(a, b, 3)), -128);
  EXPECT_EQ(static_cast<int>(Lane32::score(a, b, 2)), 127);
}

TEST(GpuPlanLanes, HostOpsAreExactPerHalf) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> v(-20000, 20000);
  for (int i = 0; i < 2000; ++i) {
    const int a0 = v(rng), a1 = v(rng), b0 = v(rng) / 4, b1 = v(rng) / 4, c0 = v(rng), c1 = v(rng);
    const auto a = Lane16x2::pack(a0, a1), b = Lane16x2::pack(b0, b1), c = Lane16x2::pack(c0, c1);
    EXPECT_EQ(Lane16x2::addmax(a, b, c), Lane16x2::pack(std::max(a0 + b0, c0), std::max(a1 + b1, c1)));
    EXPECT_EQ(Lane16x2::addmax_relu(a, b, c),
              Lane16x2::pack(std::max({a0 + b0, c0, 0}), std::max({a1 + b1, c1, 0})));
    EXPECT_EQ(Lane16x2::add(a, b), Lane16x2::pack(a0 + b0, a1 + b1));
    EXPECT_EQ(Lane16x2::max3(a, b, c), Lane16x2::pack(std::max({a0, b0, c0}), std::max({a1, b1, c1})));
    EXPECT_EQ(Lane16x2::get(a, 0), a0);
    EXPECT_EQ(Lane16x2::get(a, 1), a1);
    const auto x = Lane32::splat(a0 * 1000), y = Lane32::splat(b0), z = Lane32::splat(c1 * 1000);
    EXPECT_EQ(static_cast<int>(Lane32::addmax(x, y, z)), std::max(a0 * 1000 + b0, c1 * 1000));
    EXPECT_EQ(static_cast<int>(Lane32::addmax_relu(x, y, z)), std::max({a0 * 1000 + b0, c1 * 1000, 0}));
  }
}

TEST(GpuPlanLetters, ClassesReproduceEveryScore) {
  for (const Mode mode : kModes) {
    for (const Scoring& sc : {protein_scorings()[0], protein_scorings()[3], dna_scorings()[0]}) {
      const PassModel model = PassModel::make(sc.matrix, sc.gaps, mode);
      const LetterClasses lc = letter_classes(model);
      ASSERT_GT(lc.count, 0);
      ASSERT_LE(lc.count, kMaxCodes + 1);
      ASSERT_EQ(lc.ctab.size(), static_cast<std::size_t>(kMaxCodes * lc.count));
      for (int c = 0; c < kMaxCodes; ++c) {
        const int cls = lc.code_class[static_cast<std::size_t>(c)];
        ASSERT_LT(cls, lc.count);
        for (int q = 0; q < kMaxCodes; ++q)
          EXPECT_EQ(lc.ctab[static_cast<std::size_t>(q * lc.count + cls)], model.table[q * kMaxCodes + c])
              << sc.name << " q " << q << " t " << c;
      }
      // Classes are distinct columns.
      std::set<std::vector<std::int8_t>> distinct;
      for (int cls = 0; cls < lc.count; ++cls) {
        std::vector<std::int8_t> col;
        for (int q = 0; q < kMaxCodes; ++q)
          col.push_back(lc.ctab[static_cast<std::size_t>(q * lc.count + cls)]);
        distinct.insert(col);
      }
      EXPECT_EQ(distinct.size(), static_cast<std::size_t>(lc.count)) << sc.name;
      if (mode == Mode::kLocal) {
        for (int q = 0; q < kMaxCodes; ++q) {
          EXPECT_LE(lc.ctab[static_cast<std::size_t>(q * lc.count + lc.pad)], kPadScore);
        }
      }
    }
  }
  // BLOSUM62: at most the 27 protein codes plus one class for the padding codes 27..31.
  const LetterClasses b62 =
      letter_classes(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal));
  EXPECT_LE(b62.count, 28);
  EXPECT_GE(b62.count, 21);
  // DNA match/mismatch: A, C, G, T and one class for every other code.
  const LetterClasses dna = letter_classes(PassModel::make(ScoringMatrix::dna(2, -3), {5, 2}, Mode::kLocal));
  EXPECT_EQ(dna.count, 5);
  // A matrix without an all-negative column gets an explicit pad letter in local mode only.
  PassModel flat = PassModel::make(ScoringMatrix::dna(1, -1), {1, 1}, Mode::kLocal);
  for (std::int8_t& s : flat.table) s = static_cast<std::int8_t>(s < 0 ? 0 : s);
  const LetterClasses flat_local = letter_classes(flat);
  EXPECT_EQ(flat_local.pad, flat_local.count - 1);
  for (int q = 0; q < kMaxCodes; ++q)
    EXPECT_EQ(flat_local.ctab[static_cast<std::size_t>(q * flat_local.count + flat_local.pad)], kPadScore);
  flat.mode = Mode::kGlobal;
  EXPECT_EQ(letter_classes(flat).count, flat_local.count - 1);
}

// A policy running each query in the smallest of the first four shapes that holds it in one tile, and
// longer queries in 32 x 8 tiles.
PassPolicy single_tile_policy() {
  PassPolicy p;
  p.max_rows.fill(0);
  for (std::size_t s = 0; s < 4; ++s) p.max_rows[s] = kPassShapes[s].g * kPassShapes[s].r;
  p.long_shape = 3;
  p.known_max_rows = p.max_rows;
  p.known_long_shape = p.long_shape;
  return p;
}

// Every query tiled by one shape (jobs with known scores too).
PassPolicy tiles_policy(std::size_t shape) {
  PassPolicy p;
  p.max_rows.fill(0);
  p.long_shape = static_cast<int>(shape);
  p.known_max_rows = p.max_rows;
  p.known_long_shape = p.long_shape;
  return p;
}

TEST(GpuPlanClassify, SmallestShapeVirtualRowsTilesAndLanes) {
  const PassPolicy policy = single_tile_policy();
  const PassModel local = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal);
  const PassModel global = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kGlobal);
  for (std::uint32_t m = 1; m <= 700; ++m) {
    const JobClass cl = classify(local, m, 300, policy);
    EXPECT_EQ(cl.virtual_rows, 0);
    const PassShape sl = kPassShapes[cl.shape];
    EXPECT_EQ(cl.tiles, (m + sl.g * sl.r - 1) / static_cast<std::uint32_t>(sl.g * sl.r));
    if (cl.shape > 0 && cl.tiles == 1) {
      const PassShape smaller = kPassShapes[cl.shape - 1u];
      EXPECT_GT(static_cast<int>(m), smaller.g * smaller.r) << m;
    }
    if (m > 256) {
      EXPECT_EQ(cl.shape, policy.long_shape);
    }
    EXPECT_EQ(cl.lane, LaneKind::k16x2);

    const JobClass cg = classify(global, m, 300, policy);
    const PassShape sg = kPassShapes[cg.shape];
    EXPECT_EQ(cg.virtual_rows, static_cast<int>((sg.r - m % sg.r) % sg.r));
    EXPECT_EQ((m + static_cast<std::uint32_t>(cg.virtual_rows)) % static_cast<std::uint32_t>(sg.r), 0u);
    EXPECT_EQ(cg.lane, fits_int16(global, m + sg.r - 1, 300) ? LaneKind::k16x2 : LaneKind::k32) << m;
  }
  EXPECT_EQ(classify(local, 3000, 3000, policy).lane, LaneKind::k32);
  EXPECT_EQ(classify(global, 1400, 1400, policy).lane, LaneKind::k32);
  // A policy with no short shapes tiles every query with the long shape (the default: 8 x 8).
  const JobClass c = classify(local, 100, 50, tiles_policy(0));
  EXPECT_EQ(c.shape, 0);
  EXPECT_EQ(c.tiles, 4u);
  const JobClass d = classify(global, 100, 50, PassPolicy{});
  EXPECT_EQ(kPassShapes[d.shape].g * kPassShapes[d.shape].r, 64);
  EXPECT_EQ(d.virtual_rows, 4);
  EXPECT_EQ(d.tiles, 2u);
}

std::vector<PassJob> random_jobs(std::mt19937_64& rng, std::size_t n, std::uint32_t max_len,
                                 const std::vector<std::uint8_t>& pool) {
  std::uniform_int_distribution<std::uint32_t> len(1, max_len);
  std::vector<PassJob> jobs(n);
  for (PassJob& j : jobs) {
    j.qlen = len(rng);
    j.tlen = len(rng);
    j.query = pool.data();
    j.target = pool.data() + 1;
    j.reversed = rng() % 2 == 0;
  }
  return jobs;
}

TEST(GpuPlanSort, OrdersByLaneShapeTilesAndTargetLengthStably) {
  std::mt19937_64 rng(3);
  const std::vector<std::uint8_t> pool(5000, 0);
  const std::vector<PassJob> jobs = random_jobs(rng, 5000, 2000, pool);
  const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kGlobal);
  std::vector<JobClass> classes;
  for (const PassJob& j : jobs) classes.push_back(classify(model, j.qlen, j.tlen, PassPolicy{}));
  const std::vector<SortedJob> order = sort_jobs(classes, jobs);
  ASSERT_EQ(order.size(), jobs.size());
  std::vector<std::uint32_t> sorted;
  for (const SortedJob& o : order) {
    sorted.push_back(o.job);
    ASSERT_LT(o.job, jobs.size());
    const PassJob& j = jobs[o.job];
    const JobClass& c = classes[o.job];
    EXPECT_EQ(o.qlen, j.qlen);
    EXPECT_EQ(o.tlen, j.tlen);
    EXPECT_EQ(o.reversed, j.reversed);
    EXPECT_EQ(o.lane, c.lane);
    EXPECT_EQ(o.shape, c.shape);
    EXPECT_EQ(o.tiles, c.tiles);
    EXPECT_EQ(static_cast<int>(o.virtual_rows), c.virtual_rows);
  }
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t k = 0; k < sorted.size(); ++k) ASSERT_EQ(sorted[k], k);
  const auto key = [&](std::uint32_t k) {
    return std::tuple(classes[k].lane, classes[k].shape, classes[k].tiles, jobs[k].tlen, k);
  };
  for (std::size_t i = 1; i < order.size(); ++i) EXPECT_LT(key(order[i - 1].job), key(order[i].job)) << i;
  EXPECT_TRUE(sort_jobs({}, {}).empty());
}

// The sort's chunked steps on a pool give exactly the sequential order (several chunks, local mode
// with known and unknown scores, so every key part varies), and reused scratch changes nothing.
TEST(GpuPlanSort, PoolGivesTheSequentialOrder) {
  std::mt19937_64 rng(11);
  const std::vector<std::uint8_t> pool(3000, 0);
  std::vector<PassJob> jobs = random_jobs(rng, 5 * kSortGrain + 123, 1500, pool);
  for (PassJob& j : jobs)
    if (rng() % 3 == 0) j.score = static_cast<std::int32_t>(1 + rng() % 2000);
  const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal);
  std::vector<JobClass> classes;
  for (const PassJob& j : jobs) classes.push_back(classify(model, j.qlen, j.tlen, PassPolicy{}, j.score > 0));
  const std::vector<SortedJob> expect = sort_jobs(classes, jobs);
  const auto same = [](const SortedJob& a, const SortedJob& b) {
    return a.job == b.job && a.qlen == b.qlen && a.tlen == b.tlen && a.tiles == b.tiles && a.lane == b.lane &&
           a.shape == b.shape && a.virtual_rows == b.virtual_rows && a.reversed == b.reversed &&
           a.score == b.score;
  };
  ThreadPool threads(4);
  std::vector<SortedJob> order;
  SortScratch scratch;
  for (const std::size_t n : {jobs.size(), kSortGrain + 1, std::size_t{7}, jobs.size()}) {
    const std::span<const JobClass> c(classes.data(), n);
    const std::span<const PassJob> j(jobs.data(), n);
    const std::vector<SortedJob> alone = sort_jobs(c, j);
    sort_jobs(c, j, order, scratch, &threads);
    ASSERT_EQ(order.size(), n);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_TRUE(same(order[i], alone[i])) << "n " << n << ", position " << i;
  }
  for (std::size_t i = 0; i < expect.size(); ++i) ASSERT_TRUE(same(order[i], expect[i])) << i;
}

// Every structural promise of plan_launch over a whole run with the given caps.
void check_plans(const PassModel& model, const std::vector<PassJob>& jobs, const LaunchCaps& caps,
                 const PassPolicy& policy) {
  std::vector<JobClass> classes;
  for (const PassJob& j : jobs) classes.push_back(classify(model, j.qlen, j.tlen, policy));
  const std::vector<SortedJob> order = sort_jobs(classes, jobs);
  std::vector<int> seen(jobs.size(), 0);
  LaunchPlan plan;
  std::size_t launches = 0;
  for (std::size_t pos = 0; pos < order.size();) {
    const std::size_t before = pos;
    pos = plan_launch(model, order, pos, caps, plan);
    ASSERT_GT(pos, before);
    ++launches;
    ASSERT_EQ(plan.jobs.size(), pos - before);
    const LaunchCaps need = plan.needs();
    if (plan.jobs.size() > 1) {
      EXPECT_LE(need.jobs, caps.jobs);
      EXPECT_LE(need.residues, caps.residues);
      EXPECT_LE(need.columns, caps.columns);
      EXPECT_LE(need.slots, caps.slots);
      EXPECT_LE(need.warps, caps.warps);
    }
    // Buckets: contiguous, covering every warp, one lane kind and shape each.
    std::uint32_t next_warp = 0;
    std::uint64_t next_column = 0;
    std::uint32_t next_slot = 0;
    std::vector<int> job_seen(plan.jobs.size(), 0);
    std::uint64_t cells16 = 0, cells32 = 0, residues = 0;
    for (const Bucket& b : plan.buckets) {
      EXPECT_EQ(b.warp_begin, next_warp);
      EXPECT_LT(b.warp_begin, b.warp_end);
      next_warp = b.warp_end;
      const PassShape sh = kPassShapes[b.shape];
      const auto spw = static_cast<std::uint32_t>(32 / sh.g);
      for (std::uint32_t w = b.warp_begin; w < b.warp_end; ++w) {
        const WarpInfo& wi = plan.warps[w];
        EXPECT_EQ(wi.column, next_column);
        EXPECT_EQ(wi.column % 4, 0u);
        EXPECT_EQ(wi.cols % 4, 0u);
        EXPECT_EQ(wi.first_slot, next_slot);
        next_slot += spw;
        next_column += static_cast<std::uint64_t>(spw) * wi.cols;
        for (std::uint32_t s = wi.first_slot; s < wi.first_slot + spw; ++s) {
          for (int h = 0; h < 2; ++h) {
            const HalfInfo& half = plan.slots[s].half[h];
            if (h == 1 && b.lane == LaneKind::k32) {
              EXPECT_EQ(half.job, -1);
            }
            if (half.job < 0) {
              EXPECT_EQ(half.m, 0);
              EXPECT_EQ(half.n, 0);
              continue;
            }
            ++job_seen[static_cast<std::size_t>(half.job)];
            const std::uint32_t k = plan.jobs[static_cast<std::size_t>(half.job)];
            const JobClass& c = classes[k];
            EXPECT_EQ(c.lane, b.lane);
            EXPECT_EQ(c.shape, b.shape);
            EXPECT_EQ(half.m, static_cast<std::int32_t>(jobs[k].qlen));
            EXPECT_EQ(half.n, static_cast<std::int32_t>(jobs[k].tlen));
            EXPECT_EQ(half.reversed != 0, jobs[k].reversed);
            EXPECT_EQ(half.query, plan.offsets[static_cast<std::size_t>(half.job)]);
            EXPECT_EQ(half.target, half.query + jobs[k].qlen);
            EXPECT_LE(half.target + jobs[k].tlen, plan.residues);
            EXPECT_GE(wi.cols, jobs[k].tlen + static_cast<std::uint32_t>(sh.g) - 1);
            EXPECT_GE(wi.tiles, c.tiles);
            EXPECT_EQ(half.virtual_rows, c.virtual_rows);
            if (model.mode != Mode::kLocal) {
              const int row = half.m - 1 + half.virtual_rows;
              EXPECT_EQ(half.end_tile * sh.g * sh.r + half.end_thread * sh.r + sh.r - 1, row);
            }
            (b.lane == LaneKind::k16x2 ? cells16 : cells32) += std::uint64_t{jobs[k].qlen} * jobs[k].tlen;
            residues += jobs[k].qlen + jobs[k].tlen;
          }
        }
      }
    }
    EXPECT_EQ(next_warp, plan.warps.size());
    EXPECT_EQ(next_slot, plan.slots.size());
    EXPECT_EQ(next_column, plan.columns);
    EXPECT_EQ(residues, plan.residues);
    EXPECT_EQ(cells16, plan.cells16);
    EXPECT_EQ(cells32, plan.cells32);
    for (std::size_t l = 0; l < plan.jobs.size(); ++l) {
      EXPECT_EQ(job_seen[l], 1) << l;
      ++seen[plan.jobs[l]];
    }
  }
  for (std::size_t k = 0; k < jobs.size(); ++k) EXPECT_EQ(seen[k], 1) << k;
  if (caps.jobs == 1) {
    EXPECT_EQ(launches, jobs.size());
  }
}

TEST(GpuPlanLaunch, CoversEveryJobOnceWithinCaps) {
  std::mt19937_64 rng(5);
  const std::vector<std::uint8_t> pool(3000, 0);
  const PassPolicy tiles_only = tiles_policy(1);
  for (const Mode mode : kModes) {
    const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode);
    const std::vector<PassJob> jobs = random_jobs(rng, 3000, 3000, pool);
    check_plans(model, jobs, big_caps(), PassPolicy{});
    check_plans(model, jobs, big_caps(), single_tile_policy());
    check_plans(model, jobs, {1, 1u << 30, 1u << 30, 1u << 20, 1u << 20}, PassPolicy{});
    check_plans(model, jobs, {37, 1u << 30, 1u << 30, 1u << 20, 1u << 20}, tiles_only);
    check_plans(model, jobs, {1u << 20, 20000, 1u << 30, 1u << 20, 1u << 20}, PassPolicy{});
    check_plans(model, jobs, {1u << 20, 1u << 30, 50000, 1u << 20, 1u << 20}, PassPolicy{});
    check_plans(model, jobs, {1u << 20, 1u << 30, 1u << 30, 40, 3}, PassPolicy{});
  }
  LaunchPlan plan;
  EXPECT_EQ(plan_launch(PassModel{}, {}, 0, big_caps(), plan), 0u);
  EXPECT_TRUE(plan.jobs.empty());
  EXPECT_TRUE(plan.warps.empty());
}

// Random pairs of the given alphabet under every scoring and mode, forward and reversed, emulated with
// the default policy, one big tile per query, every query tiled by each shape, and tiny launches.
void emulate_random(const std::vector<Scoring>& scorings, const Alphabet& alphabet, std::size_t pairs,
                    std::size_t max_len, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (const Scoring& sc : scorings)
    for (const Mode mode : kModes) {
      JobSet set(PassModel::make(sc.matrix, sc.gaps, mode));
      for (std::size_t p = 0; p < pairs; ++p) {
        auto [q, t] = random_pair(rng, 1, max_len, alphabet);
        set.add(std::move(q), std::move(t), p % 3 == 2, sc.name + " pair " + std::to_string(p));
      }
      const std::string ctx = sc.name + " " + mode_label(mode);
      check_emulated(set, PassPolicy{}, big_caps(), ctx + " default policy");
      check_emulated(set, single_tile_policy(), big_caps(), ctx + " single tiles");
      for (std::size_t s = 0; s < kPassShapes.size(); ++s)
        check_emulated(set, tiles_policy(s), big_caps(), ctx + " tiles of shape " + std::to_string(s));
      LaunchCaps tiny = big_caps();
      tiny.jobs = 3;
      const EmulatedRun run = check_emulated(set, PassPolicy{}, tiny, ctx + " 3 jobs per launch");
      EXPECT_EQ(run.launches, (set.size() + 2) / 3);
    }
}

TEST(GpuPassEmulated, RandomProteinPairs) {
  emulate_random(protein_scorings(), Alphabet::protein(), 30, 300, 0x9e01);
}

TEST(GpuPassEmulated, RandomDnaPairs) { emulate_random(dna_scorings(), Alphabet::dna(), 30, 300, 0x9e02); }

TEST(GpuPassEmulated, LongQueriesWithManyTiles) {
  std::mt19937_64 rng(0x9e03);
  const Alphabet prot = Alphabet::protein();
  for (const Mode mode : kModes) {
    JobSet set(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
    for (int p = 0; p < 6; ++p) {
      auto [q, t] = random_pair(rng, 257, 700, prot);
      set.add(q, t, false, "long " + std::to_string(p));
      set.add(std::move(t), std::move(q), true, "long swapped reversed " + std::to_string(p));
    }
    check_emulated(set, PassPolicy{}, big_caps(), std::string("long queries ") + mode_label(mode));
    check_emulated(set, single_tile_policy(), big_caps(),
                   std::string("long queries, 256-row tiles ") + mode_label(mode));
  }
}

TEST(GpuPassEmulated, WideLanes) {
  std::mt19937_64 rng(0x9e04);
  const Alphabet dna = Alphabet::dna();
  const Alphabet prot = Alphabet::protein();
  const Seq a = random_seq(rng, 600, dna);
  const Seq b = mutate(rng, a, dna, 5, 2);
  const Seq p = random_seq(rng, 1400, prot);
  for (const Mode mode : kModes) {
    JobSet set(PassModel::make(ScoringMatrix::dna(100, -100), {50, 40}, mode));
    set.add(a, a, false, "identical 600 +100/-100");
    set.add(a, b, true, "related 600 +100/-100 reversed");
    set.add(Seq(a.begin(), a.begin() + 3), a, false, "3 vs 600 +100/-100");
    set.add(Seq(a.begin(), a.begin() + 40), Seq(a.begin(), a.begin() + 50), false, "40 vs 50 (16-bit)");
    const EmulatedRun run =
        check_emulated(set, PassPolicy{}, big_caps(), std::string("wide dna ") + mode_label(mode));
    EXPECT_GT(run.cells32, 0u);
    EXPECT_GT(run.cells16, 0u);
    JobSet prot_set(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
    if (mode == Mode::kLocal) {
      const Seq p2950 = random_seq(rng, 2950, prot);
      prot_set.add(p2950, p2950, false, "identical protein 2950");
    } else {
      prot_set.add(p, p, false, "identical protein 1400");
    }
    const EmulatedRun prun =
        check_emulated(prot_set, PassPolicy{}, big_caps(), std::string("wide protein ") + mode_label(mode));
    EXPECT_EQ(prun.cells16, 0u);
  }
}

// Local 16x2 lanes hold values in stored form (value + O + X, pass_cells.hpp): pairs of the longest
// length whose value_bound fits kInt16Safe (stored H up to 31990) and one residue longer (32-bit
// lanes), and a gap extension so large that stored E - X comes within 1768 of -32768.
TEST(GpuPassEmulated, StoredFormAtTheInt16Bound) {
  std::mt19937_64 rng(0x9e0b);
  const Alphabet dna = Alphabet::dna();
  const GapCosts gaps{50, 40};
  const PassModel model = PassModel::make(ScoringMatrix::dna(100, -100), gaps, Mode::kLocal);
  const std::int64_t at_bound = (kInt16Safe - gaps.open - gaps.extend) / 100;  // 319 rows of +100
  ASSERT_LE(value_bound(model, at_bound, at_bound), kInt16Safe);
  ASSERT_GT(value_bound(model, at_bound + 1, at_bound + 1), kInt16Safe);
  const Seq a = random_seq(rng, static_cast<std::size_t>(at_bound) + 1, dna);
  const Seq a319(a.begin(), a.end() - 1);
  const Seq related = mutate(rng, a319, dna, 3, 1);
  JobSet set(model);
  set.add(a319, a319, false, "identical at the bound");
  set.add(a319, a319, true, "identical at the bound, reversed");
  set.add(a319, related, false, "related at the bound");
  set.add(a, a, false, "identical one above the bound (32-bit)");
  const EmulatedRun run = check_emulated(set, PassPolicy{}, big_caps(), "stored form at the bound");
  EXPECT_GT(run.cells16, 0u);
  EXPECT_GT(run.cells32, 0u);

  const std::int32_t huge = 31000;  // value_bound = top + 0 + 31000 <= 32000 for short pairs
  const PassModel wide_gaps = PassModel::make(ScoringMatrix::dna(2, -3), {0, huge}, Mode::kLocal);
  JobSet gapped(wide_gaps);
  for (int k = 0; k < 20; ++k) {
    const Seq q = random_seq(rng, 40 + 17 * static_cast<std::size_t>(k), dna);
    gapped.add(q, mutate(rng, q, dna, 10, 3), k % 2 == 1, "gap extension 31000, " + std::to_string(k));
  }
  ASSERT_LE(value_bound(wide_gaps, 420, 420), kInt16Safe);
  const EmulatedRun grun = check_emulated(gapped, PassPolicy{}, big_caps(), "gap extension 31000");
  EXPECT_EQ(grun.cells32, 0u);
}

TEST(GpuPassEmulated, EdgeCases) {
  for (const Mode mode : kModes) {
    const auto [b62, d11] =
        edge_case_sets(mode, {.seed = 0x9e05, .a_step = 2, .c_step = 5, .max_len = 40, .len_step = 3});
    check_emulated(b62, PassPolicy{}, big_caps(), std::string("edge protein ") + mode_label(mode));
    check_emulated(d11, PassPolicy{}, big_caps(), std::string("edge dna ") + mode_label(mode));
  }
}

// The start-finding passes as the Aligner runs them: reversed prefixes up to the forward end, with the
// forward score known. Related pairs (long alignments, many row tiles) and unrelated ones (short
// alignments that settle after a few columns); the known scores must cut the swept steps.
TEST(GpuPassEmulated, KnownScoresOnReversePrefixes) {
  std::mt19937_64 rng(0x9e06);
  const JobSet set = reverse_prefix_set(rng, 48, 400, 700);
  const PassModel& model = set.model();
  ASSERT_GE(set.size(), 40u);
  for (const PassPolicy& policy : {PassPolicy{}, single_tile_policy(), tiles_policy(0), tiles_policy(4)}) {
    emulated_steps = 0;
    const EmulatedRun full = emulate_run(model, set.jobs(), policy, big_caps());
    const std::uint64_t full_steps = emulated_steps;
    emulated_steps = 0;
    const EmulatedRun known = emulate_run(model, set.jobs(true), policy, big_caps());
    EXPECT_EQ(set.compare(full.ends, "unknown scores"), 0u);
    EXPECT_EQ(set.compare(known.ends, "known scores"), 0u);
    EXPECT_LT(emulated_steps * 4, full_steps * 3) << "known scores should settle jobs early";
  }
}

TEST(GpuPassEmulated, RealPairs) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("dna/BioMarKs50k.fa");
  const std::vector<Seq> prot = read_records("prot/mmseqs_QUERY500.fasta", AlphabetKind::kProtein, 120);
  const std::vector<Seq> dna = read_records("dna/BioMarKs50k.fa", AlphabetKind::kDna, 60);
  ASSERT_GE(prot.size(), 100u);
  ASSERT_GE(dna.size(), 50u);
  for (const Mode mode : kModes) {
    JobSet ps(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
    for (std::size_t i = 0; i + 1 < prot.size(); i += 10)
      if (prot[i].size() * prot[i + 1].size() <= 400'000)
        ps.add(prot[i], prot[i + 1], i % 20 == 0, "record " + std::to_string(i));
    JobSet ds(PassModel::make(ScoringMatrix::dna(2, -3), {5, 2}, mode));
    for (std::size_t i = 0; i + 7 < dna.size(); i += 8)
      ds.add(dna[i], dna[i + 7], i % 16 == 0, "record " + std::to_string(i));
    check_emulated(ps, PassPolicy{}, big_caps(), std::string("real protein ") + mode_label(mode));
    check_emulated(ds, PassPolicy{}, big_caps(), std::string("real dna ") + mode_label(mode));
  }
}

}  // namespace
}  // namespace warpsearch::sw::gpu::test
