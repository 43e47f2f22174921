// two_hit_warp.cuh: blastp's two-hit ungapped X-drop extension computed by a whole warp, 32 positions at a
// time, with exactly the result of extend_two_hit_raw (two_hit.hpp, the CPU's code and the definition).
//
// Contents:
//   warp_extend_left / warp_extend_right   two_hit_detail::extend_left / extend_right, cooperatively
//   extend_two_hit_warp                    extend_two_hit_raw, cooperatively
//
// Why: in the scan kernel one lane's extension used to run while the other 31 lanes waited (ncu: 8 of 32
// threads active on average). Here every lane scores one position of a chunk of 32; a warp prefix sum gives
// the running sums, a prefix maximum the best score so far, and a ballot the first position where the
// sequential loop stops (best - sum >= x_dropoff; on the right also sum <= 0).
//
// Why the result is the same: the sequential loop updates its best only when the running sum is strictly
// greater, so its best position is the first position (up to the stop) whose running sum equals the
// maximum, when that maximum beats the best carried in from earlier chunks. The stop test at a position uses
// the best including that position, which is the inclusive prefix maximum. Positions past the stop or past
// the sequences' ends are scored 0 and ignored. Every lane returns the same result.
//
// All 32 lanes of the warp must call these functions together (converged), with the same arguments.
#pragma once

#include <cstdint>

#include "blast/two_hit.hpp"
#include "warpsearch/alphabet.hpp"

namespace warpsearch::blast::warp_two_hit {

constexpr unsigned kAllLanes = 0xFFFFFFFFu;

// Inclusive prefix sum and prefix maximum over the warp's lanes.
__device__ __forceinline__ int warp_prefix_sum(int v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int u = __shfl_up_sync(kAllLanes, v, d);
    if (lane >= d) v += u;
  }
  return v;
}
__device__ __forceinline__ int warp_prefix_max(int v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int u = __shfl_up_sync(kAllLanes, v, d);
    if (lane >= d) v = max(v, u);
  }
  return v;
}

// The common step: positions base + lane (valid: scored `score`), running sum and best carried in.
// Returns true when the loop stops in this chunk; updates sum, best, best_at (position of the best) and
// stop_at (the stopping position, when it stops).
template <bool kRight>
__device__ __forceinline__ bool chunk(int score, bool valid, int count_left, int base, int lane,
                                      int x_dropoff, int& sum, int& best, int& best_at, int& stop_at) {
  const int running = warp_prefix_sum(score, lane) + sum;
  const int best_here = max(warp_prefix_max(running, lane), best);
  const bool stop = valid && ((kRight && running <= 0) || best_here - running >= x_dropoff);
  const unsigned stops = __ballot_sync(kAllLanes, stop);
  // The last position the sequential loop reaches in this chunk.
  const int last = stops != 0 ? __ffs(static_cast<int>(stops)) - 1 : min(count_left - 1, 31);
  const int chunk_best = __shfl_sync(kAllLanes, best_here, last);
  if (chunk_best > best) {
    const unsigned at = __ballot_sync(kAllLanes, lane <= last && running == chunk_best);
    best_at = base + __ffs(static_cast<int>(at)) - 1;
    best = chunk_best;
  }
  sum = __shfl_sync(kAllLanes, running, last);
  if (stops != 0) stop_at = base + last;
  return stops != 0;
}

// two_hit_detail::extend_left: positions s_off, s_off - 1, ..., down to s_off - min(s_off, q_off).
__device__ __forceinline__ two_hit_detail::Extent warp_extend_left(const std::uint8_t* q,
                                                                   const std::uint8_t* s, std::int32_t q_off,
                                                                   std::int32_t s_off,
                                                                   const std::int8_t* table, int x_dropoff,
                                                                   int best, int lane) {
  const std::int32_t count = min(s_off, q_off) + 1;  // positions (0 when either offset is -1)
  int sum = best;
  int best_at = -1, stop_at = 0;
  for (std::int32_t base = 0; base < count; base += 32) {
    const std::int32_t k = base + lane;
    const bool valid = k < count;
    const int score = valid ? table[q[q_off - k] * kMaxCodes + s[s_off - k]] : 0;
    if (chunk<false>(score, valid, count - base, base, lane, x_dropoff, sum, best, best_at, stop_at)) break;
  }
  return {best, best_at + 1, 0};
}

// two_hit_detail::extend_right: positions s_off, s_off + 1, ... while both sequences last.
__device__ __forceinline__ two_hit_detail::Extent warp_extend_right(
    const std::uint8_t* q, const std::uint8_t* s, std::int32_t q_len, std::int32_t s_len, std::int32_t q_off,
    std::int32_t s_off, const std::int8_t* table, int x_dropoff, int best, int lane) {
  const std::int32_t count = min(s_len - s_off, q_len - q_off);
  int sum = best;
  int best_at = -1, stop_at = count;
  for (std::int32_t base = 0; base < count; base += 32) {
    const std::int32_t i = base + lane;
    const bool valid = i < count;
    const int score = valid ? table[q[q_off + i] * kMaxCodes + s[s_off + i]] : 0;
    if (chunk<true>(score, valid, count - base, base, lane, x_dropoff, sum, best, best_at, stop_at)) break;
  }
  return {best, best_at + 1, stop_at};
}

// extend_two_hit_raw (two_hit.hpp), the same arguments plus the caller's lane.
__device__ __forceinline__ TwoHitExtension
extend_two_hit_warp(const std::uint8_t* query, std::int32_t query_length, const std::uint8_t* subject,
                    std::int32_t subject_length, const std::int8_t* table, std::int32_t s_first_end,
                    std::int32_t s_second, std::int32_t q_second, int x_dropoff, int word_size, int lane) {
  // Step 1 has a few positions: every lane computes it.
  const std::int32_t shift =
      two_hit_detail::second_word_shift(query, subject, table, q_second, s_second, word_size);
  return two_hit_detail::two_hit_from_point(
      q_second + shift, s_second + shift, s_first_end,
      [&](std::int32_t q_off, std::int32_t s_off) {
        return warp_extend_left(query, subject, q_off, s_off, table, x_dropoff, 0, lane);
      },
      [&](std::int32_t q_off, std::int32_t s_off, int best) {
        return warp_extend_right(query, subject, query_length, subject_length, q_off, s_off, table, x_dropoff,
                                 best, lane);
      });
}

}  // namespace warpsearch::blast::warp_two_hit
