// strand.cpp: reverse complement of digital nucleotide codes, soft masking and candidate -> Hit
// coordinate conversion (strand.hpp).
#include "scan/strand.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "warpsearch/error.hpp"

namespace warpsearch::scan {

namespace {

// Codes 0 A, 1 C, 2 G, 3 T, 4 R(AG), 5 Y(CT), 6 M(AC), 7 K(GT), 8 S(CG), 9 W(AT), 10 H(ACT), 11 B(CGT),
// 12 V(ACG), 13 D(AGT), 14 N. The complement of a code is the code of the complemented base set.
constexpr std::array<std::uint8_t, kDnaCodes> kComplement = {3, 2, 1,  0,  5,  4,  7, 6,
                                                             8, 9, 13, 12, 11, 10, 14};

}  // namespace

std::uint8_t complement_code(std::uint8_t code) {
  if (code >= kDnaCodes)
    throw Error(ErrorKind::kInput, fmt::format("residue code {} is not a nucleotide code", code));
  return kComplement[code];
}

std::vector<std::uint8_t> reverse_complement(std::span<const std::uint8_t> codes) {
  std::vector<std::uint8_t> out(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) out[codes.size() - 1 - i] = complement_code(codes[i]);
  return out;
}

void apply_soft_mask(std::span<std::uint8_t> codes, std::span<const MaskRun> runs, std::uint8_t unknown) {
  for (const MaskRun& run : runs) {
    const std::uint64_t end = std::min<std::uint64_t>(run.end, codes.size());
    for (std::uint64_t i = run.begin; i < end; ++i) codes[i] = unknown;
  }
}

void set_hit_coordinates(Hit& hit, const Candidate& candidate, std::uint64_t query_length) {
  hit.minus = candidate.strand == Strand::kMinus;
  hit.score = candidate.score;
  const auto qstart = static_cast<std::uint64_t>(candidate.qstart);
  const auto qend = static_cast<std::uint64_t>(candidate.qend);
  if (hit.minus) {
    hit.query_begin = query_length - 1 - qend;
    hit.query_end = query_length - qstart;
  } else {
    hit.query_begin = qstart;
    hit.query_end = qend + 1;
  }
  hit.target_begin = static_cast<std::uint64_t>(candidate.tstart);
  hit.target_end = static_cast<std::uint64_t>(candidate.tend) + 1;
}

}  // namespace warpsearch::scan
