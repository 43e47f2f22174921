// test_composition.cpp: src/blast/composition (composition-based statistics mathematics) against BLAST+
// 2.12's own functions, called through libblast.so (tests/support/libblast.hpp; its dependency
// libcomposition_adjustment.so exports the composition functions): every double and every integer score
// must be identical, on real proteins (mmseqs_DB20k.fasta) and random / biased compositions.
//
//   CompositionData.*      the frequency ratios, joint probabilities and backgrounds of the 8 matrices
//   Composition.*          Blast_ReadAaComposition, Blast_CalcLambdaFullPrecision, Blast_KarlinLambdaNR,
//                          Blast_GetRelativeEntropy, Blast_ChooseMatrixAdjustRule,
//                          Blast_OptimizeTargetFrequencies, Blast_Int4MatrixFromFreq (the start matrix),
//                          Blast_CompositionMatrixAdj (every rule), Blast_CompositionBasedStats,
//                          Blast_AdjustScores (modes 1, 2, 3; all matrices)
//   CompositionProperties.* checks that need no oracle (run under ASan too): the optimized target
//                          frequencies have the requested margins and relative entropy.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "blast/composition.hpp"
#include "libblast.hpp"
#include "stats/karlin.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast::compo {
namespace {

constexpr int kN = kStdAlphabetSize;
constexpr int kT = kTrueAaCount;

// BLAST+'s structs, declared as in composition_adjustment.h / blast_stat.h / matrix_freq_ratios.h.
struct CAaComposition {
  double prob[kN];
  int numTrueAminoAcids;
};
struct CMatrixInfo {
  char* matrixName;
  int** startMatrix;
  double** startFreqRatios;
  int rows;
  int cols;
  int positionBased;
  double ungappedLambda;
};
struct CWorkspace {
  double** mat_b;
  double** mat_final;
  double* first_standard_freq;
  double* second_standard_freq;
};
struct CScoreFreq {
  int score_min, score_max, obs_min, obs_max;
  double score_avg;
  double* sprob0;
  double* sprob;
};
struct CFreqRatios {
  double** data;
  int bit_scale_factor;
};
using CalcLambda = double (*)(double*, int, int, double);

struct Oracle {
  void (*read_composition)(CAaComposition*, int, const std::uint8_t*, int);
  void (*calc_lambda_full)(double*, int*, double**, int, const double*, const double*, double, double, int);
  double (*relative_entropy)(const double*, const double*);
  int (*choose_rule)(int, int, const double*, const double*, const char*, int);
  int (*optimize)(double*, int, int*, const double*, const double*, const double*, int, double, double, int);
  CMatrixInfo* (*matrix_info_new)(int, int, int);
  void (*matrix_info_free)(CMatrixInfo**);
  CWorkspace* (*workspace_new)();
  int (*workspace_init)(CWorkspace*, const char*);
  void (*workspace_free)(CWorkspace**);
  int (*matrix_adj)(int**, int, int, int, int, const double*, const double*, int, double, CWorkspace*,
                    const CMatrixInfo*);
  int (*cbs)(int**, double*, const CMatrixInfo*, const double*, const double*, CalcLambda, int);
  int (*adjust_scores)(int**, const CAaComposition*, int, const CAaComposition*, int, const CMatrixInfo*, int,
                       int, CWorkspace*, int*, CalcLambda, double*, int, double*);
  void (*int4_from_freq)(int**, int, double**, double);
  int (*joint_probs)(double**, double*, double*, const char*);
  const double* (*background)(const char*);
  CFreqRatios* (*freq_ratios_new)(const char*);
  CFreqRatios* (*freq_ratios_free)(CFreqRatios*);
  double (*karlin_lambda_nr)(CScoreFreq*, double);
};

const Oracle* oracle() {
  static const Oracle* loaded = []() -> const Oracle* {
    void* h = test::open_libblast();
    if (h == nullptr) return nullptr;
    static Oracle o;
    bool ok = true;
    const auto load = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(h, name));
      ok = ok && f != nullptr;
    };
    load(o.read_composition, "Blast_ReadAaComposition");
    load(o.calc_lambda_full, "Blast_CalcLambdaFullPrecision");
    load(o.relative_entropy, "Blast_GetRelativeEntropy");
    load(o.choose_rule, "Blast_ChooseMatrixAdjustRule");
    load(o.optimize, "Blast_OptimizeTargetFrequencies");
    load(o.matrix_info_new, "Blast_MatrixInfoNew");
    load(o.matrix_info_free, "Blast_MatrixInfoFree");
    load(o.workspace_new, "Blast_CompositionWorkspaceNew");
    load(o.workspace_init, "Blast_CompositionWorkspaceInit");
    load(o.workspace_free, "Blast_CompositionWorkspaceFree");
    load(o.matrix_adj, "Blast_CompositionMatrixAdj");
    load(o.cbs, "Blast_CompositionBasedStats");
    load(o.adjust_scores, "Blast_AdjustScores");
    load(o.int4_from_freq, "Blast_Int4MatrixFromFreq");
    load(o.joint_probs, "Blast_GetJointProbsForMatrix");
    load(o.background, "Blast_GetMatrixBackgroundFreq");
    load(o.freq_ratios_new, "_PSIMatrixFrequencyRatiosNew");
    load(o.freq_ratios_free, "_PSIMatrixFrequencyRatiosFree");
    load(o.karlin_lambda_nr, "Blast_KarlinLambdaNR");
    return ok ? &o : nullptr;
  }();
  return loaded;
}

#define REQUIRE_ORACLE()                                                        \
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");                               \
  const Oracle* lib = oracle();                                                 \
  if (lib == nullptr) GTEST_SKIP() << "libblast.so (BLAST+ 2.12) not loadable"; \
  static_cast<void>(lib)

// s_CalcLambda of blast_kappa.c on libblast's Blast_KarlinLambdaNR (the callback Blast_AdjustScores takes).
double oracle_calc_lambda(double* probs, int min_score, int max_score, double lambda0) {
  double avg = 0.0;
  for (int i = 0; i < max_score - min_score + 1; ++i) avg += (min_score + i) * probs[i];
  CScoreFreq f{min_score, max_score, min_score, max_score, avg, probs, probs - min_score};
  return oracle()->karlin_lambda_nr(&f, lambda0);
}

// Row pointers over a flat row-major array, as BLAST's double** / int** matrices.
template <typename T>
std::vector<T*> rows_of(T* data, int rows, int cols) {
  std::vector<T*> r;
  for (int i = 0; i < rows; ++i) r.push_back(data + static_cast<std::ptrdiff_t>(i) * cols);
  return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<std::vector<std::uint8_t>> real_proteins(std::size_t n) {
  std::vector<std::vector<std::uint8_t>> out;
  std::ifstream in((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string());
  std::string line;
  const Alphabet alpha = Alphabet::protein();
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      if (out.size() == n) break;
      out.emplace_back();
    } else if (!out.empty()) {
      for (const char c : line)
        if (const auto code = alpha.code(c)) out.back().push_back(to_std(*code));
    }
  }
  return out;
}

// Random NCBIstdaa sequences: uniform, or biased towards a few letters (low complexity), with rare letters.
std::vector<std::uint8_t> random_sequence(std::mt19937& rng, int length, bool biased) {
  std::vector<std::uint8_t> s;
  std::uniform_int_distribution<int> pct(0, 99), any(0, kN - 1), letter(0, 19);
  constexpr std::array<int, 20> kTrue = {1,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                         12, 13, 14, 15, 16, 17, 18, 19, 20, 22};
  const int favourite = kTrue[static_cast<std::size_t>(letter(rng))];
  for (int i = 0; i < length; ++i) {
    const int roll = pct(rng);
    if (roll < 3)
      s.push_back(static_cast<std::uint8_t>(any(rng)));
    else if (biased && roll < 60)
      s.push_back(static_cast<std::uint8_t>(favourite));
    else
      s.push_back(static_cast<std::uint8_t>(kTrue[static_cast<std::size_t>(letter(rng))]));
  }
  return s;
}

CAaComposition oracle_composition(const std::vector<std::uint8_t>& seq) {
  CAaComposition c{};
  oracle()->read_composition(&c, kN, seq.data(), static_cast<int>(seq.size()));
  return c;
}

double ideal_lambda(const std::string& matrix) {
  return stats::ungapped_params(ScoringMatrix::builtin(matrix))->lambda;
}

// Blast_MatrixInfo as s_MatrixInfoInit fills it for a square matrix, with BLAST's own data.
struct OracleMatrixInfo {
  CMatrixInfo* info = nullptr;
  std::string name;
  explicit OracleMatrixInfo(const std::string& matrix) : name(matrix) {
    const Oracle* lib = oracle();
    info = lib->matrix_info_new(kN, kN, 0);
    info->matrixName = static_cast<char*>(std::malloc(name.size() + 1));
    std::memcpy(info->matrixName, name.c_str(), name.size() + 1);
    CFreqRatios* r = lib->freq_ratios_new(name.c_str());
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) info->startFreqRatios[i][j] = r->data[i][j];
    lib->freq_ratios_free(r);
    info->ungappedLambda = ideal_lambda(name) / 32;
    lib->int4_from_freq(info->startMatrix, kN, info->startFreqRatios, info->ungappedLambda);
  }
  ~OracleMatrixInfo() { oracle()->matrix_info_free(&info); }
  OracleMatrixInfo(const OracleMatrixInfo&) = delete;
  OracleMatrixInfo& operator=(const OracleMatrixInfo&) = delete;
};

struct OracleWorkspace {
  CWorkspace* ws = nullptr;
  explicit OracleWorkspace(const std::string& matrix) {
    ws = oracle()->workspace_new();
    EXPECT_EQ(oracle()->workspace_init(ws, matrix.c_str()), 0);
  }
  ~OracleWorkspace() { oracle()->workspace_free(&ws); }
  OracleWorkspace(const OracleWorkspace&) = delete;
  OracleWorkspace& operator=(const OracleWorkspace&) = delete;
};

const std::vector<std::string>& matrix_names() {
  static const std::vector<std::string> names = {"BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80",
                                                 "BLOSUM90", "PAM30",    "PAM70",    "PAM250"};
  return names;
}

TEST(CompositionData, TablesEqualLibblast) {
  REQUIRE_ORACLE();
  for (const std::string& name : matrix_names()) {
    const MatrixFrequencyData* d = matrix_frequency_data(name);
    ASSERT_NE(d, nullptr) << name;
    CFreqRatios* r = lib->freq_ratios_new(name.c_str());
    ASSERT_NE(r, nullptr);
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) EXPECT_TRUE(same_bits(d->freq_ratios[i * kN + j], r->data[i][j])) << name;
    lib->freq_ratios_free(r);
    std::vector<double> joint(kT * kT);
    std::vector<double> rows(kT), cols(kT);
    auto jr = rows_of(joint.data(), kT, kT);
    ASSERT_EQ(lib->joint_probs(jr.data(), rows.data(), cols.data(), name.c_str()), 0);
    const auto ws = CompositionWorkspace::create(name);
    ASSERT_TRUE(ws.has_value());
    for (int k = 0; k < kT * kT; ++k)
      EXPECT_TRUE(same_bits(ws->joint[static_cast<std::size_t>(k)], joint[static_cast<std::size_t>(k)]));
    const double* bg = lib->background(name.c_str());
    for (int i = 0; i < kT; ++i) {
      EXPECT_TRUE(
          same_bits(ws->first_standard_freq[static_cast<std::size_t>(i)], rows[static_cast<std::size_t>(i)]));
      EXPECT_TRUE(same_bits(ws->second_standard_freq[static_cast<std::size_t>(i)],
                            cols[static_cast<std::size_t>(i)]));
      EXPECT_TRUE(same_bits(ws->background[static_cast<std::size_t>(i)], bg[i]));
    }
  }
  EXPECT_EQ(matrix_frequency_data("blosum62"), matrix_frequency_data("BLOSUM62"));
  EXPECT_EQ(matrix_frequency_data("IDENTITY"), nullptr);
}

TEST(Composition, CodesMapToNcbistdaa) {
  const Alphabet alpha = Alphabet::protein();
  const std::string stdaa = "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ";
  for (int c = 0; c < alpha.size(); ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    EXPECT_EQ(stdaa[to_std(code)], alpha.symbol(code));
    EXPECT_EQ(from_std(to_std(code)), code);
  }
}

TEST(Composition, ReadAaCompositionEqualsLibblast) {
  REQUIRE_ORACLE();
  std::mt19937 rng(7);
  std::vector<std::vector<std::uint8_t>> seqs;
  for (int i = 0; i < 200; ++i) seqs.push_back(random_sequence(rng, 1 + i * 3, i % 3 == 0));
  seqs.push_back({});
  seqs.push_back({21, 21, 2, 23, 25});  // no true amino acid
  seqs.push_back({24, 24, 3, 1});       // U counted as C
  for (const auto& s : seqs) {
    const AaComposition ours = read_aa_composition(s);
    const CAaComposition want = oracle_composition(s);
    EXPECT_EQ(ours.true_aa, want.numTrueAminoAcids);
    for (int i = 0; i < kN; ++i) EXPECT_TRUE(same_bits(ours.prob[static_cast<std::size_t>(i)], want.prob[i]));
  }
}

// BLOSUM62's 20 x 20 scores in ARND order, as doubles.
std::vector<double> blosum62_arnd() {
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  const std::string arnd = "ARNDCQEGHILKMFPSTWYV";
  const Alphabet alpha = Alphabet::protein();
  std::vector<double> s;
  for (const char a : arnd)
    for (const char b : arnd) s.push_back(m.score(*alpha.code(a), *alpha.code(b)));
  return s;
}

TrueAaProbs arnd_probs(const AaComposition& c) {
  static constexpr std::array<int, kN> kConvert = {-1, 0, -1, 4,  3,  6,  13, 7,  8,  9,  11, 10, 12, 2,
                                                   14, 5, 1,  15, 16, 19, 17, -1, 18, -1, -1, -1, -1, -1};
  TrueAaProbs p{};
  for (int i = 0; i < kN; ++i)
    if (kConvert[static_cast<std::size_t>(i)] >= 0)
      p[static_cast<std::size_t>(kConvert[static_cast<std::size_t>(i)])] =
          c.prob[static_cast<std::size_t>(i)];
  return p;
}

TEST(Composition, CalcLambdaFullPrecisionEqualsLibblast) {
  REQUIRE_ORACLE();
  std::vector<double> scores = blosum62_arnd();
  auto rows = rows_of(scores.data(), kT, kT);
  std::mt19937 rng(11);
  int converged = 0;
  for (int i = 0; i < 300; ++i) {
    const TrueAaProbs p = arnd_probs(read_aa_composition(random_sequence(rng, 20 + i, i % 4 == 0)));
    const TrueAaProbs q = arnd_probs(read_aa_composition(random_sequence(rng, 30 + i, i % 5 == 0)));
    const LambdaResult ours = calc_lambda_full_precision(scores, kT, p, q, 1e-7, 1e-5, 100);
    double lambda = 0;
    int its = 0;
    lib->calc_lambda_full(&lambda, &its, rows.data(), kT, p.data(), q.data(), 1e-7, 1e-5, 100);
    EXPECT_TRUE(same_bits(ours.lambda, lambda)) << i << " " << ours.lambda << " " << lambda;
    EXPECT_EQ(ours.iterations, its);
    converged += its < 100 ? 1 : 0;
  }
  EXPECT_GT(converged, 250);
  // A composition made only of W against W: positive expected score, no lambda.
  TrueAaProbs w{};
  w[17] = 1;
  const LambdaResult none = calc_lambda_full_precision(scores, kT, w, w, 1e-7, 1e-5, 100);
  EXPECT_EQ(none.lambda, -1.0);
  EXPECT_EQ(none.iterations, 100);
}

TEST(Composition, KarlinLambdaNrEqualsLibblast) {
  REQUIRE_ORACLE();
  std::mt19937 rng(5);
  for (int i = 0; i < 300; ++i) {
    const int lo = -std::uniform_int_distribution<int>(1, 150)(rng);
    const int hi = std::uniform_int_distribution<int>(1, 400)(rng);
    std::vector<double> probs(static_cast<std::size_t>(hi - lo + 1), 0.0);
    double sum = 0;
    for (int s = lo; s <= hi; ++s) {
      // Mostly negative mass, a thin positive tail, holes (gcd > 1 in some cases).
      if (i % 7 == 0 && s % 2 != 0) continue;
      const double v = s < 0 ? std::uniform_real_distribution<double>(0, 1)(rng)
                             : std::uniform_real_distribution<double>(0, 0.02)(rng) / (1 + s);
      probs[static_cast<std::size_t>(s - lo)] = v;
      sum += v;
    }
    for (double& v : probs) v /= sum;
    const double lambda0 = std::uniform_real_distribution<double>(0.001, 0.5)(rng);
    std::vector<double> copy = probs;
    const double want = oracle_calc_lambda(copy.data(), lo, hi, lambda0);
    const double ours = karlin_lambda_nr(probs, lo, hi, lambda0);
    EXPECT_TRUE(same_bits(ours, want)) << i << " " << ours << " " << want;
  }
}

TEST(Composition, RelativeEntropyAndAdjustRuleEqualLibblast) {
  REQUIRE_ORACLE();
  const auto proteins = real_proteins(200);
  ASSERT_EQ(proteins.size(), 200U);
  std::mt19937 rng(3);
  int scale_old = 0, user_re = 0;
  for (std::size_t i = 0; i < proteins.size(); ++i) {
    const auto& a = proteins[i];
    // Partners: the next protein, a random biased sequence, a short fragment (length ratio > 3).
    const std::vector<std::vector<std::uint8_t>> partners = {
        proteins[(i + 1) % proteins.size()], random_sequence(rng, 60 + static_cast<int>(i), true),
        std::vector<std::uint8_t>(
            a.begin(), a.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(a.size(), 40)))};
    for (const auto& b : partners) {
      const TrueAaProbs p = arnd_probs(read_aa_composition(a));
      const TrueAaProbs q = arnd_probs(read_aa_composition(b));
      EXPECT_TRUE(same_bits(relative_entropy(p, q), lib->relative_entropy(p.data(), q.data())));
      for (const std::string& name : {std::string("BLOSUM62"), std::string("PAM30")}) {
        const TrueAaProbs bg = CompositionWorkspace::create(name)->background;
        for (int mode = 0; mode <= 3; ++mode) {
          const MatrixAdjustRule ours =
              choose_matrix_adjust_rule(static_cast<int>(a.size()), static_cast<int>(b.size()), p, q, bg,
                                        static_cast<AdjustMode>(mode));
          const int want = lib->choose_rule(static_cast<int>(a.size()), static_cast<int>(b.size()), p.data(),
                                            q.data(), name.c_str(), mode);
          EXPECT_EQ(static_cast<int>(ours), want) << i << " mode " << mode;
          if (mode == 2) (ours == MatrixAdjustRule::kScaleOldMatrix ? scale_old : user_re)++;
        }
      }
    }
  }
  // Both outcomes of the conditional test occur.
  EXPECT_GT(scale_old, 10);
  EXPECT_GT(user_re, 100);
}

TEST(Composition, OptimizeTargetFrequenciesEqualsLibblast) {
  REQUIRE_ORACLE();
  const auto proteins = real_proteins(60);
  const auto ws = CompositionWorkspace::create("BLOSUM62");
  for (std::size_t i = 0; i + 1 < proteins.size(); ++i) {
    TrueAaProbs row = arnd_probs(read_aa_composition(proteins[i]));
    TrueAaProbs col = arnd_probs(read_aa_composition(proteins[i + 1]));
    // Pseudocounts as Blast_CompositionMatrixAdj applies them (20 towards the matrix's margins).
    for (int side = 0; side < 2; ++side) {
      TrueAaProbs& p = side == 0 ? row : col;
      const TrueAaProbs& bg = side == 0 ? ws->first_standard_freq : ws->second_standard_freq;
      const int n = static_cast<int>((side == 0 ? proteins[i] : proteins[i + 1]).size());
      double sum = 0;
      for (const double v : p) sum += v;
      const double w = 20.0 / (n + 20.0);
      for (std::size_t k = 0; k < p.size(); ++k) p[k] = (1.0 - w) * p[k] / sum + w * bg[k];
    }
    for (const bool constrain : {true, false}) {
      const double re = constrain ? 0.44 : 0.0;
      TrueAaMatrix ours{};
      const OptimizeResult r =
          optimize_target_frequencies(ours, kT, ws->joint, row, col, constrain, re, 1e-8, 2000);
      std::vector<double> want(kT * kT);
      int its = 0;
      const int status = lib->optimize(want.data(), kT, &its, ws->joint.data(), row.data(), col.data(),
                                       constrain ? 1 : 0, re, 1e-8, 2000);
      EXPECT_EQ(r.status, status);
      EXPECT_EQ(r.iterations, its);
      for (int k = 0; k < kT * kT; ++k)
        EXPECT_TRUE(same_bits(ours[static_cast<std::size_t>(k)], want[static_cast<std::size_t>(k)]))
            << i << " " << k;
    }
  }
}

TEST(Composition, StartMatrixEqualsLibblast) {
  REQUIRE_ORACLE();
  for (const std::string& name : matrix_names()) {
    const auto info = MatrixInfo::create(name, ideal_lambda(name), 32);
    ASSERT_TRUE(info.has_value());
    const OracleMatrixInfo want(name);
    EXPECT_TRUE(same_bits(info->ungapped_lambda, want.info->ungappedLambda));
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j)
        EXPECT_EQ(info->start_matrix[static_cast<std::size_t>(i * kN + j)], want.info->startMatrix[i][j])
            << name << " " << i << " " << j;
  }
  EXPECT_FALSE(MatrixInfo::create("IDENTITY", 0.3, 32).has_value());
}

// Compare a 28 x 28 integer matrix with BLAST's.
void expect_same_matrix(const IntScores& ours, const std::vector<int>& want, const std::string& what) {
  int differences = 0;
  for (std::size_t k = 0; k < ours.size(); ++k) differences += ours[k] != want[k] ? 1 : 0;
  EXPECT_EQ(differences, 0) << what;
}

TEST(Composition, CompositionMatrixAdjEveryRuleEqualsLibblast) {
  REQUIRE_ORACLE();
  const auto proteins = real_proteins(40);
  for (const std::string name : {"BLOSUM62", "BLOSUM45", "PAM70"}) {
    const auto info = MatrixInfo::create(name, ideal_lambda(name), 32);
    const auto ws = CompositionWorkspace::create(name);
    const OracleMatrixInfo oinfo(name);
    const OracleWorkspace ows(name);
    for (std::size_t i = 0; i + 1 < proteins.size(); i += 3) {
      const AaComposition a = read_aa_composition(proteins[i]);
      const AaComposition b = read_aa_composition(proteins[i + 1]);
      for (const MatrixAdjustRule rule :
           {MatrixAdjustRule::kUnconstrainedRelEntropy, MatrixAdjustRule::kRelEntropyOldMatrixNewContext,
            MatrixAdjustRule::kRelEntropyOldMatrixOldContext, MatrixAdjustRule::kUserSpecifiedRelEntropy}) {
        IntScores ours{};
        const int status =
            composition_matrix_adj(ours, rule, a.true_aa, b.true_aa, a.prob, b.prob, 20, 0.44, *ws, *info);
        std::vector<int> want(kN * kN, 0);
        auto wr = rows_of(want.data(), kN, kN);
        const int want_status = lib->matrix_adj(wr.data(), kN, static_cast<int>(rule), a.true_aa, b.true_aa,
                                                a.prob.data(), b.prob.data(), 20, 0.44, ows.ws, oinfo.info);
        ASSERT_EQ(status, want_status) << name << " " << i;
        if (status == 0)
          expect_same_matrix(ours, want, name + " rule " + std::to_string(static_cast<int>(rule)));
      }
    }
  }
}

TEST(Composition, CompositionBasedStatsEqualsLibblast) {
  REQUIRE_ORACLE();
  const auto proteins = real_proteins(60);
  std::mt19937 rng(9);
  for (const std::string name : {"BLOSUM62", "BLOSUM80", "PAM250"}) {
    const auto info = MatrixInfo::create(name, ideal_lambda(name), 32);
    const OracleMatrixInfo oinfo(name);
    for (std::size_t i = 0; i + 1 < proteins.size(); ++i) {
      const AaComposition a = read_aa_composition(proteins[i]);
      const AaComposition b =
          read_aa_composition(i % 4 == 0 ? random_sequence(rng, 80, true) : proteins[i + 1]);
      for (const bool pvalue : {false, true}) {
        IntScores ours{};
        double ratio = 0;
        composition_based_stats(ours, ratio, *info, a.prob, b.prob, pvalue);
        std::vector<int> want(kN * kN, 0);
        auto wr = rows_of(want.data(), kN, kN);
        double want_ratio = 0;
        ASSERT_EQ(lib->cbs(wr.data(), &want_ratio, oinfo.info, a.prob.data(), b.prob.data(),
                           oracle_calc_lambda, pvalue ? 1 : 0),
                  0);
        EXPECT_TRUE(same_bits(ratio, want_ratio)) << name << " " << i;
        expect_same_matrix(ours, want, name + " cbs " + std::to_string(i));
      }
    }
  }
}

TEST(Composition, AdjustScoresEqualsLibblast) {
  REQUIRE_ORACLE();
  const auto proteins = real_proteins(400);
  std::mt19937 rng(13);
  int rules[5] = {0, 0, 0, 0, 0};
  for (const std::string& name : matrix_names()) {
    const auto info = MatrixInfo::create(name, ideal_lambda(name), 32);
    const auto ws = CompositionWorkspace::create(name);
    const OracleMatrixInfo oinfo(name);
    const OracleWorkspace ows(name);
    const std::size_t step = name == "BLOSUM62" ? 1 : 13;
    for (std::size_t i = 0; i + 1 < proteins.size(); i += step) {
      std::vector<std::uint8_t> partner = proteins[i + 1];
      if (i % 5 == 0) partner = random_sequence(rng, 30 + static_cast<int>(i % 300), true);
      if (i % 17 == 0) partner.resize(std::min<std::size_t>(partner.size(), 25));
      if (i % 29 == 0) partner.assign(20, 21);  // only X: no adjustment possible
      const AaComposition a = read_aa_composition(proteins[i]);
      const AaComposition b = read_aa_composition(partner);
      const CAaComposition ca = oracle_composition(proteins[i]);
      const CAaComposition cb = oracle_composition(partner);
      const int la = static_cast<int>(proteins[i].size()), lb = static_cast<int>(partner.size());
      for (const int mode : {1, 2, 3}) {
        IntScores ours{};
        const AdjustResult r =
            adjust_scores(ours, a, la, b, lb, *info, static_cast<AdjustMode>(mode), 20, *ws);
        std::vector<int> want(kN * kN, 0);
        auto wr = rows_of(want.data(), kN, kN);
        int want_rule = -1;
        double pvalue = -1, ratio = 0;
        const int status = lib->adjust_scores(wr.data(), &ca, la, &cb, lb, oinfo.info, mode, 20, ows.ws,
                                              &want_rule, oracle_calc_lambda, &pvalue, 0, &ratio);
        ASSERT_EQ(r.status, status) << name << " " << i << " mode " << mode;
        if (status != 0) continue;
        EXPECT_EQ(static_cast<int>(r.rule), want_rule) << name << " " << i << " mode " << mode;
        EXPECT_TRUE(same_bits(r.lambda_ratio, ratio)) << name << " " << i << " mode " << mode;
        expect_same_matrix(ours, want, name + " " + std::to_string(i) + " mode " + std::to_string(mode));
        if (name == "BLOSUM62" && mode == 2) rules[static_cast<int>(r.rule)]++;
      }
    }
  }
  // Mode 2 chose both rules on these pairs.
  EXPECT_GT(rules[static_cast<int>(MatrixAdjustRule::kScaleOldMatrix)], 5);
  EXPECT_GT(rules[static_cast<int>(MatrixAdjustRule::kUserSpecifiedRelEntropy)], 100);
}

TEST(CompositionProperties, TargetFrequenciesMeetTheirConstraints) {
  const auto ws = CompositionWorkspace::create("BLOSUM62");
  ASSERT_TRUE(ws.has_value());
  std::mt19937 rng(17);
  for (int i = 0; i < 30; ++i) {
    TrueAaProbs row = arnd_probs(read_aa_composition(random_sequence(rng, 200, i % 2 == 0)));
    TrueAaProbs col = arnd_probs(read_aa_composition(random_sequence(rng, 300, false)));
    for (std::size_t k = 0; k < row.size(); ++k) {
      row[k] = 0.8 * row[k] + 0.2 * ws->first_standard_freq[k];
      col[k] = 0.8 * col[k] + 0.2 * ws->second_standard_freq[k];
    }
    TrueAaMatrix x{};
    const OptimizeResult r = optimize_target_frequencies(x, kT, ws->joint, row, col, true, 0.44, 1e-8, 2000);
    ASSERT_EQ(r.status, 0) << i;
    double re = 0;
    for (int a = 0; a < kT; ++a) {
      double row_sum = 0, col_sum = 0;
      for (int b = 0; b < kT; ++b) {
        row_sum += x[static_cast<std::size_t>(a * kT + b)];
        col_sum += x[static_cast<std::size_t>(b * kT + a)];
        const double f = x[static_cast<std::size_t>(a * kT + b)];
        re += f * std::log(f / (row[static_cast<std::size_t>(a)] * col[static_cast<std::size_t>(b)]));
      }
      EXPECT_NEAR(row_sum, row[static_cast<std::size_t>(a)], 1e-8);
      EXPECT_NEAR(col_sum, col[static_cast<std::size_t>(a)], 1e-8);
    }
    EXPECT_NEAR(re, 0.44, 1e-8);
  }
}

}  // namespace
}  // namespace warpsearch::blast::compo
