// Tests of the null model (src/hmm/bg.hpp): HMMER's background frequencies, null_one against the
// closed form in double, and the bias-filter score (scaled float Forward of the two-state HMM) against
// an independent double-precision log-space Forward of the same two-state model, on real sequences
// (globins45, a DB20k slice) with real model compositions and on random sequences with degenerate codes.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "h2_support.hpp"
#include "hmm/bg.hpp"
#include "hmm/hmmfile.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

using h2test::read_fasta;

std::string data(const char* rel) { return (test::testdata_dir() / rel).string(); }

double log_add(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  const double mx = std::max(a, b);
  return mx + std::log(std::exp(a - mx) + std::exp(b - mx));
}

// Independent reference: the two-state filter HMM built from its definition (p7_bg.c comments: state 0
// is the background with mean length L0 = 400, overridden by the target length after set_length;
// state 1 the model composition with mean length M/8; start 0.999 / 0.001; emission odds e/f, degenerate
// codes by summed probabilities, non-residues odds 1), Forward in double log space, plus the null1
// length term.
double reference_filter_score(const Abc& a, const std::vector<float>& f, const float* compo, int M,
                              const Dsq& dsq, int L) {
  const double p1 = static_cast<double>(L) / static_cast<double>(L + 1);
  const double L1 = M / 8.0;
  const double t[2][2] = {{p1, 1.0 - p1}, {1.0 / (L1 + 1.0), L1 / (L1 + 1.0)}};
  auto log_odds = [&](int state, int x) {
    if (x < a.K)
      return state == 0 ? 0.0 : std::log(static_cast<double>(compo[x]) / f[static_cast<std::size_t>(x)]);
    if (x == a.K || x >= a.Kp - 2) return 0.0;
    double num = 0.0, den = 0.0;
    for (int y = 0; y < a.K; y++) {
      if (a.degen[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)]) {
        num += state == 0 ? f[static_cast<std::size_t>(y)] : compo[y];
        den += f[static_cast<std::size_t>(y)];
      }
    }
    return std::log(num / den);
  };
  double v[2] = {std::log(0.999) + log_odds(0, dsq[1]), std::log(0.001) + log_odds(1, dsq[1])};
  for (int i = 2; i <= L; i++) {
    const int x = dsq[static_cast<std::size_t>(i)];
    double nv[2];
    for (int k = 0; k < 2; k++)
      nv[k] = log_add(v[0] + std::log(t[0][k]), v[1] + std::log(t[1][k])) + log_odds(k, x);
    v[0] = nv[0];
    v[1] = nv[1];
  }
  return log_add(v[0], v[1]) + L * std::log(p1) + std::log(1.0 - p1);
}

TEST(Bg, BackgroundFrequencies) {
  const Bg amino = make_bg(abc(AbcType::kAmino));
  ASSERT_EQ(amino.f.size(), 20u);
  const double sum = std::accumulate(amino.f.begin(), amino.f.end(), 0.0);
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_EQ(amino.f[0], 0.0787945f);   // A
  EXPECT_EQ(amino.f[18], 0.0114135f);  // W
  EXPECT_EQ(amino.omega, 1.0f / 256.0f);
  EXPECT_EQ(amino.p1, static_cast<float>(350.0 / 351.0));
  const Bg dna = make_bg(abc(AbcType::kDNA));
  ASSERT_EQ(dna.f.size(), 4u);
  for (float v : dna.f) EXPECT_EQ(v, 0.25f);
}

TEST(Bg, NullOneIsTheGeometricLengthModel) {
  Bg bg = make_bg(abc(AbcType::kAmino));
  const Dsq empty(2, kDsqSentinel);
  for (int L : {1, 2, 7, 100, 350, 1000, 35213, 100000, 2000000}) {
    set_length(bg, L);
    EXPECT_EQ(bg.p1, static_cast<float>(L) / static_cast<float>(L + 1));
    // Closed form with the float p1 HMMER stores: L log p1 + log(1 - p1).
    const double p1 = bg.p1;
    const double want = L * std::log(p1) + std::log(1.0 - p1);
    EXPECT_NEAR(null_one(bg, empty, L), want, std::abs(want) * 1e-7 + 1e-7) << L;
    // And close to the exact-L value (p1 rounding only).
    const double exact = L * std::log(L / (L + 1.0)) - std::log(L + 1.0);
    EXPECT_NEAR(null_one(bg, empty, L), exact, 1e-4 * (1.0 + std::abs(exact)) + L * 1e-7) << L;
  }
}

TEST(Bg, SetLengthOverridesFilterState0Transitions) {
  Bg bg = make_bg(abc(AbcType::kAmino));
  std::vector<float> compo(bg.f);
  set_filter(bg, 100, compo.data());
  EXPECT_EQ(bg.fhmm.t[0][0], 400.0f / 401.0f);
  EXPECT_EQ(bg.fhmm.t[1][1], 12.5f / 13.5f);
  EXPECT_EQ(bg.fhmm.t[0][2], 1.0f);
  EXPECT_EQ(bg.fhmm.t[1][2], 1.0f);
  set_length(bg, 250);
  EXPECT_EQ(bg.fhmm.t[0][0], 250.0f / 251.0f);
  EXPECT_EQ(bg.fhmm.t[0][1], 1.0f - 250.0f / 251.0f);
  EXPECT_EQ(bg.fhmm.t[1][1], 12.5f / 13.5f);  // state 1 untouched
  // Odds ratios: background state is 1 for canonical residues and non-residue codes.
  const Abc& a = abc(AbcType::kAmino);
  for (int x = 0; x < a.K; x++) EXPECT_EQ(bg.fhmm.eo[x][0], 1.0f);
  EXPECT_EQ(bg.fhmm.eo[a.K][1], 1.0f);
  EXPECT_EQ(bg.fhmm.eo[a.Kp - 1][1], 1.0f);
}

void check_filter_scores(const char* hmm_rel, const char* fasta_rel, std::size_t max_seqs) {
  const std::vector<Hmm> hmms = read_all_hmms(data(hmm_rel));
  ASSERT_FALSE(hmms.empty());
  const Hmm& hmm = hmms[0];
  ASSERT_TRUE(hmm.has(kHmmCompo));
  const Abc& a = *hmm.abc;
  Bg bg = make_bg(a);
  set_filter(bg, hmm.M, hmm.compo.data());
  const auto seqs = read_fasta(data(fasta_rel), a, max_seqs);
  ASSERT_FALSE(seqs.empty());
  for (const auto& s : seqs) {
    set_length(bg, s.L);  // pipeline order: set_filter per model, set_length per sequence
    const float got = filter_score(bg, s.dsq, s.L);
    const double want = reference_filter_score(a, bg.f, hmm.compo.data(), hmm.M, s.dsq, s.L);
    // Float scaled Forward: ~1e-7 relative per row, log(max) accumulated in float.
    ASSERT_NEAR(got, want, 1e-5 * std::abs(want) + 2e-3) << s.name << " L=" << s.L;
    // The all-state-0 path alone gives 0.999 * p1^(L-1) (odds 1): a lower bound on the filter score.
    const double state0_only = std::log(0.999) + (s.L - 1) * std::log(static_cast<double>(bg.p1));
    EXPECT_GE(got, null_one(bg, s.dsq, s.L) + state0_only - 1e-3) << s.name;
  }
}

TEST(Bg, FilterScoreGlobins) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  check_filter_scores("hmm/globins4.hmm", "prot/globins45.fa", SIZE_MAX);
}

TEST(Bg, FilterScoreDb20kSlice) {
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  check_filter_scores("hmm/Pkinase.hmm", "prot/mmseqs_DB20k.fasta", 400);
}

TEST(Bg, FilterScoreRandomWithDegenerateCodes) {
  std::mt19937 rng(5);
  for (AbcType type : {AbcType::kAmino, AbcType::kDNA}) {
    const Abc& a = abc(type);
    Bg bg = make_bg(a);
    for (int rep = 0; rep < 20; rep++) {
      std::vector<float> compo(static_cast<std::size_t>(a.K));
      h2test::random_distribution(rng, compo, 1.0);
      const int M = 1 + rep * 37;
      set_filter(bg, M, compo.data());
      const int L = 1 + static_cast<int>(rng() % 3000);
      Dsq dsq = h2test::random_dsq(rng, L, a, 0.05);
      // Sprinkle gap / nonresidue / missing codes, which score as odds 1.
      if (L > 3) {
        dsq[2] = gap_code(a);
        dsq[3] = nonresidue_code(a);
      }
      set_length(bg, L);
      const float got = filter_score(bg, dsq, L);
      const double want = reference_filter_score(a, bg.f, compo.data(), M, dsq, L);
      ASSERT_NEAR(got, want, 1e-5 * std::abs(want) + 2e-3) << "rep " << rep << " L=" << L;
    }
  }
}

}  // namespace
}  // namespace warpsearch::hmm
