// test_split.cpp: tests of src/blast/split (BLAST+'s query splitting for blastp).
//
// QueryChunks: the chunk ranges against values worked out from BLAST+'s formulas
// (SplitQuery_CalculateNumChunks,
//   x_ComputeChunkRanges) at the thresholds, and their invariants (contiguous with 100-residue overlaps,
//   n = L / 9900 chunks of at least 9950 residues, the last ending at L) over many lengths.
// SplitQueryBatch: pieces of a batch with a query inside the overlap, one straddling the boundary and one
//   starting inside the overlap; an unsplit batch; empty queries.
// MergeChunkHits: the first chunk's lists taken as they are; HSPs stitched across the boundary (box union,
//   density score, seed of the better one, E-value kept); not stitched when the diagonals are 10 apart, when
//   the accumulated HSP ends before the split point or the new one starts past the overlap; appended with
//   duplicates when the piece starts at the query's start; the union cut to the limit by compare_hit_lists.
// EngineQuerySplitting (test_engine.cpp) and the blastp CLI tests check whole searches against blastp.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "blast/split.hpp"

namespace warpsearch::blast {
namespace {

using Chunks = std::vector<std::pair<std::size_t, std::size_t>>;

TEST(QueryChunks, ValuesOfBlastFormulas) {
  EXPECT_EQ(query_chunks(0), (Chunks{{0, 0}}));
  EXPECT_EQ(query_chunks(500), (Chunks{{0, 500}}));
  EXPECT_EQ(query_chunks(19799), (Chunks{{0, 19799}}));  // 19799 / 9900 = 1: not split
  // n = 2, size (19800 + 100) / 2 = 9950, + 1 as 2 < 9850.
  EXPECT_EQ(query_chunks(19800), (Chunks{{0, 9951}, {9851, 19800}}));
  EXPECT_EQ(query_chunks(20000), (Chunks{{0, 10051}, {9951, 20000}}));
  EXPECT_EQ(query_chunks(29699), (Chunks{{0, 14900}, {14800, 29699}}));
  EXPECT_EQ(query_chunks(29700), (Chunks{{0, 9967}, {9867, 19834}, {19734, 29700}}));
  const Chunks c = query_chunks(100000);  // n = 10, size 10091, step 9991
  ASSERT_EQ(c.size(), 10u);
  for (std::size_t k = 0; k < 10; ++k) {
    EXPECT_EQ(c[k].first, 9991 * k);
    EXPECT_EQ(c[k].second, k == 9 ? 100000 : 9991 * k + 10091);
  }
}

TEST(QueryChunks, ContiguousWithOverlapsForAnyLength) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> length(19000, 400000);
  for (int i = 0; i < 3000; ++i) {
    const std::size_t L = i < 1000 ? 19000 + static_cast<std::size_t>(i) * 7 : length(rng);
    const Chunks c = query_chunks(L);
    const std::size_t n = L / 9900;
    ASSERT_EQ(c.size(), n <= 1 ? 1 : n) << L;
    EXPECT_EQ(c.front().first, 0u) << L;
    EXPECT_EQ(c.back().second, L) << L;
    for (std::size_t k = 0; k < c.size(); ++k) {
      if (c.size() > 1) {
        EXPECT_GE(c[k].second - c[k].first, 9950u) << L;
      }
      if (k > 0) {
        EXPECT_EQ(c[k].first + 100, c[k - 1].second) << L << " chunk " << k;
      }
    }
  }
}

TEST(SplitQueryBatch, PiecesInTheOverlapAcrossItAndStartingInIt) {
  // L = 20000: chunks [0, 10051) and [9951, 20000).
  const std::vector<std::size_t> lengths{9960, 30, 10010};
  const auto p = split_query_batch(lengths);
  ASSERT_EQ(p.size(), 3u);
  // Query 0 [0, 9960): whole in chunk 0, its last 9 residues in chunk 1.
  EXPECT_EQ(p[0], (std::vector<QueryPiece>{{0, 0, 9960}, {1, 9951, 9960}}));
  // Query 1 [9960, 9990) lies in the overlap: the whole query in both chunks.
  EXPECT_EQ(p[1], (std::vector<QueryPiece>{{0, 0, 30}, {1, 0, 30}}));
  // Query 2 [9990, 20000) starts in the overlap: its first 61 residues in chunk 0, all of it in chunk 1.
  EXPECT_EQ(p[2], (std::vector<QueryPiece>{{0, 0, 61}, {1, 0, 10010}}));

  const std::vector<std::size_t> straddle{9900, 90, 10010};  // query 1 [9900, 9990) across 9951
  const auto s = split_query_batch(straddle);
  EXPECT_EQ(s[1], (std::vector<QueryPiece>{{0, 0, 90}, {1, 51, 90}}));

  const std::vector<std::size_t> small{300, 0, 19000};  // 19300: one chunk, whole queries
  const auto w = split_query_batch(small);
  EXPECT_EQ(w[0], (std::vector<QueryPiece>{{0, 0, 300}}));
  EXPECT_TRUE(w[1].empty());
  EXPECT_EQ(w[2], (std::vector<QueryPiece>{{0, 0, 19000}}));
}

PrelimHsp hsp(int score, int qs, int qe, int ss, int se, double evalue, SeedPoint seed) {
  PrelimHsp p;
  p.hsp.score = score;
  p.hsp.q_start = qs;
  p.hsp.q_end = qe;
  p.hsp.s_start = ss;
  p.hsp.s_end = se;
  p.hsp.evalue = evalue;
  p.seed = seed;
  return p;
}

PrelimEntry entry(int oid, std::vector<PrelimHsp> hsps) {
  PrelimEntry e;
  e.list.oid = oid;
  for (const PrelimHsp& h : hsps) e.list.hsps.push_back(h.hsp);
  e.prelim = std::move(hsps);
  return e;
}

const PrelimEntry& find(const std::vector<PrelimEntry>& v, int oid) {
  for (const PrelimEntry& e : v)
    if (e.list.oid == oid) return e;
  throw std::runtime_error("oid not found");
}

TEST(MergeChunkHits, StitchesAcrossTheBoundary) {
  std::optional<std::vector<PrelimEntry>> combined;
  // Chunk 0: lists of subjects 4 (one HSP ending at the chunk end) and 9; unsorted HSPs get sorted.
  merge_chunk_hits(
      combined,
      {entry(4, {hsp(500, 9000, 10080, 100, 1180, 1e-30, {9500, 600})}),
       entry(9, {hsp(40, 10, 50, 5, 45, 2.0, {20, 15}), hsp(60, 100, 160, 80, 140, 0.5, {120, 100})})},
      0, 1050);
  ASSERT_TRUE(combined);
  EXPECT_EQ(find(*combined, 9).prelim[0].hsp.score, 60);
  EXPECT_EQ(find(*combined, 9).list.hsps[0].score, 60);

  // Chunk 1 (piece at 9980, coordinates shifted): subject 4 continues on the same diagonal (start diagonal
  // 10000 - 1100 = end diagonal 10080 - 1180); subject 7 is new.
  std::vector<PrelimEntry> next{entry(4, {hsp(300, 10000, 10500, 1100, 1600, 1e-10, {10200, 1300})}),
                                entry(7, {hsp(90, 12000, 12100, 0, 100, 0.01, {12050, 50})})};
  merge_chunk_hits(combined, std::move(next), 9980, 1050);
  ASSERT_EQ(combined->size(), 3u);
  const PrelimEntry& e = find(*combined, 4);
  ASSERT_EQ(e.prelim.size(), 1u);
  const PrelimHsp& m = e.prelim[0];
  EXPECT_EQ(m.hsp.q_start, 9000);
  EXPECT_EQ(m.hsp.q_end, 10500);
  EXPECT_EQ(m.hsp.s_start, 100);
  EXPECT_EQ(m.hsp.s_end, 1600);
  // (int)((500 + 300) / (1080 + 500) * 1500) = 759 > 500.
  EXPECT_EQ(m.hsp.score, 759);
  EXPECT_EQ(m.seed, (SeedPoint{9500, 600}));  // the better HSP's seed
  EXPECT_EQ(m.hsp.evalue, 1e-30);             // not recomputed
  EXPECT_EQ(e.list.hsps, std::vector<Hsp>{m.hsp});
  EXPECT_EQ(find(*combined, 7).prelim.size(), 1u);
}

TEST(MergeChunkHits, BetterNewHspGivesItsSeedAndScore) {
  std::optional<std::vector<PrelimEntry>> combined;
  merge_chunk_hits(combined, {entry(1, {hsp(100, 9900, 10000, 900, 1000, 1e-5, {9950, 950})})}, 0, 10);
  // New HSP: its start (9950, 950) inside the old box; diagonals 9000 and 9000.
  merge_chunk_hits(combined, {entry(1, {hsp(900, 9950, 11000, 950, 2000, 1e-80, {10500, 1500})})}, 9900, 10);
  const PrelimHsp& m = find(*combined, 1).prelim.at(0);
  EXPECT_EQ(m.seed, (SeedPoint{10500, 1500}));
  // density (100 + 900) / (100 + 1050) * 1100 = 956.5 -> 956 > 900.
  EXPECT_EQ(m.hsp.score, 956);
  EXPECT_EQ(m.hsp.evalue, 1e-5);
}

TEST(MergeChunkHits, NotStitchedOffDiagonalOrOutsideTheOverlap) {
  const auto run = [](PrelimHsp old_hsp, PrelimHsp new_hsp, int offset) {
    std::optional<std::vector<PrelimEntry>> combined;
    merge_chunk_hits(combined, {entry(1, {old_hsp})}, 0, 10);
    merge_chunk_hits(combined, {entry(1, {new_hsp})}, offset, 10);
    return find(*combined, 1).prelim.size();
  };
  const PrelimHsp old_hsp = hsp(500, 9000, 10080, 100, 1180, 1e-30, {9500, 600});  // end diagonal 8900
  // Start diagonal 8909: within 10, merged; 8910: not.
  EXPECT_EQ(run(old_hsp, hsp(100, 10009, 10300, 1100, 1400, 1e-3, {10100, 1191}), 9980), 1u);
  EXPECT_EQ(run(old_hsp, hsp(100, 10010, 10300, 1100, 1400, 1e-3, {10100, 1190}), 9980), 2u);
  // Old HSP ending at or before the split point: not a candidate.
  EXPECT_EQ(run(old_hsp, hsp(100, 10000, 10300, 1100, 1400, 1e-3, {10100, 1200}), 10080), 2u);
  // New HSP starting at or past split point + 100: not a candidate.
  EXPECT_EQ(run(old_hsp, hsp(100, 10000, 10300, 1100, 1400, 1e-3, {10100, 1200}), 9900), 2u);
  EXPECT_EQ(run(old_hsp, hsp(100, 10000, 10300, 1100, 1400, 1e-3, {10100, 1200}), 9901), 1u);
  // Same diagonal but neither end point of the new HSP inside the old box: not merged.
  EXPECT_EQ(run(old_hsp, hsp(100, 10081, 10300, 1181, 1400, 1e-3, {10100, 1200}), 10000), 2u);
}

TEST(MergeChunkHits, PieceAtTheQueryStartIsAppendedWithDuplicates) {
  std::optional<std::vector<PrelimEntry>> combined;
  const PrelimHsp a = hsp(70, 0, 40, 10, 50, 1e-3, {20, 30});
  merge_chunk_hits(combined, {entry(2, {a})}, 0, 10);
  merge_chunk_hits(combined, {entry(2, {hsp(90, 0, 60, 10, 70, 1e-5, {30, 40}), a})}, 0, 10);
  const PrelimEntry& e = find(*combined, 2);
  ASSERT_EQ(e.prelim.size(), 3u);
  EXPECT_EQ(e.prelim[0].hsp.score, 90);
  EXPECT_EQ(e.prelim[1].hsp, a.hsp);
  EXPECT_EQ(e.prelim[2].hsp, a.hsp);
}

TEST(MergeChunkHits, UnionCutToTheLimit) {
  std::optional<std::vector<PrelimEntry>> combined;
  merge_chunk_hits(combined, {}, 0, 2);  // no lists in this chunk: nothing yet
  EXPECT_FALSE(combined);
  merge_chunk_hits(
      combined,
      {entry(1, {hsp(50, 0, 10, 0, 10, 1e-2, {5, 5})}), entry(2, {hsp(80, 0, 10, 0, 10, 1e-6, {5, 5})})}, 0,
      2);
  merge_chunk_hits(combined,
                   {entry(3, {hsp(60, 20000, 20010, 0, 10, 1e-4, {20005, 5})}),
                    entry(4, {hsp(40, 20000, 20010, 0, 10, 1.0, {20005, 5})})},
                   19000, 2);
  ASSERT_EQ(combined->size(), 2u);
  std::vector<int> oids;
  for (const PrelimEntry& e : *combined) oids.push_back(e.list.oid);
  std::sort(oids.begin(), oids.end());
  EXPECT_EQ(oids, (std::vector<int>{2, 3}));  // the two best E-values
}

}  // namespace
}  // namespace warpsearch::blast
