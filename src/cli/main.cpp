// main.cpp: the `warpsearch` command-line tool: global options, command registration, error handling.
//
// Every command lives in its own src/cli/cmd_<name>.cpp and registers itself through commands.hpp.
// Errors surface as warpsearch::Error and become "warpsearch: error: FILE:LINE: message" on stderr
// with the exit status of their kind (error.hpp); usage errors exit 2 with CLI11's message.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <new>

#include "cli/commands.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"
#include "warpsearch/version.hpp"

namespace warpsearch::cli {

unsigned GlobalOptions::resolved_threads() const { return ThreadPool::resolve(threads); }

DeviceSelection GlobalOptions::resolve_devices() const {
  const auto mode = parse_device_mode(device);
  if (!mode) throw Error(ErrorKind::kUsage, fmt::format("--device {}: expected auto, cpu or gpu", device));
  return select_devices(*mode, gpus);
}

std::optional<AlphabetKind> alphabet_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto kind = parse_alphabet(text);
  if (!kind) throw Error(ErrorKind::kUsage, fmt::format("--alphabet {}: expected protein, dna or rna", text));
  return kind;
}

namespace {

int run(int argc, char** argv) {
  CLI::App app{"warpsearch: GPU-accelerated homologous sequence search", "warpsearch"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("warpsearch {} (GPU support: {})", kVersion,
                                                gpu_support_compiled() ? "CUDA" : "none"));
  app.footer(
      "Run `warpsearch COMMAND --help` for a command's options and examples.\n"
      "Global options may also follow the command name.");

  GlobalOptions global;
  app.add_option("-t,--threads", global.threads, "CPU threads (0 = all hardware threads)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--device", global.device, "Where to compute: auto (GPU if usable), cpu, gpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
  app.add_option("--gpus", global.gpus, "Comma-separated GPU ids to use (default: all visible)");
  app.add_flag("-q,--quiet", global.quiet, "No progress or summary messages on stderr");
  app.fallthrough();

  register_makedb(app, global);
  register_dbinfo(app, global);
  register_devices(app, global);
  register_align(app, global);
  register_hmmsearch(app, global);
  register_scan(app, global);

  if (argc <= 1) {  // no command: show what there is, as a usage error
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); a command-line mistake is a usage error (exit status 2),
    // like the checks the commands make themselves, whatever CLI11's own code for it.
    return app.exit(e) == 0 ? 0 : exit_code(ErrorKind::kUsage);
  }
  return 0;
}

}  // namespace
}  // namespace warpsearch::cli

int main(int argc, char** argv) {
  using warpsearch::Error;
  try {
    return warpsearch::cli::run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "warpsearch: error: %s\n", e.what());
    return warpsearch::exit_code(e.kind());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "warpsearch: error: out of memory\n");
    return 71;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warpsearch: internal error: %s\n", e.what());
    return 70;
  }
}
