// two_hit.hpp: blastp's two-hit ungapped X-drop extension (BLAST+ 2.12 aa_ungapped.c: s_BlastAaExtendTwoHit,
// s_BlastAaExtendLeft / Right), header-only and __host__ __device__ (hd.hpp), so the CPU finders
// (TwoHitFinder, GroupScanner) and the GPU kernels run this one implementation.
//
// Contents:
//   UngappedHsp          a saved ungapped HSP (BLAST+'s BlastInitHSP + BlastUngappedData)
//   TwoHitExtension      the result of one two-hit extension
//   extend_two_hit_raw   the extension over raw pointers (ungapped.hpp's extend_two_hit is the span form)
//   two_hit_detail::extend_left / extend_right   its two halves
//   two_hit_detail::second_word_shift / two_hit_from_point   its step 1 and its steps 2-4 over given halves
//                        (the GPU's warp form, cuda/two_hit_warp.cuh, shares them)
//
// Coordinates are 0-based; an HSP covers query [query_start, query_end) and subject
// [subject_start, subject_end), both of the same length (ungapped).
#pragma once

#include <cstdint>

#include "blast/hd.hpp"
#include "warpsearch/alphabet.hpp"

namespace warpsearch::blast {

// A saved ungapped HSP. hit_query_offset / hit_subject_offset are the second word hit's offsets
// (BLAST+'s init HSP offsets, the seed the gapped stage starts from when the HSP is short).
struct UngappedHsp {
  int score = 0;
  std::int32_t query_start = 0;
  std::int32_t query_end = 0;  // exclusive
  std::int32_t subject_start = 0;
  std::int32_t subject_end = 0;  // exclusive
  std::int32_t hit_query_offset = 0;
  std::int32_t hit_subject_offset = 0;
  WS_BLAST_HD std::int32_t length() const { return query_end - query_start; }
  friend constexpr bool operator==(const UngappedHsp&, const UngappedHsp&) = default;
};

// Result of one two-hit extension (s_BlastAaExtendTwoHit).
struct TwoHitExtension {
  int score = 0;  // max(left score, right score); 0 if nothing scored positive
  std::int32_t query_start = 0;
  std::int32_t subject_start = 0;
  std::int32_t length = 0;
  bool right_extended = false;    // the left part reached the first word, so the right extension ran
  std::int32_t subject_last = 0;  // s_last_off: the rightmost subject offset examined (see below)
};

namespace two_hit_detail {

struct Extent {
  int score = 0;
  std::int32_t length = 0;
  std::int32_t last = 0;  // right extension: offset (relative to its start) where it stopped
};

// Left extension ending at (s_off, q_off) inclusive and going left; `best` is the score to beat (the
// extension has length 0 unless the running score exceeds it). Stops after the position where
// best - sum >= x_dropoff, or at the first letter of either sequence. s_off or q_off may be -1 (empty).
WS_BLAST_HD inline Extent extend_left(const std::uint8_t* q, const std::uint8_t* s, std::int32_t q_off,
                                      std::int32_t s_off, const std::int8_t* table, int x_dropoff, int best) {
  const std::int32_t n = hd_min(s_off, q_off);  // positions s_off .. s_off - n
  int sum = best;
  std::int32_t best_i = n + 1;  // index (from s_off - n) of the leftmost position of the best extension
  for (std::int32_t i = n; i >= 0; --i) {
    sum += table[q[q_off - n + i] * kMaxCodes + s[s_off - n + i]];
    if (sum > best) {
      best = sum;
      best_i = i;
    }
    if (best - sum >= x_dropoff) break;
  }
  return {best, n - best_i + 1, 0};
}

// Right extension starting at (s_off, q_off) with running score `best` (the left part's score). Stops
// after the position where sum <= 0 or best - sum >= x_dropoff, or at the end of either sequence;
// `last` is the relative offset of that stopping position (n when it ran out).
WS_BLAST_HD inline Extent extend_right(const std::uint8_t* q, const std::uint8_t* s, std::int32_t q_len,
                                       std::int32_t s_len, std::int32_t q_off, std::int32_t s_off,
                                       const std::int8_t* table, int x_dropoff, int best) {
  const std::int32_t n = hd_min(s_len - s_off, q_len - q_off);
  int sum = best;
  std::int32_t best_i = -1;
  std::int32_t i = 0;
  for (; i < n; ++i) {
    sum += table[q[q_off + i] * kMaxCodes + s[s_off + i]];
    if (sum > best) {
      best = sum;
      best_i = i;
    }
    if (sum <= 0 || best - sum >= x_dropoff) break;
  }
  return {best, best_i + 1, i};
}

// Step 1 of the extension (below): the shift from the second word's start past its best-scoring prefix
// (strictly better only: the shortest among ties; 0 when no prefix scores above 0).
WS_BLAST_HD inline std::int32_t second_word_shift(const std::uint8_t* query, const std::uint8_t* subject,
                                                  const std::int8_t* table, std::int32_t q_second,
                                                  std::int32_t s_second, int word_size) {
  int sum = 0;
  int best = 0;
  std::int32_t shift = 0;
  for (int i = 0; i < word_size; ++i) {
    sum += table[query[q_second + i] * kMaxCodes + subject[s_second + i]];
    if (sum > best) {
      best = sum;
      shift = i + 1;
    }
  }
  return shift;
}

// Steps 2-4 from the start point (q_point, s_point) with the given halves: left(q_off, s_off) runs the left
// extension ending at those offsets from a best of 0, right(q_off, s_off, best) the right one from them.
// The CPU passes extend_left / extend_right, the GPU their warp forms (cuda/two_hit_warp.cuh).
template <class Left, class Right>
WS_BLAST_HD inline TwoHitExtension two_hit_from_point(std::int32_t q_point, std::int32_t s_point,
                                                      std::int32_t s_first_end, Left&& left_half,
                                                      Right&& right_half) {
  TwoHitExtension r;
  r.subject_last = s_point;
  const Extent left = left_half(q_point - 1, s_point - 1);
  Extent right;
  if (left.length >= s_point - s_first_end) {
    r.right_extended = true;
    right = right_half(q_point, s_point, left.score);
    r.subject_last = s_point + right.last;
  }
  r.query_start = q_point - left.length;
  r.subject_start = s_point - left.length;
  r.length = left.length + right.length;
  r.score = hd_max(left.score, right.score);
  return r;
}

}  // namespace two_hit_detail

// The two-hit extension: `table` is the 32 x 32 score table (ScoringMatrix::row(0), score of codes a and b
// at [a * 32 + b]), query / subject hold codes < 32 (query_length / subject_length residues). The second
// hit is the word at (q_second, s_second); s_first_end is the subject offset just past the first hit's
// word (first hit offset + word_size), <= s_second.
//  1. Within the second word, the prefix with the best positive score sets the start point p = one past
//     its end (p = s_second if no prefix scores > 0; ties keep the shortest prefix).
//  2. Left extension over p - 1, p - 2, ... down to the first letter of either sequence: running sum
//     from 0, best = max running sum (strictly greater updates, so ties keep the shorter extension);
//     stops after the position where best - sum >= x_dropoff.
//  3. If the left part reaches the first word (its length >= p - s_first_end), the right extension
//     runs from p on, starting from the left score: it stops after the position where the running sum
//     <= 0 or best - sum >= x_dropoff, or at either sequence end. subject_last is the subject offset of
//     the position where it stopped (the one that triggered the stop), or the sequence end (one past the
//     last position) when it ran out; without a right extension subject_last = p.
//  4. HSP = [p - left length, p + right length), score = max(left score, right score).
WS_BLAST_HD inline TwoHitExtension extend_two_hit_raw(const std::uint8_t* query, std::int32_t query_length,
                                                      const std::uint8_t* subject,
                                                      std::int32_t subject_length, const std::int8_t* table,
                                                      std::int32_t s_first_end, std::int32_t s_second,
                                                      std::int32_t q_second, int x_dropoff, int word_size) {
  const std::int32_t shift =
      two_hit_detail::second_word_shift(query, subject, table, q_second, s_second, word_size);
  return two_hit_detail::two_hit_from_point(
      q_second + shift, s_second + shift, s_first_end,
      [&](std::int32_t q_off, std::int32_t s_off) {
        return two_hit_detail::extend_left(query, subject, q_off, s_off, table, x_dropoff, 0);
      },
      [&](std::int32_t q_off, std::int32_t s_off, int best) {
        return two_hit_detail::extend_right(query, subject, query_length, subject_length, q_off, s_off, table,
                                            x_dropoff, best);
      });
}

}  // namespace warpsearch::blast
