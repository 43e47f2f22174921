// filter_kernels.cu: the SSV, full-MSV and Viterbi-filter kernels (filter_kernels.cuh explains the layout
// and the arithmetic) and their launchers, instantiated for the node-run lengths Q the engine chooses from.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "gpu/cuda/check.cuh"
#include "hmm/cuda/filter_kernels.cuh"
#include "hmm/cuda/filter_launch.hpp"

namespace warpsearch::hmm::gpu {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kSubWarpThreads = 256;  // block size of the sub-warp kernels
constexpr int kNeg = -32768;

// ---- group plumbing ---------------------------------------------------------------------------------

// Sub-warp group geometry of this lane.
// Idle lanes (gi >= S) compute like a group without a target; every warp-wide operation includes them.
struct SubGroup {
  int lane, rank, gi, S;
  __device__ explicit SubGroup(int G) {
    lane = static_cast<int>(threadIdx.x & 31u);
    S = 32 / G;
    gi = lane / G;
    rank = lane - gi * G;
  }
};

// Maximum over the lane's group, in every lane of the group (all 32 lanes call it). A shuffle tree with a
// full mask: __reduce_max_sync with per-group masks serializes the groups of a warp (measured: several times
// slower).
__device__ __forceinline__ int group_max(int v, const SubGroup& g, int G) {
  if (G == 1) return v;
  for (int off = 1; off < G; off <<= 1) {
    const int o = __shfl_down_sync(kFull, v, off);
    if (g.rank + off < G) v = max(v, o);
  }
  return __shfl_sync(kFull, v, g.lane - g.rank);
}

// Work of the sub-warp kernels: a warp takes S consecutive list entries at a time. The first round is static
// and interleaved across blocks (warp w of block b takes unit w * gridDim.x + b), so the longest targets (the
// list's head) spread over the SMs whatever the order blocks start in, and a short list launched with one
// block per warp it needs runs one warp per SM; later rounds come from the counter.
struct WarpWork {
  bool first = true;
  __device__ uint32_t next(unsigned int* counter, int S) {
    const uint32_t warps = gridDim.x * (blockDim.x >> 5);
    if (first) {
      first = false;
      return ((threadIdx.x >> 5) * gridDim.x + blockIdx.x) * static_cast<uint32_t>(S);
    }
    uint32_t base = 0;
    if ((threadIdx.x & 31u) == 0) base = atomicAdd(counter, static_cast<unsigned>(S));
    return __shfl_sync(kFull, base, 0) + warps * static_cast<uint32_t>(S);
  }
};

__device__ inline int residue(uint32_t word, int r) { return static_cast<int>((word >> (8 * r)) & 0xffu); }

__device__ inline uint32_t load_res4(const uint8_t* res, int i) {
  return __ldg(reinterpret_cast<const uint32_t*>(res + i));
}

__device__ inline int hmax16(uint32_t w) {
  const int lo = static_cast<int16_t>(w & 0xffffu), hi = static_cast<int16_t>(w >> 16);
  return lo > hi ? lo : hi;
}

// Block-mode exchange area (shared memory): per row parity, per warp, a few ints.
struct BlockXch {
  int v[2][32][4];
};
struct VitXch {
  int a[2][32], s[2][32], e[2][32], m[2][32], i[2][32], d[2][32];
};

// ---- SSV ------------------------------------------------------------------------------------------------

// One row of the SSV over a thread's Q words: d[j] <- relu(d[j-1] + w[j]), word 0 from `carry`.
template <int Q>
__device__ __forceinline__ void ssv_row(uint32_t (&d)[Q], const uint2* tab, int stride, uint32_t carry,
                                        uint32_t& emax) {
#pragma unroll
  for (int jp = Q / 2 - 1; jp >= 0; --jp) {
    const uint2 w = tab[jp * stride];
    d[2 * jp + 1] = __viaddmax_s16x2_relu(d[2 * jp], w.y, 0u);
    d[2 * jp] = __viaddmax_s16x2_relu(jp == 0 ? carry : d[2 * jp - 1], w.x, 0u);
    emax = __vimax3_s16x2_relu(emax, d[2 * jp], d[2 * jp + 1]);
  }
}

template <int Q>
__global__ void __launch_bounds__(kSubWarpThreads) ssv_subwarp(DbView db, SsvParams p) {
  extern __shared__ uint2 smem_tab[];
  for (int w = static_cast<int>(threadIdx.x); w < p.table_words / 2; w += blockDim.x)
    smem_tab[w] = p.table[w];
  __syncthreads();
  const int G = p.G;
  const SubGroup g(G);
  const int rowstride = table_row_stride(Q, G);  // uint2 entries per residue row
  WarpWork work;
  for (;;) {
    const uint32_t base = work.next(db.counter, g.S);
    if (base >= db.n) break;
    const uint32_t item = base + static_cast<uint32_t>(g.gi);
    const bool has = g.gi < g.S && item < db.n;
    const uint32_t s = has ? db.items[item] : 0u;
    const int2 span = has ? db.spans[item] : make_int2(0, 0);
    int L = span.y;
    const uint8_t* res = has ? db.res + (db.off[s] - db.base) + span.x : db.res;
    uint32_t d[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) d[j] = 0u;
    uint32_t emax = 0u;
    const uint2* tab_t = smem_tab + g.rank;
    int Lmax = __reduce_max_sync(kFull, static_cast<unsigned>(L));
    for (int i = 0; i < Lmax; i += 4) {
      const uint32_t word = i < L ? load_res4(res, i) : 0u;
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int x = (i + r < L) ? residue(word, r) : p.pad_code;
        // (G = 1: every lane is a group's rank 0, the shuffle would be ignored; G is warp-uniform)
        const uint32_t up = G == 1 ? 0u : __shfl_up_sync(kFull, d[Q - 1], 1);
        const uint32_t carry = __byte_perm(g.rank == 0 ? 0u : up, d[Q - 1], 0x5432);
        ssv_row<Q>(d, tab_t + x * rowstride, G, carry, emax);
      }
      if ((i & 127) == 124) {  // every 128 rows: stop a group whose maximum reached T (no 16-bit overflow)
        const int e = group_max(hmax16(emax), g, G);
        if (e >= p.T && L > i + 4) L = i + 4;
        Lmax = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(L)));
      }
    }
    const int e = group_max(hmax16(emax), g, G);
    if (has && g.rank == 0) atomicMax(p.out + s, e);
  }
}

template <int Q>
__global__ void __launch_bounds__(1024) ssv_block(DbView db, SsvParams p) {
  __shared__ BlockXch xch;
  __shared__ uint32_t item_s;
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5, nwarps = blockDim.x >> 5;
  const int G = p.G;
  const int rowstride = table_row_stride(Q, G);
  for (;;) {
    __syncthreads();
    if (t == 0) item_s = atomicAdd(db.counter, 1u);
    __syncthreads();
    const uint32_t item = item_s;
    if (item >= db.n) break;
    const uint32_t s = db.items[item];
    const int2 span = db.spans[item];
    int L = span.y;
    const uint8_t* res = db.res + (db.off[s] - db.base) + span.x;
    uint32_t d[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) d[j] = 0u;
    uint32_t emax = 0u;
    const uint2* tab_t = p.table + t;
    int parity = 0;
    for (int i = 0; i < L; i += 4) {
      const uint32_t word = load_res4(res, i);
#pragma unroll 1
      for (int r = 0; r < 4 && i + r < L; ++r) {
        const int x = residue(word, r);
        if (lane == 31) xch.v[parity][warp][0] = static_cast<int>(d[Q - 1]);
        __syncthreads();
        uint32_t up = __shfl_up_sync(kFull, d[Q - 1], 1);
        if (lane == 0) up = warp == 0 ? 0u : static_cast<uint32_t>(xch.v[parity][warp - 1][0]);
        parity ^= 1;
        const uint32_t carry = __byte_perm(up, d[Q - 1], 0x5432);
        ssv_row<Q>(d, tab_t + x * rowstride, G, carry, emax);
      }
      if ((i & 127) == 124) {  // block-wide maximum every 128 rows
        const int e = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(hmax16(emax))));
        if (lane == 0) xch.v[parity][warp][1] = e;
        __syncthreads();
        int m = 0;
        for (int w = 0; w < nwarps; ++w) m = max(m, xch.v[parity][w][1]);
        parity ^= 1;
        if (m >= p.T) L = min(L, i + 4);
      }
    }
    const int e = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(hmax16(emax))));
    __syncthreads();
    if (lane == 0) xch.v[0][warp][2] = e;
    __syncthreads();
    if (t == 0) {
      int m = 0;
      for (int w = 0; w < nwarps; ++w) m = max(m, xch.v[0][w][2]);
      atomicMax(p.out + s, m);
    }
  }
}

// ---- full MSV ---------------------------------------------------------------------------------------------

template <int Q>
__device__ __forceinline__ uint32_t msv_row(uint32_t (&m)[Q], const uint2* tab, int stride, uint32_t carry,
                                            uint32_t xb2, uint32_t bias2) {
  const uint32_t c255 = 0x00ff00ffu;
  uint32_t emax = 0u;
#pragma unroll
  for (int jp = Q / 2 - 1; jp >= 0; --jp) {
    const uint2 w = tab[jp * stride];
    uint32_t a = __vimax_s16x2_relu(m[2 * jp], xb2);
    a = __viaddmin_s16x2(a, bias2, c255);
    m[2 * jp + 1] = __viaddmax_s16x2_relu(a, w.y, 0u);
    uint32_t b = __vimax_s16x2_relu(jp == 0 ? carry : m[2 * jp - 1], xb2);
    b = __viaddmin_s16x2(b, bias2, c255);
    m[2 * jp] = __viaddmax_s16x2_relu(b, w.x, 0u);
    emax = __vimax3_s16x2_relu(emax, m[2 * jp], m[2 * jp + 1]);
  }
  return emax;
}

// The special states of one MSV row given the row maximum e; returns false on overflow.
struct MsvSpecials {
  int xJ, xB, tjbm;
  __device__ bool update(int e, const MsvParams& p) {
    if (min(e + p.bias, 255) == 255) return false;
    const int ec = max(e - p.tec, 0);
    xJ = max(xJ, ec);
    xB = max(max(p.base, xJ) - tjbm, 0);
    return true;
  }
};

// Speculative blocks (sub-warp groups of G > 1 threads, Q <= kMsvSpecMaxQ): the special states feed a row
// only through xB = max(base, xJ) - tjbm, and xJ never decreases, so xB changes only at a row whose maximum e
// has e - tec > max(base, xJ) (or at an overflow, e + bias >= 255). A group computes kMsvSpecRows rows with
// the xB it has, keeping only the block's maximum (no group reduction per row, which dominates a row's
// latency when the group's threads hold few nodes), then checks the block once: without such a row the rows
// were exact and xJ takes the block's maximum; otherwise every group of the warp restores the block's first
// row and recomputes the block row by row. The fallback lists of the pipeline (the targets the SSV cannot
// decide) are small and run with few nodes per thread, so their time is the longest target's row chain.
constexpr int kMsvSpecMaxQ = 16;
constexpr int kMsvSpecRows = 8;

template <int Q>
__global__ void __launch_bounds__(kSubWarpThreads) msv_subwarp(DbView db, MsvParams p) {
  extern __shared__ uint2 smem_tab[];
  for (int w = static_cast<int>(threadIdx.x); w < p.table_words / 2; w += blockDim.x)
    smem_tab[w] = p.table[w];
  __syncthreads();
  const int G = p.G;
  const SubGroup g(G);
  const int rowstride = table_row_stride(Q, G);
  const uint32_t bias2 = static_cast<uint32_t>(p.bias) * 0x00010001u;
  const bool spec = Q <= kMsvSpecMaxQ && G > 1;  // warp-uniform
  WarpWork work;
  for (;;) {
    const uint32_t base = work.next(db.counter, g.S);
    if (base >= db.n) break;
    const uint32_t item = base + static_cast<uint32_t>(g.gi);
    const bool has = g.gi < g.S && item < db.n;
    const uint32_t s = has ? db.items[item] : 0u;
    int L = has ? db.len[s] : 0;
    const uint8_t* res = has ? db.res + (db.off[s] - db.base) : db.res;
    MsvSpecials sp{0, 0, has ? (static_cast<int>(p.tjb[s]) + p.tbm) & 0xff : 0};
    sp.xB = max(p.base - sp.tjbm, 0);
    bool overflow = false;
    uint32_t m[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) m[j] = 0u;
    const uint2* tab_t = smem_tab + g.rank;
    const int Lmax = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(L)));
    // Residues 8 at a time, the next block's words loaded while this block computes.
    uint32_t w0 = L > 0 ? load_res4(res, 0) : 0u, w1 = L > 4 ? load_res4(res, 4) : 0u;
    for (int i = 0; i < Lmax; i += kMsvSpecRows) {
      const uint32_t n0 = i + 8 < L ? load_res4(res, i + 8) : 0u;
      const uint32_t n1 = i + 12 < L ? load_res4(res, i + 12) : 0u;
      bool exact = true;
      if (spec) {
        uint32_t ck[Q];
#pragma unroll
        for (int j = 0; j < Q; ++j) ck[j] = m[j];
        const uint32_t xb2 = static_cast<uint32_t>(sp.xB) * 0x00010001u;
        uint32_t emax = 0u;
#pragma unroll
        for (int r = 0; r < kMsvSpecRows; ++r) {
          const int x = i + r < L ? residue(r < 4 ? w0 : w1, r & 3) : p.pad_code;
          const uint32_t up = __shfl_up_sync(kFull, m[Q - 1], 1);
          const uint32_t carry = __byte_perm(g.rank == 0 ? 0u : up, m[Q - 1], 0x5432);
          emax = __vimax_s16x2_relu(emax, msv_row<Q>(m, tab_t + x * rowstride, G, carry, xb2, bias2));
        }
        // Rows past the target's end (pad costs) leave cells at 0, so they never trigger.
        const int e = group_max(hmax16(emax), g, G);
        const bool trig = i < L && (e > max(p.base, sp.xJ) + p.tec || e + p.bias >= 255);
        if (__any_sync(kFull, trig)) {
#pragma unroll
          for (int j = 0; j < Q; ++j) m[j] = ck[j];
        } else {
          if (i < L) sp.xJ = max(sp.xJ, max(e - p.tec, 0));
          exact = false;
        }
      }
      if (exact) {
#pragma unroll
        for (int r = 0; r < kMsvSpecRows; ++r) {
          const bool live = i + r < L;
          const int x = live ? residue(r < 4 ? w0 : w1, r & 3) : p.pad_code;
          const uint32_t up = G == 1 ? 0u : __shfl_up_sync(kFull, m[Q - 1], 1);
          const uint32_t carry = __byte_perm(g.rank == 0 ? 0u : up, m[Q - 1], 0x5432);
          const uint32_t emax = msv_row<Q>(m, tab_t + x * rowstride, G, carry,
                                           static_cast<uint32_t>(sp.xB) * 0x00010001u, bias2);
          const int e = group_max(hmax16(emax), g, G);
          if (live && !sp.update(e, p)) {
            overflow = true;
            L = i + r;  // the rest of the target is not needed
          }
        }
      }
      w0 = n0;
      w1 = n1;
    }
    if (has && g.rank == 0) p.out[s] = overflow ? kMsvOverflow : sp.xJ;
  }
}

template <int Q>
__global__ void __launch_bounds__(1024) msv_block(DbView db, MsvParams p) {
  __shared__ BlockXch xch;
  __shared__ uint32_t item_s;
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5, nwarps = blockDim.x >> 5;
  const int G = p.G;
  const int rowstride = table_row_stride(Q, G);
  const uint32_t bias2 = static_cast<uint32_t>(p.bias) * 0x00010001u;
  for (;;) {
    __syncthreads();
    if (t == 0) item_s = atomicAdd(db.counter, 1u);
    __syncthreads();
    const uint32_t item = item_s;
    if (item >= db.n) break;
    const uint32_t s = db.items[item];
    const int L = db.len[s];
    const uint8_t* res = db.res + (db.off[s] - db.base);
    MsvSpecials sp{0, 0, (static_cast<int>(p.tjb[s]) + p.tbm) & 0xff};
    sp.xB = max(p.base - sp.tjbm, 0);
    bool overflow = false;
    uint32_t m[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) m[j] = 0u;
    const uint2* tab_t = p.table + t;
    int parity = 0;
    // Row i: the previous row's last words were published at the end of row i-1 (or are 0 for row 0).
    uint32_t up_prev = 0u;  // lane 0's carry source for this row
    for (int i = 0; i < L && !overflow; ++i) {
      const int x = static_cast<int>(__ldg(res + i));
      uint32_t up = __shfl_up_sync(kFull, m[Q - 1], 1);
      if (lane == 0) up = up_prev;
      const uint32_t carry = __byte_perm(up, m[Q - 1], 0x5432);
      const uint32_t emax =
          msv_row<Q>(m, tab_t + x * rowstride, G, carry, static_cast<uint32_t>(sp.xB) * 0x00010001u, bias2);
      const int e = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(hmax16(emax))));
      if (lane == 0) xch.v[parity][warp][1] = e;
      if (lane == 31) xch.v[parity][warp][0] = static_cast<int>(m[Q - 1]);
      __syncthreads();
      int em = 0;
      for (int w = 0; w < nwarps; ++w) em = max(em, xch.v[parity][w][1]);
      up_prev = warp == 0 ? 0u : static_cast<uint32_t>(xch.v[parity][warp - 1][0]);
      parity ^= 1;
      if (!sp.update(em, p)) overflow = true;
    }
    if (t == 0) p.out[s] = overflow ? kMsvOverflow : sp.xJ;
  }
}

// ---- Viterbi filter ---------------------------------------------------------------------------------------

__device__ inline int floor16(int v) { return max(v, -32768); }
__device__ inline int floorS(int v) { return max(v, -65536); }

// The Viterbi special states (VitSpecials of vitfilter.cpp: int arithmetic stored in int16).
struct VitSpecialsD {
  int xN, xB, xJ, xC;
  __device__ void init(const VitParams& p, int move) {
    xN = p.base;
    xB = static_cast<int16_t>(xN + move);
    xJ = kNeg;
    xC = kNeg;
  }
  __device__ void update(int xE, const VitParams& p, int move) {
    xN = static_cast<int16_t>(xN + p.n_loop);
    xC = static_cast<int16_t>(max(xC + p.c_loop, xE + p.e_move));
    xJ = static_cast<int16_t>(max(xJ + p.j_loop, xE + p.e_loop));
    xB = static_cast<int16_t>(max(xJ + move, xN + move));
  }
};

// Transition sources of VitRow: slot tt (BM, MM, IM, DM into node; MD, MI, II, DD out of node) of the
// thread's node j. TransRegs keeps them in registers, two int16 per word (sub-warp kernels, Q <= 16);
// TransPtr reads the
// [(tt*Q + j)*G + t] table (shared or global memory) through a generic pointer (block kernels).
template <int Q>
struct TransRegs {
  uint32_t w[4][Q];
  __device__ void load(const int16_t* trans, int rank) {
    const int16_t* t = trans + rank * vit_trans_stride(Q);
#pragma unroll
    for (int j = 0; j < Q; ++j) {
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        const int lo = t[(2 * h) * Q + j], hi = t[(2 * h + 1) * Q + j];
        w[h][j] = static_cast<uint32_t>(static_cast<uint16_t>(lo)) | (static_cast<uint32_t>(hi) << 16);
      }
    }
  }
  __device__ __forceinline__ int get(int tt, int j) const {
    const uint32_t v = w[tt >> 1][j];
    return (tt & 1) ? (static_cast<int>(v) >> 16) : static_cast<int>(static_cast<int16_t>(v & 0xffffu));
  }
};

template <int Q>
struct TransPtr {
  const int16_t* p;  // the thread's row of the table: table + t * vit_trans_stride(Q)
  // A volatile read: the loads do not depend on the row, and without it the compiler hoists all 8 Q of them
  // out of the row loop into registers, which spill.
  __device__ __forceinline__ int get(int tt, int j) const {
    return *(static_cast<const volatile int16_t*>(p) + (tt * Q + j));
  }
};

// M and I of one row (descending j so that j-1 still holds row i-1), the local D pass, and this thread's
// D transfer function c -> max(A, c + S). pm/pi/pd: row i-1's values of the node before the thread's first.
template <int Q>
struct VitRow {
  int M[Q], I[Q], D[Q];
  __device__ __forceinline__ void init() {
#pragma unroll
    for (int j = 0; j < Q; ++j) M[j] = I[j] = D[j] = kNeg;
  }
  template <class Tr>
  __device__ __forceinline__ int row(const int16_t* emit, int estride, const Tr& tr, int xB, int pm, int pi,
                                     int pd, int& A, int& S) {
    int emax = kNeg;
#pragma unroll
    for (int j = Q - 1; j >= 0; --j) {
      const int mm = j ? M[j - 1] : pm, ii = j ? I[j - 1] : pi, dd = j ? D[j - 1] : pd;
      // DPX max(a + b, c) forms (one instruction each on sm_90); same values as the plain expressions.
      int sv = __viaddmax_s32(xB, tr.get(0, j), kNeg);  // floor16 of the maximum, folded in
      sv = __viaddmax_s32(mm, tr.get(1, j), sv);
      sv = __viaddmax_s32(ii, tr.get(2, j), sv);
      sv = __viaddmax_s32(dd, tr.get(3, j), sv);
      sv = min(__viaddmax_s32(sv, emit[j * estride], kNeg), 32767);
      const int iv = __viaddmax_s32(I[j], tr.get(6, j), __viaddmax_s32(M[j], tr.get(5, j), kNeg));
      M[j] = sv;
      I[j] = iv;
      emax = max(emax, sv);
    }
    // Local D pass assuming -inf enters the thread's first node (fix() adds the real carry-in):
    // D[0] = -32768, D[j] = max(M[j-1] + MD, D[j-1] + DD).
    int dcur = kNeg, s = 0;
#pragma unroll
    for (int j = 0; j < Q; ++j) {
      D[j] = dcur;
      const int ddt = tr.get(7, j);
      dcur = __viaddmax_s32(dcur, ddt, __viaddmax_s32(M[j], tr.get(4, j), kNeg));
      s = __viaddmax_s32(s, ddt, -65536);
    }
    A = dcur;
    S = s;
    return emax;
  }
  // D[j] = max(D[j], c + P[j]) with P the prefix sums of DD within the thread (bottom clamped).
  template <class Tr>
  __device__ __forceinline__ void fix(const Tr& tr, int c) {
    if (c <= kNeg) return;  // c + P <= -32768: nothing changes
    int pc = c;
#pragma unroll
    for (int j = 0; j < Q; ++j) {
      D[j] = max(D[j], pc);  // (D[j] >= -32768 already, so pc needs no floor here)
      pc = __viaddmax_s32(pc, tr.get(7, j), -65536);
    }
  }
};

// kRegs: the transitions in registers (TransRegs, Q <= 16), else in shared memory after the emissions.
template <int Q, bool kRegs>
__device__ __forceinline__ void vit_subwarp(const DbView& db, const VitParams& p) {
  extern __shared__ int16_t
      smem_emit[];  // [(x*Q + j)*G + t], then (!kRegs) the transitions [(tt*Q + j)*G + t]
  const int G = p.G;
  for (int w = static_cast<int>(threadIdx.x); w < p.emit_entries; w += blockDim.x) smem_emit[w] = p.emit[w];
  if constexpr (!kRegs) {
    for (int w = static_cast<int>(threadIdx.x); w < G * vit_trans_stride(Q); w += blockDim.x)
      smem_emit[p.emit_entries + w] = p.trans[w];
  }
  __syncthreads();
  const SubGroup g(G);
  using Trans = std::conditional_t<kRegs, TransRegs<Q>, TransPtr<Q>>;
  Trans tr;
  const int trank = g.rank < G ? g.rank : 0;  // idle lanes read rank 0's values
  if constexpr (kRegs) {
    tr.load(p.trans, trank);
  } else {
    tr = TransPtr<Q>{smem_emit + p.emit_entries + trank * vit_trans_stride(Q)};
  }
  WarpWork work;
  for (;;) {
    const uint32_t base = work.next(db.counter, g.S);
    if (base >= db.n) break;
    const uint32_t item = base + static_cast<uint32_t>(g.gi);
    const bool has = g.gi < g.S && item < db.n;
    const uint32_t s = has ? db.items[item] : 0u;
    int L = has ? db.len[s] : 0;
    const uint8_t* res = has ? db.res + (db.off[s] - db.base) : db.res;
    const int move = has ? p.move[s] : 0;
    VitSpecialsD sp;
    sp.init(p, move);
    bool overflow = false;
    VitRow<Q> st;
    st.init();
    const int Lmax = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(L)));
    for (int i = 0; i < Lmax; ++i) {
      const bool live = i < L;
      const int x = live ? static_cast<int>(__ldg(res + i)) : 0;
      int pm = __shfl_up_sync(kFull, st.M[Q - 1], 1), pi = __shfl_up_sync(kFull, st.I[Q - 1], 1),
          pd = __shfl_up_sync(kFull, st.D[Q - 1], 1);
      if (g.rank == 0) pm = pi = pd = kNeg;
      int A, S;
      const int emax =
          st.row(smem_emit + (x * G + trank) * vit_emit_stride(Q), 1, tr, sp.xB, pm, pi, pd, A, S);
      // Inclusive scan of the transfer functions over the group's ranks.
      for (int off = 1; off < G; off <<= 1) {
        const int a2 = __shfl_up_sync(kFull, A, off), s2 = __shfl_up_sync(kFull, S, off);
        if (g.rank >= off) {
          A = max(A, floor16(a2 + S));
          S = floorS(S + s2);
        }
      }
      const int a1 = __shfl_up_sync(kFull, A, 1), s1 = __shfl_up_sync(kFull, S, 1);
      const int c = g.rank == 0 ? kNeg : floor16(max(a1, kNeg + s1));
      st.fix(tr, c);
      const int e = group_max(emax, g, G);
      if (live && !overflow) {
        if (e >= 32767) {
          overflow = true;
          L = i + 1;
        } else {
          sp.update(e, p, move);
        }
      }
    }
    if (has && g.rank == 0) p.out[s] = overflow ? kVitOverflow : sp.xC;
  }
}

template <int Q>
__global__ void __launch_bounds__(Q >= 64 ? 1024 : 512) vit_block(DbView db, VitParams p) {
  extern __shared__ int16_t smem_trans[];  // the transition table when it fits (p.trans_in_smem)
  __shared__ VitXch xch;
  __shared__ uint32_t item_s;
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5, nwarps = blockDim.x >> 5;
  const int G = p.G;
  const int16_t* trans_tab = p.trans;
  if (p.trans_in_smem) {
    for (int w = t; w < G * vit_trans_stride(Q); w += blockDim.x) smem_trans[w] = p.trans[w];
    trans_tab = smem_trans;
  }
  const TransPtr<Q> tr{trans_tab + t * vit_trans_stride(Q)};
  for (;;) {
    __syncthreads();
    if (t == 0) item_s = atomicAdd(db.counter, 1u);
    __syncthreads();
    const uint32_t item = item_s;
    if (item >= db.n) break;
    const uint32_t s = db.items[item];
    const int L = db.len[s];
    const uint8_t* res = db.res + (db.off[s] - db.base);
    const int move = p.move[s];
    VitSpecialsD sp;
    sp.init(p, move);
    bool overflow = false;
    VitRow<Q> st;
    st.init();
    int par = 0;
    int pm0 = kNeg, pi0 = kNeg, pd0 = kNeg;  // lane 0's row i-1 inputs: the previous warp's last node
    for (int i = 0; i < L && !overflow; ++i) {
      const int x = static_cast<int>(__ldg(res + i));
      int pm = __shfl_up_sync(kFull, st.M[Q - 1], 1), pi = __shfl_up_sync(kFull, st.I[Q - 1], 1),
          pd = __shfl_up_sync(kFull, st.D[Q - 1], 1);
      if (lane == 0) {
        pm = pm0;
        pi = pi0;
        pd = pd0;
      }
      int A, S;
      const int emax = st.row(p.emit + (x * G + t) * vit_emit_stride(Q), 1, tr, sp.xB, pm, pi, pd, A, S);
      for (int off = 1; off < 32; off <<= 1) {
        const int a2 = __shfl_up_sync(kFull, A, off), s2 = __shfl_up_sync(kFull, S, off);
        if (lane >= off) {
          A = max(A, floor16(a2 + S));
          S = floorS(S + s2);
        }
      }
      const int e_w = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(emax + 32768))) - 32768;
      if (lane == 31) {
        xch.a[par][warp] = A;
        xch.s[par][warp] = S;
        xch.m[par][warp] = st.M[Q - 1];
        xch.i[par][warp] = st.I[Q - 1];
      }
      if (lane == 0) xch.e[par][warp] = e_w;
      __syncthreads();
      // D entering this warp: the transfer functions of the warps before it, applied to -inf.
      int cw = kNeg;
      for (int w = 0; w < warp; ++w) cw = floor16(max(xch.a[par][w], cw + xch.s[par][w]));
      const int a1 = __shfl_up_sync(kFull, A, 1), s1 = __shfl_up_sync(kFull, S, 1);
      const int c = lane == 0 ? cw : floor16(max(a1, cw + s1));
      st.fix(tr, c);
      int e = kNeg;
      for (int w = 0; w < nwarps; ++w) e = max(e, xch.e[par][w]);
      if (lane == 0 && warp > 0) {
        pm0 = xch.m[par][warp - 1];
        pi0 = xch.i[par][warp - 1];
      }
      if (lane == 31) xch.d[par][warp] = st.D[Q - 1];
      __syncthreads();
      if (lane == 0 && warp > 0) pd0 = xch.d[par][warp - 1];
      par ^= 1;
      if (e >= 32767) {
        overflow = true;
      } else {
        sp.update(e, p, move);
      }
    }
    if (t == 0) p.out[s] = overflow ? kVitOverflow : sp.xC;
  }
}

template <int Q>
__global__ void __launch_bounds__(kSubWarpThreads) vit_subwarp_r(DbView db, VitParams p) {
  vit_subwarp<Q, true>(db, p);
}
template <int Q>
__global__ void __launch_bounds__(kSubWarpThreads) vit_subwarp_s(DbView db, VitParams p) {
  vit_subwarp<Q, false>(db, p);
}

// ---- dispatch ------------------------------------------------------------------------------------------

}  // namespace

// Launches kernel<<<grid, threads, smem>>> (raising the kernel's dynamic shared memory limit when needed).
template <class P>
void launch_one(void (*kernel)(DbView, P), int grid, int threads, int smem, cudaStream_t stream,
                const DbView& db, const P& p) {
  if (smem > 48 * 1024)
    WS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  // The grids are persistent (work comes from a counter, the sub-warp kernels' first round is static and
  // interleaved across blocks): never more blocks than are resident at once, or the blocks that start late
  // would hold some of the list's longest targets.
  int device = 0, sms = 0, per_sm = 0;
  WS_CUDA_CHECK(cudaGetDevice(&device));
  WS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  WS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  grid = std::max(1, std::min(grid, std::max(1, per_sm) * sms));
  kernel<<<grid, threads, smem, stream>>>(db, p);
}

// One case of a launch switch: the instantiation for node-run length Q.
#define WS_CASE(kernel, Q, threads) \
  case Q: launch_one(kernel<Q>, shape.grid, threads, shape.smem_bytes, stream, db, p); break;
// The sub-warp SSV/MSV instantiations (filter_launch.hpp kSsvSubQ) and the block ones (kSsvBlockQ).
// clang-format off
#define WS_SUB16_CASES(kernel) \
  WS_CASE(kernel, 2, kSubWarpThreads) WS_CASE(kernel, 4, kSubWarpThreads) WS_CASE(kernel, 6, kSubWarpThreads) \
  WS_CASE(kernel, 8, kSubWarpThreads) WS_CASE(kernel, 10, kSubWarpThreads) WS_CASE(kernel, 12, kSubWarpThreads) \
  WS_CASE(kernel, 16, kSubWarpThreads) WS_CASE(kernel, 20, kSubWarpThreads) WS_CASE(kernel, 24, kSubWarpThreads) \
  WS_CASE(kernel, 28, kSubWarpThreads) WS_CASE(kernel, 32, kSubWarpThreads) WS_CASE(kernel, 36, kSubWarpThreads) \
  WS_CASE(kernel, 40, kSubWarpThreads) WS_CASE(kernel, 44, kSubWarpThreads) WS_CASE(kernel, 48, kSubWarpThreads) \
  WS_CASE(kernel, 52, kSubWarpThreads) WS_CASE(kernel, 56, kSubWarpThreads) WS_CASE(kernel, 60, kSubWarpThreads) \
  WS_CASE(kernel, 64, kSubWarpThreads)
#define WS_BLOCK16_CASES(kernel) \
  WS_CASE(kernel, 16, shape.block) WS_CASE(kernel, 32, shape.block) WS_CASE(kernel, 64, shape.block)

void launch_ssv(const LaunchShape& shape, const DbView& db, const SsvParams& p, cudaStream_t stream) {
  if (!shape.block_mode) {
    switch (shape.Q) {
      WS_SUB16_CASES(ssv_subwarp)
      default: throw_bad_shape("ssv", shape);
    }
  } else {
    switch (shape.Q) {
      WS_BLOCK16_CASES(ssv_block)
      default: throw_bad_shape("ssv", shape);
    }
  }
  WS_CUDA_CHECK_LAUNCH();
}

void launch_msv(const LaunchShape& shape, const DbView& db, const MsvParams& p, cudaStream_t stream) {
  if (!shape.block_mode) {
    switch (shape.Q) {
      WS_SUB16_CASES(msv_subwarp)
      default: throw_bad_shape("msv", shape);
    }
  } else {
    switch (shape.Q) {
      WS_BLOCK16_CASES(msv_block)
      default: throw_bad_shape("msv", shape);
    }
  }
  WS_CUDA_CHECK_LAUNCH();
}

void launch_vit(const LaunchShape& shape, const DbView& db, const VitParams& p, cudaStream_t stream) {
  if (!shape.block_mode && shape.Q <= kVitSubRegsMaxQ) {
    if (shape.trans_regs) {
      switch (shape.Q) {
        WS_CASE(vit_subwarp_r, 1, kSubWarpThreads)  WS_CASE(vit_subwarp_r, 2, kSubWarpThreads)
        WS_CASE(vit_subwarp_r, 4, kSubWarpThreads)  WS_CASE(vit_subwarp_r, 8, kSubWarpThreads)
        WS_CASE(vit_subwarp_r, 12, kSubWarpThreads) WS_CASE(vit_subwarp_r, 16, kSubWarpThreads)
        default: throw_bad_shape("viterbi", shape);
      }
    } else {
      switch (shape.Q) {
        WS_CASE(vit_subwarp_s, 1, kSubWarpThreads)  WS_CASE(vit_subwarp_s, 2, kSubWarpThreads)
        WS_CASE(vit_subwarp_s, 4, kSubWarpThreads)  WS_CASE(vit_subwarp_s, 8, kSubWarpThreads)
        WS_CASE(vit_subwarp_s, 12, kSubWarpThreads) WS_CASE(vit_subwarp_s, 16, kSubWarpThreads)
        default: throw_bad_shape("viterbi", shape);
      }
    }
  } else if (!shape.block_mode) {
    switch (shape.Q) {
      WS_CASE(vit_subwarp_s, 32, kSubWarpThreads) WS_CASE(vit_subwarp_s, 48, kSubWarpThreads)
      WS_CASE(vit_subwarp_s, 64, kSubWarpThreads) WS_CASE(vit_subwarp_s, 72, kSubWarpThreads)
      WS_CASE(vit_subwarp_s, 80, kSubWarpThreads)
      default: throw_bad_shape("viterbi", shape);
    }
  } else {
    switch (shape.Q) {
      WS_CASE(vit_block, 8, shape.block)  WS_CASE(vit_block, 16, shape.block) WS_CASE(vit_block, 32, shape.block)
      WS_CASE(vit_block, 64, shape.block) WS_CASE(vit_block, 100, shape.block)
      default: throw_bad_shape("viterbi", shape);
    }
  }
  WS_CUDA_CHECK_LAUNCH();
}
// clang-format on

#undef WS_BLOCK16_CASES
#undef WS_SUB16_CASES
#undef WS_CASE

int sub_warp_threads() { return kSubWarpThreads; }

}  // namespace warpsearch::hmm::gpu
