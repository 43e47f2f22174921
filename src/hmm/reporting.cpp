// Reporting/inclusion predicates, model bit cutoffs, hit list thresholding and pipeline counter merging,
// following HMMER 3.3.2's p7_pipeline.c (p7_pli_*Reportable/Includable, p7_pli_NewModelThresholds,
// p7_pipeline_Merge) and p7_tophits.c (p7_tophits_Threshold, workaround_bug_h74) in hmmsearch mode.
#include "hmm/reporting.hpp"

#include <cmath>
#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

void ReportOptions::set_bit_cutoffs(BitCutoffs which) {
  if (which == BitCutoffs::kNone) return;
  T = domT = 0.0;
  by_E = dom_by_E = false;
  incT = incdomT = 0.0;
  inc_by_E = incdom_by_E = false;
  use_bit_cutoffs = which;
}

void new_model_thresholds(ReportOptions& opts, std::span<const float> cutoff, std::string_view model_name) {
  int c1 = 0;
  const char* label = "";
  switch (opts.use_bit_cutoffs) {
    case BitCutoffs::kNone: return;
    case BitCutoffs::kGA: c1 = kGA1, label = "GA"; break;
    case BitCutoffs::kTC: c1 = kTC1, label = "TC"; break;
    case BitCutoffs::kNC: c1 = kNC1, label = "NC"; break;
  }
  const std::size_t i1 = static_cast<std::size_t>(c1);
  if (cutoff.size() < i1 + 2 || cutoff[i1] == kUnset)
    throw Error(ErrorKind::kInput,
                std::string(label) + " bit thresholds unavailable on model " + std::string(model_name));
  // The float cutoffs widen to the double thresholds.
  opts.T = opts.incT = static_cast<double>(cutoff[i1]);
  opts.domT = opts.incdomT = static_cast<double>(cutoff[i1 + 1]);
}

bool target_reportable(const ReportOptions& opts, float score, double lnP) {
  if (opts.by_E) return std::exp(lnP) * opts.Z <= opts.E;
  return static_cast<double>(score) >= opts.T;
}

bool target_includable(const ReportOptions& opts, float score, double lnP) {
  if (opts.inc_by_E) return std::exp(lnP) * opts.Z <= opts.incE;
  return static_cast<double>(score) >= opts.incT;
}

bool domain_reportable(const ReportOptions& opts, float dom_score, double lnP) {
  if (opts.dom_by_E) return std::exp(lnP) * opts.domZ <= opts.domE;
  return static_cast<double>(dom_score) >= opts.domT;
}

bool domain_includable(const ReportOptions& opts, float dom_score, double lnP) {
  if (opts.incdom_by_E) return std::exp(lnP) * opts.domZ <= opts.incdomE;
  return static_cast<double>(dom_score) >= opts.incdomT;
}

namespace {

// workaround_bug_h74: two envelopes of one hit can yield the same alignment coordinates; only the one
// with the better bit score (the earlier one on ties) stays reported/included.
void drop_duplicate_alignments(TopHits& th) {
  for (std::size_t h = 0; h < th.size(); h++) {
    Hit& hit = th.hit(h);
    if (hit.noverlaps == 0) continue;
    for (int d1 = 0; d1 < hit.ndom; d1++)
      for (int d2 = d1 + 1; d2 < hit.ndom; d2++) {
        Domain& a = hit.dcl[static_cast<std::size_t>(d1)];
        Domain& b = hit.dcl[static_cast<std::size_t>(d2)];
        if (a.iali != b.iali || a.jali != b.jali) continue;
        Domain& removed = (a.bitscore >= b.bitscore) ? b : a;
        if (removed.is_reported) removed.is_reported = false, hit.nreported--;
        if (removed.is_included) removed.is_included = false, hit.nincluded--;
      }
  }
}

}  // namespace

void threshold(TopHits& th, ReportOptions& opts) {
  th.sort_by_sortkey();
  // Targets: with model bit cutoffs the pipeline already flagged them.
  if (opts.use_bit_cutoffs == BitCutoffs::kNone) {
    for (std::size_t h = 0; h < th.size(); h++) {
      Hit& hit = th.hit(h);
      if (!(hit.flags & kIsDuplicate) && target_reportable(opts, hit.score, hit.lnP)) {
        hit.flags |= kIsReported;
        if (target_includable(opts, hit.score, hit.lnP)) hit.flags |= kIsIncluded;
      }
    }
  }
  th.nreported = th.nincluded = 0;
  for (std::size_t h = 0; h < th.size(); h++) {
    if (th.hit(h).flags & kIsReported) th.nreported++;
    if (th.hit(h).flags & kIsIncluded) th.nincluded++;
  }
  // The per-domain search space is the number of reported targets unless set by option.
  if (opts.domZ_setby == ZSetBy::kNTargets) opts.domZ = static_cast<double>(th.nreported);

  // Domains: only in reported targets, and only included in included targets.
  if (opts.use_bit_cutoffs == BitCutoffs::kNone) {
    for (std::size_t h = 0; h < th.size(); h++) {
      Hit& hit = th.hit(h);
      if (!(hit.flags & kIsReported)) continue;
      for (int d = 0; d < hit.ndom; d++) {
        Domain& dom = hit.dcl[static_cast<std::size_t>(d)];
        if (domain_reportable(opts, dom.bitscore, dom.lnP)) dom.is_reported = true;
        if ((hit.flags & kIsIncluded) && domain_includable(opts, dom.bitscore, dom.lnP))
          dom.is_included = true;
      }
    }
  }
  for (std::size_t h = 0; h < th.size(); h++) {
    Hit& hit = th.hit(h);
    for (int d = 0; d < hit.ndom; d++) {
      if (hit.dcl[static_cast<std::size_t>(d)].is_reported) hit.nreported++;
      if (hit.dcl[static_cast<std::size_t>(d)].is_included) hit.nincluded++;
    }
  }
  drop_duplicate_alignments(th);
}

void PipelineCounts::merge(const PipelineCounts& other) {
  nseqs += other.nseqs;
  nres += other.nres;
  n_past_msv += other.n_past_msv;
  n_past_bias += other.n_past_bias;
  n_past_vit += other.n_past_vit;
  n_past_fwd += other.n_past_fwd;
  n_output += other.n_output;
  pos_past_msv += other.pos_past_msv;
  pos_past_bias += other.pos_past_bias;
  pos_past_vit += other.pos_past_vit;
  pos_past_fwd += other.pos_past_fwd;
  pos_output += other.pos_output;
}

}  // namespace warpsearch::hmm
