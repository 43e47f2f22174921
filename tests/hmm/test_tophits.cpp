// Tests of the hit list (tophits.hpp) and thresholding (reporting.hpp): HMMER's ranking comparator and its
// tie rules, merge == sort of the union, p7_tophits_Threshold's flagging/counting/domZ and bug-h74
// workaround, model bit cutoffs, and p7_alidisplay_Create on hand-built traces.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm/reporting.hpp"
#include "hmm/tophits.hpp"
#include "hmm/trace.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

Hit make_hit(std::string name, double sortkey, int64_t iali, int64_t jali, int64_t seqidx) {
  Hit h;
  h.name = std::move(name);
  h.sortkey = sortkey;
  h.seqidx = seqidx;
  Domain d;
  d.iali = iali;
  d.jali = jali;
  h.dcl.push_back(d);
  h.ndom = 1;
  h.best_domain = 0;
  return h;
}

std::vector<std::string> ranked_names(const TopHits& th) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i < th.size(); i++)
    v.push_back(th.hit(i).name + "/" + std::to_string(th.hit(i).seqidx));
  return v;
}

TEST(TopHits, SortsBySortkeyThenNameStrandPositionSeqidx) {
  TopHits th;
  th.add(make_hit("b", 5.0, 10, 20, 0));
  th.add(make_hit("a", 5.0, 10, 20, 1));
  th.add(make_hit("z", 9.0, 1, 2, 2));
  th.add(make_hit("a", 5.0, 5, 3, 3));    // reverse strand: after forward-strand "a"
  th.add(make_hit("a", 5.0, 4, 30, 4));   // forward, smaller iali: before iali 10
  th.add(make_hit("a", 5.0, 10, 20, 5));  // full HMMER tie with seqidx 1: database order
  th.add(make_hit("c", -1.0, 1, 2, 6));
  th.sort_by_sortkey();
  EXPECT_EQ(ranked_names(th), (std::vector<std::string>{"z/2", "a/4", "a/1", "a/5", "a/3", "b/0", "c/6"}));
  EXPECT_EQ(th.unsorted(0).name, "b");  // insertion order kept
}

TEST(TopHits, NamesCompareAsUnsignedBytes) {
  Hit a = make_hit(std::string("x\xe9"), 1.0, 1, 2, 0);
  Hit b = make_hit("xz", 1.0, 1, 2, 1);
  EXPECT_GT(compare_hits(a, b), 0);  // 0xe9 > 'z' as unsigned char, as strcmp
  EXPECT_LT(compare_hits(b, a), 0);
  EXPECT_EQ(compare_hits(a, a), 0);
}

TEST(TopHits, MergeEqualsSortOfUnion) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> key(0, 5), nm(0, 3), pos(1, 6);
  for (int rep = 0; rep < 50; rep++) {
    TopHits all, part1, part2;
    int n = 1 + rep % 17;
    for (int i = 0; i < n; i++) {
      Hit h = make_hit(std::string(1, static_cast<char>('a' + nm(rng))), key(rng), pos(rng), pos(rng), i);
      all.add(h);
      ((i % 3 == 0) ? part2 : part1).add(h);
    }
    all.sort_by_sortkey();
    part1.sort_by_sortkey();
    part1.merge(std::move(part2));
    ASSERT_TRUE(part1.is_sorted());
    EXPECT_EQ(ranked_names(part1), ranked_names(all));
    EXPECT_EQ(part2.size(), 0u);
  }
}

TEST(TopHits, NameLengths) {
  TopHits th;
  EXPECT_EQ(th.max_name_length(), 0);
  Hit a = make_hit("longername", 1, 1, 2, 0);
  Hit b = make_hit("nm", 1, 1, 2, 1);
  b.acc = "ACCESSION12345";
  th.add(a);
  th.add(b);
  EXPECT_EQ(th.max_name_length(), 10);
  EXPECT_EQ(th.max_shown_length(), 14);
}

// Hit with given score/lnP and domains (bitscore, lnP).
Hit scored_hit(std::string name, float score, double lnP, std::vector<std::pair<float, double>> doms,
               int64_t idx) {
  Hit h;
  h.name = std::move(name);
  h.score = score;
  h.lnP = lnP;
  h.sortkey = -lnP;
  h.seqidx = idx;
  int64_t x = 1;
  for (auto [bs, lp] : doms) {
    Domain d;
    d.bitscore = bs;
    d.lnP = lp;
    d.iali = x;
    d.jali = x + 10;
    x += 20;
    h.dcl.push_back(d);
  }
  h.ndom = static_cast<int>(h.dcl.size());
  h.best_domain = 0;
  return h;
}

TEST(Threshold, FlagsCountsAndDomZ) {
  TopHits th;
  // Z = 100: E = exp(lnP) * 100.
  th.add(scored_hit("inc", 50, std::log(1e-6), {{40, std::log(1e-7)}, {1, std::log(0.5)}, {3, std::log(0.2)}},
                    0));
  th.add(scored_hit("rep", 10, std::log(1e-3), {{9, std::log(1e-3)}}, 1));  // E = 0.1: reported, not included
  th.add(scored_hit("out", 2, std::log(0.5), {{2, std::log(0.5)}}, 2));     // E = 50: not reported
  ReportOptions opts;
  opts.Z = 100;
  threshold(th, opts);
  ASSERT_EQ(th.hit(0).name, "inc");
  EXPECT_EQ(th.nreported, 2u);
  EXPECT_EQ(th.nincluded, 1u);
  EXPECT_EQ(opts.domZ, 2.0);  // number of reported targets
  const Hit& inc = th.hit(0);
  EXPECT_EQ(inc.flags, kIsReported | kIsIncluded);
  // Domain E-values use domZ = 2: 2e-7 (incl), 1.0 (reported, not incl), 0.4 (reported, not incl).
  EXPECT_TRUE(inc.dcl[0].is_reported && inc.dcl[0].is_included);
  EXPECT_TRUE(inc.dcl[1].is_reported && !inc.dcl[1].is_included);
  EXPECT_TRUE(inc.dcl[2].is_reported && !inc.dcl[2].is_included);
  EXPECT_EQ(inc.nreported, 3);
  EXPECT_EQ(inc.nincluded, 1);
  const Hit& rep = th.hit(1);
  EXPECT_EQ(rep.flags, kIsReported);
  EXPECT_TRUE(rep.dcl[0].is_reported);
  EXPECT_FALSE(rep.dcl[0].is_included);  // target not included: its domains never are
  EXPECT_EQ(th.hit(2).flags, 0u);
  EXPECT_FALSE(th.hit(2).dcl[0].is_reported);  // target not reported: domains not examined
}

TEST(Threshold, ScoreThresholdsAndDomZOption) {
  TopHits th;
  th.add(scored_hit("a", 30, std::log(1e-9), {{25, std::log(1e-9)}, {5, std::log(1e-2)}}, 0));
  th.add(scored_hit("b", 20, std::log(1e-5), {{20, std::log(1e-5)}}, 1));
  ReportOptions opts;
  opts.Z = 1000;
  opts.set_T(20.0);  // >= is reportable
  opts.set_domT(5.0);
  opts.set_incT(25.0);
  opts.set_incdomT(25.0);
  opts.set_domZ(7.0);
  threshold(th, opts);
  EXPECT_EQ(opts.domZ, 7.0);
  EXPECT_EQ(th.nreported, 2u);
  EXPECT_EQ(th.nincluded, 1u);
  EXPECT_EQ(th.hit(0).nreported, 2);
  EXPECT_EQ(th.hit(0).nincluded, 1);
  EXPECT_EQ(th.hit(1).nincluded, 0);
}

TEST(Threshold, BitCutoffsOnlyCount) {
  TopHits th;
  Hit h = scored_hit("a", 30, std::log(1e-9), {{25, std::log(1e-9)}, {5, std::log(1e-2)}}, 0);
  h.flags = kIsReported;  // as the pipeline would set them
  h.dcl[1].is_reported = true;
  th.add(h);
  th.add(scored_hit("b", 29, std::log(1e-8), {{25, std::log(1e-9)}}, 1));
  ReportOptions opts;
  opts.set_bit_cutoffs(BitCutoffs::kGA);
  EXPECT_FALSE(opts.by_E || opts.dom_by_E || opts.inc_by_E || opts.incdom_by_E);
  opts.Z = 2;
  threshold(th, opts);
  EXPECT_EQ(th.nreported, 1u);
  EXPECT_EQ(th.nincluded, 0u);
  EXPECT_EQ(opts.domZ, 1.0);
  EXPECT_EQ(th.hit(0).nreported, 1);
  EXPECT_FALSE(th.hit(0).dcl[0].is_reported);
  EXPECT_EQ(th.hit(1).flags, 0u);
}

TEST(Threshold, DuplicateAlignmentWorkaround) {
  TopHits th;
  Hit h = scored_hit("a", 30, std::log(1e-9),
                     {{25, std::log(1e-9)}, {26, std::log(1e-10)}, {3, std::log(0.1)}}, 0);
  h.dcl[1].iali = h.dcl[0].iali;
  h.dcl[1].jali = h.dcl[0].jali;
  h.noverlaps = 1;
  th.add(h);
  Hit g = h;  // same duplicate but noverlaps == 0: left alone
  g.name = "b";
  g.noverlaps = 0;
  th.add(g);
  ReportOptions opts;
  opts.Z = 1;
  threshold(th, opts);
  const Hit& a = th.hit(0);
  ASSERT_EQ(a.name, "a");
  EXPECT_FALSE(a.dcl[0].is_reported);  // weaker of the identical pair dropped
  EXPECT_FALSE(a.dcl[0].is_included);
  EXPECT_TRUE(a.dcl[1].is_reported && a.dcl[1].is_included);
  EXPECT_EQ(a.nreported, 2);
  EXPECT_EQ(a.nincluded, 1);  // domain 2 (E = 0.1 * domZ 2) reported but not included
  EXPECT_EQ(th.hit(1).nreported, 3);
}

TEST(Threshold, DuplicateHitsAreNotReported) {
  TopHits th;
  Hit h = scored_hit("a", 30, std::log(1e-9), {{25, std::log(1e-9)}}, 0);
  h.flags = kIsDuplicate;
  th.add(h);
  ReportOptions opts;
  opts.Z = 1;
  threshold(th, opts);
  EXPECT_EQ(th.nreported, 0u);
  EXPECT_EQ(opts.domZ, 0.0);
}

TEST(Reporting, Predicates) {
  ReportOptions o;
  o.Z = 10;
  o.domZ = 2;
  EXPECT_TRUE(target_reportable(o, 0, std::log(1.0)));  // E = 10 <= 10
  EXPECT_FALSE(target_reportable(o, 0, std::log(1.01)));
  EXPECT_TRUE(target_includable(o, 0, std::log(0.99e-3)));  // 0.0099 <= 0.01
  EXPECT_FALSE(target_includable(o, 0, std::log(1.01e-3)));
  EXPECT_TRUE(domain_reportable(o, 0, std::log(5.0)));     // 10
  EXPECT_TRUE(domain_includable(o, 0, std::log(0.0049)));  // 0.0098
  EXPECT_FALSE(domain_includable(o, 0, std::log(0.0051)));
  o.set_T(3.5f);
  EXPECT_TRUE(target_reportable(o, 3.5f, 100.0));
  EXPECT_FALSE(target_reportable(o, 3.4f, -100.0));
}

TEST(Reporting, ModelCutoffs) {
  std::array<float, kNCutoffs> cut{};
  cut.fill(kUnset);
  cut[kTC1] = 27.5f;
  cut[kTC2] = 20.25f;
  ReportOptions o;
  new_model_thresholds(o, cut, "m");  // no cutoffs in use: unchanged
  EXPECT_TRUE(o.by_E);
  o.set_bit_cutoffs(BitCutoffs::kTC);
  new_model_thresholds(o, cut, "m");
  EXPECT_EQ(o.T, 27.5);
  EXPECT_EQ(o.incT, 27.5);
  EXPECT_EQ(o.domT, 20.25);
  EXPECT_EQ(o.incdomT, 20.25);
  ReportOptions g;
  g.set_bit_cutoffs(BitCutoffs::kGA);
  try {
    new_model_thresholds(g, cut, "mymodel");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GA bit thresholds unavailable on model mymodel"),
              std::string::npos);
  }
}

TEST(Reporting, CountsMerge) {
  PipelineCounts a, b;
  a.nmodels = 1, a.nnodes = 50, a.nseqs = 3, a.nres = 300, a.n_past_msv = 2, a.n_past_fwd = 1;
  b.nmodels = 1, b.nnodes = 50, b.nseqs = 4, b.nres = 100, b.n_past_msv = 1, b.n_past_vit = 1;
  a.merge(b);
  EXPECT_EQ(a.nmodels, 1u);
  EXPECT_EQ(a.nnodes, 50u);
  EXPECT_EQ(a.nseqs, 7u);
  EXPECT_EQ(a.nres, 400u);
  EXPECT_EQ(a.n_past_msv, 3u);
  EXPECT_EQ(a.n_past_vit, 1u);
  EXPECT_EQ(a.n_past_fwd, 1u);
}

// Trace S N N B M1 M2 I2 M3 D4 M5 E C T over the 6-residue sequence "ACDEFG" (residue 1 in N, 2..6
// aligned), with posteriors.
Trace small_trace() {
  Trace tr(true);
  tr.M = 5;
  tr.L = 6;
  tr.append_with_pp(kTS, 0, 0, 0.0f);
  tr.append_with_pp(kTN, 0, 0, 0.0f);
  tr.append_with_pp(kTN, 0, 1, 0.5f);
  tr.append_with_pp(kTB, 0, 0, 0.0f);
  tr.append_with_pp(kTM, 1, 2, 0.96f);
  tr.append_with_pp(kTM, 2, 3, 0.949f);
  tr.append_with_pp(kTI, 2, 4, 0.04f);
  tr.append_with_pp(kTM, 3, 5, 0.5f);
  tr.append_with_pp(kTD, 4, 0, 0.0f);
  tr.append_with_pp(kTM, 5, 6, 0.05f);
  tr.append_with_pp(kTE, 0, 0, 0.0f);
  tr.append_with_pp(kTC, 0, 0, 0.0f);
  tr.append_with_pp(kTT, 0, 0, 0.0f);
  return tr;
}

TEST(AliDisplay, FromTrace) {
  const Abc& a = abc(AbcType::kAmino);
  const Dsq dsq = digitize("ACDEFG", a);
  AliModel m;
  m.name = "mod";
  m.acc = "PF1";
  m.M = 5;
  m.consensus = " cvEwF";  // [1..5]; 'c' lower case still matches C
  m.cs = " HHEE-";
  m.abc = &a;
  // Positive odds only for (k=2, D) and (k=5, G).
  m.match_odds = [&a](int k, int x) {
    return ((k == 2 && x == a.inmap['D']) || (k == 5 && x == a.inmap['G'])) ? 1.5f : 0.5f;
  };
  for (bool indexed : {false, true}) {
    Trace tr = small_trace();
    if (indexed) tr.index();
    AliDisplay ad = make_alidisplay(tr, 0, m, "seq", "", "desc", dsq, 6);
    EXPECT_EQ(ad.N, 6);
    EXPECT_EQ(ad.model, "cv.EwF");
    EXPECT_EQ(ad.aseq, "CDeF-G");
    // Identity shows the consensus letter (case-insensitive match), '+' where the odds ratio exceeds 1.
    EXPECT_EQ(ad.mline, "c+   +");
    // 0.96 -> '*'; 0.949 -> '9' (0.999 < 1); insert 0.04 -> '0'; 0.5 -> '5'; delete '.'; 0.05f -> '1'.
    EXPECT_EQ(ad.ppline, "*905.1");
    EXPECT_EQ(ad.csline, "HH.EE-");
    EXPECT_TRUE(ad.rfline.empty());
    EXPECT_TRUE(ad.mmline.empty());
    EXPECT_EQ(ad.hmmfrom, 1);
    EXPECT_EQ(ad.hmmto, 5);
    EXPECT_EQ(ad.sqfrom, 2);
    EXPECT_EQ(ad.sqto, 6);
    EXPECT_EQ(ad.L, 6);
    EXPECT_EQ(ad.M, 5);
    EXPECT_EQ(ad.hmmname, "mod");
    EXPECT_EQ(ad.hmmacc, "PF1");
    EXPECT_EQ(ad.sqdesc, "desc");
  }
}

// Residues of a UniProt text entry (the lines between "SQ" and "//").
std::string uniprot_sequence(const std::string& path) {
  std::ifstream in(path);
  std::string line, seq;
  bool in_sq = false;
  while (std::getline(in, line)) {
    if (line.rfind("SQ", 0) == 0) {
      in_sq = true;
      continue;
    }
    if (line.rfind("//", 0) == 0) break;
    if (in_sq)
      for (char c : line)
        if (c >= 'A' && c <= 'Z') seq += c;
  }
  return seq;
}

// One alignment block of a --notextw hmmsearch output, as printed.
struct PrintedAli {
  std::string cs, model, mline, aseq, pp;
  int k1 = 0, k2 = 0;
  long i1 = 0, i2 = 0;
};

std::vector<PrintedAli> printed_alignments(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> L;
  for (std::string line; std::getline(in, line);) L.push_back(line);
  std::vector<PrintedAli> out;
  for (std::size_t z = 0; z + 4 < L.size(); z++) {
    if (L[z].rfind("  == domain ", 0) != 0) continue;
    PrintedAli a;
    std::size_t m = z + 1;
    std::string cs_line;
    if (L[m].size() > 3 && L[m].compare(L[m].size() - 3, 3, " CS") == 0) cs_line = L[m++];
    std::istringstream ms(L[m]);
    std::string name;
    ms >> name >> a.k1 >> a.model >> a.k2;
    const std::size_t col = L[m].find(" " + a.model + " ") + 1;
    const std::size_t n = a.model.size();
    std::istringstream ss(L[m + 2]);
    ss >> name >> a.i1 >> a.aseq >> a.i2;
    a.mline = L[m + 1].substr(col, n);
    if (!cs_line.empty()) a.cs = cs_line.substr(col, n);
    a.pp = L[m + 3].substr(col, n);
    out.push_back(a);
  }
  return out;
}

// Rebuilds a trace from a printed alignment (M / D / I columns; posteriors decoded from the PP codes)
// and checks that make_alidisplay on the real fn3 profile prints what hmmsearch printed: consensus
// letters, identities and '+' marks from the striped odds ratios, case of inserts, CS and PP lines.
TEST(AliDisplay, ReproducesHmmsearchFn3Alignments) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/7LESS_DROME");
  const std::string hmm_path = (warpsearch::test::testdata_dir() / "hmm/fn3.hmm").string();
  const std::string seq_path = (warpsearch::test::testdata_dir() / "prot/7LESS_DROME").string();
  std::vector<Hmm> hmms = read_all_hmms(hmm_path);
  ASSERT_EQ(hmms.size(), 1u);
  const Abc& a = *hmms[0].abc;
  Bg bg = make_bg(a);
  Profile gm = config_profile(hmms[0], bg, 100);
  OProfile om = convert_profile(gm);
  const std::string text = uniprot_sequence(seq_path);
  ASSERT_EQ(text.size(), 2554u);
  const Dsq dsq = digitize(text, a);
  const auto alis =
      printed_alignments((warpsearch::test::source_dir() / "tests/golden/hmm/fn3_nw.out").string());
  ASSERT_EQ(alis.size(), 9u);
  for (const PrintedAli& p : alis) {
    Trace tr(true);
    tr.M = om.M;
    tr.L = static_cast<int>(text.size());
    tr.append_with_pp(kTS, 0, 0, 0.0f);
    tr.append_with_pp(kTN, 0, 0, 0.0f);
    tr.append_with_pp(kTB, 0, 0, 0.0f);
    int k = p.k1 - 1;
    int i = static_cast<int>(p.i1);
    for (std::size_t c = 0; c < p.model.size(); c++) {
      const float pp = p.pp[c] == '*'   ? 1.0f
                       : p.pp[c] == '.' ? 0.0f
                                        : static_cast<float>(p.pp[c] - '0') / 10.0f;
      if (p.model[c] == '.') {
        tr.append_with_pp(kTI, k, i++, pp);
      } else if (p.aseq[c] == '-') {
        tr.append_with_pp(kTD, ++k, 0, 0.0f);
      } else {
        tr.append_with_pp(kTM, ++k, i++, pp);
      }
    }
    tr.append_with_pp(kTE, 0, 0, 0.0f);
    tr.append_with_pp(kTC, 0, 0, 0.0f);
    tr.append_with_pp(kTT, 0, 0, 0.0f);
    AliDisplay ad = make_alidisplay(tr, 0, om, "7LESS_DROME", "P13368", "", dsq, tr.L);
    EXPECT_EQ(ad.model, p.model);
    EXPECT_EQ(ad.mline, p.mline);
    EXPECT_EQ(ad.aseq, p.aseq);
    EXPECT_EQ(ad.ppline, p.pp);
    EXPECT_EQ(ad.csline, p.cs);
    EXPECT_FALSE(ad.csline.empty());  // fn3 has a CS line
    EXPECT_EQ(ad.hmmfrom, p.k1);
    EXPECT_EQ(ad.hmmto, p.k2);
    EXPECT_EQ(ad.sqfrom, p.i1);
    EXPECT_EQ(ad.sqto, p.i2);
    EXPECT_EQ(ad.hmmacc, "PF00041.13");
  }
}

}  // namespace
}  // namespace warpsearch::hmm
