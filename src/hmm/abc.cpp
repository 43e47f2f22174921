// Digital alphabets (see abc.hpp): construction of Easel 0.48's amino/DNA/RNA alphabets with their input
// maps, synonyms, case rules and degeneracies; the FASTA reader's input map; digitization; and the
// degenerate-residue scoring helpers with Easel's float arithmetic.
#include "hmm/abc.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

// esl_alphabet_CreateCustom: symbols map to their codes, every other character is illegal; canonical
// codes are their own single degeneracy, the "any" code Kp-3 stands for all K canonicals.
Abc create_custom(AbcType type, const char* symbols, int K, int Kp) {
  Abc a;
  a.type = type;
  a.K = K;
  a.Kp = Kp;
  a.sym = symbols;
  a.inmap.fill(kDsqIllegal);
  for (int x = 0; x < Kp; ++x)
    a.inmap[static_cast<unsigned char>(a.sym[static_cast<std::size_t>(x)])] = static_cast<uint8_t>(x);
  a.degen.assign(static_cast<std::size_t>(Kp), std::vector<char>(static_cast<std::size_t>(K), 0));
  a.ndegen.assign(static_cast<std::size_t>(Kp), 0);
  for (int x = 0; x < K; ++x) {
    a.ndegen[static_cast<std::size_t>(x)] = 1;
    a.degen[static_cast<std::size_t>(x)][static_cast<std::size_t>(x)] = 1;
  }
  a.ndegen[static_cast<std::size_t>(Kp - 3)] = K;
  for (int y = 0; y < K; ++y) a.degen[static_cast<std::size_t>(Kp - 3)][static_cast<std::size_t>(y)] = 1;
  return a;
}

// esl_alphabet_SetEquiv: text character c is read as the symbol s.
void set_equiv(Abc& a, char c, char s) {
  a.inmap[static_cast<unsigned char>(c)] = static_cast<uint8_t>(a.sym.find(s));
}

bool char_valid(const Abc& a, int c) {
  return c >= 0 && c < 128 && a.inmap[static_cast<std::size_t>(c)] < a.Kp;
}

// esl_alphabet_SetCaseInsensitive: each letter valid in one case only is made valid in the other case.
void set_case_insensitive(Abc& a) {
  for (int lc = 'a'; lc <= 'z'; ++lc) {
    const int uc = std::toupper(lc);
    if (char_valid(a, lc) && !char_valid(a, uc)) {
      a.inmap[static_cast<std::size_t>(uc)] = a.inmap[static_cast<std::size_t>(lc)];
    } else if (char_valid(a, uc) && !char_valid(a, lc)) {
      a.inmap[static_cast<std::size_t>(lc)] = a.inmap[static_cast<std::size_t>(uc)];
    }
  }
}

// esl_alphabet_SetDegeneracy: symbol c stands for each canonical symbol in ds.
void set_degeneracy(Abc& a, char c, const char* ds) {
  const auto x = a.sym.find(c);
  for (; *ds != '\0'; ++ds) {
    const auto y = a.sym.find(*ds);
    a.degen[x][y] = 1;
    a.ndegen[x]++;
  }
}

Abc create_amino() {
  Abc a = create_custom(AbcType::kAmino, "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~", 20, 29);
  set_equiv(a, '_', '-');
  set_equiv(a, '.', '-');
  set_case_insensitive(a);
  set_degeneracy(a, 'B', "ND");
  set_degeneracy(a, 'J', "IL");
  set_degeneracy(a, 'Z', "QE");
  set_degeneracy(a, 'U', "C");
  set_degeneracy(a, 'O', "K");
  return a;
}

// DNA and RNA differ only in T/U (each reads the other as a synonym).
Abc create_nucleic(AbcType type) {
  const bool rna = type == AbcType::kRNA;
  Abc a = create_custom(type, rna ? "ACGU-RYMKSWHBVDN*~" : "ACGT-RYMKSWHBVDN*~", 4, 18);
  const char* t = rna ? "U" : "T";
  set_equiv(a, rna ? 'T' : 'U', t[0]);
  set_equiv(a, 'X', 'N');
  set_equiv(a, 'I', 'A');
  set_equiv(a, '_', '-');
  set_equiv(a, '.', '-');
  set_case_insensitive(a);
  const std::string T(t);
  set_degeneracy(a, 'R', "AG");
  set_degeneracy(a, 'Y', ("C" + T).c_str());
  set_degeneracy(a, 'M', "AC");
  set_degeneracy(a, 'K', ("G" + T).c_str());
  set_degeneracy(a, 'S', "CG");
  set_degeneracy(a, 'W', ("A" + T).c_str());
  set_degeneracy(a, 'H', ("AC" + T).c_str());
  set_degeneracy(a, 'B', ("CG" + T).c_str());
  set_degeneracy(a, 'V', "ACG");
  set_degeneracy(a, 'D', ("AG" + T).c_str());
  return a;
}

// inmap_fasta() of esl_sqio_ascii.c in digital mode, with its end-of-line code folded into "ignored"
// and its end-of-record '>' made illegal (a '>' inside sequence text is not a residue).
std::array<uint8_t, 256> make_fasta_inmap(const Abc& a) {
  std::array<uint8_t, 256> m{};
  m.fill(kDsqIllegal);
  for (std::size_t c = 0; c < 128; ++c) m[c] = a.inmap[c];
  m[static_cast<unsigned char>('-')] = kDsqIllegal;
  m[static_cast<unsigned char>('*')] = nonresidue_code(a);
  m[static_cast<unsigned char>(' ')] = kDsqIgnored;
  m[static_cast<unsigned char>('\t')] = kDsqIgnored;
  m[static_cast<unsigned char>('\r')] = kDsqIgnored;
  m[static_cast<unsigned char>('\n')] = kDsqIgnored;
  m[static_cast<unsigned char>('>')] = kDsqIllegal;
  return m;
}

struct AlphabetSet {
  Abc amino = create_amino();
  Abc dna = create_nucleic(AbcType::kDNA);
  Abc rna = create_nucleic(AbcType::kRNA);
  std::array<uint8_t, 256> fasta_amino = make_fasta_inmap(amino);
  std::array<uint8_t, 256> fasta_dna = make_fasta_inmap(dna);
  std::array<uint8_t, 256> fasta_rna = make_fasta_inmap(rna);
};

const AlphabetSet& alphabets() {
  static const AlphabetSet set;  // thread-safe one-time initialization
  return set;
}

}  // namespace

const Abc& abc(AbcType type) {
  const AlphabetSet& s = alphabets();
  switch (type) {
    case AbcType::kAmino: return s.amino;
    case AbcType::kDNA: return s.dna;
    case AbcType::kRNA: return s.rna;
  }
  return s.amino;
}

const char* abc_type_name(AbcType type) {
  switch (type) {
    case AbcType::kAmino: return "amino";
    case AbcType::kDNA: return "DNA";
    case AbcType::kRNA: return "RNA";
  }
  return "unknown";
}

float avg_score(const Abc& a, int x, const float* sc) {
  if (!is_residue(a, x)) return 0.0f;
  const auto& d = a.degen[static_cast<std::size_t>(x)];
  float result = 0.0f;
  for (int y = 0; y < a.K; ++y)
    if (d[static_cast<std::size_t>(y)]) result += sc[y];
  result /= static_cast<float>(a.ndegen[static_cast<std::size_t>(x)]);
  return result;
}

float expect_score(const Abc& a, int x, const float* sc, const float* p) {
  if (!is_residue(a, x)) return 0.0f;
  const auto& d = a.degen[static_cast<std::size_t>(x)];
  float result = 0.0f;
  float denom = 0.0f;
  for (int y = 0; y < a.K; ++y) {
    if (d[static_cast<std::size_t>(y)]) {
      result += sc[y] * p[y];  // product rounded to float, then added (no fused multiply-add)
      denom += p[y];
    }
  }
  result /= denom;
  return result;
}

void avg_sc_vec(const Abc& a, float* sc) {
  for (int x = a.K + 1; x <= a.Kp - 3; ++x) sc[x] = avg_score(a, x, sc);
}

void expect_sc_vec(const Abc& a, float* sc, const float* p) {
  for (int x = a.K + 1; x <= a.Kp - 3; ++x) sc[x] = expect_score(a, x, sc, p);
}

const std::array<uint8_t, 256>& fasta_inmap(const Abc& a) {
  const AlphabetSet& s = alphabets();
  switch (a.type) {
    case AbcType::kAmino: return s.fasta_amino;
    case AbcType::kDNA: return s.fasta_dna;
    case AbcType::kRNA: return s.fasta_rna;
  }
  return s.fasta_amino;
}

std::size_t digitize_append(std::string_view text, const Abc& a, Dsq& out) {
  const auto& m = fasta_inmap(a);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const uint8_t x = m[static_cast<unsigned char>(text[i])];
    if (x < 128) {
      out.push_back(x);
    } else if (x != kDsqIgnored) {
      return i;
    }
  }
  return std::string_view::npos;
}

Dsq digitize(std::string_view text, const Abc& a) {
  Dsq dsq;
  dsq.reserve(text.size() + 2);
  dsq.push_back(kDsqSentinel);
  const std::size_t bad = digitize_append(text, a, dsq);
  if (bad != std::string_view::npos) {
    const auto c = static_cast<unsigned char>(text[bad]);
    const std::string shown = (c >= 32 && c < 127) ? fmt::format("'{}'", static_cast<char>(c))
                                                   : fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    throw Error(ErrorKind::kFormat,
                fmt::format("illegal character {} at sequence position {} for the {} alphabet", shown,
                            bad + 1, abc_type_name(a.type)));
  }
  dsq.push_back(kDsqSentinel);
  return dsq;
}

std::string textize(const Dsq& dsq, const Abc& a) {
  std::string s;
  if (dsq.size() < 2) return s;
  s.reserve(dsq.size() - 2);
  for (std::size_t i = 1; i + 1 < dsq.size(); ++i) s.push_back(a.sym[dsq[i]]);
  return s;
}

}  // namespace warpsearch::hmm
