// The generic (non-striped, float, log-odds in nats) search profile of HMMER 3.3.2, mirroring
// P7_PROFILE (p7_profile.c), and its configuration from a probability model, p7_ProfileConfig and
// p7_ReconfigLength (modelconfig.c), with HMMER's exact float/double arithmetic:
//   - transitions tsc[k*8 + s] = (float)log((double)t) for nodes k = 1..M-1, in the p7P_* order
//     (kPMM..kPII); node 0 and node M are -inf except the entry scores;
//   - entry scores (local modes) B->Mk = log(occ[k] / Z), Z = sum occ[k]*(M-k+1) (float), stored
//     off-by-one at tsc[(k-1)*8 + kPBM]; (glocal modes) the wing-retracted B->D1..->Mk path;
//   - match emissions rsc[x][k*2 + kPMSC] = (float)log((double)mat[k][x] / f[x]), degenerate codes as
//     esl_abc_FExpectScVec (f-weighted mean), gap/nonresidue/missing -inf; inserts 0 (-inf for I_M and
//     for gap/nonresidue/missing codes);
//   - specials xsc[E] = {-log 2, -log 2} (multihit) or {-inf, 0} (unihit); N, C, J from the target
//     length L: pmove = (2+nj)/(L+2+nj), ploop = 1-pmove (float), scores (float)log(double).
// Every score is bit-identical to p7_ProfileConfig's (checked against HMMER 3.3.2's library, all test
// models, all four modes).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/common.hpp"
#include "hmm/hmm.hpp"

namespace warpsearch::hmm {

/// Alignment modes (p7_NO_MODE, p7_LOCAL, p7_GLOCAL, p7_UNILOCAL, p7_UNIGLOCAL; same values).
enum class ProfileMode : int { kNoMode = 0, kLocal = 1, kGlocal = 2, kUniLocal = 3, kUniGlocal = 4 };
inline bool is_local(ProfileMode m) { return m == ProfileMode::kLocal || m == ProfileMode::kUniLocal; }
inline bool is_multihit(ProfileMode m) { return m == ProfileMode::kLocal || m == ProfileMode::kGlocal; }

/// Residue score kinds within a node (p7P_MSC, p7P_ISC).
enum ProfileEmission : int { kPMSC = 0, kPISC = 1 };
inline constexpr int kProfileNR = 2;

struct Profile {
  int M = 0;
  int L = 0;  // target length the N/C/J scores are configured for
  ProfileMode mode = ProfileMode::kNoMode;
  int max_length = -1;
  float nj = 0.0f;  // expected number of J uses: 1 multihit, 0 unihit
  const Abc* abc = nullptr;

  /// Transition scores, [(M+1) * kProfileNTransitions], tsc[k*8 + s] for node k (s = kPMM..kPII).
  /// B->Mk is stored at [(k-1)*8 + kPBM]. Node 0 (other than its kPBM) and node M are -inf.
  std::vector<float> tsc;
  /// Residue scores, rsc[x][k*2 + kPMSC / kPISC] for code x = 0..Kp-1, node k = 0..M (k = 0 is -inf).
  std::vector<std::vector<float>> rsc;
  /// Special-state transitions xsc[kXE..kXC][kLoop/kMove].
  float xsc[kNXStates][kNXTrans] = {};

  // Annotation copied from the Hmm (empty string = absent; per-node strings as in Hmm: [0] = ' ').
  std::string name, acc, desc;
  std::string rf, mm, cs, consensus;
  std::array<float, kNEvParams> evparam{};
  std::array<float, kNCutoffs> cutoff{};
  std::array<float, kMaxAbet> compo{};

  float tsc_at(int k, int s) const { return tsc[static_cast<std::size_t>(k * kProfileNTransitions + s)]; }
  float msc(int k, int x) const {
    return rsc[static_cast<std::size_t>(x)][static_cast<std::size_t>(k * kProfileNR + kPMSC)];
  }
  float isc(int k, int x) const {
    return rsc[static_cast<std::size_t>(x)][static_cast<std::size_t>(k * kProfileNR + kPISC)];
  }
};

/// p7_profile_Create(M) + p7_ProfileConfig(hmm, bg, gm, L, mode). The Hmm must have a consensus
/// (kHmmCons), as HMMER requires; throws warpsearch::Error(kInput) otherwise.
Profile config_profile(const Hmm& hmm, const Bg& bg, int L, ProfileMode mode = ProfileMode::kLocal);

/// p7_ReconfigLength: N, C, J loop/move scores for target length L.
void reconfig_length(Profile& gm, int L);
/// p7_ReconfigMultihit / p7_ReconfigUnihit (E scores, nj), then reconfig_length. As in HMMER, the
/// mode field is not changed.
void reconfig_multihit(Profile& gm, int L);
void reconfig_unihit(Profile& gm, int L);

}  // namespace warpsearch::hmm
