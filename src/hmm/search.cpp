// search.cpp: the hmmsearch driver behind include/warpsearch/hmmsearch.hpp (HMMER 3.3.2 hmmsearch.c).
//
// Contents:
//   1. The target database (search_internal.hpp): a plain or gzip file (or stdin) read in blocks, FASTA
//      blocks cut into pieces at record starts and digitized in parallel with Easel's FASTA rules (FASTQ
//      lines digitized serially), or a packed database converted code by code through its letters; read
//      once into memory.
//   2. Per-model search: profile configuration, a pool of per-worker pipeline states, the sequences cut
//      into fixed chunks run on the ThreadPool (longest chunks first), chunk results merged in chunk order.
//      2b. The same with the MSV and Viterbi filters on filter engines (GPUs, Options::gpus; tests: CPU
//      engines through search_with_engines): the staged pipeline (Pipeline::front / back) around them.
//   3. The public entry point hmmsearch::search(): models streamed from the HMM file, outputs written in
//      hmmsearch's order (main report per model, tabular files, tails). Under MPI (docs/MPI.md) each rank
//      searches its shard of the database and rank 0 merges each model's hits and counters (dist/).
//
// Determinism: chunk boundaries depend only on the number of sequences; every sequence is processed by
// a pipeline whose random number generator is reseeded before each sequence's stochastic traceback
// (HMMER's do_reseeding), and its hits carry their database index; so the merged, sorted hit list and
// all counts are identical for any thread count (and identical to HMMER's, whose own merge order is
// arbitrary but whose sort order only depends on the hits). The same holds for any number of MPI ranks:
// a target's pipeline uses its database index (the running Z of the in-pipeline reporting test), never its
// rank, and rank 0 applies Z/domZ and the thresholds to the merged list of the whole database. On filter
// engines the same holds: their scores are those of the CPU filters bit for bit, and the staged pipeline
// is the per-target pipeline split in two (section 2b).
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dist/hmm_wire.hpp"
#include "dist/shard.hpp"
#include "hmm/bg.hpp"
#include "hmm/filter_engine.hpp"
#include "hmm/fwd_pair.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/output.hpp"
#include "hmm/pipeline.hpp"
#include "hmm/profile.hpp"
#include "hmm/reporting.hpp"
#include "hmm/search_internal.hpp"
#include "hmm/tophits.hpp"
#include "hmm/tracealign.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/hmmsearch.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::hmm {
namespace {

// A byte as it appears in messages: 'c' when printable, '\xHH' otherwise.
std::string quote_char(unsigned char c) {
  if (c >= 0x20 && c < 0x7F) return std::string{'\'', static_cast<char>(c), '\''};
  return fmt::format("'\\x{:02X}'", static_cast<unsigned>(c));
}

bool is_c_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The lines of a text: next() gives each line without its '\n' (a last line without '\n' too); the
// view stays valid until the next call.
class LineInput {
 public:
  virtual ~LineInput() = default;
  virtual bool next(std::string_view& line) = 0;
};

class TextLines final : public LineInput {
 public:
  explicit TextLines(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) override {
    if (pos_ >= text_.size()) return false;
    std::size_t eol = text_.find('\n', pos_);
    if (eol == std::string_view::npos) eol = text_.size();
    line = text_.substr(pos_, eol - pos_);
    pos_ = eol + 1;
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Text of a TargetDb being built; the record parser below fills it line by line. first_line: the number
// of lines of the file before the input (a piece of a FASTA block starts at a record start, where the
// rules for the start of a file are no-ops: no leading whitespace, the marker is '>').
class RecordParser {
 public:
  RecordParser(LineInput& in, const Abc& a, const std::string& path, uint64_t first_line = 0)
      : in_(in), abc_(a), inmap_(fasta_inmap(a)), path_(path), lineno_(first_line) {}

  TargetDb parse() {
    db_.path = path_;
    // Whitespace before the first record (Easel's header_fasta skips isspace()).
    std::size_t first = 0;
    for (;;) {
      if (!advance()) throw Error(ErrorKind::kFormat, "sequence file is empty (no FASTA record)", path_);
      first = 0;
      while (first < line_.size() && is_c_space(line_[first])) ++first;
      if (first < line_.size()) break;
    }
    marker_ = line_[first];
    if (marker_ != '>' && marker_ != '@') {
      fail(fmt::format("unexpected character {}; expected a FASTA file, starting with '>' (or FASTQ, '@')",
                       quote_char(static_cast<unsigned char>(marker_))),
           lineno_);
    }
    bool have = true;
    while (have) {
      TargetSeq seq;
      seq.line = lineno_;
      header(line_.substr(first + 1), seq);
      seq.dsq.push_back(kDsqSentinel);
      have = marker_ == '>' ? fasta_body(seq) : fastq_body(seq);
      first = 0;
      seq.L = static_cast<int64_t>(seq.dsq.size()) - 1;
      seq.dsq.push_back(kDsqSentinel);
      seq.dsq.shrink_to_fit();
      db_.nres += static_cast<uint64_t>(seq.L);
      db_.seqs.push_back(std::move(seq));
    }
    return std::move(db_);
  }

 private:
  bool advance() {
    if (!in_.next(line_)) return false;
    ++lineno_;
    return true;
  }

  [[noreturn]] void fail(const std::string& msg, uint64_t line) const {
    throw Error(ErrorKind::kFormat, msg, path_, line);
  }

  // h: the header line after its marker.
  void header(std::string_view h, TargetSeq& seq) const {
    std::size_t pos = 0;
    const std::size_t n = h.size();
    while (pos < n && (h[pos] == ' ' || h[pos] == '\t')) ++pos;
    const std::size_t name_begin = pos;
    while (pos < n && !is_c_space(h[pos])) ++pos;
    if (pos == name_begin) {
      fail(marker_ == '>' ? "no FASTA name found after '>'" : "no FASTQ name found after '@'", lineno_);
    }
    seq.name.assign(h.substr(name_begin, pos - name_begin));
    while (pos < n && (h[pos] == ' ' || h[pos] == '\t')) ++pos;
    const std::size_t desc_begin = pos;
    while (pos < n && h[pos] != '\r' && h[pos] != '\x01') ++pos;
    seq.desc.assign(h.substr(desc_begin, pos - desc_begin));
  }

  // Digitizes one sequence line into seq.dsq.
  void residues(std::string_view chunk, TargetSeq& seq) const {
    for (const char ch : chunk) {
      const auto c = static_cast<unsigned char>(ch);
      const uint8_t x = inmap_[c];
      if (x == kDsqIgnored) continue;
      if (x == kDsqIllegal) {
        std::string msg =
            fmt::format("illegal character {} in sequence '{}' for the {} alphabet of the model",
                        quote_char(c), seq.name, abc_type_name(abc_.type));
        if (std::isalpha(c) != 0 && abc_.type != AbcType::kAmino) {
          msg +=
              " (hmmsearch reads the database in the query model's alphabet: a protein database cannot be "
              "searched with a nucleotide model)";
        }
        fail(msg, lineno_);
      }
      seq.dsq.push_back(x);
    }
  }

  // Sequence lines up to the next line starting with '>'. Returns whether such a line was found.
  bool fasta_body(TargetSeq& seq) {
    while (advance()) {
      if (!line_.empty() && line_[0] == '>') return true;
      residues(line_, seq);
    }
    return false;
  }

  // Sequence lines up to the '+' line, then as many quality characters as residues, then blank lines up
  // to the next '@' header. Returns whether a next header was found.
  bool fastq_body(TargetSeq& seq) {
    const uint64_t header_line = lineno_;
    std::string header_text(line_.substr(1));
    if (!header_text.empty() && header_text.back() == '\r') header_text.pop_back();
    for (;;) {
      if (!advance()) fail(fmt::format("missing '+' line in FASTQ record '{}'", seq.name), header_line);
      if (!line_.empty() && line_[0] == '+') break;
      residues(line_, seq);
    }
    std::string_view plus = line_.substr(1);
    if (!plus.empty() && plus.back() == '\r') plus.remove_suffix(1);
    if (!plus.empty() && plus != seq.name && plus != header_text) {
      fail(fmt::format("'+' line does not repeat the name of FASTQ record '{}'", seq.name), lineno_);
    }
    const std::size_t length = seq.dsq.size() - 1;
    std::size_t quality = 0;
    while (quality < length) {
      if (!advance()) {
        fail(fmt::format(
                 "quality length {} differs from sequence length {} in FASTQ record '{}' (end of file)",
                 quality, length, seq.name),
             lineno_);
      }
      for (const char ch : line_) {
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f') continue;
        if (ch < '!' || ch > '~') {
          fail(fmt::format("invalid quality character {} in FASTQ record '{}'",
                           quote_char(static_cast<unsigned char>(ch)), seq.name),
               lineno_);
        }
        ++quality;
      }
      if (quality > length) {
        fail(fmt::format("quality length {} differs from sequence length {} in FASTQ record '{}'", quality,
                         length, seq.name),
             lineno_);
      }
    }
    while (advance()) {
      std::size_t i = 0;
      while (i < line_.size() && is_c_space(line_[i])) ++i;
      if (i == line_.size()) continue;  // blank line
      if (line_[0] != '@') {
        fail(fmt::format("expected a '@' header line (start of a FASTQ record), found {}",
                         quote_char(static_cast<unsigned char>(line_[0]))),
             lineno_);
      }
      return true;
    }
    return false;
  }

  LineInput& in_;
  const Abc& abc_;
  const std::array<uint8_t, 256>& inmap_;
  const std::string& path_;
  TargetDb db_;
  std::string_view line_;
  uint64_t lineno_;
  char marker_ = '>';
};

// Digitizes a block of FASTA text made of whole lines, whose records start at rec0 (0, or after the
// leading whitespace of the file) and end within the block, and appends them to db. line0: the number
// of lines of the file before the block. The block is split into pieces at record starts (about four
// per thread); each piece's newlines are counted in parallel, their prefix sums give each piece's first
// line, then the pieces are parsed in parallel and appended in order. The error of the first failing
// piece is thrown (a serial parse stops at it; later pieces' errors are never reached). Returns the
// number of newlines in the block.
uint64_t parse_fasta_block(std::string_view text, std::size_t rec0, uint64_t line0, const Abc& a,
                           const std::string& path, ThreadPool& pool, TargetDb& db) {
  // starts[k]: piece k's first byte; piece 0 starts at 0 (with any leading whitespace), each later piece
  // at a '>' that starts a line after rec0.
  std::vector<std::size_t> starts{0};
  const std::size_t want = pool.size() == 1 ? 1 : std::size_t{4} * pool.size();
  for (std::size_t k = 1; k < want; ++k) {
    const std::size_t pos = std::max({rec0 + (text.size() - rec0) * k / want, starts.back() + 1, rec0 + 1});
    if (pos >= text.size()) break;
    const std::size_t nl = text.find("\n>", pos - 1);
    if (nl == std::string_view::npos) break;
    starts.push_back(nl + 1);  // >= pos
  }
  const std::size_t n = starts.size();
  starts.push_back(text.size());
  auto piece = [&](std::size_t k) { return text.substr(starts[k], starts[k + 1] - starts[k]); };

  std::vector<uint64_t> first(n + 1, 0);  // newlines of piece k, then lines before it
  pool.parallel_for(n, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      const std::string_view p = piece(k);
      first[k + 1] = static_cast<uint64_t>(std::count(p.begin(), p.end(), '\n'));
    }
  });
  first[0] = line0;
  for (std::size_t k = 1; k <= n; ++k) first[k] += first[k - 1];

  std::vector<TargetDb> parsed(n);
  std::vector<std::exception_ptr> errors(n);
  pool.parallel_for(n, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      try {
        TextLines lines(piece(k));
        parsed[k] = RecordParser(lines, a, path, first[k]).parse();
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  });
  for (std::size_t k = 0; k < n; ++k) {
    if (errors[k]) std::rethrow_exception(errors[k]);
  }
  for (TargetDb& p : parsed) {
    db.nres += p.nres;
    db.seqs.insert(db.seqs.end(), std::make_move_iterator(p.seqs.begin()),
                   std::make_move_iterator(p.seqs.end()));
  }
  return first[n] - line0;
}

// Bytes whose resize() leaves new bytes uninitialized: a block buffer is only touched (and its pages
// only mapped) where data is read into it.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Bytes = std::vector<char, UninitializedAllocator<char>>;

}  // namespace

// A plain or gzip file (zlib reads plain files transparently) or stdin, read into a buffer of one block
// (grown while a line or, for FASTA blocks, a record is longer than it): as FASTA blocks (read(); one
// block is parsed while the next one is read: two blocks in memory) or cut into lines (next(), the
// serial parser).
struct TargetDbFile::Stream final : public LineInput {
  gzFile gz = nullptr;
  std::string path;
  Bytes buf;                       // sized by read()
  std::size_t begin = 0, end = 0;  // unread bytes: buf[begin, end)
  bool eof = false;

  ~Stream() override {
    if (gz != nullptr) gzclose(gz);
  }

  bool next(std::string_view& line) override {
    for (;;) {
      if (const void* nl = std::memchr(buf.data() + begin, '\n', end - begin)) {
        const auto eol = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data());
        line = std::string_view(buf.data() + begin, eol - begin);
        begin = eol + 1;
        return true;
      }
      if (eof) {
        if (begin == end) return false;
        line = std::string_view(buf.data() + begin, end - begin);
        begin = end;
        return true;
      }
      fill();
    }
  }

  // Moves the unread bytes to the front (growing the buffer when a line fills it) and reads more.
  void fill() {
    if (begin > 0) {
      std::memmove(buf.data(), buf.data() + begin, end - begin);
      end -= begin;
      begin = 0;
    }
    if (end == buf.size()) buf.resize(buf.size() * 2);
    const unsigned want = static_cast<unsigned>(std::min<std::size_t>(buf.size() - end, 1u << 30));
    const int n = gzread(gz, buf.data() + end, want);
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(gz, &errnum);
      if (errnum == Z_ERRNO) throw_system_error("cannot read sequence file", path);
      throw Error(ErrorKind::kFormat, "cannot read sequence file: " + std::string(msg), path);
    }
    end += static_cast<std::size_t>(n);
    if (n == 0) finish();
  }

  // The whole input. The first byte that is not whitespace decides: '>' is read as FASTA blocks parsed
  // on the pool; anything else ('@' for FASTQ, whose quality lines may start with '@'; a misformatted
  // or empty file) by the serial parser, from the same buffered bytes.
  TargetDb read(const Abc& a, ThreadPool& pool, std::size_t block) {
    block = std::max<std::size_t>(block, 1);
    buf.resize(block);     // nothing read yet
    std::size_t rec0 = 0;  // the first record's start in buf[begin, end)
    for (;;) {
      while (begin + rec0 < end && is_c_space(buf[begin + rec0])) ++rec0;
      if (begin + rec0 < end || eof) break;
      fill();  // a read error here is the serial parser's too: it has seen only whitespace
    }
    if (begin + rec0 == end || buf[begin + rec0] != '>') return RecordParser(*this, a, path).parse();

    TargetDb db;
    db.path = path;
    uint64_t line0 = 0;  // lines before the block
    // Block k is moved to `parsing` (the rest stays in buf) and parsed on the pool while one pool task
    // reads block k + 1 into buf; the reader touches only buf, begin, end, eof, cut and read_error, which
    // this thread reads again only after the task is done. A read error ends the input after its last
    // whole line, as for the serial parser (whose next() gives only whole lines before it calls fill()):
    // the records read up to there are parsed, and their format error, if any, is reported instead.
    Bytes parsing;
    std::size_t cut = 0;  // length of the block in buf[begin, end)
    std::exception_ptr read_error;
    auto read_block = [this, block, &cut, &read_error](std::size_t first_record) {
      try {
        cut = next_block(block, first_record);
      } catch (...) {
        read_error = std::current_exception();
        const std::size_t nl = std::string_view(buf.data() + begin, end - begin).rfind('\n');
        cut = nl == std::string_view::npos || nl < first_record ? 0 : nl + 1;
      }
    };
    std::future<void> reading;
    struct Join {  // an exception must not leave the reader running on this Stream
      std::future<void>& f;
      ~Join() {
        if (f.valid()) f.wait();
      }
    } join{reading};
    read_block(rec0);
    for (;;) {
      const std::size_t rest = end - begin - cut;
      std::swap(buf, parsing);
      buf.resize(std::max({buf.size(), block, rest}));
      if (rest > 0) std::memcpy(buf.data(), parsing.data() + begin + cut, rest);
      const std::string_view text(parsing.data() + begin, cut);
      begin = 0;
      end = rest;
      const std::exception_ptr error = read_error;
      const bool last = error || (eof && rest == 0);
      if (!last) reading = pool.submit([&read_block] { read_block(0); });  // later blocks start with '>'
      if (!text.empty()) line0 += parse_fasta_block(text, rec0, line0, a, path, pool, db);
      if (error) std::rethrow_exception(error);
      if (last) return db;
      reading.get();
      rec0 = 0;
    }
  }

  // Reads up to a block (or to the end of the input) and returns the length of the next FASTA block:
  // buf[begin, begin + cut) ends just before the last record start after rec0 (a '>' at the start of a
  // line), or at the end of the input; a record longer than the buffer makes it grow.
  std::size_t next_block(std::size_t block, std::size_t rec0) {
    if (buf.size() > block && end - begin <= block) {  // shrink a buffer grown for a long record
      std::memmove(buf.data(), buf.data() + begin, end - begin);
      end -= begin;
      begin = 0;
      buf.resize(block);
      buf.shrink_to_fit();
    }
    while (!eof && end - begin < block) fill();
    for (;;) {
      const std::string_view text(buf.data() + begin, end - begin);
      if (eof) return text.size();
      const std::size_t nl = text.rfind("\n>");
      if (nl != std::string_view::npos && nl + 1 > rec0) return nl + 1;
      fill();
    }
  }

  // End of input: a damaged or truncated gzip stream is an error.
  void finish() {
    eof = true;
    int errnum = 0;
    const char* msg = gzerror(gz, &errnum);
    if (errnum != Z_OK && errnum != Z_BUF_ERROR) {
      throw Error(ErrorKind::kFormat, "cannot read sequence file: " + std::string(msg), path);
    }
    const int rc = gzclose(gz);  // a truncated gzip stream shows as Z_BUF_ERROR at close
    gz = nullptr;
    if (rc == Z_BUF_ERROR)
      throw Error(ErrorKind::kFormat, "truncated gzip stream (unexpected end of file)", path);
  }
};

// ---------------------------------------------------------------------------------------------------
// 1. The target database
// ---------------------------------------------------------------------------------------------------

TargetDb parse_target_db(std::string_view text, const Abc& a, const std::string& path) {
  TextLines lines(text);
  return RecordParser(lines, a, path).parse();
}

TargetDb target_db_from_packed(const PackedDb& pdb, const Abc& a, uint64_t begin, uint64_t end) {
  // Database code -> its letter -> the model alphabet's Easel code (or kDsqIllegal / kDsqIgnored).
  const Alphabet& have = pdb.alphabet();
  const std::array<uint8_t, 256>& inmap = fasta_inmap(a);
  std::array<uint8_t, 256> code_map{};
  code_map.fill(kDsqIllegal);
  std::array<char, 256> letter{};
  for (int c = 0; c < have.size(); ++c) {
    letter[static_cast<std::size_t>(c)] = have.symbol(static_cast<uint8_t>(c));
    code_map[static_cast<std::size_t>(c)] =
        inmap[static_cast<unsigned char>(letter[static_cast<std::size_t>(c)])];
  }
  const std::string path = pdb.prefix() + ".wsdb";
  TargetDb db;
  db.path = pdb.prefix();
  db.seqs.resize(pdb.size());
  db.nres = pdb.total_residues();
  for (uint64_t i = begin; i < std::min<uint64_t>(end, pdb.size()); ++i) {
    TargetSeq& seq = db.seqs[i];
    seq.name.assign(pdb.name(i));
    seq.desc.assign(pdb.description(i));
    const std::span<const uint8_t> r = pdb.residues(i);
    seq.dsq.resize(r.size() + 2);
    seq.dsq[0] = kDsqSentinel;
    for (std::size_t k = 0; k < r.size(); ++k) {
      const uint8_t x = code_map[r[k]];
      if (x >= kDsqIgnored) {
        if (r[k] >= have.size()) {
          throw Error(ErrorKind::kFormat,
                      fmt::format("residue code {} of sequence '{}' (#{}) is outside the {} alphabet: the "
                                  "database is damaged (run `warpsearch dbinfo --verify`)",
                                  r[k], seq.name, i + 1, to_string(have.kind())),
                      path);
        }
        throw Error(
            ErrorKind::kFormat,
            fmt::format("residue '{}' at position {} of sequence '{}' (#{}) of this {} database is not "
                        "in the {} alphabet of the model (hmmsearch digitizes the database in the "
                        "query model's alphabet)",
                        letter[r[k]], k + 1, seq.name, i + 1, to_string(have.kind()), abc_type_name(a.type)),
            path);
      }
      seq.dsq[k + 1] = x;
    }
    seq.dsq[r.size() + 1] = kDsqSentinel;
    seq.L = static_cast<int64_t>(r.size());
  }
  return db;
}

TargetDbFile::TargetDbFile(const std::string& path) : path_(path) {
  if (SequenceSource::is_packed_db(path)) {
    packed_ = std::make_unique<PackedDb>(PackedDb::open(path));
    return;
  }
  stream_ = std::make_unique<Stream>();
  stream_->path = path;
  if (path == "-") {
    const int fd = ::dup(0);
    stream_->gz = fd < 0 ? nullptr : gzdopen(fd, "rb");
    if (stream_->gz == nullptr) {
      if (fd >= 0) ::close(fd);
      throw_system_error("cannot open sequence file", "-");
    }
  } else {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw_system_error("cannot open sequence file", path);
    if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::kIo, "cannot open sequence file: is a directory", path);
    stream_->gz = gzopen(path.c_str(), "rb");
    if (stream_->gz == nullptr) throw_system_error("cannot open sequence file", path);
  }
}

TargetDbFile::~TargetDbFile() = default;

TargetDb TargetDbFile::read(const Abc& a, ThreadPool& pool, std::size_t block_bytes) {
  if (packed_) {
    TargetDb db = target_db_from_packed(*packed_, a);
    packed_.reset();  // unmap
    return db;
  }
  if (!stream_) throw Error(ErrorKind::kInternal, "TargetDbFile::read called twice", path_);
  const std::unique_ptr<Stream> stream = std::move(stream_);
  return stream->read(a, pool, block_bytes);
}

TargetDb TargetDbFile::read_part(const Abc& a, ThreadPool& pool, int part, int parts, std::size_t& begin,
                                 std::size_t& end, std::size_t block_bytes) {
  if (packed_) {
    const PackedDb& pdb = *packed_;
    const dist::ShardRange r = dist::shard_range(
        pdb.size(), [&pdb](uint64_t i) { return pdb.length(i); }, part, parts);
    begin = static_cast<std::size_t>(r.begin);
    end = static_cast<std::size_t>(r.end);
    TargetDb db = target_db_from_packed(pdb, a, r.begin, r.end);
    packed_.reset();
    return db;
  }
  TargetDb db = read(a, pool, block_bytes);
  const dist::ShardRange r = dist::shard_range(
      db.seqs.size(), [&db](uint64_t i) { return static_cast<uint64_t>(db.seqs[i].L); }, part, parts);
  begin = static_cast<std::size_t>(r.begin);
  end = static_cast<std::size_t>(r.end);
  for (std::size_t i = 0; i < db.seqs.size(); ++i)
    if (!r.contains(i)) db.seqs[i] = TargetSeq{};  // frees the records other ranks search
  return db;
}

TargetDb read_target_db(const std::string& path, const Abc& a, unsigned threads, std::size_t block_bytes) {
  ThreadPool pool(threads);
  return TargetDbFile(path).read(a, pool, block_bytes);
}

}  // namespace warpsearch::hmm

// ---------------------------------------------------------------------------------------------------
// 2. Per-model search
// ---------------------------------------------------------------------------------------------------

namespace warpsearch::hmm {
namespace {

// Sequences per work chunk. Any value gives the same results (see the top of the file); this one keeps
// the per-chunk overhead small against the MSV filter's cost and balances threads on uneven lengths.
constexpr std::size_t kChunkSeqs = 64;

// Models searched at the same time (search()). Two are enough to keep the threads busy while one model
// finishes its longest targets; each adds its workers' DP matrices to the peak memory.
constexpr std::size_t kModelsInFlight = 2;
// With filter engines (GPUs): four, so that the engines have the next models' filter passes queued while
// the threads run the back stages of earlier ones (H200, 16 cores, 24 models vs 1M targets: 6.0-6.4 s with
// four, 7.4-8.1 s with two; docs/PERFORMANCE.md, 2026-12-02). Each in flight holds its per-target filter
// results (about 30 bytes per target). WARPSEARCH_HMM_GPU_MODELS_IN_FLIGHT=N (1..64) sets it instead (a
// measurement knob; the outputs are the same for any N).
std::size_t engine_models_in_flight() {
  std::size_t n = 4;
  if (const char* env = std::getenv("WARPSEARCH_HMM_GPU_MODELS_IN_FLIGHT")) {
    const unsigned long v = std::strtoul(env, nullptr, 10);
    if (v >= 1 && v <= 64) n = v;
  }
  return n;
}

// What one worker needs for one model: its own pipeline, null model and profile (both are reconfigured
// for each target length).
struct WorkerState {
  WorkerState(const PipelineOptions& popts, const ReportOptions& ropts, const OProfile& om_in,
              const Bg& bg_in)
      : pipeline(popts, ropts), om(om_in), bg(bg_in) {
    pipeline.new_model(om, bg);
  }
  Pipeline pipeline;
  OProfile om;
  Bg bg;
  FwdPairScratch fwd_pair;  // the grouped Forward parser's row (search_model_engines)
  Omx fwd_fallback;         // forward_parser's matrix for its rare fallbacks
};

// Worker states handed out to chunks: a chunk takes a free one (or creates one) and gives it back.
class WorkerStates {
 public:
  WorkerStates(const PipelineOptions& popts, const ReportOptions& ropts, const OProfile& om, const Bg& bg)
      : popts_(popts), ropts_(ropts), om_(om), bg_(bg) {}

  std::unique_ptr<WorkerState> take() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<WorkerState> w = std::move(free_.back());
        free_.pop_back();
        return w;
      }
    }
    return std::make_unique<WorkerState>(popts_, ropts_, om_, bg_);
  }
  void give_back(std::unique_ptr<WorkerState> w) {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(w));
  }
  // All states created; call after the parallel loop.
  const std::vector<std::unique_ptr<WorkerState>>& all() const { return free_; }

 private:
  const PipelineOptions& popts_;
  const ReportOptions& ropts_;
  const OProfile& om_;
  const Bg& bg_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WorkerState>> free_;
};

// Runs targets [begin, end) of the database through one worker's pipeline, hits into hits.
void search_chunk(const TargetDb& db, std::size_t begin, std::size_t end, WorkerStates& states,
                  TopHits& hits) {
  const FlushToZeroScope ftz;  // HMMER's impl_Init() in every worker thread
  std::unique_ptr<WorkerState> w = states.take();
  for (std::size_t s = begin; s < end; ++s) {
    const TargetSeq& t = db.seqs[s];
    const PipelineTarget target{t.name, t.acc, t.desc, static_cast<int64_t>(s)};
    w->pipeline.process(w->om, w->bg, t.dsq, t.L, target, hits);
  }
  states.give_back(std::move(w));
}

struct ModelSearch {
  TopHits hits;
  PipelineCounts counts;
  ReportOptions report;  // final thresholds (Z, domZ set)
};

// Searches targets [first, last) of the database with one model (all of them in a one-process search,
// a rank's shard in a distributed one): p7_ProfileConfig(L=100, local) + p7_oprofile_Convert, the pipeline
// over every target, the chunks' hits appended in database order, the counters merged. finish_model()
// completes the search once every part's hits and counters are in.
ModelSearch search_model(const Hmm& hmm, const TargetDb& db, std::size_t first, std::size_t last,
                         const PipelineOptions& popts, const ReportOptions& ropts, ThreadPool& pool) {
  const Bg bg0 = make_bg(*hmm.abc);
  const Profile gm = config_profile(hmm, bg0, 100, ProfileMode::kLocal);
  const OProfile om = convert_profile(gm);

  // The main pipeline: counts the model and checks its bit cutoffs before any work (Error(kInput)).
  Bg bg_main = bg0;
  Pipeline main(popts, ropts);
  main.new_model(om, bg_main);

  const std::size_t n = last - first;
  const std::size_t nchunks = (n + kChunkSeqs - 1) / kChunkSeqs;
  std::vector<TopHits> chunk_hits(nchunks);
  WorkerStates states(popts, ropts, om, bg0);
  // Chunks are started longest first (by the chunk's longest target: the Forward/Backward and domain
  // stages of one long target can cost more than thousands of short ones), so a long target is not left
  // for last while the other threads idle. Chunk boundaries and the per-chunk hit lists, merged in
  // database order below, do not change: the order of execution changes no result.
  std::vector<int64_t> longest(nchunks, 0);
  for (std::size_t s = 0; s < n; ++s)
    longest[s / kChunkSeqs] = std::max(longest[s / kChunkSeqs], db.seqs[first + s].L);
  std::vector<std::size_t> order(nchunks);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return longest[a] > longest[b]; });
  pool.parallel_for(nchunks, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      const std::size_t chunk = order[c];
      const std::size_t from = first + chunk * kChunkSeqs;
      search_chunk(db, from, std::min(last, from + kChunkSeqs), states, chunk_hits[chunk]);
    }
  });

  ModelSearch result;
  result.counts = main.counts();
  for (const auto& w : states.all()) result.counts.merge(w->pipeline.counts());
  for (TopHits& h : chunk_hits)
    for (std::size_t i = 0; i < h.size(); ++i) result.hits.add(std::move(h.unsorted(i)));
  result.report = main.report();
  return result;
}

// ---------------------------------------------------------------------------------------------------
// 2b. Per-model search on filter engines (GPUs; the CPU engine in tests)
// ---------------------------------------------------------------------------------------------------
//
// The staged pipeline (pipeline.hpp front()/back()) around filter engines (filter_engine.hpp), each engine
// holding a contiguous, residue-balanced share of this process's targets for the whole run:
//   1. every engine computes the MSV filter of its targets (one host thread per engine);
//   2. the fronts (null1, MSV decision, bias filter) run on the pool;
//   3. every engine computes the Viterbi filter of its targets whose front asked for it;
//   4. the backs (Viterbi decision, Forward, Backward, domains, hits) run on the pool, chunks of survivors
//      longest first, their hits merged in database order.
// The engines return msv_filter's / viterbi_filter's scores bit for bit (their contract; --verify checks
// samples), and front() + back() are process() split in two, so the hits and counters are those of
// search_model(). Models in flight share the engines: each engine call holds the engine's mutex and sets
// the model first when the engine holds another one, so one model's MSV may run on the engines while the
// pool runs another model's backs.

// Targets per front chunk (the fronts are cheap: null1, and the bias filter for the few MSV survivors),
// and survivors per back chunk (each costs a Forward/Backward pass and domain definition).
constexpr std::size_t kFrontChunkSeqs = 1024;
constexpr std::size_t kBackChunkSeqs = 8;
// Targets per chunk of the Forward filter (two groups of four or four pairs: fwd_pair.hpp).
constexpr std::size_t kFwdTargetsPerChunk = 8;

// One filter engine with its share [begin, end) of the database (indices into TargetDb::seqs).
struct EngineSlot {
  std::unique_ptr<FilterEngine> engine;
  std::size_t index = 0;  // its number among the search's engines
  std::size_t begin = 0, end = 0;
  std::mutex mutex;             // one caller at a time (the models in flight share it)
  uint64_t model = UINT64_MAX;  // serial of the model set on the engine
  std::size_t size() const { return end - begin; }
};
using EngineSlots = std::vector<std::unique_ptr<EngineSlot>>;

// Runs fn(i, engines[i]) for every engine at once, one host thread each (the first on the calling thread),
// each under its engine's mutex; waits for all, then rethrows the first engine's error in engine order.
// Returns the longest wait for a mutex (held by another model's call), in seconds (for --timing).
double on_engines(EngineSlots& engines, const std::function<void(std::size_t, EngineSlot&)>& fn) {
  std::vector<double> waits(engines.size(), 0.0);
  auto locked = [&fn, &engines, &waits](std::size_t i) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::lock_guard<std::mutex> lock(engines[i]->mutex);
    waits[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fn(i, *engines[i]);
  };
  std::vector<std::future<void>> others;
  for (std::size_t i = 1; i < engines.size(); ++i)
    others.push_back(std::async(std::launch::async, [&locked, i] { locked(i); }));
  std::exception_ptr first_error;
  if (!engines.empty()) {
    try {
      locked(0);
    } catch (...) {
      first_error = std::current_exception();
    }
  }
  for (std::future<void>& f : others) {
    try {
      f.get();
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return waits.empty() ? 0.0 : *std::max_element(waits.begin(), waits.end());
}

// Makes the engines and gives each its share of targets [first, last) (split_work by residues; engines
// whose share would be empty are not made), set_database on each at once.
EngineSlots make_engines(const TargetDb& db, std::size_t first, std::size_t last, std::size_t count,
                         const FilterEngineFactory& make, ThreadPool& pool) {
  EngineSlots engines;
  if (count == 0) return engines;
  std::vector<uint64_t> weights(last - first);
  for (std::size_t s = first; s < last; ++s) weights[s - first] = static_cast<uint64_t>(db.seqs[s].L);
  const std::vector<WorkRange> ranges = split_work(weights, count);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].begin == ranges[i].end) continue;
    if (ranges[i].end - ranges[i].begin > UINT32_MAX) {  // the engines' target ids are 32-bit
      throw Error(ErrorKind::kInput,
                  fmt::format("{} targets for one GPU: more than 2^32 - 1", ranges[i].end - ranges[i].begin));
    }
    auto slot = std::make_unique<EngineSlot>();
    slot->index = i;
    slot->begin = first + ranges[i].begin;
    slot->end = first + ranges[i].end;
    slot->engine = make(i, pool);
    if (!slot->engine) throw Error(ErrorKind::kInternal, fmt::format("filter engine {} was not made", i));
    engines.push_back(std::move(slot));
  }
  on_engines(engines, [&db](std::size_t, EngineSlot& e) {
    std::vector<FilterSeq> seqs(e.size());
    for (std::size_t s = e.begin; s < e.end; ++s)
      seqs[s - e.begin] = FilterSeq{db.seqs[s].dsq.data(), db.seqs[s].L};
    e.engine->set_database(seqs);
  });
  return engines;
}

// The model on engine e (set_model unless it holds it already). Call under e.mutex.
void use_model(EngineSlot& e, const OProfile& om, uint64_t serial) {
  if (e.model == serial) return;
  e.model = UINT64_MAX;  // unknown if set_model throws
  e.engine->set_model(om);
  e.model = serial;
}

// --verify: `count` distinct targets of engine e (local indices, ascending), drawn from a generator seeded
// with the model's index in the HMM file and the engine's number: the same samples on every run.
std::vector<uint32_t> verify_sample(const EngineSlot& e, uint64_t model_index, unsigned count) {
  const std::size_t n = e.size();
  std::vector<uint32_t> sample;
  if (count >= n) {
    sample.resize(n);
    std::iota(sample.begin(), sample.end(), uint32_t{0});
    return sample;
  }
  std::mt19937_64 rng(model_index * 0x9E3779B97F4A7C15ULL + e.index + 1);
  // Floyd's algorithm: count distinct values of [0, n).
  std::set<uint32_t> chosen;
  for (std::size_t j = n - count; j < n; ++j) {
    const auto t = static_cast<uint32_t>(std::uniform_int_distribution<std::size_t>(0, j)(rng));
    if (!chosen.insert(t).second) chosen.insert(static_cast<uint32_t>(j));
  }
  sample.assign(chosen.begin(), chosen.end());
  return sample;
}

bool same_score(FilterScore a, FilterScore b) {
  return a.overflow == b.overflow && std::bit_cast<uint32_t>(a.score) == std::bit_cast<uint32_t>(b.score);
}

std::string score_text(FilterScore f) { return f.overflow ? "overflow" : fmt::format("{}", f.score); }

// --verify: recomputes engine e's sampled targets with the CPU engine (msv_filter / viterbi_filter with the
// profile configured per length) and throws Error(kInternal) at the first difference.
void verify_engine(const EngineSlot& e, std::span<const uint32_t> sample, std::span<const FilterScore> msv,
                   std::span<const FilterScore> vit, const Hmm& hmm, uint64_t model_index, const OProfile& om,
                   const TargetDb& db, ThreadPool& pool) {
  if (sample.empty()) return;
  std::vector<FilterSeq> seqs;
  for (const uint32_t j : sample) {
    const TargetSeq& t = db.seqs[e.begin + j];
    seqs.push_back(FilterSeq{t.dsq.data(), t.L});
  }
  const std::unique_ptr<FilterEngine> cpu = make_cpu_filter_engine(pool);
  cpu->set_database(seqs);
  cpu->set_model(om);
  std::vector<FilterScore> cpu_msv(sample.size()), cpu_vit(sample.size());
  std::vector<uint32_t> all(sample.size());
  std::iota(all.begin(), all.end(), uint32_t{0});
  cpu->msv(cpu_msv);
  cpu->viterbi(all, cpu_vit);
  for (std::size_t k = 0; k < sample.size(); ++k) {
    const std::size_t s = e.begin + sample[k];
    for (const bool is_msv : {true, false}) {
      const FilterScore got = is_msv ? msv[k] : vit[k];
      const FilterScore want = is_msv ? cpu_msv[k] : cpu_vit[k];
      if (same_score(got, want)) continue;
      throw Error(
          ErrorKind::kInternal,
          fmt::format("--verify: the {} filter of model {} (#{} in the HMM file) on target {} (#{} in the "
                      "database, length {}) gave {} on {}, but {} on the CPU",
                      is_msv ? "MSV" : "Viterbi", hmm.name, model_index + 1, db.seqs[s].name, s + 1,
                      db.seqs[s].L, score_text(got), e.engine->describe(), score_text(want)));
    }
  }
}

// search_model() with the filters on the engines (see the top of this section). serial: a number unique to
// this model in the run (which model an engine holds); model_index: its 0-based index in the HMM file.
ModelSearch search_model_engines(const Hmm& hmm, uint64_t serial, uint64_t model_index, const TargetDb& db,
                                 std::size_t first, std::size_t last, const PipelineOptions& popts,
                                 const ReportOptions& ropts, ThreadPool& pool, EngineSlots& engines,
                                 unsigned verify, bool timing) {
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  const Bg bg0 = make_bg(*hmm.abc);
  const Profile gm = config_profile(hmm, bg0, 100, ProfileMode::kLocal);
  const OProfile om = convert_profile(gm);

  // The main pipeline: counts the model and checks its bit cutoffs before any work (Error(kInput)).
  Bg bg_main = bg0;
  Pipeline main(popts, ropts);
  main.new_model(om, bg_main);

  const std::size_t n = last - first;
  // 1. MSV filter of every target, on the engines.
  std::vector<FilterScore> msv(n);
  const double msv_wait = on_engines(engines, [&](std::size_t, EngineSlot& e) {
    use_model(e, om, serial);
    e.engine->msv(std::span<FilterScore>(msv).subspan(e.begin - first, e.size()));
  });

  const double t_msv = since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  // 2. Fronts on the pool (om is only read).
  std::vector<FrontResult> fronts(n);
  WorkerStates states(popts, ropts, om, bg0);
  std::atomic<int64_t> front_ns{0}, fwd_ns{0}, back_ns{0};  // thread time in the chunks (for --timing)
  pool.parallel_for(n, kFrontChunkSeqs, [&](std::size_t begin, std::size_t end) {
    const auto c0 = std::chrono::steady_clock::now();
    const FlushToZeroScope ftz;
    std::unique_ptr<WorkerState> w = states.take();
    for (std::size_t j = begin; j < end; ++j) {
      const TargetSeq& t = db.seqs[first + j];
      fronts[j] = w->pipeline.front(om, w->bg, t.dsq, t.L, static_cast<int64_t>(first + j), msv[j]);
    }
    states.give_back(std::move(w));
    front_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0).count();
  });

  const double t_front = since(t1);
  const auto t2 = std::chrono::steady_clock::now();
  std::atomic<std::size_t> n_vit{0};  // targets sent to the Viterbi filter (engine threads add to it)
  // 3. Viterbi filter of the targets that need it (and of the --verify samples), on the engines.
  std::vector<FilterScore> vit(n);
  std::vector<std::vector<uint32_t>> samples(engines.size());
  for (std::size_t i = 0; verify > 0 && i < engines.size(); ++i) {
    // Empty targets are never scored by the pipeline (and their filter values are only conventions).
    samples[i] = verify_sample(*engines[i], model_index, verify);
    std::erase_if(samples[i], [&](uint32_t j) { return db.seqs[engines[i]->begin + j].L == 0; });
  }
  const double vit_wait = on_engines(engines, [&](std::size_t i, EngineSlot& e) {
    const std::vector<uint32_t>& sample = samples[i];
    std::vector<uint32_t> ids;  // ascending local indices: the needed ones merged with the samples
    std::size_t next_sample = 0;
    for (std::size_t s = e.begin; s < e.end; ++s) {
      const auto j = static_cast<uint32_t>(s - e.begin);
      const bool sampled = next_sample < sample.size() && sample[next_sample] == j;
      if (sampled) ++next_sample;
      if (sampled || fronts[s - first].decision == FrontDecision::kViterbi) ids.push_back(j);
    }
    if (ids.empty()) return;
    std::vector<FilterScore> out(ids.size());
    use_model(e, om, serial);
    e.engine->viterbi(ids, out);
    n_vit += ids.size();
    for (std::size_t k = 0; k < ids.size(); ++k) vit[e.begin - first + ids[k]] = out[k];
  });
  for (std::size_t i = 0; i < engines.size(); ++i) {
    if (samples[i].empty()) continue;
    const EngineSlot& e = *engines[i];
    std::vector<FilterScore> smsv, svit;
    for (const uint32_t j : samples[i]) {
      smsv.push_back(msv[e.begin - first + j]);
      svit.push_back(vit[e.begin - first + j]);
    }
    verify_engine(e, samples[i], smsv, svit, hmm, model_index, om, db, pool);
  }

  const double t_vit = since(t2);
  const auto t3 = std::chrono::steady_clock::now();
  // 4. Backs of the survivors: back() in three steps, so that the Forward filter runs two or four targets
  // at a time (fwd_pair.hpp; the same scores as back()'s forward_parser, bit for bit):
  //   a. the Viterbi filter decisions (a few operations per survivor) on this thread;
  //   b. the Forward parser's scores of the targets that reach it, in groups of two or four neighbouring
  //      lengths (the list sorted longest first), kFwdTargetsPerChunk targets per chunk on the pool;
  //   c. the rest of back() (the Forward decision; Backward and domains for the few that pass) on the pool,
  //      chunks of kBackChunkSeqs targets in database order, the chunks with the longest started first;
  //      hits merged in chunk (= database) order.
  std::vector<std::size_t> survivors;
  for (std::size_t j = 0; j < n; ++j)
    if (fronts[j].decision != FrontDecision::kStop) survivors.push_back(j);
  std::vector<std::size_t> to_forward;  // database order
  {
    std::unique_ptr<WorkerState> w = states.take();
    for (const std::size_t j : survivors)
      if (w->pipeline.back_viterbi(om, fronts[j], vit[j])) to_forward.push_back(j);
    states.give_back(std::move(w));
  }
  const auto t4 = std::chrono::steady_clock::now();
  std::vector<std::size_t> by_length(to_forward.size());  // indices into to_forward, longest first
  std::iota(by_length.begin(), by_length.end(), std::size_t{0});
  std::stable_sort(by_length.begin(), by_length.end(), [&](std::size_t a, std::size_t b) {
    return db.seqs[first + to_forward[a]].L > db.seqs[first + to_forward[b]].L;
  });
  std::vector<float> fwdsc(to_forward.size());
  pool.parallel_for(to_forward.size(), kFwdTargetsPerChunk, [&](std::size_t k0, std::size_t k1) {
    const auto c0 = std::chrono::steady_clock::now();
    const FlushToZeroScope ftz;
    std::unique_ptr<WorkerState> w = states.take();
    std::vector<FwdPairTarget> targets;
    for (std::size_t k = k0; k < k1; ++k) {
      const TargetSeq& t = db.seqs[first + to_forward[by_length[k]]];
      targets.push_back(fwd_pair_target(om, t.dsq.data(), static_cast<int>(t.L)));
    }
    std::vector<float> scores(targets.size());
    forward_parser_scores(om, targets, scores, w->fwd_pair, w->fwd_fallback);
    for (std::size_t k = k0; k < k1; ++k) fwdsc[by_length[k]] = scores[k - k0];
    states.give_back(std::move(w));
    fwd_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0).count();
  });
  const auto t5 = std::chrono::steady_clock::now();
  const std::size_t nchunks = (to_forward.size() + kBackChunkSeqs - 1) / kBackChunkSeqs;
  std::vector<TopHits> chunk_hits(nchunks);
  std::vector<int64_t> longest(nchunks, 0);
  for (std::size_t k = 0; k < to_forward.size(); ++k)
    longest[k / kBackChunkSeqs] = std::max(longest[k / kBackChunkSeqs], db.seqs[first + to_forward[k]].L);
  std::vector<std::size_t> order(nchunks);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return longest[a] > longest[b]; });
  pool.parallel_for(nchunks, 1, [&](std::size_t begin, std::size_t end) {
    const auto c0 = std::chrono::steady_clock::now();
    const FlushToZeroScope ftz;
    for (std::size_t c = begin; c < end; ++c) {
      const std::size_t chunk = order[c];
      std::unique_ptr<WorkerState> w = states.take();
      for (std::size_t k = chunk * kBackChunkSeqs;
           k < std::min(to_forward.size(), (chunk + 1) * kBackChunkSeqs); ++k) {
        const std::size_t j = to_forward[k];
        const TargetSeq& t = db.seqs[first + j];
        const PipelineTarget target{t.name, t.acc, t.desc, static_cast<int64_t>(first + j)};
        w->pipeline.back_forward(w->om, w->bg, t.dsq, t.L, fronts[j], fwdsc[k], target, chunk_hits[chunk]);
      }
      states.give_back(std::move(w));
    }
    back_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0).count();
  });

  ModelSearch result;
  result.counts = main.counts();
  for (const auto& w : states.all()) result.counts.merge(w->pipeline.counts());
  for (TopHits& h : chunk_hits)
    for (std::size_t i = 0; i < h.size(); ++i) result.hits.add(std::move(h.unsorted(i)));
  result.report = main.report();
  if (timing) {
    int64_t longest_survivor = 0;
    for (const std::size_t j : survivors) longest_survivor = std::max(longest_survivor, db.seqs[first + j].L);
    fmt::print(
        stderr,
        "hmmsearch timing: {} (M {}): msv {:.3f} s (waited {:.3f} s), fronts {:.3f} s (threads {:.3f} s), "
        "viterbi {:.3f} s (waited {:.3f} s; {} targets), backs {:.3f} s ({} survivors, longest {}; Forward "
        "filter of {}: {:.3f} s, threads {:.3f} s; then threads {:.3f} s), total {:.3f} s\n",
        hmm.name, hmm.M, t_msv, msv_wait, t_front, static_cast<double>(front_ns.load()) * 1e-9, t_vit,
        vit_wait, n_vit.load(), since(t3), survivors.size(), longest_survivor, to_forward.size(),
        std::chrono::duration<double>(t5 - t4).count(), static_cast<double>(fwd_ns.load()) * 1e-9,
        static_cast<double>(back_ns.load()) * 1e-9, since(t0));
  }
  return result;
}

// p7_tophits_SortBySortkey, Z (the number of targets unless -Z), p7_tophits_Threshold: on the complete hit
// list and counters (compare_hits is a total order, so the ranking does not depend on the insertion order).
void finish_model(ModelSearch& ms) {
  ms.hits.sort_by_sortkey();
  if (ms.report.Z_setby == ZSetBy::kNTargets) ms.report.Z = static_cast<double>(ms.counts.nseqs);
  threshold(ms.hits, ms.report);
}

// esl_stopwatch's user/system times of the process so far, in seconds.
struct CpuTimes {
  double user = 0.0;
  double sys = 0.0;
};
CpuTimes cpu_times() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return {static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) * 1e-6,
          static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6};
}

hmmsearch::ModelResult model_result(const Hmm& hmm, const ModelSearch& ms, bool keep_hits) {
  hmmsearch::ModelResult r;
  r.name = hmm.name;
  r.acc = hmm.has(kHmmAcc) ? hmm.acc : std::string();
  r.desc = hmm.has(kHmmDesc) ? hmm.desc : std::string();
  r.M = hmm.M;
  r.nseqs = ms.counts.nseqs;
  r.nres = ms.counts.nres;
  r.n_past_msv = ms.counts.n_past_msv;
  r.n_past_bias = ms.counts.n_past_bias;
  r.n_past_vit = ms.counts.n_past_vit;
  r.n_past_fwd = ms.counts.n_past_fwd;
  r.Z = ms.report.Z;
  r.domZ = ms.report.domZ;
  r.nreported = ms.hits.nreported;
  r.nincluded = ms.hits.nincluded;
  if (!keep_hits) return r;
  for (std::size_t h = 0; h < ms.hits.size(); ++h) {
    const Hit& hit = ms.hits.hit(h);
    hmmsearch::TargetHit t;
    t.name = hit.name;
    t.acc = hit.acc;
    t.desc = hit.desc;
    t.seqidx = hit.seqidx;
    t.score = hit.score;
    t.bias = hit.pre_score - hit.score;
    t.evalue = std::exp(hit.lnP) * ms.report.Z;
    t.reported = (hit.flags & kIsReported) != 0;
    t.included = (hit.flags & kIsIncluded) != 0;
    for (const Domain& d : hit.dcl) {
      hmmsearch::DomainHit dh;
      dh.ienv = d.ienv;
      dh.jenv = d.jenv;
      dh.iali = d.iali;
      dh.jali = d.jali;
      dh.hmmfrom = d.ad.hmmfrom;
      dh.hmmto = d.ad.hmmto;
      dh.score = d.bitscore;
      dh.bias = static_cast<float>(static_cast<double>(d.dombias) * (1.0 / kLog2));
      dh.c_evalue = std::exp(d.lnP) * ms.report.domZ;
      dh.i_evalue = std::exp(d.lnP) * ms.report.Z;
      dh.reported = d.is_reported;
      dh.included = d.is_included;
      t.domains.push_back(dh);
    }
    r.hits.push_back(std::move(t));
  }
  return r;
}

void require_positive(const std::optional<double>& v, const char* name) {
  if (v && !(*v > 0.0)) {
    throw Error(ErrorKind::kUsage, fmt::format("{} must be > 0 (got {})", name, *v));
  }
}

// hmmsearch's incompatible option groups (esl_getopts "incompatible with" lists).
void require_exclusive(const std::vector<std::pair<const char*, bool>>& given) {
  const char* first = nullptr;
  for (const auto& [name, on] : given) {
    if (!on) continue;
    if (first != nullptr)
      throw Error(ErrorKind::kUsage, fmt::format("option {} is incompatible with {}", first, name));
    first = name;
  }
}

}  // namespace
}  // namespace warpsearch::hmm

// ---------------------------------------------------------------------------------------------------
// 3. Public entry points
// ---------------------------------------------------------------------------------------------------

namespace warpsearch::hmmsearch {

using namespace warpsearch::hmm;  // NOLINT(google-build-using-namespace): this file implements the bridge

void validate(const Options& o) {
  require_positive(o.E, "-E");
  require_positive(o.domE, "--domE");
  require_positive(o.incE, "--incE");
  require_positive(o.incdomE, "--incdomE");
  require_positive(o.Z, "-Z");
  require_positive(o.domZ, "--domZ");
  if (o.textw && *o.textw < 120) {
    throw Error(ErrorKind::kUsage, fmt::format("--textw must be >= 120 (got {})", *o.textw));
  }
  require_exclusive({{"--textw", o.textw.has_value()}, {"--notextw", o.notextw}});
  const bool ga = o.cutoffs == BitCutoffs::kGA, nc = o.cutoffs == BitCutoffs::kNC,
             tc = o.cutoffs == BitCutoffs::kTC;
  const char* cut = ga ? "--cut_ga" : nc ? "--cut_nc" : "--cut_tc";
  const bool any_cut = ga || nc || tc;
  require_exclusive({{"-E", o.E.has_value()}, {"-T", o.T.has_value()}, {cut, any_cut}});
  require_exclusive({{"--domE", o.domE.has_value()}, {"--domT", o.domT.has_value()}, {cut, any_cut}});
  require_exclusive({{"--incE", o.incE.has_value()}, {"--incT", o.incT.has_value()}, {cut, any_cut}});
  require_exclusive(
      {{"--incdomE", o.incdomE.has_value()}, {"--incdomT", o.incdomT.has_value()}, {cut, any_cut}});
  require_exclusive({{"--max", o.max}, {"--F1", o.F1.has_value()}});
  require_exclusive({{"--max", o.max}, {"--F2", o.F2.has_value()}});
  require_exclusive({{"--max", o.max}, {"--F3", o.F3.has_value()}});
  require_exclusive({{"--max", o.max}, {"--nobias", o.nobias}});
}

namespace {

ReportOptions report_options(const Options& o) {
  ReportOptions r;
  if (o.E) r.E = *o.E;
  if (o.T) r.set_T(*o.T);
  if (o.domE) r.domE = *o.domE;
  if (o.domT) r.set_domT(*o.domT);
  if (o.incE) r.incE = *o.incE;
  if (o.incT) r.set_incT(*o.incT);
  if (o.incdomE) r.incdomE = *o.incdomE;
  if (o.incdomT) r.set_incdomT(*o.incdomT);
  switch (o.cutoffs) {
    case BitCutoffs::kNone: break;
    case BitCutoffs::kGA: r.set_bit_cutoffs(hmm::BitCutoffs::kGA); break;
    case BitCutoffs::kNC: r.set_bit_cutoffs(hmm::BitCutoffs::kNC); break;
    case BitCutoffs::kTC: r.set_bit_cutoffs(hmm::BitCutoffs::kTC); break;
  }
  if (o.Z) r.set_Z(*o.Z);
  if (o.domZ) r.set_domZ(*o.domZ);
  r.textw = o.notextw ? 0 : o.textw.value_or(120);
  r.show_alignments = !o.noali;
  r.show_accessions = o.acc;
  return r;
}

PipelineOptions pipeline_options(const Options& o) {
  PipelineOptions p;
  if (o.F1) p.set_F1(*o.F1);
  if (o.F2) p.set_F2(*o.F2);
  if (o.F3) p.set_F3(*o.F3);
  if (o.max) p.set_max();
  if (o.nonull2) p.do_null2 = false;
  if (o.nobias) p.do_biasfilter = false;
  p.seed = o.seed.value_or(42);
  return p;
}

UsedOptions used_options(const Options& o, const RunLabels& labels) {
  UsedOptions u;
  u.o = labels.o;
  u.A = labels.A;
  u.tblout = labels.tblout;
  u.domtblout = labels.domtblout;
  u.pfamtblout = labels.pfamtblout;
  u.acc = o.acc;
  u.noali = o.noali;
  u.notextw = o.notextw;
  u.textw = o.textw;
  u.E = o.E;
  u.T = o.T;
  u.domE = o.domE;
  u.domT = o.domT;
  u.incE = o.incE;
  u.incT = o.incT;
  u.incdomE = o.incdomE;
  u.incdomT = o.incdomT;
  u.cut_ga = o.cutoffs == BitCutoffs::kGA;
  u.cut_nc = o.cutoffs == BitCutoffs::kNC;
  u.cut_tc = o.cutoffs == BitCutoffs::kTC;
  u.max = o.max;
  u.F1 = o.F1;
  u.F2 = o.F2;
  u.F3 = o.F3;
  u.nobias = o.nobias;
  u.nonull2 = o.nonull2;
  u.Z = o.Z;
  u.domZ = o.domZ;
  if (o.seed) u.seed = static_cast<int>(*o.seed);
  u.cpu = labels.cpu;
  // HMMER echoes an option only when its value text differs from the default text.
  for (const std::string& name : labels.given_as_default) {
    if (name == "-E") u.E.reset();
    if (name == "--domE") u.domE.reset();
    if (name == "--incE") u.incE.reset();
    if (name == "--incdomE") u.incdomE.reset();
    if (name == "--F1") u.F1.reset();
    if (name == "--F2") u.F2.reset();
    if (name == "--F3") u.F3.reset();
    if (name == "--seed") u.seed.reset();
    if (name == "--textw") u.textw.reset();
    if (name == "--cpu") u.cpu.reset();
  }
  return u;
}

std::string current_dir() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return {};
  return buf.data();
}

std::string ctime_now() {
  const std::time_t now = std::time(nullptr);
  std::array<char, 64> buf{};
  if (::ctime_r(&now, buf.data()) == nullptr) return "\n";
  return buf.data();
}

// The outputs of one model, in the order search() writes them: --tblout rows, --domtblout rows,
// --pfamtblout rows, the -A alignment, the main report's block; and its ModelResult.
enum OutputIndex : std::size_t { kTblout, kDomtblout, kPfamtblout, kAlignment, kReport, kOutputs };
struct ModelOutput {
  std::array<std::string, kOutputs> text;
  ModelResult result;
};

// Formats the outputs of a finished model search (nquery: its 1-based number in the HMM file; wanted: which
// outputs rank 0 writes).
ModelOutput format_model(const Hmm& h, const ModelSearch& ms, int nquery,
                         const std::array<bool, kOutputs>& wanted, const RunLabels& labels,
                         const Stopwatch& w, bool keep_hits) {
  ModelOutput out;
  const QueryInfo q{h.name, h.has(kHmmAcc) ? h.acc : std::string(), h.has(kHmmDesc) ? h.desc : std::string(),
                    h.M};
  if (wanted[kTblout]) write_tabular_targets(out.text[kTblout], q, ms.hits, ms.report, nquery == 1);
  if (wanted[kDomtblout]) write_tabular_domains(out.text[kDomtblout], q, ms.hits, ms.report, nquery == 1);
  if (wanted[kPfamtblout]) write_tabular_xfam(out.text[kPfamtblout], q, ms.hits, ms.report);
  // -A: the included domains' alignment (hmmsearch writes nothing for a query without any).
  std::optional<HitsAlignment> ali;
  if (wanted[kAlignment]) {
    const AlignmentQuery aq{q.name, q.acc, q.desc, h.abc, "hmmsearch"};
    ali = stockholm_alignment(ms.hits, aq, ms.report.textw);
    if (ali) out.text[kAlignment] = ali->text;
  }
  if (wanted[kReport]) {
    std::string& text = out.text[kReport];
    write_query(text, q);
    write_query_results(text, ms.hits, ms.report, ms.counts, &w);
    if (wanted[kAlignment]) text += alignment_saved_line(ali, labels.A.value_or(""));
  }
  out.result = model_result(h, ms, keep_hits);
  return out;
}

dist::Bytes encode_model_output(const ModelOutput& out) {
  dist::ByteWriter w;
  for (const std::string& t : out.text) w.str(t);
  dist::write_model_result(w, out.result);
  return w.take();
}

ModelOutput decode_model_output(std::span<const std::uint8_t> message) {
  dist::ByteReader r(message);
  ModelOutput out;
  for (std::string& t : out.text) t = r.str();
  out.result = dist::read_model_result(r);
  r.expect_done();
  return out;
}

// search() with `nengines` filter engines made by make_engine (none: the classic CPU pipeline).
Summary run_search(const std::string& hmmfile, const std::string& seqdb, const Options& options,
                   const Sinks& sinks_in, const RunLabels& labels, bool keep_hits, const dist::Comm* comm,
                   dist::Split split, std::size_t nengines, const FilterEngineFactory& make_engine) {
  const dist::Comm one_process;
  const dist::Comm& world = comm != nullptr ? *comm : one_process;
  dist::agree(world, [&] {
    validate(options);
    if (hmmfile == "-" && seqdb == "-") {
      throw Error(ErrorKind::kUsage,
                  "either <hmmfile> or <seqdb> may be '-' (to read from stdin), but not both");
    }
    if (world.size() > 1 && (hmmfile == "-" || seqdb == "-")) {
      throw Error(ErrorKind::kUsage,
                  "under MPI every rank reads <hmmfile> and <seqdb> itself: neither may be '-' (stdin)");
    }
  });
  const FlushToZeroScope ftz;  // HMMER's impl_Init() in the master thread
  const ReportOptions ropts = report_options(options);
  const PipelineOptions popts = pipeline_options(options);
  // Only rank 0 writes: the other ranks' sinks are never called.
  const Sinks sinks = world.is_root() ? sinks_in : Sinks{};
  // As hmmsearch: the database is opened first, then the HMM file; the database is read (digitized with
  // the alphabet of the first model; all models of a file share it) before any output, so a bad
  // database or first model produces no output at all. Under MPI every rank reads the HMM file and its
  // shard of the database (dist/shard.hpp); all ranks agree that this worked before going on.
  std::unique_ptr<HmmReader> reader;
  std::optional<Hmm> hmm;
  ThreadPool pool(options.threads);
  TargetDb db;
  std::size_t first = 0, last = 0;
  EngineSlots engines;  // the filter engines (section 2b); empty: the classic path (search_model)
  const auto run_t0 = std::chrono::steady_clock::now();
  auto run_seconds = [&run_t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - run_t0).count();
  };
  dist::agree(world, [&] {
    TargetDbFile dbfile(seqdb);
    reader = std::make_unique<HmmReader>(hmmfile);
    hmm = reader->next();
    if (!hmm) throw Error(ErrorKind::kFormat, "HMM file contains no model", hmmfile);
    if (world.size() > 1 && split == dist::Split::kDatabase) {
      db = dbfile.read_part(*hmm->abc, pool, world.rank(), world.size(), first, last);
    } else {
      db = dbfile.read(*hmm->abc, pool);
      last = db.seqs.size();
    }
    const double t_read = run_seconds();
    // The engines take their shares of this process's targets once, for all models.
    engines = make_engines(db, first, last, nengines, make_engine, pool);
    if (options.timing) {
      fmt::print(
          stderr,
          "hmmsearch timing: database read in {:.3f} s ({} targets), filter engines ready in {:.3f} s\n",
          t_read, last - first, run_seconds() - t_read);
    }
  });
  const double t_models0 = run_seconds();

  // Under a query split, rank 0 tells the others which outputs it writes (they format them).
  const bool query_split = world.size() > 1 && split == dist::Split::kQueries;
  std::array<bool, kOutputs> wanted{static_cast<bool>(sinks.tblout), static_cast<bool>(sinks.domtblout),
                                    static_cast<bool>(sinks.pfamtblout), static_cast<bool>(sinks.alignment),
                                    static_cast<bool>(sinks.report)};
  if (query_split) {
    dist::Bytes mask(wanted.begin(), wanted.end());
    world.broadcast(mask);
    for (std::size_t k = 0; k < kOutputs; ++k) wanted[k] = mask[k] != 0;
  }
  const std::array<const std::function<void(std::string_view)>*, kOutputs> sink_of{
      &sinks.tblout, &sinks.domtblout, &sinks.pfamtblout, &sinks.alignment, &sinks.report};

  std::string text;
  auto flush = [&text](const std::function<void(std::string_view)>& sink) {
    if (sink && !text.empty()) sink(text);
    text.clear();
  };
  if (sinks.report) {
    write_header(text, hmmfile, seqdb, used_options(options, labels));
    flush(sinks.report);
  }

  Summary summary;
  summary.targets = db.seqs.size();
  summary.residues = db.nres;
  if (world.is_root())
    for (const auto& e : engines) summary.filter_engines.push_back(e->engine->describe());

  // Up to kModelsInFlight models (engine_models_in_flight() with filter engines; of this rank's, under a
  // query split) are searched at once on the shared pool: the next model's chunks fill the threads that would
  // otherwise wait for the last long targets of the current one. Each model's results and outputs are its own
  // and are written strictly in file order, so the outputs are the same as one model at a time. An error
  // reading a later model is raised after the models before it are written, as in a serial run.
  struct InFlight {
    std::unique_ptr<Hmm> hmm;
    std::chrono::steady_clock::time_point wall0;
    CpuTimes cpu0;
    std::future<ModelSearch> result;  // not valid for another rank's model (query split)
    bool mine = true;
  };
  std::deque<InFlight> in_flight;  // declared after db and pool: its futures are joined before they go
  std::size_t mine_in_flight = 0;
  std::exception_ptr read_error;
  int nquery = 0;
  // The model's outputs, formatted on the rank that searched it.
  auto format = [&](InFlight& f, ModelSearch& ms) {
    finish_model(ms);
    const CpuTimes cpu1 = cpu_times();
    const Stopwatch w{cpu1.user - f.cpu0.user, cpu1.sys - f.cpu0.sys,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - f.wall0).count()};
    return format_model(*f.hmm, ms, nquery, wanted, labels, w, keep_hits);
  };
  auto write_model = [&](InFlight& f) {
    ++nquery;
    ModelOutput out;
    if (query_split) {
      // The owner formats the model's outputs and sends them to rank 0.
      const int owner = (nquery - 1) % world.size();
      std::vector<dist::Bytes> parts = dist::exchange(world, [&] {
        if (owner != world.rank()) return dist::Bytes();
        ModelSearch ms = f.result.get();
        out = format(f, ms);
        return world.is_root() ? dist::Bytes() : encode_model_output(out);
      });
      if (!world.is_root()) return;
      if (owner != 0) out = decode_model_output(parts[static_cast<std::size_t>(owner)]);
    } else if (world.size() > 1) {
      // Every rank's hits and counters to rank 0, which merges them in rank (= database) order: the hit
      // list and counters a one-process search builds; then only rank 0 goes on.
      ModelSearch ms;
      std::vector<dist::Bytes> parts = dist::exchange(world, [&] {
        ms = f.result.get();
        return world.is_root() ? dist::Bytes() : dist::encode_model_part(ms.hits, ms.counts);
      });
      if (!world.is_root()) return;
      for (std::size_t r = 1; r < parts.size(); ++r) {
        ms.counts.merge(dist::decode_model_part(parts[r], ms.hits));
        parts[r] = dist::Bytes();
      }
      out = format(f, ms);
    } else {
      ModelSearch ms = f.result.get();
      out = format(f, ms);
    }
    for (std::size_t k = 0; k < kOutputs; ++k) {
      text = std::move(out.text[k]);
      flush(*sink_of[k]);
    }
    summary.models.push_back(std::move(out.result));
  };
  std::size_t nread = 0;  // models read so far
  const std::size_t models_in_flight = engines.empty() ? kModelsInFlight : engine_models_in_flight();
  while (hmm || !in_flight.empty()) {
    if (hmm && mine_in_flight < models_in_flight) {
      InFlight f{
          std::make_unique<Hmm>(std::move(*hmm)), std::chrono::steady_clock::now(), cpu_times(), {}, true};
      f.mine = !query_split ||
               nread % static_cast<std::size_t>(world.size()) == static_cast<std::size_t>(world.rank());
      ++nread;
      if (f.mine) {
        const Hmm* h = f.hmm.get();
        const uint64_t index = nread - 1;  // the model's 0-based index in the HMM file (also its serial)
        const unsigned verify = options.verify;
        const bool timing = options.timing;
        f.result = std::async(std::launch::async, [h, index, verify, timing, &db, first, last, &popts, &ropts,
                                                   &pool, &engines] {
          const FlushToZeroScope model_ftz;  // this thread runs chunks too
          if (engines.empty()) {
            const auto t0 = std::chrono::steady_clock::now();
            ModelSearch ms = search_model(*h, db, first, last, popts, ropts, pool);
            if (timing) {
              fmt::print(stderr, "hmmsearch timing: {} (M {}): CPU pipeline {:.3f} s\n", h->name, h->M,
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
            return ms;
          }
          return search_model_engines(*h, index, index, db, first, last, popts, ropts, pool, engines, verify,
                                      timing);
        });
        ++mine_in_flight;
      }
      in_flight.push_back(std::move(f));
      hmm.reset();
      try {
        hmm = reader->next();
      } catch (...) {
        read_error = std::current_exception();
      }
      continue;
    }
    write_model(in_flight.front());
    if (in_flight.front().mine) --mine_in_flight;
    in_flight.pop_front();
  }
  // Every rank read the same HMM file: its error is raised by all of them together.
  dist::agree(world, [&read_error] {
    if (read_error) std::rethrow_exception(read_error);
  });

  if (options.timing) {
    std::string engine_text;
    for (const auto& e : engines) {
      const FilterEngineStats& st = e->engine->stats();
      engine_text +=
          fmt::format("; engine {}: SSV {:.3f} s, full MSV {:.3f} s, Viterbi {:.3f} s, uploads {:.3f} s",
                      e->index, st.ssv_seconds, st.msv_full_seconds, st.vit_seconds, st.upload_seconds);
    }
    fmt::print(stderr, "hmmsearch timing: models searched in {:.3f} s{}\n", run_seconds() - t_models0,
               engine_text);
  }
  // Tails of the tables, and the report's last line.
  const std::string cwd = current_dir();
  const std::string date = ctime_now();
  for (const auto* sink : {&sinks.tblout, &sinks.domtblout, &sinks.pfamtblout}) {
    if (!*sink) continue;
    write_tabular_tail(text, labels.program, hmmfile, seqdb, labels.command_line, cwd, date);
    flush(*sink);
  }
  if (sinks.report) {
    text = "[ok]\n";
    flush(sinks.report);
  }
  return summary;
}

}  // namespace

Summary search(const std::string& hmmfile, const std::string& seqdb, const Options& options,
               const Sinks& sinks, const RunLabels& labels, bool keep_hits, const dist::Comm* comm,
               dist::Split split) {
  const std::vector<int> gpus = options.gpus;
  return run_search(hmmfile, seqdb, options, sinks, labels, keep_hits, comm, split, gpus.size(),
                    [&gpus](std::size_t i, ThreadPool&) { return make_gpu_filter_engine(gpus[i]); });
}

}  // namespace warpsearch::hmmsearch

namespace warpsearch::hmm {

hmmsearch::Summary search_with_engines(const std::string& hmmfile, const std::string& seqdb,
                                       const hmmsearch::Options& options, const hmmsearch::Sinks& sinks,
                                       const hmmsearch::RunLabels& labels, std::size_t engines,
                                       const FilterEngineFactory& make, bool keep_hits,
                                       const dist::Comm* comm, dist::Split split) {
  return hmmsearch::run_search(hmmfile, seqdb, options, sinks, labels, keep_hits, comm, split, engines, make);
}

}  // namespace warpsearch::hmm
