// pipeline.hpp: HMMER 3.3.2's accelerated comparison pipeline in hmmsearch mode (p7_pipeline.c:
// P7_PIPELINE, p7_pipeline_Create, p7_pli_NewModel, p7_pli_NewSeq, p7_Pipeline, p7_pipeline_Reuse),
// one model against one target sequence at a time, with HMMER's exact float/double arithmetic.
//
// Stages for a target dsq[1..L] (om configured multihit local for length L, bg for length L):
//   null1 score nullsc -> MSV filter (P from the Gumbel MSV parameters; P > F1 stops) -> bias filter
//   (the 2-state composition HMM replaces nullsc in the filter scores; P > F1 stops) -> Viterbi filter
//   (skipped when the biased MSV P is already <= F2; P > F2 stops) -> Forward parser (exponential tail P;
//   P > F3 stops) -> Backward parser -> domain definition (domaindef.hpp) -> null2-corrected sequence
//   score, the "sum of domains" reconstruction score that replaces it when better, per-domain scores ->
//   a Hit when the target passes the (running) reporting threshold.
// --max sets F1 = F2 = F3 = 1 and turns the bias filter off; --nobias / --nonull2 turn those parts off.
//
// A Pipeline holds the per-worker state (DP matrices, domain definition with its random generator) and
// the accounting counters. It is not thread-safe; multithreaded searches give each worker its own
// Pipeline, Bg and OProfile copy (both are changed per sequence) and merge the counters afterwards.
// Results do not depend on which pipeline processes a sequence: the generator is reseeded before each
// stochastic trace ensemble (unless seed == 0, HMMER's "arbitrary seed" mode), and the running search
// space size used by the in-pipeline reporting test is the target's 1-based index in the database, as in
// a serial hmmsearch.
//
// Staged use (filter engines, filter_engine.hpp): process() = front() + back(). front() takes the MSV
// filter score computed elsewhere (an engine's msv() over the whole database) and runs null1, the MSV
// decision and the bias filter; it tells whether the target stops, needs the Viterbi filter, or goes to
// Forward directly. back() takes the Viterbi filter score (an engine's viterbi() on the targets that need
// it) and does the rest. Both run the same private stage functions as run(), so given the scores that
// msv_filter / viterbi_filter return, the counters and hits are those of process(); the front and the
// back of one target may run on different Pipelines (the back sets the running Z itself).
#pragma once

#include <cstdint>
#include <string_view>

#include "hmm/bg.hpp"
#include "hmm/common.hpp"
#include "hmm/domaindef.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/reporting.hpp"
#include "hmm/tophits.hpp"

namespace warpsearch::hmm {

/// Acceleration options (p7_pipeline_Create's F1/F2/F3, --max, --nobias, --nonull2, --seed).
struct PipelineOptions {
  double F1 = 0.02;  // MSV (and bias) filter P-value threshold
  double F2 = 1e-3;  // Viterbi filter threshold
  double F3 = 1e-5;  // Forward filter threshold
  bool do_max = false;
  bool do_biasfilter = true;
  bool do_null2 = true;
  uint32_t seed = 42;  // 0: arbitrary one-time seed, no reseeding (results then vary run to run)

  /// --max: all filters pass everything (F1 = F2 = F3 = 1.0) and no bias filter.
  void set_max() {
    do_max = true;
    do_biasfilter = false;
    F1 = F2 = F3 = 1.0;
  }
  /// --F1/--F2/--F3 values are capped at 1.0 as HMMER does (ESL_MIN(1.0, x)).
  void set_F1(double f) { F1 = f < 1.0 ? f : 1.0; }
  void set_F2(double f) { F2 = f < 1.0 ? f : 1.0; }
  void set_F3(double f) { F3 = f < 1.0 ? f : 1.0; }
};

/// The target as the hit list names it.
struct PipelineTarget {
  std::string_view name;
  std::string_view acc;   // empty when absent
  std::string_view desc;  // empty when absent
  int64_t seqidx = 0;     // 0-based index in the database
};

/// Kahan-compensated float sum of vec[0..n-1] (esl_vec_FSum).
float kahan_fsum(const float* vec, int n);

/// What the front of the staged pipeline decided for one target.
enum class FrontDecision : uint8_t {
  kStop,     // empty target, or stopped by the MSV or the bias filter: nothing more to do
  kViterbi,  // passed MSV and bias with P > F2: the Viterbi filter decides (back() needs its score)
  kForward,  // passed MSV and bias with P <= F2: the Viterbi filter is skipped, straight to Forward
};
struct FrontResult {
  FrontDecision decision = FrontDecision::kStop;
  float nullsc = 0.0f;    // null1 score (nats)
  float filtersc = 0.0f;  // the null score of the filter stages: the bias filter's score, or nullsc
};

class Pipeline {
 public:
  /// p7_pipeline_Create(go, ..., p7_SEARCH_SEQS): `report` holds the thresholds as configured from the
  /// options (set_T, set_bit_cutoffs, set_Z, ...); the pipeline keeps its own copy, which new_model()
  /// completes with the model's bit cutoffs.
  Pipeline(const PipelineOptions& options, const ReportOptions& report);

  /// p7_pli_NewModel (search mode): counts the model, sets the bias filter of bg from the model
  /// composition (call set_length(bg, L) afterwards, before any sequence), and with bit cutoffs in use
  /// copies the model's cutoffs into the thresholds (Error(kInput) "GA bit thresholds unavailable on
  /// model NAME" when missing).
  void new_model(const OProfile& om, Bg& bg);

  /// p7_pli_NewSeq: counts the target (nseqs, nres) and sets the running search space size Z to
  /// seqidx + 1 unless -Z was given.
  void new_seq(int64_t seqidx, int64_t L);

  /// p7_Pipeline: runs the stages on dsq[1..L] (om and bg already configured for length L, after
  /// new_seq) and appends a Hit to `hits` when the target is reportable at this point (E-value with the
  /// running Z, or the bit thresholds). Length-0 targets are skipped. om is modified temporarily by domain
  /// definition and restored.
  void run(OProfile& om, const Bg& bg, const Dsq& dsq, int L, const PipelineTarget& target, TopHits& hits);

  /// new_seq + bg/om length configuration + run + reuse: one target, as hmmsearch's worker loop.
  void process(OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, const PipelineTarget& target, TopHits& hits);

  /// Staged pipeline, first part: new_seq(seqidx, L), set_length(bg, L), then (L > 0) null1, the MSV
  /// filter decision on `msv` (msv_filter's result with om configured for length L) and the bias filter.
  /// Counts nseqs, nres, n_past_msv, n_past_bias as process() does. om is only read (its E-value
  /// parameters: any length configuration will do).
  FrontResult front(const OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, int64_t seqidx, FilterScore msv);

  /// Staged pipeline, second part, for a target whose front() (on this or another Pipeline of the same
  /// model) did not stop: sets the running Z from target.seqidx as new_seq does, configures bg and om for
  /// length L, then the Viterbi filter decision on `vit` (viterbi_filter's result with om configured for
  /// L; only read when front.decision == kViterbi), Forward, Backward, domain definition and the hit, as
  /// run(); then reuse. Counts n_past_vit, n_past_fwd. A kStop front does nothing.
  void back(OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, const FrontResult& front, FilterScore vit,
            const PipelineTarget& target, TopHits& hits);

  /// back() split at the Forward filter, for callers that compute the Forward parser's scores of many
  /// targets together (fwd_pair.hpp): back_viterbi is back()'s Viterbi filter decision, true when the
  /// target goes on to the Forward filter (counts n_past_vit; false for a kStop front); back_forward is the
  /// rest of back() given `fwdsc`, forward_parser's score of the target with om configured for length L
  /// (it runs forward_parser again for Backward only when the target passes the Forward filter). The two
  /// together on every target count and report what back() does.
  bool back_viterbi(const OProfile& om, const FrontResult& front, FilterScore vit);
  void back_forward(OProfile& om, Bg& bg, const Dsq& dsq, int64_t L, const FrontResult& front, float fwdsc,
                    const PipelineTarget& target, TopHits& hits);

  const PipelineOptions& options() const { return options_; }
  const ReportOptions& report() const { return report_; }
  const PipelineCounts& counts() const { return counts_; }
  PipelineCounts& counts() { return counts_; }

 private:
  // The stages shared by run() and the staged entry points (L > 0; om configured for L in back_stages).
  FrontResult front_stages(const OProfile& om, const Bg& bg, const Dsq& dsq, int L, FilterScore msv);
  void back_stages(OProfile& om, const Bg& bg, const Dsq& dsq, int L, const FrontResult& front,
                   FilterScore vit, const PipelineTarget& target, TopHits& hits);
  // back() and back_forward() for target seqidx of length L: the running Z, bg and om configured for L.
  void configure_back(OProfile& om, Bg& bg, int64_t L, int64_t seqidx);
  // Stage 2's decision (counts n_past_vit when it passes).
  bool passes_viterbi(const OProfile& om, const FrontResult& front, FilterScore vit);
  // From the Forward filter decision on: oxf_filled says whether oxf_ holds forward_parser's matrix of
  // this target (else it is recomputed when the target passes).
  void after_forward(OProfile& om, const Bg& bg, const Dsq& dsq, int L, const FrontResult& front, float fwdsc,
                     bool oxf_filled, const PipelineTarget& target, TopHits& hits);

  PipelineOptions options_;
  ReportOptions report_;
  PipelineCounts counts_;
  Omx oxf_;  // one-row parser matrices (Forward, Backward) of the whole target
  Omx oxb_;
  Omx fwd_;  // full matrices, workspace of domain definition
  Omx bck_;
  DomainDef ddef_;
};

}  // namespace warpsearch::hmm
