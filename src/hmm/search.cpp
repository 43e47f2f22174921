// search.cpp: the hmmsearch driver behind include/warpsearch/hmmsearch.hpp (HMMER 3.3.2 hmmsearch.c).
//
// Contents:
//   1. The target database: read once into memory with Easel's FASTA rules (search_internal.hpp).
//   2. Per-model search: profile configuration, a pool of per-worker pipeline states, the sequences cut
//      into fixed chunks run on the ThreadPool, chunk results merged in chunk order.
//   3. The public entry point hmmsearch::search(): models streamed from the HMM file, outputs written in
//      hmmsearch's order (main report per model, tabular files, tails).
//
// Determinism: chunk boundaries depend only on the number of sequences; every sequence is processed by
// a pipeline whose random number generator is reseeded before each sequence's stochastic traceback
// (HMMER's do_reseeding), and its hits carry their database index; so the merged, sorted hit list and
// all counts are identical for any thread count (and identical to HMMER's, whose own merge order is
// arbitrary but whose sort order only depends on the hits).
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hmm/bg.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/output.hpp"
#include "hmm/pipeline.hpp"
#include "hmm/profile.hpp"
#include "hmm/reporting.hpp"
#include "hmm/search_internal.hpp"
#include "hmm/tophits.hpp"
#include "hmm/tracealign.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/hmmsearch.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::hmm {
namespace {

// A byte as it appears in messages: 'c' when printable, '\xHH' otherwise.
std::string quote_char(unsigned char c) {
  if (c >= 0x20 && c < 0x7F) return std::string{'\'', static_cast<char>(c), '\''};
  return fmt::format("'\\x{:02X}'", static_cast<unsigned>(c));
}

// Whole content of a plain or gzip file (zlib reads plain files transparently), "-" = stdin.
std::string slurp(const std::string& path) {
  gzFile gz = path == "-" ? gzdopen(dup(0), "rb") : gzopen(path.c_str(), "rb");
  if (gz == nullptr) throw_system_error("cannot open sequence file", path);
  std::string text;
  std::vector<char> buf(1 << 20);
  for (;;) {
    const int n = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(gz, &errnum);
      const std::string what = errnum == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg);
      gzclose(gz);
      throw Error(ErrorKind::kFormat, "cannot read sequence file: " + what, path);
    }
    if (n == 0) break;
    text.append(buf.data(), static_cast<std::size_t>(n));
  }
  int errnum = 0;
  const char* msg = gzerror(gz, &errnum);
  if (errnum != Z_OK && errnum != Z_BUF_ERROR) {
    const std::string what(msg);
    gzclose(gz);
    throw Error(ErrorKind::kFormat, "cannot read sequence file: " + what, path);
  }
  // A truncated gzip stream shows as Z_BUF_ERROR at close.
  if (gzclose(gz) == Z_BUF_ERROR) {
    throw Error(ErrorKind::kFormat, "truncated gzip stream (unexpected end of file)", path);
  }
  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// 1. The target database
// ---------------------------------------------------------------------------------------------------

TargetDb parse_target_db(std::string_view text, const Abc& a, const std::string& path) {
  TargetDb db;
  db.path = path;
  const std::array<uint8_t, 256>& inmap = fasta_inmap(a);
  std::size_t pos = 0;
  uint64_t line = 1;
  const std::size_t n = text.size();

  // Whitespace before the first record (Easel's header_fasta skips isspace()).
  while (pos < n && std::isspace(static_cast<unsigned char>(text[pos])) != 0) {
    if (text[pos] == '\n') ++line;
    ++pos;
  }
  if (pos == n) throw Error(ErrorKind::kFormat, "sequence file is empty (no FASTA record)", path);
  if (text[pos] != '>') {
    throw Error(ErrorKind::kFormat,
                fmt::format("unexpected character {}; expected a FASTA file, starting with '>'",
                            quote_char(static_cast<unsigned char>(text[pos]))),
                path, line);
  }

  while (pos < n) {
    // Here text[pos] == '>' at the start of a line.
    TargetSeq seq;
    seq.line = line;
    ++pos;
    while (pos < n && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    const std::size_t name_begin = pos;
    while (pos < n && std::isspace(static_cast<unsigned char>(text[pos])) == 0) ++pos;
    if (pos == name_begin) throw Error(ErrorKind::kFormat, "no FASTA name found after '>'", path, line);
    seq.name.assign(text.substr(name_begin, pos - name_begin));
    while (pos < n && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    const std::size_t desc_begin = pos;
    while (pos < n && text[pos] != '\n' && text[pos] != '\r' && text[pos] != '\x01') ++pos;
    seq.desc.assign(text.substr(desc_begin, pos - desc_begin));
    while (pos < n && text[pos] != '\n') ++pos;  // rest of the header line (after a ctrl-A)
    if (pos < n) {
      ++pos;
      ++line;
    }

    // Sequence lines up to the next line starting with '>'.
    seq.dsq.push_back(kDsqSentinel);
    while (pos < n && text[pos] != '>') {
      std::size_t eol = text.find('\n', pos);
      if (eol == std::string_view::npos) eol = n;
      const std::string_view chunk = text.substr(pos, eol - pos);
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(chunk[i]);
        const uint8_t x = inmap[c];
        if (x == kDsqIgnored) continue;
        if (x == kDsqIllegal) {
          throw Error(ErrorKind::kFormat,
                      fmt::format("illegal character {} in sequence '{}' for the {} alphabet of the model",
                                  quote_char(c), seq.name, abc_type_name(a.type)),
                      path, line);
        }
        seq.dsq.push_back(x);
      }
      pos = eol < n ? eol + 1 : n;
      ++line;
    }
    seq.L = static_cast<int64_t>(seq.dsq.size()) - 1;
    seq.dsq.push_back(kDsqSentinel);
    db.nres += static_cast<uint64_t>(seq.L);
    db.seqs.push_back(std::move(seq));
  }
  return db;
}

TargetDb read_target_db(const std::string& path, const Abc& a) {
  const std::string text = slurp(path);
  return parse_target_db(text, a, path);
}

}  // namespace warpsearch::hmm

// ---------------------------------------------------------------------------------------------------
// 2. Per-model search
// ---------------------------------------------------------------------------------------------------

namespace warpsearch::hmm {
namespace {

// Sequences per work chunk. Any value gives the same results (see the top of the file); this one keeps
// the per-chunk overhead small against the MSV filter's cost and balances threads on uneven lengths.
constexpr std::size_t kChunkSeqs = 64;

// What one worker needs for one model: its own pipeline, null model and profile (both are reconfigured
// for each target length).
struct WorkerState {
  WorkerState(const PipelineOptions& popts, const ReportOptions& ropts, const OProfile& om_in,
              const Bg& bg_in)
      : pipeline(popts, ropts), om(om_in), bg(bg_in) {
    pipeline.new_model(om, bg);
  }
  Pipeline pipeline;
  OProfile om;
  Bg bg;
};

// Worker states handed out to chunks: a chunk takes a free one (or creates one) and gives it back.
class WorkerStates {
 public:
  WorkerStates(const PipelineOptions& popts, const ReportOptions& ropts, const OProfile& om, const Bg& bg)
      : popts_(popts), ropts_(ropts), om_(om), bg_(bg) {}

  std::unique_ptr<WorkerState> take() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<WorkerState> w = std::move(free_.back());
        free_.pop_back();
        return w;
      }
    }
    return std::make_unique<WorkerState>(popts_, ropts_, om_, bg_);
  }
  void give_back(std::unique_ptr<WorkerState> w) {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(w));
  }
  // All states created; call after the parallel loop.
  const std::vector<std::unique_ptr<WorkerState>>& all() const { return free_; }

 private:
  const PipelineOptions& popts_;
  const ReportOptions& ropts_;
  const OProfile& om_;
  const Bg& bg_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WorkerState>> free_;
};

struct ModelSearch {
  TopHits hits;
  PipelineCounts counts;
  ReportOptions report;  // final thresholds (Z, domZ set)
};

// Searches all targets with one model: p7_ProfileConfig(L=100, local) + p7_oprofile_Convert, the
// pipeline over every target, merge, p7_tophits_SortBySortkey, p7_tophits_Threshold.
ModelSearch search_model(const Hmm& hmm, const TargetDb& db, const PipelineOptions& popts,
                         const ReportOptions& ropts, ThreadPool& pool) {
  const Bg bg0 = make_bg(*hmm.abc);
  const Profile gm = config_profile(hmm, bg0, 100, ProfileMode::kLocal);
  const OProfile om = convert_profile(gm);

  // The main pipeline: counts the model and checks its bit cutoffs before any work (Error(kInput)).
  Bg bg_main = bg0;
  Pipeline main(popts, ropts);
  main.new_model(om, bg_main);

  const std::size_t n = db.seqs.size();
  const std::size_t nchunks = (n + kChunkSeqs - 1) / kChunkSeqs;
  std::vector<TopHits> chunk_hits(nchunks);
  WorkerStates states(popts, ropts, om, bg0);
  pool.parallel_for(n, kChunkSeqs, [&](std::size_t begin, std::size_t end) {
    const FlushToZeroScope ftz;  // HMMER's impl_Init() in every worker thread
    std::unique_ptr<WorkerState> w = states.take();
    TopHits& hits = chunk_hits[begin / kChunkSeqs];
    for (std::size_t s = begin; s < end; ++s) {
      const TargetSeq& t = db.seqs[s];
      const PipelineTarget target{t.name, t.acc, t.desc, static_cast<int64_t>(s)};
      w->pipeline.process(w->om, w->bg, t.dsq, t.L, target, hits);
    }
    states.give_back(std::move(w));
  });

  ModelSearch result;
  result.counts = main.counts();
  for (const auto& w : states.all()) result.counts.merge(w->pipeline.counts());
  for (TopHits& h : chunk_hits) result.hits.merge(std::move(h));
  result.hits.sort_by_sortkey();
  result.report = main.report();
  if (result.report.Z_setby == ZSetBy::kNTargets) result.report.Z = static_cast<double>(result.counts.nseqs);
  threshold(result.hits, result.report);
  return result;
}

// esl_stopwatch's user/system times of the process so far, in seconds.
struct CpuTimes {
  double user = 0.0;
  double sys = 0.0;
};
CpuTimes cpu_times() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return {static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) * 1e-6,
          static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6};
}

hmmsearch::ModelResult model_result(const Hmm& hmm, const ModelSearch& ms, bool keep_hits) {
  hmmsearch::ModelResult r;
  r.name = hmm.name;
  r.acc = hmm.has(kHmmAcc) ? hmm.acc : std::string();
  r.desc = hmm.has(kHmmDesc) ? hmm.desc : std::string();
  r.M = hmm.M;
  r.nseqs = ms.counts.nseqs;
  r.nres = ms.counts.nres;
  r.n_past_msv = ms.counts.n_past_msv;
  r.n_past_bias = ms.counts.n_past_bias;
  r.n_past_vit = ms.counts.n_past_vit;
  r.n_past_fwd = ms.counts.n_past_fwd;
  r.Z = ms.report.Z;
  r.domZ = ms.report.domZ;
  r.nreported = ms.hits.nreported;
  r.nincluded = ms.hits.nincluded;
  if (!keep_hits) return r;
  for (std::size_t h = 0; h < ms.hits.size(); ++h) {
    const Hit& hit = ms.hits.hit(h);
    hmmsearch::TargetHit t;
    t.name = hit.name;
    t.acc = hit.acc;
    t.desc = hit.desc;
    t.seqidx = hit.seqidx;
    t.score = hit.score;
    t.bias = hit.pre_score - hit.score;
    t.evalue = std::exp(hit.lnP) * ms.report.Z;
    t.reported = (hit.flags & kIsReported) != 0;
    t.included = (hit.flags & kIsIncluded) != 0;
    for (const Domain& d : hit.dcl) {
      hmmsearch::DomainHit dh;
      dh.ienv = d.ienv;
      dh.jenv = d.jenv;
      dh.iali = d.iali;
      dh.jali = d.jali;
      dh.hmmfrom = d.ad.hmmfrom;
      dh.hmmto = d.ad.hmmto;
      dh.score = d.bitscore;
      dh.bias = static_cast<float>(static_cast<double>(d.dombias) * (1.0 / kLog2));
      dh.c_evalue = std::exp(d.lnP) * ms.report.domZ;
      dh.i_evalue = std::exp(d.lnP) * ms.report.Z;
      dh.reported = d.is_reported;
      dh.included = d.is_included;
      t.domains.push_back(dh);
    }
    r.hits.push_back(std::move(t));
  }
  return r;
}

void require_positive(const std::optional<double>& v, const char* name) {
  if (v && !(*v > 0.0)) {
    throw Error(ErrorKind::kUsage, fmt::format("{} must be > 0 (got {})", name, *v));
  }
}

// hmmsearch's incompatible option groups (esl_getopts "incompatible with" lists).
void require_exclusive(const std::vector<std::pair<const char*, bool>>& given) {
  const char* first = nullptr;
  for (const auto& [name, on] : given) {
    if (!on) continue;
    if (first != nullptr)
      throw Error(ErrorKind::kUsage, fmt::format("option {} is incompatible with {}", first, name));
    first = name;
  }
}

}  // namespace
}  // namespace warpsearch::hmm

// ---------------------------------------------------------------------------------------------------
// 3. Public entry points
// ---------------------------------------------------------------------------------------------------

namespace warpsearch::hmmsearch {

using namespace warpsearch::hmm;  // NOLINT(google-build-using-namespace): this file implements the bridge

void validate(const Options& o) {
  require_positive(o.E, "-E");
  require_positive(o.domE, "--domE");
  require_positive(o.incE, "--incE");
  require_positive(o.incdomE, "--incdomE");
  require_positive(o.Z, "-Z");
  require_positive(o.domZ, "--domZ");
  if (o.textw && *o.textw < 120) {
    throw Error(ErrorKind::kUsage, fmt::format("--textw must be >= 120 (got {})", *o.textw));
  }
  require_exclusive({{"--textw", o.textw.has_value()}, {"--notextw", o.notextw}});
  const bool ga = o.cutoffs == BitCutoffs::kGA, nc = o.cutoffs == BitCutoffs::kNC,
             tc = o.cutoffs == BitCutoffs::kTC;
  const char* cut = ga ? "--cut_ga" : nc ? "--cut_nc" : "--cut_tc";
  const bool any_cut = ga || nc || tc;
  require_exclusive({{"-E", o.E.has_value()}, {"-T", o.T.has_value()}, {cut, any_cut}});
  require_exclusive({{"--domE", o.domE.has_value()}, {"--domT", o.domT.has_value()}, {cut, any_cut}});
  require_exclusive({{"--incE", o.incE.has_value()}, {"--incT", o.incT.has_value()}, {cut, any_cut}});
  require_exclusive(
      {{"--incdomE", o.incdomE.has_value()}, {"--incdomT", o.incdomT.has_value()}, {cut, any_cut}});
  require_exclusive({{"--max", o.max}, {"--F1", o.F1.has_value()}});
  require_exclusive({{"--max", o.max}, {"--F2", o.F2.has_value()}});
  require_exclusive({{"--max", o.max}, {"--F3", o.F3.has_value()}});
  require_exclusive({{"--max", o.max}, {"--nobias", o.nobias}});
}

namespace {

ReportOptions report_options(const Options& o) {
  ReportOptions r;
  if (o.E) r.E = *o.E;
  if (o.T) r.set_T(*o.T);
  if (o.domE) r.domE = *o.domE;
  if (o.domT) r.set_domT(*o.domT);
  if (o.incE) r.incE = *o.incE;
  if (o.incT) r.set_incT(*o.incT);
  if (o.incdomE) r.incdomE = *o.incdomE;
  if (o.incdomT) r.set_incdomT(*o.incdomT);
  switch (o.cutoffs) {
    case BitCutoffs::kNone: break;
    case BitCutoffs::kGA: r.set_bit_cutoffs(hmm::BitCutoffs::kGA); break;
    case BitCutoffs::kNC: r.set_bit_cutoffs(hmm::BitCutoffs::kNC); break;
    case BitCutoffs::kTC: r.set_bit_cutoffs(hmm::BitCutoffs::kTC); break;
  }
  if (o.Z) r.set_Z(*o.Z);
  if (o.domZ) r.set_domZ(*o.domZ);
  r.textw = o.notextw ? 0 : o.textw.value_or(120);
  r.show_alignments = !o.noali;
  r.show_accessions = o.acc;
  return r;
}

PipelineOptions pipeline_options(const Options& o) {
  PipelineOptions p;
  if (o.F1) p.set_F1(*o.F1);
  if (o.F2) p.set_F2(*o.F2);
  if (o.F3) p.set_F3(*o.F3);
  if (o.max) p.set_max();
  if (o.nonull2) p.do_null2 = false;
  if (o.nobias) p.do_biasfilter = false;
  p.seed = o.seed.value_or(42);
  return p;
}

UsedOptions used_options(const Options& o, const RunLabels& labels) {
  UsedOptions u;
  u.o = labels.o;
  u.A = labels.A;
  u.tblout = labels.tblout;
  u.domtblout = labels.domtblout;
  u.pfamtblout = labels.pfamtblout;
  u.acc = o.acc;
  u.noali = o.noali;
  u.notextw = o.notextw;
  u.textw = o.textw;
  u.E = o.E;
  u.T = o.T;
  u.domE = o.domE;
  u.domT = o.domT;
  u.incE = o.incE;
  u.incT = o.incT;
  u.incdomE = o.incdomE;
  u.incdomT = o.incdomT;
  u.cut_ga = o.cutoffs == BitCutoffs::kGA;
  u.cut_nc = o.cutoffs == BitCutoffs::kNC;
  u.cut_tc = o.cutoffs == BitCutoffs::kTC;
  u.max = o.max;
  u.F1 = o.F1;
  u.F2 = o.F2;
  u.F3 = o.F3;
  u.nobias = o.nobias;
  u.nonull2 = o.nonull2;
  u.Z = o.Z;
  u.domZ = o.domZ;
  if (o.seed) u.seed = static_cast<int>(*o.seed);
  u.cpu = labels.cpu;
  return u;
}

std::string current_dir() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return {};
  return buf.data();
}

std::string ctime_now() {
  const std::time_t now = std::time(nullptr);
  std::array<char, 64> buf{};
  if (::ctime_r(&now, buf.data()) == nullptr) return "\n";
  return buf.data();
}

}  // namespace

Summary search(const std::string& hmmfile, const std::string& seqdb, const Options& options,
               const Sinks& sinks, const RunLabels& labels, bool keep_hits) {
  validate(options);
  const FlushToZeroScope ftz;  // HMMER's impl_Init() in the master thread
  const ReportOptions ropts = report_options(options);
  const PipelineOptions popts = pipeline_options(options);

  HmmReader reader(hmmfile);
  std::optional<Hmm> hmm = reader.next();
  if (!hmm) throw Error(ErrorKind::kFormat, "HMM file contains no model", hmmfile);

  std::string text;
  auto flush = [&text](const std::function<void(std::string_view)>& sink) {
    if (sink && !text.empty()) sink(text);
    text.clear();
  };
  if (sinks.report) {
    write_header(text, hmmfile, seqdb, used_options(options, labels));
    flush(sinks.report);
  }

  // The database, digitized with the models' alphabet (all models of a file share it).
  const TargetDb db = read_target_db(seqdb, *hmm->abc);
  Summary summary;
  summary.targets = db.seqs.size();
  summary.residues = db.nres;

  ThreadPool pool(options.threads);
  int nquery = 0;
  for (; hmm; hmm = reader.next()) {
    ++nquery;
    const auto wall0 = std::chrono::steady_clock::now();
    const CpuTimes cpu0 = cpu_times();
    const QueryInfo q{hmm->name, hmm->has(kHmmAcc) ? hmm->acc : std::string(),
                      hmm->has(kHmmDesc) ? hmm->desc : std::string(), hmm->M};

    ModelSearch ms = search_model(*hmm, db, popts, ropts, pool);

    if (sinks.tblout) {
      write_tabular_targets(text, q, ms.hits, ms.report, nquery == 1);
      flush(sinks.tblout);
    }
    if (sinks.domtblout) {
      write_tabular_domains(text, q, ms.hits, ms.report, nquery == 1);
      flush(sinks.domtblout);
    }
    if (sinks.pfamtblout) {
      write_tabular_xfam(text, q, ms.hits, ms.report);
      flush(sinks.pfamtblout);
    }
    // -A: the included domains' alignment (hmmsearch writes nothing for a query without any).
    std::optional<HitsAlignment> ali;
    if (sinks.alignment) {
      const AlignmentQuery aq{q.name, q.acc, q.desc, hmm->abc, "hmmsearch"};
      ali = stockholm_alignment(ms.hits, aq, ms.report.textw);
      if (ali) {
        text = ali->text;
        flush(sinks.alignment);
      }
    }
    if (sinks.report) {
      const CpuTimes cpu1 = cpu_times();
      const Stopwatch w{cpu1.user - cpu0.user, cpu1.sys - cpu0.sys,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count()};
      write_query(text, q);
      write_query_results(text, ms.hits, ms.report, ms.counts, &w);
      if (sinks.alignment) text += alignment_saved_line(ali, labels.A.value_or(""));
      flush(sinks.report);
    }
    summary.models.push_back(model_result(*hmm, ms, keep_hits));
  }

  // Tails of the tables, and the report's last line.
  const std::string cwd = current_dir();
  const std::string date = ctime_now();
  for (const auto* sink : {&sinks.tblout, &sinks.domtblout, &sinks.pfamtblout}) {
    if (!*sink) continue;
    write_tabular_tail(text, labels.program, hmmfile, seqdb, labels.command_line, cwd, date);
    flush(*sink);
  }
  if (sinks.report) {
    text = "[ok]\n";
    flush(sinks.report);
  }
  return summary;
}

}  // namespace warpsearch::hmmsearch
