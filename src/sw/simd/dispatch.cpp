// dispatch.cpp: runtime choice of the striped pass's instruction set (CPU check, WARPSEARCH_SIMD
// override), the Workspace, pass() with its precondition checks, and the portable scalar pass
// (Isa::kScalar: non-x86 builds and CPUs without SSE4.1).
#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "sw/simd/pass.hpp"
#include "sw/simd/striped.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::sw::simd {
namespace {

constexpr std::size_t kAlign = 64;

// The scalar pass: linear space, column by column (outer loop over target columns j, inner over query
// rows i), so a strict improvement of the best keeps the first maximum in column-major order.
// h[i] holds H(i, j-1) before row i of column j is computed and H(i, j) after; e[i] holds E(i, j) in
// and E(i, j+1) out; f carries F(i, j) down the column. 32-bit values (fits_int32 guarantees range).
EndPoint scalar_pass(const PassModel& model, std::span<const std::uint8_t> q, std::span<const std::uint8_t> t,
                     Workspace& workspace, std::int32_t known) {
  const std::size_t m = q.size();
  const std::size_t n = t.size();
  const Mode mode = model.mode;
  const std::int32_t open = model.open;
  const std::int32_t ext = model.extend;
  const std::int32_t oe = open + ext;
  auto* h = reinterpret_cast<std::int32_t*>(workspace.buffer(2 * m * sizeof(std::int32_t)));
  std::int32_t* e = h + m;
  for (std::size_t i = 0; i < m; ++i) {
    h[i] = mode == Mode::kLocal ? 0 : -(open + static_cast<std::int32_t>(i + 1) * ext);  // H(i,-1)
    e[i] = h[i] - oe;                                                                    // E(i,0)
  }
  EndPoint end;
  std::int32_t best = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const std::int8_t* column = model.table + (t[j] & (kMaxCodes - 1));  // column[q * kMaxCodes]
    // H(-1, j-1) and H(-1, j): zero except in global mode.
    std::int32_t diag = 0;
    std::int32_t top = 0;
    if (mode == Mode::kGlobal) {
      diag = j == 0 ? 0 : -(open + static_cast<std::int32_t>(j) * ext);
      top = -(open + static_cast<std::int32_t>(j + 1) * ext);
    }
    std::int32_t f = top - oe;  // F(0, j)
    for (std::size_t i = 0; i < m; ++i) {
      std::int32_t v = diag + column[static_cast<std::size_t>(q[i] & (kMaxCodes - 1)) * kMaxCodes];
      v = std::max(v, std::max(e[i], f));
      if (mode == Mode::kLocal) {
        v = std::max(v, 0);
        if (v > best) {
          best = v;
          end = {v, static_cast<std::int32_t>(i), static_cast<std::int32_t>(j)};
        }
      }
      diag = h[i];
      h[i] = v;
      e[i] = std::max(e[i] - ext, v - oe);
      f = std::max(f - ext, v - oe);
    }
    if (mode == Mode::kSemiGlobal && (j == 0 || h[m - 1] > end.score))
      end = {h[m - 1], static_cast<std::int32_t>(m - 1), static_cast<std::int32_t>(j)};
    if (known > 0 && best >= known) break;  // local mode: this column holds the first maximum
  }
  if (mode == Mode::kGlobal)
    end = {h[m - 1], static_cast<std::int32_t>(m - 1), static_cast<std::int32_t>(n - 1)};
  return end;
}

// What the CPU runs, checked once (the compiler's cpu-model check includes OS support of AVX state).
Isa cpu_isa() {
#if defined(__x86_64__)
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return Isa::kAvx2;
    if (__builtin_cpu_supports("sse4.1")) return Isa::kSse41;
    return Isa::kScalar;
  }();
  return isa;
#else
  return Isa::kScalar;
#endif
}

}  // namespace

bool isa_supported(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(cpu_isa()); }

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kSse41: return "sse41";
    case Isa::kAvx2: return "avx2";
  }
  return "unknown";
}

Isa best_isa() {
  const char* env = std::getenv("WARPSEARCH_SIMD");
  if (env == nullptr || *env == '\0') return cpu_isa();
  const std::string_view name(env);
  for (const Isa isa : {Isa::kScalar, Isa::kSse41, Isa::kAvx2}) {
    if (name != isa_name(isa)) continue;
    if (!isa_supported(isa))
      throw Error(ErrorKind::kUsage, "WARPSEARCH_SIMD=" + std::string(name) + ": not supported on this " +
                                         (cpu_isa() == Isa::kScalar ? "build or CPU" : "CPU") +
                                         " (best: " + std::string(isa_name(cpu_isa())) + ")");
    return isa;
  }
  throw Error(ErrorKind::kUsage,
              "WARPSEARCH_SIMD=" + std::string(name) + ": expected one of scalar, sse41, avx2");
}

Workspace::~Workspace() {
  if (data_ != nullptr) ::operator delete (data_, std::align_val_t{kAlign});
}

Workspace::Workspace(Workspace&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

Workspace& Workspace::operator=(Workspace&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::operator delete (data_, std::align_val_t{kAlign});
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

std::byte* Workspace::buffer(std::size_t bytes) {
  if (bytes > capacity_) {
    // Grow geometrically so a stream of slowly growing pairs reallocates O(log) times.
    std::size_t grown = capacity_ + capacity_ / 2;
    if (grown < bytes) grown = bytes;
    grown = (grown + kAlign - 1) / kAlign * kAlign;
    std::byte* fresh = static_cast<std::byte*>(::operator new (grown, std::align_val_t{kAlign}));
    if (data_ != nullptr) ::operator delete (data_, std::align_val_t{kAlign});
    data_ = fresh;
    capacity_ = grown;
  }
  return data_;
}

EndPoint pass(const PassModel& model, std::span<const std::uint8_t> q, std::span<const std::uint8_t> t,
              Workspace& workspace, Isa isa, std::int32_t known_score) {
  if (q.empty() || t.empty()) throw Error(ErrorKind::kInput, "pairwise pass: empty sequence");
  if (known_score < 0 || (known_score > 0 && model.mode != Mode::kLocal))
    throw Error(ErrorKind::kUsage, "pairwise pass: a known score must be positive and in local mode");
  if (!fits_int32(model, static_cast<std::int64_t>(q.size()), static_cast<std::int64_t>(t.size())))
    throw Error(ErrorKind::kInput, "pairwise pass: a " + std::to_string(q.size()) + " x " +
                                       std::to_string(t.size()) + " pair can exceed 32-bit scores");
  if (model.open < 0 || model.extend < 0 || model.open + model.extend < 1)
    throw Error(ErrorKind::kUsage, "pairwise pass: gap costs need open, extend >= 0 and open + extend >= 1");
  if (!isa_supported(isa))
    throw Error(ErrorKind::kUsage, "pairwise pass: " + std::string(isa_name(isa)) + " is not supported here");
#if defined(__x86_64__)
  const bool wide =
      !fits_int16(model, static_cast<std::int64_t>(q.size()), static_cast<std::int64_t>(t.size()));
  switch (isa) {
    case Isa::kAvx2:
      return striped_avx2(model, q.data(), q.size(), t.data(), t.size(), workspace, wide, known_score);
    case Isa::kSse41:
      return striped_sse41(model, q.data(), q.size(), t.data(), t.size(), workspace, wide, known_score);
    case Isa::kScalar: break;
  }
#endif
  return scalar_pass(model, q, t, workspace, known_score);
}

}  // namespace warpsearch::sw::simd
