// Shared vocabulary of the HMMER-compatible family (src/hmm): index enums for transitions, special
// states, E-value parameters and cutoffs, digital-sequence conventions and the aligned storage every
// striped profile uses. Names follow HMMER 3.3.2 (hmmer.h, impl_sse.h) so that a reader of HMMER's
// sources finds the same concepts here; the tier is in the type: Hmm (probabilities) -> Profile
// (generic log-odds, reference DP) -> OProfile (striped, quantized, fast filters).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace warpsearch::hmm {

/// log(2) as HMMER uses it (eslCONST_LOG2) for nats -> bits.
inline constexpr double kLog2 = 0.69314718055994529;

/// A digital sequence in Easel's layout: dsq[0] and dsq[L+1] are the sentinel kDsqSentinel,
/// residues are dsq[1..L] with Easel digital codes of the model's alphabet (see abc.hpp).
using Dsq = std::vector<uint8_t>;
inline constexpr uint8_t kDsqSentinel = 255;

/// Core model transitions, Hmm::t[k][x] (p7H_MM ... p7H_DD).
enum HmmTransition : int { kHMM = 0, kHMI = 1, kHMD = 2, kHIM = 3, kHII = 4, kHDM = 5, kHDD = 6 };
inline constexpr int kHmmNTransitions = 7;

/// Profile transition score order, Profile::tsc[k * 8 + x] (p7P_MM ... p7P_II).
enum ProfileTransition : int {
  kPMM = 0,
  kPIM = 1,
  kPDM = 2,
  kPBM = 3,
  kPMD = 4,
  kPDD = 5,
  kPMI = 6,
  kPII = 7
};
inline constexpr int kProfileNTransitions = 8;

/// Special states of the length model (p7P_E, N, J, C) and their two transitions (LOOP, MOVE).
enum XState : int { kXE = 0, kXN = 1, kXJ = 2, kXC = 3 };
enum XTransition : int { kLoop = 0, kMove = 1 };
inline constexpr int kNXStates = 4;
inline constexpr int kNXTrans = 2;

/// E-value parameters (p7_MMU ... p7_FLAMBDA) as read from a model's STATS lines.
enum EvParam : int { kMMu = 0, kMLambda = 1, kVMu = 2, kVLambda = 3, kFTau = 4, kFLambda = 5 };
inline constexpr int kNEvParams = 6;

/// Pfam score cutoffs (p7_GA1 ... p7_NC2); [0] per sequence, [1] per domain, in bits.
enum Cutoff : int { kGA1 = 0, kGA2 = 1, kTC1 = 2, kTC2 = 3, kNC1 = 4, kNC2 = 5 };
inline constexpr int kNCutoffs = 6;

/// Sentinel for "unset" E-value parameters and cutoffs (p7_EVPARAM_UNSET, p7_CUTOFF_UNSET).
inline constexpr float kUnset = -99999.0f;

/// Largest alphabet size with degeneracies (Easel's amino Kp = 29).
inline constexpr int kMaxAbet = 20;
inline constexpr int kMaxKp = 29;

/// Allocator giving 64-byte aligned storage, so striped vectors can be loaded with aligned SIMD loads.
template <typename T>
struct AlignedAllocator {
  using value_type = T;
  static constexpr std::size_t kAlign = 64;
  AlignedAllocator() noexcept = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kAlign}));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete (p, std::align_val_t{kAlign}); }
  template <typename U>
  bool operator==(const AlignedAllocator<U>&) const noexcept {
    return true;
  }
};

template <typename T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace warpsearch::hmm
