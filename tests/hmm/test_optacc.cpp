// Tests of optimal accuracy alignment (src/hmm/optacc.hpp): the striped SSE fill equals the portable
// fill and a non-striped float reference (HMMER's masked-max recurrence written per node) bit for bit;
// the OA traceback equals a non-striped reference traceback; the OA value equals a straightforward
// double-precision optimal-accuracy DP, is the summed posterior of the trace it returns, and is not
// beaten by any sampled path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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
#include "hmm/optacc.hpp"
#include "hmm/profile.hpp"
#include "hmm/rng.hpp"
#include "hmm/stotrace.hpp"
#include "hmm/trace.hpp"
#include "hmm_test_support.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

using Problem = hmmtest::DecodedProblem;
using hmmtest::make_decoded_problem;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

/// Per-node float reference of HMMER's OA recurrence: a zero-probability transition masks its source to
/// +0 (not -inf); node 0 values are -inf; D(i,1) = -inf.
struct RefOA {
  int M = 0, L = 0;
  std::vector<float> m, d, ins;           // [(L+1)*(M+1)]
  std::vector<float> xe, xn, xj, xb, xc;  // [L+1]
  float at(const std::vector<float>& v, int i, int k) const {
    return v[static_cast<std::size_t>(i * (M + 1) + k)];
  }
  float& at(std::vector<float>& v, int i, int k) { return v[static_cast<std::size_t>(i * (M + 1) + k)]; }
};

float mask(float t, float v) { return t > 0.0f ? v : 0.0f; }
float fmaxh(float a, float b) { return a > b ? a : b; }

RefOA reference_oa(const OProfile& om, const Omx& pp) {
  RefOA r;
  r.M = om.M;
  r.L = pp.L;
  const int M = r.M, L = r.L;
  const std::size_t n = static_cast<std::size_t>((L + 1) * (M + 1));
  r.m.assign(n, -kInf);
  r.d.assign(n, -kInf);
  r.ins.assign(n, -kInf);
  for (auto* v : {&r.xe, &r.xn, &r.xj, &r.xb, &r.xc}) v->assign(static_cast<std::size_t>(L + 1), 0.0f);
  r.xe[0] = -kInf;
  r.xn[0] = 0.0f;
  r.xj[0] = -kInf;
  r.xb[0] = 0.0f;
  r.xc[0] = -kInf;
  for (int i = 1; i <= L; ++i) {
    const std::size_t ii = static_cast<std::size_t>(i);
    float e = -kInf;
    for (int k = 1; k <= M; ++k) {
      float sv = mask(om.fwd_trans(kOBM, k), r.xb[ii - 1]);
      sv = fmaxh(sv, mask(om.fwd_trans(kOMM, k), r.at(r.m, i - 1, k - 1)));
      sv = fmaxh(sv, mask(om.fwd_trans(kOIM, k), r.at(r.ins, i - 1, k - 1)));
      sv = fmaxh(sv, mask(om.fwd_trans(kODM, k), r.at(r.d, i - 1, k - 1)));
      r.at(r.m, i, k) = sv + pp.get_mdi(kOmxM, i, k);
      const float iv = fmaxh(mask(om.fwd_trans(kOMI, k), r.at(r.m, i - 1, k)),
                             mask(om.fwd_trans(kOII, k), r.at(r.ins, i - 1, k)));
      r.at(r.ins, i, k) = iv + pp.get_mdi(kOmxI, i, k);
      if (k > 1)
        r.at(r.d, i, k) = fmaxh(mask(om.fwd_trans(kOMD, k - 1), r.at(r.m, i, k - 1)),
                                mask(om.fwd_trans(kODD, k - 1), r.at(r.d, i, k - 1)));
      e = fmaxh(e, r.at(r.m, i, k));
      e = fmaxh(e, r.at(r.d, i, k));
    }
    r.xe[ii] = e;
    float t1 = om.xf[kOJ][kOLoop] == 0.0f ? 0.0f : r.xj[ii - 1] + pp.x(i, kOmxJ);
    float t2 = om.xf[kOE][kOLoop] == 0.0f ? 0.0f : e;
    r.xj[ii] = fmaxh(t1, t2);
    t1 = om.xf[kOC][kOLoop] == 0.0f ? 0.0f : r.xc[ii - 1] + pp.x(i, kOmxC);
    t2 = om.xf[kOE][kOMove] == 0.0f ? 0.0f : e;
    r.xc[ii] = fmaxh(t1, t2);
    r.xn[ii] = om.xf[kON][kOLoop] == 0.0f ? 0.0f : r.xn[ii - 1] + pp.x(i, kOmxN);
    t1 = om.xf[kON][kOMove] == 0.0f ? 0.0f : r.xn[ii];
    t2 = om.xf[kOJ][kOMove] == 0.0f ? 0.0f : r.xj[ii];
    r.xb[ii] = fmaxh(t1, t2);
  }
  return r;
}

/// Straightforward optimal accuracy in double: max over paths with nonzero transitions of the summed
/// posteriors of the emitted residues (M, I, and N/C/J emissions).
double double_oa(const OProfile& om, const Omx& pp) {
  const int M = om.M, L = pp.L;
  const double ninf = -std::numeric_limits<double>::infinity();
  auto ok = [](float t) { return t > 0.0f; };
  std::vector<double> m(static_cast<std::size_t>((L + 1) * (M + 2)), ninf), in(m.size(), ninf),
      d(m.size(), ninf);
  auto ix = [M](int i, int k) { return static_cast<std::size_t>(i * (M + 2) + k); };
  double N = 0.0, J = ninf, C = ninf, B = 0.0;
  for (int i = 1; i <= L; ++i) {
    double E = ninf;
    for (int k = 1; k <= M; ++k) {
      double best = ok(om.fwd_trans(kOBM, k)) ? B : ninf;
      if (k > 1) {
        if (ok(om.fwd_trans(kOMM, k))) best = std::max(best, m[ix(i - 1, k - 1)]);
        if (ok(om.fwd_trans(kOIM, k))) best = std::max(best, in[ix(i - 1, k - 1)]);
        if (ok(om.fwd_trans(kODM, k))) best = std::max(best, d[ix(i - 1, k - 1)]);
      }
      m[ix(i, k)] = best + pp.get_mdi(kOmxM, i, k);
      double bi = ninf;
      if (ok(om.fwd_trans(kOMI, k))) bi = std::max(bi, m[ix(i - 1, k)]);
      if (ok(om.fwd_trans(kOII, k))) bi = std::max(bi, in[ix(i - 1, k)]);
      in[ix(i, k)] = bi + pp.get_mdi(kOmxI, i, k);
      double bd = ninf;
      if (k > 1) {
        if (ok(om.fwd_trans(kOMD, k - 1))) bd = std::max(bd, m[ix(i, k - 1)]);
        if (ok(om.fwd_trans(kODD, k - 1))) bd = std::max(bd, d[ix(i, k - 1)]);
      }
      d[ix(i, k)] = bd;
      E = std::max({E, m[ix(i, k)], d[ix(i, k)]});
    }
    J = std::max(ok(om.xf[kOJ][kOLoop]) ? J + pp.x(i, kOmxJ) : ninf, ok(om.xf[kOE][kOLoop]) ? E : ninf);
    C = std::max(ok(om.xf[kOC][kOLoop]) ? C + pp.x(i, kOmxC) : ninf, ok(om.xf[kOE][kOMove]) ? E : ninf);
    N = ok(om.xf[kON][kOLoop]) ? N + pp.x(i, kOmxN) : ninf;
    B = std::max(ok(om.xf[kON][kOMove]) ? N : ninf, ok(om.xf[kOJ][kOMove]) ? J : ninf);
  }
  return C;
}

/// Reference OA traceback on the RefOA matrix with HMMER's tie rules.
void reference_oa_trace(const OProfile& om, const Omx& pp, const RefOA& r, Trace& tr) {
  const int M = r.M;
  int i = r.L, k = 0;
  tr.append_with_pp(kTT, 0, i, 0.0f);
  tr.append_with_pp(kTC, 0, i, 0.0f);
  TraceState s0 = kTC;
  auto val = [&](const std::vector<float>& v, int ii, int kk) { return kk == 0 ? 0.0f : r.at(v, ii, kk); };
  auto tr_or0 = [&](int t, int kk) { return kk == 0 ? 0.0f : om.fwd_trans(t, kk); };
  while (s0 != kTS) {
    TraceState s1 = kTBogus;
    const auto ui = static_cast<std::size_t>(i);
    switch (s0) {
      case kTM: {
        float path[4] = {om.fwd_trans(kOMM, k) == 0.0f ? -kInf : val(r.m, i - 1, k - 1),
                         om.fwd_trans(kOIM, k) == 0.0f ? -kInf : val(r.ins, i - 1, k - 1),
                         om.fwd_trans(kODM, k) == 0.0f ? -kInf : val(r.d, i - 1, k - 1),
                         om.fwd_trans(kOBM, k) == 0.0f ? -kInf : r.xb[ui - 1]};
        int best = 0;
        for (int j = 1; j < 4; ++j)
          if (path[j] > path[best]) best = j;
        const TraceState st[4] = {kTM, kTI, kTD, kTB};
        s1 = st[best];
        --k;
        --i;
        break;
      }
      case kTD: {
        const float p0 = tr_or0(kOMD, k - 1) == 0.0f ? -kInf : val(r.m, i, k - 1);
        const float p1 = tr_or0(kODD, k - 1) == 0.0f ? -kInf : val(r.d, i, k - 1);
        s1 = p0 >= p1 ? kTM : kTD;
        --k;
        break;
      }
      case kTI: {
        const float p0 = om.fwd_trans(kOMI, k) == 0.0f ? -kInf : r.at(r.m, i - 1, k);
        const float p1 = om.fwd_trans(kOII, k) == 0.0f ? -kInf : r.at(r.ins, i - 1, k);
        s1 = p0 >= p1 ? kTM : kTI;
        --i;
        break;
      }
      case kTN: s1 = i == 0 ? kTS : kTN; break;
      case kTC: {
        const float p0 = om.xf[kOC][kOLoop] == 0.0f ? -kInf : r.xc[ui - 1] + pp.x(i, kOmxC);
        const float p1 = om.xf[kOE][kOMove] == 0.0f ? -kInf : r.xe[ui];
        s1 = p0 > p1 ? kTC : kTE;
        break;
      }
      case kTJ: {
        const float p0 = om.xf[kOJ][kOLoop] == 0.0f ? -kInf : r.xj[ui - 1] + pp.x(i, kOmxJ);
        const float p1 = om.xf[kOE][kOLoop] == 0.0f ? -kInf : r.xe[ui];
        s1 = p0 > p1 ? kTJ : kTE;
        break;
      }
      case kTE: {
        // Striped scan order: q-major, M lanes (>=) then D lanes (>); node of (q, z) is z*Q + q + 1.
        const int Q = nqf(M);
        float mx = -kInf;
        for (int q = 0; q < Q; ++q) {
          for (int z = 0; z < 4; ++z) {
            const int kk = z * Q + q + 1;
            const float v = kk <= M ? r.at(r.m, i, kk) : 0.0f;  // padding cells hold 0
            if (v >= mx) {
              mx = v;
              s1 = kTM;
              k = kk;
            }
          }
          for (int z = 0; z < 4; ++z) {
            const int kk = z * Q + q + 1;
            const float v = kk <= M ? r.at(r.d, i, kk) : 0.0f;
            if (v > mx) {
              mx = v;
              s1 = kTD;
              k = kk;
            }
          }
        }
        break;
      }
      case kTB: {
        const float p0 = om.xf[kON][kOMove] == 0.0f ? -kInf : r.xn[ui];
        const float p1 = om.xf[kOJ][kOMove] == 0.0f ? -kInf : r.xj[ui];
        s1 = p0 > p1 ? kTN : kTJ;
        break;
      }
      default: FAIL() << "bogus state";
    }
    float post = 0.0f;
    if (s1 == kTM) post = pp.get_mdi(kOmxM, i, k);
    if (s1 == kTI) post = pp.get_mdi(kOmxI, i, k);
    if (s1 == s0 && s1 == kTN) post = pp.x(i, kOmxN);
    if (s1 == s0 && s1 == kTC) post = pp.x(i, kOmxC);
    if (s1 == s0 && s1 == kTJ) post = pp.x(i, kOmxJ);
    tr.append_with_pp(s1, k, i, post);
    if ((s1 == kTN || s1 == kTJ || s1 == kTC) && s1 == s0) --i;
    s0 = s1;
  }
  tr.M = M;
  tr.L = r.L;
  tr.reverse();
}

/// Summed posterior (double) of a trace's residues read from the pp matrix.
double trace_accuracy(const Trace& tr, const Omx& pp) {
  double acc = 0.0;
  for (std::size_t z = 0; z < static_cast<std::size_t>(tr.N); ++z) {
    const int i = tr.i[z];
    if (i == 0) continue;
    switch (tr.st[z]) {
      case kTM: acc += pp.get_mdi(kOmxM, i, tr.k[z]); break;
      case kTI: acc += pp.get_mdi(kOmxI, i, tr.k[z]); break;
      case kTN: acc += pp.x(i, kOmxN); break;
      case kTC: acc += pp.x(i, kOmxC); break;
      case kTJ: acc += pp.x(i, kOmxJ); break;
      default: break;
    }
  }
  return acc;
}

void check_problem(Problem& p, int nsampled) {
  const int M = p.om.M, L = p.L;
  Omx ox = make_omx(M, L, true);
  Omx ox2 = make_omx(M, L, true);
  const float e = optimal_accuracy(p.om, p.pp, ox);
  const float e2 = optimal_accuracy_portable(p.om, p.pp, ox2);
  ASSERT_TRUE(same_bits(e, e2));
  EXPECT_EQ(ox.M, M);
  EXPECT_EQ(ox.L, L);
  const RefOA ref = reference_oa(p.om, p.pp);
  for (int i = 0; i <= L; ++i) {
    for (int k = 1; k <= M; ++k) {
      for (int s : {static_cast<int>(kOmxM), static_cast<int>(kOmxD), static_cast<int>(kOmxI)}) {
        ASSERT_TRUE(same_bits(ox.get_mdi(s, i, k), ox2.get_mdi(s, i, k))) << "i=" << i << " k=" << k;
      }
      if (i == 0) continue;
      ASSERT_TRUE(same_bits(ox.get_mdi(kOmxM, i, k), ref.at(ref.m, i, k))) << "M i=" << i << " k=" << k;
      ASSERT_TRUE(same_bits(ox.get_mdi(kOmxI, i, k), ref.at(ref.ins, i, k))) << "I i=" << i << " k=" << k;
      ASSERT_TRUE(same_bits(ox.get_mdi(kOmxD, i, k), ref.at(ref.d, i, k)))
          << "D i=" << i << " k=" << k << " " << ox.get_mdi(kOmxD, i, k) << " " << ref.at(ref.d, i, k);
    }
    const auto ui = static_cast<std::size_t>(i);
    ASSERT_TRUE(same_bits(ox.x(i, kOmxE), ref.xe[ui])) << i;
    ASSERT_TRUE(same_bits(ox.x(i, kOmxN), ref.xn[ui])) << i;
    ASSERT_TRUE(same_bits(ox.x(i, kOmxJ), ref.xj[ui])) << i;
    ASSERT_TRUE(same_bits(ox.x(i, kOmxB), ref.xb[ui])) << i;
    ASSERT_TRUE(same_bits(ox.x(i, kOmxC), ref.xc[ui])) << i;
  }
  const double dref = double_oa(p.om, p.pp);
  EXPECT_NEAR(static_cast<double>(e), dref, 1e-5 * (1.0 + dref));

  Trace tr(true), rtr(true);
  oa_trace(p.om, p.pp, ox, tr);
  reference_oa_trace(p.om, p.pp, ref, rtr);
  ASSERT_EQ(validate_trace(tr, p.dsq.data(), L), "");
  ASSERT_EQ(tr.N, rtr.N);
  for (std::size_t z = 0; z < static_cast<std::size_t>(tr.N); ++z) {
    ASSERT_EQ(tr.st[z], rtr.st[z]) << z;
    ASSERT_EQ(tr.k[z], rtr.k[z]) << z;
    ASSERT_EQ(tr.i[z], rtr.i[z]) << z;
    ASSERT_TRUE(same_bits(tr.pp[z], rtr.pp[z])) << z;
  }
  // The trace's summed posterior is the OA value (up to float summation order).
  EXPECT_NEAR(trace_accuracy(tr, p.pp), dref, 1e-5 * (1.0 + dref));
  EXPECT_NEAR(static_cast<double>(tr.expected_accuracy()), dref, 1e-4 * (1.0 + dref));
  // Only transitions of nonzero probability are used (B->Mk, M->M, ..., as the masks require).
  for (std::size_t z = 1; z < static_cast<std::size_t>(tr.N); ++z) {
    const int s = tr.st[z], prv = tr.st[z - 1], k = tr.k[z];
    float t = 1.0f;  // probability of the transition prv -> s, where it is a core-model one
    if (s == kTM && prv == kTB) t = p.om.fwd_trans(kOBM, k);
    if (s == kTM && prv == kTM) t = p.om.fwd_trans(kOMM, k);
    if (s == kTM && prv == kTI) t = p.om.fwd_trans(kOIM, k);
    if (s == kTM && prv == kTD) t = p.om.fwd_trans(kODM, k);
    if (s == kTI && prv == kTM) t = p.om.fwd_trans(kOMI, k);
    if (s == kTD && prv == kTM) t = p.om.fwd_trans(kOMD, k - 1);
    EXPECT_GT(t, 0.0f) << "z=" << z;
  }
  // No sampled path has a higher expected accuracy.
  Rng rng(42, RngKind::kFast);
  for (int n = 0; n < nsampled; ++n) {
    Trace st;
    stochastic_trace(rng, p.dsq, L, p.om, p.fwd, st);
    EXPECT_LE(trace_accuracy(st, p.pp), dref + 1e-5 * (1.0 + dref));
  }
}

TEST(HmmOptAcc, RandomModelsMatchReferences) {
  std::mt19937 gen(17);
  const Abc& a = abc(AbcType::kAmino);
  for (int M : {1, 2, 3, 4, 5, 7, 8, 9, 16, 33, 100}) {
    for (int L : {1, 2, 5, 30, 120}) {
      const Hmm h = h2test::random_hmm(gen, M, a, false);
      const Dsq dsq = h2test::random_dsq(gen, L, a, 0.05);
      Problem p = make_decoded_problem(h, dsq, L);
      check_problem(p, 20);
      if (HasFatalFailure()) {
        ADD_FAILURE() << "M=" << M << " L=" << L;
        return;
      }
    }
  }
}

TEST(HmmOptAcc, DnaAndUngappedModels) {
  std::mt19937 gen(23);
  const Abc& a = abc(AbcType::kDNA);
  for (int M : {3, 12, 50}) {
    for (bool ungapped : {false, true}) {
      const Hmm h = h2test::random_hmm(gen, M, a, ungapped);
      const Dsq dsq = h2test::random_dsq(gen, 80, a, 0.02);
      Problem p = make_decoded_problem(h, dsq, 80);
      check_problem(p, 10);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(HmmOptAcc, RealModelOnEmittedLikeSequence) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  const std::vector<Hmm> hmms = read_all_hmms((test::testdata_dir() / "hmm/globins4.hmm").string());
  ASSERT_FALSE(hmms.empty());
  const Hmm& h = hmms.front();
  std::mt19937 gen(29);
  Dsq dsq{kDsqSentinel};
  for (int j = 0; j < 15; ++j) dsq.push_back(static_cast<uint8_t>(gen() % 20));
  for (int k = 1; k <= h.M; ++k) {
    if (k % 17 == 0) continue;  // a few deletions
    const auto& m = h.mat[static_cast<std::size_t>(k)];
    int best = 0;
    for (int x = 1; x < h.abc->K; ++x)
      if (m[static_cast<std::size_t>(x)] > m[static_cast<std::size_t>(best)]) best = x;
    dsq.push_back(static_cast<uint8_t>(best));
    if (k % 29 == 0) dsq.push_back(static_cast<uint8_t>(gen() % 20));  // and insertions
  }
  for (int j = 0; j < 12; ++j) dsq.push_back(static_cast<uint8_t>(gen() % 20));
  dsq.push_back(kDsqSentinel);
  const int L = static_cast<int>(dsq.size()) - 2;
  Problem p = make_decoded_problem(h, dsq, L);
  check_problem(p, 50);
}

TEST(HmmOptAcc, TraceRequiresEmptyTraceWithPosteriors) {
  std::mt19937 gen(31);
  const Abc& a = abc(AbcType::kAmino);
  const Hmm h = h2test::random_hmm(gen, 6, a, false);
  const Dsq dsq = h2test::random_dsq(gen, 10, a);
  Problem p = make_decoded_problem(h, dsq, 10);
  Omx ox = make_omx(6, 10, true);
  optimal_accuracy(p.om, p.pp, ox);
  Trace no_pp;
  EXPECT_THROW(oa_trace(p.om, p.pp, ox, no_pp), Error);
  Trace nonempty(true);
  nonempty.append_with_pp(kTS, 0, 0, 0.0f);
  EXPECT_THROW(oa_trace(p.om, p.pp, ox, nonempty), Error);
  Omx small = make_omx(6, 5, true);
  EXPECT_THROW(optimal_accuracy(p.om, p.pp, small), Error);
}

}  // namespace
}  // namespace warpsearch::hmm
