// HMMER 3.3.2's hmmsearch text outputs (see output.hpp). Each writer reproduces the printf formats of
// p7_tophits.c, p7_alidisplay.c, p7_pipeline.c and hmmsearch.c field by field with C's own snprintf, so
// %g/%f rounding is exactly the C library's. Only the hmmsearch (sequence search, protein-size target)
// branches are implemented.
#include "hmm/output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

namespace warpsearch::hmm {

namespace {

constexpr double kLog2R = 1.44269504088896341;  // eslCONST_LOG2R: nats -> bits

// printf-style append (the C library formats, so rounding and %g rules match HMMER's output).
__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (static_cast<std::size_t>(n) < sizeof small) {
    out.append(small, static_cast<std::size_t>(n));
    return;
  }
  const std::size_t old = out.size();
  out.resize(old + static_cast<std::size_t>(n) + 1);
  va_start(ap, fmt);
  std::vsnprintf(out.data() + old, static_cast<std::size_t>(n) + 1, fmt, ap);
  va_end(ap);
  out.resize(old + static_cast<std::size_t>(n));
}

// C string view of a std::string for %s (strings never hold NULs).
const char* cs(const std::string& s) { return s.c_str(); }

// HMMER's "%-.*s": at most `width` characters of s.
std::string truncated(const std::string& s, int width) {
  return s.substr(0, static_cast<std::size_t>(std::max(0, width)));
}

int max_accession_length(const TopHits& th) {
  std::size_t mx = 0;
  for (std::size_t h = 0; h < th.size(); h++) mx = std::max(mx, th.unsorted(h).acc.size());
  return static_cast<int>(mx);
}

const char* dash_if_empty(const std::string& s) { return s.empty() ? "-" : s.c_str(); }

/// Column widths of the --tblout / --domtblout name and accession fields (p7_tophits_TabularTargets and
/// p7_tophits_TabularDomains): at least 20 for names and 10 for accessions, else the longest one.
struct TabularWidths {
  int qname, tname, qacc, tacc;
};
TabularWidths tabular_widths(const QueryInfo& q, const TopHits& th) {
  return {std::max(20, static_cast<int>(q.name.size())), std::max(20, th.max_name_length()),
          std::max(10, static_cast<int>(q.acc.size())), std::max(10, max_accession_length(th))};
}

// Number of decimal digits of n (integer_textwidth in p7_alidisplay.c; 0 for n == 0).
int integer_textwidth(long n) {
  int w = (n < 0) ? 1 : 0;
  while (n != 0) {
    n /= 10;
    w++;
  }
  return w;
}

// Per-domain accuracy column: oasc / (1 + |jenv - ienv|), the difference taken as float as HMMER does.
double domain_accuracy(const Domain& d) {
  return static_cast<double>(d.oasc) /
         (1.0 + std::fabs(static_cast<double>(static_cast<float>(d.jenv - d.ienv))));
}

// esl_stopwatch's format_time_string with hundredths.
std::string format_time(double sec) {
  const int h = static_cast<int>(sec / 3600.);
  const int m = static_cast<int>(sec / 60.) - h * 60;
  const int s = static_cast<int>(sec) - h * 3600 - m * 60;
  const int hs = static_cast<int>(sec * 100.) - h * 360000 - m * 6000 - s * 100;
  std::string out;
  appendf(out, "%02d:%02d:%02d.%02d", h, m, s, hs);
  return out;
}

}  // namespace

void write_header(std::string& out, std::string_view hmmfile, std::string_view seqfile,
                  const UsedOptions& u) {
  out += "# hmmsearch :: search profile(s) against a sequence database\n";
  appendf(out, "# HMMER %s (%s); http://hmmer.org/\n", std::string(kHmmerVersion).c_str(),
          std::string(kHmmerDate).c_str());
  out += "# Copyright (C) 2020 Howard Hughes Medical Institute.\n";
  out += "# Freely distributed under the BSD open source license.\n";
  out += "# - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n";
  appendf(out, "# query HMM file:                  %s\n", std::string(hmmfile).c_str());
  appendf(out, "# target sequence database:        %s\n", std::string(seqfile).c_str());
  if (u.o) appendf(out, "# output directed to file:         %s\n", cs(*u.o));
  if (u.A) appendf(out, "# MSA of all hits saved to file:   %s\n", cs(*u.A));
  if (u.tblout) appendf(out, "# per-seq hits tabular output:     %s\n", cs(*u.tblout));
  if (u.domtblout) appendf(out, "# per-dom hits tabular output:     %s\n", cs(*u.domtblout));
  if (u.pfamtblout) appendf(out, "# pfam-style tabular hit output:   %s\n", cs(*u.pfamtblout));
  if (u.acc) out += "# prefer accessions over names:    yes\n";
  if (u.noali) out += "# show alignments in output:       no\n";
  if (u.notextw) out += "# max ASCII text line length:      unlimited\n";
  if (u.textw) appendf(out, "# max ASCII text line length:      %d\n", *u.textw);
  if (u.E) appendf(out, "# sequence reporting threshold:    E-value <= %g\n", *u.E);
  if (u.T) appendf(out, "# sequence reporting threshold:    score >= %g\n", *u.T);
  if (u.domE) appendf(out, "# domain reporting threshold:      E-value <= %g\n", *u.domE);
  if (u.domT) appendf(out, "# domain reporting threshold:      score >= %g\n", *u.domT);
  if (u.incE) appendf(out, "# sequence inclusion threshold:    E-value <= %g\n", *u.incE);
  if (u.incT) appendf(out, "# sequence inclusion threshold:    score >= %g\n", *u.incT);
  if (u.incdomE) appendf(out, "# domain inclusion threshold:      E-value <= %g\n", *u.incdomE);
  if (u.incdomT) appendf(out, "# domain inclusion threshold:      score >= %g\n", *u.incdomT);
  if (u.cut_ga) out += "# model-specific thresholding:     GA cutoffs\n";
  if (u.cut_nc) out += "# model-specific thresholding:     NC cutoffs\n";
  if (u.cut_tc) out += "# model-specific thresholding:     TC cutoffs\n";
  if (u.max) out += "# Max sensitivity mode:            on [all heuristic filters off]\n";
  if (u.F1) appendf(out, "# MSV filter P threshold:       <= %g\n", *u.F1);
  if (u.F2) appendf(out, "# Vit filter P threshold:       <= %g\n", *u.F2);
  if (u.F3) appendf(out, "# Fwd filter P threshold:       <= %g\n", *u.F3);
  if (u.nobias) out += "# biased composition HMM filter:   off\n";
  if (u.nonull2) out += "# null2 bias corrections:          off\n";
  if (u.Z) appendf(out, "# sequence search space set to:    %.0f\n", *u.Z);
  if (u.domZ) appendf(out, "# domain search space set to:      %.0f\n", *u.domZ);
  if (u.seed) {
    // HMMER 3.3.2 prints both lines for --seed 0 (its "if (seed == 0 && fprintf(...) < 0) ... else
    // fprintf(...)" falls through to the second one).
    if (*u.seed == 0) out += "# random number seed:              one-time arbitrary\n";
    appendf(out, "# random number seed set to:       %d\n", *u.seed);
  }
  if (u.tformat) appendf(out, "# targ <seqfile> format asserted:  %s\n", cs(*u.tformat));
  if (u.cpu) appendf(out, "# number of worker threads:        %d\n", *u.cpu);
  out += "# - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n\n";
}

void write_query(std::string& out, const QueryInfo& q) {
  appendf(out, "Query:       %s  [M=%d]\n", cs(q.name), q.M);
  if (!q.acc.empty()) appendf(out, "Accession:   %s\n", cs(q.acc));
  if (!q.desc.empty()) appendf(out, "Description: %s\n", cs(q.desc));
}

void write_targets(std::string& out, const TopHits& th, const ReportOptions& opts) {
  const int namew = std::max(8, opts.show_accessions ? th.max_shown_length() : th.max_name_length());
  // 61 characters of fixed fields besides the name and the description.
  const int descw = opts.textw > 0 ? std::max(32, opts.textw - namew - 61) : 0;

  out += "Scores for complete sequences (score includes all domains):\n";
  appendf(out, "  %22s  %22s  %8s\n", " --- full sequence ---", " --- best 1 domain ---", "-#dom-");
  appendf(out, "  %9s %6s %5s  %9s %6s %5s  %5s %2s  %-*s %s\n", "E-value", " score", " bias", "E-value",
          " score", " bias", "  exp", "N", namew, "Sequence", "Description");
  appendf(out, "  %9s %6s %5s  %9s %6s %5s  %5s %2s  %-*s %s\n", "-------", "------", "-----", "-------",
          "------", "-----", " ----", "--", namew, "--------", "-----------");

  bool printed_incthresh = false;
  for (std::size_t h = 0; h < th.size(); h++) {
    const Hit& hit = th.hit(h);
    if (!(hit.flags & kIsReported)) continue;
    const Domain& best = hit.dcl[static_cast<std::size_t>(hit.best_domain)];
    if (!(hit.flags & kIsIncluded) && !printed_incthresh) {
      out += "  ------ inclusion threshold ------\n";
      printed_incthresh = true;
    }
    const std::string& showname = (opts.show_accessions && !hit.acc.empty()) ? hit.acc : hit.name;
    const char newness = (hit.flags & kIsNew) ? '+' : (hit.flags & kIsDropped) ? '-' : ' ';
    appendf(out, "%c %9.2g %6.1f %5.1f  %9.2g %6.1f %5.1f  %5.1f %2d  %-*s ", newness,
            std::exp(hit.lnP) * opts.Z, static_cast<double>(hit.score),
            static_cast<double>(hit.pre_score - hit.score), std::exp(best.lnP) * opts.Z,
            static_cast<double>(best.bitscore), kLog2R * static_cast<double>(best.dombias),
            static_cast<double>(hit.nexpected), hit.nreported, namew, cs(showname));
    if (opts.textw > 0)
      appendf(out, " %s\n", truncated(hit.desc, descw).c_str());
    else
      appendf(out, " %s\n", cs(hit.desc));
  }
  if (th.nreported == 0) out += "\n   [No hits detected that satisfy reporting thresholds]\n";
}

void write_alidisplay(std::string& out, const AliDisplay& ad, int min_aliwidth, int linewidth,
                      bool show_accessions) {
  const std::string& show_hmmname = (show_accessions && !ad.hmmacc.empty()) ? ad.hmmacc : ad.hmmname;
  const std::string& show_seqname = (show_accessions && !ad.sqacc.empty()) ? ad.sqacc : ad.sqname;

  const int namewidth = static_cast<int>(std::max(show_hmmname.size(), show_seqname.size()));
  const int coordwidth = std::max(std::max(integer_textwidth(ad.hmmfrom), integer_textwidth(ad.hmmto)),
                                  std::max(integer_textwidth(static_cast<long>(ad.sqfrom)),
                                           integer_textwidth(static_cast<long>(ad.sqto))));
  int aliwidth = (linewidth > 0) ? linewidth - namewidth - 2 * coordwidth - 5 : ad.N;
  if (aliwidth < ad.N && aliwidth < min_aliwidth) aliwidth = min_aliwidth;

  // One block per aliwidth columns; a block's slice of each line is what strncpy into the width-limited
  // buffer leaves: at most aliwidth characters.
  auto slice = [&](const std::string& line, int pos) {
    return line.substr(static_cast<std::size_t>(pos), static_cast<std::size_t>(aliwidth));
  };
  long i1 = static_cast<long>(ad.sqfrom);
  int k1 = ad.hmmfrom;
  for (int pos = 0; pos < ad.N; pos += aliwidth) {
    if (pos > 0) out += "\n";
    int ni = 0, nk = 0;
    for (int z = pos; z < pos + aliwidth && z < ad.N; z++) {
      if (ad.model[static_cast<std::size_t>(z)] != '.') nk++;
      if (ad.aseq[static_cast<std::size_t>(z)] != '-') ni++;
    }
    const int k2 = k1 + nk - 1;
    const long i2 = (ad.sqfrom < ad.sqto) ? i1 + ni - 1 : i1 - ni + 1;

    if (!ad.csline.empty())
      appendf(out, "  %*s %s CS\n", namewidth + coordwidth + 1, "", slice(ad.csline, pos).c_str());
    if (!ad.rfline.empty())
      appendf(out, "  %*s %s RF\n", namewidth + coordwidth + 1, "", slice(ad.rfline, pos).c_str());
    if (!ad.mmline.empty())
      appendf(out, "  %*s %s MM\n", namewidth + coordwidth + 1, "", slice(ad.mmline, pos).c_str());
    appendf(out, "  %*s %*d %s %-*d\n", namewidth, cs(show_hmmname), coordwidth, k1,
            slice(ad.model, pos).c_str(), coordwidth, k2);
    appendf(out, "  %*s %s\n", namewidth + coordwidth + 1, " ", slice(ad.mline, pos).c_str());
    if (ni > 0)
      appendf(out, "  %*s %*ld %s %-*ld\n", namewidth, cs(show_seqname), coordwidth, i1,
              slice(ad.aseq, pos).c_str(), coordwidth, i2);
    else
      appendf(out, "  %*s %*s %s %*s\n", namewidth, cs(show_seqname), coordwidth, "-",
              slice(ad.aseq, pos).c_str(), coordwidth, "-");
    if (!ad.ppline.empty())
      appendf(out, "  %*s %s PP\n", namewidth + coordwidth + 1, "", slice(ad.ppline, pos).c_str());

    k1 += nk;
    if (ad.sqfrom < ad.sqto)
      i1 += ni;
    else
      i1 -= ni;
  }
}

void write_domains(std::string& out, const TopHits& th, const ReportOptions& opts) {
  appendf(out, "Domain annotation for each %s%s:\n", "sequence",
          opts.show_alignments ? " (and alignments)" : "");

  for (std::size_t h = 0; h < th.size(); h++) {
    const Hit& hit = th.hit(h);
    if (!(hit.flags & kIsReported)) continue;
    const std::string& showname = (opts.show_accessions && !hit.acc.empty()) ? hit.acc : hit.name;
    const int namew = static_cast<int>(showname.size());
    if (opts.textw > 0) {
      const int descw = std::max(32, opts.textw - namew - 5);
      appendf(out, ">> %s  %s\n", cs(showname), truncated(hit.desc, descw).c_str());
    } else {
      appendf(out, ">> %s  %s\n", cs(showname), cs(hit.desc));
    }

    if (hit.nreported == 0) {
      out +=
          "   [No individual domains that satisfy reporting thresholds (although complete target did)]\n\n";
      continue;
    }

    appendf(out, " %3s   %6s %5s %9s %9s %7s %7s %2s %7s %7s %2s %7s %7s %2s %4s\n", "#", "score", "bias",
            "c-Evalue", "i-Evalue", "hmmfrom", "hmm to", "  ", "alifrom", "ali to", "  ", "envfrom", "env to",
            "  ", "acc");
    appendf(out, " %3s   %6s %5s %9s %9s %7s %7s %2s %7s %7s %2s %7s %7s %2s %4s\n", "---", "------", "-----",
            "---------", "---------", "-------", "-------", "  ", "-------", "-------", "  ", "-------",
            "-------", "  ", "----");

    int nd = 0;
    for (int d = 0; d < hit.ndom; d++) {
      const Domain& dom = hit.dcl[static_cast<std::size_t>(d)];
      if (!dom.is_reported) continue;
      nd++;
      const AliDisplay& ad = dom.ad;
      appendf(out, " %3d %c %6.1f %5.1f %9.2g %9.2g %7d %7d %c%c", nd, dom.is_included ? '!' : '?',
              static_cast<double>(dom.bitscore), static_cast<double>(dom.dombias) * kLog2R,
              std::exp(dom.lnP) * opts.domZ, std::exp(dom.lnP) * opts.Z, ad.hmmfrom, ad.hmmto,
              ad.hmmfrom == 1 ? '[' : '.', ad.hmmto == ad.M ? ']' : '.');
      appendf(out, " %7lld %7lld %c%c", static_cast<long long>(ad.sqfrom), static_cast<long long>(ad.sqto),
              ad.sqfrom == 1 ? '[' : '.', ad.sqto == ad.L ? ']' : '.');
      appendf(out, " %7lld %7lld %c%c", static_cast<long long>(dom.ienv), static_cast<long long>(dom.jenv),
              dom.ienv == 1 ? '[' : '.', dom.jenv == ad.L ? ']' : '.');
      appendf(out, " %4.2f\n", domain_accuracy(dom));
    }

    if (opts.show_alignments) {
      out += "\n  Alignments for each domain:\n";
      nd = 0;
      for (int d = 0; d < hit.ndom; d++) {
        const Domain& dom = hit.dcl[static_cast<std::size_t>(d)];
        if (!dom.is_reported) continue;
        nd++;
        appendf(out, "  == domain %d", nd);
        appendf(out, "  score: %.1f bits", static_cast<double>(dom.bitscore));
        appendf(out, ";  conditional E-value: %.2g\n", std::exp(dom.lnP) * opts.domZ);
        write_alidisplay(out, dom.ad, 40, opts.textw, opts.show_accessions);
        out += "\n";
      }
    } else {
      out += "\n";
    }
  }
  if (th.nreported == 0) out += "\n   [No targets detected that satisfy reporting thresholds]\n";
}

void write_statistics(std::string& out, const PipelineCounts& c, const ReportOptions& opts,
                      const Stopwatch* w) {
  const double ntargets = static_cast<double>(c.nseqs);
  out += "Internal pipeline statistics summary:\n";
  out += "-------------------------------------\n";
  appendf(out, "Query model(s):              %15llu  (%llu nodes)\n",
          static_cast<unsigned long long>(c.nmodels), static_cast<unsigned long long>(c.nnodes));
  appendf(out, "Target sequences:            %15llu  (%llu residues searched)\n",
          static_cast<unsigned long long>(c.nseqs), static_cast<unsigned long long>(c.nres));
  auto pass_line = [&](const char* label, uint64_t n, double F) {
    appendf(out, "%s%15llu  (%.6g); expected %.1f (%.6g)\n", label, static_cast<unsigned long long>(n),
            static_cast<double>(n) / ntargets, F * ntargets, F);
  };
  pass_line("Passed MSV filter:           ", c.n_past_msv, c.F1);
  pass_line("Passed bias filter:          ", c.n_past_bias, c.F1);
  pass_line("Passed Vit filter:           ", c.n_past_vit, c.F2);
  pass_line("Passed Fwd filter:           ", c.n_past_fwd, c.F3);
  appendf(out, "Initial search space (Z):    %15.0f  %s\n", opts.Z,
          opts.Z_setby == ZSetBy::kOption ? "[as set by --Z on cmdline]" : "[actual number of targets]");
  appendf(out, "Domain search space  (domZ): %15.0f  %s\n", opts.domZ,
          opts.domZ_setby == ZSetBy::kOption ? "[as set by --domZ on cmdline]"
                                             : "[number of targets reported over threshold]");
  if (w != nullptr) {
    appendf(out, "# CPU time: %.2fu %.2fs %s ", w->user, w->sys, format_time(w->user + w->sys).c_str());
    appendf(out, "Elapsed: %s\n", format_time(w->elapsed).c_str());
    appendf(out, "# Mc/sec: %.2f\n",
            static_cast<double>(c.nres) * static_cast<double>(c.nnodes) / (w->elapsed * 1.0e6));
  }
}

void write_query_results(std::string& out, const TopHits& th, const ReportOptions& opts,
                         const PipelineCounts& counts, const Stopwatch* w) {
  write_targets(out, th, opts);
  out += "\n\n";
  write_domains(out, th, opts);
  out += "\n\n";
  write_statistics(out, counts, opts, w);
  out += "//\n";
}

void write_tabular_targets(std::string& out, const QueryInfo& q, const TopHits& th, const ReportOptions& opts,
                           bool show_header) {
  const TabularWidths tw = tabular_widths(q, th);
  const int qnamew = tw.qname, tnamew = tw.tname, qaccw = tw.qacc, taccw = tw.tacc;

  if (show_header) {
    appendf(out, "#%*s %22s %22s %33s\n", tnamew + qnamew + taccw + qaccw + 2, "", "--- full sequence ----",
            "--- best 1 domain ----", "--- domain number estimation ----");
    appendf(out, "#%-*s %-*s %-*s %-*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s %3s %s\n",
            tnamew - 1, " target name", taccw, "accession", qnamew, "query name", qaccw, "accession",
            "  E-value", " score", " bias", "  E-value", " score", " bias", "exp", "reg", "clu", " ov", "env",
            "dom", "rep", "inc", "description of target");
    appendf(out, "#%*s %*s %*s %*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s %3s %s\n", tnamew - 1,
            "-------------------", taccw, "----------", qnamew, "--------------------", qaccw, "----------",
            "---------", "------", "-----", "---------", "------", "-----", "---", "---", "---", "---", "---",
            "---", "---", "---", "---------------------");
  }
  for (std::size_t h = 0; h < th.size(); h++) {
    const Hit& hit = th.hit(h);
    if (!(hit.flags & kIsReported)) continue;
    const Domain& best = hit.dcl[static_cast<std::size_t>(hit.best_domain)];
    appendf(out,
            "%-*s %-*s %-*s %-*s %9.2g %6.1f %5.1f %9.2g %6.1f %5.1f %5.1f %3d %3d %3d %3d %3d %3d %3d %s\n",
            tnamew, cs(hit.name), taccw, dash_if_empty(hit.acc), qnamew, cs(q.name), qaccw,
            dash_if_empty(q.acc), std::exp(hit.lnP) * opts.Z, static_cast<double>(hit.score),
            static_cast<double>(hit.pre_score - hit.score), std::exp(best.lnP) * opts.Z,
            static_cast<double>(best.bitscore), static_cast<double>(best.dombias) * kLog2R,
            static_cast<double>(hit.nexpected), hit.nregions, hit.nclustered, hit.noverlaps, hit.nenvelopes,
            hit.ndom, hit.nreported, hit.nincluded, dash_if_empty(hit.desc));
  }
}

void write_tabular_domains(std::string& out, const QueryInfo& q, const TopHits& th, const ReportOptions& opts,
                           bool show_header) {
  const TabularWidths tw = tabular_widths(q, th);
  const int qnamew = tw.qname, tnamew = tw.tname, qaccw = tw.qacc, taccw = tw.tacc;

  if (show_header) {
    appendf(out, "#%*s %22s %40s %11s %11s %11s\n", tnamew + qnamew - 1 + 15 + taccw + qaccw, "",
            "--- full sequence ---", "-------------- this domain -------------", "hmm coord", "ali coord",
            "env coord");
    appendf(
        out,
        "#%-*s %-*s %5s %-*s %-*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s %5s %5s %5s %5s %4s %s\n",
        tnamew - 1, " target name", taccw, "accession", "tlen", qnamew, "query name", qaccw, "accession",
        "qlen", "E-value", "score", "bias", "#", "of", "c-Evalue", "i-Evalue", "score", "bias", "from", "to",
        "from", "to", "from", "to", "acc", "description of target");
    appendf(out,
            "#%*s %*s %5s %*s %*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s %5s %5s %5s %5s %4s %s\n",
            tnamew - 1, "-------------------", taccw, "----------", "-----", qnamew, "--------------------",
            qaccw, "----------", "-----", "---------", "------", "-----", "---", "---", "---------",
            "---------", "------", "-----", "-----", "-----", "-----", "-----", "-----", "-----", "----",
            "---------------------");
  }
  for (std::size_t h = 0; h < th.size(); h++) {
    const Hit& hit = th.hit(h);
    if (!(hit.flags & kIsReported)) continue;
    int nd = 0;
    for (int d = 0; d < hit.ndom; d++) {
      const Domain& dom = hit.dcl[static_cast<std::size_t>(d)];
      if (!dom.is_reported) continue;
      nd++;
      const AliDisplay& ad = dom.ad;
      // hmmsearch: the target is the sequence (length L), the query the model (length M); both printed
      // with %d from HMMER's int variables.
      const int tlen = static_cast<int>(ad.L);
      const int qlen = ad.M;
      appendf(
          out,
          "%-*s %-*s %5d %-*s %-*s %5d %9.2g %6.1f %5.1f %3d %3d %9.2g %9.2g %6.1f %5.1f %5d %5d %5lld %5lld "
          "%5lld %5lld %4.2f %s\n",
          tnamew, cs(hit.name), taccw, dash_if_empty(hit.acc), tlen, qnamew, cs(q.name), qaccw,
          dash_if_empty(q.acc), qlen, std::exp(hit.lnP) * opts.Z, static_cast<double>(hit.score),
          static_cast<double>(hit.pre_score - hit.score), nd, hit.nreported, std::exp(dom.lnP) * opts.domZ,
          std::exp(dom.lnP) * opts.Z, static_cast<double>(dom.bitscore),
          static_cast<double>(dom.dombias) * kLog2R, ad.hmmfrom, ad.hmmto, static_cast<long long>(ad.sqfrom),
          static_cast<long long>(ad.sqto), static_cast<long long>(dom.ienv), static_cast<long long>(dom.jenv),
          domain_accuracy(dom), dash_if_empty(hit.desc));
    }
  }
}

void write_tabular_xfam(std::string& out, const QueryInfo& /*q*/, const TopHits& th,
                        const ReportOptions& opts) {
  const int tnamew = std::max(20, th.max_name_length());

  out += "# Sequence scores\n# ---------------\n#\n";
  appendf(out, "# %-*s %6s %9s %3s %5s %5s    %s\n", tnamew - 1, "name", " bits", "  E-value", "n", "exp",
          " bias", "description");
  appendf(out, "# %*s %6s %9s %3s %5s %5s    %s\n", tnamew - 1, "-------------------", "------", "---------",
          "---", "-----", "-----", "---------------------");
  for (std::size_t h = 0; h < th.size(); h++) {
    const Hit& hit = th.hit(h);
    if (!(hit.flags & kIsReported)) continue;
    appendf(out, "%-*s  %6.1f %9.2g %3d %5.1f %5.1f    %s\n", tnamew, cs(hit.name),
            static_cast<double>(hit.score), std::exp(hit.lnP) * opts.Z, hit.ndom,
            static_cast<double>(hit.nexpected), static_cast<double>(hit.pre_score - hit.score),
            dash_if_empty(hit.desc));
  }
  out += "\n";

  // Reported domains of reported hits, ranked with the hit comparator on pseudo-hits: sortkey is -lnP
  // when inclusion is by E-value, else the bit score; then target name; then alignment start. `ordinal`
  // is the domain's number among the reported domains of its hit.
  struct DomRef {
    const Hit* hit;
    const Domain* dom;
    int ordinal;
    double sortkey;
    std::size_t seq;  // creation order, for ties HMMER leaves to qsort
  };
  std::vector<DomRef> doms;
  for (std::size_t h = 0; h < th.size(); h++) {
    const Hit& hit = th.hit(h);
    if (!(hit.flags & kIsReported)) continue;
    int ndom_reported = 0;
    for (int d = 0; d < hit.ndom; d++) {
      const Domain& dom = hit.dcl[static_cast<std::size_t>(d)];
      if (!dom.is_reported) continue;
      ndom_reported++;
      doms.push_back({&hit, &dom, ndom_reported,
                      opts.inc_by_E ? -1.0 * dom.lnP : static_cast<double>(dom.bitscore), doms.size()});
    }
  }
  std::stable_sort(doms.begin(), doms.end(), [](const DomRef& a, const DomRef& b) {
    if (a.sortkey != b.sortkey) return a.sortkey > b.sortkey;
    const int c = a.hit->name.compare(b.hit->name);
    if (c != 0) return c < 0;
    const int dir1 = a.dom->iali < a.dom->jali ? 1 : -1;
    const int dir2 = b.dom->iali < b.dom->jali ? 1 : -1;
    if (dir1 != dir2) return dir1 > dir2;
    return a.dom->iali < b.dom->iali;
  });

  out += "# Domain scores\n# -------------\n#\n";
  appendf(out, "# %-*s %6s %9s %5s %5s %6s %6s %6s %6s %6s %6s     %s\n", tnamew - 1, " name", "bits",
          "E-value", "hit", "bias", "env-st", "env-en", "ali-st", "ali-en", "hmm-st", "hmm-en",
          "description");
  appendf(out, "# %*s %6s %9s %5s %5s %6s %6s %6s %6s %6s %6s      %s\n", tnamew - 1, "-------------------",
          "------", "---------", "-----", "-----", "------", "------", "------", "------", "------", "------",
          "---------------------");
  for (const DomRef& r : doms) {
    const Domain& dom = *r.dom;
    appendf(out, "%-*s  %6.1f %9.2g %5d %5.1f %6lld %6lld %6lld %6lld %6d %6d     %s\n", tnamew,
            cs(r.hit->name), static_cast<double>(dom.bitscore), std::exp(dom.lnP) * opts.Z, r.ordinal,
            static_cast<double>(dom.dombias) * kLog2R, static_cast<long long>(dom.ienv),
            static_cast<long long>(dom.jenv), static_cast<long long>(dom.ad.sqfrom),
            static_cast<long long>(dom.ad.sqto), dom.ad.hmmfrom, dom.ad.hmmto, dash_if_empty(r.hit->desc));
  }
}

void write_tabular_tail(std::string& out, std::string_view progname, std::string_view qfile,
                        std::string_view tfile, std::string_view option_settings, std::string_view cwd,
                        std::string_view date) {
  out += "#\n";
  appendf(out, "# Program:         %s\n", progname.empty() ? "[none]" : std::string(progname).c_str());
  appendf(out, "# Version:         %s (%s)\n", std::string(kHmmerVersion).c_str(),
          std::string(kHmmerDate).c_str());
  out += "# Pipeline mode:   SEARCH\n";
  appendf(out, "# Query file:      %s\n", qfile.empty() ? "[none]" : std::string(qfile).c_str());
  appendf(out, "# Target file:     %s\n", tfile.empty() ? "[none]" : std::string(tfile).c_str());
  appendf(out, "# Option settings: %s\n", std::string(option_settings).c_str());
  appendf(out, "# Current dir:     %s\n", cwd.empty() ? "[unknown]" : std::string(cwd).c_str());
  appendf(out, "# Date:            %s", std::string(date).c_str());
  out += "# [ok]\n";
}

}  // namespace warpsearch::hmm
