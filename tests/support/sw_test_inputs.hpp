// sw_test_inputs.hpp: inputs shared by the pass tests of every sw tier (SIMD, emulated and real GPU):
// random and related sequences, the scorings swept, real records, and printing of end points.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sw/model.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::sw::test {

using Seq = std::vector<std::uint8_t>;
inline constexpr Mode kModes[] = {Mode::kLocal, Mode::kGlobal, Mode::kSemiGlobal};

inline std::string describe(const EndPoint& e) {
  return "{score " + std::to_string(e.score) + ", qend " + std::to_string(e.qend) + ", tend " +
         std::to_string(e.tend) + "}";
}

inline const char* mode_label(Mode mode) {
  switch (mode) {
    case Mode::kLocal: return "local";
    case Mode::kGlobal: return "global";
    case Mode::kSemiGlobal: return "semiglobal";
  }
  return "?";
}

struct Scoring {
  std::string name;
  ScoringMatrix matrix;
  GapCosts gaps;
};

inline std::vector<Scoring> protein_scorings() {
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  const ScoringMatrix b45 = ScoringMatrix::builtin("BLOSUM45");
  return {{"BLOSUM62 11/1", b62, {11, 1}}, {"BLOSUM62 0/1", b62, {0, 1}},   {"BLOSUM62 5/0", b62, {5, 0}},
          {"BLOSUM62 1/0", b62, {1, 0}},   {"BLOSUM45 14/2", b45, {14, 2}}, {"BLOSUM45 3/3", b45, {3, 3}}};
}

inline std::vector<Scoring> dna_scorings() {
  return {{"dna +2/-3 5/2", ScoringMatrix::dna(2, -3), {5, 2}},
          {"dna +1/-1 0/1", ScoringMatrix::dna(1, -1), {0, 1}},
          {"dna +5/-4 10/0", ScoringMatrix::dna(5, -4), {10, 0}},
          {"dna +1/-3 2/2", ScoringMatrix::dna(1, -3), {2, 2}}};
}

// Residues: canonical, with ambiguity_pct percent drawn from all codes (ambiguity codes, X/N, '*').
inline Seq random_seq(std::mt19937_64& rng, std::size_t len, const Alphabet& alphabet,
                      int ambiguity_pct = 4) {
  std::uniform_int_distribution<int> canonical(0, alphabet.canonical_size() - 1);
  std::uniform_int_distribution<int> any(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> pct(0, 99);
  Seq s(len);
  for (auto& c : s) c = static_cast<std::uint8_t>(pct(rng) < ambiguity_pct ? any(rng) : canonical(rng));
  return s;
}

// A relative of s: substitutions, short insertions and deletions at the given per-residue rates.
inline Seq mutate(std::mt19937_64& rng, const Seq& s, const Alphabet& alphabet, int sub_pct, int indel_pct) {
  std::uniform_int_distribution<int> pct(0, 99);
  std::uniform_int_distribution<int> canonical(0, alphabet.canonical_size() - 1);
  std::uniform_int_distribution<int> gap_len(1, 6);
  Seq out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int r = pct(rng);
    if (r < indel_pct / 2) {
      i += static_cast<std::size_t>(gap_len(rng)) - 1;  // deletion
      continue;
    }
    if (r < indel_pct)  // insertion before s[i]
      for (int k = gap_len(rng); k > 0; --k) out.push_back(static_cast<std::uint8_t>(canonical(rng)));
    out.push_back(pct(rng) < sub_pct ? static_cast<std::uint8_t>(canonical(rng)) : s[i]);
  }
  if (out.empty()) out.push_back(s.front());
  return out;
}

inline Seq concat(const Seq& a, const Seq& b, const Seq& c) {
  Seq out(a);
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

inline Seq encode(std::string_view text, const Alphabet& alphabet) {
  Seq s;
  for (const char ch : text) s.push_back(*alphabet.code(ch));
  return s;
}

// A random pair with lengths in [min_len, max_len]: unrelated, related (mutated, with random flanks on
// the target so local and semiglobal alignments sit inside it), or over a two-letter alphabet (ties).
inline std::pair<Seq, Seq> random_pair(std::mt19937_64& rng, std::size_t min_len, std::size_t max_len,
                                       const Alphabet& alphabet) {
  std::uniform_int_distribution<std::size_t> len(min_len, max_len);
  std::uniform_int_distribution<int> kind(0, 9);
  const int k = kind(rng);
  if (k < 4) return {random_seq(rng, len(rng), alphabet), random_seq(rng, len(rng), alphabet)};
  if (k < 9) {
    const Seq q = random_seq(rng, len(rng), alphabet);
    const Seq core = mutate(rng, q, alphabet, k < 7 ? 15 : 40, k < 6 ? 5 : 15);
    const std::size_t flank = max_len / 4 + 1;
    return {q, concat(random_seq(rng, len(rng) % flank, alphabet), core,
                      random_seq(rng, len(rng) % flank, alphabet))};
  }
  std::uniform_int_distribution<int> two(0, 1);
  Seq q(len(rng)), t(len(rng));
  for (auto& c : q) c = static_cast<std::uint8_t>(two(rng));
  for (auto& c : t) c = static_cast<std::uint8_t>(two(rng));
  return {q, t};
}

inline std::vector<Seq> read_records(const std::string& relpath, AlphabetKind kind, std::size_t max_records) {
  ReaderOptions options;
  options.alphabet = kind;
  SequenceReader reader((warpsearch::test::testdata_dir() / relpath).string(), options);
  std::vector<Seq> out;
  Sequence seq;
  while (out.size() < max_records && reader.next(seq)) out.push_back(seq.residues);
  return out;
}

}  // namespace warpsearch::sw::test
