// Tests of the SSV/MSV filters (src/hmm/msvfilter.*): the SSE2 striped code equals the plain-loop
// references bit for bit (score bits, overflow flag, SSV status) on random models x random, homologous
// and degenerate sequences, at every striping/band boundary of M (incl. M = 1 and several SSV bands),
// L = 0, 1 and > 100000, with all SSV outcomes (ok / overflow / no result from the J check, from the
// baseline check and from the precondition) and MSV overflow exercised; on real models x real
// sequences (globins45, DB20k); and the MSV score stays close to the unquantized generic MSV.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <random>

#include "hmm/bg.hpp"
#include "hmm/generic_dp.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "oprofile_test_util.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

/// Outcome counters, to prove that the random tests reach every code path.
struct Coverage {
  int ssv_ok = 0, ssv_range = 0, ssv_noresult = 0, ssv_precond = 0, msv_overflow = 0, msv_ok = 0;
};

/// Compares fast and reference SSV, full MSV and the combined filter on one sequence.
void check_one(const Dsq& d, int L, const OProfile& om, Coverage* cov = nullptr) {
  const SsvResult sf = ssv_filter(d.data(), L, om);
  const SsvResult sr = ssv_filter_reference(d.data(), L, om);
  ASSERT_EQ(static_cast<int>(sf.status), static_cast<int>(sr.status)) << "L=" << L << " M=" << om.M;
  if (sf.status != SsvStatus::kNoResult) {
    ASSERT_EQ(bits(sf.score), bits(sr.score));
  }
  const FilterScore mf = msv_filter_full(d.data(), L, om);
  const FilterScore mr = msv_filter_full_reference(d.data(), L, om);
  ASSERT_EQ(mf.overflow, mr.overflow) << "L=" << L << " M=" << om.M;
  ASSERT_EQ(bits(mf.score), bits(mr.score)) << mf.score << " vs " << mr.score;
  const FilterScore cf = msv_filter(d.data(), L, om);
  const FilterScore cr = msv_filter_reference(d.data(), L, om);
  ASSERT_EQ(cf.overflow, cr.overflow);
  ASSERT_EQ(bits(cf.score), bits(cr.score));
  // The pair returns SSV's answer when it is certain (not always the full MSV's score: e.g. SSV's E
  // floor is the begin value), else the full MSV's.
  if (sf.status == SsvStatus::kOk) {
    ASSERT_EQ(bits(cf.score), bits(sf.score));
  }
  if (sf.status == SsvStatus::kRange) {
    ASSERT_TRUE(cf.overflow);
  }
  if (sf.status == SsvStatus::kNoResult) {
    ASSERT_EQ(bits(cf.score), bits(mf.score));
  }
  if (cov) {
    const bool precond = om.tjb_b + om.tbm_b + om.tec_b + om.bias_b >= 127;
    if (precond) {
      cov->ssv_precond++;
    } else if (sf.status == SsvStatus::kOk) {
      cov->ssv_ok++;
    } else if (sf.status == SsvStatus::kRange) {
      cov->ssv_range++;
    } else {
      cov->ssv_noresult++;
    }
    if (sf.status == SsvStatus::kNoResult) (mf.overflow ? cov->msv_overflow : cov->msv_ok)++;
  }
}

TEST(MsvFilter, FastEqualsReferenceRandom) {
  std::mt19937_64 rng(2024);
  Coverage cov;
  for (AbcType t : {AbcType::kAmino, AbcType::kDNA}) {
    const Abc& a = abc(t);
    Bg bg = make_bg(a);
    // Q16 boundaries (16, 17, 32, 33), one SSV band up to Q16 = 14 (M = 224), two bands from M = 225,
    // several bands with uneven widths (M = 700: Q16 = 44 -> 11 x 4; M = 2300: Q16 = 144 -> 11 bands).
    for (int M : {1, 2, 3, 15, 16, 17, 31, 32, 33, 48, 100, 224, 225, 240, 449, 700, 2300}) {
      for (int variant = 0; variant < 3; variant++) {
        test::ModelKnobs kn;
        kn.emit_alpha = variant == 0 ? 1.0 : (variant == 1 ? 0.05 : 0.3);
        kn.zero_frac = variant == 2 ? 0.4 : 0.0;
        const Hmm h = test::random_hmm(rng, M, a, kn);
        OProfile om = convert_profile(config_profile(h, bg, 400));
        SCOPED_TRACE("M=" + std::to_string(M) + " variant=" + std::to_string(variant));
        for (int L : {0, 1, 2, 5, 17, 33, 150, 400, 1200}) {
          if (M >= 700 && L > 400) continue;
          reconfig_length(om, L);
          check_one(test::random_dsq(rng, L, bg, 0.05), L, om, &cov);
          // A huge configured length (large tjb_b: SSV precondition fails, low B) on a short sequence.
          reconfig_length(om, 10000000);
          check_one(test::homolog_dsq(rng, h, bg, std::max(L, 1), 1, true), std::max(L, 1), om, &cov);
          reconfig_length(om, L);
          if (L >= 1) {
            check_one(test::homolog_dsq(rng, h, bg, L, 1 + L / 100, false), L, om, &cov);
            check_one(test::homolog_dsq(rng, h, bg, L, 1 + L / 50, true), L, om, &cov);
          }
        }
      }
    }
  }
  // Every outcome of the SSV/MSV pair was reached.
  EXPECT_GT(cov.ssv_ok, 0);
  EXPECT_GT(cov.ssv_range, 0);
  EXPECT_GT(cov.ssv_noresult, 0);
  EXPECT_GT(cov.ssv_precond, 0);
  EXPECT_GT(cov.msv_overflow, 0);
  EXPECT_GT(cov.msv_ok, 0);
}

TEST(MsvFilter, SaturationBoundaries) {
  // Peaked models and greedy (consensus) sequences of increasing length walk the score through the
  // SSV overflow threshold (255 - bias_b), the J-state check and the MSV overflow (E + bias = 255).
  std::mt19937_64 rng(99);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  int n_over = 0, n_ok = 0;
  for (int M : {1, 4, 20, 60, 300}) {
    for (double alpha : {0.02, 0.2, 2.0}) {
      test::ModelKnobs kn;
      kn.emit_alpha = alpha;
      const Hmm h = test::random_hmm(rng, M, a, kn);
      OProfile om = convert_profile(config_profile(h, bg, 100));
      // Consensus of the whole model repeated r times: the score grows with r until it saturates.
      for (int r = 1; r <= 40; r++) {
        const Dsq d = test::consensus_repeat_dsq(h, r);
        const int L = static_cast<int>(d.size()) - 2;
        reconfig_length(om, L);
        check_one(d, L, om);
        (msv_filter(d, L, om).overflow ? n_over : n_ok)++;
      }
    }
  }
  EXPECT_GT(n_over, 0);
  EXPECT_GT(n_ok, 0);
}

TEST(MsvFilter, ModelLengthOneAndSequenceLengthOne) {
  std::mt19937_64 rng(3);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  for (int rep = 0; rep < 50; rep++) {
    const Hmm h1 = test::random_hmm(rng, 1, a);
    OProfile om1 = convert_profile(config_profile(h1, bg, 100));
    for (int L : {1, 2, 3, 50}) {
      reconfig_length(om1, L);
      check_one(test::random_dsq(rng, L, bg, 0.2), L, om1);
    }
    const Hmm h = test::random_hmm(rng, 1 + rep * 7, a);
    OProfile om = convert_profile(config_profile(h, bg, 1));
    reconfig_length(om, 1);
    for (int x = 0; x < a.Kp; x++) {  // every code as the single residue
      Dsq d = {kDsqSentinel, static_cast<uint8_t>(x), kDsqSentinel};
      check_one(d, 1, om);
    }
  }
}

TEST(MsvFilter, LongSequences) {
  std::mt19937_64 rng(12);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  Coverage cov;
  for (int M : {10, 45, 230}) {
    const Hmm h = test::random_hmm(rng, M, a);
    OProfile om = convert_profile(config_profile(h, bg, 400));
    const int L = 120000;
    reconfig_length(om, L);
    check_one(test::random_dsq(rng, L, bg, 0.01), L, om, &cov);
    check_one(test::homolog_dsq(rng, h, bg, L, 30, false), L, om, &cov);
  }
  // At L = 120000, tjb_b is large: the SSV precondition fails for the larger models.
  EXPECT_GT(cov.ssv_precond + cov.ssv_ok + cov.ssv_noresult + cov.ssv_range, 0);
}

TEST(MsvFilter, RealModelsAndSequences) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const auto td = warpsearch::test::testdata_dir();
  const Abc& a = abc(AbcType::kAmino);
  const auto globins = test::read_fasta_dsqs((td / "prot/globins45.fa").string(), a, 100);
  const auto db = test::read_fasta_dsqs((td / "prot/mmseqs_DB20k.fasta").string(), a, 400);
  ASSERT_EQ(globins.size(), 45u);
  ASSERT_EQ(db.size(), 400u);
  Coverage cov;
  for (const char* f : {"globins4.hmm", "fn3.hmm", "Pkinase.hmm", "RRM_1.hmm", "M1.hmm", "SMC_N.hmm"}) {
    const auto path = td / "hmm" / f;
    if (!std::filesystem::exists(path)) continue;
    HmmReader rd(path.string());
    auto h = rd.next();
    ASSERT_TRUE(h.has_value());
    Bg bg = make_bg(a);
    Profile gm = config_profile(*h, bg, 400);
    OProfile om = convert_profile(gm);
    SCOPED_TRACE(f);
    for (const auto* set : {&globins, &db}) {
      for (const Dsq& d : *set) {
        const int L = static_cast<int>(d.size()) - 2;
        reconfig_length(om, L);
        check_one(d, L, om, &cov);
      }
    }
  }
  EXPECT_GT(cov.ssv_ok, 0);
  EXPECT_GT(cov.msv_overflow, 0);  // globins4 vs globins45
}

TEST(MsvFilter, CloseToGenericMsv) {
  // The byte filter approximates the float MSV (generic_msv, nu = 2): scores are rounded to 1/3 bit
  // per residue, the NN/CC/JJ loops are replaced by -3 nats (L log(L/(L+3)) for all L residues, where
  // the float MSV pays the loops only for unaligned residues) and the B/E/J costs are rounded.
  std::mt19937_64 rng(77);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  double sum_abs = 0.0;
  int n = 0;
  for (int M : {1, 20, 80, 200}) {
    const Hmm h = test::random_hmm(rng, M, a);
    for (int L : {100, 350, 1000}) {
      Profile gm = config_profile(h, bg, L);
      const OProfile om = convert_profile(gm);
      for (int rep = 0; rep < 10; rep++) {
        const Dsq d = rep % 2 ? test::random_dsq(rng, L, bg) : test::homolog_dsq(rng, h, bg, L, 1, false);
        const FilterScore f = msv_filter(d, L, om);
        if (f.overflow) continue;
        const float g = generic_msv(d, L, gm, 2.0f);
        // The -3 nat term alone can differ from the float model's loop costs by up to 3 nats.
        EXPECT_NEAR(f.score, g, 3.5) << "M=" << M << " L=" << L;
        sum_abs += std::fabs(static_cast<double>(f.score) - static_cast<double>(g));
        n++;
      }
    }
  }
  ASSERT_GT(n, 50);
  EXPECT_LT(sum_abs / n, 1.0);
}

}  // namespace
}  // namespace warpsearch::hmm
