// bench_hmm_gpu.cpp: kernel throughput of hmmsearch's GPU filter engine (issue 5; make_gpu_filter_engine,
// src/hmm/filter_engine.hpp) for many models against one resident database (--input, protein FASTA,
// plain or gzip; the issue asks for >= 10^8 residues), in the style of the CUDAMPF / CUDAMPF++ figures.
// CUDA builds only (the entries do not exist otherwise).
//
// Entries (internal; each reads the models and --input, uploads the database once, then per model):
//   gpu-hmm-filters    all four passes below per model, a per-model table on stderr and the CSV
//   gpu-hmm-ssv        ssv_xe over every target: the SSV pass alone
//   gpu-hmm-msv        msv over every target: what the pipeline runs (SSV, then the full MSV for the
//                      targets SSV cannot decide; the fallback count is reported)
//   gpu-hmm-msv-full   msv_full over every non-empty target: the full MSV (J state) alone
//   gpu-hmm-viterbi    vit_states over every non-empty target: the Viterbi filter alone
//
// Models (environment):
//   WARPSEARCH_BENCH_HMM_GPU_MODELS   model files separated by ':' (each may hold several models, e.g. the
//                                     24 CUDAMPF models concatenated); default $WARPSEARCH_BENCH_HMM, else
//                                     <test data>/hmm/Pkinase.hmm
//   WARPSEARCH_BENCH_HMM_GPU_SHORT    comma-separated short model lengths (e.g. 20,30,...,90), default none.
//                                     Each is CUT from a real model, deterministically: the M consecutive
//                                     nodes centred in the source model (nodes (Ms - M)/2 + 1 .. + M), node
//                                     M's M->D and D->D set to 0 (M->M and M->I renormalised), node 0's B
//                                     transitions taken from the node before the window, consensus reset;
//                                     named "<source name>:<first>-<last>".
//   WARPSEARCH_BENCH_HMM_GPU_SHORT_FROM  the model file whose first model the short ones are cut from;
//                                     default the longest model of the files above
// Every model is configured as hmmsearch does: config_profile(local multihit, L = 100) + convert_profile;
// the engine configures each target's length itself.
//
// Other settings: WARPSEARCH_BENCH_HMM_GPU_DEVICE (CUDA device id, default the first usable one),
// WARPSEARCH_BENCH_HMM_GPU_BUDGET (make_gpu_filter_engine's residue_budget in bytes; default 0: the engine's
// choice; a smaller one forces the database through in chunks),
// WARPSEARCH_BENCH_HMM_GPU_REPEAT (runs of each pass per model, the fastest is reported; default 1),
// WARPSEARCH_BENCH_HMM_GPU_VERIFY (N random non-empty targets per model whose four results are recomputed
// with the CPU references ssv_xe_reference (capped at 255 - bias_b, as the contract), msv_filter,
// msv_full_state_reference, viterbi_state_reference: any difference fails the entry; default 16, 0: none),
// WARPSEARCH_BENCH_HMM_GPU_CSV (file for one row per model and pass, see below), WARPSEARCH_BENCH_LABEL (the
// CSV's label; default the engine's describe()).
//
// Measured: cells = M x residues of the database (every target, as CUDAMPF counts: GCUPS = M * L summed /
// seconds), for every pass; device seconds from the engine's stats() (ssv_seconds; ssv + msv_full seconds
// for gpu-hmm-msv; msv_full_seconds; vit_seconds) and wall seconds of the call (host outputs included).
// Untimed: reading models and database, set_database (its upload is reported on its own: wall and
// stats().upload_seconds), and one warm-up call of each selected pass with the first model (module
// loading, first allocations). set_model's wall time is reported per model.
// Work given to the harness: cells summed over models and passes run, timed_s = the wall seconds of those
// passes, residues = database residues x models, records = targets; so the harness table's GCUPS is the
// wall-time throughput of the passes together.
//
// CSV (WARPSEARCH_BENCH_HMM_GPU_CSV; plot_throughput.py reads it: --metric gcups --logx gives the
// throughput-vs-model-length chart): label,name,length,model,targets,residues,cells,device_s,wall_s,gcups,
// wall_gcups,fallbacks,set_model_s,status, where name is gpu-hmm-ssv | gpu-hmm-msv | gpu-hmm-msv-full |
// gpu-hmm-viterbi, length = M, gcups = device GCUPS, fallbacks = targets the full MSV ran on (msv only).
// The harness runs an entry warm-up + repeat times; the CSV holds the last run (use --repeat 1 --warmup 0).
#ifdef WARPSEARCH_HAVE_CUDA

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "env.hpp"
#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/filter_engine.hpp"
#include "hmm/hmm.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/msvfilter.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"
#include "hmm/search_internal.hpp"
#include "hmm/vitfilter.hpp"
#include "registry.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/thread_pool.hpp"

#ifndef WARPSEARCH_TESTDATA_DIR
#define WARPSEARCH_TESTDATA_DIR ""
#endif

namespace warpsearch::bench {
namespace {

using Clock = std::chrono::steady_clock;

enum Pass : unsigned { kSsv = 1, kMsv = 2, kMsvFull = 4, kVit = 8, kAllPasses = 15 };
constexpr unsigned kPasses[] = {kSsv, kMsv, kMsvFull, kVit};
constexpr int kNumPasses = 4;
constexpr const char* kPassNames[] = {"gpu-hmm-ssv", "gpu-hmm-msv", "gpu-hmm-msv-full", "gpu-hmm-viterbi"};
constexpr const char* kPassShort[] = {"SSV", "MSV", "MSVfull", "Vit"};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string testdata_dir() { return env_string("WARPSEARCH_TESTDATA", WARPSEARCH_TESTDATA_DIR); }

std::vector<std::string> model_files() {
  const std::string list =
      env_string("WARPSEARCH_BENCH_HMM_GPU_MODELS",
                 env_string("WARPSEARCH_BENCH_HMM", testdata_dir() + "/hmm/Pkinase.hmm"));
  return split(list, ':');
}

std::string unavailable() {
  if (!gpu_support_compiled()) return "built without CUDA";
  // No CUDA call here: the harness forks runs, and a CUDA context must not exist before fork.
  if (!std::filesystem::exists("/dev/nvidiactl")) return "no NVIDIA driver device files";
  for (const std::string& f : model_files()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec))
      return "no model file " + f + " (set WARPSEARCH_BENCH_HMM_GPU_MODELS or fetch the test data)";
  }
  return "";
}

// The M consecutive nodes of src centred in it, as a model of its own (see the file comment).
hmm::Hmm cut_model(const hmm::Hmm& src, int M) {
  if (M < 1 || M > src.M)
    throw Error(ErrorKind::kUsage,
                fmt::format("short model length {} (the source {} has M = {})", M, src.name, src.M));
  const int first = (src.M - M) / 2 + 1;  // source node of the cut's node 1
  hmm::Hmm h;
  hmm::create_body(h, M, *src.abc);
  h.name = fmt::format("{}:{}-{}", src.name, first, first + M - 1);
  const auto at = [](int k) { return static_cast<std::size_t>(k); };
  h.t[0] = src.t[at(first - 1)];  // B->M1 / B->I0 / B->D1 of the node before the window
  h.ins[0] = src.ins[at(first - 1)];
  for (int k = 1; k <= M; ++k) {
    h.t[at(k)] = src.t[at(first + k - 1)];
    h.mat[at(k)] = src.mat[at(first + k - 1)];
    h.ins[at(k)] = src.ins[at(first + k - 1)];
  }
  h.t[0][hmm::kHDM] = 1.0f;  // no D_0
  h.t[0][hmm::kHDD] = 0.0f;
  auto& tM = h.t[at(M)];
  const float s = tM[hmm::kHMM] + tM[hmm::kHMI];
  if (s > 0.0f) {
    tM[hmm::kHMM] /= s;
    tM[hmm::kHMI] /= s;
  } else {
    tM[hmm::kHMM] = 1.0f;
  }
  tM[hmm::kHMD] = 0.0f;
  tM[hmm::kHDM] = 1.0f;
  tM[hmm::kHDD] = 0.0f;
  hmm::set_consensus(h);
  return h;
}

struct BenchModel {
  std::string name;
  hmm::OProfile om;
};

// The short models and the files' models, in increasing M (ties: short ones first, then file order).
std::vector<BenchModel> load_models(const hmm::Abc*& alphabet) {
  std::vector<hmm::Hmm> hmms;
  for (const std::string& f : model_files()) {
    std::vector<hmm::Hmm> part = hmm::read_all_hmms(f);
    if (part.empty()) throw Error(ErrorKind::kInput, "no model in the file", f);
    for (hmm::Hmm& h : part) hmms.push_back(std::move(h));
  }
  alphabet = hmms.front().abc;
  for (const hmm::Hmm& h : hmms)
    if (h.abc->type != alphabet->type) throw Error(ErrorKind::kInput, "the models do not share one alphabet");

  std::vector<hmm::Hmm> cuts;
  const std::vector<std::string> lengths = split(env_string("WARPSEARCH_BENCH_HMM_GPU_SHORT"), ',');
  if (!lengths.empty()) {
    hmm::Hmm source;
    if (const std::string from = env_string("WARPSEARCH_BENCH_HMM_GPU_SHORT_FROM"); !from.empty()) {
      std::vector<hmm::Hmm> s = hmm::read_all_hmms(from);
      if (s.empty()) throw Error(ErrorKind::kInput, "no model in the file", from);
      source = std::move(s.front());
    } else {
      source = *std::max_element(hmms.begin(), hmms.end(),
                                 [](const hmm::Hmm& a, const hmm::Hmm& b) { return a.M < b.M; });
    }
    std::vector<int> ms;
    for (const std::string& l : lengths) ms.push_back(std::stoi(l));
    std::sort(ms.begin(), ms.end());
    for (int M : ms) cuts.push_back(cut_model(source, M));
  }

  std::vector<BenchModel> models;
  for (const auto* list : {&cuts, &hmms}) {
    for (const hmm::Hmm& h : *list) {
      const hmm::Bg bg = hmm::make_bg(*h.abc);
      models.push_back(BenchModel{
          h.name, hmm::convert_profile(hmm::config_profile(h, bg, 100, hmm::ProfileMode::kLocal))});
    }
  }
  std::stable_sort(models.begin(), models.end(),
                   [](const BenchModel& a, const BenchModel& b) { return a.om.M < b.om.M; });
  return models;
}

// One pass's numbers for one model.
struct PassResult {
  bool ran = false;
  double device_s = 0.0, wall_s = 0.0;
  uint64_t fallbacks = 0;
};

struct ModelRow {
  std::string name;
  int M = 0;
  double set_model_s = 0.0;
  PassResult pass[kNumPasses];
};

// Recomputes `count` random non-empty targets with the CPU references and compares (throws on a difference).
void verify_sample(const hmm::OProfile& om, const hmm::TargetDb& db, const std::vector<uint32_t>& ids,
                   const std::vector<int>& xe, const std::vector<hmm::FilterScore>& msv,
                   const std::vector<hmm::MsvState>& full, const std::vector<hmm::VitState>& vit,
                   unsigned passes, int count, uint64_t seed, ThreadPool& pool) {
  if (count <= 0 || ids.empty()) return;
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> pick(static_cast<std::size_t>(count));  // index into ids
  for (std::size_t& p : pick) p = static_cast<std::size_t>(rng() % ids.size());
  std::vector<std::string> errors(pick.size());
  pool.parallel_for(pick.size(), 1, [&](std::size_t begin, std::size_t end) {
    hmm::OProfile o = om;
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t j = pick[i];
      const uint32_t s = ids[j];
      const hmm::TargetSeq& t = db.seqs[s];
      const int L = static_cast<int>(t.L);
      hmm::reconfig_length(o, L);
      std::string& err = errors[i];
      const auto fail = [&](const std::string& what) {
        if (err.empty()) err = fmt::format("target {} ({}, L {}): {}", s, t.name, L, what);
      };
      if ((passes & kSsv) != 0) {
        // The contract caps xE at 255 - bias_b (every value from there on means overflow).
        const int want =
            std::min(hmm::ssv_xe_reference(t.dsq.data(), L, o), 255 - static_cast<int>(o.bias_b));
        if (xe[s] != want) fail(fmt::format("ssv_xe {} != reference {}", xe[s], want));
      }
      if ((passes & kMsv) != 0) {
        const hmm::FilterScore r = hmm::msv_filter(t.dsq.data(), L, o);
        if (r.overflow != msv[s].overflow ||
            std::bit_cast<uint32_t>(r.score) != std::bit_cast<uint32_t>(msv[s].score))
          fail(fmt::format("msv {}{} != msv_filter {}{}", msv[s].score, msv[s].overflow ? " (overflow)" : "",
                           r.score, r.overflow ? " (overflow)" : ""));
      }
      if ((passes & kMsvFull) != 0) {
        const hmm::MsvState r = hmm::msv_full_state_reference(t.dsq.data(), L, o);
        if (r.overflow != full[j].overflow || (!r.overflow && r.xJ != full[j].xJ))
          fail(fmt::format("msv_full xJ {}{} != reference {}{}", full[j].xJ,
                           full[j].overflow ? " (overflow)" : "", r.xJ, r.overflow ? " (overflow)" : ""));
      }
      if ((passes & kVit) != 0) {
        const hmm::VitState r = hmm::viterbi_state_reference(t.dsq.data(), L, o);
        if (r.overflow != vit[j].overflow || (!r.overflow && r.xC != vit[j].xC))
          fail(fmt::format("vit_states xC {}{} != reference {}{}", vit[j].xC,
                           vit[j].overflow ? " (overflow)" : "", r.xC, r.overflow ? " (overflow)" : ""));
      }
    }
  });
  for (const std::string& e : errors)
    if (!e.empty()) throw Error(ErrorKind::kInternal, "GPU result differs from the CPU reference: " + e);
}

// The per-model table: device-time GCUPS of each pass run (wall-time GCUPS are in the stderr lines and CSV).
void print_table(std::FILE* out, const std::vector<ModelRow>& rows, unsigned passes, uint64_t residues) {
  fmt::print(out, "gpu-hmm: {:<28} {:>6}", "model", "M");
  for (int p = 0; p < kNumPasses; ++p)
    if ((passes & kPasses[p]) != 0) fmt::print(out, " {:>9}", kPassShort[p]);
  fmt::print(out, "   (GCUPS, device time)\n");
  for (const ModelRow& r : rows) {
    const double cells = static_cast<double>(r.M) * static_cast<double>(residues);
    fmt::print(out, "gpu-hmm: {:<28} {:>6}", r.name.substr(0, 28), r.M);
    for (int p = 0; p < kNumPasses; ++p) {
      if ((passes & kPasses[p]) == 0) continue;
      const PassResult& pr = r.pass[p];
      fmt::print(out, " {:>9}", pr.device_s > 0 ? fmt::format("{:.1f}", cells / pr.device_s * 1e-9) : "-");
    }
    fmt::print(out, "\n");
  }
}

Work run_filters(const Context& ctx, unsigned passes) {
  const hmm::Abc* alphabet = nullptr;
  const std::vector<BenchModel> models = load_models(alphabet);
  ThreadPool pool(ctx.threads);
  const Clock::time_point read_start = Clock::now();
  const hmm::TargetDb db = hmm::TargetDbFile(ctx.input).read(*alphabet, pool);
  const double read_s = seconds_since(read_start);
  const std::size_t n = db.seqs.size();
  std::vector<hmm::FilterSeq> seqs(n);
  std::vector<uint32_t> ids;  // the non-empty targets
  ids.reserve(n);
  for (std::size_t s = 0; s < n; ++s) {
    seqs[s] = hmm::FilterSeq{db.seqs[s].dsq.data(), db.seqs[s].L};
    if (db.seqs[s].L > 0) ids.push_back(static_cast<uint32_t>(s));
  }

  int device = env_integer("WARPSEARCH_BENCH_HMM_GPU_DEVICE", -1);
  if (device < 0) {
    const DeviceProbe probe = probe_devices();
    if (probe.devices.empty()) throw Error(ErrorKind::kGpu, "no usable GPU: " + probe.unavailable_reason);
    device = probe.devices.front().id;
  }
  const long long budget = env_integer<long long>("WARPSEARCH_BENCH_HMM_GPU_BUDGET", 0);
  const std::unique_ptr<hmm::FilterEngine> engine =
      hmm::make_gpu_filter_engine(device, static_cast<std::size_t>(std::max(0LL, budget)));
  engine->stats().reset();
  const Clock::time_point up_start = Clock::now();
  engine->set_database(seqs);
  const double upload_wall = seconds_since(up_start);
  const double upload_dev = engine->stats().upload_seconds;
  fmt::print(stderr,
             "gpu-hmm: {}\ngpu-hmm: database {}: {} targets, {} residues (read {:.2f} s); set_database "
             "{:.3f} s wall, {:.3f} s upload\n",
             engine->describe(), ctx.input, n, db.nres, read_s, upload_wall, upload_dev);

  const int repeat = std::max(1, env_integer("WARPSEARCH_BENCH_HMM_GPU_REPEAT", 1));
  const int verify = env_integer("WARPSEARCH_BENCH_HMM_GPU_VERIFY", 16);
  std::vector<int> xe(n);
  std::vector<hmm::FilterScore> msv(n);
  std::vector<hmm::MsvState> full(ids.size());
  std::vector<hmm::VitState> vit(ids.size());

  // One pass; returns {device seconds, wall seconds, fallbacks}.
  const auto run_pass = [&](unsigned pass) {
    hmm::FilterEngineStats& st = engine->stats();
    st.reset();
    const Clock::time_point start = Clock::now();
    PassResult r;
    r.ran = true;
    switch (pass) {
      case kSsv: engine->ssv_xe(xe); break;
      case kMsv: engine->msv(msv); break;
      case kMsvFull: engine->msv_full(ids, full); break;
      default: engine->vit_states(ids, vit); break;
    }
    r.wall_s = seconds_since(start);
    switch (pass) {
      case kSsv: r.device_s = st.ssv_seconds; break;
      case kMsv:
        r.device_s = st.ssv_seconds + st.msv_full_seconds;
        r.fallbacks = st.msv_full_targets;
        break;
      case kMsvFull: r.device_s = st.msv_full_seconds; break;
      default: r.device_s = st.vit_seconds; break;
    }
    return r;
  };

  // The CSV gets each model's rows as soon as they are measured (a run stopped by a time limit keeps them).
  const std::string csv_path = env_string("WARPSEARCH_BENCH_HMM_GPU_CSV");
  std::ofstream csv;
  std::string label;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) throw Error(ErrorKind::kIo, "cannot create the CSV", csv_path);
    for (const char c : env_string("WARPSEARCH_BENCH_LABEL", engine->describe())) {
      if (c == '"') label += '"';  // CSV quoting
      label += c;
    }
    csv << "label,name,length,model,targets,residues,cells,device_s,wall_s,gcups,wall_gcups,fallbacks,"
        << "set_model_s,status\n";
  }

  // Warm-up with the first model: module loading and first allocations stay out of the numbers.
  engine->set_model(models.front().om);
  for (int p = 0; p < kNumPasses; ++p)
    if ((passes & kPasses[p]) != 0) (void)run_pass(kPasses[p]);

  std::vector<ModelRow> rows;
  Work work;
  work.bytes = ctx.input_bytes;
  work.records = n;
  for (std::size_t m = 0; m < models.size(); ++m) {
    const BenchModel& bm = models[m];
    ModelRow row;
    row.name = bm.name;
    row.M = bm.om.M;
    const Clock::time_point sm = Clock::now();
    engine->set_model(bm.om);
    row.set_model_s = seconds_since(sm);
    for (int p = 0; p < kNumPasses; ++p) {
      if ((passes & kPasses[p]) == 0) continue;
      for (int rep = 0; rep < repeat; ++rep) {
        const PassResult r = run_pass(kPasses[p]);
        PassResult& best = row.pass[p];
        if (!best.ran || r.wall_s < best.wall_s) best = r;
      }
      work.cells += static_cast<uint64_t>(row.M) * db.nres;
      work.timed_s += row.pass[p].wall_s;
    }
    work.residues += db.nres;
    verify_sample(bm.om, db, ids, xe, msv, full, vit, passes, verify, 1000 + m, pool);
    const double cells = static_cast<double>(row.M) * static_cast<double>(db.nres);
    std::string line = fmt::format("gpu-hmm: {:<28} M {:>5}  set_model {:.4f} s", row.name.substr(0, 28),
                                   row.M, row.set_model_s);
    for (int p = 0; p < kNumPasses; ++p) {
      const PassResult& r = row.pass[p];
      if (!r.ran) continue;
      line += fmt::format("  {} {:.1f} GCUPS ({:.4f} s dev, {:.4f} s wall{})", kPassShort[p],
                          r.device_s > 0 ? cells / r.device_s * 1e-9 : 0.0, r.device_s, r.wall_s,
                          kPasses[p] == kMsv ? fmt::format(", {} fallbacks", r.fallbacks) : "");
    }
    fmt::print(stderr, "{}\n", line);
    if (csv.is_open()) {
      for (int p = 0; p < kNumPasses; ++p) {
        const PassResult& r = row.pass[p];
        if (!r.ran) continue;
        csv << fmt::format("\"{}\",{},{},\"{}\",{},{},{:.0f},{:.6f},{:.6f},{:.2f},{:.2f},{},{:.6f},ok\n",
                           label, kPassNames[p], row.M, row.name, n, db.nres, cells, r.device_s, r.wall_s,
                           r.device_s > 0 ? cells / r.device_s * 1e-9 : 0.0,
                           r.wall_s > 0 ? cells / r.wall_s * 1e-9 : 0.0, r.fallbacks, row.set_model_s);
      }
      csv.flush();
      if (!csv) throw Error(ErrorKind::kIo, "write error", csv_path);
    }
    rows.push_back(std::move(row));
  }

  print_table(stderr, rows, passes, db.nres);
  return work;
}

Entry entry(const char* name, const char* description, unsigned passes) {
  return Entry{
      .name = name,
      .description = description,
      .headline = Headline::kCells,
      .body = InternalRun{[passes](const Context& ctx) { return run_filters(ctx, passes); }},
      .unavailable = unavailable,
  };
}

const Registration kAll{
    entry("gpu-hmm-filters",
          "GPU SSV, MSV (pipeline), full MSV and Viterbi filter passes per model vs every input sequence",
          kAllPasses)};
const Registration kSsvEntry{
    entry("gpu-hmm-ssv", "GPU SSV pass (ssv_xe) of every model vs every input sequence", kSsv)};
const Registration kMsvEntry{
    entry("gpu-hmm-msv",
          "GPU MSV as the pipeline runs it (SSV + full-MSV fallbacks), every model vs every sequence", kMsv)};
const Registration kMsvFullEntry{
    entry("gpu-hmm-msv-full", "GPU full MSV (msv_full) of every model vs every non-empty input sequence",
          kMsvFull)};
const Registration kVitEntry{
    entry("gpu-hmm-viterbi",
          "GPU Viterbi filter (vit_states) of every model vs every non-empty input sequence", kVit)};

}  // namespace
}  // namespace warpsearch::bench

#endif  // WARPSEARCH_HAVE_CUDA
