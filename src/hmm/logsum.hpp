// HMMER 3.3.2's table-driven log-sum-exp for float log-space DP (logsum.c): p7_FLogsumInit's table
// flogsum_lookup[i] = log(1 + exp(-i/1000)) (double math, stored as float) for i = 0..15999, and
// p7_FLogsum(a, b) = max + table[(int)((max - min) * 1000)], or max when min is -inf or the
// difference is >= 15.7. The table is built once, thread-safely, on first use.
#pragma once

#include <cmath>

namespace warpsearch::hmm {

/// Table scale and size (p7_LOGSUM_SCALE, p7_LOGSUM_TBL).
inline constexpr float kLogsumScale = 1000.0f;
inline constexpr int kLogsumTableSize = 16000;

/// The lookup table (built on the first call; thread-safe static initialization).
const float* flogsum_table();

/// p7_FLogsum: approximates log(exp(a) + exp(b)) exactly as HMMER does (same float operations).
inline float flogsum(float a, float b) {
  static const float* const table = flogsum_table();
  const float max = (a > b) ? a : b;  // ESL_MAX
  const float min = (a < b) ? a : b;  // ESL_MIN
  if (min == -INFINITY || (max - min) >= 15.7f) return max;
  return max + table[static_cast<int>((max - min) * kLogsumScale)];
}

}  // namespace warpsearch::hmm
