// test_parasail_oracle.cpp: align::Aligner (device cpu) against parasail 2.6, an independent
// implementation, on random protein and DNA pairs of lengths 1..5000, real pairs (mmseqs QUERY500
// proteins, BioMarKs 18S amplicons) and edge cases, in all three modes:
//   - scores must be identical (parasail's gap open is our open + extend: a gap of length k costs
//     open_p + (k-1) extend_p = open + k extend);
//   - with traceback, the CIGAR must re-score to the score and consume exactly the reported query and
//     target ranges, matches/length must count its columns, and the ends must suit the mode;
//   - small pairs must also equal sw::reference::align_pair bit for bit (coordinates and CIGAR).
// Mode mapping: local = parasail_sw, global = parasail_nw, semiglobal = parasail_sg_dx (gaps at both
// ends of s2, the target, are free; the query s1 is aligned end to end).
// parasail scores with a copy of our own substitution table (parasail_matrix_create over our alphabet's
// symbols, then every entry set), so the comparison is of the dynamic programming alone; a separate
// test checks our built-in BLOSUM62 against parasail's.
// Built without parasail (libparasail-dev), every test here is skipped with that reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sw/model.hpp"
#include "sw/reference.hpp"
#include "testdata.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"

#ifdef WARPSEARCH_HAVE_PARASAIL
#include <parasail.h>
#endif

namespace warpsearch {
namespace {

using Codes = std::vector<std::uint8_t>;
using Pair = std::pair<Codes, Codes>;

std::string letters(const Codes& codes, AlphabetKind kind) {
  const Alphabet a(kind);
  std::string s;
  s.reserve(codes.size());
  for (const std::uint8_t c : codes) s += a.symbol(c);
  return s;
}

#ifdef WARPSEARCH_HAVE_PARASAIL
constexpr bool kHaveParasail = true;

// parasail matrix over our alphabet's symbols holding exactly our table.
class ParasailMatrix {
 public:
  explicit ParasailMatrix(const ScoringMatrix& m) {
    const std::string symbols(Alphabet(m.alphabet()).symbols());
    matrix_ = parasail_matrix_create(symbols.c_str(), 0, 0);
    for (int a = 0; a < m.size(); ++a)
      for (int b = 0; b < m.size(); ++b)
        parasail_matrix_set_value(matrix_, a, b,
                                  m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
  }
  ~ParasailMatrix() { parasail_matrix_free(matrix_); }
  ParasailMatrix(const ParasailMatrix&) = delete;
  ParasailMatrix& operator=(const ParasailMatrix&) = delete;
  const parasail_matrix_t* get() const { return matrix_; }

 private:
  parasail_matrix_t* matrix_ = nullptr;
};

int parasail_score(align::Mode mode, const std::string& q, const std::string& t, GapCosts gaps,
                   const ParasailMatrix& matrix) {
  const int open = gaps.open + gaps.extend, extend = gaps.extend;
  const int qn = static_cast<int>(q.size()), tn = static_cast<int>(t.size());
  parasail_result_t* r = nullptr;
  switch (mode) {
    case align::Mode::kLocal:
      r = parasail_sw_scan_32(q.data(), qn, t.data(), tn, open, extend, matrix.get());
      break;
    case align::Mode::kGlobal:
      r = parasail_nw_scan_32(q.data(), qn, t.data(), tn, open, extend, matrix.get());
      break;
    case align::Mode::kSemiGlobal:
      r = parasail_sg_dx_scan_32(q.data(), qn, t.data(), tn, open, extend, matrix.get());
      break;
  }
  const int score = parasail_result_get_score(r);
  parasail_result_free(r);
  return score;
}
#else
constexpr bool kHaveParasail = false;
class ParasailMatrix {
 public:
  explicit ParasailMatrix(const ScoringMatrix&) {}
};
int parasail_score(align::Mode, const std::string&, const std::string&, GapCosts, const ParasailMatrix&) {
  ADD_FAILURE() << "parasail_score called without parasail";
  return 0;
}
#endif

class ParasailOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kHaveParasail) GTEST_SKIP() << "built without parasail (install libparasail-dev and reconfigure)";
  }
};

// The CIGAR of r re-scored from scratch, with every structural property checked on the way.
void check_alignment(const align::Result& r, const Codes& q, const Codes& t, const ScoringMatrix& matrix,
                     GapCosts gaps, align::Mode mode, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_LE(r.query_begin, r.query_end);
  ASSERT_LE(r.query_end, q.size());
  ASSERT_LE(r.target_begin, r.target_end);
  ASSERT_LE(r.target_end, t.size());
  if (mode == align::Mode::kLocal) {
    EXPECT_GE(r.score, 0);
    EXPECT_EQ(r.empty(), r.score == 0);
  } else {
    EXPECT_EQ(r.query_begin, 0u);
    EXPECT_EQ(r.query_end, q.size());
    if (mode == align::Mode::kGlobal) {
      EXPECT_EQ(r.target_begin, 0u);
      EXPECT_EQ(r.target_end, t.size());
    }
  }
  if (r.empty()) {
    EXPECT_EQ(r.cigar, "");
    EXPECT_EQ(r.length, 0u);
    EXPECT_EQ(r.matches, 0u);
    return;
  }
  std::size_t qi = r.query_begin, ti = r.target_begin;
  std::int64_t score = 0;
  std::uint32_t columns = 0, matches = 0;
  char first_op = 0, last_op = 0;
  for (std::size_t pos = 0; pos < r.cigar.size();) {
    std::size_t end = pos;
    std::uint64_t run = 0;
    while (end < r.cigar.size() && r.cigar[end] >= '0' && r.cigar[end] <= '9') {
      run = run * 10 + static_cast<std::uint64_t>(r.cigar[end++] - '0');
    }
    ASSERT_LT(end, r.cigar.size()) << "CIGAR ends in a number: " << r.cigar;
    ASSERT_GT(run, 0u) << r.cigar;
    const char op = r.cigar[end];
    ASSERT_NE(op, last_op) << "two runs of one op in a row: " << r.cigar;
    if (first_op == 0) first_op = op;
    last_op = op;
    columns += static_cast<std::uint32_t>(run);
    switch (op) {
      case '=':
      case 'X':
        for (std::uint64_t k = 0; k < run; ++k, ++qi, ++ti) {
          ASSERT_LT(qi, r.query_end) << r.cigar;
          ASSERT_LT(ti, r.target_end) << r.cigar;
          ASSERT_EQ(q[qi] == t[ti], op == '=') << "op " << op << " at query " << qi << ", target " << ti;
          score += matrix.score(q[qi], t[ti]);
        }
        if (op == '=') matches += static_cast<std::uint32_t>(run);
        break;
      case 'I':
        qi += run;
        score -= gaps.open + static_cast<std::int64_t>(run) * gaps.extend;
        break;
      case 'D':
        ti += run;
        score -= gaps.open + static_cast<std::int64_t>(run) * gaps.extend;
        break;
      default: FAIL() << "unexpected CIGAR op '" << op << "' in " << r.cigar;
    }
    pos = end + 1;
  }
  EXPECT_EQ(qi, r.query_end) << "CIGAR consumes the query range exactly: " << r.cigar;
  EXPECT_EQ(ti, r.target_end) << "CIGAR consumes the target range exactly: " << r.cigar;
  EXPECT_EQ(score, r.score) << "CIGAR re-scores to the score: " << r.cigar;
  EXPECT_EQ(columns, r.length);
  EXPECT_EQ(matches, r.matches);
  // A local alignment neither starts nor ends with a gap (open + extend >= 1); a semiglobal one never
  // starts or ends with a target residue against a gap (target ends are free).
  if (mode == align::Mode::kLocal) {
    EXPECT_TRUE(first_op == '=' || first_op == 'X') << r.cigar;
    EXPECT_TRUE(last_op == '=' || last_op == 'X') << r.cigar;
  }
  if (mode == align::Mode::kSemiGlobal) {
    EXPECT_NE(first_op, 'D') << r.cigar;
    EXPECT_NE(last_op, 'D') << r.cigar;
  }
}

// Runs the pairs through the aligner (CPU) with and without traceback and holds every result to
// parasail's score, the re-scored CIGAR and, for pairs up to reference_cells, the reference.
void compare(const std::vector<Pair>& pairs, const ScoringMatrix& matrix, GapCosts gaps, align::Mode mode,
             const std::string& label, std::uint64_t reference_cells = 40000) {
  const AlphabetKind kind = matrix.alphabet();
  const ParasailMatrix pmatrix(matrix);
  align::Config config;
  config.matrix = matrix;
  config.gaps = gaps;
  config.mode = mode;
  config.device = DeviceMode::kCpu;
  align::Batch batch, batch_tb;
  for (const auto& [q, t] : pairs) {
    batch.add(q, t);
    batch_tb.add(q, t);
  }
  // An error for one configuration is reported with its label and the next configuration still runs.
  const std::string config_label = label + " " + std::string(align::mode_name(mode));
  std::vector<align::Result> plain, traced;
  try {
    plain = align::Aligner(config).align(std::move(batch));
  } catch (const std::exception& e) {
    ADD_FAILURE() << config_label << ": " << e.what();
  }
  config.traceback = true;
  try {
    traced = align::Aligner(config).align(std::move(batch_tb));
  } catch (const std::exception& e) {
    ADD_FAILURE() << config_label << " (traceback): " << e.what();
  }
  if (plain.empty() || traced.empty()) return;
  ASSERT_EQ(plain.size(), pairs.size());
  ASSERT_EQ(traced.size(), pairs.size());
  const sw::PassModel model = sw::PassModel::make(matrix, gaps, mode);
  int failures = 0;
  for (std::size_t i = 0; i < pairs.size() && failures < 5; ++i) {
    const auto& [q, t] = pairs[i];
    const std::string what = config_label + " pair " + std::to_string(i) + " (" + std::to_string(q.size()) +
                             " x " + std::to_string(t.size()) + ")";
    const int expected = parasail_score(mode, letters(q, kind), letters(t, kind), gaps, pmatrix);
    EXPECT_EQ(plain[i].score, expected) << what;
    EXPECT_EQ(traced[i].score, expected) << what;
    // Coordinates do not depend on whether the alignment itself was asked for.
    EXPECT_EQ(traced[i].query_begin, plain[i].query_begin) << what;
    EXPECT_EQ(traced[i].query_end, plain[i].query_end) << what;
    EXPECT_EQ(traced[i].target_begin, plain[i].target_begin) << what;
    EXPECT_EQ(traced[i].target_end, plain[i].target_end) << what;
    check_alignment(traced[i], q, t, matrix, gaps, mode, what);
    if (static_cast<std::uint64_t>(q.size()) * t.size() <= reference_cells) {
      EXPECT_EQ(plain[i], sw::reference::align_pair(model, q, t, false)) << what;
      EXPECT_EQ(traced[i], sw::reference::align_pair(model, q, t, true)) << what;
    }
    if (::testing::Test::HasFailure()) ++failures;
  }
}

// Random residues: mostly canonical, some ambiguity codes (X/N, B, Z, *, ...).
Codes random_codes(std::mt19937& rng, std::size_t n, AlphabetKind kind) {
  const Alphabet a(kind);
  std::uniform_int_distribution<int> canonical(0, a.canonical_size() - 1);
  std::uniform_int_distribution<int> any(0, a.size() - 1);
  std::uniform_int_distribution<int> pct(0, 99);
  Codes c(n);
  for (auto& x : c) x = static_cast<std::uint8_t>(pct(rng) < 3 ? any(rng) : canonical(rng));
  return c;
}

// A homolog of s: substitutions, short insertions and deletions at the given rate (percent per residue).
Codes mutate(std::mt19937& rng, const Codes& s, AlphabetKind kind, int rate) {
  const Alphabet a(kind);
  std::uniform_int_distribution<int> pct(0, 99), code(0, a.canonical_size() - 1), indel(1, 6);
  Codes out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int roll = pct(rng);
    if (roll < rate) {
      out.push_back(static_cast<std::uint8_t>(code(rng)));
    } else if (roll < rate + rate / 4 + 1 && pct(rng) < 50) {
      for (int k = indel(rng); k > 0; --k) out.push_back(static_cast<std::uint8_t>(code(rng)));
      out.push_back(s[i]);
    } else if (roll < rate + rate / 2 + 1 && pct(rng) < 50) {
      i += static_cast<std::size_t>(indel(rng)) - 1;  // skip residues
    } else {
      out.push_back(s[i]);
    }
  }
  if (out.empty()) out.push_back(s.front());
  return out;
}

// Lengths log-uniform in [1, max]: many short pairs, some long.
std::size_t random_length(std::mt19937& rng, std::size_t max) {
  std::uniform_real_distribution<double> u(0.0, std::log(static_cast<double>(max)));
  return std::clamp<std::size_t>(static_cast<std::size_t>(std::exp(u(rng))), 1, max);
}

std::vector<Pair> random_pairs(unsigned seed, AlphabetKind kind, int count, std::size_t max_length) {
  std::mt19937 rng(seed);
  std::vector<Pair> pairs;
  for (int i = 0; i < count; ++i) {
    Codes q = random_codes(rng, random_length(rng, max_length), kind);
    if (i % 2 == 0) {  // unrelated, independent lengths
      pairs.emplace_back(std::move(q), random_codes(rng, random_length(rng, max_length), kind));
    } else {  // related: a mutated copy, possibly of a piece, with random flanks
      Codes core = mutate(rng, q, kind, 5 + i % 30);
      Codes t = random_codes(rng, random_length(rng, 50) - 1, kind);
      t.insert(t.end(), core.begin(), core.end());
      const Codes tail = random_codes(rng, random_length(rng, 50) - 1, kind);
      t.insert(t.end(), tail.begin(), tail.end());
      pairs.emplace_back(std::move(q), std::move(t));
    }
  }
  // The longest pairs the suite promises: 5000 x 5000 related and unrelated.
  Codes q = random_codes(rng, max_length, kind);
  pairs.emplace_back(q, mutate(rng, q, kind, 15));
  pairs.emplace_back(q, random_codes(rng, max_length, kind));
  return pairs;
}

struct Scoring {
  ScoringMatrix matrix;
  GapCosts gaps;
  std::string label;
};

const align::Mode kModes[] = {align::Mode::kLocal, align::Mode::kGlobal, align::Mode::kSemiGlobal};

TEST_F(ParasailOracle, RandomProteinPairs) {
  const std::vector<Scoring> scorings = {
      {ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, "BLOSUM62 11/1"},
      {ScoringMatrix::builtin("BLOSUM50"), GapCosts{0, 8}, "BLOSUM50 0/8 (linear)"},
      {ScoringMatrix::builtin("PAM30"), GapCosts{9, 1}, "PAM30 9/1"},
  };
  unsigned seed = 1;
  for (const Scoring& s : scorings) {
    for (const align::Mode mode : kModes) {
      compare(random_pairs(seed++, AlphabetKind::kProtein, 40, 5000), s.matrix, s.gaps, mode, s.label);
    }
  }
}

TEST_F(ParasailOracle, RandomDnaPairs) {
  const std::vector<Scoring> scorings = {
      {ScoringMatrix::dna(2, -3), GapCosts{5, 2}, "DNA 2/-3 5/2"},
      {ScoringMatrix::dna(1, -1), GapCosts{0, 1}, "DNA 1/-1 0/1"},
      {ScoringMatrix::dna(5, -4), GapCosts{10, 6}, "DNA 5/-4 10/6"},
  };
  unsigned seed = 100;
  for (const Scoring& s : scorings) {
    for (const align::Mode mode : kModes) {
      compare(random_pairs(seed++, AlphabetKind::kDna, 40, 5000), s.matrix, s.gaps, mode, s.label);
    }
  }
}

TEST_F(ParasailOracle, EdgeCases) {
  const auto protein = [](std::string_view text) {
    Codes c;
    for (const char ch : text) c.push_back(*Alphabet::protein().code(ch));
    return c;
  };
  const auto dna = [](std::string_view text) {
    Codes c;
    for (const char ch : text) c.push_back(*Alphabet::dna().code(ch));
    return c;
  };
  const std::string w5000(5000, 'W');
  const std::string a5000(5000, 'A');
  const std::vector<Pair> prot = {
      {protein("W"), protein("W")},                       // length 1, match
      {protein("W"), protein("P")},                       // length 1, mismatch
      {protein("A"), protein(w5000)},                     // 1 x 5000
      {protein(w5000), protein("W")},                     // 5000 x 1
      {protein("WWWWWW"), protein("PPPPPPPPPP")},         // all mismatch
      {protein("HEAGAWGHEE"), protein("HEAGAWGHEE")},     // identical
      {protein("XXXXXXXX"), protein("XXXXXXXX")},         // unknown residues only
      {protein("MKVXXXLAAGX*"), protein("MKVLLLAAG**")},  // X and stop codes mixed in
      {protein(w5000), protein(w5000)},                   // 55000: beyond 16-bit in local mode too
      {protein("BZJOU"), protein("BZJOUX")},              // every ambiguity code
  };
  const std::vector<Pair> nuc = {
      {dna("A"), dna("A")},
      {dna("A"), dna("C")},
      {dna("ACGT"), dna("TGCA")},
      {dna("AAAAAAAA"), dna("CCCCCCCCCCCC")},  // all mismatch
      {dna("NNNNNN"), dna("NNNNNN")},          // N scores as a mismatch even against N
      {dna("ACGTNNACGT"), dna("ACGTACGTACGT")},
      {dna(a5000), dna(a5000)},
      {dna("RYMKSWHBVDN"), dna("ACGTRYMKSWHBVDN")},
  };
  for (const align::Mode mode : kModes) {
    compare(prot, ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, mode, "protein edge");
    compare(prot, ScoringMatrix::builtin("BLOSUM45"), GapCosts{0, 1}, mode, "protein edge, cheap gaps");
    compare(nuc, ScoringMatrix::dna(2, -3), GapCosts{5, 2}, mode, "dna edge");
    compare(nuc, ScoringMatrix::dna(127, -128), GapCosts{127, 127}, mode, "dna edge, extreme scores");
  }
}

// Consecutive records of a real file as pairs: (0, 1), (1, 2), ... up to max_pairs.
std::vector<Pair> consecutive_pairs(const std::string& path, AlphabetKind kind, std::size_t max_pairs) {
  ReaderOptions options;
  options.alphabet = kind;
  SequenceReader reader(path, options);
  std::vector<Codes> seqs;
  Sequence s;
  while (seqs.size() < max_pairs + 1 && reader.next(s)) seqs.push_back(s.residues);
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i + 1 < seqs.size(); ++i) pairs.emplace_back(seqs[i], seqs[i + 1]);
  return pairs;
}

TEST_F(ParasailOracle, RealProteinPairs) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const auto pairs = consecutive_pairs((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(),
                                       AlphabetKind::kProtein, 499);
  ASSERT_EQ(pairs.size(), 499u);
  for (const align::Mode mode : kModes) {
    compare(pairs, ScoringMatrix::builtin("BLOSUM62"), GapCosts{11, 1}, mode, "QUERY500");
  }
}

TEST_F(ParasailOracle, RealAmpliconPairs) {
  WS_REQUIRE_TESTDATA("dna/BioMarKs50k.fa");
  const auto pairs =
      consecutive_pairs((test::testdata_dir() / "dna/BioMarKs50k.fa").string(), AlphabetKind::kDna, 400);
  ASSERT_EQ(pairs.size(), 400u);
  for (const align::Mode mode : kModes) {
    compare(pairs, ScoringMatrix::dna(2, -3), GapCosts{5, 2}, mode, "BioMarKs");
  }
}

#ifdef WARPSEARCH_HAVE_PARASAIL
// The tests above give parasail our own table; this one checks the table itself against parasail's
// BLOSUM62 on the 20 amino acids and '*'. (B, Z and X differ: our table is NCBI's current file, where
// every X entry is -1; parasail ships an older copy with per-residue X, B and Z scores. J, O and U are
// not in parasail's.)
TEST_F(ParasailOracle, BuiltinBlosum62MatchesParasail) {
  const parasail_matrix_t* theirs = parasail_matrix_lookup("blosum62");
  ASSERT_NE(theirs, nullptr);
  const ScoringMatrix ours = ScoringMatrix::builtin("BLOSUM62");
  const Alphabet a = Alphabet::protein();
  const std::string shared = "ARNDCQEGHILKMFPSTWYV*";
  for (const char x : shared) {
    for (const char y : shared) {
      const int expected = theirs->matrix[theirs->mapper[static_cast<unsigned char>(x)] * theirs->size +
                                          theirs->mapper[static_cast<unsigned char>(y)]];
      EXPECT_EQ(ours.score(*a.code(x), *a.code(y)), expected) << x << "/" << y;
    }
  }
}
#endif

}  // namespace
}  // namespace warpsearch
