// test_filter_engine.cpp: the CPU filter engine (filter_engine.hpp), the staged pipeline (pipeline.hpp
// front()/back()) and the filter-engine search path (search_internal.hpp search_with_engines), CPU only:
//   - every engine query equals the per-target definitions (msv_filter / viterbi_filter with the profile
//     configured for the target's length, and the integer-state references with their conversions), on
//     real models and sequences and on random models (multihit and unihit local; M = 1..333; L = 0, 1,
//     long; saturating sequences), with any order of ids and any pool size; contract errors;
//   - front() + back() (each on its own Pipeline) give process()'s counters and hits;
//   - search_with_engines with CPU engines (one or several, --max, --verify, two models in flight) writes
//     the classic search's outputs byte for byte; --verify fails loudly on an engine that is off by one
//     ulp; GPU engines in a build without CUDA are Error(kGpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/bg.hpp"
#include "hmm/filter_engine.hpp"
#include "hmm/fwd_pair.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/pipeline.hpp"
#include "hmm/profile.hpp"
#include "hmm/search_internal.hpp"
#include "hmm/tophits.hpp"
#include "hmm/vitfilter.hpp"
#include "hmm_test_support.hpp"
#include "oprofile_test_util.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/hmmsearch.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::hmm {
namespace {

std::string tdata(const std::string& rel) { return (warpsearch::test::testdata_dir() / rel).string(); }

bool same(FilterScore a, FilterScore b) {
  return a.overflow == b.overflow && std::bit_cast<uint32_t>(a.score) == std::bit_cast<uint32_t>(b.score);
}

std::string show(FilterScore f) {
  std::ostringstream o;
  o << f.score << (f.overflow ? " (overflow)" : "");
  return o.str();
}

int length_of(const Dsq& d) { return static_cast<int>(d.size()) - 2; }

// What the checks below saw (to make sure the inputs reach the interesting cases).
struct Seen {
  int msv_overflow = 0, msv_finite = 0, vit_overflow = 0, vit_finite = 0, full_msv = 0, targets = 0;
};

// Every query of engine e on database `seqs` with model om0 against the per-target definitions. The
// engine gets its database from copies that are destroyed before the queries (the contract lets it keep
// no pointer); the Viterbi-side queries list the targets in a shuffled order.
void expect_engine_equals_definitions(FilterEngine& e, const std::vector<Dsq>& seqs, const OProfile& om0,
                                      std::mt19937_64& rng, Seen* seen) {
  const std::size_t n = seqs.size();
  {
    std::vector<Dsq> copies = seqs;
    std::vector<FilterSeq> fs;
    for (const Dsq& d : copies) fs.push_back(FilterSeq{d.data(), length_of(d)});
    e.set_database(fs);
  }
  e.set_model(om0);
  e.stats().reset();
  std::vector<FilterScore> msv(n);
  std::vector<int> xe(n);
  e.msv(msv);
  e.ssv_xe(xe);
  std::vector<uint32_t> ids(n);
  for (std::size_t s = 0; s < n; ++s) ids[s] = static_cast<uint32_t>(s);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::vector<FilterScore> vit(n);
  std::vector<MsvState> full(n);
  std::vector<VitState> vst(n);
  e.viterbi(ids, vit);
  e.msv_full(ids, full);
  e.vit_states(ids, vst);

  OProfile om = om0;
  uint64_t full_targets = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const int L = length_of(seqs[s]);
    reconfig_length(om, L);
    SCOPED_TRACE("target " + std::to_string(s) + " L=" + std::to_string(L) + " M=" + std::to_string(om.M));
    const uint8_t* d = seqs[s].data();
    // SSV state and the MSV result, and the chain state -> result through the shared conversions.
    ASSERT_EQ(xe[s],
              std::min(ssv_xe_reference(d, L, om), 255 - static_cast<int>(om.bias_b)));  // capped (contract)
    const int tjb = msv_tjb_for_length(om0, L);
    ASSERT_EQ(tjb, om.tjb_b);
    if (L == 0) {
      EXPECT_TRUE(same(msv[s], msv_filter(d, 0, om))) << show(msv[s]);  // the contract: msv_filter's value
      continue;
    }
    const FilterScore want = msv_filter(d, L, om);
    ASSERT_TRUE(same(msv[s], want)) << show(msv[s]) << " vs " << show(want);
    const SsvResult ssv = ssv_applicable(om0, tjb) ? ssv_decide(xe[s], om0, tjb) : SsvResult{};
    if (ssv.status == SsvStatus::kNoResult) {
      ++full_targets;
      ++seen->full_msv;
    }
    (want.overflow ? seen->msv_overflow : seen->msv_finite)++;
    ++seen->targets;
  }
  EXPECT_EQ(e.stats().msv_full_targets, full_targets + n);  // msv()'s fallbacks, then msv_full() on all
  for (std::size_t j = 0; j < n; ++j) {
    const uint32_t s = ids[j];
    const int L = length_of(seqs[s]);
    reconfig_length(om, L);
    SCOPED_TRACE("target " + std::to_string(s) + " L=" + std::to_string(L) + " M=" + std::to_string(om.M));
    const uint8_t* d = seqs[s].data();
    const MsvState fr = msv_full_state_reference(d, L, om);
    ASSERT_EQ(full[j].overflow, fr.overflow);
    if (!fr.overflow) {
      ASSERT_EQ(full[j].xJ, fr.xJ);
    }
    const VitState vr = viterbi_state_reference(d, L, om);
    ASSERT_EQ(vst[j].overflow, vr.overflow);
    if (!vr.overflow) {
      ASSERT_EQ(vst[j].xC, vr.xC);
    }
    const FilterScore want = viterbi_filter(d, L, om);
    ASSERT_TRUE(same(vit[j], want)) << show(vit[j]) << " vs " << show(want);
    if (L == 0) continue;
    ASSERT_EQ(vit_move_for_length(om0, L), om.xw[kOC][kOMove]);
    EXPECT_TRUE(same(vit_score_from_state(vst[j], om0, vit_move_for_length(om0, L)), want));
    const int tjb = msv_tjb_for_length(om0, L);
    EXPECT_TRUE(same(msv_score_from_state(full[j], om0, tjb), msv_filter_full(d, L, om)));
    // The MSV result is the SSV's decision when it has one, else the full MSV's.
    const SsvResult ssv = ssv_applicable(om0, tjb) ? ssv_decide(xe[s], om0, tjb) : SsvResult{};
    const FilterScore via_states = ssv.status == SsvStatus::kOk ? FilterScore{ssv.score, false}
                                   : ssv.status == SsvStatus::kRange
                                       ? FilterScore{ssv.score, true}
                                       : msv_score_from_state(full[j], om0, tjb);
    EXPECT_TRUE(same(via_states, msv[s])) << show(via_states) << " vs " << show(msv[s]);
    (want.overflow ? seen->vit_overflow : seen->vit_finite)++;
  }
  EXPECT_EQ(e.stats().vit_targets, 2 * n);
  uint64_t cells = 0;
  for (const Dsq& d : seqs) cells += static_cast<uint64_t>(om0.M) * static_cast<uint64_t>(length_of(d));
  EXPECT_EQ(e.stats().vit_cells, 2 * cells);
}

// ---------------------------------------------------------------------------------------------------
// The CPU engine
// ---------------------------------------------------------------------------------------------------

TEST(CpuFilterEngine, EqualsTheFiltersOnRealModelsAndSequences) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  const Abc& a = abc(AbcType::kAmino);
  std::vector<Dsq> seqs = test::read_fasta_dsqs(tdata("prot/globins45.fa"), a, 100);
  for (Dsq& d : test::read_fasta_dsqs(tdata("prot/mmseqs_DB20k.fasta"), a, 400)) seqs.push_back(std::move(d));
  ASSERT_EQ(seqs.size(), 445u);
  ThreadPool pool(3);
  std::mt19937_64 rng(5);
  Seen seen;
  for (const char* f : {"hmm/Pkinase.hmm", "hmm/globins4.hmm"}) {
    SCOPED_TRACE(f);
    HmmReader rd(tdata(f));
    const std::optional<Hmm> h = rd.next();
    ASSERT_TRUE(h.has_value());
    const OProfile om = convert_profile(config_profile(*h, make_bg(a), 100, ProfileMode::kLocal));
    const std::unique_ptr<FilterEngine> e = make_cpu_filter_engine(pool);
    expect_engine_equals_definitions(*e, seqs, om, rng, &seen);
    EXPECT_NE(e->describe().find("CPU, 3 threads"), std::string::npos) << e->describe();
  }
  EXPECT_EQ(seen.targets, 2 * 445);
  EXPECT_GT(seen.msv_finite, 0);
  EXPECT_GT(seen.vit_finite, 0);
}

TEST(CpuFilterEngine, EqualsTheFiltersOnRandomModelsAndSequences) {
  std::mt19937_64 rng(20261122);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  ThreadPool pool1(1), pool4(4);
  Seen seen;
  for (const int M : {1, 5, 16, 17, 100, 333}) {
    for (int variant = 0; variant < 3; ++variant) {
      test::ModelKnobs kn;
      kn.emit_alpha = variant == 1 ? 0.05 : 1.0;  // peaked emissions: large scores, saturation
      kn.trans_alpha = variant == 2 ? 0.08 : 1.0;
      const Hmm h = test::random_hmm(rng, M, a, kn);
      // Unihit local for variant 2: the engine takes the mode's nj for the per-length N/C/J moves.
      const ProfileMode mode = variant == 2 ? ProfileMode::kUniLocal : ProfileMode::kLocal;
      const OProfile om = convert_profile(config_profile(h, bg, 400, mode));
      std::vector<Dsq> seqs;
      for (const int L : {0, 1, 2, 7, 60, 333, 1500}) {
        seqs.push_back(test::random_dsq(rng, L, bg, 0.05));
        if (L > 0) seqs.push_back(test::homolog_dsq(rng, h, bg, L, 1 + L / 50, true));
      }
      for (const int r : {1, 4, 12}) seqs.push_back(test::consensus_repeat_dsq(h, r));  // up to saturation
      SCOPED_TRACE("M=" + std::to_string(M) + " variant=" + std::to_string(variant));
      for (ThreadPool* pool : {&pool1, &pool4}) {
        const std::unique_ptr<FilterEngine> e = make_cpu_filter_engine(*pool);
        expect_engine_equals_definitions(*e, seqs, om, rng, &seen);
      }
    }
  }
  EXPECT_GT(seen.msv_overflow, 0);
  EXPECT_GT(seen.msv_finite, 0);
  EXPECT_GT(seen.vit_overflow, 0);
  EXPECT_GT(seen.vit_finite, 0);
  EXPECT_GT(seen.full_msv, 0);
}

TEST(CpuFilterEngine, ContractErrorsAndEmptyDatabase) {
  std::mt19937_64 rng(3);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  const Hmm h = test::random_hmm(rng, 20, a);
  const OProfile om = convert_profile(config_profile(h, bg, 100, ProfileMode::kLocal));
  ThreadPool pool(2);
  const std::unique_ptr<FilterEngine> e = make_cpu_filter_engine(pool);
  const Dsq d = test::random_dsq(rng, 50, bg);
  const FilterSeq one[] = {FilterSeq{d.data(), 50}, FilterSeq{d.data(), 50}};
  e->set_database(one);
  std::vector<FilterScore> out(2);
  auto expect_internal = [](auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), ErrorKind::kInternal) << err.what();
    }
  };
  expect_internal([&] { e->msv(out); });  // no model yet
  e->set_model(om);
  e->msv(out);
  EXPECT_TRUE(same(out[0], out[1]));
  std::vector<FilterScore> three(3);
  expect_internal([&] { e->msv(three); });
  const uint32_t bad[] = {0, 2};
  expect_internal([&] { e->viterbi(bad, out); });
  const uint32_t ok[] = {1};
  expect_internal([&] { e->viterbi(ok, out); });  // out larger than ids
  std::vector<MsvState> states(1);
  e->msv_full(ok, states);
  std::vector<int> xe(1);
  expect_internal([&] { e->ssv_xe(xe); });
  // An empty database: every call on no targets.
  e->set_database({});
  e->msv({});
  e->viterbi({}, {});
  e->ssv_xe({});
}

TEST(GpuFilterEngine, ABuildWithoutCudaRefusesIt) {
  if (gpu_support_compiled()) GTEST_SKIP() << "CUDA build: the GPU engine is tested in tests/hmm_gpu";
  try {
    static_cast<void>(make_gpu_filter_engine(0));
    FAIL() << "no error";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::kGpu);
    EXPECT_NE(err.message().find("without CUDA"), std::string::npos) << err.what();
  }
}

// ---------------------------------------------------------------------------------------------------
// The staged pipeline
// ---------------------------------------------------------------------------------------------------

void expect_same_hits(const TopHits& x, const TopHits& y) {
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Hit& a = x.unsorted(i);
    const Hit& b = y.unsorted(i);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.seqidx, b.seqidx);
    EXPECT_EQ(std::bit_cast<uint32_t>(a.score), std::bit_cast<uint32_t>(b.score));
    EXPECT_EQ(std::bit_cast<uint32_t>(a.pre_score), std::bit_cast<uint32_t>(b.pre_score));
    EXPECT_EQ(std::bit_cast<uint32_t>(a.sum_score), std::bit_cast<uint32_t>(b.sum_score));
    EXPECT_EQ(a.lnP, b.lnP);
    EXPECT_EQ(a.flags, b.flags);
    ASSERT_EQ(a.dcl.size(), b.dcl.size());
    for (std::size_t k = 0; k < a.dcl.size(); ++k) {
      EXPECT_EQ(a.dcl[k].ienv, b.dcl[k].ienv);
      EXPECT_EQ(a.dcl[k].jali, b.dcl[k].jali);
      EXPECT_EQ(std::bit_cast<uint32_t>(a.dcl[k].bitscore), std::bit_cast<uint32_t>(b.dcl[k].bitscore));
      EXPECT_EQ(a.dcl[k].ad.aseq, b.dcl[k].ad.aseq);
    }
  }
}

void expect_same_counts(const PipelineCounts& a, const PipelineCounts& b) {
  EXPECT_EQ(a.nseqs, b.nseqs);
  EXPECT_EQ(a.nres, b.nres);
  EXPECT_EQ(a.n_past_msv, b.n_past_msv);
  EXPECT_EQ(a.n_past_bias, b.n_past_bias);
  EXPECT_EQ(a.n_past_vit, b.n_past_vit);
  EXPECT_EQ(a.n_past_fwd, b.n_past_fwd);
}

TEST(StagedPipeline, FrontAndBackOnOtherPipelinesEqualProcess) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  HmmReader rd(tdata("hmm/globins4.hmm"));
  const std::optional<Hmm> h = rd.next();
  ASSERT_TRUE(h.has_value());
  const Abc& a = *h->abc;
  TargetDb db = read_target_db(tdata("prot/globins45.fa"), a);
  TargetDb more = read_target_db(tdata("prot/mmseqs_DB20k.fasta"), a, 2);
  more.seqs.resize(250);
  for (TargetSeq& t : more.seqs) db.seqs.push_back(std::move(t));
  db.seqs.insert(db.seqs.begin() + 10, TargetSeq{"empty", "", "", Dsq{kDsqSentinel, kDsqSentinel}, 0, 0});
  const Bg bg0 = make_bg(a);
  const OProfile om0 = convert_profile(config_profile(*h, bg0, 100, ProfileMode::kLocal));
  const FlushToZeroScope ftz;
  for (const bool max : {false, true}) {
    for (const bool nobias : {false, true}) {
      if (max && nobias) continue;
      SCOPED_TRACE(std::string(max ? "--max" : "default") + (nobias ? " --nobias" : ""));
      PipelineOptions popts;
      if (max) popts.set_max();
      if (nobias) popts.do_biasfilter = false;
      popts.F1 = max ? popts.F1 : 0.2;  // more targets through the later stages
      ReportOptions ropts;
      // Classic: one pipeline, process() per target.
      OProfile om = om0;
      Bg bg = bg0;
      Pipeline classic(popts, ropts);
      classic.new_model(om, bg);
      TopHits classic_hits;
      for (std::size_t s = 0; s < db.seqs.size(); ++s) {
        const TargetSeq& t = db.seqs[s];
        classic.process(om, bg, t.dsq, t.L, {t.name, t.acc, t.desc, static_cast<int64_t>(s)}, classic_hits);
      }
      // Staged: fronts on one pipeline, backs on two others (alternating), filter scores computed apart.
      Pipeline front(popts, ropts), back0(popts, ropts), back1(popts, ropts);
      Bg bgf = bg0, bgb = bg0;
      OProfile omb = om0;
      front.new_model(om0, bgf);
      back0.new_model(om0, bgb);
      back1.new_model(om0, bgb);
      std::vector<FrontResult> fronts;
      OProfile oml = om0;
      int nviterbi = 0;
      for (std::size_t s = 0; s < db.seqs.size(); ++s) {
        const TargetSeq& t = db.seqs[s];
        reconfig_length(oml, static_cast<int>(t.L));
        const FilterScore msv = t.L == 0 ? FilterScore{} : msv_filter(t.dsq, static_cast<int>(t.L), oml);
        fronts.push_back(front.front(om0, bgf, t.dsq, t.L, static_cast<int64_t>(s), msv));
      }
      TopHits staged_hits;
      for (std::size_t s = 0; s < db.seqs.size(); ++s) {
        const TargetSeq& t = db.seqs[s];
        FilterScore vit;
        if (fronts[s].decision == FrontDecision::kViterbi) {
          reconfig_length(oml, static_cast<int>(t.L));
          vit = viterbi_filter(t.dsq, static_cast<int>(t.L), oml);
          ++nviterbi;
        }
        (s % 2 == 0 ? back0 : back1)
            .back(omb, bgb, t.dsq, t.L, fronts[s], vit, {t.name, t.acc, t.desc, static_cast<int64_t>(s)},
                  staged_hits);
      }
      PipelineCounts counts = front.counts();
      counts.merge(back0.counts());
      counts.merge(back1.counts());
      expect_same_counts(counts, classic.counts());
      expect_same_hits(staged_hits, classic_hits);
      EXPECT_EQ(counts.nseqs, db.seqs.size());
      EXPECT_GT(counts.n_past_fwd, 40u);
      // --max: F2 = 1 passes every MSV survivor straight to Forward.
      EXPECT_EQ(nviterbi > 0, !max) << nviterbi;

      // Split at the Forward filter (as the engine search): back_viterbi on one pipeline, the Forward
      // scores two at a time (forward_parser_scores, in reverse database order), back_forward on another.
      Pipeline split_front(popts, ropts), split_vit(popts, ropts), split_back(popts, ropts);
      Bg bgs = bg0, bgsb = bg0;
      OProfile omsb = om0;
      split_front.new_model(om0, bgs);
      split_vit.new_model(om0, bgs);
      split_back.new_model(om0, bgsb);
      std::vector<std::size_t> to_forward;
      for (std::size_t s = 0; s < db.seqs.size(); ++s) {
        const TargetSeq& t = db.seqs[s];
        reconfig_length(oml, static_cast<int>(t.L));
        const FilterScore msv = t.L == 0 ? FilterScore{} : msv_filter(t.dsq, static_cast<int>(t.L), oml);
        const FrontResult f = split_front.front(om0, bgs, t.dsq, t.L, static_cast<int64_t>(s), msv);
        ASSERT_EQ(f.decision, fronts[s].decision);
        const FilterScore vit = f.decision == FrontDecision::kViterbi
                                    ? viterbi_filter(t.dsq, static_cast<int>(t.L), oml)
                                    : FilterScore{};
        if (split_vit.back_viterbi(om0, f, vit)) to_forward.push_back(s);
      }
      std::vector<FwdPairTarget> targets;  // reverse database order: other pairs than neighbours in order
      for (auto it = to_forward.rbegin(); it != to_forward.rend(); ++it)
        targets.push_back(fwd_pair_target(om0, db.seqs[*it].dsq.data(), static_cast<int>(db.seqs[*it].L)));
      std::vector<float> reversed(targets.size());
      FwdPairScratch ws;
      Omx fallback = make_omx(om0.M, 1, false);
      forward_parser_scores(om0, targets, reversed, ws, fallback);
      const std::vector<float> scores(reversed.rbegin(), reversed.rend());
      TopHits split_hits;
      for (std::size_t k = 0; k < to_forward.size(); ++k) {
        const TargetSeq& t = db.seqs[to_forward[k]];
        split_back.back_forward(omsb, bgsb, t.dsq, t.L, fronts[to_forward[k]], scores[k],
                                {t.name, t.acc, t.desc, static_cast<int64_t>(to_forward[k])}, split_hits);
      }
      PipelineCounts split_counts = split_front.counts();
      split_counts.merge(split_vit.counts());
      split_counts.merge(split_back.counts());
      expect_same_counts(split_counts, classic.counts());
      expect_same_hits(split_hits, classic_hits);
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The search on filter engines
// ---------------------------------------------------------------------------------------------------

struct Captured {
  std::string report, tbl, dom, pfam;
  hmmsearch::Summary summary;
};

hmmsearch::Sinks sinks_into(Captured& c) {
  hmmsearch::Sinks sinks;
  sinks.report = [&c](std::string_view t) { c.report += t; };
  sinks.tblout = [&c](std::string_view t) { c.tbl += t; };
  sinks.domtblout = [&c](std::string_view t) { c.dom += t; };
  sinks.pfamtblout = [&c](std::string_view t) { c.pfam += t; };
  return sinks;
}

Captured classic_search(const std::string& hmm, const std::string& db, const hmmsearch::Options& o) {
  Captured c;
  c.summary = hmmsearch::search(hmm, db, o, sinks_into(c));
  return c;
}

FilterEngineFactory cpu_engines() {
  return [](std::size_t, ThreadPool& pool) { return make_cpu_filter_engine(pool); };
}

Captured engine_search(const std::string& hmm, const std::string& db, const hmmsearch::Options& o,
                       std::size_t engines, const FilterEngineFactory& make = cpu_engines()) {
  Captured c;
  c.summary = search_with_engines(hmm, db, o, sinks_into(c), {}, engines, make);
  return c;
}

// Text without the '#' lines (timing, dates, program names); pfamtblout keeps its '#' section headers,
// so only its date line is left out there.
std::string without_date(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("# Date:", 0) != 0) out += line + '\n';
  return out;
}

void expect_same_outputs(const Captured& got, const Captured& want) {
  using hmmtest::without_comment_lines;
  EXPECT_EQ(without_comment_lines(got.report), without_comment_lines(want.report));
  EXPECT_EQ(without_comment_lines(got.tbl), without_comment_lines(want.tbl));
  EXPECT_EQ(without_comment_lines(got.dom), without_comment_lines(want.dom));
  EXPECT_EQ(without_date(got.pfam), without_date(want.pfam));
  ASSERT_EQ(got.summary.models.size(), want.summary.models.size());
  for (std::size_t m = 0; m < want.summary.models.size(); ++m) {
    const hmmsearch::ModelResult& g = got.summary.models[m];
    const hmmsearch::ModelResult& w = want.summary.models[m];
    EXPECT_EQ(g.nseqs, w.nseqs);
    EXPECT_EQ(g.nres, w.nres);
    EXPECT_EQ(g.n_past_msv, w.n_past_msv);
    EXPECT_EQ(g.n_past_bias, w.n_past_bias);
    EXPECT_EQ(g.n_past_vit, w.n_past_vit);
    EXPECT_EQ(g.n_past_fwd, w.n_past_fwd);
    EXPECT_EQ(g.nreported, w.nreported);
    EXPECT_EQ(g.nincluded, w.nincluded);
    ASSERT_EQ(g.hits.size(), w.hits.size());
    for (std::size_t i = 0; i < w.hits.size(); ++i) {
      EXPECT_EQ(g.hits[i].name, w.hits[i].name);
      EXPECT_EQ(std::bit_cast<uint32_t>(g.hits[i].score), std::bit_cast<uint32_t>(w.hits[i].score));
      EXPECT_EQ(g.hits[i].evalue, w.hits[i].evalue);
    }
  }
}

// globins45 with a slice of DB20k: the first `n` records, and an empty record among them.
std::string mixed_database(const warpsearch::test::TempDir& dir, int n) {
  const std::string all = warpsearch::test::read_file(tdata("prot/mmseqs_DB20k.fasta"));
  std::size_t cut = 0;
  for (int k = 0; k < n; ++k) cut = all.find('>', cut + 1);
  const std::string path = dir / "db.fa";
  warpsearch::test::write_file(
      path, warpsearch::test::read_file(tdata("prot/globins45.fa")) + ">empty record\n" + all.substr(0, cut));
  return path;
}

TEST(EngineSearch, GlobinsEqualTheClassicSearch) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  hmmsearch::Options o;
  o.threads = 2;
  const Captured want = classic_search(tdata("hmm/globins4.hmm"), tdata("prot/globins45.fa"), o);
  ASSERT_EQ(want.summary.models.size(), 1u);
  EXPECT_EQ(want.summary.models[0].nreported, 45u);
  for (const std::size_t engines : {1u, 2u}) {
    SCOPED_TRACE(engines);
    const Captured got = engine_search(tdata("hmm/globins4.hmm"), tdata("prot/globins45.fa"), o, engines);
    expect_same_outputs(got, want);
    ASSERT_EQ(got.summary.filter_engines.size(), engines);
    EXPECT_EQ(got.summary.filter_engines[0], "CPU, 2 threads");
    EXPECT_TRUE(want.summary.filter_engines.empty());
  }
}

TEST(EngineSearch, TwoModelsOnASliceOfDb20kEqualTheClassicSearchWithOneOrSeveralEngines) {
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const warpsearch::test::TempDir dir("filter_engine_search");
  const std::string hmm = dir / "two.hmm";
  warpsearch::test::write_file(hmm, warpsearch::test::read_file(tdata("hmm/fn3.hmm")) +
                                        warpsearch::test::read_file(tdata("hmm/Pkinase.hmm")));
  const std::string db = mixed_database(dir, 1200);
  hmmsearch::Options o;
  o.threads = 2;
  o.F1 = 0.05;  // more targets through the Viterbi filter
  const Captured want = classic_search(hmm, db, o);
  ASSERT_EQ(want.summary.models.size(), 2u);
  EXPECT_GT(want.summary.models[0].n_past_bias, want.summary.models[0].n_past_vit);  // Viterbi stopped some
  EXPECT_GT(want.summary.models[1].nreported, 5u);
  for (const std::size_t engines : {1u, 3u}) {
    SCOPED_TRACE(engines);
    o.verify = engines == 3 ? 40 : 0;  // --verify with the CPU engine: nothing differs
    expect_same_outputs(engine_search(hmm, db, o, engines), want);
  }
}

TEST(EngineSearch, MaxEqualsTheClassicSearch) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const warpsearch::test::TempDir dir("filter_engine_max");
  const std::string db = mixed_database(dir, 250);
  hmmsearch::Options o;
  o.threads = 2;
  o.max = true;
  const Captured want = classic_search(tdata("hmm/globins4.hmm"), db, o);
  EXPECT_EQ(want.summary.models[0].n_past_fwd, 45u + 250u);  // all but the empty record
  expect_same_outputs(engine_search(tdata("hmm/globins4.hmm"), db, o, 2), want);
}

// A CPU engine whose result for one target (local index `target`) is one ulp off, in msv() or in
// viterbi(): what --verify must catch.
class OffByOneUlp final : public FilterEngine {
 public:
  OffByOneUlp(ThreadPool& pool, bool in_msv, uint32_t target)
      : inner_(make_cpu_filter_engine(pool)), in_msv_(in_msv), target_(target) {}
  void set_database(std::span<const FilterSeq> seqs) override { inner_->set_database(seqs); }
  void set_model(const OProfile& om) override { inner_->set_model(om); }
  void msv(std::span<FilterScore> out) override {
    inner_->msv(out);
    if (in_msv_) nudge(out[target_]);
  }
  void viterbi(std::span<const uint32_t> ids, std::span<FilterScore> out) override {
    inner_->viterbi(ids, out);
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (!in_msv_ && ids[k] == target_) nudge(out[k]);
  }
  void ssv_xe(std::span<int> out) override { inner_->ssv_xe(out); }
  void msv_full(std::span<const uint32_t> ids, std::span<MsvState> out) override {
    inner_->msv_full(ids, out);
  }
  void vit_states(std::span<const uint32_t> ids, std::span<VitState> out) override {
    inner_->vit_states(ids, out);
  }
  std::string describe() const override { return "off by one ulp"; }
  FilterEngineStats& stats() override { return inner_->stats(); }

 private:
  static void nudge(FilterScore& f) { f.score = std::nextafter(f.score, std::numeric_limits<float>::max()); }
  std::unique_ptr<FilterEngine> inner_;
  bool in_msv_;
  uint32_t target_;
};

TEST(EngineSearch, VerifyFailsLoudlyOnAnEngineOffByOneUlp) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  hmmsearch::Options o;
  o.threads = 2;
  o.verify = 1000;  // every target of each engine's share
  for (const bool in_msv : {true, false}) {
    SCOPED_TRACE(in_msv ? "MSV" : "Viterbi");
    // Engine 1 of 2 is off on its target 3 (database index: its share's start + 3).
    const FilterEngineFactory make = [in_msv](std::size_t i,
                                              ThreadPool& pool) -> std::unique_ptr<FilterEngine> {
      if (i == 1) return std::make_unique<OffByOneUlp>(pool, in_msv, 3);
      return make_cpu_filter_engine(pool);
    };
    try {
      static_cast<void>(engine_search(tdata("hmm/globins4.hmm"), tdata("prot/globins45.fa"), o, 2, make));
      ADD_FAILURE() << "no error";
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), ErrorKind::kInternal);
      const std::string want = std::string("--verify: the ") + (in_msv ? "MSV" : "Viterbi") +
                               " filter of model globins4 (#1 in the HMM file) on target ";
      EXPECT_NE(err.message().find(want), std::string::npos) << err.what();
      EXPECT_NE(err.message().find("on off by one ulp, but "), std::string::npos) << err.what();
    }
    // Without --verify the difference goes unnoticed by the search itself (nothing else compares).
    o.verify = 0;
    static_cast<void>(engine_search(tdata("hmm/globins4.hmm"), tdata("prot/globins45.fa"), o, 2, make));
    o.verify = 1000;
  }
}

TEST(EngineSearch, GpusInABuildWithoutCudaAreAGpuError) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (gpu_support_compiled()) GTEST_SKIP() << "CUDA build";
  hmmsearch::Options o;
  o.gpus = {0};
  try {
    static_cast<void>(classic_search(tdata("hmm/globins4.hmm"), tdata("prot/globins45.fa"), o));
    FAIL() << "no error";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::kGpu) << err.what();
  }
}

}  // namespace
}  // namespace warpsearch::hmm
