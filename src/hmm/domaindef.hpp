// domaindef.hpp: domain definition of a significant target sequence (HMMER 3.3.2 p7_domaindef.c,
// p7_domaindef_ByPosteriorHeuristics with its helpers is_multidomain_region, region_trace_ensemble and
// rescore_isolated_domain, hmmsearch/protein case: no long-target/nhmmer branches).
//
// Workflow for one sequence (after Forward/Backward *parser* passes filled oxf/oxb on the whole seq):
//   1. domain_decoding -> mocc[i] (P(residue i in a domain)), btot/etot[i] (cumulative expected B/E).
//   2. Regions: scanning j = 1..L, a region opens at the last i where mocc-bocc < rt2 and is triggered
//      once mocc >= rt1; it closes at the first j (after the trigger) where mocc-eocc < rt2.
//   3. A region with max_z min(E before z, B after z) >= rt3 is "multidomain": Forward (multihit) on the
//      region, nsamples stochastic tracebacks (RNG reseeded from its seed first, when do_reseeding),
//      null2 by trace averaged over samples -> n2sc, segment pairs clustered (SpEnsemble), dominated
//      clusters (>= 80% overlap, lower posterior) removed; each remaining cluster is an envelope.
//      Otherwise the region itself is one envelope.
//   4. Each envelope i..j is rescored in unihit mode: Forward (envsc), Backward, posterior decoding,
//      optimal-accuracy alignment + traceback (-> AliDisplay via make_alidisplay), null2 by expectation
//      (unless set by step 3), domcorrection = sum of n2sc over i..j (nats).
// The OProfile is switched to unihit mode during the work and restored to its original mode and length
// before returning (HMMER mutates its P7_OPROFILE the same way; callers use a per-thread profile).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "hmm/common.hpp"
#include "hmm/rng.hpp"
#include "hmm/spensemble.hpp"
#include "hmm/tophits.hpp"
#include "hmm/trace.hpp"

namespace warpsearch::hmm {

struct OProfile;  // oprofile.hpp
struct Omx;       // omx.hpp

/// P7_DOMAINDEF: thresholds, working memory and per-sequence results of domain definition.
struct DomainDef {
  /// Creates the object as p7_pipeline_Create does for hmmsearch: Easel's *fast* (LCG) generator seeded
  /// with `seed` (pipeline --seed, default 42); seed 0 means an arbitrary seed and no reseeding.
  explicit DomainDef(uint32_t seed = 42);

  // Posterior arrays [0..L] from domain_decoding, and the null2 log-odds score of each residue (nats).
  std::vector<float> mocc, btot, etot, n2sc;
  int L = 0;

  Rng rng;                   // random generator for stochastic tracebacks (HMMER's pli->r)
  bool do_reseeding = true;  // reset rng to its seed before each region's trace ensemble
  SpEnsemble sp;             // sampled segment pairs of the current region
  Trace tr{true};            // reusable trace with posterior probabilities

  // Region thresholds (rt1..rt3) and ensemble/clustering parameters.
  float rt1 = 0.25f;
  float rt2 = 0.10f;
  float rt3 = 0.20f;
  int nsamples = 200;
  SpLinkParams link;  // min_overlap 0.8, of_smaller, max_diagdiff 4, min_posterior 0.25, min_endpointp 0.02

  // Results: one Domain per successfully rescored envelope, in order of definition.
  std::vector<Domain> dcl;
  int ndom() const { return static_cast<int>(dcl.size()); }
  float nexpected = 0.0f;  // posterior expected number of domains (btot[L])
  int nregions = 0;        // regions evaluated
  int nclustered = 0;      // regions resolved by trace clustering
  int noverlaps = 0;       // clustered envelopes overlapping the previous envelope
  int nenvelopes = 0;      // envelopes handed to rescoring

  /// p7_domaindef_Reuse: clears the results and counters for a new sequence (thresholds, rng kept).
  void reuse();
};

/// Names of the target sequence, for the alignment displays.
struct DomainSeqInfo {
  std::string_view name;
  std::string_view acc;
  std::string_view desc;
};

enum class DomainDefStatus : uint8_t {
  kOk,
  kRange,  ///< HMMER's eslERANGE: infinite scale product in domain decoding; no domains defined
};

/// p7_domaindef_ByPosteriorHeuristics (hmmsearch case). dsq/L: the target (Easel layout); om: the
/// profile in its search configuration (multihit, length L), temporarily reconfigured; oxf/oxb: Forward
/// and Backward parser matrices of the whole sequence; fwd/bck: full matrices used as workspace (resized
/// as needed). Call ddef.reuse() first for each new sequence (as p7_pipeline_Reuse does).
DomainDefStatus by_posterior_heuristics(const Dsq& dsq, int L, const DomainSeqInfo& seq, OProfile& om,
                                        const Omx& oxf, const Omx& oxb, Omx& fwd, Omx& bck, DomainDef& ddef);

/// is_multidomain_region: true when max over z in i..j of min(etot[z]-etot[i-1], btot[j]-btot[z-1])
/// (float) is >= rt3. Exposed for tests.
bool is_multidomain_region(const DomainDef& ddef, int i, int j);

}  // namespace warpsearch::hmm
