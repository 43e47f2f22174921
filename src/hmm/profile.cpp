// p7_profile_Create + p7_ProfileConfig / p7_ReconfigLength / p7_ReconfigMultihit / p7_ReconfigUnihit
// (p7_profile.c, modelconfig.c) with HMMER's exact float/double arithmetic. C's promotions are spelled
// out: log() of a float is a double log whose result is rounded to float on store.
#include "hmm/profile.hpp"

#include <cmath>
#include <cstddef>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

namespace {

constexpr float kNegInf = -INFINITY;

// (float)log((double)p): HMMER's log() of a float probability stored into a float score.
inline float flog(float p) { return static_cast<float>(std::log(static_cast<double>(p))); }

float& tsc_ref(Profile& gm, int k, int s) {
  return gm.tsc[static_cast<std::size_t>(k) * kProfileNTransitions + static_cast<std::size_t>(s)];
}
float& msc_ref(Profile& gm, int k, int x) {
  return gm.rsc[static_cast<std::size_t>(x)][static_cast<std::size_t>(k) * kProfileNR + kPMSC];
}
float& isc_ref(Profile& gm, int k, int x) {
  return gm.rsc[static_cast<std::size_t>(x)][static_cast<std::size_t>(k) * kProfileNR + kPISC];
}

}  // namespace

Profile config_profile(const Hmm& hmm, const Bg& bg, int L, ProfileMode mode) {
  if (hmm.abc == nullptr || bg.abc == nullptr || hmm.abc->type != bg.abc->type)
    throw Error(ErrorKind::kInput, "HMM and null model alphabets don't match");
  if (!hmm.has(kHmmCons))
    throw Error(ErrorKind::kInput, "HMM must have a consensus to transfer to the profile");
  const Abc& a = *hmm.abc;
  const int M = hmm.M;
  const int K = a.K;
  const int Kp = a.Kp;
  const auto ks = [](int k) { return static_cast<std::size_t>(k); };

  Profile gm;
  gm.M = M;
  gm.abc = hmm.abc;
  gm.mode = mode;
  gm.max_length = hmm.max_length;
  gm.tsc.assign(static_cast<std::size_t>(M + 1) * kProfileNTransitions, kNegInf);
  gm.rsc.assign(static_cast<std::size_t>(Kp),
                std::vector<float>(static_cast<std::size_t>(M + 1) * kProfileNR, kNegInf));

  gm.name = hmm.name;
  if (hmm.has(kHmmAcc)) gm.acc = hmm.acc;
  if (hmm.has(kHmmDesc)) gm.desc = hmm.desc;
  if (hmm.has(kHmmRF)) gm.rf = hmm.rf;
  if (hmm.has(kHmmMMask)) gm.mm = hmm.mm;
  gm.consensus = hmm.consensus;
  if (hmm.has(kHmmCS)) gm.cs = hmm.cs;
  gm.evparam = hmm.evparam;
  gm.cutoff = hmm.cutoff;
  gm.compo = hmm.compo;

  // Entry scores B->Mk, stored off-by-one at node k-1.
  if (is_local(mode)) {
    // occ[k] / sum_i occ[i]*(M-i+1): float sum, float division, double log.
    std::vector<float> occ(ks(M + 1));
    calculate_occupancy(hmm, occ.data(), nullptr);
    float Z = 0.0f;
    for (int k = 1; k <= M; k++) Z += occ[ks(k)] * static_cast<float>(M - k + 1);
    for (int k = 1; k <= M; k++) tsc_ref(gm, k - 1, kPBM) = flog(occ[ks(k)] / Z);
  } else {
    // Glocal: left wing retraction B->D1->...->Dk-1->Mk, accumulated in log space (float Z).
    float Z = flog(hmm.t[0][kHMD]);
    tsc_ref(gm, 0, kPBM) = static_cast<float>(std::log(1.0 - static_cast<double>(hmm.t[0][kHMD])));
    for (int k = 1; k < M; k++) {
      tsc_ref(gm, k, kPBM) =
          static_cast<float>(static_cast<double>(Z) + std::log(static_cast<double>(hmm.t[ks(k)][kHDM])));
      Z = static_cast<float>(static_cast<double>(Z) + std::log(static_cast<double>(hmm.t[ks(k)][kHDD])));
    }
  }

  // E state and the expected number of J uses.
  if (is_multihit(mode)) {
    gm.xsc[kXE][kMove] = static_cast<float>(-kLog2);
    gm.xsc[kXE][kLoop] = static_cast<float>(-kLog2);
    gm.nj = 1.0f;
  } else {
    gm.xsc[kXE][kMove] = 0.0f;
    gm.xsc[kXE][kLoop] = kNegInf;
    gm.nj = 0.0f;
  }

  // Core transitions, nodes 1..M-1.
  for (int k = 1; k < M; k++) {
    const auto& t = hmm.t[ks(k)];
    tsc_ref(gm, k, kPMM) = flog(t[kHMM]);
    tsc_ref(gm, k, kPMI) = flog(t[kHMI]);
    tsc_ref(gm, k, kPMD) = flog(t[kHMD]);
    tsc_ref(gm, k, kPIM) = flog(t[kHIM]);
    tsc_ref(gm, k, kPII) = flog(t[kHII]);
    tsc_ref(gm, k, kPDM) = flog(t[kHDM]);
    tsc_ref(gm, k, kPDD) = flog(t[kHDD]);
  }

  // Match emissions: log((double)p / f) for canonical codes, f-weighted expectations for degenerate
  // codes (esl_abc_FExpectScVec), -inf for gap, nonresidue and missing.
  float sc[kMaxKp];
  sc[K] = kNegInf;
  sc[Kp - 2] = kNegInf;
  sc[Kp - 1] = kNegInf;
  for (int k = 1; k <= M; k++) {
    for (int x = 0; x < K; x++)
      sc[x] = static_cast<float>(
          std::log(static_cast<double>(hmm.mat[ks(k)][ks(x)]) / static_cast<double>(bg.f[ks(x)])));
    expect_sc_vec(a, sc, bg.f.data());
    for (int x = 0; x < Kp; x++) msc_ref(gm, k, x) = sc[x];
  }

  // Insert emissions: hardwired to 0 (= background) for nodes 1..M-1; I_M impossible; the codes that
  // are no residue score -inf.
  for (int x = 0; x < Kp; x++) {
    for (int k = 1; k < M; k++) isc_ref(gm, k, x) = 0.0f;
    isc_ref(gm, M, x) = kNegInf;
  }
  for (int k = 1; k <= M; k++) {
    isc_ref(gm, k, K) = kNegInf;
    isc_ref(gm, k, Kp - 2) = kNegInf;
    isc_ref(gm, k, Kp - 1) = kNegInf;
  }
  // p7_profile_Create marks gap and missing-data codes impossible everywhere.
  for (auto& v : gm.rsc[ks(K)]) v = kNegInf;
  for (auto& v : gm.rsc[ks(Kp - 1)]) v = kNegInf;

  gm.L = 0;
  reconfig_length(gm, L);
  return gm;
}

void reconfig_length(Profile& gm, int L) {
  // N, C, J share L/(2+nj) of the unannotated length each: pmove = (2+nj)/(L+2+nj) in float.
  const float pmove = (2.0f + gm.nj) / (static_cast<float>(L) + 2.0f + gm.nj);
  const float ploop = 1.0f - pmove;
  const float sloop = flog(ploop);
  const float smove = flog(pmove);
  gm.xsc[kXN][kLoop] = gm.xsc[kXC][kLoop] = gm.xsc[kXJ][kLoop] = sloop;
  gm.xsc[kXN][kMove] = gm.xsc[kXC][kMove] = gm.xsc[kXJ][kMove] = smove;
  gm.L = L;
}

void reconfig_multihit(Profile& gm, int L) {
  gm.xsc[kXE][kMove] = static_cast<float>(-kLog2);
  gm.xsc[kXE][kLoop] = static_cast<float>(-kLog2);
  gm.nj = 1.0f;
  reconfig_length(gm, L);
}

void reconfig_unihit(Profile& gm, int L) {
  gm.xsc[kXE][kMove] = 0.0f;
  gm.xsc[kXE][kLoop] = kNegInf;
  gm.nj = 0.0f;
  reconfig_length(gm, L);
}

}  // namespace warpsearch::hmm
