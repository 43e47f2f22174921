// cmd_hmmsearch.cpp: `warpsearch hmmsearch [options] <hmmfile> <seqdb>`: search profile HMMs against a
// sequence database with HMMER 3.3.2 hmmsearch's options, defaults and outputs (library:
// include/warpsearch/hmmsearch.hpp; user documentation: docs/HMMSEARCH.md).
//
// Options keep HMMER's spellings (-E, --domE, --cut_ga, ...). The main report goes to stdout or -o; the
// tables to --tblout / --domtblout / --pfamtblout. All file outputs are OutputFiles committed together at
// the end, so a failed run leaves none of them behind (stdout is written as the report grows). Threads: --cpu
// N (HMMER's option; 0 means one thread, as HMMER's serial mode) or the global --threads. Under mpirun/srun
// the database is split over the ranks and rank 0 alone writes the outputs (docs/MPI.md). GPU filters: the
// global --device / --gpus choose the GPUs that run the MSV and Viterbi filters (auto: the usable GPUs,
// else the CPU; under MPI each rank takes its share of its node's GPUs, select_local_devices); --verify N
// checks N targets per model and GPU against the CPU filters.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/hmmsearch.hpp"
#include "warpsearch/output_file.hpp"

namespace warpsearch::cli {
namespace {

struct HmmsearchOptions {
  std::string hmmfile;
  std::string seqdb;
  hmmsearch::Options search;
  std::optional<std::string> o, A, tblout, domtblout, pfamtblout, tformat;
  bool cut_ga = false, cut_nc = false, cut_tc = false;
  std::optional<int> textw;
  std::optional<unsigned> seed;
  std::optional<int> cpu;
  std::vector<const CLI::Option*> registered;  // every option, in registration order (for the spoof)
};

// HMMER's esl_opt_SpoofCmdline: the command with every option that was set, then the arguments, each
// followed by one space. Shown in the tables' "# Option settings:" comment line.
std::string spoof_command_line(const HmmsearchOptions& o) {
  std::string line = "warpsearch hmmsearch ";
  for (const CLI::Option* opt : o.registered) {
    if (opt->count() == 0) continue;
    line += opt->get_name() + " ";
    for (const std::string& value : opt->results()) {
      if (opt->get_type_size() != 0) line += value + " ";
    }
  }
  line += o.hmmfile + " " + o.seqdb + " ";
  return line;
}

void run_hmmsearch(HmmsearchOptions& o, const GlobalOptions& global) {
  const dist::Comm one_process;
  const dist::Comm& comm = global.comm != nullptr ? *global.comm : one_process;
  hmmsearch::Options& s = o.search;
  hmmsearch::RunLabels labels;
  // Files are created before the search (an unwritable path fails early) and appear only on success.
  // Under MPI only rank 0 creates and writes them; the ranks agree that the options and outputs are fine.
  OutputGroup group;
  std::unique_ptr<OutputFile> stdout_file;
  hmmsearch::Sinks sinks;
  dist::agree(comm, [&] {
    const int ncut = static_cast<int>(o.cut_ga) + static_cast<int>(o.cut_nc) + static_cast<int>(o.cut_tc);
    if (ncut > 1) throw Error(ErrorKind::kUsage, "--cut_ga, --cut_nc and --cut_tc are mutually exclusive");
    s.cutoffs = o.cut_ga   ? hmmsearch::BitCutoffs::kGA
                : o.cut_nc ? hmmsearch::BitCutoffs::kNC
                : o.cut_tc ? hmmsearch::BitCutoffs::kTC
                           : hmmsearch::BitCutoffs::kNone;
    s.textw = o.textw;
    if (o.seed) s.seed = static_cast<std::uint32_t>(*o.seed);
    if (o.tformat && *o.tformat != "fasta" && *o.tformat != "FASTA" && *o.tformat != "fastq" &&
        *o.tformat != "FASTQ") {
      throw Error(
          ErrorKind::kUsage,
          fmt::format("--tformat {}: only fasta and fastq target files (or packed databases) are supported",
                      *o.tformat));
    }
    if (o.hmmfile == "-" && o.seqdb == "-") {
      throw Error(ErrorKind::kUsage,
                  "either <hmmfile> or <seqdb> may be '-' (to read from stdin), but not both");
    }
    s.threads = o.cpu ? static_cast<unsigned>(*o.cpu > 0 ? *o.cpu : 1) : global.resolved_threads();
    hmmsearch::validate(s);
    // The filters on the GPUs of --device / --gpus (the results are the same either way).
    const DeviceSelection devices = global.resolve_devices();
    std::vector<int> ids;
    if (devices.use_gpu)
      for (const DeviceInfo& d : devices.devices) ids.push_back(d.id);
    s.gpus = ids;

    labels.o = o.o;
    labels.A = o.A;
    labels.tblout = o.tblout;
    labels.domtblout = o.domtblout;
    labels.pfamtblout = o.pfamtblout;
    labels.cpu = o.cpu;
    labels.command_line = spoof_command_line(o);
    // HMMER 3.3.2's default texts of the options it echoes only when set to something else.
    static constexpr std::pair<std::string_view, std::string_view> kDefaults[] = {
        {"-E", "10.0"},   {"--domE", "10.0"}, {"--incE", "0.01"}, {"--incdomE", "0.01"}, {"--F1", "0.02"},
        {"--F2", "1e-3"}, {"--F3", "1e-5"},   {"--seed", "42"},   {"--textw", "120"},    {"--cpu", "2"}};
    for (const CLI::Option* opt : o.registered) {
      if (opt->count() == 0 || opt->results().empty()) continue;
      for (const auto& [name, text] : kDefaults)
        if (opt->check_name(std::string(name)) && given_text(*opt) == text)
          labels.given_as_default.emplace_back(name);
    }
    if (!comm.is_root()) return;

    OutputFile* report = nullptr;
    if (o.o) {
      report = &group.add(*o.o);
    } else {
      stdout_file = std::make_unique<OutputFile>("-");
      report = stdout_file.get();
    }
    sinks.report = [report](std::string_view text) { report->write(text); };
    if (o.tblout) {
      OutputFile& f = group.add(*o.tblout);
      sinks.tblout = [&f](std::string_view text) { f.write(text); };
    }
    if (o.domtblout) {
      OutputFile& f = group.add(*o.domtblout);
      sinks.domtblout = [&f](std::string_view text) { f.write(text); };
    }
    if (o.pfamtblout) {
      OutputFile& f = group.add(*o.pfamtblout);
      sinks.pfamtblout = [&f](std::string_view text) { f.write(text); };
    }
    if (o.A) {
      OutputFile& f = group.add(*o.A);
      sinks.alignment = [&f](std::string_view text) { f.write(text); };
    }
  });

  const hmmsearch::Summary summary =
      hmmsearch::search(o.hmmfile, o.seqdb, s, sinks, labels, false, &comm, global.split());
  if (!comm.is_root()) return;
  group.commit();
  if (stdout_file) stdout_file->commit();

  if (!global.quiet && o.o) {
    std::uint64_t reported = 0;
    for (const auto& m : summary.models) reported += m.nreported;
    std::string filters;
    for (const std::string& e : summary.filter_engines) filters += (filters.empty() ? "" : "; ") + e;
    fmt::print(stderr, "hmmsearch: {} model{} vs {} sequences ({} residues): {} reported target hit{}{}\n",
               summary.models.size(), summary.models.size() == 1 ? "" : "s", summary.targets,
               summary.residues, reported, reported == 1 ? "" : "s",
               filters.empty() ? std::string() : " (MSV/Viterbi filters on " + filters + ")");
  }
}

}  // namespace

void register_hmmsearch(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<HmmsearchOptions>();
  hmmsearch::Options& s = opts->search;
  CLI::App* cmd = app.add_subcommand(
      "hmmsearch", "Search profile HMM(s) against a sequence database (HMMER 3.3.2 hmmsearch, same results)");
  auto reg = [&opts](CLI::Option* opt) {
    opts->registered.push_back(opt);
    return opt;
  };
  cmd->add_option("hmmfile", opts->hmmfile,
                  "Query profile HMM file (HMMER3 format, plain or gzip; '-' reads stdin)")
      ->required();
  cmd->add_option("seqdb", opts->seqdb,
                  "Target sequences: FASTA or FASTQ (plain or gzip; '-' reads stdin) or a packed database "
                  "(warpsearch makedb)")
      ->required();

  auto out = cmd->add_option_group("Options directing output");
  reg(out->add_option("-o", opts->o, "Direct the main output to file <f>, not stdout"));
  reg(out->add_option("-A", opts->A, "Save multiple alignment of all hits to file <f>"));
  reg(out->add_option("--tblout", opts->tblout, "Save parseable table of per-sequence hits to file <f>"));
  reg(out->add_option("--domtblout", opts->domtblout, "Save parseable table of per-domain hits to file <f>"));
  reg(out->add_option("--pfamtblout", opts->pfamtblout,
                      "Save table of hits and domains to file <f>, in Pfam format"));
  reg(out->add_flag("--acc", s.acc, "Prefer accessions over names in output"));
  reg(out->add_flag("--noali", s.noali, "Don't output alignments, so output is smaller"));
  auto* notextw = reg(out->add_flag("--notextw", s.notextw, "Unlimit ASCII text output line width"));
  auto* textw =
      reg(out->add_option("--textw", opts->textw, "Set max width of ASCII text output lines (>= 120) [120]"));
  notextw->excludes(textw);

  auto rep = cmd->add_option_group("Options controlling reporting thresholds");
  reg(rep->add_option("-E", s.E, "Report sequences <= this E-value threshold in output [10.0]"));
  reg(rep->add_option("-T", s.T, "Report sequences >= this score threshold in output"));
  reg(rep->add_option("--domE", s.domE, "Report domains <= this E-value threshold in output [10.0]"));
  reg(rep->add_option("--domT", s.domT, "Report domains >= this score cutoff in output"));

  auto inc = cmd->add_option_group("Options controlling inclusion (significance) thresholds");
  reg(inc->add_option("--incE", s.incE,
                      "Consider sequences <= this E-value threshold as significant [0.01]"));
  reg(inc->add_option("--incT", s.incT, "Consider sequences >= this score threshold as significant"));
  reg(inc->add_option("--incdomE", s.incdomE,
                      "Consider domains <= this E-value threshold as significant [0.01]"));
  reg(inc->add_option("--incdomT", s.incdomT, "Consider domains >= this score threshold as significant"));

  auto cut = cmd->add_option_group("Options controlling model-specific thresholding");
  reg(cut->add_flag("--cut_ga", opts->cut_ga, "Use profile's GA gathering cutoffs to set all thresholding"));
  reg(cut->add_flag("--cut_nc", opts->cut_nc, "Use profile's NC noise cutoffs to set all thresholding"));
  reg(cut->add_flag("--cut_tc", opts->cut_tc, "Use profile's TC trusted cutoffs to set all thresholding"));

  auto acc = cmd->add_option_group("Options controlling acceleration heuristics");
  reg(acc->add_flag("--max", s.max, "Turn all heuristic filters off (less speed, more power)"));
  reg(acc->add_option("--F1", s.F1, "Stage 1 (MSV) threshold: promote hits w/ P <= F1 [0.02]"));
  reg(acc->add_option("--F2", s.F2, "Stage 2 (Vit) threshold: promote hits w/ P <= F2 [1e-3]"));
  reg(acc->add_option("--F3", s.F3, "Stage 3 (Fwd) threshold: promote hits w/ P <= F3 [1e-5]"));
  reg(acc->add_flag("--nobias", s.nobias, "Turn off composition bias filter"));

  auto other = cmd->add_option_group("Other expert options");
  reg(other->add_flag("--nonull2", s.nonull2, "Turn off biased composition score corrections"));
  reg(other->add_option("-Z", s.Z, "Set # of comparisons done, for E-value calculation"));
  reg(other->add_option("--domZ", s.domZ, "Set # of significant seqs, for domain E-value calculation"));
  reg(other->add_option("--seed", opts->seed, "Set RNG seed to <n> (if 0: one-time arbitrary seed) [42]"));
  reg(other->add_option("--tformat", opts->tformat,
                        "Accepted for compatibility: fasta or fastq (detected from the content)"));
  reg(other->add_option("--cpu", opts->cpu,
                        "Number of parallel CPU workers (0: one thread) [default: --threads]"))
      ->check(CLI::Range(0, 1 << 16));

  auto gpu = cmd->add_option_group("GPU filters (the global --device / --gpus choose where they run)");
  reg(gpu->add_option(
      "--verify", s.verify,
      "Per model, recompute the MSV and Viterbi filters of <n> targets per GPU on the CPU and "
      "fail on any difference [0]"));
  reg(other->add_flag("--timing", s.timing,
                      "Print each model's stage times (wall seconds) and stage counts on stderr"));

  cmd->footer(
      "Results (scores, E-values, domains, alignments, pipeline counts) are those of HMMER 3.3.2's\n"
      "hmmsearch, byte for byte in --tblout/--domtblout/--pfamtblout and the main report (apart from\n"
      "timing lines), whatever the number of threads. Targets longer than 100000 residues, which HMMER\n"
      "refuses, are searched. The database is read once into memory, digitized in the models' alphabet.\n"
      "<hmmfile> or <seqdb> (not both) may be '-' to read stdin. Details: docs/HMMSEARCH.md.\n"
      "Under mpirun/srun the database (or with --mpi-split queries the models) is split over the ranks and\n"
      "rank 0 writes the same outputs (docs/MPI.md).\n"
      "With --device gpu (or auto; global options, --gpus picks the GPUs) the MSV and Viterbi filters\n"
      "run on the GPUs over the resident database, the rest on the CPU threads; the outputs are the same.\n"
      "Examples:\n"
      "  warpsearch hmmsearch globins4.hmm uniprot.fa\n"
      "  warpsearch hmmsearch --tblout hits.tbl --domtblout doms.tbl -o report.txt Pfam-A.hmm db.fa.gz\n"
      "  warpsearch hmmsearch --cut_ga --noali --cpu 8 Pkinase.hmm proteome.fa\n"
      "  warpsearch hmmsearch -E 1e-5 --domE 1e-3 --max fn3.hmm targets.fa\n"
      "  mpirun -n 4 warpsearch hmmsearch --cpu 8 --tblout hits.tbl Pfam-A.hmm db/proteins\n"
      "  warpsearch hmmsearch --device gpu --gpus 0,1 --verify 100 --tblout hits.tbl Pfam-A.hmm db.fa");
  cmd->callback([opts, &global] { run_hmmsearch(*opts, global); });
}

}  // namespace warpsearch::cli
