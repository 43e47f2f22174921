// test_alphabet.cpp: digital codes (Alphabet), alphabet names, guess_alphabet and to_letters.
#include <gtest/gtest.h>

#include <string>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch {
namespace {

TEST(AlphabetTest, ProteinCodesFollowHmmerOrder) {
  constexpr Alphabet a = Alphabet::protein();
  static_assert(a.size() == kProteinCodes && a.canonical_size() == 20 && !a.is_nucleotide());
  for (std::size_t i = 0; i < kProteinSymbols.size(); ++i) {
    const char upper = kProteinSymbols[i];
    EXPECT_EQ(a.classify(static_cast<unsigned char>(upper)), i) << upper;
    EXPECT_EQ(a.symbol(static_cast<std::uint8_t>(i)), upper);
    if (upper != '*') {
      EXPECT_EQ(a.code(static_cast<char>(upper - 'A' + 'a')), i) << upper;
    }
  }
  EXPECT_EQ(a.symbol(a.unknown()), 'X');
  EXPECT_EQ(a.code('*'), kProteinStop);
  EXPECT_EQ(a.code('A'), 0);
  EXPECT_EQ(a.code('Y'), 19);
}

TEST(AlphabetTest, NucleotideCodesAndUracil) {
  for (const Alphabet& a : {Alphabet::dna(), Alphabet::rna()}) {
    EXPECT_TRUE(a.is_nucleotide());
    EXPECT_EQ(a.size(), kDnaCodes);
    EXPECT_EQ(a.canonical_size(), 4);
    EXPECT_EQ(a.code('A'), 0);
    EXPECT_EQ(a.code('c'), 1);
    EXPECT_EQ(a.code('G'), 2);
    EXPECT_EQ(a.code('T'), 3);
    EXPECT_EQ(a.code('u'), 3);  // T and U share a code
    EXPECT_EQ(a.code('N'), kDnaUnknown);
    EXPECT_EQ(a.symbol(a.unknown()), 'N');
  }
  EXPECT_EQ(Alphabet::dna().symbol(3), 'T');
  EXPECT_EQ(Alphabet::rna().symbol(3), 'U');
}

TEST(AlphabetTest, ClassifySeparatesForeignLettersFromInvalidBytes) {
  const Alphabet dna = Alphabet::dna();
  for (const char c : std::string("EFIJLOPQXZefijlopqxz")) {
    EXPECT_EQ(dna.classify(static_cast<unsigned char>(c)), kCodeForeign) << c;
    EXPECT_FALSE(dna.code(c).has_value()) << c;
  }
  for (const char c : std::string("*-.0 9@>[`{\n\t")) {
    EXPECT_EQ(dna.classify(static_cast<unsigned char>(c)), kCodeInvalid) << c;
  }
  const Alphabet protein = Alphabet::protein();
  for (int c = 'A'; c <= 'Z'; ++c) EXPECT_LT(protein.classify(static_cast<unsigned char>(c)), kProteinCodes);
  for (int c = 128; c < 256; ++c) EXPECT_EQ(protein.classify(static_cast<unsigned char>(c)), kCodeInvalid);
  EXPECT_EQ(protein.classify('-'), kCodeInvalid);
}

TEST(AlphabetTest, NamesRoundTrip) {
  for (const AlphabetKind kind : {AlphabetKind::kProtein, AlphabetKind::kDna, AlphabetKind::kRna}) {
    EXPECT_EQ(parse_alphabet(to_string(kind)), kind);
  }
  EXPECT_EQ(parse_alphabet("aa"), AlphabetKind::kProtein);
  EXPECT_EQ(parse_alphabet("nt"), AlphabetKind::kDna);
  EXPECT_EQ(parse_alphabet("nucleotide"), AlphabetKind::kDna);
  EXPECT_EQ(parse_alphabet("DNA"), std::nullopt);
  EXPECT_EQ(parse_alphabet(""), std::nullopt);
}

TEST(AlphabetTest, GuessAlphabet) {
  EXPECT_EQ(guess_alphabet(""), AlphabetKind::kProtein);
  EXPECT_EQ(guess_alphabet("ACGTACGTNN"), AlphabetKind::kDna);
  EXPECT_EQ(guess_alphabet("acgtn acgt\n1234"), AlphabetKind::kDna);  // non-letters are ignored
  EXPECT_EQ(guess_alphabet("ACGUACGU"), AlphabetKind::kRna);
  EXPECT_EQ(guess_alphabet("ACGUACGT"), AlphabetKind::kDna);  // T present: DNA
  EXPECT_EQ(guess_alphabet("MKVLAAGLLLPW"), AlphabetKind::kProtein);
  // The 90% threshold: 9 of 10 nucleotide letters is enough, 8 of 10 is not.
  EXPECT_EQ(guess_alphabet("ACGTACGTAL"), AlphabetKind::kDna);
  EXPECT_EQ(guess_alphabet("ACGTACGTLL"), AlphabetKind::kProtein);
}

TEST(AlphabetTest, ToLettersKeepsOrDropsSoftMaskCase) {
  Sequence seq;
  seq.name = "s";
  for (const char c : std::string("ACGTNACG")) seq.residues.push_back(*Alphabet::dna().code(c));
  seq.soft_mask = {{1, 3}, {6, 8}};
  EXPECT_EQ(to_letters(seq, Alphabet::dna()), "AcgTNAcg");
  EXPECT_EQ(to_letters(seq, Alphabet::dna(), false), "ACGTNACG");
  EXPECT_EQ(to_letters(seq, Alphabet::rna(), false), "ACGUNACG");

  Sequence protein;
  protein.name = "p";
  protein.residues = {*Alphabet::protein().code('M'), kProteinStop};
  protein.soft_mask = {{0, 2}};
  EXPECT_EQ(to_letters(protein, Alphabet::protein()), "m*");
}

TEST(AlphabetTest, ToLettersRejectsInconsistentSequences) {
  Sequence seq;
  seq.name = "s";
  seq.residues = {0, kProteinStop};
  try {
    to_letters(seq, Alphabet::dna());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_EQ(e.message(), "residue code 26 at position 1 of 's' is not a dna code");
  }
  seq.residues = {0, 1};
  seq.soft_mask = {{1, 3}};
  try {
    to_letters(seq, Alphabet::dna());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_EQ(e.message(), "soft-mask run [1, 3) is outside 's'");
  }
  EXPECT_EQ(to_letters(seq, Alphabet::dna(), false), "AC");  // the mask is not used without case
}

}  // namespace
}  // namespace warpsearch
