// filter_kernels.cuh: the GPU SSV, full-MSV and Viterbi-filter kernels of the hmmsearch filter engine
// (CUDAMPF / CUDAMPF++ class). Each kernel computes, per target, exactly the integer end state of the CPU
// reference (msvfilter.hpp, vitfilter.hpp); the host converts states to scores with the CPU's functions.
//
// GROUPS. The threads that compute one target row by row form a group:
//   - sub-warp mode: G = 1..32 threads at lanes gi*G .. gi*G+G-1 of a warp, S = floor(32/G) groups (targets)
//     per warp (CUDAMPF++'s "several sequences per warp"); lanes >= S*G idle. Row values cross lanes with
//     warp shuffles, group maxima with __reduce_max_sync on the group's lane mask.
//   - block mode (long models): the whole block (G = blockDim.x, a multiple of 32) computes one target;
//     values cross warps through shared memory, one or two __syncthreads per row.
// Work is taken from a counter over a length-sorted (longest first) list, a warp's S targets or a block's one
// target at a time, so groups of a warp have similar lengths.
//
// NODE LAYOUT. Thread rank t of a group holds a contiguous run of nodes (the "striped across lanes" layout of
// CUDAMPF with each lane one HMMER stripe):
//   SSV/MSV: 16-bit cells, two per 32-bit word: lane h = 2t + b (b = 0 low half, 1 high half) holds nodes
//     h*Q + 1 .. h*Q + Q; word j of thread t = (node 2tQ + j + 1 | node (2t+1)Q + j + 1 << 16).
//     Dependency M(i-1, k-1) -> M(i, k): word j-1 -> word j inside the thread; word 0 takes its low half from
//     lane 2t-1 (thread t-1's high half of word Q-1) and its high half from its own low half of word Q-1.
//   Viterbi: 32-bit cells, thread t holds nodes tQ + 1 .. tQ + Q.
//   Nodes past M are padding with costs that keep them at -infinity (they feed only later padding nodes).
//
// ARITHMETIC (why 16-bit DPX instructions give HMMER's byte results exactly):
//   SSV: with d = v + 128 (v the signed byte cell of ssvfilter.c), a cell is d = max(0, d(i-1,k-1) + w) with
//     w = -sbv score in [-127, bias_b]; xE = 128 + max d as long as max d < T = 127 - bias_b, and once some d
//     reaches T HMMER's xE is >= 255 - bias_b (overflow) too (a diagonal crosses T before any byte can
//     saturate). The kernel computes d with __viaddmax_s16x2_relu, checks every 128 rows whether the group's
//     maximum reached T (then stops: the result is "capped"), so no cell can exceed T + 128 * 127 < 32768.
//     Diagonals are independent and a cell (i, k) depends only on rows i-k+1 .. i, so a long target is cut
//     into segments that each start M - 1 (or more) rows before the rows they own: their cells in the owned
//     rows are exact and those in the warm-up rows are lower bounds of exact cells, so the maximum over the
//     segments (atomicMax) is the target's. This bounds the work of one group (short models otherwise wait
//     for one group running the longest target row by row).
//   MSV: cells stay in 0..255: max(M, xB), min(+ bias, 255), max(- cost, 0): the saturating byte ops.
//   Viterbi: int32 with explicit clamps to [-32768, 32767] where _mm_adds_epi16 saturates. Transitions are
//     <= 0, so bottom clamps commute with max and with adding them; D->D runs as a scan of the functions
//     c -> max(A, c + S) across the group (the full propagation of viterbi_state_reference).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace warpsearch::hmm::gpu {

// The targets of one resident chunk.
struct DbView {
  const uint8_t* res =
      nullptr;  // residue codes; target s at res + off[s] - base (16-byte aligned, >= 16 pad bytes)
  const uint64_t* off = nullptr;    // per target id: offset in the whole database's packed residues
  uint64_t base = 0;                // offset of res[0] in the packed residues (the resident chunk's start)
  const int32_t* len = nullptr;     // per target id
  const uint32_t* items = nullptr;  // work list: target ids (longest first)
  const int2* spans = nullptr;      // SSV only, per item: (first row, rows) of a segment of the target; the
                                    // segments of a long target overlap by >= M - 1 rows (see the SSV kernel)
  uint32_t n = 0;                   // entries in items
  unsigned int* counter = nullptr;  // work counter, zero before the launch
};

// SSV/MSV tables: residue row x starts at uint2 entry x * table_row_stride(Q, G) (an odd stride, so the
// groups of a warp, which read different residues' rows, spread over the shared-memory banks), then entry
// (j/2)*G + t holds words j, j+1 of thread t.
__host__ __device__ constexpr int table_row_stride(int Q, int G) { return ((Q / 2) * G) | 1; }

// Per-launch model constants.
struct SsvParams {
  const uint2* table = nullptr;  // see table_row_stride; x = 0..Kp (Kp: the pad row)
  int G = 0;                     // threads per group
  int pad_code = 0;              // residue code of rows past a target's end (table row Kp)
  int table_words = 0;           // (Kp + 1) * Q * G (copied to shared memory in sub-warp mode)
  int T = 0;                     // 127 - bias_b: stop threshold
  int32_t* out = nullptr;        // per target id: max d (>= T: overflow, capped); atomicMax over the target's
                                 // segments, so zero before the launch
};

struct MsvParams {
  const uint2* table = nullptr;  // as SsvParams: -cost words
  int G = 0;
  int pad_code = 0;
  int table_words = 0;
  int bias = 0, base = 0, tec = 0, tbm = 0;
  const uint8_t* tjb = nullptr;  // per target id: msv_tjb_for_length
  int32_t* out = nullptr;        // per target id: xJ, or -1 for overflow
};

// Viterbi tables are thread-major with padded strides, so a thread's loads are one base register plus
// compile-time offsets (no hoisted per-node addresses) and a warp's loads hit 32 different banks (odd word
// strides): emission [(x*G + t)*vit_emit_stride(Q) + j], transitions [t*vit_trans_stride(Q) + tt*Q + j].
__host__ __device__ constexpr int vit_emit_stride(int Q) {
  const int e = (Q + 1) & ~1;
  return (e / 2) % 2 == 0 ? e + 2 : e;
}
__host__ __device__ constexpr int vit_trans_stride(int Q) { return 8 * Q + 2; }

struct VitParams {
  const int16_t* emit = nullptr;  // x = 0..Kp-1 (sub-warp mode: copied to shared memory)
  int emit_entries = 0;           // Kp * G * vit_emit_stride(Q)
  int trans_in_smem = 0;          // block mode: copy trans to shared memory (G * vit_trans_stride(Q) entries)
  const int16_t* trans = nullptr;  // tt = BM, MM, IM, DM (into node), MD, MI, II, DD (out of)
  int G = 0;
  int base = 0;                // base_w
  int e_move = 0, e_loop = 0;  // xw[E][move], xw[E][loop]
  int n_loop = 0, c_loop = 0, j_loop = 0;
  const int16_t* move = nullptr;  // per target id: vit_move_for_length (N, C, J move)
  int32_t* out = nullptr;         // per target id: xC, or 0x7fffffff for overflow
};

inline constexpr int32_t kVitOverflow = 0x7fffffff;
inline constexpr int32_t kMsvOverflow = -1;

}  // namespace warpsearch::hmm::gpu
