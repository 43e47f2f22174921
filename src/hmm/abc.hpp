// Digital alphabets of the HMMER-compatible family, with Easel 0.48's exact codes (esl_alphabet.c):
// the symbol strings, the input map (synonyms, case-insensitivity), the degeneracy table, the
// code-class predicates, the scoring helpers for degenerate residues (esl_abc_F{Avg,Expect}Sc{ore,Vec})
// and digitization of sequence text under the FASTA reader's rules (esl_sqio_ascii.c).
//
// Code layout (as Easel): 0..K-1 canonical residues, K the gap, K+1..Kp-4 degeneracies, Kp-3 the "any"
// residue (X or N), Kp-2 the nonresidue '*', Kp-1 the missing-data '~'.
//   amino "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~"  K=20 Kp=29
//   DNA   "ACGT-RYMKSWHBVDN*~"             K=4  Kp=18
//   RNA   "ACGU-RYMKSWHBVDN*~"             K=4  Kp=18
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hmm/common.hpp"

namespace warpsearch::hmm {

enum class AbcType { kAmino, kDNA, kRNA };

/// Special input-map values (Easel's eslDSQ_ILLEGAL / eslDSQ_IGNORED).
inline constexpr uint8_t kDsqIllegal = 254;
inline constexpr uint8_t kDsqIgnored = 253;

struct Abc {
  AbcType type = AbcType::kAmino;
  int K = 0;        // canonical alphabet size
  int Kp = 0;       // total number of digital codes
  std::string sym;  // sym[x] is the text symbol of code x (size Kp)
  /// Text character -> digital code, or kDsqIllegal. Characters >= 128 are always illegal. This is the
  /// alphabet's own map (esl_alphabet inmap): it includes the gap symbols '-', '_' and '.'.
  std::array<uint8_t, 256> inmap{};
  std::vector<std::vector<char>> degen;  // degen[x][y] = 1 when code x can be canonical residue y; [Kp][K]
  std::vector<int> ndegen;               // number of canonical residues code x stands for (0 for gap, *, ~)
};

/// The shared, immutable alphabet of a type (thread-safe, created once).
const Abc& abc(AbcType type);

/// Name as Easel writes it ("amino", "DNA", "RNA").
const char* abc_type_name(AbcType type);

// Code-class predicates (esl_abc_XIs*).
inline bool is_valid(const Abc& a, int x) { return x >= 0 && x < a.Kp; }
inline bool is_canonical(const Abc& a, int x) { return x >= 0 && x < a.K; }
inline bool is_gap(const Abc& a, int x) { return x == a.K; }
inline bool is_degenerate(const Abc& a, int x) { return x > a.K && x < a.Kp - 2; }
inline bool is_residue(const Abc& a, int x) { return is_canonical(a, x) || is_degenerate(a, x); }
inline bool is_unknown(const Abc& a, int x) { return x == a.Kp - 3; }
inline bool is_nonresidue(const Abc& a, int x) { return x == a.Kp - 2; }
inline bool is_missing(const Abc& a, int x) { return x == a.Kp - 1; }
inline uint8_t gap_code(const Abc& a) { return static_cast<uint8_t>(a.K); }
inline uint8_t unknown_code(const Abc& a) { return static_cast<uint8_t>(a.Kp - 3); }
inline uint8_t nonresidue_code(const Abc& a) { return static_cast<uint8_t>(a.Kp - 2); }
inline uint8_t missing_code(const Abc& a) { return static_cast<uint8_t>(a.Kp - 1); }

/// esl_abc_FAvgScore: mean of sc[y] over the canonical y that x stands for (float sum in y order, then
/// divided by (float)ndegen); 0 for non-residues.
float avg_score(const Abc& a, int x, const float* sc);
/// esl_abc_FExpectScore: sum(sc[y]*p[y]) / sum(p[y]) over the canonical y that x stands for (float, y
/// order); 0 for non-residues.
float expect_score(const Abc& a, int x, const float* sc, const float* p);
/// esl_abc_FAvgScVec: sc[x] = avg_score(x) for x = K+1..Kp-3 (in increasing x, each using the
/// already-updated vector as Easel does); sc[0..K-1] must be set, sc[K], sc[Kp-2], sc[Kp-1] untouched.
void avg_sc_vec(const Abc& a, float* sc);
/// esl_abc_FExpectScVec: sc[x] = expect_score(x) for x = K+1..Kp-3, as avg_sc_vec.
void expect_sc_vec(const Abc& a, float* sc, const float* p);

/// The input map Easel's FASTA reader uses in digital mode (esl_sqio_ascii.c inmap_fasta): the
/// alphabet's map, except that '-' is illegal; ' ', '\t', '\r', '\n' are ignored (kDsqIgnored); '*' is
/// the nonresidue code; '.' and '_' stay gap codes as in the alphabet; everything else unmapped
/// (digits, '>', non-ASCII, ...) is illegal.
const std::array<uint8_t, 256>& fasta_inmap(const Abc& a);

/// Appends the digital codes of a piece of sequence text (FASTA rules, fasta_inmap) to out. Returns
/// std::string_view::npos on success, else the index of the first illegal character (out then holds
/// the codes before it).
std::size_t digitize_append(std::string_view text, const Abc& a, Dsq& out);

/// Digitizes a whole sequence text under FASTA rules into Easel's layout: sentinels at [0] and [L+1].
/// Throws warpsearch::Error(kFormat, "illegal character 'c' at sequence position i") for a character the
/// FASTA reader rejects (no file/line: callers that know them should use digitize_append instead).
Dsq digitize(std::string_view text, const Abc& a);

/// Text of codes dsq[1..L] (esl_abc_Textize: sym[x] for each code).
std::string textize(const Dsq& dsq, const Abc& a);

}  // namespace warpsearch::hmm
