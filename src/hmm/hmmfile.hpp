// Reader of HMMER3 ASCII save files (formats HMMER3/a .. HMMER3/f), equivalent to HMMER 3.3.2's
// p7_hmmfile.c (open_engine + read_asc30hmm): same accepted syntax, same float conversion of every
// field (a probability field "x" becomes expf((float)-strtod(x)), "*" becomes 0; STATS, GA/TC/NC and
// EFFN are (float)strtod), same legacy handling (formats before 3/e get a consensus line from
// set_consensus). Plain or gzip-compressed files (read through zlib, detected by content), any number
// of models per file. Binary (pressed) files and the HMMER2 format are not supported.
//
// Errors are warpsearch::Error: kIo when the file cannot be opened or read, kFormat for anything
// malformed, with the file path and the 1-based line number of the offending line (for a premature
// end of file, the last line read) and a message naming what was expected (HMMER's wording).
// Deliberate difference from HMMER: a model truncated inside its header (HMMER silently treats that as
// a normal end of file) is a kFormat error here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/hmm.hpp"

namespace warpsearch::hmm {

/// File format version of a HMMER3 ASCII file, ordered as HMMER's p7_HMMFILE_3a .. 3f.
enum class HmmFormat { k3a, k3b, k3c, k3d, k3e, k3f };

class HmmReader {
 public:
  /// Opens path (plain or gzip; "-" reads stdin) and reads its format tag. Throws Error(kIo) if it cannot be
  /// opened, Error(kFormat) if the first data line is not a HMMER3/a..f tag.
  explicit HmmReader(const std::string& path);
  ~HmmReader();
  HmmReader(const HmmReader&) = delete;
  HmmReader& operator=(const HmmReader&) = delete;

  /// The next model, or std::nullopt at the end of the file. All models of a file must use the
  /// format tag of the first one and the same alphabet (else Error kFormat, as HMMER's eslEINCOMPAT).
  /// Note: for 3/e and 3/f files whose header says "CONS no", consensus stays empty (as HMMER; HMMER's
  /// profile configuration then refuses the model).
  std::optional<Hmm> next();

  HmmFormat format() const { return format_; }
  /// The alphabet of the models read so far (nullptr before the first model).
  const Abc* alphabet() const { return abc_; }
  const std::string& path() const { return path_; }

 private:
  struct Source;                                // zlib line source
  bool next_line();                             // next non-blank, non-'#' line; false at EOF
  bool token(std::string_view& tok);            // next whitespace-delimited token on the line
  bool remaining_line(std::string_view& rest);  // rest of line (leading space skipped), non-empty
  [[noreturn]] void fail(const std::string& msg) const;

  std::string path_;
  std::unique_ptr<Source> src_;
  HmmFormat format_ = HmmFormat::k3f;
  bool newly_opened_ = true;  // the tag line of the first model was consumed by the constructor
  const Abc* abc_ = nullptr;
  std::string line_;          // current line without its newline
  std::size_t pos_ = 0;       // parse position in line_
  std::uint64_t lineno_ = 0;  // 1-based number of line_ in the file
};

/// Reads every model of a file (convenience for tests and small tools).
std::vector<Hmm> read_all_hmms(const std::string& path);

/// The format tag string ("HMMER3/f") of a format.
const char* hmm_format_tag(HmmFormat f);

}  // namespace warpsearch::hmm
