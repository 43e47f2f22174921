// pairwise.hpp: tier-independent steps of a pairwise alignment around the passes (model.hpp).
//
//   reverse_prefix()  the reversed-prefix inputs of the start-finding pass
//   needs_reverse()   whether a forward end point needs a reverse pass (local/semiglobal, score cell)
//   make_result()     forward + reverse end points -> align::Result coordinates (checks consistency)
//   traceback()       fills cigar/matches/length of a result by global DP over its region; the CIGAR
//                     re-scores to the result's score or Error(kInternal) is thrown
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sw/model.hpp"
#include "warpsearch/align.hpp"

namespace warpsearch::sw {

// Rows/columns of the reverse pass: query[0..qlen) and target[0..tlen) read backwards, where
// qlen = fwd.qend + 1 (semiglobal: the whole query) and tlen = fwd.tend + 1.
struct ReverseExtent {
  std::uint32_t qlen = 0;
  std::uint32_t tlen = 0;
};
// Semiglobal alignments whose best score equals that of the all-insertion alignment -(open + m*extend)
// report that alignment (the whole query against an empty target range at 0); see model.hpp.
bool all_insertions(const PassModel& model, const EndPoint& fwd, std::size_t query_length);
bool needs_reverse(const PassModel& model, const EndPoint& fwd, std::size_t query_length);
ReverseExtent reverse_extent(Mode mode, const EndPoint& fwd, std::size_t query_length);
// The reverse pass's score when it is known in advance (local mode: the forward score, model.hpp), for
// PassJob::score / simd::pass's known_score, which let the pass stop at the start cell; else 0.
inline std::int32_t reverse_known_score(const PassModel& model, const EndPoint& fwd) {
  return model.mode == Mode::kLocal ? fwd.score : 0;
}
void reverse_prefix(std::span<const std::uint8_t> seq, std::uint32_t len, std::vector<std::uint8_t>& out);

// rev is ignored when !needs_reverse(model, fwd, query_length).
align::Result make_result(const PassModel& model, const EndPoint& fwd, const EndPoint& rev,
                          std::size_t query_length, std::size_t target_length);

// Largest query x target product for which traceback() will allocate its direction matrix
// (one byte per cell); larger regions are Error(kInput) naming the pair's lengths.
inline constexpr std::uint64_t kMaxTracebackCells = std::uint64_t{1} << 33;  // 8 GiB
void traceback(const PassModel& model, std::span<const std::uint8_t> query,
               std::span<const std::uint8_t> target, align::Result& result);

// Throws Error(kInput) when a pair cannot be aligned exactly in 32-bit lanes (or is empty).
void check_pair(const PassModel& model, std::size_t query_length, std::size_t target_length);

}  // namespace warpsearch::sw
