// Reporting and inclusion thresholds of an hmmsearch (the threshold part of HMMER 3.3.2's P7_PIPELINE):
// ReportOptions with HMMER's defaults, the per-target / per-domain reportable and includable predicates
// (p7_pli_TargetReportable ... DomainIncludable), model-specific bit cutoffs (--cut_ga/tc/nc,
// p7_pli_NewModelThresholds), the final thresholding of a hit list (p7_tophits_Threshold, including its
// workaround for duplicate alignments) and the pipeline's accounting counters (PipelineCounts).
// hmmsearch mode only: targets are sequences, queries are models, no long-target (nhmmer) variants.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "hmm/tophits.hpp"

namespace warpsearch::hmm {

/// How a search space size was set (p7_ZSETBY_NTARGETS, _OPTION, _FILEINFO).
enum class ZSetBy { kNTargets = 0, kOption = 1, kFileInfo = 2 };

/// Model-specific bit score cutoffs in use (FALSE, p7H_GA, p7H_TC, p7H_NC).
enum class BitCutoffs { kNone = 0, kGA, kTC, kNC };

/// Thresholds, search space sizes and display switches; defaults are hmmsearch's (p7_pipeline_Create).
/// An E-value threshold applies when the matching by_E flag is true, else the bit score threshold.
struct ReportOptions {
  // Reporting.
  bool by_E = true;
  double E = 10.0;
  double T = 0.0;
  bool dom_by_E = true;
  double domE = 10.0;
  double domT = 0.0;
  BitCutoffs use_bit_cutoffs = BitCutoffs::kNone;
  // Inclusion.
  bool inc_by_E = true;
  double incE = 0.01;
  double incT = 0.0;
  bool incdom_by_E = true;
  double incdomE = 0.01;
  double incdomT = 0.0;
  // Search space sizes for E-values: Z targets (per-sequence), domZ (per-domain, conditional).
  double Z = 0.0;
  double domZ = 0.0;
  ZSetBy Z_setby = ZSetBy::kNTargets;
  ZSetBy domZ_setby = ZSetBy::kNTargets;
  // Display.
  int textw = 120;               // max text line width; 0 = unlimited (--notextw)
  bool show_alignments = true;   // false with --noali
  bool show_accessions = false;  // true with --acc

  /// -T / --domT / --incT / --incdomT: switch that threshold from E-value to bit score.
  void set_T(double t) { T = t, by_E = false; }
  void set_domT(double t) { domT = t, dom_by_E = false; }
  void set_incT(double t) { incT = t, inc_by_E = false; }
  void set_incdomT(double t) { incdomT = t, incdom_by_E = false; }
  /// --cut_ga / --cut_tc / --cut_nc: all four thresholds become model bit scores (set per model by
  /// new_model_thresholds). kNone leaves the options unchanged.
  void set_bit_cutoffs(BitCutoffs which);
  /// -Z / --domZ.
  void set_Z(double z) { Z = z, Z_setby = ZSetBy::kOption; }
  void set_domZ(double z) { domZ = z, domZ_setby = ZSetBy::kOption; }
};

/// p7_pli_NewModelThresholds: with bit cutoffs in use, copies the model's cutoff pair into T/incT and
/// domT/incdomT. `cutoff` is indexed by Cutoff (kGA1..kNC2), kUnset when absent. Throws
/// Error(kInput, "GA bit thresholds unavailable on model <name>") (TC/NC likewise) when unset.
void new_model_thresholds(ReportOptions& opts, std::span<const float> cutoff, std::string_view model_name);

/// p7_pli_TargetReportable etc. (hmmsearch mode): E-value = exp(lnP) * Z (domZ for domains).
bool target_reportable(const ReportOptions& opts, float score, double lnP);
bool target_includable(const ReportOptions& opts, float score, double lnP);
bool domain_reportable(const ReportOptions& opts, float dom_score, double lnP);
bool domain_includable(const ReportOptions& opts, float dom_score, double lnP);

/// p7_tophits_Threshold: on a hit list sorted by sort_by_sortkey(), flags reported/included targets and
/// domains (unless bit cutoffs are in use: then the pipeline set the flags already), counts them
/// (th.nreported/nincluded, hit.nreported/nincluded), sets opts.domZ to the number of reported targets when
/// domZ_setby is kNTargets, and unflags the weaker of two domains with identical alignment coordinates in
/// hits with overlapping envelopes (HMMER's bug h74 workaround).
void threshold(TopHits& th, ReportOptions& opts);

/// Accounting counters of a pipeline (P7_PIPELINE's accounting part) and the filter thresholds the
/// statistics report prints next to them. Counters of several pipelines add up with merge().
struct PipelineCounts {
  uint64_t nmodels = 0;
  uint64_t nseqs = 0;
  uint64_t nres = 0;
  uint64_t nnodes = 0;
  uint64_t n_past_msv = 0;
  uint64_t n_past_bias = 0;
  uint64_t n_past_vit = 0;
  uint64_t n_past_fwd = 0;
  uint64_t n_output = 0;
  uint64_t pos_past_msv = 0;
  uint64_t pos_past_bias = 0;
  uint64_t pos_past_vit = 0;
  uint64_t pos_past_fwd = 0;
  uint64_t pos_output = 0;
  double F1 = 0.02;  // MSV filter P-value threshold (1.0 with --max)
  double F2 = 1e-3;  // Viterbi filter threshold
  double F3 = 1e-5;  // Forward filter threshold

  /// p7_pipeline_Merge in search mode: adds the other pipeline's sequence, residue and filter counters;
  /// nmodels/nnodes and the thresholds are kept (every worker pipeline saw the same model).
  void merge(const PipelineCounts& other);
};

}  // namespace warpsearch::hmm
