// The core profile HMM in probability form, mirroring HMMER 3.3.2's P7_HMM (hmmer.h, p7_hmm.c): the
// Plan7 node parameters t/mat/ins for nodes 0..M, the optional per-node annotation lines, the model
// header fields (name, acc, desc, NSEQ, EFFN, MAXL, CKSUM, STATS, GA/TC/NC, COMPO) and the p7H_* flags
// saying which optional parts are present. Also the few P7_HMM routines later stages need:
// set_consensus (p7_hmm_SetConsensus with sq=NULL), calculate_occupancy (p7_hmm_CalculateOccupancy)
// and set_composition (p7_hmm_SetComposition), with HMMER's exact float/double arithmetic.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/common.hpp"

namespace warpsearch::hmm {

/// Optional-content flags, same bit values as HMMER's p7H_* (hmmer.h).
enum HmmFlag : unsigned {
  kHmmDesc = 1u << 1,     // p7H_DESC
  kHmmRF = 1u << 2,       // p7H_RF
  kHmmCS = 1u << 3,       // p7H_CS
  kHmmStats = 1u << 7,    // p7H_STATS: evparam[] set
  kHmmMap = 1u << 8,      // p7H_MAP
  kHmmAcc = 1u << 9,      // p7H_ACC
  kHmmGA = 1u << 10,      // p7H_GA: cutoff[kGA1], cutoff[kGA2] set
  kHmmTC = 1u << 11,      // p7H_TC
  kHmmNC = 1u << 12,      // p7H_NC
  kHmmCA = 1u << 13,      // p7H_CA
  kHmmCompo = 1u << 14,   // p7H_COMPO: compo[0..K-1] set
  kHmmChksum = 1u << 15,  // p7H_CHKSUM
  kHmmCons = 1u << 16,    // p7H_CONS: consensus set
  kHmmMMask = 1u << 17,   // p7H_MMASK: mm set
};

/// Sentinel of an unset compo[] entry (p7_COMPO_UNSET).
inline constexpr float kCompoUnset = -1.0f;

struct Hmm {
  int M = 0;
  const Abc* abc = nullptr;

  // Core parameters, probabilities, indexed by node k = 0..M (HMMER's conventions):
  //   t[k][kHMM..kHDD]: transitions out of node k; t[0] are the B (begin) and I0 transitions;
  //     t[M][kHMD] = 0, t[M][kHDD] = 0 (and t[M][kHDM] = 1) as read from the file.
  //   mat[k][0..K-1]: match emissions, k = 1..M; mat[0] = {1, 0, ..., 0} (p7_hmm_CreateBody convention).
  //   ins[k][0..K-1]: insert emissions, k = 0..M.
  std::vector<std::array<float, kHmmNTransitions>> t;
  std::vector<std::vector<float>> mat;
  std::vector<std::vector<float>> ins;

  std::string name;  // mandatory
  std::string acc;   // valid when flags & kHmmAcc
  std::string desc;  // valid when flags & kHmmDesc
  // Per-node annotation strings, each empty when absent or of size M+1 with [0] = ' ' and [k] the node
  // k character, k = 1..M (HMMER's char arrays also hold a NUL at M+1; std::string provides it).
  std::string rf;         // kHmmRF
  std::string mm;         // kHmmMMask
  std::string consensus;  // kHmmCons (legacy formats < 3/e get it from set_consensus when read)
  std::string cs;         // kHmmCS
  std::string ca;         // kHmmCA
  std::vector<int> map;   // kHmmMap: map[k] alignment column of node k, map[0] = 0; else empty

  std::string comlog;  // COM lines joined by '\n' (optional)
  std::string ctime;   // DATE (optional)
  int nseq = -1;
  float eff_nseq = -1.0f;
  int max_length = -1;
  uint32_t checksum = 0;
  std::array<float, kNEvParams> evparam{kUnset, kUnset, kUnset, kUnset, kUnset, kUnset};
  std::array<float, kNCutoffs> cutoff{kUnset, kUnset, kUnset, kUnset, kUnset, kUnset};
  std::array<float, kMaxAbet> compo{};  // [0..K-1] valid when flags & kHmmCompo; kCompoUnset otherwise
  unsigned flags = 0;
  std::string version;  // file format tag, e.g. "3/f" (HMMER3/f), "3/b"

  Hmm() { compo.fill(kCompoUnset); }

  bool has(HmmFlag f) const { return (flags & f) != 0; }
};

/// Allocates the body of a model of M nodes for alphabet a (p7_hmm_CreateBody + p7_hmm_Zero): all
/// parameters 0 except mat[0][0] = 1 and t[0][kHDM] = 1. Annotation and header fields are untouched.
void create_body(Hmm& hmm, int M, const Abc& a);

/// p7_hmm_SetConsensus(hmm, NULL): consensus[k] is the symbol of the first argmax of mat[k], upper case
/// when mat[k][x] >= 0.5 (amino) / 0.9 (DNA, RNA), else lower case; sets kHmmCons.
void set_consensus(Hmm& hmm);

/// p7_hmm_CalculateOccupancy: mocc[0..M] match-state occupancy, and, when iocc is non-null,
/// iocc[0..M] expected insert-state uses (same float/double mix as HMMER).
void calculate_occupancy(const Hmm& hmm, float* mocc, float* iocc);

/// p7_hmm_SetComposition: compo = normalized occupancy-weighted mean emission; sets kHmmCompo.
void set_composition(Hmm& hmm);

}  // namespace warpsearch::hmm
