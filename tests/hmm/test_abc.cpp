// test_abc.cpp: the Easel-compatible digital alphabets (src/hmm/abc.hpp). Checks the code layout,
// synonyms, case rules and degeneracy tables against Easel 0.48's definitions, the FASTA digitization
// of every ASCII character against the installed esl-seqstat (Easel 0.48) as an oracle, and the
// degenerate-residue score helpers against their defining sums.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm_test_support.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

using hmmtest::run_capture;

TEST(Abc, CodeLayoutMatchesEasel) {
  const Abc& am = abc(AbcType::kAmino);
  EXPECT_EQ(am.sym, "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~");
  EXPECT_EQ(am.K, 20);
  EXPECT_EQ(am.Kp, 29);
  const Abc& dna = abc(AbcType::kDNA);
  EXPECT_EQ(dna.sym, "ACGT-RYMKSWHBVDN*~");
  EXPECT_EQ(dna.K, 4);
  EXPECT_EQ(dna.Kp, 18);
  const Abc& rna = abc(AbcType::kRNA);
  EXPECT_EQ(rna.sym, "ACGU-RYMKSWHBVDN*~");
  EXPECT_EQ(rna.K, 4);
  EXPECT_EQ(rna.Kp, 18);
  for (const Abc* a : {&am, &dna, &rna}) {
    EXPECT_TRUE(is_gap(*a, a->sym.find('-')));
    EXPECT_TRUE(is_nonresidue(*a, a->sym.find('*')));
    EXPECT_TRUE(is_missing(*a, a->sym.find('~')));
    EXPECT_TRUE(is_unknown(*a, a->sym.find(a->type == AbcType::kAmino ? 'X' : 'N')));
    EXPECT_EQ(a->sym[gap_code(*a)], '-');
    EXPECT_EQ(a->sym[unknown_code(*a)], a->type == AbcType::kAmino ? 'X' : 'N');
    EXPECT_EQ(a->sym[nonresidue_code(*a)], '*');
    EXPECT_EQ(a->sym[missing_code(*a)], '~');
    for (int x = 0; x < a->Kp; ++x) {
      EXPECT_EQ(is_residue(*a, x), x < a->K || (x > a->K && x < a->Kp - 2)) << x;
      EXPECT_EQ(is_canonical(*a, x), x < a->K);
      EXPECT_EQ(is_degenerate(*a, x), x > a->K && x < a->Kp - 2);
    }
    EXPECT_EQ(&abc(a->type), a);  // one shared instance
  }
  EXPECT_STREQ(abc_type_name(AbcType::kAmino), "amino");
  EXPECT_STREQ(abc_type_name(AbcType::kDNA), "DNA");
  EXPECT_STREQ(abc_type_name(AbcType::kRNA), "RNA");
}

// Degeneracy sets as esl_alphabet.c defines them, as strings of canonical symbols.
std::string degen_string(const Abc& a, char c) {
  const auto x = a.sym.find(c);
  std::string s;
  for (int y = 0; y < a.K; ++y)
    if (a.degen[x][static_cast<std::size_t>(y)]) s += a.sym[static_cast<std::size_t>(y)];
  EXPECT_EQ(static_cast<std::size_t>(a.ndegen[x]), s.size()) << c;
  return s;
}

TEST(Abc, DegeneraciesMatchEasel) {
  const Abc& am = abc(AbcType::kAmino);
  EXPECT_EQ(degen_string(am, 'B'), "DN");
  EXPECT_EQ(degen_string(am, 'J'), "IL");
  EXPECT_EQ(degen_string(am, 'Z'), "EQ");
  EXPECT_EQ(degen_string(am, 'U'), "C");
  EXPECT_EQ(degen_string(am, 'O'), "K");
  EXPECT_EQ(degen_string(am, 'X'), am.sym.substr(0, 20));
  for (char c : std::string("-*~")) EXPECT_EQ(degen_string(am, c), "");
  for (int x = 0; x < am.K; ++x)
    EXPECT_EQ(degen_string(am, am.sym[static_cast<std::size_t>(x)]),
              std::string(1, am.sym[static_cast<std::size_t>(x)]));
  for (AbcType t : {AbcType::kDNA, AbcType::kRNA}) {
    const Abc& a = abc(t);
    const std::string T = t == AbcType::kDNA ? "T" : "U";
    EXPECT_EQ(degen_string(a, 'R'), "AG");
    EXPECT_EQ(degen_string(a, 'Y'), "C" + T);
    EXPECT_EQ(degen_string(a, 'M'), "AC");
    EXPECT_EQ(degen_string(a, 'K'), "G" + T);
    EXPECT_EQ(degen_string(a, 'S'), "CG");
    EXPECT_EQ(degen_string(a, 'W'), "A" + T);
    EXPECT_EQ(degen_string(a, 'H'), "AC" + T);
    EXPECT_EQ(degen_string(a, 'B'), "CG" + T);
    EXPECT_EQ(degen_string(a, 'V'), "ACG");
    EXPECT_EQ(degen_string(a, 'D'), "AG" + T);
    EXPECT_EQ(degen_string(a, 'N'), "ACG" + T);
  }
}

TEST(Abc, InputMapSynonymsAndCase) {
  for (AbcType t : {AbcType::kAmino, AbcType::kDNA, AbcType::kRNA}) {
    const Abc& a = abc(t);
    for (int x = 0; x < a.Kp; ++x) {
      const auto c = static_cast<unsigned char>(a.sym[static_cast<std::size_t>(x)]);
      EXPECT_EQ(a.inmap[c], x);
      if (std::isalpha(c)) {
        EXPECT_EQ(a.inmap[static_cast<unsigned char>(std::tolower(c))], x) << c;
      }
    }
    EXPECT_EQ(a.inmap['.'], a.K);
    EXPECT_EQ(a.inmap['_'], a.K);
    for (int c = 128; c < 256; ++c) EXPECT_EQ(a.inmap[static_cast<std::size_t>(c)], kDsqIllegal);
    for (char c : std::string("0123456789@#!$ \t\n"))
      EXPECT_EQ(a.inmap[static_cast<unsigned char>(c)], kDsqIllegal);
  }
  const Abc& dna = abc(AbcType::kDNA);
  EXPECT_EQ(dna.inmap['U'], dna.sym.find('T'));
  EXPECT_EQ(dna.inmap['u'], dna.sym.find('T'));
  EXPECT_EQ(dna.inmap['X'], dna.sym.find('N'));
  EXPECT_EQ(dna.inmap['x'], dna.sym.find('N'));
  EXPECT_EQ(dna.inmap['I'], 0);
  EXPECT_EQ(dna.inmap['E'], kDsqIllegal);
  const Abc& rna = abc(AbcType::kRNA);
  EXPECT_EQ(rna.inmap['T'], rna.sym.find('U'));
  const Abc& am = abc(AbcType::kAmino);
  // Every letter is an amino code in one case or the other.
  for (int c = 'A'; c <= 'Z'; ++c)
    EXPECT_LT(am.inmap[static_cast<std::size_t>(c)], am.Kp) << static_cast<char>(c);
}

TEST(Abc, DigitizeLayoutAndErrors) {
  const Abc& am = abc(AbcType::kAmino);
  const Dsq d = digitize("ac d\tE*~x\r\n.u", am);
  ASSERT_EQ(d.size(), 11u);
  EXPECT_EQ(d.front(), kDsqSentinel);
  EXPECT_EQ(d.back(), kDsqSentinel);
  EXPECT_EQ(textize(d, am), "ACDE*~X-U");
  EXPECT_EQ(digitize("", am), (Dsq{kDsqSentinel, kDsqSentinel}));
  try {
    digitize("ACD-E", am);
    FAIL() << "'-' accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat);
    EXPECT_NE(e.message().find("'-'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("position 4"), std::string::npos) << e.message();
  }
  Dsq out{kDsqSentinel};
  EXPECT_EQ(digitize_append("AC1", am, out), 2u);
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(digitize_append("acgtn", abc(AbcType::kDNA), out), std::string_view::npos);
  EXPECT_THROW(digitize("ACGTE", abc(AbcType::kDNA)), Error);
}

// Easel's FASTA reader (esl-seqstat, digital mode) as the oracle for every ASCII character: each
// character c is read in a sequence "Ac" + "A"; Easel either rejects the file or counts the code it
// maps c to. '\n' (line end), '>' (record start) and NUL are not sequence characters and are skipped.
TEST(Abc, FastaDigitizationMatchesEslSeqstat) {
  WS_REQUIRE_TESTDATA("bin/esl-seqstat");
  const std::string seqstat = (test::testdata_dir() / "bin/esl-seqstat").string();
  test::TempDir dir("abc_oracle");
  const std::string fa = dir / "c.fa";
  for (AbcType t : {AbcType::kAmino, AbcType::kDNA, AbcType::kRNA}) {
    const Abc& a = abc(t);
    const std::string opt = t == AbcType::kAmino ? "--amino" : t == AbcType::kDNA ? "--dna" : "--rna";
    for (int c = 1; c < 256; ++c) {
      if (c == '\n' || c == '>') continue;
      if (c >= 128 && c != 128 && c != 0xC3 && c != 0xFF) continue;  // a sample of the non-ASCII bytes
      test::write_file(fa, std::string(">s\nA") + static_cast<char>(c) + "A\n");
      std::string out;
      const int rc = run_capture(seqstat + " " + opt + " -c " + fa, &out);
      Dsq d{kDsqSentinel};
      const std::size_t bad = digitize_append(std::string(1, static_cast<char>(c)), a, d);
      SCOPED_TRACE(testing::Message() << abc_type_name(t) << " char " << c);
      if (rc != 0) {
        EXPECT_NE(bad, std::string_view::npos) << "Easel rejects it, we accept";
        continue;
      }
      ASSERT_EQ(bad, std::string_view::npos) << "Easel accepts it, we reject";
      // Parse "residue: S count ..." lines.
      std::map<char, long> counts;
      std::istringstream in(out);
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("residue: ", 0) != 0) continue;
        std::istringstream ls(line.substr(9));
        char sym = 0;
        long n = 0;
        ls >> sym >> n;
        if (n > 0) counts[sym] = n;
      }
      std::map<char, long> expect{{'A', 2}};
      if (d.size() == 2) expect[a.sym[d[1]]] += 1;  // ignored characters add nothing
      EXPECT_EQ(counts, expect) << out;
    }
  }
}

TEST(Abc, DegenerateScoresFollowEaselDefinitions) {
  const Abc& am = abc(AbcType::kAmino);
  std::vector<float> sc(static_cast<std::size_t>(am.Kp), -7.0f);
  std::vector<float> p(static_cast<std::size_t>(am.K));
  for (int y = 0; y < am.K; ++y) {
    sc[static_cast<std::size_t>(y)] = 0.37f * static_cast<float>(y) - 2.9f;
    p[static_cast<std::size_t>(y)] = 0.01f + 0.003f * static_cast<float>(y);
  }
  std::vector<float> e = sc;
  expect_sc_vec(am, e.data(), p.data());
  std::vector<float> v = sc;
  avg_sc_vec(am, v.data());
  const auto ix = [&](char c) { return am.sym.find(c); };
  // One-to-one degeneracies: (sc*p)/p in float (not always exactly sc), and the plain average is sc.
  EXPECT_EQ(e[ix('U')], sc[ix('C')] * p[ix('C')] / p[ix('C')]);
  EXPECT_EQ(e[ix('O')], sc[ix('K')] * p[ix('K')] / p[ix('K')]);
  EXPECT_EQ(v[ix('U')], sc[ix('C')]);
  // B = {D, N} in alphabet order (D before N): float products/sums as Easel accumulates them.
  float num = 0.0f;
  float den = 0.0f;
  num += sc[ix('D')] * p[ix('D')];
  den += p[ix('D')];
  num += sc[ix('N')] * p[ix('N')];
  den += p[ix('N')];
  EXPECT_EQ(e[ix('B')], num / den);
  float sum = 0.0f;
  sum += sc[ix('D')];
  sum += sc[ix('N')];
  EXPECT_EQ(v[ix('B')], sum / 2.0f);
  float all = 0.0f;
  for (int y = 0; y < am.K; ++y) all += sc[static_cast<std::size_t>(y)];
  EXPECT_EQ(v[ix('X')], all / 20.0f);
  // Gap, nonresidue and missing are left alone; canonical scores unchanged.
  for (char c : std::string("-*~")) {
    EXPECT_EQ(e[ix(c)], -7.0f);
    EXPECT_EQ(v[ix(c)], -7.0f);
  }
  for (int y = 0; y < am.K; ++y) EXPECT_EQ(e[static_cast<std::size_t>(y)], sc[static_cast<std::size_t>(y)]);
  EXPECT_EQ(expect_score(am, am.K, sc.data(), p.data()), 0.0f);
  EXPECT_EQ(avg_score(am, am.Kp - 1, sc.data()), 0.0f);
  EXPECT_EQ(expect_score(am, 3, sc.data(), p.data()), sc[3] * p[3] / p[3]);
}

}  // namespace
}  // namespace warpsearch::hmm
