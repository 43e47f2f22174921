// split.cpp: BLAST+'s query splitting for blastp (split.hpp): chunk ranges (SplitQuery_CalculateNumChunks,
// CQuerySplitter::x_ComputeChunkRanges), pieces (s_SetSplitQuerySeqInterval, the context offset
// corrections) and the merge of the chunks' preliminary hit lists (Blast_HitListMerge, Blast_HSPListsMerge,
// s_BlastMergeTwoHSPs, Blast_HSPListAppend and the sort of BlastHSPStreamMerge).
#include "blast/split.hpp"

#include <algorithm>
#include <cstdlib>

namespace warpsearch::blast {
namespace {

// OVERLAP_DIAG_CLOSE: HSPs whose end and start diagonals differ by less than this may merge.
constexpr int kOverlapDiagClose = 10;

// Blast_HSPListSortByScore: ScoreCompareHSPs order; glibc's qsort is a merge sort, hence stable.
void sort_by_score(std::vector<PrelimHsp>& hsps) {
  std::stable_sort(hsps.begin(), hsps.end(), [](const PrelimHsp& a, const PrelimHsp& b) {
    return compare_hsps_by_score(a.hsp, b.hsp) < 0;
  });
}

void sync_list(PrelimEntry& e) {
  e.list.hsps.clear();
  e.list.hsps.reserve(e.prelim.size());
  for (const PrelimHsp& p : e.prelim) e.list.hsps.push_back(p.hsp);
}

// CONTAINED_IN_HSP for one point: (q, s) inside a's box, bounds included.
bool point_in(const Hsp& a, int q, int s) {
  return a.q_start <= q && a.q_end >= q && a.s_start <= s && a.s_end >= s;
}

// s_BlastMergeTwoHSPs with allow_gap (gapped blastp; one frame): merges b into a when b's start or end
// point lies in a's box.
bool merge_two(PrelimHsp& a, const PrelimHsp& b) {
  Hsp& h1 = a.hsp;
  const Hsp& h2 = b.hsp;
  if (!point_in(h1, h2.q_start, h2.s_start) && !point_in(h1, h2.q_end, h2.s_end)) return false;
  const double density = (h1.score + h2.score) * 1.0 / ((h1.q_end - h1.q_start) + (h2.q_end - h2.q_start));
  h1.q_start = std::min(h1.q_start, h2.q_start);
  h1.s_start = std::min(h1.s_start, h2.s_start);
  h1.q_end = std::max(h1.q_end, h2.q_end);
  h1.s_end = std::max(h1.s_end, h2.s_end);
  if (h2.score > h1.score) {
    a.seed = b.seed;
    h1.score = h2.score;
  }
  h1.score = std::max(static_cast<int>(density * (h1.q_end - h1.q_start)), h1.score);
  return true;
}

// Blast_HSPListsMerge for a split query (one context, frame 0): `fresh` (this chunk's HSPs of a subject)
// into `combined` (the earlier chunks'), split offset `offset`. The candidates are moved to the front of
// each list by BLAST's swaps; all HSPs are kept (hsp_num_max is unlimited), combined first, then sorted.
void merge_hsp_lists(std::vector<PrelimHsp>& combined, std::vector<PrelimHsp> fresh, int offset) {
  std::size_t n1 = 0, n2 = 0;
  for (std::size_t i = 0; i < combined.size(); ++i)
    if (combined[i].hsp.q_end > offset) std::swap(combined[n1++], combined[i]);
  const int overlap_end = offset + static_cast<int>(kQueryChunkOverlap);
  for (std::size_t i = 0; i < fresh.size(); ++i)
    if (fresh[i].hsp.q_start < overlap_end) std::swap(fresh[n2++], fresh[i]);
  std::vector<bool> merged(fresh.size(), false);
  if (n1 > 0 && n2 > 0) {
    for (std::size_t i1 = 0; i1 < n1; ++i1) {
      PrelimHsp& a = combined[i1];
      for (std::size_t i2 = 0; i2 < n2; ++i2) {
        if (merged[i2]) continue;
        const Hsp& b = fresh[i2].hsp;
        const int end_diag = a.hsp.q_end - a.hsp.s_end;
        const int start_diag = b.q_start - b.s_start;
        if (std::abs(end_diag - start_diag) < kOverlapDiagClose && merge_two(a, fresh[i2])) merged[i2] = true;
      }
    }
  }
  for (std::size_t i = 0; i < fresh.size(); ++i)
    if (!merged[i]) combined.push_back(std::move(fresh[i]));
  sort_by_score(combined);
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> query_chunks(std::size_t concatenated_length) {
  const std::size_t L = concatenated_length;
  constexpr std::size_t kStep = kQueryChunkSize - kQueryChunkOverlap;
  const std::size_t n = L / kStep;
  if (n <= 1) return {{0, L}};
  std::size_t size = (L + (n - 1) * kQueryChunkOverlap) / n;
  if (n < size - kQueryChunkOverlap) ++size;  // rounded up only when that keeps n chunks
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  std::size_t start = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t end = start + size;
    if (end >= L || k + 1 == n) end = L;
    chunks.emplace_back(start, end);
    start += size - kQueryChunkOverlap;
    if (start > L || end == L) break;
  }
  return chunks;
}

std::vector<std::vector<QueryPiece>> split_query_batch(std::span<const std::size_t> lengths) {
  std::size_t total = 0;
  for (const std::size_t len : lengths) total += len;
  const auto chunks = query_chunks(total);
  std::vector<std::vector<QueryPiece>> pieces(lengths.size());
  std::size_t qs = 0;
  for (std::size_t q = 0; q < lengths.size(); ++q) {
    const std::size_t qe = qs + lengths[q];
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const std::size_t from = std::max(chunks[c].first, qs);
      const std::size_t to = std::min(chunks[c].second, qe);
      if (from < to) pieces[q].push_back({c, from - qs, to - qs});
    }
    qs = qe;
  }
  return pieces;
}

void shift_query(std::vector<PrelimEntry>& entries, int offset) {
  if (offset == 0) return;
  for (PrelimEntry& e : entries) {
    for (PrelimHsp& p : e.prelim) {
      p.hsp.q_start += offset;
      p.hsp.q_end += offset;
      p.seed.q += offset;
    }
    sync_list(e);
  }
}

void merge_chunk_hits(std::optional<std::vector<PrelimEntry>>& combined, std::vector<PrelimEntry> chunk,
                      int offset, std::size_t limit) {
  if (chunk.empty()) return;  // no hit list for the query in this chunk
  if (!combined) {
    combined = std::move(chunk);
  } else {
    const auto by_oid = [](const PrelimEntry& a, const PrelimEntry& b) { return a.list.oid < b.list.oid; };
    std::sort(chunk.begin(), chunk.end(), by_oid);
    std::vector<PrelimEntry>& old = *combined;
    std::sort(old.begin(), old.end(), by_oid);
    std::vector<PrelimEntry> out;
    out.reserve(old.size() + chunk.size());
    std::size_t i = 0, j = 0;
    while (i < chunk.size() && j < old.size()) {
      if (chunk[i].list.oid < old[j].list.oid) {
        out.push_back(std::move(chunk[i++]));
      } else if (chunk[i].list.oid > old[j].list.oid) {
        out.push_back(std::move(old[j++]));
      } else {
        PrelimEntry& e = old[j];
        if (offset > 0) {
          merge_hsp_lists(e.prelim, std::move(chunk[i].prelim), offset);
        } else {  // Blast_HSPListAppend
          for (PrelimHsp& p : chunk[i].prelim) e.prelim.push_back(std::move(p));
          sort_by_score(e.prelim);
        }
        sync_list(e);
        out.push_back(std::move(e));
        ++i;
        ++j;
      }
    }
    for (; i < chunk.size(); ++i) out.push_back(std::move(chunk[i]));
    for (; j < old.size(); ++j) out.push_back(std::move(old[j]));
    // Blast_HitListUpdate into a list of `limit`: the best `limit` (a total order over distinct oids).
    if (out.size() > limit) {
      std::nth_element(
          out.begin(), out.begin() + static_cast<std::ptrdiff_t>(limit), out.end(),
          [](const PrelimEntry& a, const PrelimEntry& b) { return compare_hit_lists(a.list, b.list) < 0; });
      out.resize(limit);
    }
    old = std::move(out);
  }
  for (PrelimEntry& e : *combined) {  // BlastHSPStreamMerge sorts every list by score
    sort_by_score(e.prelim);
    sync_list(e);
  }
}

}  // namespace warpsearch::blast
