// bench_io.cpp: sequence-input benchmarks: the FASTA reader (plain and gzip) and the I/O peers it is
// compared with (Easel's esl-seqstat, `wc -l`, `gzip -dc`).
//
// Work for all of them: bytes = size of the --input file (the uncompressed FASTA for the gzip entries,
// which compress it themselves in the gzip-input setup); residues and records where the tool reports them.
#include <zlib.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <string>

#include "registry.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::bench {
namespace {

// Product of the gzip-input setup, in Context::tmp.
constexpr const char* kGzipCopy = "input.fa.gz";

std::string gzip_copy(const Context& ctx) { return ctx.tmp + "/" + kGzipCopy; }

bool is_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 2> magic{};
  in.read(magic.data(), magic.size());
  return in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
         static_cast<unsigned char>(magic[1]) == 0x8b;
}

// Writes gzip_copy(ctx): the input compressed at gzip's default level, like a typical .fa.gz.
void gzip_input(const Context& ctx) {
  if (is_gzip(ctx.input)) {
    throw Error(ErrorKind::kInput, "already gzip-compressed; the gzip entries need the plain FASTA",
                ctx.input);
  }
  std::ifstream in(ctx.input, std::ios::binary);
  if (!in) throw_system_error("cannot open", ctx.input);
  const std::string out_path = gzip_copy(ctx);
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> out(gzopen(out_path.c_str(), "wb6"), gzclose);
  if (!out) throw_system_error("cannot create", out_path);
  std::string buffer(1 << 20, '\0');
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    const auto n = static_cast<unsigned>(in.gcount());
    if (gzwrite(out.get(), buffer.data(), n) != static_cast<int>(n)) {
      throw Error(ErrorKind::kIo, "gzip write failed", out_path);
    }
  }
  if (in.bad()) throw_system_error("read error", ctx.input);
}

const Setup kGzipInput{"gzip-input", gzip_input};

// Every record of path (plain or gzip) through SequenceReader with default options, one Sequence reused.
Work read_fasta(const std::string& path, std::uint64_t bytes) {
  SequenceReader reader(path);
  Sequence seq;
  while (reader.next(seq)) {
  }
  Work work;
  work.bytes = bytes;
  work.residues = reader.residues();
  work.records = reader.records();
  return work;
}

std::uint64_t parse_count(const std::string& out, const std::string& field) {
  std::smatch match;
  if (!std::regex_search(out, match, std::regex(field + R"(\s*(\d+))"))) {
    throw Error(ErrorKind::kFormat, "no '" + field + "' in esl-seqstat output");
  }
  return std::stoull(match[1].str());
}

Work seqstat_work(const Context& ctx, const std::string& out) {
  Work work;
  work.bytes = ctx.input_bytes;
  work.residues = parse_count(out, "Total # residues:");
  work.records = parse_count(out, "Number of sequences:");
  return work;
}

Work input_bytes(const Context& ctx, const std::string& /*out*/) {
  Work work;
  work.bytes = ctx.input_bytes;
  return work;
}

const Registration kReadFasta{{
    .name = "read-fasta",
    .description = "SequenceReader over the whole input: parse and digitize every record",
    .headline = Headline::kBytes,
    .body = InternalRun{[](const Context& ctx) { return read_fasta(ctx.input, ctx.input_bytes); }},
}};

const Registration kReadFastaGz{{
    .name = "read-fasta-gz",
    .description = "SequenceReader over a gzip copy of the input (made in setup, untimed)",
    .headline = Headline::kBytes,
    .setup = kGzipInput,
    .body = InternalRun{[](const Context& ctx) { return read_fasta(gzip_copy(ctx), ctx.input_bytes); }},
}};

const Registration kPeerSeqstat{{
    .name = "peer:esl-seqstat",
    .description = "Easel esl-seqstat: reads and digitizes every record, prints totals",
    .headline = Headline::kBytes,
    .body = ExternalRun{.argv = {"esl-seqstat", "{input}"}, .capture_stdout = true, .work = seqstat_work},
}};

const Registration kPeerWc{{
    .name = "peer:wc",
    .description = "wc -l: read every byte and count lines, the I/O floor (wc -c only stats the file)",
    .headline = Headline::kBytes,
    .body = ExternalRun{.argv = {"wc", "-l", "{input}"}, .work = input_bytes},
}};

const Registration kPeerZcat{{
    .name = "peer:zcat",
    .description = "gzip -dc of the gzip copy to /dev/null: the decompression floor for read-fasta-gz",
    .headline = Headline::kBytes,
    .setup = kGzipInput,
    .body = ExternalRun{.argv = {"gzip", "-dc", std::string("{tmp}/") + kGzipCopy}, .work = input_bytes},
}};

}  // namespace
}  // namespace warpsearch::bench
