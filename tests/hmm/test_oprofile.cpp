// Tests of the optimized profile (src/hmm/oprofile.*): esl_sse_expf (vector == scalar bit for bit,
// close to libm), the striped layout of every part read back through the accessors and compared with
// the quantization of the generic profile's scores node by node (random and real models, M at all
// striping boundaries), HMMER's constants, and the Reconfig* functions.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "hmm/bg.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "oprofile_test_util.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

TEST(OProfileExpf, VectorEqualsScalarAndApproximatesLibm) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           1.0f,
                           -1.0f,
                           88.3762626647949f,
                           -88.3762626647949f,
                           std::nextafter(88.3762626647949f, 0.0f),
                           std::nextafter(-88.3762626647949f, 0.0f),
                           -87.0f,
                           -87.5f,
                           88.0f,
                           kInf,
                           -kInf,
                           1e-30f,
                           -1e-30f,
                           0.5f * std::log(2.0f)};
  for (int i = 0; i < 200000; i++) xs.push_back(u(rng));
  for (std::size_t i = 0; i + 4 <= xs.size(); i += 4) {
    float out[4];
#if defined(__SSE2__)
    _mm_storeu_ps(out, sse_expf(_mm_loadu_ps(&xs[i])));
#else
    for (int z = 0; z < 4; z++) out[z] = sse_expf_scalar(xs[i + static_cast<std::size_t>(z)]);
#endif
    for (std::size_t z = 0; z < 4; z++) {
      const float x = xs[i + z];
      ASSERT_EQ(bits(out[z]), bits(sse_expf_scalar(x))) << "x=" << x;
      if (x > 88.3762626647949f) {
        EXPECT_EQ(out[z], kInf);
      } else if (x <= -88.3762626647949f) {
        EXPECT_EQ(out[z], 0.0f);
      } else if (x > -87.0f) {
        const double ref = std::exp(static_cast<double>(x));
        EXPECT_NEAR(out[z], ref, ref * 4e-7) << "x=" << x;
      }
    }
  }
}

/// Checks every striped element of om against the quantized generic scores of gm, node by node.
void check_layout(const Profile& gm, const OProfile& om) {
  const int M = gm.M;
  const int Kp = gm.abc->Kp;
  ASSERT_EQ(om.M, M);
  ASSERT_EQ(om.Q16, std::max(2, (M - 1) / 16 + 1));
  ASSERT_EQ(om.Q8, std::max(2, (M - 1) / 8 + 1));
  ASSERT_EQ(om.Q4, std::max(2, (M - 1) / 4 + 1));
  ASSERT_EQ(om.rbv.size(), static_cast<std::size_t>(Kp * om.Q16 * 16));
  ASSERT_EQ(om.sbv.size(), static_cast<std::size_t>(Kp * (om.Q16 + kExtraSb) * 16));
  ASSERT_EQ(om.rwv.size(), static_cast<std::size_t>(Kp * om.Q8 * 8));
  ASSERT_EQ(om.twv.size(), static_cast<std::size_t>(8 * om.Q8 * 8));
  ASSERT_EQ(om.rfv.size(), static_cast<std::size_t>(Kp * om.Q4 * 4));
  ASSERT_EQ(om.tfv.size(), static_cast<std::size_t>(8 * om.Q4 * 4));

  // Bias: cost of the best canonical residue score (matches and inserts, nodes 0..M).
  float mx = 0.0f;
  for (int x = 0; x < gm.abc->K; x++)
    for (float v : gm.rsc[static_cast<std::size_t>(x)]) mx = std::max(mx, v);
  EXPECT_EQ(om.bias_b, unbiased_byteify(om, -mx));

  for (int x = 0; x < Kp; x++) {
    // Node values.
    for (int k = 1; k <= M; k++) {
      const float sc = gm.msc(k, x);
      ASSERT_EQ(om.msv_cost(x, k), biased_byteify(om, sc)) << "x=" << x << " k=" << k;
      ASSERT_EQ(om.ssv_score(x, k), static_cast<int8_t>(std::min(om.msv_cost(x, k) - om.bias_b, 127)));
      ASSERT_EQ(om.vit_match(x, k), wordify(om, sc));
      ASSERT_EQ(bits(om.fwd_match(x, k)), bits(sse_expf_scalar(sc)));
    }
    // Padding lanes.
    for (int k = M + 1; k <= 16 * om.Q16; k++) ASSERT_EQ(om.msv_cost(x, k), 255);
    for (int k = M + 1; k <= 8 * om.Q8; k++) ASSERT_EQ(om.vit_match(x, k), -32768);
    for (int k = M + 1; k <= 4 * om.Q4; k++) ASSERT_EQ(om.fwd_match(x, k), 0.0f);
    // The 17 SSV wrap-around vectors repeat vector q % Q16.
    const uint8_t* s = om.sbv_row(x);
    for (int q = om.Q16; q < om.Q16 + kExtraSb; q++)
      for (int z = 0; z < 16; z++) ASSERT_EQ(s[q * 16 + z], s[(q % om.Q16) * 16 + z]);
  }

  // Transitions: slot (t, k) with source node k-1 (BM, MM, IM, DM) or k (MD, MI, II, DD).
  struct T {
    int t, tg, koff;
  };
  const T ts[8] = {{kOBM, kPBM, -1}, {kOMM, kPMM, -1}, {kOIM, kPIM, -1}, {kODM, kPDM, -1},
                   {kOMD, kPMD, 0},  {kOMI, kPMI, 0},  {kOII, kPII, 0},  {kODD, kPDD, 0}};
  for (const T& tr : ts) {
    for (int k = 1; k <= 8 * om.Q8; k++) {
      const int src = k + tr.koff;
      int16_t want = src < M ? wordify(om, gm.tsc_at(src, tr.tg)) : int16_t{-32768};
      if (tr.t != kODD) want = std::min<int16_t>(want, tr.t == kOII ? int16_t{-1} : int16_t{0});
      ASSERT_EQ(om.vit_trans(tr.t, k), want) << "t=" << tr.t << " k=" << k;
    }
    for (int k = 1; k <= 4 * om.Q4; k++) {
      const int src = k + tr.koff;
      const float want = src < M ? sse_expf_scalar(gm.tsc_at(src, tr.tg)) : 0.0f;
      ASSERT_EQ(bits(om.fwd_trans(tr.t, k)), bits(want)) << "t=" << tr.t << " k=" << k;
    }
  }

  // Lazy-F bound, straightforwardly.
  int dd = -32768;
  for (int k = 2; k < M - 1; k++)
    dd = std::max(dd, wordify(om, gm.tsc_at(k, kPDD)) + wordify(om, gm.tsc_at(k + 1, kPDM)) -
                          wordify(om, gm.tsc_at(k + 1, kPBM)));
  EXPECT_EQ(om.ddbound_w, static_cast<int16_t>(dd));

  // Specials.
  EXPECT_EQ(om.xw[kOE][kOLoop], wordify(om, gm.xsc[kXE][kLoop]));
  EXPECT_EQ(om.xw[kOE][kOMove], wordify(om, gm.xsc[kXE][kMove]));
  for (int s : {kON, kOC, kOJ}) {
    EXPECT_EQ(om.xw[s][kOLoop], 0);
    EXPECT_EQ(om.xw[s][kOMove], wordify(om, gm.xsc[s][kMove]));
  }
  for (int s = 0; s < kNXStates; s++) {
    EXPECT_EQ(bits(om.xf[s][kOLoop]), bits(std::exp(gm.xsc[s][kLoop])));
    EXPECT_EQ(bits(om.xf[s][kOMove]), bits(std::exp(gm.xsc[s][kMove])));
  }
  EXPECT_EQ(om.tbm_b,
            unbiased_byteify(om, std::log(2.0f / (static_cast<float>(M) * static_cast<float>(M + 1)))));
  EXPECT_EQ(om.tjb_b, unbiased_byteify(om, std::log(3.0f / static_cast<float>(gm.L + 3))));
  EXPECT_EQ(om.L, gm.L);
  EXPECT_EQ(om.nj, gm.nj);
  EXPECT_EQ(om.mode, gm.mode);
  EXPECT_EQ(om.name, gm.name);
  EXPECT_EQ(om.consensus, gm.consensus);
}

TEST(OProfileConvert, ConstantsAsHmmer) {
  std::mt19937_64 rng(1);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  const Hmm h = test::random_hmm(rng, 100, a);
  const OProfile om = convert_profile(config_profile(h, bg, 400));
  EXPECT_EQ(bits(om.scale_b), bits(static_cast<float>(3.0 / 0.69314718055994529)));
  EXPECT_EQ(bits(om.scale_w), bits(static_cast<float>(500.0 / 0.69314718055994529)));
  EXPECT_EQ(om.base_b, 190);
  EXPECT_EQ(om.base_w, 12000);
  EXPECT_EQ(om.tec_b, 3);               // 3 * log2(2) third-bits
  EXPECT_EQ(om.tbm_b, 37);              // round(4.328 * 8.527) for M = 100
  EXPECT_EQ(om.tjb_b, 21);              // round(4.328 * log(403/3)) for L = 400
  EXPECT_EQ(om.xw[kOE][kOMove], -500);  // -1 bit
  EXPECT_EQ(wordify(om, -kInf), -32768);
  EXPECT_EQ(wordify(om, kInf), 32767);
  EXPECT_EQ(unbiased_byteify(om, -kInf), 255);
  EXPECT_EQ(biased_byteify(om, -kInf), 255);
  EXPECT_EQ(om.ncj_roundoff, 0.0f);
}

TEST(OProfileConvert, LayoutRandomModels) {
  std::mt19937_64 rng(11);
  for (AbcType t : {AbcType::kAmino, AbcType::kDNA}) {
    const Abc& a = abc(t);
    Bg bg = make_bg(a);
    for (int M : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 257, 1000}) {
      test::ModelKnobs kn;
      kn.emit_alpha = (M % 3 == 0) ? 0.05 : 1.0;
      kn.trans_alpha = (M % 2 == 0) ? 0.1 : 1.0;
      kn.zero_frac = (M % 5 == 0) ? 0.3 : 0.0;
      const Hmm h = test::random_hmm(rng, M, a, kn);
      const Profile gm = config_profile(h, bg, 50 + M);
      SCOPED_TRACE("M=" + std::to_string(M));
      check_layout(gm, convert_profile(gm));
      Profile gu = config_profile(h, bg, 50 + M, ProfileMode::kUniLocal);
      check_layout(gu, convert_profile(gu));
    }
  }
}

TEST(OProfileConvert, LayoutRealModels) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  const auto dir = warpsearch::test::testdata_dir() / "hmm";
  for (const char* f :
       {"fn3.hmm", "globins4.hmm", "Pkinase.hmm", "M1.hmm", "20aa.hmm", "MADE1.hmm", "SMC_N.hmm"}) {
    if (!std::filesystem::exists(dir / f)) continue;
    HmmReader rd((dir / f).string());
    while (auto h = rd.next()) {
      SCOPED_TRACE(std::string(f) + " " + h->name);
      Bg bg = make_bg(*h->abc);
      const Profile gm = config_profile(*h, bg, 400);
      check_layout(gm, convert_profile(gm));
    }
  }
}

TEST(OProfileConvert, ReconfigFunctions) {
  std::mt19937_64 rng(5);
  const Abc& a = abc(AbcType::kAmino);
  Bg bg = make_bg(a);
  const Hmm h = test::random_hmm(rng, 60, a);
  const OProfile base = convert_profile(config_profile(h, bg, 400));
  for (int L : {0, 1, 2, 10, 350, 1000, 100000, 40000000}) {
    OProfile om = base;
    reconfig_msv_length(om, L);
    EXPECT_EQ(om.tjb_b, unbiased_byteify(om, std::log(3.0f / static_cast<float>(L + 3))));
    EXPECT_EQ(om.L, base.L);  // the MSV part alone does not change L
    EXPECT_EQ(om.xw[kON][kOMove], base.xw[kON][kOMove]);
    reconfig_rest_length(om, L);
    const float pmove = (2.0f + om.nj) / (static_cast<float>(L) + 2.0f + om.nj);
    for (int s : {kON, kOC, kOJ}) {
      EXPECT_EQ(bits(om.xf[s][kOMove]), bits(pmove));
      EXPECT_EQ(bits(om.xf[s][kOLoop]), bits(1.0f - pmove));
      EXPECT_EQ(om.xw[s][kOMove], wordify(om, std::log(pmove)));
      EXPECT_EQ(om.xw[s][kOLoop], 0);
    }
    EXPECT_EQ(om.L, L);
    OProfile both = base;
    reconfig_length(both, L);
    EXPECT_EQ(both.tjb_b, om.tjb_b);
    EXPECT_EQ(both.xw[kOC][kOMove], om.xw[kOC][kOMove]);
    EXPECT_EQ(both.rbv, base.rbv);  // emissions untouched
    EXPECT_EQ(both.twv, base.twv);
  }
  OProfile uni = base;
  reconfig_unihit(uni, 300);
  EXPECT_EQ(uni.nj, 0.0f);
  EXPECT_EQ(uni.xw[kOE][kOMove], 0);
  EXPECT_EQ(uni.xw[kOE][kOLoop], -32768);
  EXPECT_EQ(uni.xf[kOE][kOMove], 1.0f);
  EXPECT_EQ(uni.xf[kOE][kOLoop], 0.0f);
  EXPECT_EQ(bits(uni.xf[kON][kOMove]), bits(2.0f / 302.0f));
  OProfile multi = uni;
  reconfig_multihit(multi, 300);
  EXPECT_EQ(multi.nj, 1.0f);
  EXPECT_EQ(multi.xw[kOE][kOMove], -500);
  EXPECT_EQ(multi.xw[kOE][kOLoop], -500);
  EXPECT_EQ(multi.xf[kOE][kOMove], 0.5f);
  EXPECT_EQ(bits(multi.xf[kON][kOMove]), bits(3.0f / 303.0f));
  // Unihit configuration through the generic profile converts to the same specials.
  const OProfile u2 = convert_profile(config_profile(h, bg, 300, ProfileMode::kUniLocal));
  EXPECT_EQ(u2.xw[kOE][kOLoop], uni.xw[kOE][kOLoop]);
  EXPECT_EQ(u2.xw[kOE][kOMove], uni.xw[kOE][kOMove]);
}

}  // namespace
}  // namespace warpsearch::hmm
