// fuzz_seqio.cpp: libFuzzer target for SequenceReader (FASTA/FASTQ, plain or gzip).
//
// The input is the file content. It is written to a memory file (memfd) and read through its
// /proc/self/fd path, so the reader runs exactly as on a real file. Each input is read with three
// option sets; warpsearch::Error is the only acceptable failure. Every record must satisfy the
// Sequence invariants, and reading through a 3-byte buffer must give the same records, counters and
// error message as a 4 KiB one (see same() for damaged gzip). Anything else aborts: a crash, a sanitizer
// report, another exception type, or a broken invariant.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace {

using namespace warpsearch;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_seqio: %s\n", what);
  std::abort();
}

// What one read of the input produced.
struct Outcome {
  std::vector<Sequence> records;
  std::uint64_t residues = 0, unknown = 0, bytes = 0, line = 0;
  std::string error;
};

void check_record(const Sequence& seq, const SequenceReader& reader, const ReaderOptions& options) {
  if (seq.name.empty()) fail("empty name");
  if (seq.residues.empty() && !options.allow_empty_sequences) fail("empty sequence returned");
  for (const std::uint8_t code : seq.residues) {
    if (code >= reader.alphabet().size()) fail("residue code out of range");
  }
  std::uint64_t previous_end = 0;
  for (std::size_t r = 0; r < seq.soft_mask.size(); ++r) {
    const MaskRun& run = seq.soft_mask[r];
    if (run.begin >= run.end || run.end > seq.length()) fail("mask run out of range");
    if (r > 0 && run.begin <= previous_end) fail("mask runs overlap or touch");
    previous_end = run.end;
  }
  if (reader.format() == SeqFormat::kFastq && seq.quality.size() != seq.length()) fail("quality length");
  if (reader.format() == SeqFormat::kFasta && !seq.quality.empty()) fail("quality in FASTA");
  if (to_letters(seq, reader.alphabet()).size() != seq.length()) fail("to_letters length");
}

Outcome read_input(const std::string& path, const ReaderOptions& options) {
  Outcome out;
  try {
    SequenceReader reader(path, options);
    Sequence seq;
    while (reader.next(seq)) {
      check_record(seq, reader, options);
      out.records.push_back(seq);
    }
    if (reader.records() != out.records.size()) fail("records() count");
    out.residues = reader.residues();
    out.unknown = reader.unknown_letters();
    out.bytes = reader.bytes_read();
    out.line = reader.line();
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

// Whether two reads of one input agree. A damaged gzip stream is only noticed when the inflater gets
// there, and how far it runs ahead of the parser depends on the buffer, so a gzip error may stand in for
// a parse error further on (or the other way round): then both reads need only end in an error.
bool same(const Outcome& a, const Outcome& b) {
  const auto gzip_error = [](const std::string& e) { return e.find("gzip stream") != std::string::npos; };
  if (gzip_error(a.error) || gzip_error(b.error)) return !a.error.empty() && !b.error.empty();
  if (a.error != b.error || a.residues != b.residues || a.unknown != b.unknown || a.bytes != b.bytes ||
      a.line != b.line || a.records.size() != b.records.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    const Sequence& x = a.records[i];
    const Sequence& y = b.records[i];
    if (x.name != y.name || x.description != y.description || x.residues != y.residues ||
        x.soft_mask != y.soft_mask || x.quality != y.quality || x.line != y.line) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("fuzz_seqio", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) fail("memfd_create");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) fail("memfd write");

  // A 4 KiB buffer instead of the default 1 MiB holds libFuzzer's usual inputs (-max_len 4096) whole,
  // as the default buffer would, without allocating 1 MiB per read.
  ReaderOptions option_sets[3];
  for (ReaderOptions& options : option_sets) options.buffer_bytes = 1 << 12;
  option_sets[1].strict_letters = true;
  option_sets[1].allow_empty_sequences = true;
  option_sets[2].alphabet = AlphabetKind::kDna;
  option_sets[2].format = SeqFormat::kFastq;
  for (const ReaderOptions& options : option_sets) {
    const Outcome normal = read_input(path, options);
    ReaderOptions tiny = options;
    tiny.buffer_bytes = 3;
    if (!same(normal, read_input(path, tiny))) fail("result depends on the buffer size");
  }
  return 0;
}
