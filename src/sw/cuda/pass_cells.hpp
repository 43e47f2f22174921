// pass_cells.hpp: the per-thread arithmetic of the CUDA pass (model.hpp), shared by the GPU kernels
// (pass_kernel.cuh) and by the host emulator the CPU tests run, so both execute the same code.
//
// Contents
//   prmt()                  PTX byte permute with sign replication (exact host emulation)
//   Lane16x2, Lane32        lane traits: two pairs in the 16-bit halves of a 32-bit register (DPX
//                           s16x2 ops), or one pair in 32 bits; host fallbacks emulate them exactly
//   HalfInfo, SlotInfo,     device-visible launch records (built by gpu_plan.cpp)
//   WarpInfo, PassParams
//   prep_column()           letter offset and first-tile border of one target column
//   build_profile()         the per-thread query profile of one row tile
//   Column                  one thread's R rows, advanced one target column at a time
//   LocalTracker,           end-cell tracking (local: first column-major maximum; global/semiglobal:
//   EdgeTracker             row m-1) and the Candidate order used to reduce across a group
//
// Thread-to-cell mapping (the kernel's, mirrored by the emulator): a *slot* is one 16x2 pair of jobs
// (or one job in 32-bit lanes) handled by a group of G consecutive lanes. In row tile k, lane t owns the
// R rows k*G*R + t*R + r (r < R) of the slot's row space; at skewed step s it computes column j = s - t.
// Row space of half h: rows 0 .. o_h-1 are *virtual* rows (non-local modes only, o_h = (R - m % R) % R,
// so that query row m-1 is the last row of a thread), then the m query rows, then padding rows.
//
// Boundary invariants
//   * Top border (tile 0): row "-o-1" holds H = B(j + o), F(first row) = H - O - X, where
//     B(k) = -(O + (k+1) X) in global mode and 0 otherwise. Virtual row -k has left boundary B(k-2)
//     (B(-1) = 0) and scores 0 against every letter. Induction over the virtual rows (O, X >= 0) shows
//     that row -1 then holds exactly H(-1, j) of model.hpp and F(-1, j) <= H(-1, j) - O, i.e. it acts as
//     F(-1, j) = -infinity; so every real cell equals the reference.
//   * Padding: rows >= m and columns >= n (the shorter half of a slot, and the tail up to the warp's
//     column count) score kPadScore = -1 in every row/letter (a target letter class with all scores
//     <= -1 serves as the pad letter). Padded cells lie below/right of all real cells, so they never
//     influence real cells. In local mode every padded H is <= max(0, M - 1) where M is the best real
//     H (diagonal steps add <= -1, gaps cost O + X >= 1), so the first maximum over real and padded
//     cells is always a real cell (or none when M == 0). In global/semiglobal mode padded values may
//     even wrap around in 16-bit lanes; they are never tracked (only row m-1, columns < n).
//   * Range: 16-bit lanes are used only when fits_int16(model, m + R - 1, n) (virtual rows included),
//     so no real or virtual cell, nor the intermediate H - O - X, E - X, F - X, can leave int16.
//   * Stored form (stored_bias): in local mode 16x2 lanes hold every H, E and F as value + B with
//     B = O + X, so that H >= B in both halves (local H >= 0). T = H - O - X is then one plain 32-bit
//     subtraction of (O + X) per half, with no borrow across the halves, instead of a DPX add (the
//     DPX instructions saturate the ALU pipe; ptxas issues the subtraction on the FMA pipe; known-score
//     warps keep the DPX add, see Column::step). Stored
//     values lie in [-X, value_bound] (E - X >= T - X >= -X), inside int16 by fits_int16. Borders, the
//     left boundary and the trackers' floors are written in stored form; candidates are true values.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "sw/model.hpp"
#include "warpsearch/alphabet.hpp"

#if defined(__CUDACC__)
#define WS_HD __host__ __device__
#define WS_FI __forceinline__
#else
#define WS_HD
#define WS_FI inline
#endif
#if defined(__CUDA_ARCH__)
#define WS_UNROLL _Pragma("unroll")
#else
#define WS_UNROLL
#endif

namespace warpsearch::sw::gpu {

inline constexpr int kPadScore = -1;   // padded rows and the pad letter (see the invariants above)
inline constexpr int kLaneBytes = 32;  // lanes per warp: stride of the interleaved profile layout

// PTX prmt.b32 in its default mode: byte n of the result is byte (sel_n & 7) of {b, a}, or that byte's
// sign replicated when sel_n & 8. (CUDA's __byte_perm documents only the low three selector bits.)
WS_HD WS_FI std::uint32_t prmt(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
#if defined(__CUDA_ARCH__)
  std::uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
#else
  const std::uint64_t src = (static_cast<std::uint64_t>(b) << 32) | a;
  std::uint32_t d = 0;
  for (int n = 0; n < 4; ++n) {
    const std::uint32_t nib = (sel >> (4 * n)) & 0xFu;
    std::uint32_t byte = static_cast<std::uint32_t>(src >> (8 * (nib & 7u))) & 0xFFu;
    if ((nib & 8u) != 0) byte = (byte & 0x80u) != 0 ? 0xFFu : 0u;
    d |= byte << (8 * n);
  }
  return d;
#endif
}

// ---------------------------------------------------------------------------------------------
// Lane traits. V is always a 32-bit register; Lane16x2 holds half 0 (pair a) in bits 0..15 and half 1
// (pair b) in bits 16..31, both signed; Lane32 holds one signed 32-bit value. All sums wrap (they are
// exact wherever a value is used, by the range invariant).
// ---------------------------------------------------------------------------------------------
struct Lane16x2 {
  static constexpr int kPairs = 2;
  using V = std::uint32_t;
  static constexpr V kLowest = 0x80008000u;  // -32768 in both halves

  // Half h of v, sign-extended. On the device through PTX so that the optimizer never sees 16-bit
  // pieces of a packed register (it would then keep the halves apart and re-merge them with PRMTs).
  WS_HD WS_FI static int get(V v, int h) {
#if defined(__CUDA_ARCH__)
    if (h == 0) return static_cast<int>(prmt(v, 0u, 0x9910u));
    int d;
    asm("shr.s32 %0, %1, 16;" : "=r"(d) : "r"(static_cast<int>(v)));
    return d;
#else
    return static_cast<int>(static_cast<std::int16_t>(static_cast<std::uint16_t>(v >> (16 * h))));
#endif
  }
  WS_HD WS_FI static V pack(std::int64_t lo, std::int64_t hi) {
    return (static_cast<std::uint32_t>(lo) & 0xFFFFu) | (static_cast<std::uint32_t>(hi) << 16);
  }
  WS_HD WS_FI static V splat(std::int64_t x) { return pack(x, x); }
  WS_HD WS_FI static V mask(bool h0, bool h1) { return (h0 ? 0x0000FFFFu : 0u) | (h1 ? 0xFFFF0000u : 0u); }

#if !defined(__CUDA_ARCH__)
  static V map2(V a, V b, V c, int (*f)(int, int, int)) {
    return pack(static_cast<std::int16_t>(f(get(a, 0), get(b, 0), get(c, 0))),
                static_cast<std::int16_t>(f(get(a, 1), get(b, 1), get(c, 1))));
  }
  static int wrap(int x) { return static_cast<std::int16_t>(static_cast<std::uint16_t>(x)); }
#endif

  // The device forms are PTX (add.s16x2 / max.s16x2[.relu], which ptxas fuses into the sm_90 DPX
  // instructions VIADDMNMX / VIMNMX / VIMNMX3) rather than the __viaddmax_s16x2 family: the intrinsics
  // expose <2 x i16> vectors to the optimizer, which then shuffles halves between registers with extra
  // PRMTs (about 30 per step of 8 rows, measured in the SASS).
  // max(a + b, c) per half
  WS_HD WS_FI static V addmax(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    V d;
    asm("{\n\t.reg .b32 s;\n\tadd.s16x2 s, %1, %2;\n\tmax.s16x2 %0, s, %3;\n\t}"
        : "=r"(d)
        : "r"(a), "r"(b), "r"(c));
    return d;
#else
    return map2(a, b, c, [](int x, int y, int z) { return wrap(x + y) > z ? wrap(x + y) : z; });
#endif
  }
  // max(a + b, c, 0) per half
  WS_HD WS_FI static V addmax_relu(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    V d;
    asm("{\n\t.reg .b32 s;\n\tadd.s16x2 s, %1, %2;\n\tmax.s16x2.relu %0, s, %3;\n\t}"
        : "=r"(d)
        : "r"(a), "r"(b), "r"(c));
    return d;
#else
    return map2(a, b, c, [](int x, int y, int z) {
      const int s = wrap(x + y) > z ? wrap(x + y) : z;
      return s > 0 ? s : 0;
    });
#endif
  }
  // a + b per half (as max(a + b, -32768): one DPX instruction, exact because a + b never wraps here)
  WS_HD WS_FI static V add(V a, V b) { return addmax(a, b, kLowest); }
  WS_HD WS_FI static V max(V a, V b) {
#if defined(__CUDA_ARCH__)
    V d;
    asm("max.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
#else
    return map2(a, b, kLowest, [](int x, int y, int) { return x > y ? x : y; });
#endif
  }
  WS_HD WS_FI static V max3(V a, V b, V c) { return max(max(a, b), c); }
  // Substitution scores of row k (0..3) of two profile words: byte k of wa into half 0 and byte k of wb
  // into half 1, each sign-extended from 8 to 16 bits.
  WS_HD WS_FI static V score(std::uint32_t wa, std::uint32_t wb, int k) {
    const auto uk = static_cast<std::uint32_t>(k);
    return prmt(wa, wb, uk | ((uk | 8u) << 4) | ((uk + 4u) << 8) | ((uk + 12u) << 12));
  }
};

struct Lane32 {
  static constexpr int kPairs = 1;
  using V = std::uint32_t;
  static constexpr V kLowest = 0x80000000u;

  WS_HD WS_FI static int get(V v, int) { return static_cast<int>(v); }
  WS_HD WS_FI static V pack(std::int64_t lo, std::int64_t) { return static_cast<std::uint32_t>(lo); }
  WS_HD WS_FI static V splat(std::int64_t x) { return static_cast<std::uint32_t>(x); }
  WS_HD WS_FI static V mask(bool h0, bool) { return h0 ? 0xFFFFFFFFu : 0u; }

  WS_HD WS_FI static V addmax(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    return static_cast<V>(__viaddmax_s32(static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)));
#else
    const int s = static_cast<int>(a + b);
    return static_cast<V>(s > static_cast<int>(c) ? s : static_cast<int>(c));
#endif
  }
  WS_HD WS_FI static V addmax_relu(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    return static_cast<V>(__viaddmax_s32_relu(static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)));
#else
    const int s = static_cast<int>(addmax(a, b, c));
    return static_cast<V>(s > 0 ? s : 0);
#endif
  }
  WS_HD WS_FI static V add(V a, V b) { return a + b; }
  WS_HD WS_FI static V max(V a, V b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }
  WS_HD WS_FI static V max3(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    return static_cast<V>(__vimax3_s32(static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)));
#else
    return max(max(a, b), c);
#endif
  }
  // Byte k of wa, sign-extended to 32 bits (wb is unused: one pair).
  WS_HD WS_FI static V score(std::uint32_t wa, std::uint32_t, int k) {
    const auto uk = static_cast<std::uint32_t>(k);
    const std::uint32_t s = uk | 8u;
    return prmt(wa, 0u, uk | (s << 4) | (s << 8) | (s << 12));
  }
};

// Index of the lowest set bit of x (x != 0).
WS_HD WS_FI int lowest_bit(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(x)) - 1;
#else
  return std::countr_zero(x);
#endif
}

WS_HD WS_FI std::uint32_t select_bits(std::uint32_t mask, std::uint32_t a, std::uint32_t b) {
  return (a & mask) | (b & ~mask);
}

// ---------------------------------------------------------------------------------------------
// Launch records (plain data, copied to the device as they are)
// ---------------------------------------------------------------------------------------------

// One job in a slot half. An empty half has job == -1 and m == n == 0 (all padding).
struct HalfInfo {
  std::uint64_t query = 0;        // offset of the query's first residue in the launch's residue buffer
  std::uint64_t target = 0;       // offset of the target's first residue
  std::int32_t m = 0;             // query length (rows)
  std::int32_t n = 0;             // target length (columns)
  std::int32_t job = -1;          // launch-local result index
  std::int32_t virtual_rows = 0;  // o: rows above query row 0 (non-local modes)
  std::int32_t end_tile = -1;     // non-local: row tile and thread owning query row m-1
  std::int32_t end_thread = -1;
  std::uint32_t reversed = 0;  // 1: row i reads query[m-1-i], column j reads target[n-1-j]
  std::int32_t score = 0;      // local mode: the known score S (PassJob::score), 0 if unknown
};
static_assert(sizeof(HalfInfo) == 48);

struct SlotInfo {
  HalfInfo half[2];  // Lane32 slots use half[0] only
};

// One warp: 32 / G slots, all swept over the same number of columns and row tiles (warp-uniform
// control flow). Slot g of the warp is slots[first_slot + g]; its letters and border occupy columns
// [column + g * cols, column + (g + 1) * cols) of the launch's column arrays.
struct WarpInfo {
  std::uint64_t column = 0;  // multiple of 4
  std::uint32_t cols = 0;    // columns swept per tile: >= max n + G - 1, multiple of 4
  std::uint32_t tiles = 0;   // row tiles
  std::uint32_t first_slot = 0;
  std::uint32_t flags = 0;  // kWarpKnownScores: every job of the warp has a known score (or is empty)
};
static_assert(sizeof(WarpInfo) == 24);
inline constexpr std::uint32_t kWarpKnownScores = 1;

// Everything a prep or pass kernel reads (passed by value). Pointers are device pointers on the GPU,
// host pointers in the emulator.
struct PassParams {
  const std::uint8_t* residues = nullptr;
  const SlotInfo* slots = nullptr;
  const WarpInfo* warps = nullptr;
  std::uint32_t* letters = nullptr;   // per column: profile byte offset of half 0 | half 1 << 16
  std::uint32_t* border = nullptr;    // per column two words: H of the row above the tile, F of its row 0
  EndPoint* results = nullptr;        // per launch-local job
  const std::int8_t* ctab = nullptr;  // kMaxCodes x letters: score of query code q against letter class c
  std::int32_t open = 0;
  std::int32_t extend = 0;
  std::int32_t mode = 0;                    // Mode
  std::int32_t letters_count = 0;           // K: letter classes in the profile
  std::int32_t pad_class = 0;               // class of padded target columns
  std::uint8_t code_class[kMaxCodes] = {};  // target code -> letter class
};

// B(k) of the top-border invariant.
WS_HD WS_FI std::int64_t top_border(const PassParams& p, std::int64_t k) {
  if (k < 0 || p.mode != static_cast<std::int32_t>(Mode::kGlobal)) return 0;
  return -(static_cast<std::int64_t>(p.open) + (k + 1) * static_cast<std::int64_t>(p.extend));
}

// H(row, -1) for a row of the row space relative to query row 0 (virtual rows are negative).
WS_HD WS_FI std::int64_t left_boundary(const PassParams& p, std::int64_t row) {
  if (row < 0) return top_border(p, -row - 2);
  if (p.mode == static_cast<std::int32_t>(Mode::kLocal)) return 0;
  return -(static_cast<std::int64_t>(p.open) + (row + 1) * static_cast<std::int64_t>(p.extend));
}

// B of the stored form (file comment): O + X for 16x2 lanes in local mode, else 0.
template <class L>
WS_HD WS_FI std::int64_t stored_bias(const PassParams& p) {
  return L::kPairs == 2 && p.mode == static_cast<std::int32_t>(Mode::kLocal)
             ? static_cast<std::int64_t>(p.open) + p.extend
             : 0;
}

// Byte offset of letter class c of half h inside a warp's profile region (layout [h][c][lane][R]).
WS_HD WS_FI std::uint32_t profile_offset(int h, int c, int letters, int rows) {
  return static_cast<std::uint32_t>((h * letters + c) * kLaneBytes * rows);
}

// Letter word and first-tile border of column j of a slot (j < the warp's cols).
template <class L>
WS_HD WS_FI void prep_column(const PassParams& p, const SlotInfo& slot, const std::uint8_t* code_class,
                             int rows, std::uint32_t j, std::uint32_t& letter, std::uint32_t& border_h,
                             std::uint32_t& border_f) {
  std::uint32_t off[2] = {0, 0};
  std::int64_t top[2] = {0, 0};
  const std::int64_t oe = static_cast<std::int64_t>(p.open) + p.extend;
  const std::int64_t bias = stored_bias<L>(p);
  for (int h = 0; h < L::kPairs; ++h) {
    const HalfInfo& half = slot.half[h];
    int cls = p.pad_class;
    if (j < static_cast<std::uint32_t>(half.n)) {
      const std::uint32_t idx = half.reversed != 0 ? static_cast<std::uint32_t>(half.n) - 1 - j : j;
      cls = code_class[p.residues[half.target + idx] & (kMaxCodes - 1)];
    }
    off[h] = profile_offset(h, cls, p.letters_count, rows);
    top[h] = top_border(p, static_cast<std::int64_t>(j) + half.virtual_rows) + bias;
  }
  letter = off[0] | (off[1] << 16);
  border_h = L::pack(top[0], top[1]);
  border_f = L::pack(top[0] - oe, top[1] - oe);
}

// Profile words: R bytes per (half, letter class), moved with one vector access on the device.
template <int R>
WS_HD WS_FI void load_words(const std::uint8_t* src, std::uint32_t (&w)[R / 4]) {
#if defined(__CUDA_ARCH__)
  if constexpr (R == 4) {
    w[0] = *reinterpret_cast<const std::uint32_t*>(src);
  } else if constexpr (R == 8) {
    const uint2 v = *reinterpret_cast<const uint2*>(src);
    w[0] = v.x;
    w[1] = v.y;
  } else {
    const uint4 v = *reinterpret_cast<const uint4*>(src);
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
  }
#else
  std::memcpy(w, src, R);
#endif
}

template <int R>
WS_HD WS_FI void store_words(std::uint8_t* dst, const std::uint32_t (&w)[R / 4]) {
#if defined(__CUDA_ARCH__)
  if constexpr (R == 4) {
    *reinterpret_cast<std::uint32_t*>(dst) = w[0];
  } else if constexpr (R == 8) {
    *reinterpret_cast<uint2*>(dst) = make_uint2(w[0], w[1]);
  } else {
    *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
  }
#else
  std::memcpy(dst, w, R);
#endif
}

// Writes the profile of one thread for one row tile: for half h, letter class c and row r < R, the
// score of the thread's row r against c (virtual rows 0, padding rows kPadScore), at
// lane_profile + profile_offset(h, c, K, R) + r. `first_row` is the row-space index of row 0 of the
// thread (tile * G * R + t * R); `ctab` is the kMaxCodes x K class table.
template <class L, int R>
WS_HD WS_FI void build_profile(const PassParams& p, const SlotInfo& slot, const std::int8_t* ctab,
                               int first_row, std::uint8_t* lane_profile) {
  const int letters = p.letters_count;
  for (int h = 0; h < L::kPairs; ++h) {
    const HalfInfo& half = slot.half[h];
    int base[R];  // ctab row offset, or -1: virtual row (score 0), -2: padding row
    WS_UNROLL
    for (int r = 0; r < R; ++r) {
      const int row = first_row + r - half.virtual_rows;
      if (row < 0) {
        base[r] = -1;
      } else if (row >= half.m) {
        base[r] = -2;
      } else {
        const std::uint64_t idx = half.reversed != 0 ? static_cast<std::uint64_t>(half.m - 1 - row)
                                                     : static_cast<std::uint64_t>(row);
        base[r] = (p.residues[half.query + idx] & (kMaxCodes - 1)) * letters;
      }
    }
    for (int c = 0; c < letters; ++c) {
      std::uint32_t w[R / 4];
      WS_UNROLL
      for (int q = 0; q < R / 4; ++q) {
        std::uint32_t word = 0;
        WS_UNROLL
        for (int b = 0; b < 4; ++b) {
          const int br = base[4 * q + b];
          const int s = br >= 0 ? ctab[br + c] : (br == -1 ? 0 : kPadScore);
          word |= (static_cast<std::uint32_t>(s) & 0xFFu) << (8 * b);
        }
        w[q] = word;
      }
      store_words<R>(lane_profile + profile_offset(h, c, letters, R), w);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One thread's R rows. Invariant before column j: H[r] = H(row_r, j-1), E[r] = E(row_r, j),
// diag = H(row_0 - 1, j - 1). step() consumes hin = H(row_0 - 1, j) and F = F(row_0, j) (from the lane
// above, or the border) and leaves F = F(row_0 + R, j) for the lane below.
// ---------------------------------------------------------------------------------------------
template <class L, int R, bool kLocal>
struct Column {
  using V = typename L::V;
  static_assert(R == 4 || R == 8 || R == 16, "rows per thread: one 4-, 8- or 16-byte profile access");
  // Values in stored form with B = O + X (file comment): exactly when stored_bias<L> is nonzero.
  static constexpr bool kBiased = kLocal && L::kPairs == 2;

  V H[R];
  V E[R];
  V diag;

  // The `open` operand of step(): O + X in both halves (biased), else -(O + X) per lane; `neg_open`
  // is always -(O + X) per lane.
  WS_HD WS_FI static V open_operand(const PassParams& p) {
    const std::int64_t oe = static_cast<std::int64_t>(p.open) + p.extend;
    return kBiased ? L::splat(oe) : L::splat(-oe);
  }
  WS_HD WS_FI static V neg_open_operand(const PassParams& p) {
    return L::splat(-(static_cast<std::int64_t>(p.open) + p.extend));
  }

  // Local mode's lowest H (0) and F (-(O + X)) in the form held, from open_operand's value.
  WS_HD WS_FI static V low_h(V open) { return kBiased ? open : 0; }
  WS_HD WS_FI static V low_f(V open) { return kBiased ? 0 : open; }

  WS_HD WS_FI void init(const PassParams& p, const SlotInfo& slot, int first_row) {
    const std::int64_t oe = static_cast<std::int64_t>(p.open) + p.extend;
    const std::int64_t bias = stored_bias<L>(p);
    WS_UNROLL
    for (int r = 0; r < R; ++r) {
      std::int64_t left[2] = {0, 0};
      for (int h = 0; h < L::kPairs; ++h)
        left[h] = left_boundary(p, first_row + r - slot.half[h].virtual_rows) + bias;
      H[r] = L::pack(left[0], left[1]);
      E[r] = L::pack(left[0] - oe, left[1] - oe);  // E(i, 0) = H(i, -1) - O - X
    }
    std::int64_t above[2] = {0, 0};
    for (int h = 0; h < L::kPairs; ++h)
      above[h] = left_boundary(p, first_row - 1 - slot.half[h].virtual_rows) + bias;
    diag = L::pack(above[0], above[1]);
  }

  // Per row: A = max(diag + s, E [, 0]) is off the vertical chain; then H = max(A, F),
  // T = H - O - X, F' = max(F - X, T), E' = max(E - X, T): three dependent ops per row. Biased, the
  // local clamp at 0 is the 3-way maximum with B (= `open`), and T is a 32-bit subtraction (kSub) or
  // the DPX add of neg_open = -(O + X) per half (the same value). The kernels use the subtraction
  // only outside known-score warps: with it there too, the whole protein Aligner measured 3-4 % slower
  // on an H200 (those short sweeps wait on this chain's latency more than on the ALU pipe).
  template <bool kSub = kBiased>
  WS_HD WS_FI void step(const std::uint32_t (&wa)[R / 4], const std::uint32_t (&wb)[R / 4], V hin, V& F,
                        V neg_x, V open, V neg_open) {
    static_assert(!kSub || kBiased, "the 32-bit subtraction needs the stored form");
    V hd = diag;
    diag = hin;
    WS_UNROLL
    for (int r = 0; r < R; ++r) {
      const V s = L::score(wa[r / 4], wb[r / 4], r % 4);
      V h, t;
      if constexpr (kBiased) {
        h = L::max3(L::addmax(hd, s, E[r]), F, open);
        t = kSub ? h - open : L::add(h, neg_open);
      } else {
        const V a = kLocal ? L::addmax_relu(hd, s, E[r]) : L::addmax(hd, s, E[r]);
        h = L::max(a, F);
        t = L::add(h, neg_open);
      }
      F = L::addmax(F, neg_x, t);
      E[r] = L::addmax(E[r], neg_x, t);
      hd = H[r];
      H[r] = h;
    }
  }
};

// An end-cell candidate of one half: value, then column, then row (column-major first maximum).
struct Candidate {
  int v;
  int j;
  int i;
};
WS_HD WS_FI bool better(const Candidate& a, const Candidate& b) {
  if (a.v != b.v) return a.v > b.v;
  if (a.j != b.j) return a.j < b.j;
  return a.i < b.i;
}

// Local mode. Within a tile a thread sees its cells in column-major order, so "strict improvement of the
// best by the column's values, smallest row holding the new best" yields the thread's first maximum of
// the tile; tiles are merged with `better` because each restarts at column 0.
// Every column the thread sweeps may be included: lanes whose column is still negative hold their row
// tile's left boundary (0), and columns at or past the slot's targets (pad letter, borders 0 or written
// from padded cells) hold values <= max(0, M - 1) (padding invariant), so neither can raise the best
// to a value that is not reached first at a real cell.
template <class L, int R>
struct LocalTracker {
  using V = typename L::V;
  static_assert(R <= 16, "improve(): one bit per row in each 16-bit half");
  int bias = 0;  // B of the stored form of H (stored_bias); best is stored, candidates are true values
  V best = 0;    // per half: best H of the current tile, stored (>= bias)
  int bj[2] = {-1, -1};
  int bi[2] = {-1, -1};
  Candidate acc[2] = {{0, -1, -1}, {0, -1, -1}};

  // The group's best values so far (per half, packed): the thread's candidate for half h.
  WS_HD WS_FI V accumulated() const { return L::pack(acc[0].v, acc[1].v); }
  // Starts a tile. `floor` holds per half the best value some thread of the group already found (0 in
  // the first tile): only cells reaching it can still be the group's end cell, so tracking starts at
  // floor - 1 (cells equal to it are recorded, for the tie rule), which keeps later tiles from
  // re-climbing from 0 through many improvements.
  WS_HD WS_FI void begin_tile(V floor) {
    best = L::pack((L::get(floor, 0) > 0 ? L::get(floor, 0) - 1 : 0) + bias,
                   (L::get(floor, 1) > 0 ? L::get(floor, 1) - 1 : 0) + bias);
    bj[0] = bj[1] = bi[0] = bi[1] = -1;
  }
  // max(best, H[0..R)) per half: R/2 three-way maxima. The column improves the best iff this != best.
  WS_HD WS_FI V raised(const V (&H)[R]) const {
    V m = best;
    int r = 0;
    WS_UNROLL
    for (; r + 1 < R; r += 2) m = L::max3(m, H[r], H[r + 1]);
    if (r < R) m = L::max(m, H[r]);
    return m;
  }
  // Records column j for the halves that `next` (= raised(H)) improves. The rows holding the new best
  // are found for both halves at once: max(H[r] + 1 - next, 0) is 1 in a half where H[r] equals next and
  // 0 where it is lower (next >= H[r]; no wrap, by the range invariant: both lie in [B, value_bound]),
  // and these flags are shifted into a bit mask, bit r of half h at bit 16 h + r (R <= 16). Per row one
  // DPX instruction and one integer multiply-add, instead of extracting, comparing and selecting each
  // half of each row: in the DNA benchmark set 31 % of the forward steps have an improving lane (44 %
  // without the kernel's share_best()).
  WS_HD WS_FI void improve(const V (&H)[R], V next, int j, int first_row) {
    const V one_minus_next = L::add(~next, L::splat(2));  // per half: ~x = -x - 1
    std::uint32_t rows = 0;
    WS_UNROLL
    for (int r = R - 1; r >= 0; --r) rows = rows * 2u + L::addmax_relu(H[r], one_minus_next, 0);
    WS_UNROLL
    for (int h = 0; h < L::kPairs; ++h) {
      if (L::get(next, h) > L::get(best, h)) {
        bj[h] = j;
        bi[h] = first_row + lowest_bit(h == 0 ? rows & 0xFFFFu : rows >> 16);
      }
    }
    best = next;
  }
  WS_HD WS_FI void end_tile() {
    WS_UNROLL
    for (int h = 0; h < L::kPairs; ++h) {
      const Candidate c{L::get(best, h) - bias, bj[h], bi[h]};
      if (c.j >= 0 && c.v > 0 && better(c, acc[h])) acc[h] = c;
    }
  }
  WS_HD WS_FI Candidate result(int h, const HalfInfo&) const { return acc[h]; }
};

// Global / semiglobal mode: only the thread whose last row is query row m-1 (in its end tile) captures
// H(m-1, j): at j = n-1 (global) or every j < n keeping the first strict maximum (semiglobal).
template <class L>
struct EdgeTracker {
  using V = typename L::V;
  V best = L::kLowest;
  int bj[2] = {-1, -1};
  V capture = 0;  // halves this thread captures in the current tile
  int n[2] = {0, 0};

  WS_HD WS_FI void begin_tile(const SlotInfo& slot, int tile, int t) {
    bool cap[2] = {false, false};
    for (int h = 0; h < L::kPairs; ++h) {
      const HalfInfo& half = slot.half[h];
      cap[h] = half.job >= 0 && half.end_tile == tile && half.end_thread == t;
      n[h] = half.n;
    }
    capture = L::mask(cap[0], cap[1]);
  }
  WS_HD WS_FI void step(V h_last, int j, bool global) {
    bool ok[2] = {false, false};
    WS_UNROLL
    for (int h = 0; h < L::kPairs; ++h)
      ok[h] = global ? j == n[h] - 1 : static_cast<unsigned>(j) < static_cast<unsigned>(n[h]);
    const V v = select_bits(capture & L::mask(ok[0], ok[1]), h_last, L::kLowest);
    WS_UNROLL
    for (int h = 0; h < L::kPairs; ++h)
      if (L::get(v, h) > L::get(best, h)) bj[h] = j;
    best = L::max(best, v);
  }
  WS_HD WS_FI void end_tile() {}
  WS_HD WS_FI Candidate result(int h, const HalfInfo& half) const {
    return {L::get(best, h), bj[h], half.m - 1};
  }
};

// The EndPoint of a half from its reduced candidate.
WS_HD WS_FI EndPoint make_end(bool local, const Candidate& c) {
  EndPoint e;
  if (local && c.v <= 0) return e;
  e.score = c.v;
  e.qend = c.i;
  e.tend = c.j;
  return e;
}

}  // namespace warpsearch::sw::gpu
