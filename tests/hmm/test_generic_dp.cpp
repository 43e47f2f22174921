// Tests of the generic reference DP (src/hmm/generic_dp.hpp):
//  - exhaustive path enumeration on tiny profiles (M <= 3, L <= 4) in double precision, independent of
//    the DP recursions: Viterbi = best path, Forward and Backward = log of the summed path
//    probabilities (within the flogsum table error), MSV = best path of the MSV model;
//  - orderings that must hold exactly in float: Forward >= Viterbi; ungapped models: Viterbi == MSV up
//    to rounding of the (identical) entry and length scores; Forward == Backward within flogsum error;
//  - end-to-end on real data: (generic Forward - null1) / log 2 against the full-sequence scores of
//    `hmmsearch --max --nonull2` (no null2 correction, so HMMER's score is (Forward - null1)/log 2 with
//    its striped Forward; printed to 0.1 bits).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "h2_support.hpp"
#include "hmm/bg.hpp"
#include "hmm/generic_dp.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/profile.hpp"
#include "hmm_test_support.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

constexpr double kInf = INFINITY;

// Enumerates every state path of the profile's implicit model emitting dsq[1..L] and feeds the path
// score (double sum of the float scores) to visit(). States: N B M I D E J C (T terminal).
class PathEnumerator {
 public:
  PathEnumerator(const Profile& gm, const Dsq& dsq, int L) : gm_(gm), dsq_(dsq), L_(L) {}

  void run(const std::function<void(double)>& visit) {
    visit_ = &visit;
    n(0, 0.0);
  }

 private:
  double T(int k, int s) const { return gm_.tsc_at(k, s); }
  double msc(int k, int i) const { return gm_.msc(k, dsq_[static_cast<std::size_t>(i)]); }
  double isc(int k, int i) const { return gm_.isc(k, dsq_[static_cast<std::size_t>(i)]); }
  double xs(int s, int t) const { return gm_.xsc[s][t]; }
  bool dead(double sc) const { return sc == -kInf; }

  void n(int i, double sc) {
    if (dead(sc)) return;
    if (i < L_) n(i + 1, sc + xs(kXN, kLoop));
    b(i, sc + xs(kXN, kMove));
  }
  void b(int i, double sc) {
    if (dead(sc) || i >= L_) return;
    for (int k = 1; k <= gm_.M; k++) m(k, i + 1, sc + T(k - 1, kPBM) + msc(k, i + 1));
  }
  void m(int k, int i, double sc) {  // in M_k having emitted x_i
    if (dead(sc)) return;
    const int M = gm_.M;
    if (k < M) {
      if (i < L_) m(k + 1, i + 1, sc + T(k, kPMM) + msc(k + 1, i + 1));
      if (i < L_) ins(k, i + 1, sc + T(k, kPMI) + isc(k, i + 1));
      d(k + 1, i, sc + T(k, kPMD));
    }
    if (k == M || is_local(gm_.mode)) e(i, sc);
  }
  void ins(int k, int i, double sc) {
    if (dead(sc)) return;
    if (i < L_) m(k + 1, i + 1, sc + T(k, kPIM) + msc(k + 1, i + 1));
    if (i < L_) ins(k, i + 1, sc + T(k, kPII) + isc(k, i + 1));
  }
  void d(int k, int i, double sc) {
    if (dead(sc)) return;
    const int M = gm_.M;
    if (k < M) {
      if (i < L_) m(k + 1, i + 1, sc + T(k, kPDM) + msc(k + 1, i + 1));
      d(k + 1, i, sc + T(k, kPDD));
    }
    if (k == M || is_local(gm_.mode)) e(i, sc);
  }
  void e(int i, double sc) {
    c(i, sc + xs(kXE, kMove));
    j(i, sc + xs(kXE, kLoop));
  }
  void j(int i, double sc) {
    if (dead(sc)) return;
    if (i < L_) j(i + 1, sc + xs(kXJ, kLoop));
    b(i, sc + xs(kXJ, kMove));
  }
  void c(int i, double sc) {
    if (dead(sc)) return;
    if (i < L_) c(i + 1, sc + xs(kXC, kLoop));
    if (i == L_) (*visit_)(sc + xs(kXC, kMove));
  }

  const Profile& gm_;
  const Dsq& dsq_;
  int L_;
  const std::function<void(double)>* visit_ = nullptr;
};

// Best path of the MSV model (p7_GMSV's definition: uniform entry, free M->M, M->E, N/C/J loops
// L/(L+3), E->J (nu-1)/nu, E->C 1/nu), enumerated as above.
double brute_msv(const Profile& gm, const Dsq& dsq, int L, double nu) {
  const int M = gm.M;
  const double tloop = std::log(static_cast<double>(L) / (L + 3)), tmove = std::log(3.0 / (L + 3));
  const double tbmk = std::log(2.0 / (static_cast<double>(M) * (M + 1)));
  const double tej = std::log((nu - 1.0) / nu), tec = std::log(1.0 / nu);
  double best = -kInf;
  std::function<void(int, double)> n, b, c, j;
  std::function<void(int, int, double)> m;
  std::function<void(int, double)> e;
  n = [&](int i, double sc) {
    if (i < L) n(i + 1, sc + tloop);
    b(i, sc + tmove);
  };
  b = [&](int i, double sc) {
    if (i >= L) return;
    for (int k = 1; k <= M; k++) m(k, i + 1, sc + tbmk + gm.msc(k, dsq[static_cast<std::size_t>(i + 1)]));
  };
  m = [&](int k, int i, double sc) {
    if (sc == -kInf) return;
    if (k < M && i < L) m(k + 1, i + 1, sc + gm.msc(k + 1, dsq[static_cast<std::size_t>(i + 1)]));
    e(i, sc);
  };
  e = [&](int i, double sc) {
    c(i, sc + tec);
    j(i, sc + tej);
  };
  j = [&](int i, double sc) {
    if (i < L) j(i + 1, sc + tloop);
    b(i, sc + tmove);
  };
  c = [&](int i, double sc) {
    if (i < L) c(i + 1, sc + tloop);
    if (i == L) best = std::max(best, sc + tmove);
  };
  n(0, 0.0);
  return best;
}

TEST(GenericDp, TinyProfilesMatchPathEnumeration) {
  std::mt19937 rng(23);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  int checked = 0;
  for (int rep = 0; rep < 40; rep++) {
    const int M = 1 + rep % 3;
    const int L = 1 + (rep / 3) % 4;
    const Hmm hmm = h2test::random_hmm(rng, M, a);
    const Dsq dsq = h2test::random_dsq(rng, L, a, 0.1);
    for (ProfileMode mode :
         {ProfileMode::kLocal, ProfileMode::kUniLocal, ProfileMode::kGlocal, ProfileMode::kUniGlocal}) {
      SCOPED_TRACE("rep " + std::to_string(rep) + " M=" + std::to_string(M) + " L=" + std::to_string(L) +
                   " mode " + std::to_string(static_cast<int>(mode)));
      const Profile gm = config_profile(hmm, bg, L, mode);
      double best = -kInf, sum_max = -kInf;
      std::vector<double> scores;
      PathEnumerator(gm, dsq, L).run([&](double sc) {
        scores.push_back(sc);
        best = std::max(best, sc);
      });
      sum_max = best;
      double total = 0.0;
      for (double sc : scores) total += std::exp(sc - sum_max);
      const double fwd_want = sum_max + std::log(total);
      ASSERT_FALSE(scores.empty());
      const float vit = generic_viterbi(dsq, L, gm);
      const float fwd = generic_forward(dsq, L, gm);
      const float bck = generic_backward(dsq, L, gm);
      EXPECT_NEAR(vit, best, 1e-4 * (1.0 + std::abs(best)));
      // Each flogsum is within 5e-4 nats; a handful of nested sums per cell on these tiny problems.
      EXPECT_NEAR(fwd, fwd_want, 0.01 + 1e-5 * std::abs(fwd_want));
      EXPECT_NEAR(bck, fwd_want, 0.01 + 1e-5 * std::abs(fwd_want));
      EXPECT_GE(fwd, vit);
      if (mode == ProfileMode::kLocal) {
        const double msv_want = brute_msv(gm, dsq, L, 2.0);
        EXPECT_NEAR(generic_msv(dsq, L, gm), msv_want, 1e-4 * (1.0 + std::abs(msv_want)));
      }
      checked++;
    }
  }
  EXPECT_EQ(checked, 160);
}

TEST(GenericDp, OrderingsOnRandomProfiles) {
  std::mt19937 rng(31);
  for (AbcType type : {AbcType::kAmino, AbcType::kDNA}) {
    const Abc& a = abc(type);
    const Bg bg = make_bg(a);
    for (int rep = 0; rep < 24; rep++) {
      const int M = 1 + static_cast<int>(rng() % 200);
      const int L = 1 + static_cast<int>(rng() % 400);
      const bool ungapped = rep % 3 == 0;
      const Hmm hmm = h2test::random_hmm(rng, M, a, ungapped);
      const Profile gm = config_profile(hmm, bg, L);
      const Dsq dsq = h2test::random_dsq(rng, L, a, 0.02);
      GMatrix gx;
      const float msv = generic_msv(dsq.data(), L, gm, gx);
      const float vit = generic_viterbi(dsq.data(), L, gm, gx);
      const float fwd = generic_forward(dsq.data(), L, gm, gx);
      const float bck = generic_backward(dsq.data(), L, gm, gx);
      SCOPED_TRACE("M=" + std::to_string(M) + " L=" + std::to_string(L));
      EXPECT_GE(fwd, vit);  // flogsum(a,b) >= max(a,b) and float addition is monotone
      EXPECT_NEAR(fwd, bck, 1e-3 * L + 1e-5 * std::abs(fwd));
      if (ungapped) {
        // Same paths, same entry/length/E scores up to float rounding of their logs.
        EXPECT_NEAR(vit, msv, 1e-5 * L + 1e-5 * std::abs(vit));
      }
    }
  }
}

TEST(GenericDp, EmptyAndLengthOneSequences) {
  std::mt19937 rng(8);
  const Abc& a = abc(AbcType::kAmino);
  const Bg bg = make_bg(a);
  const Hmm hmm = h2test::random_hmm(rng, 4, a);
  const Profile gm = config_profile(hmm, bg, 1);
  const Dsq empty(2, kDsqSentinel);
  EXPECT_EQ(generic_viterbi(empty, 0, gm), -INFINITY);
  EXPECT_EQ(generic_forward(empty, 0, gm), -INFINITY);
  EXPECT_EQ(generic_backward(empty, 0, gm), -INFINITY);
  EXPECT_EQ(generic_msv(empty, 0, gm), -INFINITY);
  // L = 1: a single match state emits the residue: S N B M_k E C T.
  Dsq one(3, kDsqSentinel);
  one[1] = 5;
  double best = -kInf;
  for (int k = 1; k <= gm.M; k++)
    best = std::max(best, static_cast<double>(gm.tsc_at(k - 1, kPBM)) + gm.msc(k, 5));
  best += gm.xsc[kXN][kMove] + gm.xsc[kXE][kMove] + gm.xsc[kXC][kMove];
  EXPECT_NEAR(generic_viterbi(one, 1, gm), best, 1e-5);
}

using hmmtest::run_capture;

// Full-sequence scores of hmmsearch's tblout (name -> score), all sequences reported.
std::map<std::string, double> hmmsearch_scores(const std::string& hmm, const std::string& fasta) {
  std::string tbl = testing::TempDir() + "h2_generic_dp_tblout.txt";
  std::string out;
  std::map<std::string, double> scores;
  if (run_capture("hmmsearch --max --nonull2 -E 1e12 --domE 1e12 --cpu 1 --tblout '" + tbl +
                      "' -o /dev/null '" + hmm + "' '" + fasta + "'",
                  &out) != 0)
    return scores;
  FILE* f = std::fopen(tbl.c_str(), "r");
  if (f == nullptr) return scores;
  char line[4096];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (line[0] == '#') continue;
    std::istringstream w(line);
    std::string name, acc, qname, qacc, evalue;
    double score;
    w >> name >> acc >> qname >> qacc >> evalue >> score;
    scores[name] = score;
  }
  std::fclose(f);
  std::remove(tbl.c_str());
  return scores;
}

void check_against_hmmsearch(const char* hmm_rel, const char* fasta_rel, std::size_t max_seqs) {
  std::string probe;
  if (run_capture("hmmsearch -h", &probe) != 0) GTEST_SKIP() << "hmmsearch (HMMER 3.3.2) not installed";
  const std::string hmm_path = (test::testdata_dir() / hmm_rel).string();
  const std::string fasta_path = (test::testdata_dir() / fasta_rel).string();
  const Hmm hmm = read_all_hmms(hmm_path).at(0);
  const auto seqs = h2test::read_fasta(fasta_path, *hmm.abc, max_seqs);
  std::string subset = fasta_path;
  if (max_seqs != SIZE_MAX) {  // write the slice hmmsearch should see
    subset = testing::TempDir() + "h2_generic_dp_slice.fa";
    FILE* o = std::fopen(subset.c_str(), "w");
    ASSERT_NE(o, nullptr);
    for (const auto& s : seqs) std::fprintf(o, ">%s\n%s\n", s.name.c_str(), textize(s.dsq, *hmm.abc).c_str());
    std::fclose(o);
  }
  const auto oracle = hmmsearch_scores(hmm_path, subset);
  // hmmsearch lists every sequence with at least one domain region (with --max all pass the filters;
  // sequences where domain definition finds no region are not reported).
  ASSERT_GE(oracle.size() * 2, seqs.size());
  Bg bg = make_bg(*hmm.abc);
  Profile gm = config_profile(hmm, bg, 400);
  GMatrix gx;
  double worst = 0.0;
  std::size_t compared = 0;
  for (const auto& s : seqs) {
    reconfig_length(gm, s.L);
    set_length(bg, s.L);
    const float fwd = generic_forward(s.dsq.data(), s.L, gm, gx);
    const float vit = generic_viterbi(s.dsq.data(), s.L, gm, gx);
    const float nullsc = null_one(bg, s.dsq, s.L);
    EXPECT_GE(fwd, vit) << s.name;
    const double bits = (static_cast<double>(fwd) - nullsc) / kLog2;
    const auto it = oracle.find(s.name);
    if (it == oracle.end()) continue;
    compared++;
    // tblout rounds to 0.1 bits; generic (flogsum table) vs HMMER's striped scaled-probability Forward
    // differ by a few thousandths of a bit.
    EXPECT_NEAR(bits, it->second, 0.05 + 0.02) << s.name;
    worst = std::max(worst, std::abs(bits - it->second));
  }
  EXPECT_EQ(compared, oracle.size());
  std::printf("max |generic - hmmsearch| = %.4f bits over %zu sequences\n", worst, compared);
  if (subset != fasta_path) std::remove(subset.c_str());
}

TEST(GenericDp, ForwardBitScoresMatchHmmsearchGlobins) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  check_against_hmmsearch("hmm/globins4.hmm", "prot/globins45.fa", SIZE_MAX);
}

TEST(GenericDp, ForwardBitScoresMatchHmmsearchDb20kSlice) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  check_against_hmmsearch("hmm/fn3.hmm", "prot/mmseqs_DB20k.fasta", 150);
}

}  // namespace
}  // namespace warpsearch::hmm
