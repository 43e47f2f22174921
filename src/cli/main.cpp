// main.cpp: the `warpsearch` command-line tool: global options, command registration, error handling.
//
// Every command lives in its own src/cli/cmd_<name>.cpp and registers itself through commands.hpp.
// Errors surface as warpsearch::Error and become "warpsearch: error: FILE:LINE: message" on stderr
// with the exit status of their kind (error.hpp); usage errors exit 2 with CLI11's message. Under an MPI
// launcher (warpsearch/dist.hpp, docs/MPI.md) every rank runs main(); hmmsearch, blastp and swsearch split
// the database (or the queries) over the ranks, align its pairs, scan its queries, and rank 0 alone writes;
// the other commands refuse to run on several ranks.
// Commands with BLAST+ option spellings (blastp) also take their long options with one dash, as BLAST+
// does: blast_style_arguments() rewrites those tokens to CLI11's --name form before parsing.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"
#include "warpsearch/version.hpp"

namespace warpsearch::cli {

unsigned GlobalOptions::resolved_threads() const { return ThreadPool::resolve(thread_request()); }

DeviceSelection GlobalOptions::resolve_devices() const {
  const auto mode = parse_device_mode(device);
  if (!mode) throw Error(ErrorKind::kUsage, fmt::format("--device {}: expected auto, cpu or gpu", device));
  if (comm != nullptr && comm->size() > 1)
    return select_local_devices(*mode, gpus, comm->local_rank(), comm->local_size());
  return select_devices(*mode, gpus);
}

void GlobalOptions::resolve_engine_devices(DeviceMode& mode, std::string& gpu_list) const {
  const DeviceSelection devices = resolve_devices();
  std::vector<int> ids;
  if (devices.use_gpu)
    for (const DeviceInfo& d : devices.devices) ids.push_back(d.id);
  mode = ids.empty() ? DeviceMode::kCpu : DeviceMode::kGpu;
  gpu_list = fmt::format("{}", fmt::join(ids, ","));
}

std::optional<AlphabetKind> alphabet_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto kind = parse_alphabet(text);
  if (!kind) throw Error(ErrorKind::kUsage, fmt::format("--alphabet {}: expected protein, dna or rna", text));
  return kind;
}

namespace {

// Commands whose options are spelt as in BLAST+ and may be written with one dash.
constexpr std::string_view kBlastStyleCommands[] = {"blastp"};
// Commands whose long options may be abbreviated to any unambiguous prefix, as HMMER's (esl_getopts) are.
constexpr std::string_view kHmmerStyleCommands[] = {"hmmsearch"};

// The long names ("--name") of the options of app, its option groups and its parents (the global options).
std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> names;
  const auto add = [&names](const CLI::App& a, const auto& self) -> void {
    for (const CLI::Option* opt : a.get_options())
      for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
    for (const CLI::App* group :
         a.get_subcommands([](const CLI::App* sub) { return sub->get_name().empty(); }))
      self(*group, self);
  };
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) add(*a, add);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// The option named by `token` ("--name", "--name=value", "-x"), looked up in `app` and then in its parents
// (global options may follow the command name); nullptr if none.
const CLI::Option* find_option(const CLI::App& app, std::string_view token) {
  const std::string name(token.substr(0, token.find('=')));
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) {
    if (const CLI::Option* opt = a->get_option_no_throw(name)) return opt;
  }
  return nullptr;
}

// The command line with BLAST+-style options rewritten for CLI11: after the name of a command listed in
// kBlastStyleCommands, a token -NAME or -NAME=VALUE (NAME at least two characters) whose --NAME is a long
// option of that command (or a global option, which may follow the command name) becomes --NAME /
// --NAME=VALUE. Nothing else changes: tokens before the command, option values (the token after an option
// that takes a value, when given without '='; so "-out -query" keeps "-query" as a file name, and negative
// numbers are never rewritten), short options, unknown names (CLI11 reports them as typed), and everything
// after "--". Other commands' arguments are returned unchanged.
// After the name of a command in kHmmerStyleCommands, a token --PREFIX or --PREFIX=VALUE that names no option
// becomes the one long option of that command (or global option) that starts with PREFIX; a PREFIX that
// starts several is a usage error naming them (HMMER's rule: "--tbl" is --tblout, "--dom" is ambiguous).
std::vector<std::string> blast_style_arguments(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  const CLI::App* command = nullptr;  // the BLAST-style or HMMER-style command, once its name has been seen
  bool hmmer_style = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string& token = args[i];
    if (token == "--") break;
    if (token.empty() || token[0] != '-') {
      // Not an option, and not an option's value (those are skipped below): before the command, the
      // command name; after it, a stray argument CLI11 will report.
      if (command != nullptr) continue;
      for (const std::string_view name : kBlastStyleCommands) {
        if (token == name) command = app.get_subcommand(std::string(name));  // registered above
      }
      for (const std::string_view name : kHmmerStyleCommands) {
        if (token == name) {
          command = app.get_subcommand(std::string(name));
          hmmer_style = true;
        }
      }
      if (command == nullptr) break;  // another command: its arguments stay as they are
      continue;
    }
    const CLI::App& scope = command != nullptr ? *command : app;
    if (command != nullptr && !hmmer_style && token.size() > 2 && token[1] != '-') {
      const std::string long_form = "-" + token;
      if (find_option(scope, long_form) != nullptr) token = long_form;
    }
    if (hmmer_style && token.size() > 2 && token[1] == '-' && find_option(scope, token) == nullptr) {
      const std::size_t eq = token.find('=');
      const std::string prefix = token.substr(0, eq);
      std::vector<std::string> matches;
      for (const std::string& name : long_option_names(scope))
        if (name.rfind(prefix, 0) == 0) matches.push_back(name);
      if (matches.size() > 1)  // every rank reads the same command line: an error they raise together
        throw dist::CollectiveError(ErrorKind::kUsage, fmt::format("abbreviated option {} is ambiguous: {}",
                                                                   prefix, fmt::join(matches, ", ")));
      if (matches.size() == 1) token = matches.front() + (eq == std::string::npos ? "" : token.substr(eq));
    }
    // An option that takes a value, given without '=' ("--evalue 5", "-t 4"): its value is the next token.
    const CLI::Option* opt = find_option(scope, token);
    const bool separate_value =
        token.rfind("--", 0) == 0 ? token.find('=') == std::string::npos : token.size() == 2;
    if (opt != nullptr && opt->get_items_expected_min() > 0 && separate_value) ++i;
  }
  return args;
}

// CLI11 converts integer text with strtoll(text, 0): "042" would be octal 34, "0x10" hex 16, and an unsigned
// 64-bit option would take "-1" as 2^64 - 1. BLAST+ and HMMER read integers in decimal, so every integer
// option of every command takes an optional sign and decimal digits (leading zeros allowed) and nothing
// else; the text reaches CLI11's conversion (and the option's own checks) without its leading zeros, and
// given_text() keeps it as typed.
std::map<const CLI::Option*, std::string>& typed_texts() {
  static std::map<const CLI::Option*, std::string> texts;  // written while parsing (one thread)
  return texts;
}

// BLAST+ also reads "0x" followed by hexadecimal digits, so blastp does (allow_hex).
std::string decimal_integer(std::string& text, bool is_unsigned, bool allow_hex) {
  if (allow_hex && text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), value, 16);
    if (ec == std::errc::result_out_of_range) return fmt::format("'{}' is out of range", text);
    if (ec != std::errc() || end != text.data() + text.size())
      return fmt::format("'{}' is not an integer", text);
    text = std::to_string(value);
    return {};
  }
  std::size_t digits = 0;
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    digits = 1;
  }
  const bool all_digits =
      digits < text.size() && std::all_of(text.begin() + static_cast<std::ptrdiff_t>(digits), text.end(),
                                          [](char c) { return c >= '0' && c <= '9'; });
  if (!all_digits) return fmt::format("'{}' is not a decimal integer", text);
  if (negative && is_unsigned) return fmt::format("'{}': expected a number >= 0", text);
  const std::size_t first = std::min(text.find_first_not_of('0', digits), text.size() - 1);
  text = (negative ? "-" : "") + text.substr(first);
  return {};
}

}  // namespace

void decimal_integer_options(CLI::App& app, bool allow_hex) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string full_type = opt->get_type_name();  // "UINT" or "UINT:NONNEGATIVE" (its checks)
    const std::string type = full_type.substr(0, full_type.find(':'));
    if ((type != "INT" && type != "UINT") || opt->get_expected_min() == 0) continue;
    const bool is_unsigned = type == "UINT";
    opt->transform(CLI::Validator(
        [is_unsigned, allow_hex, opt](std::string& text) {
          typed_texts()[opt] = text;
          return decimal_integer(text, is_unsigned, allow_hex);
        },
        "", "decimal"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    decimal_integer_options(*sub, allow_hex || sub->get_name() == "blastp");  // its option groups too
}

CLI::Validator at_least(std::int64_t min) {
  return CLI::Validator(
      [min](const std::string& text) {
        std::int64_t value = 0;  // the text is decimal here (decimal_integer_options' transform ran first)
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value < min)
          return fmt::format("{} given; it must be >= {}", text, min);
        return std::string();
      },
      fmt::format(">= {}", min));
}

std::string given_text(const CLI::Option& opt) {
  const auto typed = typed_texts().find(&opt);
  if (typed != typed_texts().end()) return typed->second;
  return opt.results().empty() ? std::string() : opt.results().back();
}

namespace {

// Commands that run distributed under MPI (docs/MPI.md); the others refuse to run on several ranks.
constexpr std::string_view kMpiCommands[] = {"hmmsearch", "blastp", "swsearch", "align", "scan"};

int run(int argc, char** argv, const dist::Comm& comm) {
  CLI::App app{"warpsearch: GPU-accelerated homologous sequence search", "warpsearch"};
  app.require_subcommand(1);
  // Command-line mistakes print as every other error does.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return fmt::format("warpsearch: error: {}\nRun with --help for more information.\n", e.what());
  });
  app.set_version_flag("--version", fmt::format("warpsearch {} (GPU support: {})", kVersion,
                                                gpu_support_compiled() ? "CUDA" : "none"));
  app.footer(
      "Run `warpsearch COMMAND --help` for a command's options and examples.\n"
      "Global options may also follow the command name.");

  GlobalOptions global;
  global.comm = &comm;
  global.default_threads = dist::default_threads(comm);  // every rank gets here (collective under MPI)
  app.add_option("-t,--threads", global.threads,
                 "CPU threads (0 = all the CPUs this process may use; under MPI, each rank's share of its "
                 "node's CPUs)")
      ->capture_default_str();
  app.add_option("--device", global.device, "Where to compute: auto (GPU if usable), cpu, gpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
  app.add_option("--gpus", global.gpus, "Comma-separated GPU ids to use (default: all visible)");
  app.add_flag("-q,--quiet", global.quiet, "No progress or summary messages on stderr");
  app.add_option(
         "--mpi-split", global.mpi_split,
         "Under mpirun/srun, what hmmsearch, blastp, swsearch and scan split over the ranks: db (database "
         "shards) or queries (models / query batches / queries); same output either way (docs/MPI.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"db", "queries"}));
  app.fallthrough();

  register_makedb(app, global);
  register_dbinfo(app, global);
  register_devices(app, global);
  register_align(app, global);
  register_hmmsearch(app, global);
  register_scan(app, global);
  register_blastp(app, global);
  register_swsearch(app, global);
  decimal_integer_options(app, false);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    bool distributed = false;
    for (const std::string_view name : kMpiCommands) distributed = distributed || sub->get_name() == name;
    if (distributed) continue;
    sub->preparse_callback([&comm, sub](std::size_t) {
      if (comm.size() > 1)  // every rank gets here: an error they raise together
        throw dist::CollectiveError(
            ErrorKind::kUsage, fmt::format("warpsearch {} does not run under MPI ({} ranks); only hmmsearch, "
                                           "blastp, swsearch, align and scan do: run it as one process",
                                           sub->get_name(), comm.size()));
    });
  }

  if (argc <= 1) {  // no command: show what there is, as a usage error
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  std::vector<std::string> args = blast_style_arguments(app, argc, argv);
  std::vector<char*> arg_pointers;
  for (std::string& a : args) arg_pointers.push_back(a.data());
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); a command-line mistake is a usage error (exit status 2),
    // like the checks the commands make themselves, whatever CLI11's own code for it. Every rank parses
    // the same command line: only rank 0 prints.
    if (!comm.is_root()) return e.get_exit_code() == 0 ? 0 : exit_code(ErrorKind::kUsage);
    return app.exit(e) == 0 ? 0 : exit_code(ErrorKind::kUsage);
  }
  return 0;
}

}  // namespace
}  // namespace warpsearch::cli

// Under MPI (several ranks): an error all ranks raised together (dist::CollectiveError) is printed by rank 0
// and every rank exits normally with its status; any other error is one rank's alone, which the others do
// not know about: that rank prints it and ends the whole job (MPI_Abort) with its status.
int main(int argc, char** argv) {
  using warpsearch::Error;
  std::optional<warpsearch::dist::Session> session;
  try {
    session.emplace(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "warpsearch: error: %s\n", e.what());
    return warpsearch::exit_code(e.kind());
  }
  const warpsearch::dist::Comm& comm = session->world();
  const auto fail = [&comm](const std::string& message, int status) {
    if (comm.size() > 1) comm.abort(message, status);
    std::fprintf(stderr, "warpsearch: %s\n", message.c_str());
    return status;
  };
  try {
    return warpsearch::cli::run(argc, argv, comm);
  } catch (const warpsearch::dist::CollectiveError& e) {
    if (comm.is_root()) std::fprintf(stderr, "warpsearch: error: %s\n", e.what());
    return warpsearch::exit_code(e.kind());
  } catch (const Error& e) {
    return fail(std::string("error: ") + e.what(), warpsearch::exit_code(e.kind()));
  } catch (const std::bad_alloc&) {
    return fail("error: out of memory", 71);
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what(), 70);
  }
}
