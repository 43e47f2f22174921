// test_scoring.cpp: scoring systems: gap-cost convention, built-in NCBI matrices (spot values, defaults,
// equality with the NCBI files), the NCBI text parser (fill rule for left-out letters, nucleotide files,
// malformed files with exact line numbers), match/mismatch DNA scoring, table padding, and the
// fuzz_matrix regression corpus.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch {
namespace {

std::uint8_t aa(char c) { return *Alphabet::protein().code(c); }
std::uint8_t nt(char c) { return *Alphabet::dna().code(c); }

// Text of a matrix over `letters`: `diagonal` on the diagonal, -1 elsewhere, with one comment line.
std::string simple_matrix(std::string_view letters, int diagonal = 5) {
  std::string text = "# test matrix\n ";
  for (const char c : letters) text += std::string("  ") + c;
  text += '\n';
  for (const char row : letters) {
    text += row;
    for (const char column : letters) text += ' ' + std::to_string(row == column ? diagonal : -1);
    text += '\n';
  }
  return text;
}

constexpr std::string_view kCanonical = "ACDEFGHIKLMNPQRSTVWY";

// A row line: the label, `first` scores verbatim, then `rest` scores of -1.
std::string score_row(char label, const std::string& first, int rest) {
  std::string line = std::string(1, label) + ' ' + first;
  for (int i = 0; i < rest; ++i) line += " -1";
  return line;
}

// Replaces line `number` (1-based) of `text` by `replacement`.
std::string replace_line(const std::string& text, int number, const std::string& replacement) {
  std::istringstream in(text);
  std::string out, line;
  for (int n = 1; std::getline(in, line); ++n) out += (n == number ? replacement : line) + '\n';
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::string text(std::filesystem::file_size(path), '\0');
  std::ifstream(path, std::ios::binary).read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

TEST(GapCosts, LengthKCostsOpenPlusKTimesExtend) {
  const GapCosts blosum62{11, 1};
  EXPECT_EQ(blosum62.cost(0), 0);
  EXPECT_EQ(blosum62.cost(1), 12);
  EXPECT_EQ(blosum62.cost(3), 14);
  const GapCosts dna{5, 2};
  EXPECT_EQ(dna.cost(1), 7);
  EXPECT_EQ(dna.cost(10), 25);
  // Defaults are BLAST+'s BLOSUM62 gaps.
  EXPECT_EQ(GapCosts{}, blosum62);
}

TEST(GapCosts, ParasailOpenIsOurOpenPlusExtend) {
  // parasail/EMBOSS charge `open` for the first gap position and `extend` for each further one:
  // parasail open 12, extend 1 is our 11/1.
  const int parasail_open = 12, parasail_extend = 1;
  const GapCosts ours{parasail_open - parasail_extend, parasail_extend};
  for (int k = 1; k <= 5; ++k) EXPECT_EQ(ours.cost(k), parasail_open + (k - 1) * parasail_extend);
}

TEST(GapCosts, ValidateRejectsNegativeCosts) {
  EXPECT_NO_THROW((GapCosts{0, 0}.validate()));
  try {
    GapCosts{-1, 1}.validate();
    FAIL() << "negative open accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  }
  EXPECT_THROW((GapCosts{1, -1}.validate()), Error);
}

TEST(ScoringMatrix, BuiltinSpotValues) {
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  EXPECT_EQ(b62.name(), "BLOSUM62");
  EXPECT_EQ(b62.alphabet(), AlphabetKind::kProtein);
  EXPECT_EQ(b62.size(), kProteinCodes);
  EXPECT_EQ(b62.score(aa('W'), aa('W')), 11);
  EXPECT_EQ(b62.score(aa('A'), aa('A')), 4);
  EXPECT_EQ(b62.score(aa('W'), aa('C')), -2);
  EXPECT_EQ(b62.score(aa('C'), aa('C')), 9);
  EXPECT_EQ(b62.score(aa('I'), aa('V')), 3);
  EXPECT_EQ(b62.score(aa('J'), aa('I')), 3);
  EXPECT_EQ(b62.score(aa('B'), aa('D')), 4);
  EXPECT_EQ(b62.score(aa('X'), aa('X')), -1);
  EXPECT_EQ(b62.score(kProteinStop, kProteinStop), 1);
  EXPECT_EQ(b62.score(aa('A'), kProteinStop), -4);

  const ScoringMatrix pam30 = ScoringMatrix::builtin("PAM30");
  EXPECT_EQ(pam30.score(aa('W'), aa('W')), 13);
  EXPECT_EQ(pam30.score(aa('A'), aa('A')), 6);
  EXPECT_EQ(pam30.score(aa('W'), aa('C')), -15);
  EXPECT_EQ(pam30.score(aa('A'), kProteinStop), -17);
  EXPECT_EQ(ScoringMatrix::builtin("BLOSUM45").score(aa('W'), aa('W')), 15);
  EXPECT_EQ(ScoringMatrix::builtin("BLOSUM90").score(aa('W'), aa('C')), -4);
  EXPECT_EQ(ScoringMatrix::builtin("PAM250").score(aa('W'), aa('W')), 17);
}

TEST(ScoringMatrix, BuiltinExtremes) {
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  EXPECT_EQ(b62.min_score(), -4);
  EXPECT_EQ(b62.max_score(), 11);
  EXPECT_EQ(b62.canonical_min_score(), -4);
  EXPECT_EQ(b62.canonical_max_score(), 11);
  const ScoringMatrix pam30 = ScoringMatrix::builtin("PAM30");
  EXPECT_EQ(pam30.min_score(), -17);
  EXPECT_EQ(pam30.canonical_max_score(), 13);
}

TEST(ScoringMatrix, BuiltinNamesAreCaseInsensitive) {
  const auto names = ScoringMatrix::builtin_names();
  ASSERT_EQ(names.size(), 8u);
  EXPECT_EQ(names.front(), "BLOSUM45");
  EXPECT_EQ(names.back(), "PAM250");
  for (const std::string_view name : names) {
    EXPECT_TRUE(ScoringMatrix::is_builtin(name));
    EXPECT_EQ(ScoringMatrix::builtin(name).name(), name);
  }
  EXPECT_EQ(ScoringMatrix::builtin("blosum62").name(), "BLOSUM62");
  EXPECT_EQ(ScoringMatrix::builtin("Pam70").name(), "PAM70");
  EXPECT_FALSE(ScoringMatrix::is_builtin("BLOSUM100"));
}

TEST(ScoringMatrix, UnknownBuiltinIsUsageErrorListingNames) {
  try {
    ScoringMatrix::builtin("BLOSUM63");
    FAIL() << "unknown matrix accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("BLOSUM63"), std::string::npos) << e.what();
    for (const std::string_view name : ScoringMatrix::builtin_names()) {
      EXPECT_NE(e.message().find(name), std::string::npos) << e.what();
    }
  }
}

TEST(ScoringMatrix, BuiltinDefaultGapsAreBlastDefaults) {
  const std::vector<std::pair<std::string, GapCosts>> expected = {
      {"BLOSUM62", {11, 1}}, {"BLOSUM45", {14, 2}}, {"BLOSUM50", {13, 2}}, {"BLOSUM80", {10, 1}},
      {"BLOSUM90", {10, 1}}, {"PAM30", {9, 1}},     {"PAM70", {10, 1}},    {"PAM250", {14, 2}}};
  for (const auto& [name, gaps] : expected)
    EXPECT_EQ(ScoringMatrix::builtin(name).default_gaps(), gaps) << name;
}

TEST(ScoringMatrix, BuiltinsAreSymmetric) {
  for (const std::string_view name : ScoringMatrix::builtin_names()) {
    EXPECT_TRUE(ScoringMatrix::builtin(name).symmetric()) << name;
  }
}

TEST(ScoringMatrix, BuiltinEqualsNcbiFile) {
  for (const std::string_view name : ScoringMatrix::builtin_names()) {
    const std::string relpath = "mat/" + std::string(name);
    WS_REQUIRE_TESTDATA(relpath);
    const std::string path = (test::testdata_dir() / relpath).string();
    const ScoringMatrix file = ScoringMatrix::from_ncbi_file(path);
    const ScoringMatrix builtin = ScoringMatrix::builtin(name);
    EXPECT_EQ(file.name(), name);
    EXPECT_EQ(file.alphabet(), AlphabetKind::kProtein);
    for (int a = 0; a < kMaxCodes; ++a) {
      for (int b = 0; b < kMaxCodes; ++b) {
        ASSERT_EQ(file.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)),
                  builtin.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)))
            << name << " codes " << a << ", " << b;
      }
    }
    EXPECT_TRUE(file.same_scores(builtin)) << name;
    // A file holding a built-in matrix gets that matrix's default gaps.
    EXPECT_EQ(file.default_gaps(), builtin.default_gaps()) << name;
  }
}

TEST(ScoringMatrix, LeftOutProteinLettersCopyX) {
  // NCBI files have no U or O: they score as X.
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  for (const char other : std::string_view("ACDEFGHIKLMNPQRSTVWYBJZX")) {
    EXPECT_EQ(b62.score(aa('U'), aa(other)), b62.score(aa('X'), aa(other))) << other;
    EXPECT_EQ(b62.score(aa(other), aa('O')), b62.score(aa(other), aa('X'))) << other;
  }
  EXPECT_EQ(b62.score(aa('U'), aa('U')), -1);
  EXPECT_EQ(b62.score(aa('U'), aa('O')), -1);
  EXPECT_EQ(b62.score(aa('O'), kProteinStop), -4);
}

TEST(ScoringMatrix, LeftOutUnknownScoresCanonicalMinimum) {
  // Canonical residues only: X and every other code score the minimum canonical score (-1 here).
  const ScoringMatrix m = ScoringMatrix::from_ncbi_text(simple_matrix(kCanonical), "canonical.mat");
  EXPECT_EQ(m.name(), "canonical.mat");
  EXPECT_EQ(m.score(aa('A'), aa('A')), 5);
  EXPECT_EQ(m.score(aa('X'), aa('X')), -1);
  EXPECT_EQ(m.score(aa('B'), aa('A')), -1);
  EXPECT_EQ(m.score(kProteinStop, kProteinStop), -1);
  EXPECT_EQ(m.min_score(), -1);
  EXPECT_EQ(m.max_score(), 5);
  // Not a built-in matrix: BLAST's BLOSUM62 gaps.
  EXPECT_EQ(m.default_gaps(), GapCosts{});
}

TEST(ScoringMatrix, PresentExtraLettersAreUsedAsGiven) {
  std::string text = simple_matrix(std::string(kCanonical) + "UX", 6);
  const ScoringMatrix m = ScoringMatrix::from_ncbi_text(text, "extra.mat");
  EXPECT_EQ(m.score(aa('U'), aa('U')), 6);
  EXPECT_EQ(m.score(aa('O'), aa('O')), 6);  // O copies X, whose diagonal is 6
  EXPECT_EQ(m.score(aa('O'), aa('U')), -1);
}

TEST(ScoringMatrix, RowsInAnyOrderAndCaseAndCrlf) {
  const std::string text = simple_matrix(kCanonical);
  std::string reordered = "# header in lower case, rows reversed, CRLF line ends\r\n";
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> rows;
  std::getline(in, line);  // comment
  std::getline(in, line);  // header
  for (char& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  reordered += line + "\r\n";
  while (std::getline(in, line)) rows.push_back(line);
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) reordered += *it + "   # trailing comment\r\n";
  const ScoringMatrix a = ScoringMatrix::from_ncbi_text(text, "a");
  const ScoringMatrix b = ScoringMatrix::from_ncbi_text(reordered, "b");
  EXPECT_TRUE(a.same_scores(b));
}

TEST(ScoringMatrix, AsymmetricFileIsReported) {
  const std::string text = replace_line(simple_matrix(kCanonical), 3, score_row('A', "5 -2", 18));
  const ScoringMatrix m = ScoringMatrix::from_ncbi_text(text, "asym");
  EXPECT_EQ(m.score(aa('A'), aa('C')), -2);
  EXPECT_EQ(m.score(aa('C'), aa('A')), -1);
  EXPECT_FALSE(m.symmetric());
}

TEST(ScoringMatrix, FileCopyOfBuiltinGetsItsDefaultGaps) {
  const std::string text = replace_line(simple_matrix(kCanonical), 1, "# renamed");
  EXPECT_EQ(ScoringMatrix::from_ncbi_text(text, "x").default_gaps(), GapCosts{});
  WS_REQUIRE_TESTDATA("mat/BLOSUM45");
  const std::string blosum45 = read_file(test::testdata_dir() / "mat/BLOSUM45");
  EXPECT_EQ(ScoringMatrix::from_ncbi_text(blosum45, "my_matrix").default_gaps(), (GapCosts{14, 2}));
}

TEST(ScoringMatrix, NucleotideFile) {
  // NUC.4.4 layout: all 15 IUPAC letters, T before G.
  const std::string text =
      "#  nucleotide matrix with ambiguity codes\n"
      "    A   T   G   C   S   W   R   Y   K   M   B   V   H   D   N\n"
      "A   5  -4  -4  -4  -4   1   1  -4  -4   1  -4  -1  -1  -1  -2\n"
      "T  -4   5  -4  -4  -4   1  -4   1   1  -4  -1  -4  -1  -1  -2\n"
      "G  -4  -4   5  -4   1  -4   1  -4   1  -4  -1  -1  -4  -1  -2\n"
      "C  -4  -4  -4   5   1  -4  -4   1  -4   1  -1  -1  -1  -4  -2\n"
      "S  -4  -4   1   1  -1  -4  -2  -2  -2  -2  -1  -1  -3  -3  -1\n"
      "W   1   1  -4  -4  -4  -1  -2  -2  -2  -2  -3  -3  -1  -1  -1\n"
      "R   1  -4   1  -4  -2  -2  -1  -4  -2  -2  -3  -1  -3  -1  -1\n"
      "Y  -4   1  -4   1  -2  -2  -4  -1  -2  -2  -1  -3  -1  -3  -1\n"
      "K  -4   1   1  -4  -2  -2  -2  -2  -1  -4  -1  -3  -3  -1  -1\n"
      "M   1  -4  -4   1  -2  -2  -2  -2  -4  -1  -3  -1  -1  -3  -1\n"
      "B  -4  -1  -1  -1  -1  -3  -3  -1  -1  -3  -1  -2  -2  -2  -1\n"
      "V  -1  -4  -1  -1  -1  -3  -1  -3  -3  -1  -2  -1  -2  -2  -1\n"
      "H  -1  -1  -4  -1  -3  -1  -3  -1  -3  -1  -2  -2  -1  -2  -1\n"
      "D  -1  -1  -1  -4  -3  -1  -1  -3  -1  -3  -2  -2  -2  -1  -1\n"
      "N  -2  -2  -2  -2  -1  -1  -1  -1  -1  -1  -1  -1  -1  -1  -1\n";
  const ScoringMatrix m = ScoringMatrix::from_ncbi_text(text, "NUC.4.4");
  EXPECT_EQ(m.alphabet(), AlphabetKind::kDna);
  EXPECT_EQ(m.size(), kDnaCodes);
  EXPECT_EQ(m.score(nt('A'), nt('A')), 5);
  EXPECT_EQ(m.score(nt('T'), nt('G')), -4);
  EXPECT_EQ(m.score(nt('A'), nt('W')), 1);
  EXPECT_EQ(m.score(nt('N'), nt('A')), -2);
  EXPECT_EQ(m.canonical_min_score(), -4);
  EXPECT_EQ(m.canonical_max_score(), 5);
  EXPECT_TRUE(m.symmetric());
  EXPECT_EQ(m.default_gaps(), GapCosts{});
}

TEST(ScoringMatrix, RnaFileAndLeftOutAmbiguityCodes) {
  const std::string text =
      "   A  C  G  U  N\n"
      "A  2 -3 -3 -3 -1\n"
      "C -3  2 -3 -3 -1\n"
      "G -3 -3  2 -3 -1\n"
      "U -3 -3 -3  2 -1\n"
      "N -1 -1 -1 -1 -1\n";
  const ScoringMatrix m = ScoringMatrix::from_ncbi_text(text, "rna.mat");
  EXPECT_EQ(m.alphabet(), AlphabetKind::kRna);
  EXPECT_EQ(m.score(nt('T'), nt('T')), 2);   // U and T share code 3
  EXPECT_EQ(m.score(nt('R'), nt('A')), -1);  // R copies N
  EXPECT_EQ(m.score(nt('R'), nt('Y')), -1);
  // Without N, the ambiguity codes score the minimum canonical score.
  const std::string no_n = "   A  C  G  T\nA  2 -3 -3 -3\nC -3  2 -3 -3\nG -3 -3  2 -3\nT -3 -3 -3  2\n";
  const ScoringMatrix d = ScoringMatrix::from_ncbi_text(no_n, "dna.mat");
  EXPECT_EQ(d.alphabet(), AlphabetKind::kDna);
  EXPECT_EQ(d.score(nt('N'), nt('A')), -3);
  EXPECT_EQ(d.score(nt('N'), nt('N')), -3);
}

struct BadMatrix {
  std::string label;
  std::string text;
  std::uint64_t line;
  std::string message_part;
};

std::vector<BadMatrix> bad_matrices() {
  const std::string good = simple_matrix(kCanonical);  // line 1 comment, 2 header, 3..22 rows A..Y
  const std::string row_a = score_row('A', "5", 19);
  return {
      {"empty", "", 0, "no header"},
      {"only comments and blanks", "# one\n\n   \t\n# two\n", 0, "no header"},
      {"header digit", replace_line(good, 2, "A C D 1"), 2, "'1' is not a residue letter"},
      {"header word", replace_line(good, 2, "AC D"), 2, "'AC' is not a residue letter"},
      {"header duplicate", replace_line(good, 2, "A C D E F G H I K L M N P Q R S T V W Y A"), 2,
       "repeats residue 'A'"},
      {"header lacks W", simple_matrix("ACDEFGHIKLMNPQRSTVY"), 2, "lacks the residue 'W'"},
      {"dna header lacks T", "  A C G N\nA 1 1 1 1\nC 1 1 1 1\nG 1 1 1 1\nN 1 1 1 1\n", 1,
       "lacks the residue 'T'"},
      {"dna header with T and U", "  A C G T U\n", 1, "repeats residue 'T'"},
      {"short row", replace_line(good, 5, "E -1 -1 -1 5"), 5, "has 4 scores, the header has 20"},
      {"long row", replace_line(good, 3, row_a + " 7"), 3, "has 21 scores"},
      {"label only", replace_line(good, 4, "C"), 4, "has 0 scores"},
      {"non-integer", replace_line(good, 7, score_row('G', "-1 -1 -1 -1 -1 x", 14)), 7,
       "score 'x' is not an integer"},
      {"decimal", replace_line(good, 3, score_row('A', "4.5", 19)), 3, "'4.5' is not an integer"},
      {"lone sign", replace_line(good, 3, score_row('A', "-", 19)), 3, "'-' is not an integer"},
      {"above int8", replace_line(good, 22, score_row('Y', "128", 19)), 22, "'128' is outside -128..127"},
      {"below int8", replace_line(good, 3, score_row('A', "-129", 19)), 3, "outside"},
      {"beyond int", replace_line(good, 3, score_row('A', "99999999999999999999", 19)), 3, "outside"},
      {"row label not in header", good + score_row('B', "-1", 19) + "\n", 23,
       "row label 'B' is not a letter of the header"},
      {"row label word", replace_line(good, 3, "Ala 5"), 3, "row label 'Ala'"},
      {"row label digit", replace_line(good, 10, "1 5"), 10, "row label '1'"},
      {"duplicate row", replace_line(good, 4, row_a), 4, "second row for residue 'A'"},
      {"missing last row", replace_line(good, 22, "# Y row removed") + "\n", 23, "without a row for 'Y'"},
      {"binary junk", replace_line(good, 6, "\x01\xff 5"), 6, "row label '\\x01\\xFF'"},
  };
}

TEST(ScoringMatrix, BadFilesReportExactLine) {
  for (const BadMatrix& bad : bad_matrices()) {
    try {
      ScoringMatrix::from_ncbi_text(bad.text, "bad.mat");
      ADD_FAILURE() << bad.label << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kFormat) << bad.label;
      EXPECT_EQ(e.file(), "bad.mat") << bad.label;
      EXPECT_EQ(e.line(), bad.line) << bad.label << ": " << e.what();
      EXPECT_NE(e.message().find(bad.message_part), std::string::npos) << bad.label << ": " << e.what();
    }
  }
}

TEST(ScoringMatrix, CommentsShiftLineNumbers) {
  const std::string text = "# a\n\n# b\n" + replace_line(simple_matrix(kCanonical), 9, "K 1 2");
  try {
    ScoringMatrix::from_ncbi_text(text, "shifted.mat");
    FAIL() << "short row accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.line(), 12u) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("shifted.mat:12: ", 0), 0u) << e.what();
  }
}

TEST(ScoringMatrix, FileErrorsNameThePath) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "warpsearch_test_scoring";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / "broken.mat";
  std::ofstream(path) << replace_line(simple_matrix(kCanonical), 8, "I 1");
  try {
    ScoringMatrix::from_ncbi_file(path.string());
    FAIL() << "broken file accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat);
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.line(), 8u);
  }
  try {
    ScoringMatrix::load((dir / "missing.mat").string());
    FAIL() << "missing file accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(e.file(), (dir / "missing.mat").string());
  }
  std::filesystem::remove_all(dir);
}

TEST(ScoringMatrix, LoadPrefersBuiltinNamesOverFiles) {
  EXPECT_EQ(ScoringMatrix::load("blosum80").name(), "BLOSUM80");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "warpsearch_test_scoring_load";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "BLOSUM62") << simple_matrix(kCanonical, 9);
  const ScoringMatrix file = ScoringMatrix::load((dir / "BLOSUM62").string());
  EXPECT_EQ(file.name(), "BLOSUM62");
  EXPECT_EQ(file.score(aa('W'), aa('W')), 9);
  std::filesystem::remove_all(dir);
}

TEST(ScoringMatrix, DnaMatchMismatch) {
  const ScoringMatrix m = ScoringMatrix::dna(2, -3);
  EXPECT_EQ(m.name(), "dna:+2/-3");
  EXPECT_EQ(m.alphabet(), AlphabetKind::kDna);
  EXPECT_EQ(m.size(), kDnaCodes);
  for (const char a : std::string_view("ACGT")) {
    for (const char b : std::string_view("ACGT")) EXPECT_EQ(m.score(nt(a), nt(b)), a == b ? 2 : -3);
  }
  // Every pair with an ambiguity code is a mismatch, N/N and R/R included.
  for (int a = 0; a < kDnaCodes; ++a) {
    for (int b = 4; b < kDnaCodes; ++b) {
      EXPECT_EQ(m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)), -3);
      EXPECT_EQ(m.score(static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(a)), -3);
    }
  }
  EXPECT_EQ(m.min_score(), -3);
  EXPECT_EQ(m.max_score(), 2);
  EXPECT_TRUE(m.symmetric());
  EXPECT_EQ(m.default_gaps(), (GapCosts{5, 2}));

  const ScoringMatrix rna = ScoringMatrix::dna(1, -2, AlphabetKind::kRna);
  EXPECT_EQ(rna.alphabet(), AlphabetKind::kRna);
  EXPECT_EQ(rna.name(), "rna:+1/-2");
  EXPECT_EQ(rna.score(*Alphabet::rna().code('U'), *Alphabet::rna().code('U')), 1);
}

TEST(ScoringMatrix, DnaRejectsBadScores) {
  for (const auto& [match, mismatch] :
       std::vector<std::pair<int, int>>{{0, -1}, {128, -1}, {1, 0}, {1, 2}, {1, -129}}) {
    try {
      ScoringMatrix::dna(match, mismatch);
      ADD_FAILURE() << match << "/" << mismatch << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    }
  }
  EXPECT_THROW(ScoringMatrix::dna(1, -1, AlphabetKind::kProtein), Error);
}

TEST(ScoringMatrix, PaddingHoldsMinimumScore) {
  for (const ScoringMatrix& m :
       {ScoringMatrix::builtin("BLOSUM62"), ScoringMatrix::builtin("PAM30"), ScoringMatrix::dna(1, -4)}) {
    EXPECT_EQ(m.padding_score(), m.min_score()) << m.name();
    const std::int8_t* table = m.row(0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(table) % 64, 0u) << m.name();
    for (int a = 0; a < kMaxCodes; ++a) {
      EXPECT_EQ(m.row(static_cast<std::uint8_t>(a)), table + a * kMaxCodes);
      for (int b = 0; b < kMaxCodes; ++b) {
        const int s = m.row(static_cast<std::uint8_t>(a))[b];
        EXPECT_EQ(s, m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
        if (a >= m.size() || b >= m.size()) {
          EXPECT_EQ(s, m.min_score()) << m.name() << " " << a << "," << b;
        } else {
          EXPECT_GE(s, m.min_score());
          EXPECT_LE(s, m.max_score());
        }
      }
    }
  }
}

// Every input kept in fuzz/corpus/matrix (seeds and past crashes) parses or fails with an Error.
TEST(ScoringMatrix, FuzzCorpusRegressions) {
  const std::filesystem::path corpus = test::source_dir() / "fuzz/corpus/matrix";
  ASSERT_TRUE(std::filesystem::is_directory(corpus)) << corpus;
  int inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    ++inputs;
    const std::string text = read_file(entry.path());
    try {
      const ScoringMatrix m = ScoringMatrix::from_ncbi_text(text, entry.path().filename().string());
      EXPECT_LE(m.min_score(), m.max_score()) << entry.path();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kFormat) << entry.path();
    }
  }
  EXPECT_GT(inputs, 0);
}

}  // namespace
}  // namespace warpsearch
