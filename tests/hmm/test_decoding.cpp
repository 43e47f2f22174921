// Tests of posterior decoding (src/hmm/decoding.cpp):
//   - decoding equals a scalar, node-indexed reference of the same float products bit for bit, in place
//     (pp == bck, as HMMER's domain definition calls it) and separately, SSE and portable paths;
//   - posteriors of each residue (M + I over all nodes, plus N, J, C) sum to 1, row 0 and D cells are 0;
//   - domain_decoding: mocc agrees with the decoded core-model posteriors, btot/etot are cumulative and
//     end at the same expected domain count, parser and full matrices give identical results;
//   - the Backward "own scale factors" case (unihit model, several strong domains) stays consistent.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "h2_support.hpp"
#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/decoding.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm_test_support.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

using DecModel = hmmtest::ConfiguredModel;

uint32_t fbits(float x) { return std::bit_cast<uint32_t>(x); }

/// Bitwise equality of two float arrays (NaN-safe); reports the first difference.
template <class A, class B>
void expect_same_bits(const A& a, const B& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t c = 0; c < a.size(); ++c) {
    if (fbits(a[c]) != fbits(b[c])) {
      ADD_FAILURE() << what << " differ at " << c << ": " << a[c] << " vs " << b[c];
      return;
    }
  }
}

/// Forward and Backward matrices (full) of one problem.
struct FB {
  Omx fwd, bck;
};

FB run_fb(const Dsq& dsq, int L, const OProfile& om) {
  FB r{make_omx(om.M, L, true), make_omx(om.M, L, true)};
  (void)forward(dsq, L, om, r.fwd);
  (void)backward(dsq, L, om, r.fwd, r.bck);
  return r;
}

/// Scalar decoding reference with node indexing (get_mdi), same products in the same order.
void expect_decoding_equals_reference(const OProfile& om, const Omx& fwd, const Omx& bck, const Omx& pp) {
  const int L = fwd.L;
  float sp = static_cast<float>(1.0 / static_cast<double>(bck.x(0, kOmxN)));
  for (int i = 1; i <= L; ++i) {
    const float totr = sp * fwd.x(i, kOmxScale);
    for (int k = 1; k <= om.M; ++k) {
      const float m = (fwd.get_mdi(kOmxM, i, k) * bck.get_mdi(kOmxM, i, k)) * totr;
      const float in = (fwd.get_mdi(kOmxI, i, k) * bck.get_mdi(kOmxI, i, k)) * totr;
      ASSERT_EQ(fbits(pp.get_mdi(kOmxM, i, k)), fbits(m)) << "i=" << i << " k=" << k;
      ASSERT_EQ(fbits(pp.get_mdi(kOmxI, i, k)), fbits(in)) << "i=" << i << " k=" << k;
      ASSERT_EQ(pp.get_mdi(kOmxD, i, k), 0.0f);
    }
    ASSERT_EQ(fbits(pp.x(i, kOmxN)), fbits(fwd.x(i - 1, kOmxN) * bck.x(i, kOmxN) * om.xf[kON][kOLoop] * sp));
    ASSERT_EQ(fbits(pp.x(i, kOmxJ)), fbits(fwd.x(i - 1, kOmxJ) * bck.x(i, kOmxJ) * om.xf[kOJ][kOLoop] * sp));
    ASSERT_EQ(fbits(pp.x(i, kOmxC)), fbits(fwd.x(i - 1, kOmxC) * bck.x(i, kOmxC) * om.xf[kOC][kOLoop] * sp));
    ASSERT_EQ(pp.x(i, kOmxE), 0.0f);
    ASSERT_EQ(pp.x(i, kOmxB), 0.0f);
    if (bck.has_own_scales) sp *= fwd.x(i, kOmxScale) / bck.x(i, kOmxScale);
  }
  for (int k = 1; k <= om.M; ++k) {
    ASSERT_EQ(pp.get_mdi(kOmxM, 0, k), 0.0f);
    ASSERT_EQ(pp.get_mdi(kOmxI, 0, k), 0.0f);
  }
}

/// Decodes one problem every way (separate / in place, native / portable), checks they agree bit for bit
/// and equal the scalar reference. Returns the decoding status; pp receives the decoded matrix.
bool decode_all_ways(const Dsq& dsq, int L, const OProfile& om, FB& fb, Omx& pp) {
  pp = make_omx(om.M, L, true);
  const bool ok = decoding(om, fb.fwd, fb.bck, pp);
  expect_decoding_equals_reference(om, fb.fwd, fb.bck, pp);

  Omx pp2 = make_omx(om.M, L, true);
  Omx bck_copy = fb.bck;
  EXPECT_EQ(detail::decoding_portable(om, fb.fwd, bck_copy, pp2), ok);
  expect_same_bits(pp.dp, pp2.dp, "native/portable pp.dp");
  expect_same_bits(pp.xmx, pp2.xmx, "native/portable pp.xmx");

  FB again = run_fb(dsq, L, om);  // decode into the Backward matrix itself
  EXPECT_EQ(decoding(om, again.fwd, again.bck, again.bck), ok);
  const std::size_t n = static_cast<std::size_t>(L + 1) * pp.row_stride();
  for (std::size_t c = pp.row_stride(); c < n; ++c) {
    if (fbits(pp.dp[c]) != fbits(again.bck.dp[c])) {
      ADD_FAILURE() << "in-place decoding differs at float " << c;
      break;
    }
  }
  for (int i = 1; i <= L; ++i)
    for (int s : {kOmxE, kOmxN, kOmxJ, kOmxB, kOmxC}) EXPECT_EQ(fbits(pp.x(i, s)), fbits(again.bck.x(i, s)));
  return ok;
}

/// Sum over the residue-emitting posteriors of row i: M and I of all nodes, plus N, J, C.
double row_sum(const Omx& pp, int M, int i, double* core = nullptr) {
  double c = 0.0;
  for (int k = 1; k <= M; ++k) c += static_cast<double>(pp.get_mdi(kOmxM, i, k)) + pp.get_mdi(kOmxI, i, k);
  if (core != nullptr) *core = c;
  return c + pp.x(i, kOmxN) + pp.x(i, kOmxJ) + pp.x(i, kOmxC);
}

void check_problem(const Dsq& dsq, int L, const OProfile& om) {
  FlushToZeroScope ftz;
  FB fb = run_fb(dsq, L, om);
  Omx pp;
  ASSERT_TRUE(decode_all_ways(dsq, L, om, fb, pp));
  std::vector<float> btot, etot, mocc;
  ASSERT_TRUE(domain_decoding(om, fb.fwd, fb.bck, btot, etot, mocc));
  for (int i = 1; i <= L; ++i) {
    double core = 0.0;
    EXPECT_NEAR(row_sum(pp, om.M, i, &core), 1.0, 2e-3) << "M=" << om.M << " L=" << L << " i=" << i;
    EXPECT_NEAR(mocc[static_cast<std::size_t>(i)], core, 2e-3) << "i=" << i;
    EXPECT_GE(btot[static_cast<std::size_t>(i)], btot[static_cast<std::size_t>(i - 1)]);
    EXPECT_GE(etot[static_cast<std::size_t>(i)], etot[static_cast<std::size_t>(i - 1)]);
  }
  const double nb = btot[static_cast<std::size_t>(L)], ne = etot[static_cast<std::size_t>(L)];
  EXPECT_NEAR(nb, ne, 2e-3 * (1.0 + nb));

  // Parser matrices carry the same special rows: identical domain decoding.
  Omx fp = make_omx(om.M, L, false), bp = make_omx(om.M, L, false);
  (void)forward_parser(dsq, L, om, fp);
  (void)backward_parser(dsq, L, om, fp, bp);
  std::vector<float> b2, e2, m2;
  ASSERT_TRUE(domain_decoding(om, fp, bp, b2, e2, m2));
  for (int i = 0; i <= L; ++i) {
    const auto u = static_cast<std::size_t>(i);
    ASSERT_EQ(fbits(b2[u]), fbits(btot[u]));
    ASSERT_EQ(fbits(e2[u]), fbits(etot[u]));
    ASSERT_EQ(fbits(m2[u]), fbits(mocc[u]));
  }
}

TEST(HmmDecoding, RandomModelsPosteriorsSumToOne) {
  std::mt19937 rng(17);
  for (int M : {1, 2, 7, 50, 120}) {
    for (int L : {1, 3, 60, 500}) {
      DecModel m = hmmtest::random_configured_model(static_cast<uint32_t>(M * 13 + L), M, L);
      check_problem(h2test::random_dsq(rng, L, abc(AbcType::kAmino), 0.03), L, m.om);
      check_problem(h2test::planted_dsq(rng, m.hmm, L, 1 + L / 150), L, m.om);
    }
  }
}

TEST(HmmDecoding, LongSequence) {
  std::mt19937 rng(23);
  const int L = 20000;
  DecModel m = hmmtest::random_configured_model(77, 40, L);
  check_problem(h2test::planted_dsq(rng, m.hmm, L, 60), L, m.om);
}

TEST(HmmDecoding, BackwardOwnScalesStayConsistent) {
  // Unihit profile on a sequence with several strong domains: Backward's B exceeds 1e16 and it switches
  // to its own scale factors (HMMER's J3/119 case); decoding then tracks the scale ratio.
  FlushToZeroScope ftz;
  int triggered = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    DecModel m = hmmtest::random_configured_model(seed, 80, 400);
    reconfig_unihit(m.om, 400);
    std::mt19937 rng(seed);
    const Dsq dsq = h2test::planted_dsq(rng, m.hmm, 400, 5);
    FB fb = run_fb(dsq, 400, m.om);
    if (!fb.bck.has_own_scales) continue;
    ++triggered;
    Omx pp;
    const bool ok = decode_all_ways(dsq, 400, m.om, fb, pp);
    std::vector<float> btot, etot, mocc;
    EXPECT_EQ(domain_decoding(m.om, fb.fwd, fb.bck, btot, etot, mocc), ok);
    Omx fp = make_omx(m.om.M, 400, false), bp = make_omx(m.om.M, 400, false);
    (void)forward_parser(dsq, 400, m.om, fp);
    (void)backward_parser(dsq, 400, m.om, fp, bp);
    EXPECT_TRUE(bp.has_own_scales);
    std::vector<float> b2, e2, m2;
    EXPECT_EQ(domain_decoding(m.om, fp, bp, b2, e2, m2), ok);
    expect_same_bits(b2, btot, "parser/full btot");
    expect_same_bits(e2, etot, "parser/full etot");
    expect_same_bits(m2, mocc, "parser/full mocc");
  }
  EXPECT_GT(triggered, 0) << "no test case exercised Backward's own scale factors";
}

TEST(HmmDecoding, RealModelsOnRealSequences) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const auto dir = test::testdata_dir();
  const auto seqs = h2test::read_fasta((dir / "prot/globins45.fa").string(), abc(AbcType::kAmino), 12);
  ASSERT_FALSE(seqs.empty());
  for (const char* name : {"hmm/globins4.hmm", "hmm/fn3.hmm", "hmm/Pkinase.hmm"}) {
    if (!std::filesystem::exists(dir / name)) continue;
    HmmReader reader((dir / name).string());
    auto hmm = reader.next();
    ASSERT_TRUE(hmm.has_value()) << name;
    DecModel m = hmmtest::configure_model(*hmm, 400);
    for (const auto& s : seqs) {
      reconfig_length(m.om, s.L);
      check_problem(s.dsq, s.L, m.om);
    }
  }
}

}  // namespace
}  // namespace warpsearch::hmm
