// result.hpp: result records shared by the search commands and their formatters.
//
// Coordinates are 0-based half-open inside the library ([begin, end)); formatters convert to the
// 1-based inclusive convention of BLAST tabular output. Ids are positions in the query file and in
// the database (input order), the canonical keys for deterministic ordering and merging.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace warpsearch {

// One local alignment between a query and a target.
struct AlignmentRecord {
  std::uint64_t query_id = 0;
  std::uint64_t target_id = 0;
  std::int64_t score = 0;          // raw score in the scoring system's units
  std::uint64_t query_begin = 0;   // 0-based, inclusive
  std::uint64_t query_end = 0;     // 0-based, exclusive
  std::uint64_t target_begin = 0;  // 0-based, inclusive
  std::uint64_t target_end = 0;    // 0-based, exclusive
  bool target_reverse = false;     // alignment on the reverse-complement strand of the target
  double bit_score = 0.0;
  double evalue = 0.0;
  std::string cigar;  // empty unless requested; "=", "X", "I", "D" operations
};

// Ranking used by top-K collection: higher score first, then lower target id, then lower query id,
// then earlier coordinates. A strict weak order that breaks every tie between distinct alignments.
struct BetterAlignment {
  bool operator()(const AlignmentRecord& a, const AlignmentRecord& b) const {
    if (a.score != b.score) return a.score > b.score;
    return std::tie(a.target_id, a.query_id, a.target_begin, a.query_begin, a.target_end, a.query_end,
                    a.target_reverse) < std::tie(b.target_id, b.query_id, b.target_begin, b.query_begin,
                                                 b.target_end, b.query_end, b.target_reverse);
  }
};

}  // namespace warpsearch
