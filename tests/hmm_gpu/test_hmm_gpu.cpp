// test_hmm_gpu.cpp: hmmsearch's GPU filter engine (make_gpu_filter_engine, src/hmm/cuda) against the CPU
// reference, bit for bit, through the FilterEngine API (src/hmm/filter_engine.hpp). Label gpu; every test
// is skipped without a usable GPU (always in builds without CUDA).
//
// For every target s of the engine's database and the profile om given to set_model, the reference is
// computed on a copy of om reconfigured with reconfig_length(om, L_s), as the pipeline does (every target,
// also those of length 0, which the contract allows: the engines return what the CPU functions return):
//   ssv_xe(out)         out[s] == min(ssv_xe_reference, 255 - bias_b) (the contract's cap; also where the
//                       SSV is not applicable)
//   msv(out)            out[s] == msv_filter (score bits and overflow flag)
//   msv_full(ids, out)  out[j] == msv_full_state_reference (overflow flag; xJ unless overflow)
//   vit_states(ids)     out[j] == viterbi_state_reference (overflow flag; xC unless overflow)
//   viterbi(ids, out)   out[j] == viterbi_filter (score bits and overflow flag)
// The references run on a ThreadPool of all hardware threads (the CPU side dominates the run time).
//
// Contents (each test's comment says what it checks):
//   RandomModelsAllLengths  M = 1 .. 10000 at the kernel-variant boundaries, mixed-length database
//   VeryLongModels          M = 16385 .. 100000 (SSV not applicable)
//   LongTargets             targets of 101,000 and 120,000 residues
//   Saturation              SSV / MSV / Viterbi overflow and the scores next to each threshold
//   DegenerateCodes         every residue code of the alphabet (Kp codes: degenerate, gap, '*', '~')
//   NucleotideModels        a DNA model (Kp = 18)
//   UnihitMode              profiles configured in unihit local mode
//   EngineReuse             set_model many times per set_database, set_database replacing the database,
//                           host buffers reused after set_database, an empty database, two engines
//   IdSubsets               viterbi / vit_states / msv_full with shuffled, duplicated, single and no ids,
//                           and the Viterbi statistics
//   ChunkedDatabase         a database larger than the engine's residue budget (processed in chunks)
//   OutputSizeMismatch      msv with a wrong output size is Error(kInternal)
//   RealModels              Pkinase, globins4, fn3 (and more when present) vs 3000 DB20k proteins + globins45
//
// WARPSEARCH_HMM_GPU_TEST_ENGINE=cpu runs every test against make_cpu_filter_engine instead of the GPU
// engine (to check the tests themselves on a machine without a GPU; it proves nothing about the GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "../hmm/oprofile_test_util.hpp"  // test::random_hmm, random_dsq, homolog_dsq, consensus_repeat_dsq
#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/common.hpp"
#include "hmm/filter_engine.hpp"
#include "hmm/hmm.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm/vitfilter.hpp"
#include "scoped_env.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::hmm {
namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
int length_of(const Dsq& d) { return static_cast<int>(d.size()) - 2; }

// ---- The engine under test ------------------------------------------------------------------------

ThreadPool& reference_pool() {
  static ThreadPool pool(0);
  return pool;
}

bool cpu_engine_requested() {
  const char* e = std::getenv("WARPSEARCH_HMM_GPU_TEST_ENGINE");
  return e != nullptr && std::string(e) == "cpu";
}

int first_gpu() {
  const DeviceProbe probe = probe_devices();
  return probe.devices.empty() ? -1 : probe.devices.front().id;
}

// The GPU engine on the first usable device (nullptr and *why when there is none), or the CPU engine when
// WARPSEARCH_HMM_GPU_TEST_ENGINE=cpu. residue_budget: make_gpu_filter_engine's (0: its default).
std::unique_ptr<FilterEngine> engine_under_test(std::string* why, std::size_t residue_budget = 0) {
  if (cpu_engine_requested()) return make_cpu_filter_engine(reference_pool());
  const int dev = first_gpu();
  if (dev < 0) {
    *why = probe_devices().unavailable_reason;
    return nullptr;
  }
  return make_gpu_filter_engine(dev, residue_budget);
}

#define REQUIRE_ENGINE(engine)                                             \
  std::string engine##_why;                                                \
  std::unique_ptr<FilterEngine> engine = engine_under_test(&engine##_why); \
  if (!engine) GTEST_SKIP() << "no usable GPU: " << engine##_why

// ---- Models and targets -----------------------------------------------------------------------------

// A random model of M nodes in one of four flavours (variant % 4): default Dirichlet(1) draws; peaked
// emissions (large match scores, large bias_b: saturates early); 30 % zero emission probabilities (-inf
// scores: MSV cost 255, Viterbi -32768); extreme transitions (long D->D paths for the Viterbi filter).
Hmm random_model(std::mt19937_64& rng, int M, const Abc& a, int variant) {
  test::ModelKnobs kn;
  switch (variant % 4) {
    case 1: kn.emit_alpha = 0.05; break;
    case 2:
      kn.emit_alpha = 0.3;
      kn.zero_frac = 0.3;
      break;
    case 3: kn.trans_alpha = 0.1; break;
    default: break;
  }
  return test::random_hmm(rng, M, a, kn);
}

// The striped profile of h as hmmsearch builds it: local (multihit unless mode says otherwise) for L.
OProfile make_profile(const Hmm& h, int L = 100, ProfileMode mode = ProfileMode::kLocal) {
  const Bg bg = make_bg(*h.abc);
  return convert_profile(config_profile(h, bg, L, mode));
}

// A protein-like length: 35 % short (1..64), 55 % log-normal around 250 (at most 4000), 10 % 1000..3000.
int random_length(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double r = u(rng);
  if (r < 0.35) return std::uniform_int_distribution<int>(1, 64)(rng);
  if (r < 0.90) {
    std::lognormal_distribution<double> ln(std::log(250.0), 0.6);
    return std::clamp(static_cast<int>(ln(rng)), 1, 4000);
  }
  return std::uniform_int_distribution<int>(1000, 3000)(rng);
}

// n targets of random_length: background residues (1 % of positions any code 0..Kp-1) or, one in three,
// a homolog of a random one of `sources` (1..3 sampled segments, or one greedy consensus segment). The
// exact lengths 1, 2 and 5 (and 0 when with_empty) are placed at fixed positions.
std::vector<Dsq> mixed_targets(std::mt19937_64& rng, const std::vector<const Hmm*>& sources, const Bg& bg,
                               std::size_t n, bool with_empty) {
  std::vector<Dsq> out;
  out.reserve(n);
  std::uniform_int_distribution<int> kind(0, 5);
  std::uniform_int_distribution<std::size_t> pick(0, sources.size() - 1);
  for (std::size_t s = 0; s < n; ++s) {
    int L = random_length(rng);
    if (s % 997 == 3) L = 1;
    if (s % 997 == 10) L = 2;
    if (s % 997 == 17) L = 5;
    if (with_empty && s % 997 == 40) L = 0;
    const int k = kind(rng);
    if (L == 0 || k < 4 || sources.empty()) {
      out.push_back(test::random_dsq(rng, L, bg, 0.01));
    } else {
      const Hmm& h = *sources[pick(rng)];
      out.push_back(k == 4 ? test::homolog_dsq(rng, h, bg, L, 1 + static_cast<int>(rng() % 3), false)
                           : test::homolog_dsq(rng, h, bg, L, 1, true));
    }
  }
  return out;
}

std::vector<FilterSeq> views_of(const std::vector<Dsq>& seqs) {
  std::vector<FilterSeq> v;
  v.reserve(seqs.size());
  for (const Dsq& d : seqs) v.push_back(FilterSeq{d.data(), static_cast<int64_t>(length_of(d))});
  return v;
}

// 0 .. n-1: every target, the empty ones included (the contract allows them everywhere).
std::vector<uint32_t> all_ids(const std::vector<Dsq>& seqs) {
  std::vector<uint32_t> ids(seqs.size());
  std::iota(ids.begin(), ids.end(), 0u);
  return ids;
}

// ---- The reference ------------------------------------------------------------------------------------

struct Ref {
  int L = 0;
  int xe = 0;             // min(ssv_xe_reference, 255 - bias_b): the contract's cap
  MsvState full;          // msv_full_state_reference
  VitState vit;           // viterbi_state_reference
  FilterScore msv;        // msv_filter (also for L = 0: the engine contract)
  FilterScore vit_score;  // viterbi_filter
  bool ssv_applicable = false;
  SsvStatus ssv = SsvStatus::kNoResult;
};

// Every target against om reconfigured for its length, on the reference pool.
std::vector<Ref> reference(const OProfile& om, const std::vector<Dsq>& seqs) {
  std::vector<Ref> out(seqs.size());
  const std::size_t grain = std::max<std::size_t>(1, seqs.size() / (8 * reference_pool().size()));
  reference_pool().parallel_for(seqs.size(), grain, [&](std::size_t begin, std::size_t end) {
    OProfile o = om;  // one copy per chunk, reconfigured per target
    for (std::size_t s = begin; s < end; ++s) {
      const uint8_t* d = seqs[s].data();
      const int L = length_of(seqs[s]);
      Ref& r = out[s];
      r.L = L;
      reconfig_length(o, L);
      // The engine contract caps xE at 255 - bias_b (every value from there on means overflow).
      const int xe = ssv_xe_reference(d, L, o);
      r.xe = std::min(xe, 255 - static_cast<int>(o.bias_b));
      r.ssv_applicable = ssv_applicable(o, o.tjb_b);
      // Length 0 included: the engines return what the CPU functions return for an empty target.
      r.ssv = r.ssv_applicable ? ssv_decide(xe, o, o.tjb_b).status
                               : SsvStatus::kNoResult;  // = ssv_filter_reference
      r.full = msv_full_state_reference(d, L, o);
      r.vit = viterbi_state_reference(d, L, o);
      r.msv = msv_filter(d, L, o);
      r.vit_score = viterbi_filter(d, L, o);
    }
  });
  return out;
}

// Which outcomes the compared targets reached (so the tests can prove they exercised them).
struct Coverage {
  int targets = 0, ssv_overflow = 0, ssv_ok = 0, ssv_range = 0, ssv_noresult = 0, ssv_not_applicable = 0;
  int msv_overflow = 0, msv_ok = 0, vit_overflow = 0, vit_finite = 0, vit_no_path = 0;
  void add(const Ref& r, const OProfile& om) {
    ++targets;
    if (r.xe >= 255 - om.bias_b) ++ssv_overflow;
    if (r.L == 0) return;
    if (!r.ssv_applicable) {
      ++ssv_not_applicable;
    } else if (r.ssv == SsvStatus::kOk) {
      ++ssv_ok;
    } else if (r.ssv == SsvStatus::kRange) {
      ++ssv_range;
    } else {
      ++ssv_noresult;
    }
    ++(r.full.overflow ? msv_overflow : msv_ok);
    if (r.vit.overflow) {
      ++vit_overflow;
    } else if (r.vit.xC <= -32768) {
      ++vit_no_path;
    } else {
      ++vit_finite;
    }
  }
};

std::string where(const std::string& what, std::size_t j, uint32_t s, const Ref& r, const OProfile& om) {
  return what + " [" + std::to_string(j) + "] target " + std::to_string(s) + " (L " + std::to_string(r.L) +
         ", M " + std::to_string(om.M) + ")";
}
std::string show(FilterScore f) {
  return std::to_string(f.score) + " (bits " + std::to_string(bits(f.score)) + ")" +
         (f.overflow ? " overflow" : "");
}

// Mismatch bookkeeping: the first few are reported in full, then the count.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}
  ~Mismatches() {
    if (n_ > kShown) ADD_FAILURE() << what_ << ": " << n_ << " mismatches in all";
  }
  void add(const std::string& msg) {
    if (++n_ <= kShown) ADD_FAILURE() << msg;
  }
  Mismatches(const Mismatches&) = delete;
  Mismatches& operator=(const Mismatches&) = delete;

 private:
  static constexpr int kShown = 4;
  std::string what_;
  int n_ = 0;
};

// The integer states and scores of the listed targets (ids in any order, duplicates allowed).
void check_ids(FilterEngine& e, const OProfile& om, const std::vector<Ref>& ref,
               std::span<const uint32_t> ids, const std::string& what) {
  // msv_full with the engine's own choice of kernel shape for the list, then with each shape forced (the GPU
  // engine's WARPSEARCH_HMM_GPU_MSV_LATENCY_MAX: 0 never takes the short-list shape, a huge value always).
  for (const char* knob : {static_cast<const char*>(nullptr), "0", "4294967295"}) {
    std::optional<warpsearch::test::ScopedEnv> env;
    if (knob != nullptr) env.emplace("WARPSEARCH_HMM_GPU_MSV_LATENCY_MAX", knob);
    const std::string label =
        what + " msv_full" + (knob == nullptr ? "" : std::string(" (latency max ") + knob + ")");
    std::vector<MsvState> full(ids.size());
    e.msv_full(ids, full);
    Mismatches bad(label);
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const Ref& r = ref[ids[j]];
      if (full[j].overflow != r.full.overflow || (!r.full.overflow && full[j].xJ != r.full.xJ))
        bad.add(where(label, j, ids[j], r, om) + ": xJ " + std::to_string(full[j].xJ) +
                (full[j].overflow ? " overflow" : "") + ", expected " + std::to_string(r.full.xJ) +
                (r.full.overflow ? " overflow" : ""));
    }
  }
  std::vector<VitState> vs(ids.size());
  e.vit_states(ids, vs);
  {
    Mismatches bad(what + " vit_states");
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const Ref& r = ref[ids[j]];
      if (vs[j].overflow != r.vit.overflow || (!r.vit.overflow && vs[j].xC != r.vit.xC))
        bad.add(where(what + " vit_states", j, ids[j], r, om) + ": xC " + std::to_string(vs[j].xC) +
                (vs[j].overflow ? " overflow" : "") + ", expected " + std::to_string(r.vit.xC) +
                (r.vit.overflow ? " overflow" : ""));
    }
  }
  std::vector<FilterScore> sc(ids.size());
  e.viterbi(ids, sc);
  {
    Mismatches bad(what + " viterbi");
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const Ref& r = ref[ids[j]];
      if (sc[j].overflow != r.vit_score.overflow || bits(sc[j].score) != bits(r.vit_score.score))
        bad.add(where(what + " viterbi", j, ids[j], r, om) + ": " + show(sc[j]) + ", expected " +
                show(r.vit_score));
    }
  }
}

// Every call of the engine (its current database and model) against the reference: ssv_xe and msv on
// every target, msv_full / vit_states / viterbi on every target in database order.
void check_all(FilterEngine& e, const OProfile& om, const std::vector<Dsq>& seqs, const std::vector<Ref>& ref,
               const std::string& what, Coverage* cov = nullptr) {
  ASSERT_EQ(seqs.size(), ref.size());
  std::vector<int> xe(seqs.size(), -1);
  e.ssv_xe(xe);
  {
    Mismatches bad(what + " ssv_xe");
    for (std::size_t s = 0; s < seqs.size(); ++s)
      if (xe[s] != ref[s].xe)
        bad.add(where(what + " ssv_xe", s, static_cast<uint32_t>(s), ref[s], om) + ": " +
                std::to_string(xe[s]) + ", expected " + std::to_string(ref[s].xe));
  }
  std::vector<FilterScore> msv(seqs.size());
  e.msv(msv);
  {
    Mismatches bad(what + " msv");
    for (std::size_t s = 0; s < seqs.size(); ++s)
      if (msv[s].overflow != ref[s].msv.overflow || bits(msv[s].score) != bits(ref[s].msv.score))
        bad.add(where(what + " msv", s, static_cast<uint32_t>(s), ref[s], om) + ": " + show(msv[s]) +
                ", expected " + show(ref[s].msv));
  }
  const std::vector<uint32_t> ids = all_ids(seqs);
  check_ids(e, om, ref, ids, what);
  if (cov != nullptr)
    for (const Ref& r : ref) cov->add(r, om);
}

// set_database + set_model + check_all (the database stays set afterwards).
void check_model(FilterEngine& e, const OProfile& om, const std::vector<Dsq>& seqs, const std::string& what,
                 Coverage* cov = nullptr) {
  SCOPED_TRACE(what);
  const std::vector<Ref> ref = reference(om, seqs);
  e.set_model(om);
  check_all(e, om, seqs, ref, what, cov);
}

std::string coverage_text(const Coverage& c) {
  return "targets " + std::to_string(c.targets) + ": SSV xE overflow " + std::to_string(c.ssv_overflow) +
         ", SSV ok/range/no result/not applicable " + std::to_string(c.ssv_ok) + "/" +
         std::to_string(c.ssv_range) + "/" + std::to_string(c.ssv_noresult) + "/" +
         std::to_string(c.ssv_not_applicable) + ", MSV overflow " + std::to_string(c.msv_overflow) + " (ok " +
         std::to_string(c.msv_ok) + "), Viterbi overflow " + std::to_string(c.vit_overflow) + " (finite " +
         std::to_string(c.vit_finite) + ", no path " + std::to_string(c.vit_no_path) + ")";
}

// ---- Tests -------------------------------------------------------------------------------------------

// Random profiles at every model length the issue lists and at the boundaries of the GPU engine's launch
// shapes (16-lane, 32-lane and warp-sized stripes; SSV/MSV sub-warp groups up to 2 * 32 * 64 = 4096 nodes,
// then one block per target; Viterbi: register transitions up to M = 256, then shared-transition sub-warp
// groups with Q = 32 (257, 500, 512, 1000, 1024), 48 (1400), 64 (2048), 72 (513, 1025, 2049) or 80 (2405)
// nodes per thread up to 80 * 32 = 2560 nodes, then blocks whose nodes-per-thread tier changes at 4096, 8192,
// ...), 1 .. 10000, four model flavours, against a mixed-length database (lengths 0, 1, 2, 5, short,
// protein-like and long; background targets with 1 % arbitrary residue codes and homologs planted from the
// models themselves). One set_database for M <= 257 (4000 targets: the multi-sequence-per-warp kernels get
// many sequences) and a replacement database of 400 targets for M >= 500; every engine call compared with the
// reference for every target.
TEST(HmmGpu, RandomModelsAllLengths) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(20261122);
  const std::vector<int> small = {1,  2,  3,   15,  16,  17,  31,  32,  33,  63,
                                  64, 65, 100, 127, 128, 129, 200, 255, 256, 257};
  const std::vector<int> large = {500,  511,  512,  513,  1000, 1024, 1025, 1400,
                                  2048, 2049, 2405, 4096, 4097, 8192, 8193, 10000};
  Coverage cov;
  for (const auto* list : {&small, &large}) {
    std::vector<Hmm> hmms;
    for (std::size_t i = 0; i < list->size(); ++i)
      hmms.push_back(random_model(rng, (*list)[i], a, static_cast<int>(i)));
    std::vector<const Hmm*> sources;
    for (const Hmm& h : hmms) sources.push_back(&h);
    const std::vector<Dsq> db = mixed_targets(rng, sources, bg, list == &small ? 4000 : 400, true);
    engine->set_database(views_of(db));
    for (std::size_t i = 0; i < hmms.size(); ++i) {
      // Alternate the configured length of the given profile: the engine must configure each target itself.
      const OProfile om = make_profile(hmms[i], i % 2 == 0 ? 100 : 400);
      check_model(*engine, om, db, "M " + std::to_string(om.M) + " variant " + std::to_string(i % 4), &cov);
      if (HasFailure()) return;
    }
  }
  std::cout << coverage_text(cov) << "\n";
  EXPECT_GT(cov.ssv_ok, 0);
  EXPECT_GT(cov.ssv_noresult, 0);
  EXPECT_GT(cov.msv_overflow, 0);
  EXPECT_GT(cov.vit_overflow, 0);
  EXPECT_GT(cov.vit_finite, 0);
}

// Model lengths far past CUDAMPF's fixed limits (M = 16385, 40000, 65537 and the 100000: block
// kernels with many nodes per thread), against short, medium and homologous targets. tbm_b is so large at
// these lengths that the SSV is not applicable: ssv_xe must still equal the reference, and msv fall back to
// the full MSV.
TEST(HmmGpu, VeryLongModels) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(7);
  Coverage cov;
  int variant = 0;
  for (int M : {16385, 40000, 65537, 100000}) {
    const Hmm h = random_model(rng, M, a, variant++ % 2);
    std::vector<Dsq> db;
    for (int L : {1, 2, 5, 130, 700}) db.push_back(test::random_dsq(rng, L, bg, 0.02));
    db.push_back(test::homolog_dsq(rng, h, bg, 1500, 2, false));
    db.push_back(test::homolog_dsq(rng, h, bg, 900, 1, true));
    engine->set_database(views_of(db));
    check_model(*engine, make_profile(h), db, "M " + std::to_string(M), &cov);
    if (HasFailure()) return;
  }
  std::cout << coverage_text(cov) << "\n";
  EXPECT_GT(cov.ssv_not_applicable, 0);
}

// Targets longer than 100,000 residues (a random one of 120,000 and a 101,000-residue one with 40 planted
// segments), with short ones in the same database, against M = 1, 17, 200 and 2405: long rows, large
// tjb_b (the SSV precondition fails for the larger models), length-balanced blocks with one huge target.
TEST(HmmGpu, LongTargets) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(12);
  std::vector<Hmm> hmms;
  int variant = 0;
  for (int M : {1, 17, 200, 2405}) hmms.push_back(random_model(rng, M, a, variant++));
  std::vector<Dsq> db;
  db.push_back(test::random_dsq(rng, 3, bg));
  db.push_back(test::random_dsq(rng, 120000, bg, 0.005));
  for (int i = 0; i < 40; ++i) db.push_back(test::random_dsq(rng, random_length(rng), bg));
  db.push_back(test::homolog_dsq(rng, hmms[2], bg, 101000, 40, false));
  db.push_back(test::random_dsq(rng, 1, bg));
  engine->set_database(views_of(db));
  Coverage cov;
  for (const Hmm& h : hmms) {
    check_model(*engine, make_profile(h), db, "M " + std::to_string(h.M), &cov);
    if (HasFailure()) return;
  }
  std::cout << coverage_text(cov) << "\n";
}

// Saturation: peaked models and consensus-like targets that drive the SSV byte past 255 - bias_b, the
// MSV's E + bias to 255 and the Viterbi E word to 32767, and the scores just below each threshold: for
// every model, the consensus (most likely residue of each node) cut after p nodes for p stepping through
// 1..M in small steps (the score climbs through every threshold), the consensus repeated 1..4 times (a
// very long consensus-like target against the longer models: Viterbi overflow), background targets with
// many greedy or sampled planted segments, and the prefixes embedded in background flanks. Checks both
// the overflow flags and that every result equals the reference; the coverage counts prove every
// overflow kind and every SSV outcome occurred.
TEST(HmmGpu, Saturation) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(99);
  Coverage cov;
  int variant = 0;
  for (int M : {4, 20, 64, 100, 300, 1000, 2405}) {
    for (double alpha : {0.02, 0.3, 1.0}) {
      test::ModelKnobs kn;
      kn.emit_alpha = alpha;
      kn.trans_alpha = variant++ % 2 == 0 ? 1.0 : 0.3;
      const Hmm h = test::random_hmm(rng, M, a, kn);
      const Dsq full = test::consensus_repeat_dsq(h, 4);  // the consensus, 4 times
      std::vector<Dsq> db;
      const int step = std::max(1, M / 60);
      for (int p = 1; p <= M; p += step) {
        db.emplace_back(full.begin(), full.begin() + p + 1);
        db.back().push_back(kDsqSentinel);
      }
      for (int r = 1; r <= 4; ++r) {
        db.emplace_back(full.begin(), full.begin() + r * M + 1);
        db.back().push_back(kDsqSentinel);
      }
      for (int p = step; p <= M; p += 4 * step) {  // prefix inside background flanks
        Dsq d = test::random_dsq(rng, p + 60, bg);
        std::copy(full.begin() + 1, full.begin() + 1 + p, d.begin() + 31);
        db.push_back(std::move(d));
      }
      for (int nseg : {1, 3, 8}) {
        db.push_back(test::homolog_dsq(rng, h, bg, std::max(50, 3 * M), nseg, true));
        db.push_back(test::homolog_dsq(rng, h, bg, std::max(50, 3 * M), nseg, false));
      }
      engine->set_database(views_of(db));
      check_model(*engine, make_profile(h), db, "M " + std::to_string(M) + " alpha " + std::to_string(alpha),
                  &cov);
      if (HasFailure()) return;
    }
  }
  std::cout << coverage_text(cov) << "\n";
  EXPECT_GT(cov.ssv_overflow, 0);
  EXPECT_GT(cov.ssv_range, 0);
  EXPECT_GT(cov.ssv_ok, 0);
  EXPECT_GT(cov.ssv_noresult, 0);
  EXPECT_GT(cov.msv_overflow, 0);
  EXPECT_GT(cov.msv_ok, 0);
  EXPECT_GT(cov.vit_overflow, 0);
  EXPECT_GT(cov.vit_finite, 0);
}

// Every residue code of the amino alphabet (0..Kp-1: canonical, gap, degenerate B J Z O U X, '*' and
// '~'), each alone as a target of length 1, runs of each code, and random targets drawing half or all of
// their residues from any code, against M = 1, 33, 300 (one of them with zero emission probabilities).
TEST(HmmGpu, DegenerateCodes) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(3);
  std::vector<Dsq> db;
  for (int x = 0; x < a.Kp; ++x) db.push_back(Dsq{kDsqSentinel, static_cast<uint8_t>(x), kDsqSentinel});
  for (int x = 0; x < a.Kp; ++x) {
    Dsq d(42, static_cast<uint8_t>(x));
    d.front() = d.back() = kDsqSentinel;
    db.push_back(std::move(d));
  }
  for (int i = 0; i < 200; ++i)
    db.push_back(test::random_dsq(rng, random_length(rng), bg, i % 2 == 0 ? 0.5 : 1.0));
  engine->set_database(views_of(db));
  int variant = 0;
  for (int M : {1, 33, 300}) {
    const Hmm h = random_model(rng, M, a, variant++ == 1 ? 2 : 0);
    check_model(*engine, make_profile(h), db, "M " + std::to_string(M));
    if (HasFailure()) return;
  }
}

// A nucleotide model (DNA alphabet: K = 4, Kp = 18, so the engine must not assume the amino alphabet's
// table sizes) with M = 50 and 700 against random DNA with any-code residues and planted homologs.
TEST(HmmGpu, NucleotideModels) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kDNA);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(4);
  std::vector<Hmm> hmms;
  hmms.push_back(random_model(rng, 50, a, 0));
  hmms.push_back(random_model(rng, 700, a, 1));
  const std::vector<Dsq> db = mixed_targets(rng, {&hmms[0], &hmms[1]}, bg, 600, true);
  engine->set_database(views_of(db));
  for (const Hmm& h : hmms) {
    check_model(*engine, make_profile(h), db, "DNA M " + std::to_string(h.M));
    if (HasFailure()) return;
  }
}

// Profiles in unihit local mode (ProfileMode::kUniLocal: J unreachable, different N/C/J moves; nj = 0 in
// vit_move_for_length) against the mixed database: M = 64 and 500.
TEST(HmmGpu, UnihitMode) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(5);
  std::vector<Hmm> hmms;
  hmms.push_back(random_model(rng, 64, a, 0));
  hmms.push_back(random_model(rng, 500, a, 1));
  const std::vector<Dsq> db = mixed_targets(rng, {&hmms[0], &hmms[1]}, bg, 800, true);
  engine->set_database(views_of(db));
  for (const Hmm& h : hmms) {
    check_model(*engine, make_profile(h, 100, ProfileMode::kUniLocal), db, "unihit M " + std::to_string(h.M));
    if (HasFailure()) return;
  }
}

// Engine reuse: several set_model calls on one database (a model set twice, results repeated for the same
// model); set_database replacing the database by a smaller and then a larger one (the model set before
// stays in force); the host buffers given to set_database overwritten right after the call (the engine
// keeps its own copy); an empty database (all outputs empty); a second engine on the same device used
// interleaved with the first one.
TEST(HmmGpu, EngineReuse) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(6);
  std::vector<Hmm> hmms;
  int variant = 0;
  for (int M : {40, 300, 1200}) hmms.push_back(random_model(rng, M, a, variant++));
  const std::vector<const Hmm*> sources = {&hmms[0], &hmms[1], &hmms[2]};
  const std::vector<Dsq> db1 = mixed_targets(rng, sources, bg, 1500, true);
  const std::vector<Dsq> db2 = mixed_targets(rng, sources, bg, 90, false);
  const std::vector<Dsq> db3 = mixed_targets(rng, sources, bg, 2500, true);
  std::vector<OProfile> oms;
  for (const Hmm& h : hmms) oms.push_back(make_profile(h));
  // The references, each computed once: db1 x every model, db2 x models 0 and 1, db3 x models 1 and 2.
  std::vector<std::vector<Ref>> ref1;
  for (const OProfile& om : oms) ref1.push_back(reference(om, db1));
  const std::vector<Ref> ref2_0 = reference(oms[0], db2), ref2_1 = reference(oms[1], db2);
  const std::vector<Ref> ref3_1 = reference(oms[1], db3), ref3_2 = reference(oms[2], db3);

  // Several models on one database (model 0 twice), the host copy clobbered after set_database.
  {
    std::vector<Dsq> scratch = db1;
    engine->set_database(views_of(scratch));
    for (Dsq& d : scratch) std::fill(d.begin() + 1, d.end() - 1, uint8_t{0});
    for (const std::size_t i : {0u, 1u, 2u, 0u}) {
      engine->set_model(oms[i]);
      check_all(*engine, oms[i], db1, ref1[i], "db1 model " + std::to_string(i));
      if (HasFailure()) return;
    }
    // Same model again without set_model: the same answers.
    check_all(*engine, oms[0], db1, ref1[0], "db1 model 0 repeated");
    if (HasFailure()) return;
  }
  // set_database replaces: smaller, then larger; the model set before stays.
  engine->set_model(oms[1]);
  engine->set_database(views_of(db2));
  check_all(*engine, oms[1], db2, ref2_1, "db2 (model kept)");
  if (HasFailure()) return;
  engine->set_database(views_of(db3));
  check_all(*engine, oms[1], db3, ref3_1, "db3 (model kept)");
  engine->set_model(oms[2]);
  check_all(*engine, oms[2], db3, ref3_2, "db3 model 2");
  if (HasFailure()) return;

  // An empty database: every call with empty outputs works.
  engine->set_database({});
  engine->set_model(oms[0]);
  std::vector<FilterScore> none;
  std::vector<int> no_xe;
  engine->ssv_xe(no_xe);
  engine->msv(none);
  engine->viterbi({}, none);

  // Two engines on one device, used alternately.
  std::string why;
  std::unique_ptr<FilterEngine> second = engine_under_test(&why);
  ASSERT_TRUE(second) << why;
  engine->set_database(views_of(db1));
  second->set_database(views_of(db2));
  engine->set_model(oms[2]);
  second->set_model(oms[0]);
  check_all(*second, oms[0], db2, ref2_0, "second engine");
  check_all(*engine, oms[2], db1, ref1[2], "first engine, after the second");
  check_all(*second, oms[0], db2, ref2_0, "second engine again");
}

// viterbi, vit_states and msv_full on id lists other than "all in order": a random subset in shuffled
// order, every id in reverse, duplicates (one id many times, and the subset twice), a single id and the
// empty list; out[j] must be the result of target ids[j]. Also the Viterbi statistics: after reset,
// vit_states over the list counts its targets and M * L cells.
TEST(HmmGpu, IdSubsets) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(8);
  std::vector<Hmm> hmms;
  hmms.push_back(random_model(rng, 30, a, 1));
  hmms.push_back(random_model(rng, 700, a, 3));
  const std::vector<Dsq> db = mixed_targets(rng, {&hmms[0], &hmms[1]}, bg, 1200, false);
  engine->set_database(views_of(db));
  for (const Hmm& h : hmms) {
    const OProfile om = make_profile(h);
    const std::vector<Ref> ref = reference(om, db);
    engine->set_model(om);
    const std::string what = "M " + std::to_string(om.M);
    std::vector<uint32_t> all(db.size());
    std::iota(all.begin(), all.end(), 0u);
    std::vector<uint32_t> subset = all;
    std::shuffle(subset.begin(), subset.end(), rng);
    subset.resize(subset.size() / 3);
    std::vector<uint32_t> reversed(all.rbegin(), all.rend());
    std::vector<uint32_t> dups(300, subset.front());
    std::vector<uint32_t> twice = subset;
    twice.insert(twice.end(), subset.begin(), subset.end());
    std::shuffle(twice.begin(), twice.end(), rng);
    check_ids(*engine, om, ref, subset, what + " shuffled subset");
    check_ids(*engine, om, ref, reversed, what + " reversed");
    check_ids(*engine, om, ref, dups, what + " one id 300 times");
    check_ids(*engine, om, ref, twice, what + " subset twice, shuffled");
    check_ids(*engine, om, ref, std::vector<uint32_t>{subset.back()}, what + " single id");
    check_ids(*engine, om, ref, {}, what + " no ids");
    if (HasFailure()) return;

    engine->stats().reset();
    std::vector<VitState> vs(twice.size());
    engine->vit_states(twice, vs);
    uint64_t cells = 0;
    for (const uint32_t s : twice) cells += static_cast<uint64_t>(om.M) * static_cast<uint64_t>(ref[s].L);
    EXPECT_EQ(engine->stats().vit_targets, twice.size());
    EXPECT_EQ(engine->stats().vit_cells, cells);
    EXPECT_GE(engine->stats().vit_seconds, 0.0);
  }
}

// A database larger than the engine's residue budget (make_gpu_filter_engine(dev, budget) with budgets of
// 1 MiB and 160 KiB against 3000 mixed targets, about 0.7 M residues: several chunks uploaded in turn),
// M = 20, 300 and 2049, every call compared with the reference; viterbi / vit_states / msv_full also with
// the ids shuffled (each chunk's targets scattered over the list) and repeated. A second model on the same
// engine re-reads the chunks.
TEST(HmmGpu, ChunkedDatabase) {
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(10);
  std::vector<Hmm> hmms;
  int variant = 0;
  for (int M : {20, 300, 2049}) hmms.push_back(random_model(rng, M, a, variant++));
  const std::vector<Dsq> db = mixed_targets(rng, {&hmms[0], &hmms[1], &hmms[2]}, bg, 3000, true);
  std::vector<uint32_t> ids = all_ids(db);
  std::shuffle(ids.begin(), ids.end(), rng);
  ids.insert(ids.end(), ids.begin(), ids.begin() + 500);
  const std::size_t budgets[] = {std::size_t{1} << 20, std::size_t{160} << 10};
  std::vector<std::unique_ptr<FilterEngine>> engines;
  for (const std::size_t budget : budgets) {
    std::string why;
    engines.push_back(engine_under_test(&why, budget));
    if (!engines.back()) GTEST_SKIP() << "no usable GPU: " << why;
    engines.back()->set_database(views_of(db));
  }
  for (const Hmm& h : hmms) {
    const OProfile om = make_profile(h);
    const std::vector<Ref> ref = reference(om, db);
    for (std::size_t e = 0; e < engines.size(); ++e) {
      const std::string what = "budget " + std::to_string(budgets[e]) + " M " + std::to_string(om.M);
      SCOPED_TRACE(what);
      engines[e]->set_model(om);
      check_all(*engines[e], om, db, ref, what);
      check_ids(*engines[e], om, ref, ids, what + " shuffled ids");
      if (HasFailure()) return;
    }
  }
}

// The contract's size check: msv with an output span whose size is not the number of targets throws
// Error(kInternal) (one too few and one too many).
TEST(HmmGpu, OutputSizeMismatch) {
  REQUIRE_ENGINE(engine);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  std::mt19937_64 rng(9);
  const Hmm h = random_model(rng, 50, a, 0);
  const std::vector<Dsq> db = mixed_targets(rng, {&h}, bg, 20, false);
  engine->set_database(views_of(db));
  engine->set_model(make_profile(h));
  for (const std::size_t n : {db.size() - 1, db.size() + 1}) {
    std::vector<FilterScore> out(n);
    try {
      engine->msv(out);
      ADD_FAILURE() << "msv with " << n << " outputs for " << db.size() << " targets did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInternal) << e.what();
    }
  }
}

// Real data: Pkinase (M = 279), globins4 (149), fn3 (86) and, when present, RRM_1, SMC_N, Patched and
// LuxC of the test data, read with HmmReader and configured as hmmsearch does (local, L = 100), against
// the first 3000 proteins of DB20k plus the 45 globins (globins4 vs globins45 overflows the MSV), read
// with the test FASTA reader (FASTA digitization: real degenerate letters). One set_database, every model.
TEST(HmmGpu, RealModels) {
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  REQUIRE_ENGINE(engine);
  const auto td = warpsearch::test::testdata_dir();
  const Abc& a = abc(AbcType::kAmino);
  std::vector<Dsq> db = test::read_fasta_dsqs((td / "prot/mmseqs_DB20k.fasta").string(), a, 3000);
  ASSERT_EQ(db.size(), 3000u);
  const std::vector<Dsq> globins = test::read_fasta_dsqs((td / "prot/globins45.fa").string(), a, 100);
  ASSERT_EQ(globins.size(), 45u);
  db.insert(db.begin() + 1000, globins.begin(), globins.end());
  engine->set_database(views_of(db));
  Coverage cov;
  for (const char* f :
       {"Pkinase.hmm", "globins4.hmm", "fn3.hmm", "RRM_1.hmm", "SMC_N.hmm", "Patched.hmm", "LuxC.hmm"}) {
    const auto path = td / "hmm" / f;
    if (!std::filesystem::exists(path)) continue;
    HmmReader rd(path.string());
    const auto h = rd.next();
    ASSERT_TRUE(h.has_value()) << f;
    check_model(*engine, make_profile(*h), db, f, &cov);
    if (HasFailure()) return;
  }
  std::cout << coverage_text(cov) << "\n";
  EXPECT_GT(cov.msv_overflow, 0);
  EXPECT_GT(cov.ssv_ok, 0);
}

}  // namespace
}  // namespace warpsearch::hmm
