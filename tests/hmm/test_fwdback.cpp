// Tests of the striped float Forward/Backward (src/hmm/fwdback.cpp, omx.cpp):
//   - bit-for-bit equality with a scalar, non-striped Forward (node-indexed loops over OProfile::fwd_trans /
//     fwd_match) that does the same float operations in the order HMMER's lane layout implies;
//   - full matrix == parser mode, SSE path == portable path, bit for bit (scores and special rows);
//   - Forward vs H2's log-space generic_forward/generic_backward (flogsum tolerance), Forward == Backward;
//   - edge sizes (M = 1, L = 1, M around the 100-node switch of the D->D strategy), 100k+ residues,
//     real Pfam models on real sequences, matrix-size errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "h2_support.hpp"
#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/generic_dp.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm_test_support.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

using Model = hmmtest::ConfiguredModel;

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

/// Scalar Forward in node indexing k = 1..4Q (padding nodes included: their transitions and emissions
/// are 0). Striping is only visible through (a) the D->D passes, which propagate D within each lane's
/// segment of Q nodes and then carry across segments for three more passes, and (b) the E sum, which
/// accumulates per lane (all M in q order, then all D) and adds lanes as (0+1)+(2+3).
struct ScalarForward {
  int M = 0, Q = 0, K = 0, L = 0;
  std::vector<float> mx, dx, ix, xmx;  // mx[i*(K+1)+k], xmx[i*6+s]
  float totscale = 0.0f;
  float score = 0.0f;
  float& m(int i, int k) {
    return mx[static_cast<std::size_t>(i) * static_cast<std::size_t>(K + 1) + static_cast<std::size_t>(k)];
  }
  float& d(int i, int k) {
    return dx[static_cast<std::size_t>(i) * static_cast<std::size_t>(K + 1) + static_cast<std::size_t>(k)];
  }
  float& in(int i, int k) {
    return ix[static_cast<std::size_t>(i) * static_cast<std::size_t>(K + 1) + static_cast<std::size_t>(k)];
  }
  float& x(int i, int s) {
    return xmx[static_cast<std::size_t>(i) * kOmxNXCells + static_cast<std::size_t>(s)];
  }
};

ScalarForward scalar_forward(const uint8_t* dsq, int L, const OProfile& om) {
  ScalarForward r;
  r.M = om.M;
  r.Q = nqf(om.M);
  r.K = 4 * r.Q;
  r.L = L;
  const int Q = r.Q, K = r.K;
  const std::size_t cells = static_cast<std::size_t>(L + 1) * static_cast<std::size_t>(K + 1);
  r.mx.assign(cells, 0.0f);
  r.dx.assign(cells, 0.0f);
  r.ix.assign(cells, 0.0f);
  r.xmx.assign(static_cast<std::size_t>(L + 1) * kOmxNXCells, 0.0f);
  auto T = [&](int t, int k) { return om.fwd_trans(t, k); };
  float xE = 0.0f, xN = 1.0f, xJ = 0.0f, xB = om.xf[kON][kOMove], xC = 0.0f;
  r.x(0, kOmxE) = xE;
  r.x(0, kOmxN) = xN;
  r.x(0, kOmxJ) = xJ;
  r.x(0, kOmxB) = xB;
  r.x(0, kOmxC) = xC;
  r.x(0, kOmxScale) = 1.0f;
  float totscale = 0.0f;
  for (int i = 1; i <= L; ++i) {
    const int res = dsq[i];
    for (int k = 1; k <= K; ++k) {
      const float pm = k > 1 ? r.m(i - 1, k - 1) : 0.0f;
      const float pi = k > 1 ? r.in(i - 1, k - 1) : 0.0f;
      const float pd = k > 1 ? r.d(i - 1, k - 1) : 0.0f;
      float sv = xB * T(kOBM, k);
      sv = sv + pm * T(kOMM, k);
      sv = sv + pi * T(kOIM, k);
      sv = sv + pd * T(kODM, k);
      r.m(i, k) = sv * om.fwd_match(res, k);
      r.in(i, k) = r.m(i - 1, k) * T(kOMI, k) + r.in(i - 1, k) * T(kOII, k);
    }
    // D pass 1 within each lane segment; base(k) = M(k-1)*tMD(k-1).
    float carry[4];
    for (int z = 0; z < 4; ++z) {
      float c = 0.0f;
      for (int q = 0; q < Q; ++q) {
        const int k = z * Q + q + 1;
        const float base = k > 1 ? r.m(i, k - 1) * T(kOMD, k - 1) : 0.0f;
        r.d(i, k) = (q == 0) ? base + 0.0f : c + base;
        c = r.d(i, k) * T(kODD, k);
      }
      carry[z] = c;
    }
    for (int j = 1; j < 4; ++j) {
      float cin[4] = {0.0f, carry[0], carry[1], carry[2]};
      bool changed = false;
      for (int z = 0; z < 4; ++z) {
        float c = cin[z];
        for (int q = 0; q < Q; ++q) {
          const int k = z * Q + q + 1;
          const float nv = c + r.d(i, k);
          if (nv > r.d(i, k)) changed = true;
          r.d(i, k) = nv;
          c = c * T(kODD, k);
        }
        carry[z] = c;
      }
      if (om.M >= 100 && !changed) break;
    }
    float acc[4];
    for (int z = 0; z < 4; ++z) {
      acc[z] = 0.0f;
      for (int q = 0; q < Q; ++q) acc[z] = acc[z] + r.m(i, z * Q + q + 1);
      for (int q = 0; q < Q; ++q) acc[z] = r.d(i, z * Q + q + 1) + acc[z];
    }
    xE = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    xN = xN * om.xf[kON][kOLoop];
    xC = (xC * om.xf[kOC][kOLoop]) + (xE * om.xf[kOE][kOMove]);
    xJ = (xJ * om.xf[kOJ][kOLoop]) + (xE * om.xf[kOE][kOLoop]);
    xB = (xJ * om.xf[kOJ][kOMove]) + (xN * om.xf[kON][kOMove]);
    if (xE > 1.0e4f) {
      xN = xN / xE;
      xC = xC / xE;
      xJ = xJ / xE;
      xB = xB / xE;
      const float f = static_cast<float>(1.0 / static_cast<double>(xE));
      for (int k = 1; k <= K; ++k) {
        r.m(i, k) = r.m(i, k) * f;
        r.d(i, k) = r.d(i, k) * f;
        r.in(i, k) = r.in(i, k) * f;
      }
      r.x(i, kOmxScale) = xE;
      totscale = static_cast<float>(static_cast<double>(totscale) + std::log(static_cast<double>(xE)));
      xE = 1.0f;
    } else {
      r.x(i, kOmxScale) = 1.0f;
    }
    r.x(i, kOmxE) = xE;
    r.x(i, kOmxN) = xN;
    r.x(i, kOmxJ) = xJ;
    r.x(i, kOmxB) = xB;
    r.x(i, kOmxC) = xC;
  }
  r.totscale = totscale;
  r.score = static_cast<float>(static_cast<double>(totscale) +
                               std::log(static_cast<double>(xC * om.xf[kOC][kOMove])));
  return r;
}

/// Striped matrix element for node k (1..4Q, padding included) of row i.
float striped(const Omx& ox, int s, int i, int k) {
  const int Q = nqf(ox.M);
  return ox.row(i)[(static_cast<std::size_t>((k - 1) % Q) * kOmxNSCells + static_cast<std::size_t>(s)) * 4 +
                   static_cast<std::size_t>((k - 1) / Q)];
}

void expect_forward_equals_scalar(const Dsq& dsq, int L, const OProfile& om) {
  FlushToZeroScope ftz;
  Omx ox = make_omx(om.M, L, true);
  const float sc = forward(dsq, L, om, ox);
  const ScalarForward ref = scalar_forward(dsq.data(), L, om);
  ASSERT_EQ(bits(sc), bits(ref.score)) << "M=" << om.M << " L=" << L << " " << sc << " vs " << ref.score;
  ASSERT_EQ(bits(ox.totscale), bits(ref.totscale));
  ScalarForward& r = const_cast<ScalarForward&>(ref);
  for (int i = 0; i <= L; ++i) {
    for (int s = 0; s < kOmxNXCells; ++s)
      ASSERT_EQ(bits(ox.x(i, s)), bits(r.x(i, s))) << "i=" << i << " s=" << s;
    for (int k = 1; k <= r.K; ++k) {
      ASSERT_EQ(bits(striped(ox, kOmxM, i, k)), bits(r.m(i, k))) << "M i=" << i << " k=" << k;
      ASSERT_EQ(bits(striped(ox, kOmxD, i, k)), bits(r.d(i, k))) << "D i=" << i << " k=" << k;
      ASSERT_EQ(bits(striped(ox, kOmxI, i, k)), bits(r.in(i, k))) << "I i=" << i << " k=" << k;
    }
  }
}

TEST(HmmFwdBack, ForwardEqualsScalarReferenceBitForBit) {
  std::mt19937 rng(7);
  for (int M : {1, 2, 3, 4, 5, 7, 8, 9, 16, 33, 64, 99, 100, 101, 150, 257}) {
    for (int L : {1, 2, 17, 240}) {
      Model m = hmmtest::random_configured_model(static_cast<uint32_t>(M * 31 + L), M, L);
      expect_forward_equals_scalar(h2test::random_dsq(rng, L, abc(AbcType::kAmino), 0.05), L, m.om);
      expect_forward_equals_scalar(h2test::planted_dsq(rng, m.hmm, L, 1 + L / 60), L, m.om);
    }
  }
}

/// Runs full and parser Forward/Backward (native and portable) and checks they agree bit for bit.
/// Returns {forward score, backward score}.
std::pair<float, float> check_modes(const Dsq& dsq, int L, const OProfile& om, bool with_full = true) {
  FlushToZeroScope ftz;
  Omx fp = make_omx(om.M, L, false), bp = make_omx(om.M, L, false);
  const float fsc = forward_parser(dsq, L, om, fp);
  const float bsc = backward_parser(dsq, L, om, fp, bp);
  Omx fp2 = make_omx(om.M, L, false), bp2 = make_omx(om.M, L, false);
  EXPECT_EQ(bits(detail::forward_portable(dsq.data(), L, om, fp2, false)), bits(fsc));
  EXPECT_EQ(bits(detail::backward_portable(dsq.data(), L, om, fp2, bp2, false)), bits(bsc));
  EXPECT_EQ(fp.xmx, fp2.xmx);
  EXPECT_EQ(bp.xmx, bp2.xmx);
  if (with_full) {
    Omx ff = make_omx(om.M, L, true), bf = make_omx(om.M, L, true);
    EXPECT_EQ(bits(forward(dsq, L, om, ff)), bits(fsc));
    EXPECT_EQ(bits(backward(dsq, L, om, ff, bf)), bits(bsc));
    EXPECT_EQ(bits(ff.totscale), bits(fp.totscale));
    EXPECT_EQ(bits(bf.totscale), bits(bp.totscale));
    EXPECT_EQ(bf.has_own_scales, bp.has_own_scales);
    for (std::size_t c = 0; c < static_cast<std::size_t>(L + 1) * kOmxNXCells; ++c) {
      EXPECT_EQ(bits(ff.xmx[c]), bits(fp.xmx[c])) << c;
      EXPECT_EQ(bits(bf.xmx[c]), bits(bp.xmx[c])) << c;
    }
    Omx ff2 = make_omx(om.M, L, true), bf2 = make_omx(om.M, L, true);
    EXPECT_EQ(bits(detail::forward_portable(dsq.data(), L, om, ff2, true)), bits(fsc));
    EXPECT_EQ(bits(detail::backward_portable(dsq.data(), L, om, ff2, bf2, true)), bits(bsc));
    const std::size_t n = static_cast<std::size_t>(L + 1) * ff.row_stride();
    for (std::size_t c = 0; c < n; ++c) {
      if (bits(ff.dp[c]) != bits(ff2.dp[c]) || bits(bf.dp[c]) != bits(bf2.dp[c])) {
        ADD_FAILURE() << "portable and SSE matrices differ at float " << c;
        break;
      }
    }
  }
  return {fsc, bsc};
}

/// Forward and Backward sum over the same paths; in float with rescaling they agree to ~1e-6 relative
/// per row, so allow a small absolute slack growing with L.
void expect_fwd_bck_close(float fsc, float bsc, int L) {
  EXPECT_NEAR(fsc, bsc, 1e-4 + 2e-6 * L + 1e-5 * std::fabs(fsc)) << "L=" << L;
}

/// H2's generic Forward/Backward use HMMER's flogsum table (error ~1e-4 nats per logsum), so compare
/// within a tolerance that allows for that.
void expect_generic_close(const Dsq& dsq, int L, const Model& m, float fsc, float bsc) {
  const float gf = generic_forward(dsq, L, m.gm);
  const float gb = generic_backward(dsq, L, m.gm);
  EXPECT_NEAR(fsc, gf, 0.01 + 1e-5 * L) << "M=" << m.om.M << " L=" << L;
  EXPECT_NEAR(bsc, gb, 0.01 + 1e-5 * L) << "M=" << m.om.M << " L=" << L;
}

TEST(HmmFwdBack, ParserFullPortableAgreeAndMatchGeneric) {
  std::mt19937 rng(11);
  for (int M : {1, 2, 6, 13, 45, 99, 100, 120, 400}) {
    for (int L : {1, 2, 9, 150, 700}) {
      Model m = hmmtest::random_configured_model(static_cast<uint32_t>(1000 + M * 7 + L), M, L);
      for (int variant = 0; variant < 2; ++variant) {
        const Dsq dsq = variant == 0 ? h2test::random_dsq(rng, L, abc(AbcType::kAmino), 0.02)
                                     : h2test::planted_dsq(rng, m.hmm, L, 1 + L / 100);
        const auto [fsc, bsc] = check_modes(dsq, L, m.om);
        EXPECT_TRUE(std::isfinite(fsc));
        expect_fwd_bck_close(fsc, bsc, L);
        expect_generic_close(dsq, L, m, fsc, bsc);
      }
    }
  }
}

TEST(HmmFwdBack, ReconfiguredLengthAndUnihit) {
  // One profile reused for several lengths (as the pipeline does), multihit and unihit. Unihit is used
  // by HMMER only on single-domain envelopes: with several strong domains the float Forward's N/B
  // underflow after the first domain's rescaling (HMMER's behaviour too), so plant one copy there.
  std::mt19937 rng(5);
  Model m = hmmtest::random_configured_model(99, 80, 400);
  for (int unihit = 0; unihit < 2; ++unihit) {
    if (unihit) {
      reconfig_unihit(m.om, 400);
      reconfig_unihit(m.gm, 400);
    }
    for (int L : {1, 37, 400, 1500}) {
      reconfig_length(m.om, L);
      reconfig_length(m.gm, L);
      const Dsq dsq = h2test::planted_dsq(rng, m.hmm, L, unihit ? 1 : 1 + L / 90);
      const auto [fsc, bsc] = check_modes(dsq, L, m.om);
      expect_fwd_bck_close(fsc, bsc, L);
      expect_generic_close(dsq, L, m, fsc, bsc);
      FlushToZeroScope ftz;
      Omx ox = make_omx(m.om.M, L, true);
      (void)forward(dsq, L, m.om, ox);
      expect_forward_equals_scalar(dsq, L, m.om);
    }
  }
}

TEST(HmmFwdBack, LongSequences) {
  std::mt19937 rng(3);
  const int L = 120000;
  Model m = hmmtest::random_configured_model(123, 60, L);
  const Dsq dsq = h2test::planted_dsq(rng, m.hmm, L, 400);
  const auto [fsc, bsc] = check_modes(dsq, L, m.om, /*with_full=*/true);
  expect_fwd_bck_close(fsc, bsc, L);
  expect_generic_close(dsq, L, m, fsc, bsc);
  // Random background sequence: totscale stays small, score is dominated by the length model.
  const Dsq bg = h2test::random_dsq(rng, L, abc(AbcType::kAmino));
  const auto [f2, b2] = check_modes(bg, L, m.om, /*with_full=*/false);
  expect_fwd_bck_close(f2, b2, L);
  expect_generic_close(bg, L, m, f2, b2);
}

TEST(HmmFwdBack, EmptySequenceForwardIsMinusInfinity) {
  Model m = hmmtest::random_configured_model(1, 10, 0);
  Dsq dsq = {kDsqSentinel, kDsqSentinel};
  Omx ox = make_omx(m.om.M, 0, false);
  const float sc = forward_parser(dsq, 0, m.om, ox);
  EXPECT_TRUE(std::isinf(sc) && sc < 0.0f);
}

TEST(HmmFwdBack, MatrixTooSmallThrows) {
  Model m = hmmtest::random_configured_model(2, 30, 50);
  std::mt19937 rng(2);
  const Dsq dsq = h2test::random_dsq(rng, 50, abc(AbcType::kAmino));
  Omx small = make_omx(30, 49, true);
  EXPECT_THROW((void)forward(dsq, 50, m.om, small), Error);
  Omx parser = make_omx(30, 50, false);
  EXPECT_THROW((void)forward(dsq, 50, m.om, parser), Error);  // one row only
  Omx narrow = make_omx(8, 50, false);
  EXPECT_THROW((void)forward_parser(dsq, 50, m.om, narrow), Error);
  // Growing fixes it; a grown matrix can be reused for a smaller problem.
  grow_to(small, 30, 50, true);
  EXPECT_NO_THROW((void)forward(dsq, 50, m.om, small));
  EXPECT_NO_THROW((void)forward(dsq, 20, m.om, small));
  grow_to(narrow, 300, 10, false);
  EXPECT_GE(narrow.allocQ4 * 4, 300);
}

TEST(HmmFwdBack, WideMatrixReusedForSmallerModel) {
  // Rows are strided by allocQ4 (as HMMER's dpf rows), so results must not depend on the allocation.
  std::mt19937 rng(8);
  Model m = hmmtest::random_configured_model(4, 21, 80);
  const Dsq dsq = h2test::planted_dsq(rng, m.hmm, 80, 2);
  FlushToZeroScope ftz;
  Omx tight = make_omx(21, 80, true), wide = make_omx(500, 200, true);
  const float a = forward(dsq, 80, m.om, tight);
  const float b = forward(dsq, 80, m.om, wide);
  EXPECT_EQ(bits(a), bits(b));
  Omx bt = make_omx(21, 80, true), bw = make_omx(500, 200, true);
  EXPECT_EQ(bits(backward(dsq, 80, m.om, tight, bt)), bits(backward(dsq, 80, m.om, wide, bw)));
  for (int i = 0; i <= 80; ++i)
    for (int k = 1; k <= 21; ++k) {
      EXPECT_EQ(bits(tight.get_mdi(kOmxM, i, k)), bits(wide.get_mdi(kOmxM, i, k)));
      EXPECT_EQ(bits(bt.get_mdi(kOmxI, i, k)), bits(bw.get_mdi(kOmxI, i, k)));
    }
}

TEST(HmmFwdBack, GrowToRestripesNarrowWhenWideRowsDoNotFit) {
  // A matrix used by a long model keeps its wide rows while they fit; when a shorter model needs more
  // rows than fit at that width, it is re-striped to the shorter model's width (not wide x rows), and
  // growth in place keeps the DP's results.
  Omx ox = make_omx(2000, 10, true);  // 500 vectors per state, 11 rows
  EXPECT_EQ(ox.allocQ4, 500);
  const std::size_t wide_size = ox.dp.size();
  grow_to(ox, 40, 10, true);  // fits at the wide width: kept
  EXPECT_EQ(ox.allocQ4, 500);
  EXPECT_EQ(ox.dp.size(), wide_size);
  grow_to(ox, 40, 400, true);  // 401 rows of Q = 10 fit in the allocation: narrow, no growth
  EXPECT_EQ(ox.allocQ4, 10);
  EXPECT_EQ(ox.dp.size(), wide_size);
  EXPECT_GE(ox.validR, 401);
  grow_to(ox, 40, 5000, true);  // more than fits: grows to exactly Q = 10 x 5001 rows
  EXPECT_EQ(ox.allocQ4, 10);
  EXPECT_EQ(ox.dp.size(), static_cast<std::size_t>(10) * kOmxNSCells * 4 * 5001);
  EXPECT_EQ(ox.validR, 5001);

  std::mt19937 rng(9);
  Model m = hmmtest::random_configured_model(5, 40, 300);
  const Dsq dsq = h2test::planted_dsq(rng, m.hmm, 300, 2);
  FlushToZeroScope ftz;
  Omx fresh = make_omx(40, 300, true);
  EXPECT_EQ(bits(forward(dsq, 300, m.om, ox)), bits(forward(dsq, 300, m.om, fresh)));
}
TEST(HmmFwdBack, RealModelsOnRealSequences) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const auto dir = test::testdata_dir();
  const auto seqs = h2test::read_fasta((dir / "prot/globins45.fa").string(), abc(AbcType::kAmino), 20);
  ASSERT_FALSE(seqs.empty());
  for (const char* name :
       {"hmm/globins4.hmm", "hmm/fn3.hmm", "hmm/Pkinase.hmm", "hmm/M1.hmm", "hmm/20aa.hmm"}) {
    if (!std::filesystem::exists(dir / name)) continue;
    HmmReader reader((dir / name).string());
    auto hmm = reader.next();
    ASSERT_TRUE(hmm.has_value()) << name;
    if (hmm->abc->type != AbcType::kAmino) continue;
    Model m = hmmtest::configure_model(*hmm, 400);
    for (const auto& s : seqs) {
      reconfig_length(m.om, s.L);
      reconfig_length(m.gm, s.L);
      const auto [fsc, bsc] = check_modes(s.dsq, s.L, m.om);
      expect_fwd_bck_close(fsc, bsc, s.L);
      expect_generic_close(s.dsq, s.L, m, fsc, bsc);
      expect_forward_equals_scalar(s.dsq, s.L, m.om);
    }
  }
}

}  // namespace
}  // namespace warpsearch::hmm
