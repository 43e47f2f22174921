// Tests of the generic profile configuration (src/hmm/profile.hpp): every score is checked against a
// direct recomputation from the Hmm probabilities in double precision (occupancy-weighted local entry,
// glocal wing retraction, match log-odds, f-weighted degenerate scores, insert and special-state
// conventions, length model), on random models and on all real test models; and the mean match
// relative entropy implied by the match scores is compared with `hmmstat`'s "relent" column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "h2_support.hpp"
#include "hmm/bg.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/profile.hpp"
#include "hmm_test_support.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

std::vector<std::string> real_model_files() {
  std::vector<std::string> files;
  const auto dir = test::testdata_dir() / "hmm";
  if (std::filesystem::exists(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".hmm") files.push_back(e.path().string());
  // Optional extra Pfam models (HMMER3/b) present on the development machine: the first six by name.
  const std::filesystem::path extra = "/work/shared/data/cudampf_models";
  if (std::filesystem::exists(extra)) {
    std::vector<std::string> more;
    for (const auto& e : std::filesystem::directory_iterator(extra))
      if (e.path().extension() == ".hmm") more.push_back(e.path().string());
    std::sort(more.begin(), more.end());
    if (more.size() > 6) more.resize(6);
    files.insert(files.end(), more.begin(), more.end());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Double-precision recomputation of every profile score from the model's probabilities.
void check_against_direct(const Hmm& hmm, const Bg& bg, const Profile& gm, int L, ProfileMode mode) {
  const Abc& a = *hmm.abc;
  const int M = hmm.M;
  const double inf = INFINITY;
  auto T = [&](int k, int s) { return static_cast<double>(gm.tsc_at(k, s)); };
  ASSERT_EQ(gm.M, M);
  ASSERT_EQ(gm.L, L);
  ASSERT_EQ(gm.tsc.size(), static_cast<std::size_t>(M + 1) * kProfileNTransitions);
  ASSERT_EQ(gm.rsc.size(), static_cast<std::size_t>(a.Kp));

  // Entry scores.
  std::vector<double> entry(static_cast<std::size_t>(M + 1));
  if (is_local(mode)) {
    std::vector<double> occ(static_cast<std::size_t>(M + 1));
    occ[1] = static_cast<double>(hmm.t[0][kHMI]) + hmm.t[0][kHMM];
    for (int k = 2; k <= M; k++) {
      const auto& t = hmm.t[static_cast<std::size_t>(k - 1)];
      occ[static_cast<std::size_t>(k)] =
          occ[static_cast<std::size_t>(k - 1)] * (static_cast<double>(t[kHMM]) + t[kHMI]) +
          (1.0 - occ[static_cast<std::size_t>(k - 1)]) * t[kHDM];
    }
    double Z = 0.0;
    for (int k = 1; k <= M; k++) Z += occ[static_cast<std::size_t>(k)] * (M - k + 1);
    for (int k = 1; k <= M; k++)
      entry[static_cast<std::size_t>(k)] = std::log(occ[static_cast<std::size_t>(k)] / Z);
  } else {
    double Z = std::log(static_cast<double>(hmm.t[0][kHMD]));
    entry[1] = std::log(1.0 - hmm.t[0][kHMD]);
    for (int k = 2; k <= M; k++) {
      entry[static_cast<std::size_t>(k)] =
          Z + std::log(static_cast<double>(hmm.t[static_cast<std::size_t>(k - 1)][kHDM]));
      Z += std::log(static_cast<double>(hmm.t[static_cast<std::size_t>(k - 1)][kHDD]));
    }
  }
  for (int k = 1; k <= M; k++) {
    const double want = entry[static_cast<std::size_t>(k)];
    if (std::isinf(want)) {
      EXPECT_EQ(T(k - 1, kPBM), want) << "entry " << k;
    } else {
      EXPECT_NEAR(T(k - 1, kPBM), want, 1e-5 * (1.0 + std::abs(want)) + 2e-6 * M) << "entry " << k;
    }
  }
  // Every entry is a log probability.
  for (int k = 1; k <= M; k++) EXPECT_LE(T(k - 1, kPBM), 1e-6);

  // Node 0 and node M transitions (other than entries) are impossible.
  for (int s = 0; s < kProfileNTransitions; s++) {
    if (s != kPBM) {
      EXPECT_EQ(T(0, s), -inf) << s;
    }
    EXPECT_EQ(T(M, s), -inf) << s;
  }
  // Core transitions.
  const int order[7][2] = {{kPMM, kHMM}, {kPMI, kHMI}, {kPMD, kHMD}, {kPIM, kHIM},
                           {kPII, kHII}, {kPDM, kHDM}, {kPDD, kHDD}};
  for (int k = 1; k < M; k++) {
    for (const auto& o : order) {
      const double p = hmm.t[static_cast<std::size_t>(k)][static_cast<std::size_t>(o[1])];
      if (p == 0.0) {
        EXPECT_EQ(T(k, o[0]), -inf);
      } else {
        EXPECT_NEAR(T(k, o[0]), std::log(p), 2e-7 * (1.0 + std::abs(std::log(p)))) << k << " " << o[0];
      }
    }
  }

  // Emissions.
  for (int k = 0; k <= M; k++) {
    std::vector<double> sc(static_cast<std::size_t>(a.K));
    for (int x = 0; x < a.K; x++) {
      const double got = gm.msc(k, x);
      if (k == 0) {
        EXPECT_EQ(got, -inf);
        continue;
      }
      const double p = hmm.mat[static_cast<std::size_t>(k)][static_cast<std::size_t>(x)];
      sc[static_cast<std::size_t>(x)] = std::log(p / bg.f[static_cast<std::size_t>(x)]);
      if (p == 0.0) {
        EXPECT_EQ(got, -inf);
      } else {
        EXPECT_NEAR(got, sc[static_cast<std::size_t>(x)],
                    3e-7 * (1.0 + std::abs(sc[static_cast<std::size_t>(x)])));
      }
    }
    for (int x = a.K; x < a.Kp; x++) {
      const double got = gm.msc(k, x);
      if (k == 0 || x == a.K || x >= a.Kp - 2) {
        EXPECT_EQ(got, -inf) << k << " " << x;
        continue;
      }
      double num = 0.0, den = 0.0;
      for (int y = 0; y < a.K; y++) {
        if (a.degen[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)]) {
          num += bg.f[static_cast<std::size_t>(y)] * sc[static_cast<std::size_t>(y)];
          den += bg.f[static_cast<std::size_t>(y)];
        }
      }
      const double want = num / den;
      if (std::isinf(want)) {
        EXPECT_EQ(got, want);
      } else {
        EXPECT_NEAR(got, want, 1e-5 * (1.0 + std::abs(want))) << k << " " << x;
      }
    }
    for (int x = 0; x < a.Kp; x++) {
      const bool residue = x < a.K || (x > a.K && x < a.Kp - 2);
      const double want = (k >= 1 && k < M && residue) ? 0.0 : -inf;
      EXPECT_EQ(gm.isc(k, x), want) << k << " " << x;
    }
  }

  // Special states.
  const bool multi = is_multihit(mode);
  EXPECT_EQ(gm.nj, multi ? 1.0f : 0.0f);
  EXPECT_NEAR(gm.xsc[kXE][kMove], multi ? -std::log(2.0) : 0.0, 1e-7);
  if (multi) {
    EXPECT_NEAR(gm.xsc[kXE][kLoop], -std::log(2.0), 1e-7);
  } else {
    EXPECT_EQ(gm.xsc[kXE][kLoop], -inf);
  }
  const double pmove = (multi ? 3.0 : 2.0) / (L + (multi ? 3.0 : 2.0));
  for (int s : {kXN, kXC, kXJ}) {
    EXPECT_NEAR(gm.xsc[s][kMove], std::log(pmove), 1e-6 * (1.0 + std::abs(std::log(pmove))));
    EXPECT_NEAR(gm.xsc[s][kLoop], std::log1p(-pmove), 1e-6 + 1e-6 * pmove * L);
  }
}

TEST(Profile, RandomModelsAllModes) {
  std::mt19937 rng(17);
  for (AbcType type : {AbcType::kAmino, AbcType::kDNA}) {
    const Abc& a = abc(type);
    const Bg bg = make_bg(a);
    for (int M : {1, 2, 3, 10, 57, 300}) {
      const Hmm hmm = h2test::random_hmm(rng, M, a);
      for (ProfileMode mode :
           {ProfileMode::kLocal, ProfileMode::kUniLocal, ProfileMode::kGlocal, ProfileMode::kUniGlocal}) {
        for (int L : {1, 100, 400, 100000}) {
          const Profile gm = config_profile(hmm, bg, L, mode);
          EXPECT_EQ(gm.mode, mode);
          check_against_direct(hmm, bg, gm, L, mode);
        }
      }
    }
  }
}

TEST(Profile, LocalEntryIsUniformForFullOccupancy) {
  // With no B->D and no deletions every occupancy is 1: entries are 2/(M(M+1)).
  std::mt19937 rng(2);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  for (int M : {1, 5, 100, 1000}) {
    const Hmm hmm = h2test::random_hmm(rng, M, a, /*ungapped=*/true);
    const Profile gm = config_profile(hmm, bg, 400);
    const double want = std::log(2.0 / (static_cast<double>(M) * (M + 1)));
    for (int k = 1; k <= M; k++) ASSERT_NEAR(gm.tsc_at(k - 1, kPBM), want, 1e-6 * std::abs(want)) << k;
  }
}

TEST(Profile, GlocalEntriesAndAllDeletePathSumToOne) {
  std::mt19937 rng(9);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  for (int M : {2, 9, 120}) {
    const Hmm hmm = h2test::random_hmm(rng, M, a);
    const Profile gm = config_profile(hmm, bg, 400, ProfileMode::kGlocal);
    double sum = 0.0;
    for (int k = 1; k <= M; k++) sum += std::exp(static_cast<double>(gm.tsc_at(k - 1, kPBM)));
    double all_delete = hmm.t[0][kHMD];
    for (int k = 1; k < M; k++) all_delete *= hmm.t[static_cast<std::size_t>(k)][kHDD];
    EXPECT_NEAR(sum + all_delete, 1.0, 1e-5) << M;
  }
}

TEST(Profile, ReconfigLengthAndHitModes) {
  std::mt19937 rng(4);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  const Hmm hmm = h2test::random_hmm(rng, 40, a);
  Profile gm = config_profile(hmm, bg, 400);
  const Profile fresh = config_profile(hmm, bg, 1234);
  reconfig_length(gm, 1234);
  EXPECT_EQ(gm.L, 1234);
  for (int s = 0; s < kNXStates; s++)
    for (int t = 0; t < kNXTrans; t++) EXPECT_EQ(gm.xsc[s][t], fresh.xsc[s][t]);
  reconfig_unihit(gm, 500);
  EXPECT_EQ(gm.mode, ProfileMode::kLocal);  // HMMER changes the scores, not the mode field
  EXPECT_EQ(gm.nj, 0.0f);
  EXPECT_EQ(gm.xsc[kXE][kLoop], -INFINITY);
  EXPECT_EQ(gm.xsc[kXE][kMove], 0.0f);
  EXPECT_NEAR(gm.xsc[kXN][kMove], std::log(2.0 / 502.0), 1e-6);
  reconfig_multihit(gm, 500);
  EXPECT_EQ(gm.nj, 1.0f);
  EXPECT_NEAR(gm.xsc[kXJ][kMove], std::log(3.0 / 503.0), 1e-6);
  EXPECT_EQ(gm.tsc, fresh.tsc);  // core scores untouched
}

TEST(Profile, RequiresConsensus) {
  std::mt19937 rng(1);
  const Abc& a = abc(AbcType::kAmino);
  Hmm hmm = h2test::random_hmm(rng, 5, a);
  hmm.flags &= ~static_cast<unsigned>(kHmmCons);
  EXPECT_THROW(config_profile(hmm, make_bg(a), 400), Error);
}

TEST(Profile, RealModelsDirectRecomputationAndAnnotation) {
  const auto files = real_model_files();
  if (files.empty()) GTEST_SKIP() << "no test models";
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    for (const Hmm& hmm : read_all_hmms(f)) {
      const Bg bg = make_bg(*hmm.abc);
      const Profile gm = config_profile(hmm, bg, 400);
      check_against_direct(hmm, bg, gm, 400, ProfileMode::kLocal);
      EXPECT_EQ(gm.name, hmm.name);
      EXPECT_EQ(gm.acc, hmm.has(kHmmAcc) ? hmm.acc : std::string());
      EXPECT_EQ(gm.desc, hmm.has(kHmmDesc) ? hmm.desc : std::string());
      EXPECT_EQ(gm.consensus, hmm.consensus);
      EXPECT_EQ(gm.rf, hmm.has(kHmmRF) ? hmm.rf : std::string());
      EXPECT_EQ(gm.cs, hmm.has(kHmmCS) ? hmm.cs : std::string());
      EXPECT_EQ(gm.evparam, hmm.evparam);
      EXPECT_EQ(gm.cutoff, hmm.cutoff);
      EXPECT_EQ(gm.compo, hmm.compo);
      EXPECT_EQ(gm.max_length, hmm.max_length);
    }
  }
}

using hmmtest::run_capture;

// hmmstat's "relent" is the mean over nodes of sum_x p_k(x) log2(p_k(x)/f(x)): the expectation of
// our match scores under the match emissions, in bits. Printed with two decimals.
TEST(Profile, MeanMatchRelativeEntropyMatchesHmmstat) {
  std::string probe;
  if (run_capture("hmmstat -h", &probe) != 0) GTEST_SKIP() << "hmmstat (HMMER 3.3.2) not installed";
  const auto files = real_model_files();
  if (files.empty()) GTEST_SKIP() << "no test models";
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    std::string out;
    ASSERT_EQ(run_capture("hmmstat '" + f + "'", &out), 0);
    std::vector<double> relent;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream w(line);
      std::string idx, name, acc, nseq, effn, M, re;
      w >> idx >> name >> acc >> nseq >> effn >> M >> re;
      relent.push_back(std::stod(re));
    }
    const auto hmms = read_all_hmms(f);
    ASSERT_EQ(hmms.size(), relent.size());
    for (std::size_t h = 0; h < hmms.size(); h++) {
      const Hmm& hmm = hmms[h];
      const Bg bg = make_bg(*hmm.abc);
      const Profile gm = config_profile(hmm, bg, 400);
      double sum = 0.0;
      for (int k = 1; k <= hmm.M; k++)
        for (int x = 0; x < hmm.abc->K; x++) {
          const double p = hmm.mat[static_cast<std::size_t>(k)][static_cast<std::size_t>(x)];
          if (p > 0.0) sum += p * gm.msc(k, x);
        }
      const double bits = sum / hmm.M / std::log(2.0);
      EXPECT_NEAR(bits, relent[h], 0.005 + 1e-4) << hmm.name;
    }
  }
}

}  // namespace
}  // namespace warpsearch::hmm
