// Tests of the stochastic traceback (src/hmm/stotrace.hpp): sampled traces are valid profile paths;
// the striped implementation equals a straightforward non-striped reference (same float products, same
// Easel draws) trace for trace; and on a tiny model the sampling frequencies of states match the
// posterior decoding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "h2_support.hpp"
#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/decoding.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmm.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm/rng.hpp"
#include "hmm/stotrace.hpp"
#include "hmm/trace.hpp"
#include "hmm_test_support.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

using Problem = hmmtest::DecodedProblem;
using hmmtest::make_decoded_problem;

// ---- non-striped reference: the same products, read through (node, row) accessors ----------------
// (path weights are normalized with the library's fnorm, esl_vec_FNorm, as the striped code does)

/// Value of cell s at (i, k), 0 for k == 0 (the zero shifted into lane 0 of vector 0).
float cell(const Omx& ox, int s, int i, int k) { return k == 0 ? 0.0f : ox.get_mdi(s, i, k); }
/// Transition slot t of node k, 0 for k == 0.
float trans(const OProfile& om, int t, int k) { return k == 0 ? 0.0f : om.fwd_trans(t, k); }

void reference_trace(Rng& rng, int L, const OProfile& om, const Omx& fwd, Trace& tr) {
  const int M = om.M;
  int i = L, k = 0;
  tr.append(kTT, 0, i);
  tr.append(kTC, 0, i);
  TraceState s0 = kTC;
  while (s0 != kTS) {
    TraceState s1 = kTBogus;
    if (s0 == kTM) {
      float p[4] = {fwd.x(i - 1, kOmxB) * om.fwd_trans(kOBM, k),
                    cell(fwd, kOmxM, i - 1, k - 1) * om.fwd_trans(kOMM, k),
                    cell(fwd, kOmxI, i - 1, k - 1) * om.fwd_trans(kOIM, k),
                    cell(fwd, kOmxD, i - 1, k - 1) * om.fwd_trans(kODM, k)};
      fnorm(p, 4);
      const TraceState st[4] = {kTB, kTM, kTI, kTD};
      s1 = st[rng.fchoose(p, 4)];
      --k;
      --i;
    } else if (s0 == kTD) {
      float p[2] = {cell(fwd, kOmxM, i, k - 1) * trans(om, kOMD, k - 1),
                    cell(fwd, kOmxD, i, k - 1) * trans(om, kODD, k - 1)};
      fnorm(p, 2);
      s1 = rng.fchoose(p, 2) == 0 ? kTM : kTD;
      --k;
    } else if (s0 == kTI) {
      float p[2] = {fwd.get_mdi(kOmxM, i - 1, k) * om.fwd_trans(kOMI, k),
                    fwd.get_mdi(kOmxI, i - 1, k) * om.fwd_trans(kOII, k)};
      fnorm(p, 2);
      s1 = rng.fchoose(p, 2) == 0 ? kTM : kTI;
      --i;
    } else if (s0 == kTN) {
      s1 = i == 0 ? kTS : kTN;
    } else if (s0 == kTC || s0 == kTJ) {
      const int xs = s0 == kTC ? kOmxC : kOmxJ;
      const int os = s0 == kTC ? kOC : kOJ;
      const int em = s0 == kTC ? kOMove : kOLoop;
      float p[2] = {fwd.x(i - 1, xs) * om.xf[os][kOLoop],
                    fwd.x(i, kOmxE) * om.xf[kOE][em] * fwd.x(i, kOmxScale)};
      fnorm(p, 2);
      s1 = rng.fchoose(p, 2) == 0 ? s0 : kTE;
    } else if (s0 == kTE) {
      // Striped scan order: vector q, M lanes then D lanes; node of (q, r) is r*Q + q + 1.
      const int Q = nqf(M);
      const double roll = rng.random();
      const float normf = static_cast<float>(1.0 / static_cast<double>(fwd.x(i, kOmxE)));
      double sum = 0.0;
      for (int pass = 0; s1 == kTBogus && pass < 3; ++pass) {
        for (int q = 0; q < Q && s1 == kTBogus; ++q) {
          for (int s : {static_cast<int>(kOmxM), static_cast<int>(kOmxD)}) {
            for (int r = 0; r < 4 && s1 == kTBogus; ++r) {
              const int kk = r * Q + q + 1;
              const float v = kk <= M ? fwd.get_mdi(s, i, kk) : fwd.row(i)[(q * 3 + s) * 4 + r];
              sum += static_cast<double>(v * normf);
              if (roll < sum) {
                s1 = s == kOmxM ? kTM : kTD;
                k = kk;
              }
            }
            if (s1 != kTBogus) break;
          }
        }
      }
      EXPECT_NE(s1, kTBogus);
      if (s1 == kTBogus) return;
    } else if (s0 == kTB) {
      float p[2] = {fwd.x(i, kOmxN) * om.xf[kON][kOMove], fwd.x(i, kOmxJ) * om.xf[kOJ][kOMove]};
      fnorm(p, 2);
      s1 = rng.fchoose(p, 2) == 0 ? kTN : kTJ;
    }
    tr.append(s1, k, i);
    if ((s1 == kTN || s1 == kTJ || s1 == kTC) && s1 == s0) --i;
    s0 = s1;
  }
  tr.M = M;
  tr.L = L;
  tr.reverse();
}

void expect_same_trace(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.N, b.N);
  for (std::size_t z = 0; z < static_cast<std::size_t>(a.N); ++z) {
    ASSERT_EQ(a.st[z], b.st[z]) << "z=" << z;
    ASSERT_EQ(a.k[z], b.k[z]) << "z=" << z;
    ASSERT_EQ(a.i[z], b.i[z]) << "z=" << z;
  }
}

TEST(HmmStoTrace, ValidAndEqualToReferenceOnRandomModels) {
  std::mt19937 gen(7);
  const Abc& a = abc(AbcType::kAmino);
  for (int M : {1, 2, 3, 4, 5, 8, 9, 13, 31, 64, 117}) {
    for (int L : {1, 2, 7, 40, 150}) {
      const Hmm h = h2test::random_hmm(gen, M, a, false);
      const Dsq dsq = h2test::random_dsq(gen, L, a, 0.05);
      Problem p = make_decoded_problem(h, dsq, L);
      Rng r1(42, RngKind::kFast), r2(42, RngKind::kFast);
      for (int n = 0; n < 30; ++n) {
        Trace t1(true), t2;
        stochastic_trace(r1, p.dsq, L, p.om, p.fwd, t1);
        reference_trace(r2, L, p.om, p.fwd, t2);
        EXPECT_EQ(validate_trace(t1, p.dsq.data(), L), "") << "M=" << M << " L=" << L;
        EXPECT_EQ(t1.M, M);
        EXPECT_EQ(t1.L, L);
        expect_same_trace(t1, t2);
        if (HasFatalFailure()) return;
      }
      EXPECT_EQ(r1.random_uint32(), r2.random_uint32()) << "same number of draws";
    }
  }
}

TEST(HmmStoTrace, RealModelsAndHomologs) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  const std::string path = (test::testdata_dir() / "hmm/fn3.hmm").string();
  const std::vector<Hmm> hmms = read_all_hmms(path);
  ASSERT_FALSE(hmms.empty());
  const Hmm& h = hmms.front();
  std::mt19937 gen(11);
  // A sequence made of two consensus copies in random flanks: traces should find >= 1 domain mostly.
  Dsq dsq{kDsqSentinel};
  auto add_random = [&](int n) {
    for (int j = 0; j < n; ++j) dsq.push_back(static_cast<uint8_t>(gen() % 20));
  };
  auto add_consensus = [&] {
    for (int k = 1; k <= h.M; ++k) {
      const auto& m = h.mat[static_cast<std::size_t>(k)];
      int best = 0;
      for (int x = 1; x < h.abc->K; ++x)
        if (m[static_cast<std::size_t>(x)] > m[static_cast<std::size_t>(best)]) best = x;
      dsq.push_back(static_cast<uint8_t>(best));
    }
  };
  add_random(30);
  add_consensus();
  add_random(20);
  add_consensus();
  add_random(25);
  dsq.push_back(kDsqSentinel);
  const int L = static_cast<int>(dsq.size()) - 2;
  Problem p = make_decoded_problem(h, dsq, L);
  Rng r1(42, RngKind::kFast), r2(42, RngKind::kFast);
  int with_two = 0;
  for (int n = 0; n < 200; ++n) {
    Trace t1(true), t2;
    stochastic_trace(r1, p.dsq, L, p.om, p.fwd, t1);
    reference_trace(r2, L, p.om, p.fwd, t2);
    ASSERT_EQ(validate_trace(t1, p.dsq.data(), L), "");
    expect_same_trace(t1, t2);
    t1.index();
    if (t1.ndom == 2) ++with_two;
  }
  EXPECT_GT(with_two, 150);
}

TEST(HmmStoTrace, SampleFrequenciesMatchPosteriors) {
  std::mt19937 gen(3);
  const Abc& a = abc(AbcType::kAmino);
  const Hmm h = h2test::random_hmm(gen, 4, a, false);
  const int L = 7;
  const Dsq dsq = h2test::random_dsq(gen, L, a);
  Problem p = make_decoded_problem(h, dsq, L);
  const int M = h.M;
  const int nsamples = 40000;
  // counts[i][k][s]: M and I usage per residue; xcounts[i][N/C/J] emissions.
  std::vector<double> cm(static_cast<std::size_t>((L + 1) * (M + 1)), 0.0), ci(cm.size(), 0.0);
  std::vector<double> cn(static_cast<std::size_t>(L + 1), 0.0), cc(cn.size(), 0.0), cj(cn.size(), 0.0);
  Rng rng(42, RngKind::kFast);
  Trace tr;
  for (int n = 0; n < nsamples; ++n) {
    tr.reuse();
    stochastic_trace(rng, p.dsq, L, p.om, p.fwd, tr);
    for (std::size_t z = 0; z < static_cast<std::size_t>(tr.N); ++z) {
      const int i = tr.i[z];
      if (i == 0) continue;
      const std::size_t ik = static_cast<std::size_t>(i * (M + 1) + tr.k[z]);
      switch (tr.st[z]) {
        case kTM: cm[ik] += 1.0; break;
        case kTI: ci[ik] += 1.0; break;
        case kTN: cn[static_cast<std::size_t>(i)] += 1.0; break;
        case kTC: cc[static_cast<std::size_t>(i)] += 1.0; break;
        case kTJ: cj[static_cast<std::size_t>(i)] += 1.0; break;
        default: break;
      }
    }
  }
  auto check = [&](double count, float post, const char* what, int i, int k) {
    const double f = count / nsamples;
    const double pr = static_cast<double>(post);
    const double sigma = std::sqrt(std::max(pr * (1.0 - pr), 1e-6) / nsamples);
    EXPECT_NEAR(f, pr, 5.0 * sigma + 1e-3) << what << " i=" << i << " k=" << k;
  };
  for (int i = 1; i <= L; ++i) {
    for (int k = 1; k <= M; ++k) {
      const std::size_t ik = static_cast<std::size_t>(i * (M + 1) + k);
      check(cm[ik], p.pp.get_mdi(kOmxM, i, k), "M", i, k);
      if (k < M) check(ci[ik], p.pp.get_mdi(kOmxI, i, k), "I", i, k);
    }
    check(cn[static_cast<std::size_t>(i)], p.pp.x(i, kOmxN), "N", i, 0);
    check(cc[static_cast<std::size_t>(i)], p.pp.x(i, kOmxC), "C", i, 0);
    check(cj[static_cast<std::size_t>(i)], p.pp.x(i, kOmxJ), "J", i, 0);
  }
}

TEST(HmmStoTrace, RejectsNonEmptyTrace) {
  std::mt19937 gen(5);
  const Abc& a = abc(AbcType::kAmino);
  const Hmm h = h2test::random_hmm(gen, 6, a, false);
  const Dsq dsq = h2test::random_dsq(gen, 10, a);
  Problem p = make_decoded_problem(h, dsq, 10);
  Rng rng(42, RngKind::kFast);
  Trace tr;
  tr.append(kTS, 0, 0);
  EXPECT_THROW(stochastic_trace(rng, p.dsq, 10, p.om, p.fwd, tr), Error);
}

}  // namespace
}  // namespace warpsearch::hmm
