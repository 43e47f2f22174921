// strand.hpp: strand and residue preparation for the scan driver (scan.cpp).
//
//   complement_code()      complement of one digital nucleotide code, IUPAC ambiguity codes included
//                          (R<->Y, M<->K, S, W, H<->D, B<->V, N: the complement of the set of bases)
//   reverse_complement()   the reverse complement of a nucleotide code sequence
//   apply_soft_mask()      replaces residues inside soft-mask runs with the unknown code (N or X)
//   set_hit_coordinates()  scan candidate (model.hpp: 0-based inclusive, minus strand in
//                          reverse-complemented query space) -> public Hit (scan.hpp: 0-based half-open
//                          on the forward query and the forward target)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scan/model.hpp"
#include "warpsearch/scan.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch::scan {

// Complement of a DNA/RNA digital code (alphabet.hpp). Error(kInput) for a code >= kDnaCodes.
std::uint8_t complement_code(std::uint8_t code);

// Reverse complement of nucleotide codes (Error(kInput) as complement_code).
std::vector<std::uint8_t> reverse_complement(std::span<const std::uint8_t> codes);

// Sets every residue inside a run (clipped to codes.size()) to `unknown`.
void apply_soft_mask(std::span<std::uint8_t> codes, std::span<const MaskRun> runs, std::uint8_t unknown);

// Fills hit.minus, hit.score and the four coordinates from a candidate of a query of length
// query_length. Plus: query [qstart, qend + 1), target [tstart, tend + 1). Minus: the candidate's
// query interval is on the reverse complement, so on the forward query it is
// [query_length - 1 - qend, query_length - qstart); target coordinates are forward already.
void set_hit_coordinates(Hit& hit, const Candidate& candidate, std::uint64_t query_length);

}  // namespace warpsearch::scan
