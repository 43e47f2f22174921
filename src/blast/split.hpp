// split.hpp: BLAST+'s query splitting for blastp (CQuerySplitter, split_query_aux_priv.cpp,
// blast_hspstream.c and blast_hits.c of BLAST+ 2.12). A query batch (blastp_query_batches) whose
// concatenated length L (the queries back to back, no separators) is at least 19,800 residues runs its
// preliminary stage in chunks of the concatenation, and the chunks' preliminary hit lists are merged per
// query before the traceback, which then works on the whole queries. This changes blastp's answers (weak
// hits near a chunk boundary found or lost), so a search that wants blastp's output does the same.
//
// Contents:
//   query_chunks        the chunk ranges of a batch of concatenated length L
//   QueryPiece          one query's part in one chunk
//   split_query_batch   the pieces of each query of one batch
//   shift_query         piece coordinates -> query coordinates (HSP ranges and seeds)
//   merge_chunk_hits    Blast_HitListMerge for one query: the next chunk's preliminary hit lists folded into
//                       the accumulated ones (Blast_HSPListsMerge stitches HSPs across the boundary)
//
// The rules (blastp: chunk size 10000, overlap 100; the CHUNK_SIZE / OVERLAP_CHUNK_SIZE environment
// variables of BLAST+ are not read):
//   chunks: n = L / 9900; n <= 1: one chunk [0, L), nothing is split. Else the chunk size is
//     c = (L + (n - 1) * 100) / n, plus 1 when n < c - 100; chunk k is [k (c - 100), k (c - 100) + c), the
//     last one extended to L; consecutive chunks overlap by 100 residues.
//   pieces: a query belongs to each chunk its range intersects; its piece there is the intersection, searched
//     as a query of its own in the preliminary stage (SEG, ungapped statistics, lookup table, cutoffs and
//     preliminary E-values from the piece and its length; extensions stop at the piece's ends). A query can
//     have several pieces; a query lying in one chunk has one piece, the whole query.
//   merge: per query, chunk by chunk, the chunk's preliminary selection (the best prelim_hitlist_size lists,
//     as for any query) is shifted to query coordinates and folded into the accumulated lists: a subject in
//     one of them only is kept as it is; in both, when the piece starts inside the query (offset > 0), HSPs
//     ending past the offset (accumulated) and starting before offset + 100 (new) whose end and start
//     diagonals differ by less than 10 merge when the new one's start or end point lies in the accumulated
//     one's box (box union, score max(score, (int)(density * merged query length)), the better seed; the
//     E-value stays the accumulated one's); when the piece starts at the query's start (the query begins
//     inside the overlap) the lists are appended (duplicates are left to the traceback). The union is cut to
//     the best prelim_hitlist_size lists (compare_hit_lists) and every list is sorted by score.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "blast/engine.hpp"

namespace warpsearch::blast {

inline constexpr std::size_t kQueryChunkSize = 10000;   // SplitQuery_GetChunkSize(eBlastp)
inline constexpr std::size_t kQueryChunkOverlap = 100;  // SplitQuery_GetOverlapChunkSize (not translated)

// The chunks [begin, end) of a batch of concatenated length L (one chunk [0, L) when it is not split).
std::vector<std::pair<std::size_t, std::size_t>> query_chunks(std::size_t concatenated_length);

struct QueryPiece {
  std::size_t chunk = 0;
  std::size_t begin = 0;  // in the query's coordinates; also the offset added to the piece's coordinates
  std::size_t end = 0;
  friend bool operator==(const QueryPiece&, const QueryPiece&) = default;
};

// The pieces of each query of one batch (lengths of its queries in order), each query's in chunk order. A
// query of an unsplit batch has the one piece [0, length); an empty query none.
std::vector<std::vector<QueryPiece>> split_query_batch(std::span<const std::size_t> lengths);

// Adds `offset` to the query coordinates of the entries' HSPs and seeds (BlastHSPStreamMerge).
void shift_query(std::vector<PrelimEntry>& entries, int offset);

// Folds one chunk's preliminary hit lists of a query (its piece at `offset`, coordinates already shifted)
// into the lists accumulated over the earlier chunks (nullopt before the first chunk with lists), keeping
// the best `limit` lists. Lists are matched by oid.
void merge_chunk_hits(std::optional<std::vector<PrelimEntry>>& combined, std::vector<PrelimEntry> chunk,
                      int offset, std::size_t limit);

}  // namespace warpsearch::blast
