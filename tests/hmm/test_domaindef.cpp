// test_domaindef.cpp: domain definition (src/hmm/domaindef.hpp) end to end against the installed
// hmmsearch 3.3.2. For each target we run HMMER's search-pipeline steps up to domain definition
// (length reconfiguration, null score, Forward/Backward parsers, by_posterior_heuristics), derive each
// domain's bit score and null2 bias exactly as p7_Pipeline does, and compare with `hmmsearch --max
// --domtblout` (every sequence reaches domain definition under --max; E thresholds are opened so every
// domain is reported): the number of domains, model and alignment coordinates, envelope coordinates,
// domain score, bias and the mean posterior accuracy column. Multi-domain fn3 targets exercise the
// stochastic-trace clustering path; random DB20k targets under Pkinase exercise weak and junk regions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/domaindef.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/logsum.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

struct FastaRec {
  std::string name;
  std::string desc;
  std::string seq;
};

std::vector<FastaRec> read_fasta(const std::string& path) {
  std::vector<FastaRec> recs;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      FastaRec r;
      const std::size_t sp = line.find_first_of(" \t");
      r.name = line.substr(1, sp == std::string::npos ? std::string::npos : sp - 1);
      const std::size_t ds = sp == std::string::npos ? sp : line.find_first_not_of(" \t", sp);
      if (ds != std::string::npos) r.desc = line.substr(ds);
      recs.push_back(r);
    } else if (!recs.empty()) {
      for (const char c : line)
        if (c != ' ' && c != '\t' && c != '\r') recs.back().seq += c;
    }
  }
  return recs;
}

void write_fasta(const std::string& path, const std::vector<FastaRec>& recs) {
  std::ofstream out(path);
  for (const FastaRec& r : recs)
    out << '>' << r.name << (r.desc.empty() ? "" : " " + r.desc) << '\n' << r.seq << '\n';
}

// One domain line of a domtblout, the fields we compare (as printed).
struct DomRow {
  std::string score, bias, hmmfrom, hmmto, alifrom, alito, envfrom, envto, acc;
  bool operator==(const DomRow&) const = default;
};
std::ostream& operator<<(std::ostream& os, const DomRow& r) {
  return os << "score " << r.score << " bias " << r.bias << " hmm " << r.hmmfrom << ".." << r.hmmto << " ali "
            << r.alifrom << ".." << r.alito << " env " << r.envfrom << ".." << r.envto << " acc " << r.acc;
}

std::map<std::string, std::vector<DomRow>> run_hmmsearch(const std::string& hmm, const std::string& fasta,
                                                         const test::TempDir& dir, uint32_t seed) {
  const std::string dom = dir / "out.domtbl";
  const std::string cmd = "hmmsearch --max -E 1e10 --domE 1e10 --cpu 1 --noali -o /dev/null --seed " +
                          std::to_string(seed) + " --domtblout " + dom + " " + hmm + " " + fasta;
  std::map<std::string, std::vector<DomRow>> rows;
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "hmmsearch failed: " << cmd;
    return rows;
  }
  std::istringstream in(test::read_file(dom));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::vector<std::string> t;
    std::string tok;
    while (t.size() < 22 && f >> tok) t.push_back(tok);
    if (t.size() < 22) {
      ADD_FAILURE() << "short domtblout line: " << line;
      continue;
    }
    rows[t[0]].push_back(DomRow{t[13], t[14], t[15], t[16], t[17], t[18], t[19], t[20], t[21]});
  }
  return rows;
}

std::string fmt1(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
std::string fmt2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

bool hmmsearch_available() { return std::system("hmmsearch -h >/dev/null 2>&1") == 0; }

// Runs our domain definition on every record and compares with hmmsearch. Returns the number of
// domains compared; counts targets whose regions needed clustering in *nclustered.
int compare_with_hmmsearch(const std::string& hmm_path, const std::vector<FastaRec>& recs, int* nclustered,
                           uint32_t seed = 42) {
  test::TempDir dir("h6_domaindef");
  write_fasta(dir / "db.fa", recs);
  const auto expected = run_hmmsearch(hmm_path, dir / "db.fa", dir, seed);

  const FlushToZeroScope ftz;  // HMMER's impl_Init: FTZ/DAZ on
  std::vector<Hmm> hmms = read_all_hmms(hmm_path);
  EXPECT_EQ(hmms.size(), 1U);
  const Hmm& hmm = hmms.at(0);
  Bg bg = make_bg(*hmm.abc);
  const Profile gm = config_profile(hmm, bg, 100, ProfileMode::kLocal);
  OProfile om = convert_profile(gm);

  DomainDef ddef(seed);  // hmmsearch --seed (pipeline RNG)
  Omx oxf, oxb, fwd, bck;
  int ncompared = 0;
  *nclustered = 0;
  for (const FastaRec& rec : recs) {
    const Dsq dsq = digitize(rec.seq, *hmm.abc);
    const int L = static_cast<int>(rec.seq.size());
    if (L == 0) continue;
    // p7_pli_NewSeq / hmmsearch: bg and profile length to this target.
    set_length(bg, L);
    reconfig_length(om, L);
    const float nullsc = null_one(bg, dsq, L);
    grow_to(oxf, om.M, L, false);
    grow_to(oxb, om.M, L, false);
    forward_parser(dsq, L, om, oxf);
    backward_parser(dsq, L, om, oxf, oxb);

    ddef.reuse();
    const DomainDefStatus st =
        by_posterior_heuristics(dsq, L, DomainSeqInfo{rec.name, "", rec.desc}, om, oxf, oxb, fwd, bck, ddef);
    EXPECT_EQ(st, DomainDefStatus::kOk) << rec.name;
    EXPECT_EQ(om.L, L);  // profile restored
    EXPECT_EQ(om.xf[kOE][kOLoop], 0.5f);
    if (ddef.nclustered > 0) ++*nclustered;

    // Domain scores as p7_Pipeline computes them (float/double mix as in HMMER).
    std::vector<DomRow> got;
    for (const Domain& d : ddef.dcl) {
      const int64_t Ld = d.jenv - d.ienv + 1;
      float bitscore = static_cast<float>(
          static_cast<double>(d.envsc) +
          static_cast<double>(L - Ld) *
              std::log(static_cast<double>(static_cast<float>(L) / static_cast<float>(L + 3))));
      const float dombias = flogsum(0.0f, static_cast<float>(std::log(static_cast<double>(bg.omega)) +
                                                             static_cast<double>(d.domcorrection)));
      bitscore = static_cast<float>(static_cast<double>(bitscore - (nullsc + dombias)) / kLog2);
      const double acc = static_cast<double>(d.oasc) /
                         (1.0 + std::fabs(static_cast<double>(static_cast<float>(d.jenv - d.ienv))));
      got.push_back(DomRow{
          fmt1(static_cast<double>(bitscore)), fmt1(static_cast<double>(dombias) * 1.44269504088896341),
          std::to_string(d.ad.hmmfrom), std::to_string(d.ad.hmmto), std::to_string(d.iali),
          std::to_string(d.jali), std::to_string(d.ienv), std::to_string(d.jenv), fmt2(acc)});
      EXPECT_EQ(d.iali, d.ad.sqfrom);
      EXPECT_EQ(d.jali, d.ad.sqto);
    }
    const auto it = expected.find(rec.name);
    const std::vector<DomRow> want = it == expected.end() ? std::vector<DomRow>{} : it->second;
    EXPECT_EQ(got.size(), want.size()) << rec.name << " (L=" << L << ")";
    for (std::size_t d = 0; d < got.size() && d < want.size(); ++d) {
      EXPECT_EQ(got[d], want[d]) << rec.name << " domain " << d + 1;
      ++ncompared;
    }
  }
  return ncompared;
}

TEST(DomainDef, Globins4OnGlobins45MatchesHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!hmmsearch_available()) GTEST_SKIP() << "hmmsearch not installed";
  const auto recs = read_fasta((test::testdata_dir() / "prot/globins45.fa").string());
  int nclustered = 0;
  const int n =
      compare_with_hmmsearch((test::testdata_dir() / "hmm/globins4.hmm").string(), recs, &nclustered);
  EXPECT_GE(n, 45);
}

TEST(DomainDef, Fn3MultiDomainTargetsMatchHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!hmmsearch_available()) GTEST_SKIP() << "hmmsearch not installed";
  // Targets with 2..14 fn3 domains (found with hmmsearch fn3 x DB20k), plus a slice of the database.
  const std::set<std::string> names = {
      "sp|A1L4K1|FSD2_HUMAN",           "sp|O01761|UNC89_CAEEL",          "sp|Q04594|PRLR_CHICK",
      "sp|Q86VF2|IGFN1_HUMAN",          "sp|Q9HD43|PTPRH_HUMAN",          "tr|A0A016T6P1|A0A016T6P1_9BILA",
      "tr|A0A091JKW0|A0A091JKW0_9AVES", "tr|A0A091PXI7|A0A091PXI7_LEPDC", "tr|A0A093CH18|A0A093CH18_TAUER",
      "tr|A0A0D9R0Q0|A0A0D9R0Q0_CHLSB", "tr|A0A0G2JXZ9|A0A0G2JXZ9_RAT",   "tr|A0A0K8U159|A0A0K8U159_BACLA",
      "tr|A0A0K8U4F4|A0A0K8U4F4_BACLA", "tr|A0A0Q5UJ07|A0A0Q5UJ07_DROER", "tr|A0A146V1S2|A0A146V1S2_FUNHE",
      "tr|A0A151M9E2|A0A151M9E2_ALLMI", "tr|A0A151MWZ4|A0A151MWZ4_ALLMI", "tr|A2AWF8|A2AWF8_MOUSE",
      "tr|A2AWF9|A2AWF9_MOUSE",         "tr|A5HDY5|A5HDY5_ANAPL"};
  const auto all = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string());
  std::vector<FastaRec> recs;
  for (std::size_t x = 0; x < all.size(); ++x)
    if (names.count(all[x].name) || (x >= 1000 && x < 1100)) recs.push_back(all[x]);
  ASSERT_EQ(recs.size(), names.size() + 100);
  int nclustered = 0;
  const int n = compare_with_hmmsearch((test::testdata_dir() / "hmm/fn3.hmm").string(), recs, &nclustered);
  EXPECT_GE(n, 100);
  EXPECT_GE(nclustered, 10);  // the clustering path was exercised
  // Another pipeline seed (--seed 7): the trace ensembles, hence some envelopes, differ.
  const int n7 =
      compare_with_hmmsearch((test::testdata_dir() / "hmm/fn3.hmm").string(), recs, &nclustered, 7);
  EXPECT_GE(n7, 100);
}

TEST(DomainDef, PkinaseOnDatabaseSliceMatchesHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!hmmsearch_available()) GTEST_SKIP() << "hmmsearch not installed";
  auto all = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string());
  all.resize(150);
  int nclustered = 0;
  const int n = compare_with_hmmsearch((test::testdata_dir() / "hmm/Pkinase.hmm").string(), all, &nclustered);
  EXPECT_GE(n, 100);
}

TEST(DomainDef, Made1OnDnaSliceMatchesHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/MADE1.hmm");
  WS_REQUIRE_TESTDATA("dna/BioMarKs50k.fa");
  if (!hmmsearch_available()) GTEST_SKIP() << "hmmsearch not installed";
  auto all = read_fasta((test::testdata_dir() / "dna/BioMarKs50k.fa").string());
  all.resize(120);
  int nclustered = 0;
  const int n = compare_with_hmmsearch((test::testdata_dir() / "hmm/MADE1.hmm").string(), all, &nclustered);
  EXPECT_GE(n, 50);
}

TEST(DomainDef, SeedingFollowsPipeline) {
  // p7_pipeline_Create: the fast (LCG) generator; seed 0 = arbitrary seed and no reseeding.
  const DomainDef d42(42);
  EXPECT_EQ(d42.rng.kind(), RngKind::kFast);
  EXPECT_EQ(d42.rng.seed(), 42U);
  EXPECT_TRUE(d42.do_reseeding);
  const DomainDef d0(0);
  EXPECT_FALSE(d0.do_reseeding);
  EXPECT_NE(d0.rng.seed(), 0U);
  EXPECT_EQ(d42.rt1, 0.25f);
  EXPECT_EQ(d42.rt2, 0.10f);
  EXPECT_EQ(d42.rt3, 0.20f);
  EXPECT_EQ(d42.nsamples, 200);
  EXPECT_EQ(d42.link.min_overlap, 0.8f);
  EXPECT_EQ(d42.link.max_diagdiff, 4);
  EXPECT_EQ(d42.link.min_posterior, 0.25f);
  EXPECT_EQ(d42.link.min_endpointp, 0.02f);
  EXPECT_TRUE(d42.link.of_smaller);
}

TEST(DomainDef, MultidomainRegionTrigger) {
  // is_multidomain_region on hand-made cumulative B/E posteriors: one domain 1..10 (B at 1, E at 10)
  // is not split; two domains (E at 5, B at 6, each with expectation 0.9) are.
  DomainDef ddef;
  ddef.btot.assign(11, 0.0f);
  ddef.etot.assign(11, 0.0f);
  for (int x = 1; x <= 10; ++x) {
    ddef.btot[static_cast<std::size_t>(x)] = 1.0f;
    ddef.etot[static_cast<std::size_t>(x)] = x == 10 ? 1.0f : 0.0f;
  }
  EXPECT_FALSE(is_multidomain_region(ddef, 1, 10));
  for (int x = 1; x <= 10; ++x) {
    ddef.btot[static_cast<std::size_t>(x)] = x >= 6 ? 1.9f : 1.0f;
    ddef.etot[static_cast<std::size_t>(x)] = x >= 10 ? 1.9f : (x >= 5 ? 0.9f : 0.0f);
  }
  EXPECT_TRUE(is_multidomain_region(ddef, 1, 10));  // z = 5 or 6: min(0.9, 0.9) >= 0.2
  ddef.rt3 = 0.95f;
  EXPECT_FALSE(is_multidomain_region(ddef, 1, 10));
}

}  // namespace
}  // namespace warpsearch::hmm
