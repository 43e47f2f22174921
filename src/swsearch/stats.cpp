// stats.cpp: swsearch's E-values and bit scores, reproducing ssearch36's analytic statistics (fasta36
// 36.3.8, `ssearch36 -z 3`, "Altschul/Gish params"), and the parameter tables they use.
//
// Contents: ssearch36's Altschul-Gish parameter rows for the scoring systems we share with it, the lookup
// rule that picks a row, Statistics::make (those rows first, else BLAST+'s tables from stats/karlin.hpp,
// else Error(kUsage)), bits / evalue / describe.
//
// The model (fasta36 src/scaleswn.c: proc_hist_a, look_p, find_za, zs_to_E, zs_to_bit; read, not copied):
// for a hit of raw score S between a query of length m and a target of length n,
//   l   = ln(K m) / H + ln(n) / H                        (edge correction, Altschul & Gish 1996)
//   m'  = max(1, m - l),  n' = max(1, n - l)
//   x   = lambda S - ln(K n' m')
//   e   = exp(-x),  P = e > 0.01 ? 1 - exp(-e) : e       (extreme-value P-value of the pair)
//   E   = D P, D = database sequences (or -Z) for protein, max(1, database residues / n) for DNA
//   bits = (x + ln(m n)) / ln 2 = (lambda S - ln K) / ln 2 + log2(m n / (m' n'))
// ssearch36 passes x through its z-score (zs = 50 + 10 (x - gamma) / (pi / sqrt 6)) and back; we do the
// same operations in the same order (no FMA: the swsearch family builds with -ffp-contract=off), so with
// the same libm the doubles should be ssearch36's (the tests compare the printed values), and like it we
// return E = 0 when (x - gamma) / (pi / sqrt 6) > 400.
//
// Gap costs: ours (and ssearch36's -f/-g since fasta 36) charge open + k * extend for a gap of length k;
// ssearch36's Altschul-Gish table is keyed by the cost of the first gap residue (open + extend) and the
// extension cost, so BLOSUM62 11/1 (ssearch36 -f 11 -g 1) reads the table's "12, 1" row.
#include "swsearch/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "stats/karlin.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::swsearch {
namespace {

// One row of ssearch36's Altschul-Gish table. `first` is the cost of a gap's first residue (our open +
// extend), `extend` the cost of each further residue. lambda, K, H are floats as in fasta36 (the values
// widen to double exactly as ssearch36's do). The first row of every table holds the ungapped
// parameters (first = extend = 0).
struct AgRow {
  int first, extend;
  float lambda, K, H;
};

// The values are fasta36's src/alt_parms.h (W. R. Pearson, Apache License 2.0), arrays bl50_p, bl62_p,
// bl80_p, p250_p and nt54_p, in their order (the lookup depends on it), without the terminating sentinel
// rows. bl62_p's duplicated 9/4 row is kept: it is what ssearch36 looks up. alt_parms.h also has tables
// for DNA 3/-2 and 1/-3, but ssearch36 never reads them: its DNA scoring is always named "DNA", which
// selects the 5/-4 table whatever -r says (observed: ssearch36 -r +1/-3 -f 12 -g 4 prints 5/-4's lambda).
// We use the 5/-4 table for 5/-4 only; other DNA pairs get BLAST+'s blastn parameters (Statistics::make).
constexpr AgRow kBlosum50[] = {
    {0, 0, 0.232f, 0.11f, 0.34f},   {16, 4, 0.222f, 0.08f, 0.31f},  {16, 3, 0.213f, 0.06f, 0.27f},
    {16, 2, 0.207f, 0.05f, 0.24f},  {16, 1, 0.180f, 0.024f, 0.15f}, {15, 8, 0.222f, 0.09f, 0.31f},
    {15, 7, 0.219f, 0.08f, 0.29f},  {15, 6, 0.219f, 0.08f, 0.29f},  {15, 5, 0.216f, 0.07f, 0.28f},
    {15, 4, 0.216f, 0.07f, 0.28f},  {15, 3, 0.210f, 0.06f, 0.25f},  {15, 2, 0.202f, 0.05f, 0.22f},
    {15, 1, 0.166f, 0.018f, 0.11f}, {14, 8, 0.218f, 0.08f, 0.29f},  {14, 7, 0.214f, 0.07f, 0.27f},
    {14, 6, 0.214f, 0.07f, 0.27f},  {14, 5, 0.214f, 0.07f, 0.27f},  {14, 4, 0.205f, 0.05f, 0.24f},
    {14, 3, 0.201f, 0.05f, 0.22f},  {14, 2, 0.188f, 0.034f, 0.17f}, {14, 1, 0.140f, 0.009f, 0.07f},
    {13, 8, 0.211f, 0.06f, 0.27f},  {13, 7, 0.205f, 0.05f, 0.24f},  {13, 6, 0.205f, 0.05f, 0.24f},
    {13, 5, 0.205f, 0.05f, 0.24f},  {13, 4, 0.202f, 0.05f, 0.22f},  {13, 3, 0.188f, 0.034f, 0.18f},
    {13, 2, 0.174f, 0.025f, 0.13f}, {13, 1, 0.114f, 0.006f, 0.04f}, {12, 7, 0.205f, 0.06f, 0.24f},
    {12, 6, 0.197f, 0.05f, 0.21f},  {12, 5, 0.197f, 0.05f, 0.21f},  {12, 4, 0.192f, 0.04f, 0.18f},
    {12, 3, 0.178f, 0.028f, 0.15f}, {12, 2, 0.158f, 0.019f, 0.10f}, {11, 8, 0.197f, 0.05f, 0.21f},
    {11, 7, 0.190f, 0.04f, 0.19f},  {11, 6, 0.190f, 0.04f, 0.19f},  {11, 5, 0.184f, 0.04f, 0.17f},
    {11, 4, 0.177f, 0.031f, 0.15f}, {11, 3, 0.167f, 0.028f, 0.11f}, {11, 2, 0.130f, 0.009f, 0.06f},
    {10, 8, 0.183f, 0.04f, 0.17f},  {10, 7, 0.178f, 0.035f, 0.16f}, {10, 6, 0.178f, 0.035f, 0.16f},
    {10, 5, 0.168f, 0.026f, 0.13f}, {10, 4, 0.156f, 0.020f, 0.10f}, {10, 3, 0.139f, 0.013f, 0.07f},
    {10, 2, 0.099f, 0.007f, 0.03f}, {9, 7, 0.164f, 0.029f, 0.13f},  {9, 6, 0.152f, 0.021f, 0.10f},
    {9, 5, 0.152f, 0.021f, 0.10f},  {9, 4, 0.134f, 0.014f, 0.07f},  {9, 3, 0.107f, 0.008f, 0.04f},
    {8, 8, 0.139f, 0.017f, 0.08f},  {8, 7, 0.134f, 0.015f, 0.07f},  {8, 6, 0.127f, 0.013f, 0.06f},
    {8, 5, 0.117f, 0.011f, 0.05f},  {8, 4, 0.101f, 0.009f, 0.03f},  {7, 7, 0.100f, 0.010f, 0.04f},
    {7, 6, 0.094f, 0.010f, 0.03f},
};

constexpr AgRow kBlosum62[] = {
    {0, 0, 0.318f, 0.13f, 0.40f},   {12, 3, 0.305f, 0.10f, 0.38f},  {12, 2, 0.300f, 0.09f, 0.34f},
    {12, 1, 0.275f, 0.05f, 0.25f},  {11, 3, 0.301f, 0.09f, 0.36f},  {11, 2, 0.286f, 0.07f, 0.29f},
    {11, 1, 0.255f, 0.035f, 0.19f}, {10, 4, 0.293f, 0.08f, 0.33f},  {10, 3, 0.281f, 0.06f, 0.29f},
    {10, 2, 0.266f, 0.04f, 0.24f},  {10, 1, 0.216f, 0.014f, 0.12f}, {9, 5, 0.286f, 0.08f, 0.29f},
    {9, 4, 0.273f, 0.06f, 0.25f},   {9, 4, 0.273f, 0.06f, 0.25f},   {9, 2, 0.244f, 0.030f, 0.18f},
    {9, 1, 0.176f, 0.008f, 0.06f},  {8, 8, 0.270f, 0.06f, 0.25f},   {8, 7, 0.270f, 0.06f, 0.25f},
    {8, 6, 0.262f, 0.05f, 0.23f},   {8, 5, 0.262f, 0.05f, 0.23f},   {8, 4, 0.262f, 0.05f, 0.23f},
    {8, 3, 0.243f, 0.035f, 0.18f},  {8, 2, 0.215f, 0.021f, 0.12f},  {7, 7, 0.247f, 0.05f, 0.18f},
    {7, 6, 0.247f, 0.05f, 0.18f},   {7, 5, 0.230f, 0.030f, 0.15f},  {7, 4, 0.230f, 0.030f, 0.15f},
    {7, 3, 0.208f, 0.021f, 0.11f},  {7, 2, 0.164f, 0.009f, 0.06f},  {6, 6, 0.200f, 0.021f, 0.10f},
    {6, 5, 0.200f, 0.021f, 0.10f},  {6, 4, 0.179f, 0.014f, 0.08f},  {6, 3, 0.153f, 0.010f, 0.05f},
    {5, 5, 0.131f, 0.009f, 0.04f},
};

constexpr AgRow kBlosum80[] = {
    {0, 0, 0.343f, 0.177f, 0.66f},  {14, 2, 0.336f, 0.150f, 0.62f}, {12, 2, 0.328f, 0.130f, 0.54f},
    {12, 1, 0.314f, 0.096f, 0.41f}, {11, 2, 0.320f, 0.110f, 0.51f}, {11, 1, 0.296f, 0.066f, 0.36f},
    {10, 2, 0.311f, 0.097f, 0.46f}, {10, 1, 0.282f, 0.052f, 0.29f}, {9, 2, 0.292f, 0.069f, 0.33f},
    {9, 1, 0.248f, 0.026f, 0.18f},  {8, 2, 0.271f, 0.050f, 0.27f},  {8, 1, 0.189f, 0.0071f, 0.07f},
};

constexpr AgRow kPam250[] = {
    {0, 0, 0.229f, 0.09f, 0.23f},   {16, 4, 0.217f, 0.07f, 0.21f},  {16, 3, 0.208f, 0.05f, 0.18f},
    {16, 2, 0.200f, 0.04f, 0.16f},  {16, 1, 0.172f, 0.018f, 0.09f}, {15, 5, 0.215f, 0.06f, 0.20f},
    {15, 4, 0.208f, 0.05f, 0.18f},  {15, 3, 0.203f, 0.04f, 0.16f},  {15, 2, 0.193f, 0.035f, 0.14f},
    {15, 1, 0.154f, 0.012f, 0.07f}, {14, 6, 0.212f, 0.06f, 0.19f},  {14, 5, 0.204f, 0.05f, 0.17f},
    {14, 4, 0.204f, 0.05f, 0.17f},  {14, 3, 0.194f, 0.035f, 0.14f}, {14, 2, 0.180f, 0.025f, 0.11f},
    {14, 1, 0.131f, 0.008f, 0.04f}, {13, 6, 0.206f, 0.06f, 0.17f},  {13, 5, 0.196f, 0.04f, 0.14f},
    {13, 4, 0.196f, 0.04f, 0.14f},  {13, 3, 0.184f, 0.029f, 0.12f}, {13, 2, 0.163f, 0.016f, 0.08f},
    {13, 1, 0.110f, 0.008f, 0.03f}, {12, 7, 0.199f, 0.05f, 0.15f},  {12, 6, 0.191f, 0.04f, 0.13f},
    {12, 5, 0.191f, 0.04f, 0.13f},  {12, 4, 0.181f, 0.029f, 0.12f}, {12, 3, 0.170f, 0.022f, 0.10f},
    {12, 2, 0.145f, 0.012f, 0.06f}, {11, 7, 0.186f, 0.04f, 0.13f},  {11, 6, 0.180f, 0.034f, 0.11f},
    {11, 5, 0.180f, 0.034f, 0.11f}, {11, 4, 0.165f, 0.021f, 0.09f}, {11, 3, 0.153f, 0.017f, 0.07f},
    {11, 2, 0.122f, 0.009f, 0.04f}, {10, 8, 0.175f, 0.031f, 0.11f}, {10, 7, 0.171f, 0.029f, 0.10f},
    {10, 6, 0.165f, 0.024f, 0.09f}, {10, 5, 0.158f, 0.020f, 0.08f}, {10, 4, 0.148f, 0.017f, 0.07f},
    {10, 3, 0.129f, 0.012f, 0.05f}, {9, 7, 0.151f, 0.020f, 0.07f},  {9, 6, 0.146f, 0.019f, 0.06f},
    {9, 5, 0.137f, 0.015f, 0.05f},  {9, 4, 0.121f, 0.011f, 0.04f},  {9, 3, 0.102f, 0.010f, 0.03f},
    {8, 8, 0.123f, 0.014f, 0.05f},  {8, 7, 0.123f, 0.014f, 0.05f},  {8, 6, 0.115f, 0.012f, 0.04f},
    {8, 5, 0.107f, 0.011f, 0.03f},  {7, 7, 0.090f, 0.014f, 0.02f},
};

constexpr AgRow kDna5_4[] = {
    {0, 0, 0.192f, 0.173f, 0.36f},
    {16, 4, 0.192f, 0.177f, 0.36f},
};

// The scoring systems whose ssearch36 -z 3 parameters we reproduce: built-in protein matrices (by scores)
// and DNA match/mismatch 5/-4 (ssearch36's default DNA scoring).
struct AgTable {
  std::string_view matrix;  // ScoringMatrix::builtin name; empty for DNA
  int match, mismatch;      // DNA only
  std::span<const AgRow> rows;
};

constexpr AgTable kAgTables[] = {
    {"BLOSUM50", 0, 0, kBlosum50}, {"BLOSUM62", 0, 0, kBlosum62}, {"BLOSUM80", 0, 0, kBlosum80},
    {"PAM250", 0, 0, kPam250},     {"", 5, -4, kDna5_4},
};

// pi / sqrt(6) and Euler's gamma, to the digits ssearch36 uses (scaleswn.c PI_SQRT6, EULER_G).
constexpr double kPiSqrt6 = 1.28254983016186409554;
constexpr double kEulerGamma = 0.57721566490153286060;
// ssearch36's zs_to_E returns 0 beyond this many standard deviations (ZS_MAX, an underflow guard).
constexpr double kZMax = 400.0;

// (match, mismatch) of a nucleotide matrix whose A/C/G/T block is match/mismatch scoring, else nullopt.
std::optional<std::pair<int, int>> match_mismatch(const ScoringMatrix& matrix) {
  if (matrix.alphabet() == AlphabetKind::kProtein) return std::nullopt;
  const int match = matrix.score(0, 0), mismatch = matrix.score(0, 1);
  for (std::uint8_t a = 0; a < 4; ++a) {
    for (std::uint8_t b = 0; b < 4; ++b) {
      if (matrix.score(a, b) != (a == b ? match : mismatch)) return std::nullopt;
    }
  }
  if (match <= 0 || mismatch >= 0) return std::nullopt;
  return std::pair{match, mismatch};
}

// The built-in matrix whose scores `matrix` has, else empty.
std::string_view builtin_name(const ScoringMatrix& matrix) {
  if (matrix.alphabet() != AlphabetKind::kProtein) return {};
  static const std::vector<ScoringMatrix> builtins = [] {
    std::vector<ScoringMatrix> m;
    for (const std::string_view name : ScoringMatrix::builtin_names())
      m.push_back(ScoringMatrix::builtin(name));
    return m;
  }();
  const auto names = ScoringMatrix::builtin_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (matrix.same_scores(builtins[i])) return names[i];
  }
  return {};
}

const AgTable* ag_table(const ScoringMatrix& matrix) {
  const std::string_view name = builtin_name(matrix);
  const auto mm = match_mismatch(matrix);
  for (const AgTable& t : kAgTables) {
    if (!name.empty() && t.matrix == name) return &t;
    if (mm && t.matrix.empty() && t.match == mm->first && t.mismatch == mm->second) return &t;
  }
  return nullptr;
}

// ssearch36's lookup (look_p) for first-residue cost `first` and extension `extend`: the ungapped row when
// `first` exceeds the first gapped row's; else the first row, in table order, whose first and extend are
// both <= the request; nullptr when none is (ssearch36 then silently uses BLOSUM62's table; we refuse).
const AgRow* ag_lookup(std::span<const AgRow> rows, int first, int extend) {
  if (first > rows[1].first) return &rows[0];
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].first <= first && rows[i].extend <= extend) return &rows[i];
  }
  return nullptr;
}

std::string gaps_text(GapCosts g) { return fmt::format("{}/{}", g.open, g.extend); }

// The Error(kUsage) for a scoring system without parameters: what is supported instead.
[[noreturn]] void throw_unsupported(const ScoringMatrix& matrix, GapCosts gaps, const AgTable* ag) {
  std::vector<GapCosts> listed;  // sorted by open, then extend; no duplicates
  auto add = [&](GapCosts g) {
    if (std::ranges::find(listed, g) == listed.end()) listed.push_back(g);
  };
  if (ag != nullptr) {
    for (std::size_t i = 1; i < ag->rows.size(); ++i)
      add({ag->rows[i].first - ag->rows[i].extend, ag->rows[i].extend});
  }
  for (const GapCosts g : stats::tabulated_gaps(matrix)) add(g);
  if (listed.empty()) {
    throw Error(
        ErrorKind::kUsage,
        fmt::format("no E-value parameters for matrix {}: supported are the built-in matrices (BLOSUM45, "
                    "BLOSUM50, BLOSUM62, BLOSUM80, BLOSUM90, PAM30, PAM70, PAM250, or files with their "
                    "scores) and DNA match/mismatch 5/-4 (ssearch36) or a reward/penalty "
                    "pair blastn supports (1/-5, 1/-4, 2/-7, 1/-3, 2/-5, 1/-2, 2/-3, 3/-4, 1/-1, 3/-2, "
                    "4/-5, 5/-4 and their multiples)",
                    matrix.name()));
  }
  std::ranges::sort(listed, {}, [](GapCosts g) { return std::pair{g.open, g.extend}; });
  std::string list;
  for (const GapCosts g : listed) list += (list.empty() ? "" : ", ") + gaps_text(g);
  std::string above;
  if (ag != nullptr) {
    above = fmt::format(
        "; ssearch36's table also covers costs between its rows (the nearest cheaper row) and any "
        "costs with open + extend > {} (ungapped parameters)",
        ag->rows[1].first);
  }
  throw Error(ErrorKind::kUsage, fmt::format("no E-value parameters for {} with gap costs {} (open/extend); "
                                             "tabulated gap costs for this matrix: {}{}",
                                             matrix.name(), gaps_text(gaps), list, above));
}

}  // namespace

Statistics Statistics::make(const ScoringMatrix& matrix, GapCosts gaps) {
  gaps.validate();
  Statistics s;
  s.nucleotide = matrix.alphabet() != AlphabetKind::kProtein;
  const std::string_view builtin = builtin_name(matrix);
  const std::string name = builtin.empty() ? matrix.name() : std::string(builtin);
  const AgTable* ag = ag_table(matrix);
  if (ag != nullptr) {
    if (const AgRow* row = ag_lookup(ag->rows, gaps.open + gaps.extend, gaps.extend)) {
      s.lambda = row->lambda;
      s.K = row->K;
      s.H = row->H;
      s.source = Source::kSsearch36;
      const std::string which = row == &ag->rows[0]
                                    ? std::string("ungapped row")
                                    : fmt::format("row {}/{}", row->first - row->extend, row->extend);
      s.label_ = fmt::format("{} {}; ssearch36 -z 3 table, {}", name, gaps_text(gaps), which);
      return s;
    }
  }
  if (const auto kp = stats::gapped_params(matrix, gaps)) {
    s.lambda = kp->lambda;
    s.K = kp->K;
    s.H = kp->H;
    s.source = Source::kBlast;
    s.label_ = fmt::format("{} {}; BLAST+ table", name, gaps_text(gaps));
    return s;
  }
  throw_unsupported(matrix, gaps, ag);
}

namespace {

// ssearch36's z-score of a hit (find_za): 50 + 10 standard deviations of the extreme-value distribution.
double z_score(const Statistics& s, std::int32_t score, double m, double n) {
  const double len_query = std::log(s.K * m) / s.H;
  const double len_target = std::log(n) / s.H;
  double mp = m - len_query - len_target;
  double np = n - len_query - len_target;
  if (np < 1.0) np = 1.0;
  if (mp < 1.0) mp = 1.0;
  double z = s.lambda * static_cast<double>(score) - std::log(s.K * np * mp);
  z = -z + kEulerGamma;
  z /= -kPiSqrt6;
  return 50.0 + z * 10.0;
}

// Lengths enter logarithms: an empty sequence (which ssearch36 never scores) counts as length 1.
double length_of(std::uint32_t length) { return length == 0 ? 1.0 : static_cast<double>(length); }

}  // namespace

double Statistics::bits(std::int32_t score, std::uint32_t query_length, std::uint32_t target_length) const {
  const double m = length_of(query_length), n = length_of(target_length);
  const double z = (z_score(*this, score, m, n) - 50.0) / 10.0;
  return (kPiSqrt6 * z + kEulerGamma + std::log(m * n)) / std::numbers::ln2;
}

double Statistics::evalue(std::int32_t score, std::uint32_t query_length, std::uint32_t target_length,
                          const SearchSpace& space) const {
  const double m = length_of(query_length), n = length_of(target_length);
  double z = (z_score(*this, score, m, n) - 50.0) / 10.0;
  if (z > kZMax) return 0.0;
  double k = nucleotide ? static_cast<double>(space.residues) / n : static_cast<double>(space.sequences);
  if (k < 1.0) k = 1.0;
  z *= kPiSqrt6;
  z += kEulerGamma;
  const double e = std::exp(-z);
  return k * (e > 0.01 ? 1.0 - std::exp(-e) : e);
}

std::string Statistics::describe() const {
  return fmt::format("Altschul-Gish lambda={:.3f} K={:.3f} H={:.3f} ({})", lambda, K, H, label_);
}

}  // namespace warpsearch::swsearch
