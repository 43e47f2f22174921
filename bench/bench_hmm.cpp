// bench_hmm.cpp: profile-HMM search benchmarks (hmmsearch, issue 4): our three acceleration stages
// alone (MSV, Viterbi and Forward filters of src/hmm) over every sequence of --input, our whole search
// through the public API (include/warpsearch/hmmsearch.hpp), and HMMER 3.3.2's hmmsearch run so that
// the same stages are exercised for every sequence.
//
// The query model file: $WARPSEARCH_BENCH_HMM, else <test data>/hmm/Pkinase.hmm (M = 279). Every model of
// the file is searched. --input is a protein (or, with a nucleotide model, DNA/RNA) FASTA file, plain or
// gzip, read with the model's alphabet.
//
// Work of every entry: cells = sum over models of M * residues of the input, so the table's GCUPS is
// comparable between our entries and the peers; residues = residues searched (input residues times
// models), records = input sequences, bytes = input file size. Our entries count them themselves; the
// peers' come from hmmsearch's own "Internal pipeline statistics summary" (Query model(s) ... (M
// nodes), Target sequences ... (N residues searched)), so both sides count what they actually searched.
//
// Per-filter entries (cpu-hmm-msv, cpu-hmm-viterbi, cpu-hmm-forward, cpu-hmm-forward-pair): untimed setup in
// the run's child (read the models, p7_ProfileConfig local L=100 + p7_oprofile_Convert, read and digitize the
// input, one OProfile copy and one Omx per thread); the timed region is, for every model and every non-empty
// sequence, what the pipeline does for that stage: reconfig_length(om, L) (each thread its own OProfile
// copy), then msv_filter / viterbi_filter / grow_to + forward_parser. Threads run parallel_for chunks of
// kGrain sequences under FlushToZeroScope (HMMER's impl_Init). cpu-hmm-forward-pair computes the same
// scores with forward_parser_scores (groups of 2 or 4 targets, each chunk's targets grouped longest first,
// as the GPU pipeline's Forward filter; no per-target reconfig_length: the groups carry their lengths;
// WARPSEARCH_HMM_FWD_ISA picks the op set).
//
// Whole searches (hmmsearch, hmmsearch-max): hmmsearch::search() with --noali, the main report and the
// --tblout table written to files under the run's scratch directory; the timed region is the whole call
// (reading the model and the database included), as a peer's time is its whole process.
//
// Peers (HMMER's hmmsearch --cpu {threads}: {threads} worker threads plus its reader thread; stdout, the
// main report with --noali, is captured to parse the counts above):
//   peer:hmmsearch           default pipeline, --tblout to scratch;
//   peer:hmmsearch-msv       --F1 -1 --nobias: every sequence through MSV (its SSV pre-check included), none
//                            passes (a negative threshold, not 1e-300: true homologs' P-values underflow
//                            to 0 and would pass 1e-300 into the later stages). Checked: 0 passed MSV;
//   peer:hmmsearch-viterbi   --F1 1 --F2 -1 --nobias: MSV then Viterbi for every sequence, none passes
//                            Viterbi (checked); compare with cpu-hmm-msv + cpu-hmm-viterbi;
//   peer:hmmsearch-max       --max: MSV, Viterbi, Forward, Backward and domain definition for every
//                            sequence; compare with our hmmsearch-max (cpu-hmm-forward is only the Forward
//                            part of it).
// Peer times include process start, reading the model and the FASTA input (peer:esl-seqstat shows the
// reading cost) and writing the report, so their GCUPS understate the filters' own speed a little.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/fwd_pair.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmm.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm/search_internal.hpp"
#include "hmm/vitfilter.hpp"
#include "registry.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/hmmsearch.hpp"
#include "warpsearch/thread_pool.hpp"

#ifndef WARPSEARCH_TESTDATA_DIR
#define WARPSEARCH_TESTDATA_DIR ""
#endif

namespace warpsearch::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Sequences per parallel_for chunk: small against the 20k-sequence inputs (load balance on uneven
// lengths), large against the per-chunk cost of taking a thread state.
constexpr std::size_t kGrain = 64;

// The query model file (see the file comment).
std::string model_path() {
  if (const char* env = std::getenv("WARPSEARCH_BENCH_HMM"); env != nullptr && *env != '\0') return env;
  return std::string(WARPSEARCH_TESTDATA_DIR) + "/hmm/Pkinase.hmm";
}

std::string model_unavailable() {
  const std::string path = model_path();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return "no model file " + path + " (set WARPSEARCH_BENCH_HMM or fetch the test data)";
  }
  return "";
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

enum class Stage { kMsv, kViterbi, kForward, kForwardPair };

// One thread's private copies: the profile (reconfigured for every target length) and the Forward
// parser matrix.
struct ThreadState {
  hmm::OProfile om;
  hmm::Omx ox;
  hmm::FwdPairScratch pair;
  std::vector<hmm::FwdPairTarget> targets;
  std::vector<std::size_t> ids;
  std::vector<float> out;
};

// Thread states handed to chunks: a chunk takes a free one and gives it back, so at most one copy per
// concurrently running chunk exists (all made before the timed region; take() makes one more only if
// the pool ever runs more chunks at once than it has threads).
class StateList {
 public:
  StateList(const hmm::OProfile& om, std::size_t n) : prototype_(om) {
    for (std::size_t i = 0; i < n; ++i) free_.push_back(make());
  }
  std::unique_ptr<ThreadState> take() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<ThreadState> s = std::move(free_.back());
        free_.pop_back();
        return s;
      }
    }
    return make();
  }
  void give_back(std::unique_ptr<ThreadState> s) {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(s));
  }

 private:
  std::unique_ptr<ThreadState> make() const {
    auto s = std::make_unique<ThreadState>();
    s->om = prototype_;
    s->ox = hmm::make_omx(prototype_.M, 400, false);  // grown further inside the loop as needed
    return s;
  }
  const hmm::OProfile& prototype_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ThreadState>> free_;
};

// The models of model_path() configured as hmmsearch configures them: p7_ProfileConfig(hmm, bg, L = 100,
// local) and p7_oprofile_Convert.
std::vector<hmm::OProfile> load_profiles(const hmm::Abc*& alphabet) {
  const std::string path = model_path();
  const std::vector<hmm::Hmm> hmms = hmm::read_all_hmms(path);
  if (hmms.empty()) throw Error(ErrorKind::kInput, "no model in the file", path);
  alphabet = hmms.front().abc;
  std::vector<hmm::OProfile> profiles;
  for (const hmm::Hmm& h : hmms) {
    const hmm::Bg bg = hmm::make_bg(*h.abc);
    const hmm::Profile gm = hmm::config_profile(h, bg, 100, hmm::ProfileMode::kLocal);
    profiles.push_back(hmm::convert_profile(gm));
  }
  return profiles;
}

// Every non-empty input sequence through one stage, for every model, on ctx.threads threads.
Work stage_run(const Context& ctx, Stage stage) {
  const hmm::Abc* alphabet = nullptr;
  const std::vector<hmm::OProfile> profiles = load_profiles(alphabet);
  ThreadPool pool(ctx.threads);
  const hmm::TargetDb db = hmm::TargetDbFile(ctx.input).read(*alphabet, pool);
  const std::size_t n = db.seqs.size();
  std::vector<float> scores(n);  // kept so the results are observable; one model at a time

  Work work;
  work.bytes = ctx.input_bytes;
  work.records = n;
  for (const hmm::OProfile& prototype : profiles) {
    StateList states(prototype, pool.size());
    const Clock::time_point start = Clock::now();
    pool.parallel_for(n, kGrain, [&](std::size_t begin, std::size_t end) {
      const hmm::FlushToZeroScope ftz;
      std::unique_ptr<ThreadState> s = states.take();
      if (stage == Stage::kForwardPair) {
        // As the GPU pipeline's Forward filter: the chunk's targets sorted longest first, neighbours paired.
        s->ids.clear();
        for (std::size_t i = begin; i < end; ++i)
          if (db.seqs[i].L > 0) s->ids.push_back(i);
        std::stable_sort(s->ids.begin(), s->ids.end(),
                         [&](std::size_t a, std::size_t b) { return db.seqs[a].L > db.seqs[b].L; });
        s->targets.clear();
        for (const std::size_t i : s->ids)
          s->targets.push_back(
              hmm::fwd_pair_target(prototype, db.seqs[i].dsq.data(), static_cast<int>(db.seqs[i].L)));
        s->out.resize(s->targets.size());
        hmm::forward_parser_scores(prototype, s->targets, s->out, s->pair, s->ox);
        for (std::size_t k = 0; k < s->ids.size(); ++k) scores[s->ids[k]] = s->out[k];
        states.give_back(std::move(s));
        return;
      }
      for (std::size_t i = begin; i < end; ++i) {
        const hmm::TargetSeq& t = db.seqs[i];
        if (t.L == 0) continue;  // the pipeline never scores empty targets
        const int L = static_cast<int>(t.L);
        hmm::reconfig_length(s->om, L);
        switch (stage) {
          case Stage::kMsv: scores[i] = hmm::msv_filter(t.dsq, L, s->om).score; break;
          case Stage::kViterbi: scores[i] = hmm::viterbi_filter(t.dsq, L, s->om).score; break;
          case Stage::kForward:
            hmm::grow_to(s->ox, s->om.M, L, false);
            scores[i] = hmm::forward_parser(t.dsq, L, s->om, s->ox);
            break;
          case Stage::kForwardPair: break;  // (above)
        }
      }
      states.give_back(std::move(s));
    });
    work.timed_s += seconds_since(start);
    work.residues += db.nres;
    work.cells += static_cast<std::uint64_t>(prototype.M) * db.nres;
  }
  return work;
}

// Our whole search through the public API, --noali, report and --tblout to files in the scratch directory.
Work search_run(const Context& ctx, bool max) {
  hmmsearch::Options options;
  options.noali = true;
  options.max = max;
  options.threads = ctx.threads;
  const std::string report_path = ctx.scratch + "/out";
  const std::string tbl_path = ctx.scratch + "/t";
  std::ofstream report(report_path, std::ios::binary);
  std::ofstream tbl(tbl_path, std::ios::binary);
  if (!report || !tbl) throw Error(ErrorKind::kIo, "cannot create the outputs", ctx.scratch);
  hmmsearch::Sinks sinks;
  sinks.report = [&report](std::string_view s) {
    report.write(s.data(), static_cast<std::streamsize>(s.size()));
  };
  sinks.tblout = [&tbl](std::string_view s) { tbl.write(s.data(), static_cast<std::streamsize>(s.size())); };
  hmmsearch::RunLabels labels;
  labels.tblout = tbl_path;
  labels.cpu = static_cast<int>(ctx.threads);
  const hmmsearch::Summary summary =
      hmmsearch::search(model_path(), ctx.input, options, sinks, labels, /*keep_hits=*/false);
  report.flush();
  tbl.flush();
  if (!report || !tbl) throw Error(ErrorKind::kIo, "write error", ctx.scratch);

  Work work;
  work.bytes = ctx.input_bytes;
  work.records = summary.targets;
  for (const hmmsearch::ModelResult& m : summary.models) {
    work.residues += m.nres;
    work.cells += static_cast<std::uint64_t>(m.M) * m.nres;
  }
  return work;
}

// All matches of a two-number pattern in hmmsearch's output.
std::vector<std::pair<std::uint64_t, std::uint64_t>> number_pairs(const std::string& out,
                                                                  const std::regex& re) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
    pairs.emplace_back(std::stoull((*it)[1].str()), std::stoull((*it)[2].str()));
  }
  return pairs;
}

std::vector<std::uint64_t> numbers(const std::string& out, const std::regex& re) {
  std::vector<std::uint64_t> values;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
    values.push_back(std::stoull((*it)[1].str()));
  }
  return values;
}

// What a peer run should have let through its filters, checked against its statistics summary.
enum class PeerCheck { kNone, kNothingPastMsv, kNothingPastViterbi };

// The work of one hmmsearch run from its statistics summary (one block per query model).
Work peer_work(const Context& ctx, const std::string& out, PeerCheck check) {
  static const std::regex kModel(R"(Query model\(s\):\s+(\d+)\s+\((\d+) nodes\))");
  static const std::regex kTargets(R"(Target sequences:\s+(\d+)\s+\((\d+) residues searched\))");
  static const std::regex kPastMsv(R"(Passed MSV filter:\s+(\d+))");
  static const std::regex kPastVit(R"(Passed Vit filter:\s+(\d+))");
  const auto models = number_pairs(out, kModel);
  const auto targets = number_pairs(out, kTargets);
  if (models.empty() || models.size() != targets.size()) {
    throw Error(ErrorKind::kFormat, "no pipeline statistics summary in hmmsearch's output");
  }
  Work work;
  work.bytes = ctx.input_bytes;
  work.records = targets.front().first;
  for (std::size_t i = 0; i < models.size(); ++i) {
    work.residues += targets[i].second;
    work.cells += models[i].second * targets[i].second;
  }
  const auto past_msv = numbers(out, kPastMsv);
  const auto past_vit = numbers(out, kPastVit);
  for (std::size_t i = 0; i < past_msv.size() && i < past_vit.size(); ++i) {
    if (check == PeerCheck::kNothingPastMsv && past_msv[i] != 0) {
      throw Error(ErrorKind::kInternal, std::to_string(past_msv[i]) + " targets passed MSV (expected none)");
    }
    if (check == PeerCheck::kNothingPastViterbi && (past_msv[i] != targets[i].first || past_vit[i] != 0)) {
      throw Error(ErrorKind::kInternal, "expected every target through MSV and none past Viterbi");
    }
  }
  return work;
}

// hmmsearch --cpu {threads} --noali [extra options] MODEL {input}, stdout captured.
ExternalRun peer(std::vector<std::string> extra, PeerCheck check) {
  std::vector<std::string> argv = {"hmmsearch", "--cpu", "{threads}", "--noali"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(model_path());
  argv.push_back("{input}");
  return ExternalRun{
      .argv = std::move(argv),
      .capture_stdout = true,
      .work = [check](const Context& ctx, const std::string& out) { return peer_work(ctx, out, check); }};
}

const Registration kMsv{{
    .name = "cpu-hmm-msv",
    .description = "MSV filter (SSV pre-check + byte MSV, SSE) of the model vs every input sequence",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return stage_run(ctx, Stage::kMsv); }},
    .unavailable = model_unavailable,
}};

const Registration kViterbi{{
    .name = "cpu-hmm-viterbi",
    .description = "Viterbi filter (16-bit striped, SSE) of the model vs every input sequence",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return stage_run(ctx, Stage::kViterbi); }},
    .unavailable = model_unavailable,
}};

const Registration kForward{{
    .name = "cpu-hmm-forward",
    .description = "Forward parser (float striped, SSE) of the model vs every input sequence",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return stage_run(ctx, Stage::kForward); }},
    .unavailable = model_unavailable,
}};

const Registration kForwardPair{{
    .name = "cpu-hmm-forward-pair",
    .description = "Forward parser scores in groups of 2 or 4 targets (fwd_pair.hpp: AVX-512F, AVX2 where "
                   "available) of the model vs every input sequence",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return stage_run(ctx, Stage::kForwardPair); }},
    .unavailable = model_unavailable,
}};

const Registration kSearch{{
    .name = "hmmsearch",
    .description = "hmmsearch::search() --noali, report + tblout to files: the whole search, I/O included",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return search_run(ctx, false); }},
    .unavailable = model_unavailable,
}};

const Registration kSearchMax{{
    .name = "hmmsearch-max",
    .description = "hmmsearch::search() --max --noali: every stage for every sequence, I/O included",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return search_run(ctx, true); }},
    .unavailable = model_unavailable,
}};

const Registration kPeerSearch{{
    .name = "peer:hmmsearch",
    .description = "HMMER 3.3.2 hmmsearch --cpu {threads} --noali --tblout, default pipeline",
    .headline = Headline::kCells,
    .body = peer({"--tblout", "{scratch}/t"}, PeerCheck::kNone),
    .unavailable = model_unavailable,
}};

const Registration kPeerMsv{{
    .name = "peer:hmmsearch-msv",
    .description = "hmmsearch --F1 -1 --nobias: only the MSV filter, for every sequence",
    .headline = Headline::kCells,
    .body = peer({"--F1", "-1", "--nobias"}, PeerCheck::kNothingPastMsv),
    .unavailable = model_unavailable,
}};

const Registration kPeerViterbi{{
    .name = "peer:hmmsearch-viterbi",
    .description = "hmmsearch --F1 1 --F2 -1 --nobias: MSV + Viterbi filters, for every sequence",
    .headline = Headline::kCells,
    .body = peer({"--F1", "1", "--F2", "-1", "--nobias"}, PeerCheck::kNothingPastViterbi),
    .unavailable = model_unavailable,
}};

const Registration kPeerMax{{
    .name = "peer:hmmsearch-max",
    .description = "hmmsearch --max --noali: every stage for every sequence",
    .headline = Headline::kCells,
    .body = peer({"--max"}, PeerCheck::kNone),
    .unavailable = model_unavailable,
}};

}  // namespace
}  // namespace warpsearch::bench
