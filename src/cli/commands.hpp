// commands.hpp: how CLI commands plug into `warpsearch` (one file per command in src/cli/).
//
// Each command file defines register_<name>(CLI::App& app, const GlobalOptions& global) which adds a
// subcommand with its options and a callback. The callback runs after parsing, does the work through
// the library, and throws warpsearch::Error on failure; main() turns errors into messages and exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/gpu.hpp"

namespace warpsearch::cli {

struct GlobalOptions {
  unsigned threads = 0;  // --threads; 0: the default below
  // --threads 0 under MPI: this rank's share of its node's CPUs (dist::default_threads, set by run()); 0 (one
  // process): all the CPUs this process may use.
  unsigned default_threads = 0;
  std::string device = "auto";  // auto | cpu | gpu
  std::string gpus;             // comma-separated device ids, empty: all visible
  bool quiet = false;
  // The MPI world (warpsearch/dist.hpp): one process unless started by an MPI launcher. hmmsearch, blastp,
  // swsearch, align and scan run distributed; main() refuses the other commands on more than one rank.
  const dist::Comm* comm = nullptr;
  std::string mpi_split = "db";  // --mpi-split db|queries (docs/MPI.md)

  dist::Split split() const {
    return mpi_split == "queries" ? dist::Split::kQueries : dist::Split::kDatabase;
  }

  // --threads for an engine that takes a thread count (0 there: all the CPUs this process may use).
  unsigned thread_request() const { return threads != 0 ? threads : default_threads; }
  unsigned resolved_threads() const;
  // Resolves --device/--gpus against the machine (see gpu.hpp); throws Error(kUsage/kGpu). Under MPI
  // (comm with several ranks): this rank's share of its node's GPUs (select_local_devices).
  DeviceSelection resolve_devices() const;
  // resolve_devices() as an engine configuration that selects its own devices (align::Config,
  // scan::Config): kGpu with the chosen ids as a --gpus list, or kCpu when none was chosen.
  void resolve_engine_devices(DeviceMode& mode, std::string& gpu_list) const;
};

// The value of an --alphabet option: empty means "guess from the data" (nullopt); a name that
// parse_alphabet() does not know is Error(kUsage).
std::optional<AlphabetKind> alphabet_option(const std::string& text);

// Makes every integer option of app and its commands (main() calls it once all are registered) take decimal
// text only, as HMMER does (CLI11 alone reads "042" as octal and "0x10" as hex); blastp's, and all of them
// with allow_hex, also take "0x" and hexadecimal digits, as BLAST+ does.
void decimal_integer_options(CLI::App& app, bool allow_hex);
// A check for an integer option: its value must be >= min ("must be >= 1"; CLI11's PositiveNumber and
// NonNegativeNumber print their range up to 1.8e308 with 300 digits).
CLI::Validator at_least(std::int64_t min);
// The last value given for opt as it was typed (before decimal_integer_options dropped leading zeros).
std::string given_text(const CLI::Option& opt);

void register_makedb(CLI::App& app, const GlobalOptions& global);
void register_dbinfo(CLI::App& app, const GlobalOptions& global);
void register_devices(CLI::App& app, const GlobalOptions& global);
void register_align(CLI::App& app, const GlobalOptions& global);
void register_hmmsearch(CLI::App& app, const GlobalOptions& global);
void register_scan(CLI::App& app, const GlobalOptions& global);
void register_blastp(CLI::App& app, const GlobalOptions& global);
void register_swsearch(CLI::App& app, const GlobalOptions& global);

}  // namespace warpsearch::cli
