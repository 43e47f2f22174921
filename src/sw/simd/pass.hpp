// pass.hpp: the CPU fast tier of the sw family: the pass of model.hpp (score and end cell under the
// column-major tie rule, every mode and boundary) computed with striped SIMD (Farrar 2007).
//
//   Isa, best_isa(), isa_name()  the instruction sets this build can use and the runtime choice
//                                (CPU check, overridable with WARPSEARCH_SIMD=scalar|sse41|avx2)
//   Workspace                    per-thread reusable buffers (query profile, H and E columns)
//   pass()                       one pass; bit-identical to sw::reference::pass for every Isa
//
// Pairs with fits_int16(model, m, n) run in 16-bit lanes (16 per AVX2 vector, 8 per SSE4.1 vector),
// others in 32-bit lanes; the a-priori bound of model.hpp means no lane can overflow in either case.
// The striped kernel is src/sw/simd/striped.hpp; kScalar is a portable linear-space loop used on
// machines without SSE4.1 and on non-x86 builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "sw/model.hpp"

namespace warpsearch::sw::simd {

enum class Isa : std::uint8_t { kScalar, kSse41, kAvx2 };

// The widest Isa this build and CPU support, or the one named by the environment variable
// WARPSEARCH_SIMD (scalar | sse41 | avx2). A name that is unknown or not supported here throws
// Error(kUsage). The CPU check runs once per process; the variable is read on every call.
Isa best_isa();
// True when this build has code for `isa` and the CPU runs it.
bool isa_supported(Isa isa);
std::string_view isa_name(Isa isa);  // "scalar", "sse41", "avx2"

// Scratch memory of one thread: grown on demand, reused across calls, never shrunk. Not thread-safe;
// use one per thread.
class Workspace {
 public:
  Workspace() = default;
  ~Workspace();
  Workspace(Workspace&& other) noexcept;
  Workspace& operator=(Workspace&& other) noexcept;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // At least `bytes` bytes, 64-byte aligned; contents unspecified. Valid until the next call. A
  // moved-from workspace is empty (capacity 0) and usable.
  std::byte* buffer(std::size_t bytes);
  std::size_t capacity() const { return capacity_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// The pass of model.hpp over query q (rows) and target t (columns), both non-empty digital codes below
// kMaxCodes, with fits_int32(model, q.size(), t.size()) and open, extend >= 0, open + extend >= 1.
// Violations throw Error(kInput) (sizes) or Error(kUsage) (gaps, an Isa not supported here, a bad
// known_score). known_score: 0, or in local mode the pass's score when the caller knows it (the
// start-finding pass's is the forward score): the sweep ends at the first column reaching it, with the
// same result. A known_score above the true score gives the plain pass's result.
EndPoint pass(const PassModel& model, std::span<const std::uint8_t> q, std::span<const std::uint8_t> t,
              Workspace& workspace, Isa isa = best_isa(), std::int32_t known_score = 0);

}  // namespace warpsearch::sw::simd
