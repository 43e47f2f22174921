// hmmsearch.hpp: search profile HMMs against a sequence database with HMMER 3.3.2's hmmsearch results.
//
// search() reads the query models one at a time from an HMMER3 (/a../f) file (plain or gzip, "-" = stdin),
// reads the target database (FASTA or FASTQ, plain or gzip, "-" = stdin, or a packed database made by
// `warpsearch makedb`) once into memory, record by record, digitized with the models' alphabet as
// hmmsearch does (a protein model reads DNA as protein; a DNA model refuses protein letters), and runs
// HMMER's acceleration pipeline (MSV, bias, Viterbi and Forward filters, domain definition, null2
// correction) for every model against every target on a pool of CPU threads, or with the MSV and Viterbi
// filters on GPUs (Options::gpus; docs/HMMSEARCH.md "GPU filters"). Its text outputs are those
// of `hmmsearch` byte for byte (apart from timing lines and the comment lines naming the program):
// the main report (-o), --tblout, --domtblout, --pfamtblout and the -A alignment. Results do not depend on
// the thread count. Targets longer than 100000 residues, which HMMER refuses, are searched.
//
// Options mirror hmmsearch's. Every field left unset (nullopt / false) takes HMMER's default and is
// not echoed in the report's header block; a set field is echoed the way hmmsearch echoes an option
// given on its command line.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpsearch/dist.hpp"

namespace warpsearch::hmmsearch {

enum class BitCutoffs : std::uint8_t { kNone, kGA, kNC, kTC };  // --cut_ga, --cut_nc, --cut_tc

struct Options {
  // Reporting thresholds: per target (-E / -T) and per domain (--domE / --domT). A score threshold
  // replaces the E-value threshold. Defaults: E-value <= 10.
  std::optional<double> E, T, domE, domT;
  // Inclusion (significance) thresholds: --incE / --incT, --incdomE / --incdomT. Defaults: 0.01.
  std::optional<double> incE, incT, incdomE, incdomT;
  // Model-specific thresholds (GA/NC/TC lines of each model) for all of the above; a model without
  // them is an error.
  BitCutoffs cutoffs = BitCutoffs::kNone;
  // Acceleration: --max (no filters), --F1/--F2/--F3 P-value thresholds (defaults 0.02, 1e-3, 1e-5),
  // --nobias (no composition bias filter), --nonull2 (no null2 score correction).
  bool max = false;
  std::optional<double> F1, F2, F3;
  bool nobias = false;
  bool nonull2 = false;
  // Search space sizes: -Z (targets; default the number of targets), --domZ (default the number of
  // reported targets).
  std::optional<double> Z, domZ;
  // Random seed of the stochastic traceback (--seed, default 42; 0 = one-time arbitrary seed, results
  // then vary between runs).
  std::optional<std::uint32_t> seed;
  // Display: --acc (accessions instead of names), --noali (no alignments in the main report),
  // --textw (line width, >= 120, default 120) or --notextw (unlimited).
  bool acc = false;
  bool noali = false;
  std::optional<int> textw;
  bool notextw = false;
  // Worker threads (0: all the CPUs this process may use). Not part of HMMER's results.
  unsigned threads = 0;
  // GPU filters: the CUDA devices (ids) that run the MSV and Viterbi filters over the resident database,
  // each with a contiguous share of the targets; the rest of the pipeline runs on the worker threads.
  // Empty: everything on the CPU. The results are the same either way. A build without CUDA throws
  // Error(kGpu) for a non-empty list. (The CLI fills it from --device / --gpus.)
  std::vector<int> gpus;
  // --verify N: per model, N targets of each GPU's share (drawn by a generator seeded with the model's
  // index, so the same every run) have both filters recomputed on the CPU; any difference throws
  // Error(kInternal) naming the model, the target and both scores. No effect without gpus.
  unsigned verify = 0;
  // --timing: per model, one line on stderr with the wall seconds of the pipeline's stages (GPU filters:
  // MSV, fronts, Viterbi, backs; CPU path: the whole model) and the targets reaching each stage.
  bool timing = false;
};

// Where the text outputs go: each sink receives its output in pieces, in order; an empty function means
// that output is not produced (not computed at all for the tabular ones).
struct Sinks {
  std::function<void(std::string_view)> report;      // the main report (hmmsearch's stdout / -o)
  std::function<void(std::string_view)> tblout;      // --tblout
  std::function<void(std::string_view)> domtblout;   // --domtblout
  std::function<void(std::string_view)> pfamtblout;  // --pfamtblout
  // -A: the Stockholm alignment of each query's included domains (Pfam layout with notextw); the report
  // then says where it was saved (RunLabels::A names the file).
  std::function<void(std::string_view)> alignment;
};

// How the outputs describe the run (the header block of the report and the tails of the tables).
struct RunLabels {
  // File names to echo for -o, -A, --tblout, --domtblout, --pfamtblout ("# output directed to file: ..."),
  // unset when the output is not requested.
  std::optional<std::string> o, A, tblout, domtblout, pfamtblout;
  std::optional<int> cpu;  // echoed as "# number of worker threads:" when set
  // Options given with exactly HMMER's default text ("-E 10.0", "--textw 120", "--cpu 2"): like HMMER
  // (esl_opt_IsUsed is false when the value string equals the default string), their header line is
  // not echoed. Names as on the command line ("-E", "--textw").
  std::vector<std::string> given_as_default;
  std::string program = "hmmsearch";  // "# Program:" line of the table tails
  std::string command_line;           // "# Option settings:" line of the table tails
};

// One domain of a target hit (P7_DOMAIN essentials).
struct DomainHit {
  std::int64_t ienv = 0, jenv = 0, iali = 0, jali = 0;  // 1-based, inclusive
  int hmmfrom = 0, hmmto = 0;
  float score = 0.0f;  // bits
  float bias = 0.0f;   // null2 correction, bits
  double c_evalue = 0.0, i_evalue = 0.0;
  bool reported = false, included = false;
};

// One target hit, in rank order.
struct TargetHit {
  std::string name, acc, desc;
  std::int64_t seqidx = 0;  // 0-based index in the database
  float score = 0.0f;       // bits
  float bias = 0.0f;        // bits
  double evalue = 0.0;
  bool reported = false, included = false;
  std::vector<DomainHit> domains;
};

// Results of one query model.
struct ModelResult {
  std::string name, acc, desc;
  int M = 0;
  // Pipeline accounting (the "Internal pipeline statistics summary").
  std::uint64_t nseqs = 0, nres = 0;
  std::uint64_t n_past_msv = 0, n_past_bias = 0, n_past_vit = 0, n_past_fwd = 0;
  double Z = 0.0, domZ = 0.0;
  std::uint64_t nreported = 0, nincluded = 0;
  std::vector<TargetHit> hits;  // every hit kept by the pipeline, ranked; see reported/included
};

struct Summary {
  std::vector<ModelResult> models;
  std::uint64_t targets = 0;  // sequences in the database
  std::uint64_t residues = 0;
  // The engines that ran the MSV/Viterbi filters (rank 0's; e.g. "GPU 0 (NVIDIA H100 ...): ..."); empty
  // when the CPU pipeline ran them.
  std::vector<std::string> filter_engines;
};

// Validates the option values as hmmsearch does (E > 0, textw >= 120, ...): Error(kUsage) otherwise.
void validate(const Options& options);

// Runs the search. Errors: Error(kIo) unreadable files, Error(kFormat) malformed HMM, FASTA/FASTQ files or
// packed databases and letters outside the model's alphabet (with file and line), Error(kInput) e.g. a
// model without the requested GA/NC/TC cutoffs, Error(kUsage) invalid options or hmmfile and seqdb both
// "-". The database and the first model are read before any sink is called. With keep_hits false the
// returned ModelResults carry no hits (counts only).
//
// Distributed (comm with more than one rank, warpsearch/dist.hpp; docs/MPI.md): every rank calls search()
// with the same arguments and reads the HMM file. Split kDatabase: each rank searches every model against
// its shard of the database (contiguous, residue-balanced); rank 0 merges each model's hits and pipeline
// counters. Split kQueries: model i is searched by rank i mod N against the whole database, and its
// outputs go to rank 0. Either way rank 0 alone calls its sinks and returns the Summary (the other ranks
// return one without models), and every output is byte for byte that of a one-process search. With
// options.gpus each rank's GPUs share the targets it searches (its shard, or the whole database). An error on
// any rank is raised on all of them as dist::CollectiveError. "-" (stdin) cannot be read by several ranks.
Summary search(const std::string& hmmfile, const std::string& seqdb, const Options& options,
               const Sinks& sinks, const RunLabels& labels = {}, bool keep_hits = true,
               const dist::Comm* comm = nullptr, dist::Split split = dist::Split::kDatabase);

}  // namespace warpsearch::hmmsearch
