// fuzz_hmmfile.cpp: libFuzzer target for the inputs of `warpsearch hmmsearch`: the HMMER3 model reader
// (HmmReader, src/hmm/hmmfile.hpp) and the target database reader with Easel's rules (search_internal.hpp).
//
// The input is the file content. It is written to a memory file (memfd) and read through its
// /proc/self/fd path, so the readers run exactly as on a real file (plain or gzip). warpsearch::Error is
// the only acceptable failure. Every model read must satisfy the Hmm layout invariants (node vectors of
// M+1 entries, K emissions, annotation strings of M+2 characters or empty, the flags matching the
// fields). The same bytes are also read as a target database in the amino and DNA alphabets: streamed
// from the file and parsed from memory, which must give the same records or the same error (the input
// is plain text then; a gzip input is only streamed). Anything else aborts: a crash, a sanitizer report,
// another exception type, or a broken invariant.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "hmm/abc.hpp"
#include "hmm/hmm.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/search_internal.hpp"
#include "warpsearch/error.hpp"

namespace {

using namespace warpsearch;
using namespace warpsearch::hmm;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_hmmfile: %s\n", what);
  std::abort();
}

void check_annotation(const std::string& s, int M, bool flagged, const char* what) {
  if (s.empty()) return;
  if (!flagged) fail(what);
  if (s.size() != static_cast<std::size_t>(M) + 2 && s.size() != static_cast<std::size_t>(M) + 1) fail(what);
}

void check_model(const Hmm& hmm, const Abc* first_abc) {
  if (hmm.M < 1) fail("M < 1");
  if (hmm.abc == nullptr) fail("no alphabet");
  if (first_abc != nullptr && hmm.abc != first_abc) fail("alphabet changed within a file");
  if (hmm.name.empty()) fail("empty name");
  const auto nodes = static_cast<std::size_t>(hmm.M) + 1;
  if (hmm.t.size() != nodes || hmm.mat.size() != nodes || hmm.ins.size() != nodes) fail("node count");
  const auto K = static_cast<std::size_t>(hmm.abc->K);
  for (std::size_t k = 0; k < nodes; ++k) {
    if (hmm.mat[k].size() < K || hmm.ins[k].size() < K) fail("emission vector size");
  }
  check_annotation(hmm.rf, hmm.M, hmm.has(kHmmRF), "RF annotation");
  check_annotation(hmm.mm, hmm.M, hmm.has(kHmmMMask), "MM annotation");
  check_annotation(hmm.consensus, hmm.M, hmm.has(kHmmCons), "consensus annotation");
  check_annotation(hmm.cs, hmm.M, hmm.has(kHmmCS), "CS annotation");
  check_annotation(hmm.ca, hmm.M, hmm.has(kHmmCA), "CA annotation");
  if (!hmm.map.empty() && (!hmm.has(kHmmMap) || hmm.map.size() != nodes)) fail("MAP annotation");
  if (hmm.has(kHmmAcc) == hmm.acc.empty()) fail("accession flag");
}

void read_models(const std::string& path) {
  try {
    HmmReader reader(path);
    const Abc* first = nullptr;
    while (std::optional<Hmm> hmm = reader.next()) {
      check_model(*hmm, first);
      first = hmm->abc;
      if (reader.alphabet() != first) fail("reader alphabet");
    }
  } catch (const Error&) {
  }
}

// The records of a database read, or its error message.
std::string describe(const TargetDb& db) {
  std::string out;
  for (const TargetSeq& s : db.seqs) {
    if (s.dsq.size() != static_cast<std::size_t>(s.L) + 2) fail("dsq size");
    if (s.dsq.front() != kDsqSentinel || s.dsq.back() != kDsqSentinel) fail("dsq sentinels");
    if (s.name.empty()) fail("empty target name");
    out += s.name + '\n' + s.desc + '\n' + std::to_string(s.line) + '\n';
    out.append(s.dsq.begin(), s.dsq.end());
    out += '\n';
  }
  return out + std::to_string(db.nres);
}

void read_targets(const std::string& path, std::string_view bytes, AbcType type) {
  std::string streamed, parsed;
  try {
    // 3 threads and 64-byte blocks: many FASTA blocks and pieces, each parsed from its own line.
    streamed = describe(read_target_db(path, abc(type), 3, 64));
  } catch (const Error& e) {
    streamed = std::string("error: ") + e.what();
  }
  const bool gzip = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
                    static_cast<unsigned char>(bytes[1]) == 0x8b;
  if (gzip) return;
  try {
    parsed = describe(parse_target_db(bytes, abc(type), path));
  } catch (const Error& e) {
    parsed = std::string("error: ") + e.what();
  }
  if (streamed != parsed) fail("streamed and in-memory target databases differ");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("fuzz_hmmfile", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) fail("memfd_create");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) fail("memfd write");
  read_models(path);
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  read_targets(path, bytes, AbcType::kAmino);
  read_targets(path, bytes, AbcType::kDNA);
  return 0;
}
