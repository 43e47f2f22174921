// test_hmm_merge.cpp: hmmsearch results split over shards and merged (src/dist/hmm_wire, the rank-0 merge
// of src/hmm/search.cpp) on real data, in one process.
//
// HmmWire: every hit of a real search (globins4 vs globins45: all fields, domains, alignment displays) and
// the pipeline counters survive encode -> decode field for field, floats bit for bit; so does the public
// hmmsearch::ModelResult (what a query-split search sends to rank 0 with a model's output text).
// HmmShardMerge: for 1, 2, 3, 7 and 64 shards (more shards than targets: empty ones), the hits of a
// pipeline run per shard (targets keep their database index), encoded, decoded in rank order, merged,
// sorted and thresholded with the whole database's Z give exactly the one-pipeline result: the same
// ranked hits (every field), counters, and the same main-report block, --tblout and --domtblout text.
// Also with the first 400 sequences of mmseqs_DB20k and the globins planted among them (real test data,
// when fetched) for globins4 and three Pfam models (Pkinase, fn3, 2OG-FeII_Oxy_3).
#include <gtest/gtest.h>

#include <bit>
#include <optional>
#include <string>
#include <vector>

#include "dist/hmm_wire.hpp"
#include "dist/shard.hpp"
#include "hmm/bg.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/output.hpp"
#include "hmm/pipeline.hpp"
#include "hmm/profile.hpp"
#include "hmm/reporting.hpp"
#include "hmm/search_internal.hpp"
#include "hmm/tophits.hpp"
#include "testdata.hpp"
#include "warpsearch/hmmsearch.hpp"

namespace warpsearch::dist {
namespace {

using namespace warpsearch::hmm;  // NOLINT(google-build-using-namespace): test of hmm structures

std::string bundled(const std::string& name) { return (test::source_dir() / "data" / name).string(); }

struct ShardRun {
  TopHits hits;
  PipelineCounts counts;
};

// One pipeline over targets [first, last) of db (as a rank does for its shard); hits unsorted.
ShardRun run_range(const Hmm& hmm, const TargetDb& db, std::size_t first, std::size_t last) {
  const FlushToZeroScope ftz;
  const Bg bg0 = make_bg(*hmm.abc);
  OProfile om = convert_profile(config_profile(hmm, bg0, 100, ProfileMode::kLocal));
  Bg bg = bg0;
  Pipeline pli(PipelineOptions{}, ReportOptions{});
  pli.new_model(om, bg);
  ShardRun r;
  for (std::size_t s = first; s < last; ++s) {
    const TargetSeq& t = db.seqs[s];
    pli.process(om, bg, t.dsq, t.L, {t.name, t.acc, t.desc, static_cast<int64_t>(s)}, r.hits);
  }
  r.counts = pli.counts();
  return r;
}

void finish(ShardRun& r, ReportOptions& report) {
  r.hits.sort_by_sortkey();
  report.Z = static_cast<double>(r.counts.nseqs);
  threshold(r.hits, report);
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }

void expect_same_alidisplay(const AliDisplay& a, const AliDisplay& b) {
  EXPECT_EQ(a.rfline, b.rfline);
  EXPECT_EQ(a.mmline, b.mmline);
  EXPECT_EQ(a.csline, b.csline);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.mline, b.mline);
  EXPECT_EQ(a.aseq, b.aseq);
  EXPECT_EQ(a.ppline, b.ppline);
  EXPECT_EQ(a.N, b.N);
  EXPECT_EQ(a.hmmname, b.hmmname);
  EXPECT_EQ(a.hmmacc, b.hmmacc);
  EXPECT_EQ(a.hmmdesc, b.hmmdesc);
  EXPECT_EQ(a.hmmfrom, b.hmmfrom);
  EXPECT_EQ(a.hmmto, b.hmmto);
  EXPECT_EQ(a.M, b.M);
  EXPECT_EQ(a.sqname, b.sqname);
  EXPECT_EQ(a.sqacc, b.sqacc);
  EXPECT_EQ(a.sqdesc, b.sqdesc);
  EXPECT_EQ(a.sqfrom, b.sqfrom);
  EXPECT_EQ(a.sqto, b.sqto);
  EXPECT_EQ(a.L, b.L);
}

void expect_same_hit(const Hit& a, const Hit& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.acc, b.acc);
  EXPECT_EQ(a.desc, b.desc);
  EXPECT_EQ(bits(a.sortkey), bits(b.sortkey));
  EXPECT_EQ(bits(a.score), bits(b.score));
  EXPECT_EQ(bits(a.pre_score), bits(b.pre_score));
  EXPECT_EQ(bits(a.sum_score), bits(b.sum_score));
  EXPECT_EQ(bits(a.lnP), bits(b.lnP));
  EXPECT_EQ(bits(a.pre_lnP), bits(b.pre_lnP));
  EXPECT_EQ(bits(a.sum_lnP), bits(b.sum_lnP));
  EXPECT_EQ(bits(a.nexpected), bits(b.nexpected));
  EXPECT_EQ(a.nregions, b.nregions);
  EXPECT_EQ(a.nclustered, b.nclustered);
  EXPECT_EQ(a.noverlaps, b.noverlaps);
  EXPECT_EQ(a.nenvelopes, b.nenvelopes);
  EXPECT_EQ(a.ndom, b.ndom);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.nreported, b.nreported);
  EXPECT_EQ(a.nincluded, b.nincluded);
  EXPECT_EQ(a.best_domain, b.best_domain);
  EXPECT_EQ(a.seqidx, b.seqidx);
  ASSERT_EQ(a.dcl.size(), b.dcl.size());
  for (std::size_t d = 0; d < a.dcl.size(); ++d) {
    const Domain& x = a.dcl[d];
    const Domain& y = b.dcl[d];
    EXPECT_EQ(x.ienv, y.ienv);
    EXPECT_EQ(x.jenv, y.jenv);
    EXPECT_EQ(x.iali, y.iali);
    EXPECT_EQ(x.jali, y.jali);
    EXPECT_EQ(bits(x.envsc), bits(y.envsc));
    EXPECT_EQ(bits(x.domcorrection), bits(y.domcorrection));
    EXPECT_EQ(bits(x.dombias), bits(y.dombias));
    EXPECT_EQ(bits(x.oasc), bits(y.oasc));
    EXPECT_EQ(bits(x.bitscore), bits(y.bitscore));
    EXPECT_EQ(bits(x.lnP), bits(y.lnP));
    EXPECT_EQ(x.is_reported, y.is_reported);
    EXPECT_EQ(x.is_included, y.is_included);
    EXPECT_EQ(x.scores_per_pos, y.scores_per_pos);
    expect_same_alidisplay(x.ad, y.ad);
  }
}

void expect_same_counts(const PipelineCounts& a, const PipelineCounts& b) {
  EXPECT_EQ(a.nmodels, b.nmodels);
  EXPECT_EQ(a.nseqs, b.nseqs);
  EXPECT_EQ(a.nres, b.nres);
  EXPECT_EQ(a.nnodes, b.nnodes);
  EXPECT_EQ(a.n_past_msv, b.n_past_msv);
  EXPECT_EQ(a.n_past_bias, b.n_past_bias);
  EXPECT_EQ(a.n_past_vit, b.n_past_vit);
  EXPECT_EQ(a.n_past_fwd, b.n_past_fwd);
  EXPECT_EQ(a.n_output, b.n_output);
  EXPECT_EQ(a.pos_past_msv, b.pos_past_msv);
  EXPECT_EQ(a.pos_past_bias, b.pos_past_bias);
  EXPECT_EQ(a.pos_past_vit, b.pos_past_vit);
  EXPECT_EQ(a.pos_past_fwd, b.pos_past_fwd);
  EXPECT_EQ(a.pos_output, b.pos_output);
  EXPECT_EQ(bits(a.F1), bits(b.F1));
  EXPECT_EQ(bits(a.F2), bits(b.F2));
  EXPECT_EQ(bits(a.F3), bits(b.F3));
}

std::vector<Hmm> read_models(const std::string& path) {
  HmmReader reader(path);
  std::vector<Hmm> models;
  while (std::optional<Hmm> h = reader.next()) models.push_back(std::move(*h));
  return models;
}

TEST(HmmWire, RealHitsAndCountersRoundTrip) {
  const std::vector<Hmm> models = read_models(bundled("globins4.hmm"));
  ASSERT_FALSE(models.empty());
  const TargetDb db = read_target_db(bundled("globins45.fa"), *models[0].abc);
  ShardRun r = run_range(models[0], db, 0, db.seqs.size());
  ReportOptions report;
  finish(r, report);  // flags and domain reported/included bits set: they must travel too
  ASSERT_GT(r.hits.size(), 40u);
  const Bytes msg = encode_model_part(r.hits, r.counts);
  TopHits back;
  const PipelineCounts counts = decode_model_part(msg, back);
  ASSERT_EQ(back.size(), r.hits.size());
  for (std::size_t i = 0; i < back.size(); ++i) expect_same_hit(back.unsorted(i), r.hits.unsorted(i));
  expect_same_counts(counts, r.counts);
  // A truncated message is a protocol error, not a crash.
  TopHits none;
  EXPECT_THROW(decode_model_part(std::span<const std::uint8_t>(msg.data(), msg.size() / 2), none), Error);
}

TEST(HmmWire, PublicModelResultRoundTrips) {
  // hmmsearch::search's own results (the Summary a query-split search assembles on rank 0).
  hmmsearch::Options options;
  options.threads = 1;
  const hmmsearch::Summary summary =
      hmmsearch::search(bundled("globins4.hmm"), bundled("globins45.fa"), options, hmmsearch::Sinks{});
  ASSERT_EQ(summary.models.size(), 1u);
  const hmmsearch::ModelResult& m = summary.models[0];
  ASSERT_GT(m.hits.size(), 40u);
  ByteWriter w;
  write_model_result(w, m);
  const Bytes msg = w.take();
  ByteReader r(msg);
  const hmmsearch::ModelResult back = read_model_result(r);
  EXPECT_TRUE(r.done());
  EXPECT_EQ(back.name, m.name);
  EXPECT_EQ(back.acc, m.acc);
  EXPECT_EQ(back.desc, m.desc);
  EXPECT_EQ(back.M, m.M);
  EXPECT_EQ(back.nseqs, m.nseqs);
  EXPECT_EQ(back.nres, m.nres);
  EXPECT_EQ(back.n_past_msv, m.n_past_msv);
  EXPECT_EQ(back.n_past_bias, m.n_past_bias);
  EXPECT_EQ(back.n_past_vit, m.n_past_vit);
  EXPECT_EQ(back.n_past_fwd, m.n_past_fwd);
  EXPECT_EQ(bits(back.Z), bits(m.Z));
  EXPECT_EQ(bits(back.domZ), bits(m.domZ));
  EXPECT_EQ(back.nreported, m.nreported);
  EXPECT_EQ(back.nincluded, m.nincluded);
  ASSERT_EQ(back.hits.size(), m.hits.size());
  for (std::size_t i = 0; i < m.hits.size(); ++i) {
    const hmmsearch::TargetHit& a = back.hits[i];
    const hmmsearch::TargetHit& b = m.hits[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.acc, b.acc);
    EXPECT_EQ(a.desc, b.desc);
    EXPECT_EQ(a.seqidx, b.seqidx);
    EXPECT_EQ(bits(a.score), bits(b.score));
    EXPECT_EQ(bits(a.bias), bits(b.bias));
    EXPECT_EQ(bits(a.evalue), bits(b.evalue));
    EXPECT_EQ(a.reported, b.reported);
    EXPECT_EQ(a.included, b.included);
    ASSERT_EQ(a.domains.size(), b.domains.size());
    for (std::size_t d = 0; d < a.domains.size(); ++d) {
      const hmmsearch::DomainHit& x = a.domains[d];
      const hmmsearch::DomainHit& y = b.domains[d];
      EXPECT_EQ(x.ienv, y.ienv);
      EXPECT_EQ(x.jenv, y.jenv);
      EXPECT_EQ(x.iali, y.iali);
      EXPECT_EQ(x.jali, y.jali);
      EXPECT_EQ(x.hmmfrom, y.hmmfrom);
      EXPECT_EQ(x.hmmto, y.hmmto);
      EXPECT_EQ(bits(x.score), bits(y.score));
      EXPECT_EQ(bits(x.bias), bits(y.bias));
      EXPECT_EQ(bits(x.c_evalue), bits(y.c_evalue));
      EXPECT_EQ(bits(x.i_evalue), bits(y.i_evalue));
      EXPECT_EQ(x.reported, y.reported);
      EXPECT_EQ(x.included, y.included);
    }
  }
}

void check_merge(const Hmm& hmm, const TargetDb& db) {
  ShardRun single = run_range(hmm, db, 0, db.seqs.size());
  ReportOptions single_report;
  finish(single, single_report);
  const QueryInfo q{hmm.name, "", "", hmm.M};
  std::string single_text, single_tbl, single_dom;
  write_query_results(single_text, single.hits, single_report, single.counts, nullptr);
  write_tabular_targets(single_tbl, q, single.hits, single_report, true);
  write_tabular_domains(single_dom, q, single.hits, single_report, true);

  std::vector<std::uint64_t> lengths;
  for (const TargetSeq& t : db.seqs) lengths.push_back(static_cast<std::uint64_t>(t.L));
  for (const int parts : {1, 2, 3, 7, 64}) {
    SCOPED_TRACE(::testing::Message() << hmm.name << ", " << parts << " shards");
    const std::vector<std::uint64_t> bounds = shard_bounds(lengths, parts);
    ShardRun merged;
    for (int p = 0; p < parts; ++p) {
      const ShardRun part = run_range(hmm, db, bounds[p], bounds[p + 1]);
      const Bytes msg = encode_model_part(part.hits, part.counts);
      const PipelineCounts c = decode_model_part(msg, merged.hits);
      if (p == 0)
        merged.counts = c;
      else
        merged.counts.merge(c);
    }
    ReportOptions report;
    finish(merged, report);
    EXPECT_EQ(bits(report.Z), bits(single_report.Z));
    EXPECT_EQ(bits(report.domZ), bits(single_report.domZ));
    expect_same_counts(merged.counts, single.counts);
    ASSERT_EQ(merged.hits.size(), single.hits.size());
    EXPECT_EQ(merged.hits.nreported, single.hits.nreported);
    EXPECT_EQ(merged.hits.nincluded, single.hits.nincluded);
    for (std::size_t i = 0; i < merged.hits.size(); ++i)
      expect_same_hit(merged.hits.hit(i), single.hits.hit(i));
    std::string text, tbl, dom;
    write_query_results(text, merged.hits, report, merged.counts, nullptr);
    write_tabular_targets(tbl, q, merged.hits, report, true);
    write_tabular_domains(dom, q, merged.hits, report, true);
    EXPECT_EQ(text, single_text);
    EXPECT_EQ(tbl, single_tbl);
    EXPECT_EQ(dom, single_dom);
  }
}

TEST(HmmShardMerge, GlobinsSplitAnyWayGiveTheOneProcessResult) {
  const std::vector<Hmm> models = read_models(bundled("globins4.hmm"));
  const TargetDb db = read_target_db(bundled("globins45.fa"), *models[0].abc);
  check_merge(models[0], db);
}

TEST(HmmShardMerge, RealProteinsSplitAnyWayGiveTheOneProcessResult) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  const std::vector<Hmm> models = read_models(bundled("globins4.hmm"));
  TargetDb db = read_target_db((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), *models[0].abc);
  db.seqs.resize(400);
  // Plant the globins in the middle so that every model has real hits in several shards.
  const TargetDb globins = read_target_db(bundled("globins45.fa"), *models[0].abc);
  for (std::size_t i = 0; i < globins.seqs.size(); ++i)
    db.seqs.insert(db.seqs.begin() + static_cast<std::ptrdiff_t>(i * 9), globins.seqs[i]);
  std::vector<Hmm> all = models;
  for (const char* name : {"Pkinase", "fn3", "2OG-FeII_Oxy_3"}) {
    const std::string path = (test::testdata_dir() / "hmm" / (std::string(name) + ".hmm")).string();
    for (Hmm& h : read_models(path)) all.push_back(std::move(h));
  }
  for (const Hmm& hmm : all) check_merge(hmm, db);
}

}  // namespace
}  // namespace warpsearch::dist
