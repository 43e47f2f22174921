// blast_random.hpp: random protein test sets with planted similar regions for the blast suites (GPU stage
// and its CPU reference): random_protein, plant, PlantedSet, planted_set.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "warpsearch/alphabet.hpp"

namespace warpsearch::test {

using Codes = std::vector<std::uint8_t>;

// Protein codes with a skewed composition (some letters twice as frequent).
inline Codes random_protein(std::mt19937_64& rng, std::size_t n) {
  static const std::string letters = "ACDEFGHIKLMNPQRSTVWYAAGGLLEEKKSSVV";
  Codes s(n);
  for (auto& c : s) c = *Alphabet::protein().code(letters[rng() % letters.size()]);
  return s;
}

// Copies a piece of `from` into `to` with point mutations (rate in 1/100) and small indels.
inline void plant(std::mt19937_64& rng, const Codes& from, Codes& to, int mutate_percent) {
  if (from.size() < 20 || to.size() < 20) return;
  const std::size_t len = std::min<std::size_t>({from.size(), to.size(), 20 + rng() % 200});
  const std::size_t a = rng() % (from.size() - len + 1);
  const std::size_t b = rng() % (to.size() - len + 1);
  const Codes fresh = random_protein(rng, len);
  for (std::size_t i = 0; i < len; ++i)
    to[b + i] = static_cast<int>(rng() % 100) < mutate_percent ? fresh[i] : from[a + i];
  if (rng() % 3 == 0 && b + len / 2 + 3 < to.size())  // a small deletion in the copy
    to.erase(to.begin() + static_cast<std::ptrdiff_t>(b + len / 2),
             to.begin() + static_cast<std::ptrdiff_t>(b + len / 2 + 1 + rng() % 3));
}

struct PlantedSet {
  std::vector<Codes> queries;
  std::vector<Codes> subjects;
};

inline PlantedSet planted_set(std::uint64_t seed, int nq, int ns) {
  std::mt19937_64 rng(seed);
  PlantedSet set;
  for (int i = 0; i < nq; ++i) set.queries.push_back(random_protein(rng, 30 + rng() % 900));
  set.queries.push_back(random_protein(rng, 3000));  // a long one
  const std::uint8_t x = *Alphabet::protein().code('X');
  for (int i = 0; i < ns; ++i) {
    Codes s = random_protein(rng, rng() % 8 == 0 ? rng() % 4 : 20 + rng() % 1200);
    const int plants = static_cast<int>(rng() % 4);
    for (int p = 0; p < plants; ++p)
      plant(rng, set.queries[rng() % set.queries.size()], s, static_cast<int>(rng() % 60));
    if (rng() % 10 == 0 && s.size() > 40) std::fill(s.begin() + 10, s.begin() + 30, x);
    set.subjects.push_back(std::move(s));
  }
  // A subject longer than the 16-bit diagonal entries allow (the 32-bit kernel variant), with plants.
  Codes longer = random_protein(rng, 20000);
  for (int p = 0; p < 8; ++p) plant(rng, set.queries[rng() % set.queries.size()], longer, 20);
  set.subjects.push_back(std::move(longer));
  // A repetitive query and a mutated longer repeat of its unit: a pair with hundreds of ungapped HSPs
  // (more than the GPU screens; the CPU sorts and extends them).
  const Codes unit = random_protein(rng, 7);
  Codes repeat_query, repeat_subject;
  for (int r = 0; r < 200; ++r) repeat_query.insert(repeat_query.end(), unit.begin(), unit.end());
  for (int r = 0; r < 300; ++r) repeat_subject.insert(repeat_subject.end(), unit.begin(), unit.end());
  const Codes noise = random_protein(rng, repeat_subject.size());
  for (std::size_t i = 0; i < repeat_subject.size(); ++i)
    if (rng() % 100 < 15) repeat_subject[i] = noise[i];
  set.queries.push_back(std::move(repeat_query));
  set.subjects.push_back(std::move(repeat_subject));
  // A subject equal to a query (long self hit) and one made of repeats of a query piece.
  set.subjects.push_back(set.queries[0]);
  Codes rep;
  for (int r = 0; r < 6; ++r) rep.insert(rep.end(), set.queries[1].begin(), set.queries[1].begin() + 25);
  set.subjects.push_back(rep);
  return set;
}

}  // namespace warpsearch::test
