// pipeline.cpp: HMMER 3.3.2's p7_Pipeline in hmmsearch mode (see pipeline.hpp for the stages).
//
// Arithmetic follows p7_pipeline.c expression by expression. The types matter: filter and Forward
// scores, null scores, biases and bit scores are float; P-values, log P-values and eslCONST_LOG2 are
// double; C's usual conversions apply, e.g. `float s = (a - b) / eslCONST_LOG2` subtracts in float,
// divides in double and rounds to float, and `log((float)n / (float)(n+3))` divides in float and takes a
// double log. The casts below spell those conversions out.
#include "hmm/pipeline.hpp"

#include <cmath>
#include <utility>

#include "hmm/fwdback.hpp"
#include "hmm/logsum.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/stats.hpp"
#include "hmm/vitfilter.hpp"

namespace warpsearch::hmm {

float kahan_fsum(const float* vec, int n) {
  float sum = 0.0f;
  float c = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float y = vec[i] - c;
    const float t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  return sum;
}

namespace {

// (a - b) / eslCONST_LOG2 stored into a float: float subtraction, double division, rounding to float.
inline float nats_to_bits(float a, float b) { return static_cast<float>(static_cast<double>(a - b) / kLog2); }

// p7_FLogsum(0.0, log(bg->omega) + x): the double sum rounded to float for FLogsum's float argument.
inline float omega_logsum(float omega, float x) {
  return flogsum(0.0f, static_cast<float>(std::log(static_cast<double>(omega)) + static_cast<double>(x)));
}

// (sq->n - Ld) * log((float) sq->n / (float) (sq->n + 3)): the score of Ld residues' worth of the null
// length model moved into N/C/J states, in double.
inline double length_correction(int64_t n, int64_t Ld) {
  const float ratio = static_cast<float>(n) / static_cast<float>(n + 3);
  return static_cast<double>(n - Ld) * std::log(static_cast<double>(ratio));
}

}  // namespace

Pipeline::Pipeline(const PipelineOptions& options, const ReportOptions& report)
    : options_(options), report_(report), ddef_(options.seed) {
  counts_.F1 = options_.F1;
  counts_.F2 = options_.F2;
  counts_.F3 = options_.F3;
  // p7_pipeline_Create: fwd/bck full matrices and oxf/oxb parser matrices with HMMER's hints (M=M_hint,
  // L=100); they grow on demand.
}

void Pipeline::new_model(const OProfile& om, Bg& bg) {
  counts_.nmodels++;
  counts_.nnodes += static_cast<uint64_t>(om.M);
  if (options_.do_biasfilter) set_filter(bg, om.M, om.compo.data());
  new_model_thresholds(report_, om.cutoff, om.name);
}

void Pipeline::new_seq(int64_t seqidx, int64_t L) {
  counts_.nseqs++;
  counts_.nres += static_cast<uint64_t>(L);
  if (report_.Z_setby == ZSetBy::kNTargets) report_.Z = static_cast<double>(seqidx + 1);
}

void Pipeline::process(OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, const PipelineTarget& target,
                       TopHits& hits) {
  new_seq(target.seqidx, L);
  set_length(bg, static_cast<int>(L));
  reconfig_length(om, static_cast<int>(L));
  run(om, bg, dsq, static_cast<int>(L), target, hits);
  ddef_.reuse();  // p7_pipeline_Reuse (the matrices are reused as they are)
}

void Pipeline::run(OProfile& om, const Bg& bg, const Dsq& dsq, int L, const PipelineTarget& target,
                   TopHits& hits) {
  if (L == 0) return;  // HMMER silently skips empty targets
  // (HMMER 3.3.2 refuses L > 100000 here; we search long targets.)
  const FrontResult f = front_stages(om, bg, dsq, L, msv_filter(dsq, L, om));
  if (f.decision == FrontDecision::kStop) return;
  const FilterScore vit = f.decision == FrontDecision::kViterbi ? viterbi_filter(dsq, L, om) : FilterScore{};
  back_stages(om, bg, dsq, L, f, vit, target, hits);
}

FrontResult Pipeline::front(const OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, int64_t seqidx,
                            FilterScore msv) {
  new_seq(seqidx, L);
  set_length(bg, static_cast<int>(L));
  if (L == 0) return FrontResult{};  // as run(): empty targets are counted, never scored
  return front_stages(om, bg, dsq, static_cast<int>(L), msv);
}

void Pipeline::back(OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, const FrontResult& front,
                    FilterScore vit, const PipelineTarget& target, TopHits& hits) {
  if (front.decision == FrontDecision::kStop || L == 0) return;
  configure_back(om, bg, L, target.seqidx);
  back_stages(om, bg, dsq, static_cast<int>(L), front, vit, target, hits);
  ddef_.reuse();
}

FrontResult Pipeline::front_stages(const OProfile& om, const Bg& bg, const Dsq& dsq, int L, FilterScore msv) {
  FrontResult f;
  f.nullsc = null_one(bg, dsq, L);

  // Stage 1: MSV filter. An overflowing score is +inf and passes (P = 0).
  const float usc = msv.score;
  float seq_score = nats_to_bits(usc, f.nullsc);
  double P = gumbel_surv(seq_score, om.evparam[kMMu], om.evparam[kMLambda]);
  if (P > options_.F1) return f;
  counts_.n_past_msv++;

  // Composition bias filter: the filter HMM's score replaces the null1 score from here on.
  f.filtersc = f.nullsc;
  if (options_.do_biasfilter) {
    f.filtersc = filter_score(bg, dsq, L);
    seq_score = nats_to_bits(usc, f.filtersc);
    P = gumbel_surv(seq_score, om.evparam[kMMu], om.evparam[kMLambda]);
    if (P > options_.F1) return f;
  }
  counts_.n_past_bias++;

  // Stage 2 (Viterbi filter) only when the MSV P-value has not already passed F2.
  f.decision = P > options_.F2 ? FrontDecision::kViterbi : FrontDecision::kForward;
  return f;
}

void Pipeline::configure_back(OProfile& om, Bg& bg, int64_t L, int64_t seqidx) {
  // The running search space size new_seq() set for this target in process() (the front may have run on
  // another Pipeline, or this one has seen other targets since).
  if (report_.Z_setby == ZSetBy::kNTargets) report_.Z = static_cast<double>(seqidx + 1);
  set_length(bg, static_cast<int>(L));
  reconfig_length(om, static_cast<int>(L));
}

bool Pipeline::back_viterbi(const OProfile& om, const FrontResult& front, FilterScore vit) {
  if (front.decision == FrontDecision::kStop) return false;
  return passes_viterbi(om, front, vit);
}

void Pipeline::back_forward(OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, const FrontResult& front,
                            float fwdsc, const PipelineTarget& target, TopHits& hits) {
  if (front.decision == FrontDecision::kStop || L == 0) return;
  configure_back(om, bg, L, target.seqidx);
  after_forward(om, bg, dsq, static_cast<int>(L), front, fwdsc, false, target, hits);
  ddef_.reuse();
}

bool Pipeline::passes_viterbi(const OProfile& om, const FrontResult& front, FilterScore vit) {
  // Stage 2: Viterbi filter.
  if (front.decision == FrontDecision::kViterbi) {
    const float seq_score = nats_to_bits(vit.score, front.filtersc);
    const double P = gumbel_surv(seq_score, om.evparam[kVMu], om.evparam[kVLambda]);
    if (P > options_.F2) return false;
  }
  counts_.n_past_vit++;
  return true;
}

void Pipeline::back_stages(OProfile& om, const Bg& bg, const Dsq& dsq, int L, const FrontResult& front,
                           FilterScore vit, const PipelineTarget& target, TopHits& hits) {
  if (!passes_viterbi(om, front, vit)) return;
  // Stage 3: Forward parser.
  grow_to(oxf_, om.M, L, false);
  const float fwdsc = forward_parser(dsq, L, om, oxf_);
  after_forward(om, bg, dsq, L, front, fwdsc, true, target, hits);
}

void Pipeline::after_forward(OProfile& om, const Bg& bg, const Dsq& dsq, int L, const FrontResult& front,
                             float fwdsc, bool oxf_filled, const PipelineTarget& target, TopHits& hits) {
  const float nullsc = front.nullsc;
  const float filtersc = front.filtersc;
  float seq_score = nats_to_bits(fwdsc, filtersc);
  double P = exp_surv(seq_score, om.evparam[kFTau], om.evparam[kFLambda]);
  if (P > options_.F3) return;
  counts_.n_past_fwd++;
  if (!oxf_filled) {  // the parser matrix Backward and domain definition read (its score is fwdsc)
    grow_to(oxf_, om.M, L, false);
    (void)forward_parser(dsq, L, om, oxf_);
  }

  // Backward parser, then domain definition.
  grow_to(oxb_, om.M, L, false);
  backward_parser(dsq, L, om, oxf_, oxb_);
  const DomainSeqInfo seqinfo{target.name, target.acc, target.desc};
  // eslERANGE from domain definition: HMMER's p7_Pipeline returns an error status that hmmsearch ignores,
  // so the target is dropped silently.
  if (by_posterior_heuristics(dsq, L, seqinfo, om, oxf_, oxb_, fwd_, bck_, ddef_) != DomainDefStatus::kOk)
    return;
  if (ddef_.nregions == 0) return;    // passed the filters, but no discrete domain
  if (ddef_.nenvelopes == 0) return;  // region found, clustering gave no envelope
  if (ddef_.ndom() == 0) return;      // envelope found, no domain identified

  // Null2-corrected per-sequence score.
  float seqbias = 0.0f;
  if (options_.do_null2) {
    seqbias = kahan_fsum(ddef_.n2sc.data(), L + 1);
    seqbias = omega_logsum(bg.omega, seqbias);
  }
  float pre_score = nats_to_bits(fwdsc, nullsc);
  seq_score = nats_to_bits(fwdsc, nullsc + seqbias);

  // Reconstruction score: the sum of the domains' envelope scores (only domains still positive after
  // their null2 correction), plus the null length model for the residues outside them.
  float sum_score = 0.0f;
  seqbias = 0.0f;
  int64_t Ld = 0;
  if (options_.do_null2) {
    for (const Domain& dom : ddef_.dcl) {
      if (dom.envsc - dom.domcorrection > 0.0f) {
        sum_score += dom.envsc;
        Ld += dom.jenv - dom.ienv + 1;
        seqbias += dom.domcorrection;
      }
    }
    seqbias = omega_logsum(bg.omega, seqbias);
  } else {
    for (const Domain& dom : ddef_.dcl) {
      if (dom.envsc > 0.0f) {
        sum_score += dom.envsc;
        Ld += dom.jenv - dom.ienv + 1;
      }
    }
    seqbias = 0.0f;
  }
  sum_score = static_cast<float>(static_cast<double>(sum_score) + length_correction(L, Ld));
  const float pre2_score = nats_to_bits(sum_score, nullsc);
  sum_score = nats_to_bits(sum_score, nullsc + seqbias);

  // The reconstruction score overrides the sequence score when better and it covers >= 1 domain.
  if (Ld > 0 && sum_score > seq_score) {
    seq_score = sum_score;
    pre_score = pre2_score;
  }

  // Keep the target if it is reportable at this point (E-values are only a lower bound yet: Z is the
  // running target count; final thresholds are applied to the whole list later).
  const double lnP = exp_logsurv(seq_score, om.evparam[kFTau], om.evparam[kFLambda]);
  if (!target_reportable(report_, seq_score, lnP)) return;

  Hit hit;
  hit.name = std::string(target.name);
  hit.acc = std::string(target.acc);
  hit.desc = std::string(target.desc);
  hit.seqidx = target.seqidx;
  hit.ndom = ddef_.ndom();
  hit.nexpected = ddef_.nexpected;
  hit.nregions = ddef_.nregions;
  hit.nclustered = ddef_.nclustered;
  hit.noverlaps = ddef_.noverlaps;
  hit.nenvelopes = ddef_.nenvelopes;
  hit.pre_score = pre_score;
  hit.pre_lnP = exp_logsurv(hit.pre_score, om.evparam[kFTau], om.evparam[kFLambda]);
  hit.score = seq_score;
  hit.lnP = lnP;
  hit.sortkey = report_.inc_by_E ? -lnP : static_cast<double>(seq_score);
  hit.sum_score = sum_score;
  hit.sum_lnP = exp_logsurv(hit.sum_score, om.evparam[kFTau], om.evparam[kFLambda]);

  // Domains: each scored as if it were the only one in the target.
  hit.dcl = std::move(ddef_.dcl);
  ddef_.dcl.clear();
  hit.best_domain = 0;
  for (int d = 0; d < hit.ndom; ++d) {
    Domain& dom = hit.dcl[static_cast<std::size_t>(d)];
    const int64_t Ldom = dom.jenv - dom.ienv + 1;
    dom.bitscore = static_cast<float>(static_cast<double>(dom.envsc) + length_correction(L, Ldom));  // nats
    dom.dombias = options_.do_null2 ? omega_logsum(bg.omega, dom.domcorrection) : 0.0f;              // nats
    dom.bitscore = nats_to_bits(dom.bitscore, nullsc + dom.dombias);                                 // bits
    dom.lnP = exp_logsurv(dom.bitscore, om.evparam[kFTau], om.evparam[kFLambda]);
    if (dom.bitscore > hit.dcl[static_cast<std::size_t>(hit.best_domain)].bitscore) hit.best_domain = d;
  }

  // With model-specific bit cutoffs the flags are set now (HMMER does it here for both pipeline modes);
  // otherwise threshold() sets them once the search space sizes are known.
  if (report_.use_bit_cutoffs != BitCutoffs::kNone) {
    if (target_reportable(report_, hit.score, hit.lnP)) {
      hit.flags |= kIsReported;
      if (target_includable(report_, hit.score, hit.lnP)) hit.flags |= kIsIncluded;
    }
    for (Domain& dom : hit.dcl) {
      if (domain_reportable(report_, dom.bitscore, dom.lnP)) {
        dom.is_reported = true;
        if (domain_includable(report_, dom.bitscore, dom.lnP)) dom.is_included = true;
      }
    }
  }
  hits.add(std::move(hit));
}

}  // namespace warpsearch::hmm
