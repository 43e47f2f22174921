// align_dataset.hpp: the synthetic, ADEPT-shaped pair sets of the pairwise alignment benchmarks (CPU and
// GPU entries use the same function, so their pairs are identical for a given kind, count and seed).
//
// Shapes (ADEPT's benchmark sets):
//   protein  query length uniform in 20..600, target length uniform in 200..1664
//   DNA      query length uniform in 150..300, target length uniform in 150..1131
// Half of the pairs are related: the target holds a mutated copy of the query (or of a piece of it that
// fits) at a random offset, with substitutions (protein 25%, DNA 8% of residues) and short indels (2%);
// the other half are unrelated. Residues are substrings sampled from a pool of real sequences: the
// given source FASTA when its (guessed) alphabet matches the kind, else the test data file
// (prot/mmseqs_QUERY500.fasta or dna/BioMarKs50k.fa under $WARPSEARCH_TESTDATA or the build's test
// data directory), else uniformly random canonical residues. A fixed seed gives a fixed set.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "warpsearch/align.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::bench {

enum class AlignSetKind : std::uint8_t { kProtein, kDna };

struct AlignSetShape {
  std::size_t query_min, query_max, target_min, target_max;
  int substitution_pct;  // related pairs: substituted residues, percent
};

inline AlignSetShape align_set_shape(AlignSetKind kind) {
  return kind == AlignSetKind::kProtein ? AlignSetShape{20, 600, 200, 1664, 25}
                                        : AlignSetShape{150, 300, 150, 1131, 8};
}

inline AlphabetKind align_set_alphabet(AlignSetKind kind) {
  return kind == AlignSetKind::kProtein ? AlphabetKind::kProtein : AlphabetKind::kDna;
}

// Path of the test data file a kind samples from when no matching source is given ("" if absent).
inline std::string align_set_testdata(AlignSetKind kind) {
  std::filesystem::path dir = WARPSEARCH_TESTDATA_DIR;
  if (const char* env = std::getenv("WARPSEARCH_TESTDATA"); env != nullptr && *env != '\0') dir = env;
  const std::filesystem::path file =
      dir / (kind == AlignSetKind::kProtein ? "prot/mmseqs_QUERY500.fasta" : "dna/BioMarKs50k.fa");
  std::error_code ec;
  return std::filesystem::is_regular_file(file, ec) ? file.string() : std::string();
}

// Up to max_residues residues of the records of path, concatenated; empty when the file's guessed
// alphabet is not `alphabet` (RNA counts as DNA).
inline std::vector<std::uint8_t> align_set_pool(const std::string& path, AlphabetKind alphabet,
                                                std::size_t max_residues = std::size_t{1} << 22) {
  std::vector<std::uint8_t> pool;
  SequenceReader reader(path);
  const bool nucleotide = reader.alphabet().is_nucleotide();
  if (nucleotide != (alphabet != AlphabetKind::kProtein)) return pool;
  Sequence seq;
  while (pool.size() < max_residues && reader.next(seq))
    pool.insert(pool.end(), seq.residues.begin(), seq.residues.end());
  return pool;
}

// `pairs` pairs of the kind's shape; see the file comment for the residues. residue_source may be "".
inline align::Batch make_align_dataset(AlignSetKind kind, std::size_t pairs, std::uint64_t seed,
                                       const std::string& residue_source = {}) {
  const AlignSetShape shape = align_set_shape(kind);
  const Alphabet alphabet(align_set_alphabet(kind));
  std::vector<std::uint8_t> pool;
  if (!residue_source.empty()) pool = align_set_pool(residue_source, alphabet.kind());
  if (pool.size() < shape.target_max) {
    const std::string testdata = align_set_testdata(kind);
    if (!testdata.empty()) pool = align_set_pool(testdata, alphabet.kind());
  }

  std::mt19937_64 rng(seed);
  auto uniform = [&rng](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  auto residue = [&] {
    return static_cast<std::uint8_t>(uniform(0, static_cast<std::size_t>(alphabet.canonical_size()) - 1));
  };
  auto sample = [&](std::size_t len, std::vector<std::uint8_t>& out) {
    out.resize(len);
    if (pool.size() < shape.target_max) {
      for (auto& c : out) c = residue();
    } else {
      const std::size_t start = uniform(0, pool.size() - len);
      std::copy(pool.begin() + static_cast<std::ptrdiff_t>(start),
                pool.begin() + static_cast<std::ptrdiff_t>(start + len), out.begin());
    }
  };

  align::Batch batch;
  batch.reserve(pairs, pairs * (shape.query_max + shape.target_max) / 2);
  std::vector<std::uint8_t> query, target, copy;
  for (std::size_t p = 0; p < pairs; ++p) {
    sample(uniform(shape.query_min, shape.query_max), query);
    sample(uniform(shape.target_min, shape.target_max), target);
    if (p % 2 == 0) {
      // Mutated copy of the query (a window of it if the target is shorter) inside the target.
      copy.clear();
      for (const std::uint8_t c : query) {
        const std::size_t r = uniform(0, 99);
        if (r < 1) continue;                   // deletion
        if (r < 2) copy.push_back(residue());  // insertion before c
        const bool substitute = r >= 2 && r < 2 + static_cast<std::size_t>(shape.substitution_pct);
        copy.push_back(substitute ? residue() : c);
      }
      const std::size_t len = std::min(copy.size(), target.size());
      const std::size_t from = uniform(0, copy.size() - len);
      const std::size_t at = uniform(0, target.size() - len);
      std::copy(copy.begin() + static_cast<std::ptrdiff_t>(from),
                copy.begin() + static_cast<std::ptrdiff_t>(from + len),
                target.begin() + static_cast<std::ptrdiff_t>(at));
    }
    batch.add(query, target);
  }
  return batch;
}

}  // namespace warpsearch::bench
