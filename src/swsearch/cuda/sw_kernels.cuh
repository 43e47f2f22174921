// sw_kernels.cuh: the GPU score kernels of swsearch (CUDASW++4.0 class): exact local affine-gap
// Smith-Waterman scores of one query (score_kernel) or two (score_kernel_qs, QUERY-STATIONARY KERNEL below)
// against many database sequences, 16-bit cells with Hopper DPX.
//
// WORK. A group of G lanes (G = 4..32, 32 / G groups per warp) scores a PAIR of database sequences at once:
// every 32-bit register holds the same cell of both (low half: sequence a, the longer; high half: b). The
// pairs come from a list sorted by length (longest first), so the groups of a warp have similar lengths;
// groups take pairs grid-stride (group slot g: pairs g, g + slots, ...).
//
// CELL LAYOUT. Database positions are the columns j (the model's target), query positions the rows i. A
// tile is W = G * R consecutive columns; lane l of the group holds columns l*R .. l*R + R - 1 of the tile
// in registers: H(i-1, j) and F(i, j) of its columns, and the byte offsets of both sequences'
// substitution-table entry for each column. The query streams through the lanes as a systolic wavefront: at
// step s lane l computes row i = s - l of its columns, taking from lane l - 1 (one shuffle, computed at step
// s - 1) the H and E of the column just left of its first one at row i. Lane 0 takes them from the tile
// border: the left local boundary (H = 0, E(i, 0) = -(O + X)) for the first tile, else the (H, E) column that
// lane G-1 of the previous tile wrote to the group's border scratch. A tile takes m + G - 1 steps; rows
// outside 0..m-1 (the wavefront's fill and drain) read the pad letter, whose scores (-32000) keep every value
// they produce at H = 0 / F = -(O + X) before the first row and below the real maximum after the last one.
//
// RECURRENCE (model.hpp, local mode; O = open, X = extend, OX = O + X), per cell:
//   H(i,j) = max(H(i-1,j-1) + s(q_i, t_j), E(i,j), F(i,j), 0)
//   E(i,j+1) = max(E(i,j) - X, H(i,j) - OX)        F(i+1,j) = max(F(i,j) - X, H(i,j) - OX)
// and the score is the maximum H. Because H >= 0, every E and F is >= -OX >= -254 after its first update.
// The kernel holds every H, E and F plus OX (the bias), so all stored values are >= 0 and H >= OX: the floor
// 0 becomes max(.., OX), and H - OX, a halfwise subtraction that never borrows, runs as one 32-bit integer
// multiply-add on the FMA pipe (the 16x2 DPX instructions all run on the ALU pipe at half rate, measured
// ~8 cycles of latency). Per register and column: t = max(diag + s, F) (add-max; it does not wait for E),
// H = max(t, E, OX) (max3), H - OX (multiply-add), E and F (add-max each), and every second column the
// running maximum (max3): 4.5 ALU instructions, and the E chain through a lane's columns is max3 ->
// multiply-add -> add-max per column.
//
// SUBSTITUTION TABLE (shared memory), two layouts (TableMode):
//   kPair (default): entry q*Kb*Kb + a + Kb*b = (s(q,a), s(q,b)) (Kb = Kd rounded up to odd, so rows and
//     letters spread over the banks; gpu_plan.hpp pair_stride) for the letter classes (codes with
//     identical matrix rows and columns share a class; class K-1 is the pad letter, scoring -32000 against
//     everything): one load per register and column; the lanes of a warp read different rows, so their
//     loads conflict at random (about 3.5-way).
//   kPrivate: K*K entries (q, a) = s(q, a) zero-extended, replicated once per bank (entry (q, a) of lane L
//     is word (q*K + a)*32 + L), so no load ever conflicts; per register and column two loads and a
//     multiply-add (sb << 16) + sa. The extra issue slots cost more than the conflicts save: on an H100
//     kPair measured 2.48 TCUPS and kPrivate 2.20 (docs/PERFORMANCE.md); WARPSEARCH_SW_GPU_TABLE selects.
//
// OVERFLOW. H grows by at most max_score (<= 127) per step along a diagonal, so a wrapped 16-bit value
// needs a predecessor >= 32767 - 127 > 32000, which the running maximum records. Scores below kSat16 are
// therefore exact; a result >= kSat16 is reported as kSat16 and the host rescores that pair with 32-bit
// arithmetic. (Pad cells: diag + pad >= 0 + -32000 never wraps; their H is at most a real H minus a gap
// cost.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace warpsearch::swsearch::gpu {

inline constexpr int kSat16 = 32000;      // 16-bit results at or above this are rescored wider
inline constexpr int kPadScore = -32000;  // score of the pad letter against anything
#ifndef WS_SW_BLOCK_THREADS
#define WS_SW_BLOCK_THREADS 128  // measurement knob, with WS_SW_MIN_BLOCKS below
#endif
inline constexpr int kBlockThreads = WS_SW_BLOCK_THREADS;  // threads per block of the score kernel
inline constexpr unsigned kFullMask = 0xFFFFFFFFu;

struct KernelParams {
  const std::uint8_t* residues = nullptr;  // the batch's codes, back to back
  const std::uint64_t* offsets = nullptr;  // per sequence id: start in residues (size n + 1)
  const uint2* pairs = nullptr;            // (id a, id b) per pair, a the longer; b == 0xFFFFFFFF: none
  std::uint32_t npairs = 0;
  const std::uint8_t* query = nullptr;   // query letter classes, then >= 72 pad-class entries (4-aligned)
  int m = 0;                             // query length
  const std::uint32_t* table = nullptr;  // pair_table / letter_table (gpu_plan.hpp), copied to shared memory
  const std::uint8_t* code_class = nullptr;  // 32 entries: database code -> database class
  int Kq = 0;                                // query classes, including the pad class Kq - 1
  int Kd = 0;                                // database classes, including the pad class Kd - 1
  std::uint32_t ox2 = 0;                     // O + X in both halves (the value bias, see RECURRENCE)
  std::uint32_t neg_x2 = 0;                  // -X in both halves
  uint2* border = nullptr;         // multi-tile scratch: per group slot, bstride entries (H, E words)
  std::uint32_t bstride = 0;       // >= m
  std::int32_t* scores = nullptr;  // per sequence id (min(score, kSat16))
};

// a * b + c on the integer multiply-add pipe (the DPX instructions keep the ALU pipe busy).
__device__ __forceinline__ std::uint32_t mad_u32(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t d;
  asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// The group's scores of both halves from each lane's biased running maximum mx (every lane of the group
// gets them): the maximum over the G lanes, minus the bias, or kSat16 when saturated (OVERFLOW above).
template <int G>
__device__ __forceinline__ int2 group_scores(std::uint32_t mx, std::uint32_t bias2) {
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1)
    mx = __vimax_s16x2_relu(
        mx, static_cast<std::uint32_t>(__shfl_xor_sync(kFullMask, static_cast<int>(mx), o, G)));
  const int lo = static_cast<int>(static_cast<std::int16_t>(mx & 0xFFFFu));
  const int hi = static_cast<int>(static_cast<std::int16_t>(mx >> 16));
  const int ox = static_cast<int>(bias2 & 0xFFFFu);
  return make_int2(lo >= kSat16 ? kSat16 : lo - ox, hi >= kSat16 ? kSat16 : hi - ox);
}

// The substitution table layout (SUBSTITUTION TABLE above).
enum TableMode : int { kPrivate = 0, kPair = 1 };

// Shared memory of a kernel: the table for Kq query and Kd database classes.
__host__ __device__ constexpr std::size_t table_smem_bytes(int Kq, int Kd, int mode) {
  return mode == kPair ? static_cast<std::size_t>(Kq) * static_cast<std::size_t>((Kd | 1) * (Kd | 1)) * 4u
                       : static_cast<std::size_t>(Kq) * static_cast<std::size_t>(Kd) * 32u * 4u;
}

// One kernel shape: G lanes per group, R columns per lane; kMulti: sequences may span several tiles.
#ifndef WS_SW_MIN_BLOCKS
// Resident blocks per SM the register allocation must allow (measurement knob). 5 blocks of 128 threads cap
// the kernels at 102 registers, 20 warps per SM: 2.73 TCUPS on an H100 against 2.61 with 256-thread blocks
// at 125 registers (16 warps); 3 blocks of 256 (85 registers) spill and fall to 0.94.
#define WS_SW_MIN_BLOCKS 5
#endif
#ifndef WS_SW_ROWS
#define WS_SW_ROWS 1  // query rows per step (1 or 2; measurement knob)
#endif
inline constexpr int kRows = WS_SW_ROWS;
template <int G, int R, bool kMulti, int kMode>
__global__ void __launch_bounds__(kBlockThreads, WS_SW_MIN_BLOCKS) score_kernel(const KernelParams p) {
  static_assert(G >= 4 && G <= 32 && (G & (G - 1)) == 0 && R % 2 == 0 && (kRows == 1 || kRows == 2));
  constexpr int W = G * R;
  extern __shared__ std::uint32_t smem_table[];
  const int K = p.Kd;  // database classes (table columns); the query's classes are the table's rows
  if constexpr (kMode == kPair) {
    const int table_words = p.Kq * (K | 1) * (K | 1);  // pair_stride(Kd) = Kd | 1
    for (int i = threadIdx.x; i < table_words; i += blockDim.x) smem_table[i] = p.table[i];
  } else {
    const int table_words = p.Kq * K * 32;
    for (int i = threadIdx.x; i < table_words; i += blockDim.x) smem_table[i] = p.table[i >> 5];
  }
  __shared__ std::uint8_t cls[32];
  if (threadIdx.x < 32) cls[threadIdx.x] = p.code_class[threadIdx.x];
  __syncthreads();

  const int lane = threadIdx.x & 31;
  const int l = lane % G;
  const unsigned slots = gridDim.x * (kBlockThreads / G);
  const unsigned slot = blockIdx.x * (kBlockThreads / G) + threadIdx.x / G;
  const unsigned warp_first_slot = (blockIdx.x * kBlockThreads + (threadIdx.x & ~31u)) / G;
  const int pad = K - 1;
  // Bytes per query-letter row of the table, and the lane's base address.
  const std::uint32_t kk4 = kMode == kPair ? static_cast<std::uint32_t>((K | 1) * (K | 1)) * 4u
                                           : static_cast<std::uint32_t>(K) * 128u;
  const std::uint32_t table_base =
      static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_table)) + (kMode == kPair ? 0u : lane * 4u);
  // Biased values (RECURRENCE): bias2 = (OX, OX) is both the value of H = 0 and the amount subtracted by
  // a gap opening; an E or F of -(O + X) is 0.
  const std::uint32_t bias2 = p.ox2, neg_x2 = p.neg_x2;
  uint2* const border = p.border != nullptr ? p.border + static_cast<std::size_t>(slot) * p.bstride : nullptr;

  // Warp-uniform loop: the warp's first slot decides whether there is work (later slots of the warp may
  // run out first; they compute on an empty pair and write nothing).
  for (unsigned base = warp_first_slot; base < p.npairs; base += slots) {
    const unsigned pi = slot - warp_first_slot + base;
    uint2 ids = make_uint2(0xFFFFFFFFu, 0xFFFFFFFFu);
    if (pi < p.npairs) ids = p.pairs[pi];
    const bool has_a = ids.x != 0xFFFFFFFFu, has_b = ids.y != 0xFFFFFFFFu;
    const std::uint64_t off_a = has_a ? p.offsets[ids.x] : 0, off_b = has_b ? p.offsets[ids.y] : 0;
    const int len_a = has_a ? static_cast<int>(p.offsets[ids.x + 1] - off_a) : 0;
    const int len_b = has_b ? static_cast<int>(p.offsets[ids.y + 1] - off_b) : 0;
    // Tiles of the warp: the first group's pair is the warp's longest (the list is sorted).
    const int my_tiles = (len_a + W - 1) / W;
    int tiles = my_tiles;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) tiles = max(tiles, __shfl_xor_sync(kFullMask, tiles, o));

    std::uint32_t mx = bias2;  // biased maximum H (H >= 0 everywhere)
    for (int tile = 0; tile < tiles; ++tile) {
      const int c0 = tile * W + l * R;
      std::uint32_t offa[R], offb[R];  // byte offsets of the columns' letters in a table row
      std::uint32_t H[R], F[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int c = c0 + r;
        const int ca = c < len_a ? cls[p.residues[off_a + c] & 31] : pad;
        const int cb = c < len_b ? cls[p.residues[off_b + c] & 31] : pad;
        if constexpr (kMode == kPair) {
          offa[r] = static_cast<std::uint32_t>(ca + (K | 1) * cb) * 4u;
          offb[r] = 0;
        } else {
          offa[r] = static_cast<std::uint32_t>(ca) * 128u;
          offb[r] = static_cast<std::uint32_t>(cb) * 128u;
        }
        H[r] = bias2;  // H(-1, c) = 0
        F[r] = 0;      // F(0, c) = -(O + X)
      }
      const bool first = tile == 0;
      const bool write_border = kMulti && tile + 1 < tiles && l == G - 1;
      const bool read_border = kMulti && !first && l == 0;
      // A step computes kRows consecutive rows of the lane's columns: lane l at step t has rows
      // kRows*(t - l) + j, j < kRows (negative rows read the pad letter). Inputs from the left: per row H(i,
      // c0-1) and E(i, c0) (lane l-1's outputs of step t-1), and the diagonal H(i-1, c0-1) of the first row.
      // The rows' E chains are independent, so two rows give the scheduler two chains to interleave.
      std::uint32_t hl[kRows], el[kRows], letter_row[kRows];  // letter_row: byte offset of the table row
#pragma unroll
      for (int j = 0; j < kRows; ++j) {
        hl[j] = bias2;
        el[j] = 0;
        letter_row[j] = static_cast<std::uint32_t>(p.Kq - 1) * kk4;
      }
      std::uint32_t hdiag = bias2;
      auto step = [&](int t, const std::uint32_t(&q_in)[kRows], const uint2(&b)[kRows]) {
        std::uint32_t hout[kRows], eout[kRows];
#pragma unroll
        for (int j = 0; j < kRows; ++j) {
          std::uint32_t row_off =
              static_cast<std::uint32_t>(__shfl_up_sync(kFullMask, static_cast<int>(letter_row[j]), 1, G));
          if (l == 0) {  // lane 0: the letter and the left border of row kRows*t + j
            row_off = q_in[j] * kk4;
            hl[j] = b[j].x;
            el[j] = b[j].y;
          }
          letter_row[j] = row_off;
        }
#pragma unroll
        for (int j = 0; j < kRows; ++j) {
          const std::uint32_t row_addr = table_base + letter_row[j];
          std::uint32_t diag = j == 0 ? hdiag : hl[j - 1];
          std::uint32_t e = el[j];
#pragma unroll
          for (int r = 0; r < R; ++r) {
            std::uint32_t sc;  // (s(q, a), s(q, b))
            if constexpr (kMode == kPair) {
              asm("ld.shared.u32 %0, [%1];" : "=r"(sc) : "r"(row_addr + offa[r]));
            } else {
              std::uint32_t sa, sb;
              asm("ld.shared.u32 %0, [%1];" : "=r"(sa) : "r"(row_addr + offa[r]));
              asm("ld.shared.u32 %0, [%1];" : "=r"(sb) : "r"(row_addr + offb[r]));
              sc = mad_u32(sb, 0x10000u, sa);  // sb << 16 | sa (zero-extended entries)
            }
            // max(diag + s, F) does not wait for E, so the E chain through the columns is three dependent
            // instructions (max3, multiply-add, add-max), about 26 cycles per column on an H100.
            const std::uint32_t h = __vimax3_s16x2(__viaddmax_s16x2(diag, sc, F[r]), e, bias2);
            diag = H[r];
            H[r] = h;
            const std::uint32_t hoe = mad_u32(h, 1u, 0u - bias2);  // both halves >= OX: no borrow
            e = __viaddmax_s16x2(e, neg_x2, hoe);
            F[r] = __viaddmax_s16x2(F[r], neg_x2, hoe);
            if (r & 1) mx = __vimax3_s16x2(mx, H[r - 1], H[r]);
          }
          hout[j] = H[R - 1];
          eout[j] = e;
          if (write_border) {
            const int row = kRows * (t - (G - 1)) + j;
            if (row >= 0 && row < p.m) border[row] = make_uint2(H[R - 1], e);
          }
        }
        // Pass H(i, last column) and E(i, next column) of each row to the right; the last row's left H is
        // the next step's diagonal.
        hdiag = hl[kRows - 1];
#pragma unroll
        for (int j = 0; j < kRows; ++j) {
          hl[j] = static_cast<std::uint32_t>(__shfl_up_sync(kFullMask, static_cast<int>(hout[j]), 1, G));
          el[j] = static_cast<std::uint32_t>(__shfl_up_sync(kFullMask, static_cast<int>(eout[j]), 1, G));
        }
      };
      // Four rows per iteration (4 / kRows steps); the letters (one word) and lane 0's border entries of the
      // next four rows are loaded one iteration ahead. Rows >= m (the drain, rounded up to a multiple of 4)
      // are pad rows with the boundary border (0, -OX). A border row read at step t is rewritten only at step
      // t + G - 1 (by lane G-1, this tile), after it was read.
      const int rows = (kRows * ((p.m + kRows - 1) / kRows + G - 1) + 3) & ~3;
      const std::uint32_t* q4 = reinterpret_cast<const std::uint32_t*>(p.query);
      const uint2 boundary = make_uint2(bias2, 0u);  // H = 0, E = -(O + X)
      auto load_border = [&](int row) { return (read_border && row < p.m) ? border[row] : boundary; };
      std::uint32_t q_next = q4[0];
      uint2 b_next[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) b_next[k] = load_border(k);
      for (int s = 0; s < rows; s += 4) {
        const std::uint32_t qc = q_next;
        uint2 bc[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) bc[k] = b_next[k];
        q_next = q4[(s >> 2) + 1];
#pragma unroll
        for (int k = 0; k < 4; ++k) b_next[k] = load_border(s + 4 + k);
#pragma unroll
        for (int k = 0; k < 4; k += kRows) {
          std::uint32_t q_in[kRows];
          uint2 b_in[kRows];
#pragma unroll
          for (int j = 0; j < kRows; ++j) {
            q_in[j] = (qc >> (8 * (k + j))) & 0xFFu;
            b_in[j] = bc[k + j];
          }
          step((s + k) / kRows, q_in, b_in);
        }
      }
      // Lane 0's diagonal for the next tile's first row is the boundary H(-1, .) = 0 (reset above).
    }
    const int2 sc = group_scores<G>(mx, bias2);
    if (l == 0 && pi < p.npairs) {
      if (has_a) p.scores[ids.x] = sc.x;
      if (has_b) p.scores[ids.y] = sc.y;
    }
  }
}

// QUERY-STATIONARY KERNEL (score_kernel_qs): two QUERIES against one database sequence per group. The
// roles of score_kernel swap: lane l of a group holds R consecutive query rows of a tile of W = G * R rows
// (H(i, j-1) and E(i, j) of each row in registers), and the database sequence streams through the lanes
// as the systolic wavefront (at step s lane l computes column j = s - l; lane l - 1 hands it H(i0 - 1, j) and
// F(i0, j) of its first row i0). The two halves of every register are two queries a (low) and b (high) of
// the same database sequence. The recurrence, bias and overflow rule are those above with E and F swapped.
//
// The substitution scores come from the pair's QUERY PROFILE (gpu_plan.hpp query_pair_profile), a tile
// of it in shared memory: word (d * R + r) * 32 + lane = (s(a_i, d), s(b_i, d)) for database class d and
// the lane's row i = tile * W + (lane % G) * R + r. Every lane reads its own bank whatever letters the
// lanes stream (score_kernel's pair table conflicts about 3.5-way at random), and the offset of row r is
// an immediate. Rows past a query's end and the pad class score kPadScore.
//
// WORK. The database sequences are ordered by length (longest first); a block's groups take consecutive
// ones, round by round (grid-stride), so the warps of a block stream similar lengths. With several tiles
// (kMulti) the block moves through the tiles together, loading each tile's profile between two barriers;
// lane G-1 of a tile writes the bottom row's (H, F) per column to the group's border scratch for lane 0 of
// the next tile.
struct QsParams {
  const std::uint8_t* residues = nullptr;  // the batch's codes, back to back
  const std::uint64_t* offsets = nullptr;  // per sequence id: start in residues (size n + 1)
  const std::uint32_t* order = nullptr;    // ids of the non-empty sequences, longest first
  std::uint32_t nseq = 0;
  const std::uint32_t* profile = nullptr;    // tiles x Kd x R x 32 words (gpu_plan.hpp query_pair_profile)
  int tiles = 1;                             // query tiles of W rows
  const std::uint8_t* code_class = nullptr;  // 32 entries: database code -> database class
  int Kd = 0;                                // database classes, including the pad class Kd - 1
  std::uint32_t ox2 = 0;                     // O + X in both halves (the value bias)
  std::uint32_t neg_x2 = 0;                  // -X in both halves
  uint2* border = nullptr;                   // kMulti: per group slot, bstride entries (H, F words)
  std::uint32_t bstride = 0;                 // >= the longest sequence
  std::int32_t* scores_a = nullptr;          // per sequence id (min(score, kSat16)), query a
  std::int32_t* scores_b = nullptr;          // the same for query b
};

// Blocks of 384 threads, two per SM (80 registers, 24 warps; a profile tile of R = 16 rows and 25 classes
// takes 51 KB per block). On an H200, 20 queries in pairs against 1 M sequences: 4.03 TCUPS; 256 x 3: 3.87;
// 128 x 4: 3.80; 512 x 2 and 448 x 2 spill (docs/PERFORMANCE.md, 2026-11-28).
#ifndef WS_SW_QS_BLOCK_THREADS
#define WS_SW_QS_BLOCK_THREADS 384  // measurement knob, with WS_SW_QS_MIN_BLOCKS
#endif
#ifndef WS_SW_QS_MIN_BLOCKS
#define WS_SW_QS_MIN_BLOCKS 2
#endif
inline constexpr int kQsBlockThreads = WS_SW_QS_BLOCK_THREADS;

// Shared memory of a query-stationary kernel: one profile tile.
__host__ __device__ constexpr std::size_t qs_smem_bytes(int Kd, int R) {
  return static_cast<std::size_t>(Kd) * static_cast<std::size_t>(R) * 128u;
}

template <int G, int R, bool kMulti>
__global__ void __launch_bounds__(kQsBlockThreads, WS_SW_QS_MIN_BLOCKS) score_kernel_qs(const QsParams p) {
  static_assert(G >= 4 && G <= 32 && (G & (G - 1)) == 0 && R % 2 == 0 && kQsBlockThreads % 32 == 0);
  constexpr int kGroups = kQsBlockThreads / G;
  constexpr std::uint32_t kRowBytes = R * 128u;  // one database class's rows in the profile tile
  extern __shared__ uint4 smem_profile[];
  __shared__ std::uint8_t cls[32];
  const int K = p.Kd;
  const int tile_vec4 = K * R * 8;  // uint4 per tile
  if (threadIdx.x < 32) cls[threadIdx.x] = p.code_class[threadIdx.x];
  auto load_tile = [&](int tile) {
    const uint4* src = reinterpret_cast<const uint4*>(p.profile) + static_cast<std::size_t>(tile) * tile_vec4;
    for (int i = threadIdx.x; i < tile_vec4; i += kQsBlockThreads) smem_profile[i] = src[i];
  };
  if constexpr (!kMulti) load_tile(0);
  __syncthreads();

  const int lane = threadIdx.x & 31;
  const int l = lane % G;
  const unsigned group = threadIdx.x / G;
  const std::uint32_t base_addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_profile)) +
                                  static_cast<std::uint32_t>(lane) * 4u;
  const std::uint32_t pad_row = static_cast<std::uint32_t>(K - 1) * kRowBytes;
  const std::uint32_t bias2 = p.ox2, neg_x2 = p.neg_x2;
  uint2* const border =
      kMulti ? p.border + (static_cast<std::size_t>(blockIdx.x) * kGroups + group) * p.bstride : nullptr;
  const uint2 boundary = make_uint2(bias2, 0u);  // H = 0, F = -(O + X)

  // Block-uniform rounds: the block's groups take sequences base .. base + kGroups - 1 of the order.
  for (unsigned base = blockIdx.x * kGroups; base < p.nseq; base += gridDim.x * kGroups) {
    const unsigned k = base + group;
    const bool has = k < p.nseq;
    const std::uint32_t id = has ? p.order[k] : 0u;
    const std::uint64_t off = has ? p.offsets[id] : 0;
    const int n = has ? static_cast<int>(p.offsets[id + 1] - off) : 0;
    int nmax = n;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) nmax = max(nmax, __shfl_xor_sync(kFullMask, nmax, o));
    const int steps = (nmax + G - 1 + 3) & ~3;
    const std::uint8_t* const seq = p.residues + off;
    std::uint32_t mx = bias2;
    for (int tile = 0; tile < p.tiles; ++tile) {
      if constexpr (kMulti) {
        __syncthreads();  // every warp is done with the previous tile
        load_tile(tile);
        __syncthreads();
      }
      std::uint32_t H[R], E[R];  // H(i, j-1) and E(i, j) of the lane's rows
#pragma unroll
      for (int r = 0; r < R; ++r) {
        H[r] = bias2;  // H(i, -1) = 0
        E[r] = 0;      // E(i, 0) = -(O + X)
      }
      const bool write_border = kMulti && tile + 1 < p.tiles && l == G - 1;
      const bool read_border = kMulti && tile > 0 && l == 0;
      std::uint32_t hu = bias2, fu = 0, letter = pad_row, hdiag = bias2;
      auto step = [&](int s, std::uint32_t letter_in, uint2 b) {
        std::uint32_t row_off =
            static_cast<std::uint32_t>(__shfl_up_sync(kFullMask, static_cast<int>(letter), 1, G));
        if (l == 0) {  // lane 0: the letter of column s and the tile's top border at column s
          row_off = letter_in;
          hu = b.x;
          fu = b.y;
        }
        letter = row_off;
        const std::uint32_t addr = base_addr + row_off;
        std::uint32_t diag = hdiag;
        std::uint32_t f = fu;
#pragma unroll
        for (int r = 0; r < R; ++r) {
          std::uint32_t sc;  // (s(a_i, d), s(b_i, d))
          asm("ld.shared.u32 %0, [%1];" : "=r"(sc) : "r"(addr + static_cast<std::uint32_t>(r) * 128u));
          const std::uint32_t h = __vimax3_s16x2(__viaddmax_s16x2(diag, sc, E[r]), f, bias2);
          diag = H[r];
          H[r] = h;
          const std::uint32_t hof = mad_u32(h, 1u, 0u - bias2);  // both halves >= OX: no borrow
          f = __viaddmax_s16x2(f, neg_x2, hof);
          E[r] = __viaddmax_s16x2(E[r], neg_x2, hof);
          if (r & 1) mx = __vimax3_s16x2(mx, H[r - 1], H[r]);
        }
        if (write_border) {
          const int col = s - (G - 1);
          if (col >= 0 && col < n) border[col] = make_uint2(H[R - 1], f);
        }
        hdiag = hu;
        hu = static_cast<std::uint32_t>(__shfl_up_sync(kFullMask, static_cast<int>(H[R - 1]), 1, G));
        fu = static_cast<std::uint32_t>(__shfl_up_sync(kFullMask, static_cast<int>(f), 1, G));
      };
      // Four columns per iteration; lane 0's letters and border entries are loaded one iteration ahead. A
      // border column read at step s is rewritten only at step s + G - 1 (by lane G-1, this tile).
      auto letter_at = [&](int j) {
        return j < n ? static_cast<std::uint32_t>(cls[seq[j] & 31]) * kRowBytes : pad_row;
      };
      auto border_at = [&](int j) { return (read_border && j < n) ? border[j] : boundary; };
      std::uint32_t l_next[4];
      uint2 b_next[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        l_next[c] = l == 0 ? letter_at(c) : pad_row;
        b_next[c] = border_at(c);
      }
      for (int s = 0; s < steps; s += 4) {
        std::uint32_t lc[4];
        uint2 bc[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          lc[c] = l_next[c];
          bc[c] = b_next[c];
        }
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          l_next[c] = l == 0 ? letter_at(s + 4 + c) : pad_row;
          b_next[c] = border_at(s + 4 + c);
        }
#pragma unroll
        for (int c = 0; c < 4; ++c) step(s + c, lc[c], bc[c]);
      }
    }
    const int2 sc = group_scores<G>(mx, bias2);
    if (l == 0 && has) {
      p.scores_a[id] = sc.x;
      p.scores_b[id] = sc.y;
    }
  }
}

}  // namespace warpsearch::swsearch::gpu
