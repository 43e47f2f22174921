// HMMER's p7_FLogsum lookup table (logsum.c), built once on first use.
#include "hmm/logsum.hpp"

#include <array>
#include <cmath>

namespace warpsearch::hmm {

namespace {

struct LogsumTable {
  std::array<float, kLogsumTableSize> v{};
  LogsumTable() {
    // As p7_FLogsumInit: (double)-i / 1000.f is a double division; log1p is NOT used (HMMER writes
    // log(1. + exp(...)), which rounds differently).
    for (int i = 0; i < kLogsumTableSize; i++) {
      v[static_cast<std::size_t>(i)] = static_cast<float>(
          std::log(1.0 + std::exp(static_cast<double>(-i) / static_cast<double>(kLogsumScale))));
    }
  }
};

}  // namespace

const float* flogsum_table() {
  static const LogsumTable table;
  return table.v.data();
}

}  // namespace warpsearch::hmm
