// scanner.cpp: GroupScanner (scanner.hpp): the group lookup table, the one-pass subject scan with the
// two-hit rule of TwoHitFinder (ungapped.hpp, where the rule is documented), and the preliminary stage.
#include "blast/scanner.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {

namespace {
// TwoHitFinder's default offset_limit (INT32_MAX / 4): past it the diagonals are cleared.
constexpr std::int32_t kOffsetLimit = INT32_MAX / 4;
}  // namespace

GroupScanner::GroupScanner(std::span<const QueryContext* const> contexts)
    : contexts_(contexts.begin(), contexts.end()) {
  if (contexts_.empty()) return;
  const QueryContext& first = *contexts_.front();
  window_ = first.ungapped_params().window;
  word_size_ = first.ungapped_params().word_size;
  std::memcpy(scores_, first.scoring().row(0), sizeof(scores_));

  // Queries back to back, each followed by one masked separator residue (X): a word crossing a boundary
  // contains the separator and is not indexed (the table indexes only words free of masked residues).
  const std::uint8_t separator = *Alphabet::protein().code('X');
  std::vector<std::uint8_t> all;
  std::vector<MaskRun> masked;
  std::vector<std::uint32_t> owner, start;
  std::size_t longest = 0;
  for (std::uint32_t q = 0; q < contexts_.size(); ++q) {
    const QueryContext& c = *contexts_[q];
    const std::size_t base = all.size();
    if (base + c.query().size() + 1 > static_cast<std::size_t>(INT_MAX))
      throw Error(ErrorKind::kInternal, "GroupScanner: more than 2^31 - 1 query residues in a group");
    start.push_back(static_cast<std::uint32_t>(base));
    all.insert(all.end(), c.query().begin(), c.query().end());
    for (const Interval& m : c.setup().mask)
      masked.push_back(
          {base + static_cast<std::uint64_t>(m.begin), base + static_cast<std::uint64_t>(m.end)});
    masked.push_back({all.size(), all.size() + 1});
    all.push_back(separator);
    owner.resize(all.size(), q);
    longest = std::max(longest, c.query().size());
    info_.push_back({c.query(), c.ungapped_params().x_dropoff, c.ungapped_params().cutoff_score});
  }
  table_ = AaLookupTable::build(all, masked, first.matrix(), word_size_, first.setup().threshold);
  const std::uint64_t stride =
      std::bit_ceil(static_cast<std::uint64_t>(longest) + static_cast<std::uint64_t>(window_));
  if (stride * contexts_.size() > (std::uint64_t{1} << 32))
    throw Error(ErrorKind::kInternal, "GroupScanner: group too large for 32-bit diagonal slots");
  shift_ = std::countr_zero(stride);
  mask_ = static_cast<std::uint32_t>(stride - 1);
  const std::span<const std::uint32_t> hits = table_.all_hits();
  entries_.resize(hits.size());
  for (std::size_t k = 0; k < hits.size(); ++k) {
    const std::uint32_t q = owner[hits[k]];
    entries_[k] = (q << shift_) | (hits[k] - start[q]);
  }
  diags_.assign(contexts_.size() << shift_, Diag{});
  offset_ = window_;
  ungapped_.resize(contexts_.size());
}

void GroupScanner::clear() {
  offset_ = window_;
  for (Diag& d : diags_) d = Diag{-window_, 0};
}

void GroupScanner::extend(Diag& d, std::uint32_t q, std::int32_t query_offset, std::int32_t subject_offset,
                          std::int32_t first_hit, Residues subject) {
  const QueryInfo& info = info_[q];
  const TwoHitExtension e = extend_two_hit(info.residues, subject, scores_, first_hit + word_size_,
                                           subject_offset, query_offset, info.x_dropoff, word_size_);
  ++counts_.extended;
  if (e.score >= info.cutoff) {
    ++counts_.saved;
    std::vector<UngappedHsp>& out = ungapped_[q];
    if (out.empty()) touched_.push_back(q);
    out.push_back(UngappedHsp{e.score, e.query_start, e.query_start + e.length, e.subject_start,
                              e.subject_start + e.length, query_offset, subject_offset});
  }
  if (e.right_extended) {
    d.flag = 1;
    d.last_hit = e.subject_last - (word_size_ - 1) + offset_;
  } else {
    d.last_hit = subject_offset + offset_;
  }
}

void GroupScanner::run(Residues subject, SearchCounts& counts,
                       std::vector<std::pair<std::uint32_t, std::vector<PrelimHsp>>>& out) {
  out.clear();
  if (contexts_.empty()) return;
  touched_.clear();
  counts_ = {};
  const int w = table_.word_size();
  const std::uint32_t word_mask = table_.word_mask();
  const auto n = static_cast<std::int32_t>(subject.size());
  if (n >= w) {
    const std::span<const std::uint32_t> starts = table_.starts();
    const std::uint32_t* entries = entries_.data();
    Diag* diags = diags_.data();
    const int shift = shift_;
    const std::uint32_t mask = mask_;
    const std::int32_t window = window_;
    const std::int32_t word_size = word_size_;
    std::uint32_t index = 0;
    for (int k = 0; k < w - 1; ++k) index = (index << kLookupCharBits) | subject[static_cast<std::size_t>(k)];
    for (std::int32_t s = 0; s + w <= n; ++s) {
      index = ((index << kLookupCharBits) | subject[static_cast<std::size_t>(s + w - 1)]) & word_mask;
      if (!table_.present(index)) continue;
      const std::uint32_t end = starts[index + 1];
      counts_.hits += end - starts[index];
      const std::int32_t shifted = s + offset_;
      for (std::uint32_t k = starts[index]; k < end; ++k) {
        const std::uint32_t hit = entries[k];
        const auto query_offset = static_cast<std::int32_t>(hit & mask);
        Diag& d = diags[(hit & ~mask) + ((hit - static_cast<std::uint32_t>(s)) & mask)];
        // TwoHitFinder::hit.
        if (d.flag) {
          if (shifted < d.last_hit) continue;  // inside the last extension
          d.last_hit = shifted;
          d.flag = 0;
          continue;
        }
        const std::int32_t diff = shifted - d.last_hit;
        if (diff >= window) {
          d.last_hit = shifted;
          continue;
        }
        if (diff < word_size) continue;  // overlaps the first hit: ignored, first hit kept
        if (query_offset - diff < 0) {
          d.last_hit = shifted;
          continue;
        }
        extend(d, hit >> shift, query_offset, s, s - diff, subject);
      }
    }
  }
  // Blast_ExtendWordExit, for every query's diagonals at once.
  if (offset_ >= kOffsetLimit)
    clear();
  else
    offset_ += n + window_;
  counts.word_hits += counts_.hits;
  counts.ungapped_extensions += counts_.extended;
  counts.ungapped_saved += counts_.saved;
  std::sort(touched_.begin(), touched_.end());
  for (const std::uint32_t q : touched_) {
    std::vector<UngappedHsp>& ungapped = ungapped_[q];
    sort_ungapped_hsps(ungapped);
    std::vector<PrelimHsp> prelim = preliminary_hsps(*contexts_[q], subject, ungapped, counts);
    ungapped.clear();
    if (!prelim.empty()) out.emplace_back(q, std::move(prelim));
  }
}

}  // namespace warpsearch::blast
