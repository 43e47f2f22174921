// fuzz_matrix.cpp: libFuzzer target for the NCBI matrix parser (ScoringMatrix::from_ncbi_text).
//
// Any byte string must either parse into a matrix that keeps the class invariants or be rejected with
// a warpsearch::Error; any other exception, a crash or a sanitizer report is a bug. Crashing inputs
// go into fuzz/corpus/matrix/, which tests/core/test_scoring.cpp replays.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"

namespace {

// Invariants every accepted matrix must satisfy; aborts (a fuzzer finding) if one does not.
void check(const warpsearch::ScoringMatrix& matrix) {
  using warpsearch::kMaxCodes;
  if (matrix.size() > kMaxCodes || matrix.min_score() > matrix.max_score() ||
      matrix.canonical_min_score() < matrix.min_score() ||
      matrix.canonical_max_score() > matrix.max_score()) {
    std::abort();
  }
  for (int a = 0; a < kMaxCodes; ++a) {
    for (int b = 0; b < kMaxCodes; ++b) {
      const int s = matrix.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
      if (s < matrix.min_score() || s > matrix.max_score()) std::abort();
      if ((a >= matrix.size() || b >= matrix.size()) && s != matrix.padding_score()) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check(warpsearch::ScoringMatrix::from_ncbi_text(text, "fuzz"));
  } catch (const warpsearch::Error&) {
    // Rejecting malformed input is the expected outcome.
  }
  return 0;
}
