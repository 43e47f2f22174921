// seqio.cpp: SequenceReader, the streaming FASTA/FASTQ reader (plain or gzip, "-" for stdin).
//
// Contents:
//   1. ByteSource: a file descriptor read as plain bytes or as inflated gzip, sniffed from the magic
//      bytes 1f 8b (never from the file name); multi-member gzip; truncation and corruption are errors.
//   2. Byte classes: one 256-entry table per alphabet that digitizes residues, marks lower case and flags
//      every byte that needs the slow path (foreign letter, whitespace, invalid).
//   3. LetterSample: the look-ahead that resolves SeqFormat::kAuto and collects the residue letters
//      guess_alphabet() decides from.
//   4. SequenceReader::Impl: the input buffer, line handling, FASTA and FASTQ record parsing.
//   5. SequenceReader: the public wrapper.
//
// Input conventions (the contract is in seqio.hpp; these are the details):
//   - Lines end with '\n'; a '\r' before it is dropped (CRLF). The last line needs no '\n'.
//   - Blank lines (empty or only ' ', '\t', '\r', '\v', '\f') are ignored everywhere. Inside sequence
//     lines those whitespace bytes are skipped.
//   - Before the first header, lines starting with ';' are comments and are skipped (old FASTA
//     convention). A ';' anywhere later is an invalid sequence character.
//   - A header starts in column 1: '>' (FASTA) or '@' (FASTQ), then the name up to the first whitespace
//     (it must not be empty), then the description with leading whitespace removed (trailing whitespace
//     is kept, as Easel does).
//   - FASTQ: sequence line(s) up to a line starting with '+' (whose text, if any, must repeat the header
//     or the name), then quality line(s) until the quality is as long as the sequence. Quality bytes are
//     '!'..'~'.
//   - Errors name the path as given ("-" for stdin) and, for parse errors, the 1-based line. After an
//     Error the reader is in an unspecified state and must not be read further.
//   - Trailing bytes after a gzip member must start another gzip member.
#include "warpsearch/seqio.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <string_view>
#include <vector>

#include "warpsearch/error.hpp"

namespace warpsearch {
namespace {

constexpr bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// A byte as it appears in messages: 'c' when printable, '\xHH' otherwise.
std::string quote(unsigned char c) {
  if (c >= 0x20 && c < 0x7F) return std::string{'\'', static_cast<char>(c), '\''};
  constexpr char kHex[] = "0123456789ABCDEF";
  return std::string{'\'', '\\', 'x', kHex[c >> 4], kHex[c & 0xF], '\''};
}

// ---------------------------------------------------------------------------------------------------
// 1. ByteSource
// ---------------------------------------------------------------------------------------------------

// Compressed bytes read from the file per read(2) when inflating.
constexpr std::size_t kCompressedChunk = 1 << 17;

// Reads a file (or stdin) as a stream of uncompressed bytes. Not movable: zlib's state points back at
// the z_stream it was initialized with.
class ByteSource {
 public:
  explicit ByteSource(const std::string& path) : path_(path) {
    if (path == "-") {
      fd_ = STDIN_FILENO;
    } else {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) throw_system_error("cannot open", path);
      owns_fd_ = true;
      ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint; failure is harmless
    }
    try {
      sniff();
    } catch (...) {
      close_fd();
      throw;
    }
  }
  ~ByteSource() {
    if (gzip_) inflateEnd(&z_);
    close_fd();
  }
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  bool gzipped() const { return gzip_; }

  // Reads up to n (> 0) uncompressed bytes into dst. Returns 0 only at the end of the input.
  std::size_t read(char* dst, std::size_t n) {
    if (gzip_) return inflate_into(dst, n);
    if (head_pos_ < head_len_) {  // the sniffed bytes come first
      const std::size_t k = std::min(n, head_len_ - head_pos_);
      std::memcpy(dst, head_.data() + head_pos_, k);
      head_pos_ += k;
      return k;
    }
    return read_fd(dst, n);
  }

 private:
  void close_fd() {
    if (owns_fd_) ::close(fd_);
    owns_fd_ = false;
  }

  // read(2) retried on EINTR; 0 at end of file.
  std::size_t read_fd(void* dst, std::size_t n) {
    for (;;) {
      const ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw_system_error("cannot read", path_);
    }
  }

  // Reads the first two bytes (fewer only at end of file) and switches to gzip on 1f 8b.
  void sniff() {
    while (head_len_ < head_.size()) {
      const std::size_t got = read_fd(head_.data() + head_len_, head_.size() - head_len_);
      if (got == 0) break;
      head_len_ += got;
    }
    if (head_len_ < 2 || head_[0] != 0x1F || head_[1] != 0x8B) return;
    compressed_.resize(kCompressedChunk);
    std::memcpy(compressed_.data(), head_.data(), head_len_);
    z_.next_in = compressed_.data();
    z_.avail_in = static_cast<uInt>(head_len_);
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw std::bad_alloc();  // 15 + 16: gzip wrapper only
    gzip_ = true;
  }

  // Refills the (fully consumed) compressed input. Returns false at end of file.
  bool refill_compressed() {
    const std::size_t got = read_fd(compressed_.data(), compressed_.size());
    z_.next_in = compressed_.data();
    z_.avail_in = static_cast<uInt>(got);
    return got > 0;
  }

  // Invariant: when member_ended_, every byte of the last member has been consumed; the stream may end
  // here cleanly, or another member must follow.
  std::size_t inflate_into(char* dst, std::size_t n) {
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(n, UINT_MAX));
    const uInt requested = z_.avail_out;
    while (z_.avail_out > 0 && !finished_) {
      if (z_.avail_in == 0 && !refill_compressed()) {
        if (member_ended_) {
          finished_ = true;
          break;
        }
        throw Error(ErrorKind::kFormat, "truncated gzip stream (unexpected end of file)", path_);
      }
      if (member_ended_) {
        if (z_.next_in[0] != 0x1F) {
          throw Error(ErrorKind::kFormat, "unexpected data after the end of the gzip stream", path_);
        }
        inflateReset(&z_);
        member_ended_ = false;
      }
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
      } else if (rc == Z_MEM_ERROR) {
        throw std::bad_alloc();
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && z_.avail_in == 0)) {
        throw Error(ErrorKind::kFormat,
                    std::string("corrupt gzip stream: ") + (z_.msg != nullptr ? z_.msg : zError(rc)), path_);
      }
    }
    return requested - z_.avail_out;
  }

  std::string path_;
  int fd_ = -1;
  bool owns_fd_ = false;
  std::array<unsigned char, 2> head_{};  // the sniffed bytes (plain input returns them first)
  std::size_t head_len_ = 0;
  std::size_t head_pos_ = 0;
  bool gzip_ = false;
  std::vector<unsigned char> compressed_;  // gzip input; [z_.next_in, +avail_in) not yet inflated
  z_stream z_{};
  bool member_ended_ = false;
  bool finished_ = false;
};

// ---------------------------------------------------------------------------------------------------
// 2. Byte classes
// ---------------------------------------------------------------------------------------------------
//
// classes[c] for an input byte c; the low five bits (kCodeBits) are the residue code (< 27) or one of
// two markers; kLower marks lower case; kSlow marks the bytes the fast path hands to the slow path:
//   code                                an upper-case symbol of the alphabet
//   kLower | code                       a lower-case symbol (soft-masked; the fast path finds the runs)
//   kSlow | kForeign | unknown          an upper-case letter outside the alphabet (X or N)
//   kSlow | kForeign | kLower | unknown a lower-case letter outside the alphabet
//   kSlow | kSkipCode                   whitespace, skipped
//   kSlow | kInvalidCode                anything else: an error
using ByteClasses = std::array<std::uint8_t, 256>;

constexpr std::uint8_t kSlow = 0x80;
constexpr std::uint8_t kLower = 0x40;
constexpr std::uint8_t kForeign = 0x20;
constexpr std::uint8_t kCodeBits = 0x1F;
constexpr std::uint8_t kInvalidCode = 30;  // above every residue code (< 27)
constexpr std::uint8_t kSkipCode = 31;
static_assert(kProteinCodes <= kInvalidCode && kDnaCodes <= kInvalidCode);

ByteClasses build_classes(const Alphabet& alphabet, bool skip_hyphens) {
  ByteClasses classes{};
  for (int i = 0; i < 256; ++i) {
    const auto c = static_cast<unsigned char>(i);
    const std::uint8_t v = alphabet.classify(c);
    std::uint8_t e = 0;
    if (is_space(c) || (skip_hyphens && c == '-')) {
      e = kSlow | kSkipCode;
    } else if (v == kCodeInvalid) {
      e = kSlow | kInvalidCode;
    } else {
      e = v == kCodeForeign ? (kSlow | kForeign | alphabet.unknown()) : v;
      if (c >= 'a' && c <= 'z') e |= kLower;
    }
    classes[c] = e;
  }
  return classes;
}

// ---------------------------------------------------------------------------------------------------
// 3. LetterSample
// ---------------------------------------------------------------------------------------------------

constexpr std::size_t kSampleLetters = 64 << 10;  // residue letters guess_alphabet() decides from
constexpr std::size_t kMaxLookahead = 16 << 20;   // input bytes the look-ahead may hold

// Follows the input line by line (pieces of lines, as they arrive in the buffer) with a lenient copy of
// the record grammar, to find the format (the first line starting with '>' or '@') and the first
// kSampleLetters letters of sequence data. It never reports errors: the parser does, with lines.
class LetterSample {
 public:
  explicit LetterSample(SeqFormat format) : format_(format) {}

  // Feeds the next piece of the current line; line_end when the piece reaches the line's end.
  void add(std::string_view piece, bool line_end) {
    if (at_line_start_ && !piece.empty()) start_line(static_cast<unsigned char>(piece[0]));
    if (role_ == Role::kSequence || role_ == Role::kQuality) {
      for (const char ch : piece) {
        const auto c = static_cast<unsigned char>(ch);
        if (is_space(c)) continue;
        if (role_ == Role::kQuality) {
          ++quality_length_;
          continue;
        }
        ++record_length_;
        if (((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && letters_.size() < kSampleLetters) {
          letters_.push_back(static_cast<char>(c));
        }
      }
    }
    if (!line_end) return;
    at_line_start_ = true;
    if (role_ == Role::kQuality && quality_length_ >= record_length_) fastq_expect_ = FastqPart::kHeader;
  }

  bool format_known() const { return format_ != SeqFormat::kAuto; }
  bool letters_full() const { return letters_.size() >= kSampleLetters; }
  SeqFormat format() const { return format_known() ? format_ : SeqFormat::kFasta; }
  std::string_view letters() const { return letters_; }

 private:
  enum class Role : std::uint8_t { kSkip, kSequence, kQuality };
  enum class FastqPart : std::uint8_t { kHeader, kSequence, kQuality };

  void start_line(unsigned char c) {
    at_line_start_ = false;
    role_ = Role::kSkip;
    if (format_ == SeqFormat::kAuto) {
      if (c == '>') format_ = SeqFormat::kFasta;
      if (c == '@') format_ = SeqFormat::kFastq;
      if (format_ == SeqFormat::kAuto) return;  // a blank, comment or stray line before any header
    }
    if (format_ == SeqFormat::kFasta) {
      if (c != '>' && c != ';') role_ = Role::kSequence;
      return;
    }
    switch (fastq_expect_) {
      case FastqPart::kHeader:
        if (c == '@') {
          fastq_expect_ = FastqPart::kSequence;
          record_length_ = 0;
        }
        break;
      case FastqPart::kSequence:
        if (c == '+') {
          fastq_expect_ = FastqPart::kQuality;
          quality_length_ = 0;
          if (record_length_ == 0) fastq_expect_ = FastqPart::kHeader;
        } else {
          role_ = Role::kSequence;
        }
        break;
      case FastqPart::kQuality: role_ = Role::kQuality; break;
    }
  }

  SeqFormat format_;
  Role role_ = Role::kSkip;
  bool at_line_start_ = true;
  FastqPart fastq_expect_ = FastqPart::kHeader;
  std::uint64_t record_length_ = 0;   // non-whitespace sequence bytes of the current FASTQ record
  std::uint64_t quality_length_ = 0;  // non-whitespace quality bytes of the current FASTQ record
  std::string letters_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------
// 4. SequenceReader::Impl
// ---------------------------------------------------------------------------------------------------
//
// Buffer invariant: buf_[pos_, end_) holds input bytes not yet consumed; line_ is the line of buf_[pos_].
// Outside the constructor's look-ahead, fill() is only called once [pos_, end_) is fully consumed, so
// buf_ stays at options.buffer_bytes (the look-ahead may double it until it holds kMaxLookahead bytes;
// it shrinks back at the first refill after the look-ahead's bytes are consumed). Between records pos_ is at
// the start of a line.
struct SequenceReader::Impl {
  Impl(const std::string& path, const ReaderOptions& options)
      : path_(path),
        options_(options),
        buffer_bytes_(std::max<std::size_t>(options.buffer_bytes, 1)),
        source_(path),
        buf_(buffer_bytes_),
        format_(options.format),
        alphabet_(options.alphabet.value_or(AlphabetKind::kProtein)) {
    look_ahead();
    classes_ = build_classes(alphabet_, options_.skip_hyphens);
  }

  bool next(Sequence& seq) {
    seq.clear();
    if (!skip_to_record()) return false;
    if (headerless_) {  // allow_unnamed: a first record without a header line
      headerless_ = false;
      in_records_ = true;
      seq.line = line_;
    } else {
      read_header(seq);
    }
    record_unknown_ = 0;
    if (format_ == SeqFormat::kFasta) {
      read_fasta_body(seq);
    } else {
      read_fastq_body(seq);
    }
    if (seq.residues.empty() && !options_.allow_empty_sequences) {
      fail(ErrorKind::kInput, "empty sequence '" + seq.name + "'", seq.line);
    }
    ++records_;
    residues_ += seq.residues.size();
    unknown_ += record_unknown_;
    return true;
  }

  [[noreturn]] void fail(ErrorKind kind, std::string message, std::uint64_t line) const {
    throw Error(kind, std::move(message), path_, line);
  }

  // ----- buffer ------------------------------------------------------------------------------------

  // Appends input after the unconsumed bytes (moved to the front). False at the end of the input.
  bool fill() {
    if (eof_) return false;
    if (pos_ == end_) {
      pos_ = end_ = 0;
      if (buf_.size() > buffer_bytes_) std::vector<char>(buffer_bytes_).swap(buf_);
    } else if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (end_ == buf_.size()) buf_.resize(2 * buf_.size());  // look-ahead only: the buffer is all unconsumed
    const std::size_t got = source_.read(buf_.data() + end_, buf_.size() - end_);
    if (got == 0) {
      eof_ = true;
      return false;
    }
    end_ += got;
    delivered_ += got;
    return true;
  }

  bool at_end() { return pos_ == end_ && !fill(); }

  // Resolves format_ and alphabet_ from up to kMaxLookahead bytes of input, consuming none of them.
  void look_ahead() {
    const bool need_alphabet = !options_.alphabet.has_value();
    if (format_ != SeqFormat::kAuto && !need_alphabet) return;
    LetterSample sample(format_);
    std::size_t scan = 0;  // buf_[0, scan) has been fed to the sample; pos_ stays 0
    const auto done = [&] { return sample.format_known() && (!need_alphabet || sample.letters_full()); };
    while (!done()) {
      const std::size_t limit = std::min(end_, kMaxLookahead);
      const char* begin = buf_.data() + scan;
      if (const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', limit - scan))) {
        sample.add(std::string_view(begin, static_cast<std::size_t>(nl - begin)), true);
        scan = static_cast<std::size_t>(nl - buf_.data()) + 1;
        continue;
      }
      sample.add(std::string_view(begin, limit - scan), false);
      scan = limit;
      if (limit == kMaxLookahead || !fill()) break;
    }
    format_ = sample.format();
    if (need_alphabet) alphabet_ = Alphabet(guess_alphabet(sample.letters()));
  }

  // ----- lines ---------------------------------------------------------------------------------------

  // Reads the rest of the current line into out (replacing it), without its '\n' and final '\r'.
  void read_line(std::string& out) {
    out.clear();
    append_line(out);
    if (!out.empty() && out.back() == '\r') out.pop_back();
  }

  // Appends the rest of the current line to out, without its '\n', and consumes the '\n'.
  void append_line(std::string& out) {
    for (;;) {
      const char* begin = buf_.data() + pos_;
      if (const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_))) {
        out.append(begin, nl);
        pos_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
        ++line_;
        return;
      }
      out.append(begin, end_ - pos_);
      pos_ = end_;
      if (!fill()) return;
    }
  }

  // Consumes the rest of the current line and its '\n'.
  void skip_line() {
    for (;;) {
      const char* begin = buf_.data() + pos_;
      if (const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_))) {
        pos_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
        ++line_;
        return;
      }
      pos_ = end_;
      if (!fill()) return;
    }
  }

  // Consumes the current line if it is blank. False (pos_ then inside the line) if it is not.
  bool skip_blank_line() {
    for (;;) {
      for (; pos_ < end_; ++pos_) {
        const auto c = static_cast<unsigned char>(buf_[pos_]);
        if (c == '\n') {
          ++pos_;
          ++line_;
          return true;
        }
        if (!is_space(c)) return false;
      }
      if (!fill()) return true;
    }
  }

  // ----- records -------------------------------------------------------------------------------------

  // Skips blank lines (and ';' comment lines before the first record) up to the next header.
  // Returns false at the end of the input.
  bool skip_to_record() {
    const char header = format_ == SeqFormat::kFasta ? '>' : '@';
    for (;;) {
      if (at_end()) return false;
      const std::uint64_t line = line_;
      if (buf_[pos_] == header) return true;
      if (!in_records_ && buf_[pos_] == ';') {
        skip_line();
        continue;
      }
      if (skip_blank_line()) continue;
      if (!in_records_ && options_.allow_unnamed && format_ == SeqFormat::kFasta) {
        headerless_ = true;
        return true;
      }
      if (!in_records_) {
        fail(ErrorKind::kFormat, std::string("text before the first '") + header + "' header line", line);
      }
      fail(ErrorKind::kFormat, "expected a '@' header line (start of a FASTQ record)", line);
    }
  }

  // Reads the header line at pos_ into seq.name, seq.description and seq.line.
  void read_header(Sequence& seq) {
    seq.line = line_;
    const char marker = buf_[pos_];
    ++pos_;
    read_line(header_);
    const std::string_view text = header_;
    std::size_t name_begin = 0;
    if (options_.allow_unnamed)
      while (name_begin < text.size() && is_space(static_cast<unsigned char>(text[name_begin]))) ++name_begin;
    std::size_t name_end = name_begin;
    while (name_end < text.size() && !is_space(static_cast<unsigned char>(text[name_end]))) ++name_end;
    if (name_end == name_begin && !options_.allow_unnamed) {
      fail(ErrorKind::kFormat, std::string("missing sequence name after '") + marker + "'", seq.line);
    }
    std::size_t desc = name_end;
    while (desc < text.size() && is_space(static_cast<unsigned char>(text[desc]))) ++desc;
    seq.name.assign(text.substr(name_begin, name_end - name_begin));
    seq.description.assign(text.substr(desc));
    if (options_.keep_header) seq.header.assign(text);
    in_records_ = true;
  }

  // Sequence lines up to the next header line or the end of the input.
  void read_fasta_body(Sequence& seq) {
    while (!at_end() && buf_[pos_] != '>') read_sequence_line(seq);
  }

  // Sequence lines, the '+' line, then quality lines until the quality is as long as the sequence.
  void read_fastq_body(Sequence& seq) {
    for (;;) {
      if (at_end()) fail(ErrorKind::kFormat, "missing '+' line in FASTQ record '" + seq.name + "'", line_);
      if (buf_[pos_] == '+') break;
      read_sequence_line(seq);
    }
    const std::uint64_t plus_line = line_;
    ++pos_;
    read_line(scratch_);
    if (!scratch_.empty() && scratch_ != header_ && scratch_ != seq.name) {
      fail(ErrorKind::kFormat, "'+' line does not repeat the header of FASTQ record '" + seq.name + "'",
           plus_line);
    }
    const std::size_t length = seq.residues.size();
    std::uint64_t last_line = plus_line;  // the '+' line or the last quality line
    while (seq.quality.size() < length) {
      if (at_end()) fail_quality_length(seq, seq.quality.size(), last_line);
      const std::uint64_t line = line_;
      const bool at_sign = buf_[pos_] == '@';
      const std::size_t old = seq.quality.size();
      append_line(seq.quality);
      if (seq.quality.size() > old && seq.quality.back() == '\r') seq.quality.pop_back();
      const std::string_view added = std::string_view(seq.quality).substr(old);
      if (std::all_of(added.begin(), added.end(),
                      [](char c) { return is_space(static_cast<unsigned char>(c)); })) {
        seq.quality.resize(old);  // a blank line
        continue;
      }
      for (const char ch : added) {
        if (ch < '!' || ch > '~') {
          fail(ErrorKind::kFormat, "invalid quality character " + quote(static_cast<unsigned char>(ch)),
               line);
        }
      }
      // A line starting with '@' that overshoots is most likely the next header after a short quality.
      if (seq.quality.size() > length) {
        if (at_sign) fail_quality_length(seq, old, last_line);
        fail_quality_length(seq, seq.quality.size(), line);
      }
      last_line = line;
    }
  }

  [[noreturn]] void fail_quality_length(const Sequence& seq, std::size_t quality, std::uint64_t line) const {
    fail(ErrorKind::kFormat,
         "quality length " + std::to_string(quality) + " differs from sequence length " +
             std::to_string(seq.residues.size()) + " in FASTQ record '" + seq.name + "'",
         line);
  }

  // Digitizes the current sequence line (which may span refills) and consumes its '\n'.
  void read_sequence_line(Sequence& seq) {
    for (;;) {
      const char* begin = buf_.data() + pos_;
      if (const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_))) {
        append_residues(begin, static_cast<std::size_t>(nl - begin), seq);
        pos_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
        ++line_;
        return;
      }
      append_residues(begin, end_ - pos_, seq);
      pos_ = end_;
      if (!fill()) return;
    }
  }

  // Fast path for a piece of a sequence line: digitize() every byte, then redo the piece with
  // append_residues_slow() if any byte needs it (kSlow), or add its lower-case runs to the soft mask.
  // A final '\r' (CRLF) is whitespace, dropped here so that CRLF lines stay on the fast path.
  void append_residues(const char* p, std::size_t n, Sequence& seq) {
    if (n > 0 && p[n - 1] == '\r') --n;
    const std::size_t old = seq.residues.size();
    seq.residues.resize(old + n);
    const std::uint8_t seen = digitize(p, n, seq.residues.data() + old);
    if ((seen & kSlow) != 0) {
      seq.residues.resize(old);
      append_residues_slow(p, n, seq);
    } else if ((seen & kLower) != 0) {
      add_lower_case_runs(p, n, old, seq);
    }
  }

  // Writes the code of each byte p[0, n) to dst and returns the OR of their classes. Eight bytes per
  // step: one load, eight table lookups, one store (byte order is the same for the load and the store,
  // so this holds on any endianness).
  std::uint8_t digitize(const char* p, std::size_t n, std::uint8_t* dst) const {
    constexpr std::uint64_t kCodeLanes = 0x0101010101010101ULL * kCodeBits;
    const std::uint8_t* classes = classes_.data();
    std::uint64_t seen = 0;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t in = 0;
      std::memcpy(&in, p + i, 8);
      std::uint64_t e = 0;
      for (int b = 0; b < 64; b += 8) e |= std::uint64_t{classes[(in >> b) & 0xFF]} << b;
      seen |= e;
      e &= kCodeLanes;
      std::memcpy(dst + i, &e, 8);
    }
    for (; i < n; ++i) {
      const std::uint8_t e = classes[static_cast<unsigned char>(p[i])];
      seen |= e;
      dst[i] = e & kCodeBits;
    }
    seen |= seen >> 32;
    seen |= seen >> 16;
    seen |= seen >> 8;
    return static_cast<std::uint8_t>(seen);
  }

  // Soft-masks the lower-case runs of p[0, n), a piece without whitespace whose residues start at
  // position first.
  static void add_lower_case_runs(const char* p, std::size_t n, std::size_t first, Sequence& seq) {
    const auto is_lower = [p](std::size_t i) { return p[i] >= 'a' && p[i] <= 'z'; };
    for (std::size_t i = 0; i < n;) {
      if (!is_lower(i)) {
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      while (j < n && is_lower(j)) ++j;
      add_mask_run(seq, first + i, first + j);
      i = j;
    }
  }

  // Appends [begin, end) to the soft mask, merged with the last run if adjacent. Runs stay sorted,
  // non-overlapping and non-adjacent because positions only grow (also across lines).
  static void add_mask_run(Sequence& seq, std::uint64_t begin, std::uint64_t end) {
    if (!seq.soft_mask.empty() && seq.soft_mask.back().end == begin) {
      seq.soft_mask.back().end = end;
    } else {
      seq.soft_mask.push_back(MaskRun{begin, end});
    }
  }

  // Slow path, byte by byte: skips whitespace, maps foreign letters (or rejects them with strict_letters),
  // soft-masks lower-case letters, rejects invalid bytes.
  void append_residues_slow(const char* p, std::size_t n, Sequence& seq) {
    std::size_t k = seq.residues.size();
    seq.residues.resize(k + n);
    std::uint8_t* out = seq.residues.data();
    for (std::size_t i = 0; i < n; ++i) {
      const auto c = static_cast<unsigned char>(p[i]);
      const std::uint8_t e = classes_[c];
      const std::uint8_t code = e & kCodeBits;
      if (code == kSkipCode) {
        if (c == '-' && hyphens_++ == 0) first_hyphen_line_ = line_;
        continue;
      }
      if (code == kInvalidCode) {
        fail(ErrorKind::kFormat, "invalid character " + quote(c) + " in sequence", line_);
      }
      if ((e & kForeign) != 0) {
        if (options_.strict_letters) {
          fail(ErrorKind::kFormat,
               "letter " + quote(c) + " is not in the " + std::string(to_string(alphabet_.kind())) +
                   " alphabet",
               line_);
        }
        ++record_unknown_;
      }
      if ((e & kLower) != 0) add_mask_run(seq, k, k + 1);
      out[k++] = code;
    }
    seq.residues.resize(k);
  }

  // ----- state ---------------------------------------------------------------------------------------

  std::string path_;
  ReaderOptions options_;
  std::size_t buffer_bytes_;
  ByteSource source_;
  std::vector<char> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t delivered_ = 0;  // uncompressed bytes put into buf_ so far
  std::uint64_t line_ = 1;
  SeqFormat format_;
  Alphabet alphabet_;
  ByteClasses classes_{};
  bool in_records_ = false;  // a header has been read
  bool headerless_ = false;  // skip_to_record() stopped at a first record without a header (allow_unnamed)
  std::string header_;       // the last header line, without the marker
  std::string scratch_;      // the last FASTQ '+' line, without the '+'
  std::uint64_t record_unknown_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t residues_ = 0;
  std::uint64_t unknown_ = 0;
  std::uint64_t hyphens_ = 0;
  std::uint64_t first_hyphen_line_ = 0;
};

// ---------------------------------------------------------------------------------------------------
// 5. SequenceReader
// ---------------------------------------------------------------------------------------------------

SequenceReader::SequenceReader(const std::string& path, ReaderOptions options)
    : impl_(std::make_unique<Impl>(path, options)) {}
SequenceReader::~SequenceReader() = default;
SequenceReader::SequenceReader(SequenceReader&&) noexcept = default;
SequenceReader& SequenceReader::operator=(SequenceReader&&) noexcept = default;

bool SequenceReader::next(Sequence& seq) { return impl_->next(seq); }
const std::string& SequenceReader::path() const { return impl_->path_; }
SeqFormat SequenceReader::format() const { return impl_->format_; }
const Alphabet& SequenceReader::alphabet() const { return impl_->alphabet_; }
bool SequenceReader::gzipped() const { return impl_->source_.gzipped(); }
std::uint64_t SequenceReader::records() const { return impl_->records_; }
std::uint64_t SequenceReader::residues() const { return impl_->residues_; }
std::uint64_t SequenceReader::unknown_letters() const { return impl_->unknown_; }
std::uint64_t SequenceReader::hyphens() const { return impl_->hyphens_; }
std::uint64_t SequenceReader::first_hyphen_line() const { return impl_->first_hyphen_line_; }
std::uint64_t SequenceReader::bytes_read() const { return impl_->delivered_ - (impl_->end_ - impl_->pos_); }
std::uint64_t SequenceReader::line() const { return impl_->line_; }

}  // namespace warpsearch
