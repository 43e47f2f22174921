// Tests of the Viterbi filter (src/hmm/vitfilter.*): the SSE2 striped code with lazy F equals the
// plain-loop reference (full D->D propagation) bit for bit on random models (incl. delete-heavy ones
// that make the lazy D->D passes run, and unihit mode) x random, homologous and degenerate sequences;
// at striping boundaries of M, M = 1, L = 0, 1 and > 100000; through the overflow threshold; on real
// models x real sequences; and it matches the float generic Viterbi run with HMMER's filter
// approximation (NN = CC = JJ = 0, then -3 nats) up to the 1/500-bit rounding of the scores.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "hmm/bg.hpp"
#include "hmm/generic_dp.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm/stats.hpp"
#include "hmm/vitfilter.hpp"
#include "oprofile_test_util.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

struct Counts {
  int overflow = 0, finite = 0, neginf = 0;
};

void check_one(const Dsq& d, int L, const OProfile& om, Counts* c = nullptr) {
  const FilterScore f = viterbi_filter(d.data(), L, om);
  const FilterScore r = viterbi_filter_reference(d.data(), L, om);
  ASSERT_EQ(f.overflow, r.overflow) << "M=" << om.M << " L=" << L;
  ASSERT_EQ(bits(f.score), bits(r.score)) << f.score << " vs " << r.score << " M=" << om.M << " L=" << L;
  if (c) {
    if (f.overflow) {
      c->overflow++;
    } else if (std::isinf(f.score)) {
      c->neginf++;
    } else {
      c->finite++;
    }
  }
}

TEST(ViterbiFilter, FastEqualsReferenceRandom) {
  std::mt19937_64 rng(4242);
  Counts c;
  for (AbcType t : {AbcType::kAmino, AbcType::kDNA}) {
    const Abc& a = abc(t);
    Bg bg = make_bg(a);
    for (int M : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 25, 64, 100, 333}) {
      for (int variant = 0; variant < 4; variant++) {
        test::ModelKnobs kn;
        kn.emit_alpha = variant == 1 ? 0.05 : 1.0;
        kn.trans_alpha = variant >= 2 ? 0.08 : 1.0;  // extreme transitions: long D->D runs, zero probs
        kn.zero_frac = variant == 3 ? 0.3 : 0.0;
        const Hmm h = test::random_hmm(rng, M, a, kn);
        const ProfileMode mode = (variant % 2) ? ProfileMode::kUniLocal : ProfileMode::kLocal;
        OProfile om = convert_profile(config_profile(h, bg, 400, mode));
        SCOPED_TRACE("M=" + std::to_string(M) + " variant=" + std::to_string(variant));
        for (int L : {0, 1, 2, 9, 40, 300, 900}) {
          reconfig_length(om, L);
          check_one(test::random_dsq(rng, L, bg, 0.05), L, om, &c);
          if (L >= 1) {
            check_one(test::homolog_dsq(rng, h, bg, L, 1 + L / 100, false), L, om, &c);
            check_one(test::homolog_dsq(rng, h, bg, L, 1 + L / 40, true), L, om, &c);
          }
        }
        reconfig_length(om, 40000000);
        check_one(test::homolog_dsq(rng, h, bg, 200, 2, false), 200, om, &c);
      }
    }
  }
  EXPECT_GT(c.overflow, 0);
  EXPECT_GT(c.finite, 0);
  EXPECT_GT(c.neginf, 0);  // L = 0: no path to C
}

TEST(ViterbiFilter, SaturationBoundaries) {
  std::mt19937_64 rng(8);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  int n_over = 0, n_ok = 0;
  for (int M : {1, 6, 30, 120}) {
    for (double alpha : {0.02, 0.3}) {
      test::ModelKnobs kn;
      kn.emit_alpha = alpha;
      const Hmm h = test::random_hmm(rng, M, a, kn);
      OProfile om = convert_profile(config_profile(h, bg, 100));
      for (int r = 1; r <= 30; r++) {  // consensus repeated r times: the score climbs to 32767
        const Dsq d = test::consensus_repeat_dsq(h, r);
        const int L = static_cast<int>(d.size()) - 2;
        reconfig_length(om, L);
        check_one(d, L, om);
        (viterbi_filter(d, L, om).overflow ? n_over : n_ok)++;
      }
    }
  }
  EXPECT_GT(n_over, 0);
  EXPECT_GT(n_ok, 0);
}

TEST(ViterbiFilter, ModelLengthOneAndSequenceLengthOne) {
  std::mt19937_64 rng(31);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  for (int rep = 0; rep < 40; rep++) {
    const Hmm h1 = test::random_hmm(rng, 1, a);
    OProfile om1 = convert_profile(config_profile(h1, bg, 100));
    for (int L : {1, 2, 3, 60}) {
      reconfig_length(om1, L);
      check_one(test::random_dsq(rng, L, bg, 0.2), L, om1);
    }
    const Hmm h = test::random_hmm(rng, 1 + rep * 5, a);
    OProfile om = convert_profile(config_profile(h, bg, 1));
    for (int x = 0; x < a.Kp; x++) {
      Dsq d = {kDsqSentinel, static_cast<uint8_t>(x), kDsqSentinel};
      check_one(d, 1, om);
    }
  }
}

TEST(ViterbiFilter, LongSequences) {
  std::mt19937_64 rng(13);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  for (int M : {12, 60}) {
    const Hmm h = test::random_hmm(rng, M, a);
    OProfile om = convert_profile(config_profile(h, bg, 400));
    const int L = 110000;
    reconfig_length(om, L);
    check_one(test::random_dsq(rng, L, bg, 0.01), L, om);
    check_one(test::homolog_dsq(rng, h, bg, L, 20, false), L, om);
  }
}

TEST(ViterbiFilter, RealModelsAndSequences) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const auto td = warpsearch::test::testdata_dir();
  const Abc& a = abc(AbcType::kAmino);
  const auto globins = test::read_fasta_dsqs((td / "prot/globins45.fa").string(), a, 100);
  const auto db = test::read_fasta_dsqs((td / "prot/mmseqs_DB20k.fasta").string(), a, 300);
  ASSERT_EQ(globins.size(), 45u);
  Counts c;
  for (const char* f : {"globins4.hmm", "fn3.hmm", "Pkinase.hmm", "RRM_1.hmm", "SMC_N.hmm"}) {
    const auto path = td / "hmm" / f;
    if (!std::filesystem::exists(path)) continue;
    HmmReader rd(path.string());
    auto h = rd.next();
    ASSERT_TRUE(h.has_value());
    Bg bg = make_bg(a);
    OProfile om = convert_profile(config_profile(*h, bg, 400));
    SCOPED_TRACE(f);
    for (const auto* set : {&globins, &db})
      for (const Dsq& d : *set) {
        const int L = static_cast<int>(d.size()) - 2;
        reconfig_length(om, L);
        check_one(d, L, om, &c);
      }
  }
  EXPECT_GT(c.finite, 0);
}

TEST(ViterbiFilter, MatchesGenericViterbiWithFilterApproximation) {
  // HMMER's own unit test idea: with NN = CC = JJ = 0 in the float profile, generic Viterbi - 3 nats
  // equals the filter up to the rounding of each score to 1/500 bit (about 7e-4 nats per term).
  std::mt19937_64 rng(55);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  int n = 0;
  for (int M : {1, 10, 50, 150}) {
    const Hmm h = test::random_hmm(rng, M, a);
    for (int L : {5, 60, 300}) {
      Profile gm = config_profile(h, bg, L);
      const OProfile om = convert_profile(gm);
      for (int s : {kXN, kXC, kXJ}) gm.xsc[s][kLoop] = 0.0f;
      for (int rep = 0; rep < 6; rep++) {
        const Dsq d = rep % 2 ? test::random_dsq(rng, L, bg) : test::homolog_dsq(rng, h, bg, L, 1, false);
        const FilterScore f = viterbi_filter(d, L, om);
        if (f.overflow) continue;
        const float g = generic_viterbi(d, L, gm) - 3.0f;
        EXPECT_NEAR(f.score, g, 0.005 + 0.00005 * (L + M)) << "M=" << M << " L=" << L;
        n++;
      }
    }
  }
  EXPECT_GT(n, 40);
}

/// Runs the installed hmmsearch and returns its "Passed <what> filter:" count, or -1.
long hmmsearch_passed(const std::string& hmm, const std::string& db, const std::string& what) {
  const std::string out = (std::filesystem::temp_directory_path() / "ws_h3_vitfilter_oracle.txt").string();
  const std::string cmd = "hmmsearch --nobias --cpu 1 --tblout /dev/null -o " + out + " " + hmm + " " + db;
  if (std::system(cmd.c_str()) != 0) return -1;
  std::ifstream in(out);
  std::string line;
  const std::string key = "Passed " + what + " filter:";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  return -1;
}

TEST(ViterbiFilter, PassCountsMatchHmmsearch) {
  // End to end against HMMER: the pipeline's first two stages (--nobias, default F1 = 0.02, F2 = 1e-3)
  // computed from our MSV and Viterbi filter scores give hmmsearch's "Passed MSV/Vit filter" counts.
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (std::system("command -v hmmsearch > /dev/null 2>&1") != 0) GTEST_SKIP() << "hmmsearch not installed";
  const auto td = warpsearch::test::testdata_dir();
  const std::string db = (td / "prot/mmseqs_DB20k.fasta").string();
  const Abc& a = abc(AbcType::kAmino);
  const auto seqs = test::read_fasta_dsqs(db, a, 1u << 30);
  ASSERT_GT(seqs.size(), 1000u);
  for (const char* f : {"globins4.hmm", "fn3.hmm", "Pkinase.hmm"}) {
    const std::string path = (td / "hmm" / f).string();
    if (!std::filesystem::exists(path)) continue;
    SCOPED_TRACE(f);
    HmmReader rd(path);
    auto h = rd.next();
    ASSERT_TRUE(h.has_value());
    Bg bg = make_bg(a);
    OProfile om = convert_profile(config_profile(*h, bg, 100));
    long n_msv = 0, n_vit = 0;
    for (const Dsq& d : seqs) {
      const int L = static_cast<int>(d.size()) - 2;
      if (L == 0) continue;
      set_length(bg, L);
      reconfig_length(om, L);
      const float nullsc = null_one(bg, d, L);
      const float usc = msv_filter(d, L, om).score;
      float seq_score = static_cast<float>((usc - nullsc) / kLog2);
      double P = gumbel_surv(seq_score, om.evparam[kMMu], om.evparam[kMLambda]);
      if (P > 0.02) continue;
      n_msv++;
      if (P > 1e-3) {
        const float vfsc = viterbi_filter(d, L, om).score;
        seq_score = static_cast<float>((vfsc - nullsc) / kLog2);
        P = gumbel_surv(seq_score, om.evparam[kVMu], om.evparam[kVLambda]);
        if (P > 1e-3) continue;
      }
      n_vit++;
    }
    EXPECT_EQ(n_msv, hmmsearch_passed(path, db, "MSV"));
    EXPECT_EQ(n_vit, hmmsearch_passed(path, db, "Vit"));
  }
}

}  // namespace
}  // namespace warpsearch::hmm
