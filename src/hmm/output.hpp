// Text output of an hmmsearch, byte-identical to HMMER 3.3.2: the program header (hmmsearch.c
// output_header), the per-query report (p7_tophits_Targets, p7_tophits_Domains with p7_alidisplay_Print,
// p7_pli_Statistics, "//"), the tabular formats --tblout (p7_tophits_TabularTargets), --domtblout
// (p7_tophits_TabularDomains), --pfamtblout (p7_tophits_TabularXfam) and their comment tail
// (p7_tophits_TabularTail). Every writer appends to a std::string and takes plain data, so the
// formatting is testable without running a search. hmmsearch mode only (targets are sequences).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hmm/reporting.hpp"
#include "hmm/tophits.hpp"

namespace warpsearch::hmm {

/// The query model as the report names it.
struct QueryInfo {
  std::string name;
  std::string acc;   // empty when absent
  std::string desc;  // empty when absent
  int M = 0;
};

/// Options the user set explicitly, in the form hmmsearch's header block echoes them (esl_opt_IsUsed).
/// Unset optionals / false flags print nothing.
struct UsedOptions {
  std::optional<std::string> o, A, tblout, domtblout, pfamtblout;
  bool acc = false, noali = false, notextw = false;
  std::optional<int> textw;
  std::optional<double> E, T, domE, domT, incE, incT, incdomE, incdomT;
  bool cut_ga = false, cut_nc = false, cut_tc = false, max = false;
  std::optional<double> F1, F2, F3;
  bool nobias = false, nonull2 = false;
  std::optional<double> Z, domZ;
  std::optional<int> seed;
  std::optional<std::string> tformat;
  std::optional<int> cpu;
};

/// Banner and option block that opens hmmsearch's main output (p7_banner + output_header), ending with
/// the dashed line and a blank line.
void write_header(std::string& out, std::string_view hmmfile, std::string_view seqfile,
                  const UsedOptions& used);

/// "Query:       <name>  [M=<M>]" plus Accession/Description lines when present.
void write_query(std::string& out, const QueryInfo& q);

/// p7_tophits_Targets: the ranked per-sequence table. `th` sorted and thresholded.
void write_targets(std::string& out, const TopHits& th, const ReportOptions& opts);

/// p7_tophits_Domains: per reported target, its domain table and (unless opts.show_alignments is false)
/// the alignments of reported domains.
void write_domains(std::string& out, const TopHits& th, const ReportOptions& opts);

/// p7_alidisplay_Print: alignment blocks of at least min_aliwidth columns, lines at most linewidth wide
/// (name, coordinates included); linewidth <= 0 prints one block. show_accessions prefers accessions.
void write_alidisplay(std::string& out, const AliDisplay& ad, int min_aliwidth, int linewidth,
                      bool show_accessions);

/// Wall/CPU times shown by the statistics block (esl_stopwatch_Display), in seconds.
struct Stopwatch {
  double user = 0.0;
  double sys = 0.0;
  double elapsed = 0.0;
};

/// p7_pli_Statistics in search mode; `w` adds the "# CPU time" and "# Mc/sec" lines.
void write_statistics(std::string& out, const PipelineCounts& counts, const ReportOptions& opts,
                      const Stopwatch* w);

/// The per-query block that follows write_query(): targets, domains, statistics and the "//" line,
/// each separated as hmmsearch does ("\n\n" after targets and after domains).
void write_query_results(std::string& out, const TopHits& th, const ReportOptions& opts,
                         const PipelineCounts& counts, const Stopwatch* w);

/// --tblout rows (p7_tophits_TabularTargets); the three-line header only when show_header (first query).
void write_tabular_targets(std::string& out, const QueryInfo& q, const TopHits& th, const ReportOptions& opts,
                           bool show_header);

/// --domtblout rows (p7_tophits_TabularDomains); header only when show_header.
void write_tabular_domains(std::string& out, const QueryInfo& q, const TopHits& th, const ReportOptions& opts,
                           bool show_header);

/// --pfamtblout block for one query (p7_tophits_TabularXfam): sequence scores, then reported domains
/// re-ranked by (E-value or score, as inclusion is), name and position.
void write_tabular_xfam(std::string& out, const QueryInfo& q, const TopHits& th, const ReportOptions& opts);

/// The comment tail of each tabular file (p7_tophits_TabularTail). `option_settings` is the spoofed
/// command line (program path, then each set option with its value, then the arguments, each followed
/// by one space); `date` is ctime()'s text including its final newline.
void write_tabular_tail(std::string& out, std::string_view progname, std::string_view qfile,
                        std::string_view tfile, std::string_view option_settings, std::string_view cwd,
                        std::string_view date);

/// HMMER version strings the outputs quote.
inline constexpr std::string_view kHmmerVersion = "3.3.2";
inline constexpr std::string_view kHmmerDate = "Nov 2020";

}  // namespace warpsearch::hmm
