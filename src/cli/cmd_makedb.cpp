// cmd_makedb.cpp: `warpsearch makedb`: build a packed sequence database from a FASTA/FASTQ file.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string_view>

#include "cli/commands.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::cli {

void register_makedb(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string input;
    std::string db;
    std::string alphabet;
    std::string title;
    bool strict = false;
    bool force = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("makedb", "Build a packed sequence database from a FASTA/FASTQ file");
  cmd->add_option("input", opts->input, "FASTA or FASTQ file, plain or gzip ('-' reads stdin)")->required();
  cmd->add_option("db", opts->db,
                  "Database prefix: writes DB.wsdb, DB.wsq, DB.wsh, DB.wsx, DB.wsm and DB.wso")
      ->required();
  cmd->add_option("--alphabet", opts->alphabet, "protein, dna or rna (default: guessed from the input)");
  cmd->add_flag("--strict", opts->strict,
                "Reject letters outside the alphabet instead of mapping them to X/N");
  cmd->add_option("--title", opts->title, "Title stored in the database (default: the input file name)");
  cmd->add_flag("--force", opts->force, "Replace an existing database of the same name");
  cmd->footer(
      "Sequence ids are the input order. Names must be unique; lowercase letters are kept as soft-mask "
      "runs.\n"
      "On any error no database file is written. Format: docs/FORMATS.md.\n"
      "Examples:\n"
      "  warpsearch makedb uniprot_sprot.fasta.gz sprot\n"
      "  warpsearch makedb genome.fa genome --alphabet dna --title 'C. elegans chrX'\n"
      "  zcat reads.fq.gz | warpsearch makedb - reads --strict --force");
  cmd->callback([opts, &global] {
    MakeDbOptions options;
    options.alphabet = alphabet_option(opts->alphabet);
    options.strict_letters = opts->strict;
    options.overwrite = opts->force;
    options.title = opts->title;
    options.progress = !global.quiet;
    const auto start = std::chrono::steady_clock::now();
    const MakeDbResult r = make_db(opts->input, opts->db, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.unknown_letters > 0) {
      fmt::print(stderr, "warpsearch: warning: {}: {} letters outside the {} alphabet were stored as {}\n",
                 opts->input, r.unknown_letters, to_string(r.alphabet),
                 r.alphabet == AlphabetKind::kProtein ? "X" : "N");
    }
    if (!global.quiet) {
      const auto count = [](std::uint64_t n, std::string_view noun) {
        return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
      };
      fmt::print(stderr, "makedb: {}: {}, {} ({}), lengths {}..{}, {}, {:.1f} MB in {:.2f} s\n", r.prefix,
                 count(r.sequences, "sequence"), count(r.residues, "residue"), to_string(r.alphabet),
                 r.min_length, r.max_length, count(r.partitions, "partition"),
                 static_cast<double>(r.bytes_written) / 1e6, seconds);
    }
  });
}

}  // namespace warpsearch::cli
