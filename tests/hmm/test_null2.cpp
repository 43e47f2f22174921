// Tests of the null2 estimators (src/hmm/null2.hpp): SSE and portable paths give identical bits; a
// node-indexed float reference with HMMER's striped summation order gives identical bits; both agree
// with a direct double-precision computation (posterior-weighted / trace-count-weighted average of the
// match emission odds plus insert and N/C/J frequencies); degenerate-code averaging and special codes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "h2_support.hpp"
#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/decoding.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmm.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/null2.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm/rng.hpp"
#include "hmm/stotrace.hpp"
#include "hmm/trace.hpp"
#include "hmm_test_support.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

using Problem = hmmtest::DecodedProblem;
using hmmtest::make_decoded_problem;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

/// Float reference, node-indexed, in HMMER's order: per lane z of the striped layout (nodes
/// k = z*Q + q + 1, q = 0..Q-1), acc_z = sum over q of (m_k * rfv(x,k)) then + i_k; padding nodes
/// (k > M) contribute 0 * 0 + 0. Then (acc_0 + acc_1) + (acc_2 + acc_3) + xfactor.
void reference_finish(const OProfile& om, const std::vector<float>& m, const std::vector<float>& ins,
                      float fN, float fC, float fJ, float* null2) {
  const int Q = nqf(om.M);
  const Abc& a = *om.abc;
  const float xfactor = fN + fC + fJ;
  for (int x = 0; x < a.K; ++x) {
    float acc[4];
    for (int z = 0; z < 4; ++z) {
      acc[z] = 0.0f;
      for (int q = 0; q < Q; ++q) {
        const int k = z * Q + q + 1;
        const float mk = k <= om.M ? m[static_cast<std::size_t>(k)] : 0.0f;
        const float ik = k <= om.M ? ins[static_cast<std::size_t>(k)] : 0.0f;
        const float ek = k <= om.M ? om.fwd_match(x, k) : 0.0f;
        acc[z] = acc[z] + mk * ek;
        acc[z] = acc[z] + ik;
      }
    }
    const float s01 = acc[0] + acc[1];
    const float s23 = acc[2] + acc[3];
    null2[x] = s01 + s23;
    null2[x] += xfactor;
  }
  avg_sc_vec(a, null2);
  null2[a.K] = 1.0f;
  null2[a.Kp - 2] = 1.0f;
  null2[a.Kp - 1] = 1.0f;
}

float inverse_length(int Ld) { return static_cast<float>(1.0 / static_cast<double>(static_cast<float>(Ld))); }

void reference_by_expectation(const OProfile& om, const Omx& pp, float* null2) {
  const int M = om.M, Ld = pp.L;
  std::vector<float> m(static_cast<std::size_t>(M + 1)), ins(m.size());
  for (int k = 1; k <= M; ++k) {
    float sm = pp.get_mdi(kOmxM, 1, k), si = pp.get_mdi(kOmxI, 1, k);
    for (int i = 2; i <= Ld; ++i) {
      sm = pp.get_mdi(kOmxM, i, k) + sm;
      si = pp.get_mdi(kOmxI, i, k) + si;
    }
    m[static_cast<std::size_t>(k)] = sm;
    ins[static_cast<std::size_t>(k)] = si;
  }
  float fN = pp.x(1, kOmxN), fC = pp.x(1, kOmxC), fJ = pp.x(1, kOmxJ);
  for (int i = 2; i <= Ld; ++i) {
    fN += pp.x(i, kOmxN);
    fC += pp.x(i, kOmxC);
    fJ += pp.x(i, kOmxJ);
  }
  const float norm = inverse_length(Ld);
  for (int k = 1; k <= M; ++k) {
    m[static_cast<std::size_t>(k)] *= norm;
    ins[static_cast<std::size_t>(k)] *= norm;
  }
  reference_finish(om, m, ins, fN * norm, fC * norm, fJ * norm, null2);
}

/// Direct double computation of the same quantity from per-node frequencies.
std::vector<double> double_null2(const OProfile& om, const std::vector<double>& fm,
                                 const std::vector<double>& fi, double fncj) {
  const Abc& a = *om.abc;
  std::vector<double> out(static_cast<std::size_t>(a.Kp), 1.0);
  for (int x = 0; x < a.K; ++x) {
    double s = fncj;
    for (int k = 1; k <= om.M; ++k)
      s += fm[static_cast<std::size_t>(k)] * om.fwd_match(x, k) + fi[static_cast<std::size_t>(k)];
    out[static_cast<std::size_t>(x)] = s;
  }
  for (int x = a.K + 1; x <= a.Kp - 3; ++x) {
    double s = 0.0;
    for (int y = 0; y < a.K; ++y)
      if (a.degen[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)])
        s += out[static_cast<std::size_t>(y)];
    out[static_cast<std::size_t>(x)] = s / a.ndegen[static_cast<std::size_t>(x)];
  }
  return out;
}

void expect_close(const float* got, const std::vector<double>& want, int Kp, const char* what) {
  for (int x = 0; x < Kp; ++x) {
    const double w = want[static_cast<std::size_t>(x)];
    EXPECT_NEAR(static_cast<double>(got[x]), w, 2e-5 * std::fabs(w) + 1e-6) << what << " x=" << x;
  }
}

void check_expectation(Problem& p) {
  const Abc& a = *p.om.abc;
  const int M = p.om.M, L = p.L;
  std::vector<float> n1(static_cast<std::size_t>(a.Kp), -1.0f), n2(n1), n3(n1);
  Omx pp2 = p.pp;  // row 0 is work space; keep an untouched copy for the other paths
  Omx pp3 = p.pp;
  reference_by_expectation(p.om, p.pp, n3.data());
  null2_by_expectation(p.om, p.pp, n1.data());
  null2_by_expectation_portable(p.om, pp2, n2.data());
  for (int x = 0; x < a.Kp; ++x) {
    ASSERT_TRUE(same_bits(n1[static_cast<std::size_t>(x)], n2[static_cast<std::size_t>(x)])) << "x=" << x;
    ASSERT_TRUE(same_bits(n1[static_cast<std::size_t>(x)], n3[static_cast<std::size_t>(x)]))
        << "x=" << x << " " << n1[static_cast<std::size_t>(x)] << " vs " << n3[static_cast<std::size_t>(x)];
  }
  // Rows 1..L are untouched.
  for (int i = 1; i <= L; ++i)
    for (int k = 1; k <= M; ++k) ASSERT_TRUE(same_bits(p.pp.get_mdi(kOmxM, i, k), pp3.get_mdi(kOmxM, i, k)));
  std::vector<double> fm(static_cast<std::size_t>(M + 1), 0.0), fi(fm.size(), 0.0);
  double fncj = 0.0;
  for (int i = 1; i <= L; ++i) {
    for (int k = 1; k <= M; ++k) {
      fm[static_cast<std::size_t>(k)] += pp3.get_mdi(kOmxM, i, k) / static_cast<double>(L);
      fi[static_cast<std::size_t>(k)] += pp3.get_mdi(kOmxI, i, k) / static_cast<double>(L);
    }
    fncj += (static_cast<double>(pp3.x(i, kOmxN)) + pp3.x(i, kOmxC) + pp3.x(i, kOmxJ)) / L;
  }
  expect_close(n1.data(), double_null2(p.om, fm, fi, fncj), a.Kp, "expectation");
  EXPECT_EQ(n1[static_cast<std::size_t>(a.K)], 1.0f);
  EXPECT_EQ(n1[static_cast<std::size_t>(a.Kp - 2)], 1.0f);
  EXPECT_EQ(n1[static_cast<std::size_t>(a.Kp - 1)], 1.0f);
}

/// Trace segment [z1, z2] checks: bit equality of paths and reference, and the double computation.
void check_trace_segment(const OProfile& om, const Trace& tr, int z1, int z2) {
  const Abc& a = *om.abc;
  const int M = om.M;
  Omx w1 = make_omx(M, 0, false), w2 = make_omx(M, 0, false);
  std::vector<float> n1(static_cast<std::size_t>(a.Kp), -1.0f), n2(n1), n3(n1);
  null2_by_trace(om, tr, z1, z2, w1, n1.data());
  null2_by_trace_portable(om, tr, z1, z2, w2, n2.data());
  // Counts: every emitting state with k > 0 (M, and I as HMMER does) counts for node k's match.
  std::vector<float> m(static_cast<std::size_t>(M + 1), 0.0f), ins(m.size(), 0.0f);
  float cN = 0.0f, cC = 0.0f, cJ = 0.0f;
  int Ld = 0;
  for (int z = z1; z <= z2; ++z) {
    const auto zz = static_cast<std::size_t>(z);
    if (tr.i[zz] == 0) continue;
    ++Ld;
    if (tr.k[zz] > 0)
      m[static_cast<std::size_t>(tr.k[zz])] += 1.0f;
    else if (tr.st[zz] == kTN)
      cN += 1.0f;
    else if (tr.st[zz] == kTC)
      cC += 1.0f;
    else if (tr.st[zz] == kTJ)
      cJ += 1.0f;
  }
  const float norm = inverse_length(Ld);
  std::vector<double> fm(m.size()), fi(m.size(), 0.0);
  for (std::size_t k = 0; k < m.size(); ++k) {
    fm[k] = static_cast<double>(m[k]) / Ld;
    m[k] *= norm;
  }
  reference_finish(om, m, ins, cN * norm, cC * norm, cJ * norm, n3.data());
  for (int x = 0; x < a.Kp; ++x) {
    ASSERT_TRUE(same_bits(n1[static_cast<std::size_t>(x)], n2[static_cast<std::size_t>(x)])) << "x=" << x;
    ASSERT_TRUE(same_bits(n1[static_cast<std::size_t>(x)], n3[static_cast<std::size_t>(x)])) << "x=" << x;
  }
  expect_close(n1.data(), double_null2(om, fm, fi, static_cast<double>(cN + cC + cJ) / Ld), a.Kp, "trace");
}

TEST(HmmNull2, ByExpectationRandomModels) {
  std::mt19937 gen(41);
  for (AbcType t : {AbcType::kAmino, AbcType::kDNA}) {
    const Abc& a = abc(t);
    for (int M : {1, 2, 4, 5, 9, 40, 131}) {
      for (int L : {1, 3, 25, 200}) {
        const Hmm h = h2test::random_hmm(gen, M, a, false);
        const Dsq dsq = h2test::random_dsq(gen, L, a, 0.05);
        Problem p = make_decoded_problem(h, dsq, L);
        check_expectation(p);
        if (HasFatalFailure()) {
          ADD_FAILURE() << "M=" << M << " L=" << L;
          return;
        }
      }
    }
  }
}

TEST(HmmNull2, ByTraceOnSampledTraces) {
  std::mt19937 gen(43);
  const Abc& a = abc(AbcType::kAmino);
  for (int M : {3, 10, 57}) {
    const Hmm h = h2test::random_hmm(gen, M, a, false);
    const int L = 90;
    const Dsq dsq = h2test::random_dsq(gen, L, a);
    Problem p = make_decoded_problem(h, dsq, L);
    Rng rng(42, RngKind::kFast);
    bool saw_insert = false;
    for (int n = 0; n < 40; ++n) {
      Trace tr;
      stochastic_trace(rng, p.dsq, L, p.om, p.fwd, tr);
      tr.index();
      for (int d = 0; d < tr.ndom; ++d) {
        const auto ud = static_cast<std::size_t>(d);
        for (int z = tr.tfrom[ud]; z <= tr.tto[ud]; ++z)
          if (tr.st[static_cast<std::size_t>(z)] == kTI) saw_insert = true;
        check_trace_segment(p.om, tr, tr.tfrom[ud], tr.tto[ud]);
        if (HasFatalFailure()) return;
      }
      check_trace_segment(p.om, tr, 0, tr.N - 1);  // whole trace: N/C/J emissions too
      if (HasFatalFailure()) return;
    }
    if (M >= 10) {
      EXPECT_TRUE(saw_insert) << "the I-counted-as-M rule was exercised";
    }
  }
}

TEST(HmmNull2, RealModel) {
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  const std::vector<Hmm> hmms = read_all_hmms((test::testdata_dir() / "hmm/Pkinase.hmm").string());
  ASSERT_FALSE(hmms.empty());
  std::mt19937 gen(47);
  const Hmm& h = hmms.front();
  Dsq dsq = h2test::random_dsq(gen, 150, *h.abc, 0.01);
  // Plant the consensus in the middle.
  Dsq planted(dsq.begin(), dsq.begin() + 76);  // the sentinel and residues 1..75
  for (int k = 1; k <= h.M; ++k)
    planted.push_back(h.abc->inmap[static_cast<unsigned char>(h.consensus[static_cast<std::size_t>(k)])]);
  planted.insert(planted.end(), dsq.begin() + 76, dsq.end() - 1);
  planted.push_back(kDsqSentinel);
  const int L = static_cast<int>(planted.size()) - 2;
  Problem p = make_decoded_problem(h, planted, L);
  check_expectation(p);
}

}  // namespace
}  // namespace warpsearch::hmm
