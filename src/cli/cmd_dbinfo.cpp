// cmd_dbinfo.cpp: `warpsearch dbinfo`: statistics of a packed database, a BLAST+ protein database or a
// FASTA/FASTQ file, as a table (with the length histogram and partitions) or as JSON; --verify checks every
// checksum (packed) or every offset, residue and defline (BLAST+).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "cli/commands.hpp"
#include "core/blast_db.hpp"
#include "core/text_format.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::cli {
namespace {

constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();

std::string json_bound(std::uint64_t value) { return value == kUnbounded ? "null" : std::to_string(value); }

std::string length_range(std::uint64_t lo, std::uint64_t hi) {
  return hi == kUnbounded ? fmt::format("{}..", lo) : fmt::format("{}..{}", lo, hi);
}

void print_json(const DbSummary& s, bool verified) {
  std::string out = "{\n";
  out += fmt::format("  \"path\": {},\n  \"packed\": {},\n", json_quote(s.path), s.packed);
  if (s.packed) {
    out += fmt::format("  \"format_version\": {},\n  \"title\": {},\n  \"source\": {},\n", s.format_version,
                       json_quote(s.title), json_quote(s.source));
  }
  if (s.blast) {
    out += fmt::format(
        "  \"blast\": true,\n  \"format_version\": {},\n  \"title\": {},\n  \"date\": {},\n  \"volumes\": "
        "{},\n",
        s.format_version, json_quote(s.title), json_quote(s.date), s.volumes);
  }
  out += fmt::format(
      "  \"file_bytes\": {},\n  \"alphabet\": \"{}\",\n  \"sequences\": {},\n  \"residues\": {},\n"
      "  \"min_length\": {},\n  \"max_length\": {},\n  \"mean_length\": {:.3f},\n  \"n50\": {},\n"
      "  \"unknown_letters\": {},\n  \"masked_residues\": {},\n  \"mask_runs\": {},\n  \"verified\": {},\n",
      s.file_bytes, to_string(s.alphabet), s.sequences, s.residues, s.min_length, s.max_length, s.mean_length,
      s.n50, s.unknown_letters, s.masked_residues, s.mask_runs, verified);
  out += "  \"histogram\": [";
  for (std::size_t i = 0; i < s.histogram.size(); ++i) {
    const LengthBucket& b = s.histogram[i];
    out += fmt::format("{}\n    {{\"lo\": {}, \"hi\": {}, \"sequences\": {}, \"residues\": {}}}",
                       i ? "," : "", b.lo, json_bound(b.hi), b.sequences, b.residues);
  }
  out += s.histogram.empty() ? "],\n" : "\n  ],\n";
  out += "  \"partitions\": [";
  for (std::size_t i = 0; i < s.partitions.size(); ++i) {
    const DbPartition& p = s.partitions[i];
    out += fmt::format(
        "{}\n    {{\"length_lo\": {}, \"length_hi\": {}, \"min_length\": {}, \"max_length\": {}, \"begin\": "
        "{}, "
        "\"end\": {}, \"sequences\": {}, \"residues\": {}}}",
        i ? "," : "", p.length_lo, json_bound(p.length_hi), p.min_length, p.max_length, p.begin, p.end,
        p.size(), p.residues);
  }
  out += s.partitions.empty() ? "]\n}\n" : "\n  ]\n}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void print_table(const DbSummary& s, bool verified) {
  std::string out;
  const auto row = [&out](std::string_view key, const std::string& value) {
    out += fmt::format("{:<13}{}\n", key, value);
  };
  if (s.packed) {
    row("database", fmt::format("{} (packed database, format version {})", s.path, s.format_version));
    row("title", s.title);
    row("source", s.source);
    row("size", fmt::format("{} bytes in 6 files", s.file_bytes));
  } else if (s.blast) {
    row("database", fmt::format("{} (BLAST+ protein database, format version {}, {} volume{})", s.path,
                                s.format_version, s.volumes, s.volumes == 1 ? "" : "s"));
    row("title", s.title);
    row("date", s.date);
    row("size", fmt::format("{} bytes in {} files", s.file_bytes, s.files));
  } else {
    row("file", fmt::format("{} (sequence file, {} bytes of text)", s.path, s.file_bytes));
  }
  row("alphabet", std::string(to_string(s.alphabet)));
  row("sequences", std::to_string(s.sequences));
  row("residues", std::to_string(s.residues));
  row("lengths",
      fmt::format("min {}, max {}, mean {:.1f}, N50 {}", s.min_length, s.max_length, s.mean_length, s.n50));
  row("unknown", fmt::format("{} letters stored as {}", s.unknown_letters,
                             s.alphabet == AlphabetKind::kProtein ? "X" : "N"));
  row("soft-masked", fmt::format("{} residues in {} runs", s.masked_residues, s.mask_runs));
  if (verified) {
    row("verified", s.packed  ? "OK (CRC32 of every file, every residue code)"
                    : s.blast ? "OK (every offset, residue code and defline)"
                              : "OK (read completely)");
  }
  if (!s.histogram.empty()) {
    std::uint64_t most = 0;
    for (const LengthBucket& b : s.histogram) most = std::max(most, b.sequences);
    out += fmt::format("\nlength histogram\n{:>21} {:>12} {:>14}\n", "length", "sequences", "residues");
    for (const LengthBucket& b : s.histogram) {
      const auto bar = static_cast<std::size_t>((40 * b.sequences + most - 1) / most);
      out += fmt::format("{:>21} {:>12} {:>14}", length_range(b.lo, b.hi), b.sequences, b.residues);
      out += bar > 0 ? "  " + std::string(bar, '#') + "\n" : "\n";
    }
  }
  if (!s.partitions.empty()) {
    out +=
        fmt::format("\npartitions (ranges of the length-sorted order)\n{:>3} {:>17} {:>12} {:>14} {:>17}\n",
                    "#", "length class", "sequences", "residues", "actual lengths");
    for (std::size_t i = 0; i < s.partitions.size(); ++i) {
      const DbPartition& p = s.partitions[i];
      out += fmt::format("{:>3} {:>17} {:>12} {:>14} {:>17}\n", i, length_range(p.length_lo, p.length_hi),
                         p.size(), p.residues, length_range(p.min_length, p.max_length));
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace

void register_dbinfo(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string path;
    std::string alphabet;
    bool verify = false;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "dbinfo", "Show statistics of a packed database, a BLAST+ protein database or a FASTA/FASTQ file");
  cmd->add_option("db", opts->path,
                  "Packed database (PREFIX or PREFIX.wsdb), BLAST+ protein database name (as for blastp -db) "
                  "or FASTA/FASTQ file (plain or gzip)")
      ->required();
  cmd->add_flag(
      "--verify", opts->verify,
      "Also check every packed database file's CRC32 and every residue code, or every offset, residue "
      "and defline of a BLAST+ database (a sequence file is always read completely)");
  cmd->add_flag("--json", opts->json, "Print JSON instead of a table");
  cmd->add_option("--alphabet", opts->alphabet, "protein, dna or rna for a sequence file (default: guessed)");
  cmd->footer(
      "Examples:\n"
      "  warpsearch dbinfo sprot\n"
      "  warpsearch dbinfo sprot --verify      # exit status 4 if any file is corrupt\n"
      "  warpsearch dbinfo reads.fa.gz --json\n"
      "  warpsearch dbinfo swissprot           # a BLAST+ database (makeblastdb -dbtype prot)");
  cmd->callback([opts, &global] {
    ReaderOptions reader_options;
    reader_options.alphabet = alphabet_option(opts->alphabet);
    reader_options.allow_empty_sequences = true;
    SequenceSource source = SequenceSource::open(opts->path, reader_options);
    if (opts->verify && source.is_packed()) source.packed_db()->verify();
    if (opts->verify && source.blast_db() != nullptr) source.blast_db()->verify();
    const DbSummary summary = summarize(source, !global.quiet);
    if (opts->json) {
      print_json(summary, opts->verify);
    } else {
      print_table(summary, opts->verify);
    }
    std::fflush(stdout);
  });
}

}  // namespace warpsearch::cli
