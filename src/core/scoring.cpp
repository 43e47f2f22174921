// scoring.cpp: GapCosts validation and ScoringMatrix construction: the NCBI text parser (used for
// files and for the built-in tables of builtin_matrices.cpp), the fill rule for letters a file leaves
// out, nucleotide match/mismatch scoring and the BLAST+ default gap costs.
#include "warpsearch/scoring.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "core/builtin_matrices.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch {
namespace {

// A matrix file larger than this is certainly something else (a sequence file given by mistake).
constexpr std::size_t kMaxMatrixFileBytes = 1 << 20;

constexpr int kMinStoredScore = std::numeric_limits<std::int8_t>::min();
constexpr int kMaxStoredScore = std::numeric_limits<std::int8_t>::max();

// BLAST+ default gap costs of the built-in matrices (BLAST+ blast_stat.c, first row of each table).
struct BuiltinDefaults {
  std::string_view name;
  GapCosts gaps;
};
constexpr std::array<BuiltinDefaults, 8> kBuiltinDefaults{{
    {"BLOSUM45", {14, 2}},
    {"BLOSUM50", {13, 2}},
    {"BLOSUM62", {11, 1}},
    {"BLOSUM80", {10, 1}},
    {"BLOSUM90", {10, 1}},
    {"PAM30", {9, 1}},
    {"PAM70", {10, 1}},
    {"PAM250", {14, 2}},
}};
constexpr auto kBuiltinNames = [] {
  std::array<std::string_view, kBuiltinDefaults.size()> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = kBuiltinDefaults[i].name;
  return names;
}();
constexpr GapCosts kNucleotideDefaultGaps{5, 2};

// Header letters that make a matrix file nucleotide (when all its letters are among them).
constexpr std::string_view kNucleotideLetters = "ACGTURYMKSWHBVDN";

// Index of codes (a, b) in the row-major padded table.
constexpr std::size_t cell(int a, int b) { return static_cast<std::size_t>(a * kMaxCodes + b); }

char to_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool is_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return to_upper(x) == to_upper(y); });
}

std::optional<std::size_t> builtin_index(std::string_view name) {
  for (std::size_t i = 0; i < kBuiltinNames.size(); ++i) {
    if (iequals(name, kBuiltinNames[i])) return i;
  }
  return std::nullopt;
}

// A token for an error message, quoted: at most 20 bytes, other than printable ASCII as \xNN.
std::string quoted(std::string_view token) {
  constexpr std::size_t kShown = 20;
  std::string out = "'";
  for (const char c : token.substr(0, kShown)) {
    if (c >= ' ' && c <= '~') {
      out += c;
    } else {
      out += fmt::format("\\x{:02X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    }
  }
  if (token.size() > kShown) out += "...";
  return out + "'";
}

// Splits one line into whitespace-separated tokens, dropping everything from '#' on.
std::vector<std::string_view> tokenize(std::string_view line) {
  line = line.substr(0, line.find('#'));
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

enum class ScoreToken { kValid, kNotInteger, kOutOfRange };

// Parses a score ("-4", "+3", "11") that must fit in int8.
ScoreToken parse_score(std::string_view token, std::int8_t& score) {
  if (token.size() > 1 && token[0] == '+' && token[1] != '-') token.remove_prefix(1);
  int value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (end != token.data() + token.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    return ScoreToken::kNotInteger;
  }
  if (ec == std::errc::result_out_of_range || value < kMinStoredScore || value > kMaxStoredScore) {
    return ScoreToken::kOutOfRange;
  }
  score = static_cast<std::int8_t>(value);
  return ScoreToken::kValid;
}

// The lines of a text with their 1-based numbers; a final '\n' does not start another line.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  std::uint64_t number() const { return number_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::uint64_t number_ = 0;
};

std::string file_name_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string read_matrix_file(const std::string& path) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw_system_error("cannot open matrix file", path);
  std::string text;
  char buffer[1 << 14];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, got);
    if (text.size() > kMaxMatrixFileBytes) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("larger than {} bytes: not a scoring matrix file", kMaxMatrixFileBytes), path);
    }
  }
  if (std::ferror(file.get())) throw_system_error("cannot read matrix file", path);
  return text;
}

}  // namespace

void GapCosts::validate() const {
  if (open < 0) throw Error(ErrorKind::kUsage, fmt::format("gap open cost must be >= 0 (got {})", open));
  if (extend < 0)
    throw Error(ErrorKind::kUsage, fmt::format("gap extend cost must be >= 0 (got {})", extend));
  if (open > kMaxGapCost || extend > kMaxGapCost)
    throw Error(ErrorKind::kUsage, fmt::format("gap costs must be at most {} (got open {}, extend {})",
                                               kMaxGapCost, open, extend));
}

ScoringMatrix::ScoringMatrix(std::string name, AlphabetKind alphabet, const Table& table,
                             GapCosts default_gaps)
    : name_(std::move(name)), alphabet_(alphabet), table_(table), default_gaps_(default_gaps) {
  const int n = size();
  const int canonical = Alphabet(alphabet).canonical_size();
  min_score_ = canonical_min_ = kMaxStoredScore;
  max_score_ = canonical_max_ = kMinStoredScore;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const int s = table_[cell(a, b)];
      min_score_ = std::min(min_score_, s);
      max_score_ = std::max(max_score_, s);
      if (a < canonical && b < canonical) {
        canonical_min_ = std::min(canonical_min_, s);
        canonical_max_ = std::max(canonical_max_, s);
      }
    }
  }
  for (int a = 0; a < kMaxCodes; ++a) {
    for (int b = 0; b < kMaxCodes; ++b) {
      if (a >= n || b >= n) table_[cell(a, b)] = static_cast<std::int8_t>(min_score_);
    }
  }
}

// The NCBI text format: the first non-blank line (once '#' comments are dropped) is the header of
// column letters; every other non-blank line is a row: its letter, then one integer per column. Rows
// may come in any order, but each header letter needs exactly one row.
ScoringMatrix ScoringMatrix::parse(std::string_view text, const std::string& file, std::string name) {
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string_view> header;
  while (header.empty() && lines.next(line)) header = tokenize(line);
  if (header.empty())
    throw Error(ErrorKind::kFormat, "no header row of residue letters (empty matrix)", file, 0);
  const std::uint64_t header_line = lines.number();

  for (const std::string_view token : header) {
    if (token.size() != 1 || (!is_letter(token[0]) && token[0] != '*')) {
      throw Error(ErrorKind::kFormat, fmt::format("header token {} is not a residue letter", quoted(token)),
                  file, header_line);
    }
  }
  const auto in_header = [&](char letter) {
    return std::any_of(header.begin(), header.end(),
                       [&](std::string_view t) { return to_upper(t[0]) == letter; });
  };
  const bool nucleotide = std::all_of(header.begin(), header.end(), [](std::string_view t) {
    return kNucleotideLetters.find(to_upper(t[0])) != std::string_view::npos;
  });
  AlphabetKind kind = AlphabetKind::kProtein;
  if (nucleotide) kind = (in_header('U') && !in_header('T')) ? AlphabetKind::kRna : AlphabetKind::kDna;
  const Alphabet alphabet(kind);

  // columns[i]: code of the i-th header letter; column_of[code]: its index in columns, or -1.
  std::vector<std::uint8_t> columns;
  std::array<int, kMaxCodes> column_of{};
  column_of.fill(-1);
  for (const std::string_view token : header) {
    const std::uint8_t code = *alphabet.code(token[0]);  // every letter and '*' has a code here
    if (column_of[code] >= 0) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("header letter {} repeats residue '{}'", quoted(token), alphabet.symbol(code)),
                  file, header_line);
    }
    column_of[code] = static_cast<int>(columns.size());
    columns.push_back(code);
  }
  for (int code = 0; code < alphabet.canonical_size(); ++code) {
    if (column_of[static_cast<std::size_t>(code)] < 0) {
      throw Error(
          ErrorKind::kFormat,
          fmt::format("header lacks the residue '{}'", alphabet.symbol(static_cast<std::uint8_t>(code))),
          file, header_line);
    }
  }

  Table raw{};  // the file's scores, at the cells of header letters
  std::array<bool, kMaxCodes> has_row{};
  while (lines.next(line)) {
    const std::vector<std::string_view> tokens = tokenize(line);
    if (tokens.empty()) continue;
    const std::string_view label = tokens[0];
    const std::optional<std::uint8_t> code = label.size() == 1 ? alphabet.code(label[0]) : std::nullopt;
    if (!code || column_of[*code] < 0) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("row label {} is not a letter of the header", quoted(label)), file,
                  lines.number());
    }
    if (has_row[*code]) {
      throw Error(ErrorKind::kFormat, fmt::format("second row for residue '{}'", alphabet.symbol(*code)),
                  file, lines.number());
    }
    has_row[*code] = true;
    if (tokens.size() - 1 != columns.size()) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("row {} has {} scores, the header has {} letters", quoted(label),
                              tokens.size() - 1, columns.size()),
                  file, lines.number());
    }
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string_view token = tokens[i + 1];
      switch (parse_score(token, raw[cell(*code, columns[i])])) {
        case ScoreToken::kValid: break;
        case ScoreToken::kNotInteger:
          throw Error(ErrorKind::kFormat, fmt::format("score {} is not an integer", quoted(token)), file,
                      lines.number());
        case ScoreToken::kOutOfRange:
          throw Error(
              ErrorKind::kFormat,
              fmt::format("score {} is outside {}..{}", quoted(token), kMinStoredScore, kMaxStoredScore),
              file, lines.number());
      }
    }
  }
  for (const std::uint8_t code : columns) {
    if (!has_row[code]) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("the matrix ends without a row for '{}' of the header", alphabet.symbol(code)),
                  file, lines.number());
    }
  }

  // Codes the file leaves out take the row and column of the unknown code (X or N); when that is left
  // out too, pairs involving a left-out code score the minimum canonical score.
  int canonical_min = kMaxStoredScore;
  for (int a = 0; a < alphabet.canonical_size(); ++a) {
    for (int b = 0; b < alphabet.canonical_size(); ++b)
      canonical_min = std::min<int>(canonical_min, raw[cell(a, b)]);
  }
  const int unknown = alphabet.unknown();
  const bool has_unknown = column_of[static_cast<std::size_t>(unknown)] >= 0;
  const auto stand_in = [&](int code) {
    return column_of[static_cast<std::size_t>(code)] >= 0 ? code : unknown;
  };
  Table table{};
  for (int a = 0; a < alphabet.size(); ++a) {
    for (int b = 0; b < alphabet.size(); ++b) {
      const int sa = stand_in(a), sb = stand_in(b);
      const bool in_file = has_unknown || (sa != unknown && sb != unknown);
      table[cell(a, b)] = in_file ? raw[cell(sa, sb)] : static_cast<std::int8_t>(canonical_min);
    }
  }
  return ScoringMatrix(std::move(name), kind, table, GapCosts{});
}

std::span<const ScoringMatrix> ScoringMatrix::builtins() {
  static const std::vector<ScoringMatrix> matrices = [] {
    const std::span<const detail::BuiltinMatrixText> texts = detail::builtin_matrix_texts();
    std::vector<ScoringMatrix> parsed;
    for (const BuiltinDefaults& defaults : kBuiltinDefaults) {
      const auto text = std::find_if(texts.begin(), texts.end(), [&](const detail::BuiltinMatrixText& t) {
        return t.name == defaults.name;
      });
      if (text == texts.end()) {
        throw Error(ErrorKind::kInternal, fmt::format("built-in matrix {} is not embedded", defaults.name));
      }
      parsed.push_back(parse(text->text, std::string(defaults.name), std::string(defaults.name)));
      parsed.back().default_gaps_ = defaults.gaps;
    }
    return parsed;
  }();
  return matrices;
}

ScoringMatrix ScoringMatrix::builtin(std::string_view name) {
  const std::optional<std::size_t> index = builtin_index(name);
  if (!index) {
    throw Error(ErrorKind::kUsage, fmt::format("unknown scoring matrix {} (built-in matrices: {})",
                                               quoted(name), fmt::join(kBuiltinNames, ", ")));
  }
  return builtins()[*index];
}

std::span<const std::string_view> ScoringMatrix::builtin_names() { return kBuiltinNames; }

bool ScoringMatrix::is_builtin(std::string_view name) { return builtin_index(name).has_value(); }

ScoringMatrix ScoringMatrix::from_ncbi_text(std::string_view text, const std::string& source_name) {
  ScoringMatrix matrix = parse(text, source_name, source_name);
  for (const ScoringMatrix& builtin : builtins()) {
    if (matrix.same_scores(builtin)) matrix.default_gaps_ = builtin.default_gaps_;
  }
  return matrix;
}

ScoringMatrix ScoringMatrix::from_ncbi_file(const std::string& path) {
  ScoringMatrix matrix = from_ncbi_text(read_matrix_file(path), path);
  matrix.name_ = file_name_of(path);
  return matrix;
}

ScoringMatrix ScoringMatrix::load(const std::string& name_or_path) {
  if (is_builtin(name_or_path)) return builtin(name_or_path);
  // A bare name (no '/') that is neither built in nor an existing file: a mistyped matrix name
  // (docs/SCORING.md); a path that does not exist stays an I/O error naming the file.
  std::error_code ec;
  if (name_or_path.find('/') == std::string::npos && !std::filesystem::exists(name_or_path, ec))
    throw Error(ErrorKind::kUsage, fmt::format("matrix {}: not a built-in matrix ({}) nor a matrix file",
                                               name_or_path, fmt::join(builtin_names(), ", ")));
  return from_ncbi_file(name_or_path);
}

ScoringMatrix ScoringMatrix::dna(int match, int mismatch, AlphabetKind kind) {
  if (kind == AlphabetKind::kProtein) {
    throw Error(ErrorKind::kUsage, "match/mismatch scoring needs a nucleotide alphabet (dna or rna)");
  }
  if (match < 1 || match > kMaxStoredScore) {
    throw Error(ErrorKind::kUsage,
                fmt::format("match score must be in 1..{} (got {})", kMaxStoredScore, match));
  }
  if (mismatch < kMinStoredScore || mismatch > -1) {
    throw Error(ErrorKind::kUsage,
                fmt::format("mismatch score must be in {}..-1 (got {})", kMinStoredScore, mismatch));
  }
  const Alphabet alphabet(kind);
  Table table{};
  for (int a = 0; a < alphabet.size(); ++a) {
    for (int b = 0; b < alphabet.size(); ++b) {
      const bool identical = a == b && a < alphabet.canonical_size();
      table[cell(a, b)] = static_cast<std::int8_t>(identical ? match : mismatch);
    }
  }
  return ScoringMatrix(fmt::format("{}:+{}/{}", to_string(kind), match, mismatch), kind, table,
                       kNucleotideDefaultGaps);
}

bool ScoringMatrix::symmetric() const {
  for (int a = 0; a < kMaxCodes; ++a) {
    for (int b = a + 1; b < kMaxCodes; ++b) {
      if (table_[cell(a, b)] != table_[cell(b, a)]) return false;
    }
  }
  return true;
}

bool ScoringMatrix::same_scores(const ScoringMatrix& other) const {
  return alphabet_ == other.alphabet_ && table_ == other.table_;
}

}  // namespace warpsearch
