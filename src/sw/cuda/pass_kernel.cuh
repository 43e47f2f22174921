// pass_kernel.cuh: the CUDA kernels of the pass engine (gpu_engine.hpp).
//
//   prep_kernel<Lane>                 per column of every slot: the letter word (profile offsets of the
//                                     two halves' target residues) and the first tile's top border
//   pass_kernel<Lane, G, R, kLocal>   the skewed wavefront; one warp = 32 / G slots of one bucket
//   pass_smem_bytes()                 its dynamic shared memory
//
// Thread-to-cell mapping and DP invariants: see pass_cells.hpp (shared with the host emulator). Here:
//   * Lane t of a group receives, at step s, from lane t-1 (__shfl_up_sync, width G) the letter word,
//     H of the row above its first row and F of its first row at column j = s - t; lane 0 takes them
//     from the letters / border arrays instead (prefetched one 4-column chunk ahead). Lane G-1 writes its
//     last row's H and the next row's F back to the border array at column j (in place: the value
//     written at column j depends, through the shuffles, on the value lane 0 read there G-1 steps
//     earlier, so no write can overtake its read; tiles are separated by __syncwarp()).
//   * Control flow is warp-uniform (all slots of a warp share cols and tiles), so every shuffle and vote
//     uses the full mask. The first round_up(G - 1, 4) steps run a guarded body: lanes whose column is
//     still negative leave their state untouched.
//   * Shared memory: the class score table (kMaxCodes x K bytes, used only to build profiles), then per
//     warp the query profiles laid out [half][class][lane][R bytes]: at every step each lane loads the R
//     scores of its rows for one class with one 4/8/16-byte access; consecutive lanes hit consecutive
//     R-byte words, so a warp's access is bank-conflict free whatever classes the lanes read (a direct
//     32x32 table lookup per cell would conflict randomly and cost a load per cell).
//   * Local tracking: per-step column max (vimax3), strict improvement checked for the warp with
//     __any_sync; only improving lanes search their rows. Global/semiglobal: only the lane owning query
//     row m-1 (end tile) captures, in tiles where some lane of the warp does.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "sw/cuda/pass_cells.hpp"
#include "sw/gpu_plan.hpp"

namespace warpsearch::sw::gpu {

inline constexpr unsigned kFullMask = 0xFFFFFFFFu;
inline constexpr int kPrepThreads = 256;

// Dynamic shared memory of the pass kernels (layout in the file comment). Lanes address it with 32-bit
// byte offsets from this base, which the compiler keeps as a uniform register.
extern __shared__ __align__(16) std::uint8_t pass_smem[];

// Blocks per SM the pass kernels are compiled for: 5 for R = 8 (at most 96 registers, so that DNA's
// small profiles fit 5 blocks per SM; with ptxas's own choice the whole Aligner was 4-5 % slower on an
// H200), no bound for R = 16 (about 140 registers).
constexpr int pass_min_blocks(int rows) { return rows == 8 ? 5 : 1; }

constexpr std::size_t ctab_bytes(int letters) {
  return (static_cast<std::size_t>(kMaxCodes) * static_cast<std::size_t>(letters) + 15) / 16 * 16;
}
constexpr std::size_t pass_smem_bytes(int pairs, int letters, int rows) {
  return ctab_bytes(letters) + static_cast<std::size_t>(kBlockWarps) * kLaneBytes *
                                   static_cast<std::size_t>(pairs) * static_cast<std::size_t>(letters) *
                                   static_cast<std::size_t>(rows);
}

// One block per warp record of a bucket: fills letters and border for all its slots' columns.
template <class L>
__global__ void __launch_bounds__(kPrepThreads)
    prep_kernel(const PassParams p, std::uint32_t warp_begin, int g, int rows) {
  __shared__ std::uint8_t code_class[kMaxCodes];
  if (threadIdx.x < kMaxCodes) code_class[threadIdx.x] = p.code_class[threadIdx.x];
  __syncthreads();
  const WarpInfo wi = p.warps[warp_begin + blockIdx.x];
  const std::uint32_t total = static_cast<std::uint32_t>(32 / g) * wi.cols;
  for (std::uint32_t idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const SlotInfo& slot = p.slots[wi.first_slot + idx / wi.cols];
    const std::uint64_t c = wi.column + idx;
    std::uint32_t letter, bh, bf;
    prep_column<L>(p, slot, code_class, rows, idx % wi.cols, letter, bh, bf);
    p.letters[c] = letter;
    reinterpret_cast<uint2*>(p.border)[c] = make_uint2(bh, bf);
  }
}

// The state of one lane over the sweeps of its slot.
template <class L, int G, int R, bool kLocal>
struct Sweep {
  using V = typename L::V;
  using Tracker = std::conditional_t<kLocal, LocalTracker<L, R>, EdgeTracker<L>>;

  // per slot
  std::uint32_t lane_prof;  // byte offset of this lane's profile words in pass_smem
  const uint4* letters4;    // 4 columns per element
  uint2* border;            // 1 column per element
  const uint4* border4;     // 2 columns per element
  int t;
  int steps;  // cols
  bool global;
  V neg_x;
  V open;      // Column::open_operand
  V neg_open;  // Column::neg_open_operand
  // known scores (local mode, warps flagged kWarpKnownScores; see sweep())
  V target;       // per half: the known score S (0 for an empty half)
  int lim[2];     // per half: smallest column where the group found S in an earlier tile
  bool empty[2];  // per half: no job
  int valid;      // border columns [0, valid) hold values written by the previous tile
  // per tile
  int first_row;
  bool write_border;
  bool capture_any;
  // running state
  Column<L, R, kLocal> col;
  Tracker tr;
  std::uint32_t x;
  V out_h;
  V out_f;
  uint4 lc;
  uint4 bc0;
  uint4 bc1;

  template <bool kGuard, bool kKnown>
  __device__ WS_FI void step(int s, std::uint32_t lx, std::uint32_t bh, std::uint32_t bf) {
    const int j = s - t;
    std::uint32_t xin = __shfl_up_sync(kFullMask, x, 1, G);
    V hin = __shfl_up_sync(kFullMask, out_h, 1, G);
    V fin = __shfl_up_sync(kFullMask, out_f, 1, G);
    if (t == 0) {
      xin = lx;
      hin = bh;
      fin = bf;
      // A border column the previous tile stopped before: local mode's lowest values (H = 0,
      // F = -(O + X)) in place of stale ones, so every value computed from it is <= the true one.
      if (kKnown && s >= valid) {
        hin = Column<L, R, kLocal>::low_h(open);
        fin = Column<L, R, kLocal>::low_f(open);
      }
    }
    x = xin;
    std::uint32_t wa[R / 4];
    std::uint32_t wb[R / 4];
    load_words<R>(pass_smem + lane_prof + (xin & 0xFFFFu), wa);
    if constexpr (L::kPairs == 2) {
      load_words<R>(pass_smem + lane_prof + (xin >> 16), wb);
    } else {
      WS_UNROLL
      for (int q = 0; q < R / 4; ++q) wb[q] = 0;
    }
    V f = fin;
    if (!kGuard || j >= 0)
      col.template step<Column<L, R, kLocal>::kBiased && !kKnown>(wa, wb, hin, f, neg_x, open, neg_open);
    out_h = col.H[R - 1];
    out_f = f;
    if (write_border && t == G - 1 && (!kGuard || j >= 0)) border[j] = make_uint2(out_h, out_f);
    if constexpr (kLocal) {
      const V next = tr.raised(col.H);
      const bool improves = next != tr.best;
      if (__any_sync(kFullMask, improves)) {
        if (improves) tr.improve(col.H, next, j, first_row);
      }
    } else {
      if (capture_any) tr.step(out_h, j, global);
    }
  }

  // Steps s0 .. s0+3; lane 0 prefetches the next chunk of letters and border.
  template <bool kGuard, bool kKnown>
  __device__ WS_FI void chunk(int s0) {
    uint4 nlc = lc, nbc0 = bc0, nbc1 = bc1;
    if (t == 0 && s0 + 4 < steps) {
      nlc = letters4[s0 / 4 + 1];
      nbc0 = border4[s0 / 2 + 2];
      nbc1 = border4[s0 / 2 + 3];
    }
    step<kGuard, kKnown>(s0, lc.x, bc0.x, bc0.y);
    step<kGuard, kKnown>(s0 + 1, lc.y, bc0.z, bc0.w);
    step<kGuard, kKnown>(s0 + 2, lc.z, bc1.x, bc1.y);
    step<kGuard, kKnown>(s0 + 3, lc.w, bc1.z, bc1.w);
    lc = nlc;
    bc0 = nbc0;
    bc1 = nbc1;
  }

  // Local mode without known scores, every 4 steps: each lane's best is raised to the group's best
  // minus one (the tile floor's rule, begin_tile), so a lane no longer records cells below a value
  // another lane already holds. Such a lane's stale (best, column, row) is dominated by that lane's
  // candidate, so the group's result is unchanged; fewer lanes improve (and so fewer steps run improve()).
  __device__ WS_FI void share_best() {
    V m = tr.best;
    WS_UNROLL
    for (int off = G / 2; off > 0; off /= 2) m = L::max(m, __shfl_xor_sync(kFullMask, m, off, G));
    tr.best = L::max(tr.best, L::add(m, L::splat(-1)));
  }

  // Known scores: half h of the group is settled once some lane found S at a column <= the column the
  // group's last lane has completed (min with lim[h], from earlier tiles); empty halves are settled.
  // True when every half of every group of the warp is settled after step s (warp-uniform).
  __device__ WS_FI bool settled(int s) const {
    const int last = s - (G - 1);
    bool p[2] = {true, true};
    WS_UNROLL
    for (int h = 0; h < L::kPairs; ++h) {
      const int found = tr.bj[h] >= 0 && tr.bj[h] < lim[h] ? tr.bj[h] : lim[h];
      p[h] = empty[h] || found <= last;
    }
    constexpr unsigned kLead = G == 32 ? 1u : 0xFFFFFFFFu / ((1u << G) - 1u);  // lane 0 of each group
    unsigned any = __ballot_sync(kFullMask, p[0]);
    if constexpr (L::kPairs == 2)
      any = group_any(any) & group_any(__ballot_sync(kFullMask, p[1]));
    else
      any = group_any(any);
    return (any & kLead) == kLead;
  }
  // Bit g * G of the result: any bit of group g set.
  static __device__ WS_FI unsigned group_any(unsigned b) {
    WS_UNROLL
    for (int k = 1; k < G; k <<= 1) b |= b >> k;
    return b;
  }

  // Row tiles, each swept over the warp's columns. With known scores (kKnown, local mode) the tracker
  // looks only for cells holding S (its floor is S - 1) and a tile ends as soon as the warp is settled;
  // the next tile then needs (and computes exactly) only the columns up to the group's limit, which
  // lie below `valid`: see the comment in step() for the columns beyond.
  template <bool kKnown>
  __device__ WS_FI void sweep(const PassParams& p, const SlotInfo& slot, const std::int8_t* ctab, int tiles) {
    constexpr int kGuarded = (G - 1 + 3) / 4 * 4;  // steps with lanes whose column is still negative
    valid = steps;
#pragma unroll 1
    for (int tile = 0; tile < tiles; ++tile) {
      first_row = tile * G * R + t * R;
      build_profile<L, R>(p, slot, ctab, first_row, pass_smem + lane_prof);
      col.init(p, slot, first_row);
      if constexpr (kLocal) {
        V floor;
        if constexpr (kKnown) {
          floor = target;  // only cells holding S are recorded
        } else {
          floor = tr.accumulated();  // the group's best so far
          WS_UNROLL
          for (int off = G / 2; off > 0; off /= 2)
            floor = L::max(floor, __shfl_xor_sync(kFullMask, floor, off, G));
        }
        tr.begin_tile(floor);
      } else {
        tr.begin_tile(slot, tile, t);
        capture_any = __any_sync(kFullMask, tr.capture != 0);
      }
      write_border = tile + 1 < tiles;
      x = 0;
      out_h = 0;
      out_f = 0;
      lc = make_uint4(0, 0, 0, 0);
      bc0 = lc;
      bc1 = lc;
      if (t == 0) {
        lc = letters4[0];
        bc0 = border4[0];
        bc1 = border4[1];
      }
      int s0 = 0;
      int next_valid = steps;
      const int guarded = kGuarded < steps ? kGuarded : steps;
#pragma unroll 1
      for (; s0 < guarded; s0 += 4) chunk<true, kKnown>(s0);
#pragma unroll 1
      for (; s0 < steps; s0 += 4) {
        chunk<false, kKnown>(s0);
        if constexpr (kLocal && !kKnown) share_best();
        if constexpr (kKnown) {
          if (settled(s0 + 3)) {
            next_valid = s0 + 3 - (G - 1) + 1;  // the last lane wrote columns 0 .. s0 + 3 - (G - 1)
            break;
          }
        }
      }
      if constexpr (kKnown) {
        WS_UNROLL
        for (int h = 0; h < 2; ++h) {
          int found = tr.bj[h] >= 0 && tr.bj[h] < lim[h] ? tr.bj[h] : lim[h];
          WS_UNROLL
          for (int off = G / 2; off > 0; off /= 2) {
            const int o = __shfl_xor_sync(kFullMask, found, off, G);
            found = o < found ? o : found;
          }
          lim[h] = found;
        }
        valid = next_valid;
      }
      tr.end_tile();
      __syncwarp();
    }
  }
};

template <class L, int G, int R, bool kLocal>
__global__ void __launch_bounds__(kBlockWarps * 32, pass_min_blocks(R))
    pass_kernel(const PassParams p, std::uint32_t warp_begin, std::uint32_t warp_count) {
  static_assert(G >= 4 && G <= 32 && (G & (G - 1)) == 0, "group size: a power of two from 4 to 32");
  const int letters = p.letters_count;
  for (int i = static_cast<int>(threadIdx.x); i < kMaxCodes * letters; i += static_cast<int>(blockDim.x))
    pass_smem[i] = static_cast<std::uint8_t>(p.ctab[i]);
  __syncthreads();
  const unsigned warp_in_block = threadIdx.x / 32;
  const std::uint32_t w = blockIdx.x * kBlockWarps + warp_in_block;
  if (w >= warp_count) return;  // whole warps leave
  const unsigned lane = threadIdx.x % 32;
  const int group = static_cast<int>(lane) / G;
  const WarpInfo wi = p.warps[warp_begin + w];
  const SlotInfo& slot = p.slots[wi.first_slot + static_cast<std::uint32_t>(group)];
  const std::uint64_t col0 = wi.column + static_cast<std::uint64_t>(group) * wi.cols;

  Sweep<L, G, R, kLocal> sw;
  sw.lane_prof = static_cast<std::uint32_t>(ctab_bytes(letters) + static_cast<std::size_t>(warp_in_block) *
                                                                      kLaneBytes * L::kPairs * letters * R) +
                 lane * R;
  sw.letters4 = reinterpret_cast<const uint4*>(p.letters + col0);
  sw.border = reinterpret_cast<uint2*>(p.border) + col0;
  sw.border4 = reinterpret_cast<const uint4*>(sw.border);
  sw.t = static_cast<int>(lane) % G;
  sw.steps = static_cast<int>(wi.cols);
  sw.global = p.mode == static_cast<std::int32_t>(Mode::kGlobal);
  sw.neg_x = L::splat(-static_cast<std::int64_t>(p.extend));
  sw.open = Column<L, R, kLocal>::open_operand(p);
  sw.neg_open = Column<L, R, kLocal>::neg_open_operand(p);
  if constexpr (kLocal) sw.tr.bias = static_cast<int>(stored_bias<L>(p));
  sw.capture_any = false;
  const auto* ctab = reinterpret_cast<const std::int8_t*>(pass_smem);
  if constexpr (kLocal) {
    if ((wi.flags & kWarpKnownScores) != 0) {  // warp-uniform
      sw.target = L::pack(slot.half[0].score, slot.half[1].score);
      for (int h = 0; h < 2; ++h) {
        sw.lim[h] = 0x7FFFFFFF;
        sw.empty[h] = h >= L::kPairs || slot.half[h].job < 0;
      }
      sw.template sweep<true>(p, slot, ctab, static_cast<int>(wi.tiles));
    } else {
      sw.template sweep<false>(p, slot, ctab, static_cast<int>(wi.tiles));
    }
  } else {
    sw.template sweep<false>(p, slot, ctab, static_cast<int>(wi.tiles));
  }

  // Reduce each half's candidates over the group (a total order: every lane ends with the best).
  WS_UNROLL
  for (int h = 0; h < L::kPairs; ++h) {
    const HalfInfo& half = slot.half[h];
    Candidate c = sw.tr.result(h, half);
    WS_UNROLL
    for (int off = G / 2; off > 0; off /= 2) {
      const Candidate o{__shfl_xor_sync(kFullMask, c.v, off, G), __shfl_xor_sync(kFullMask, c.j, off, G),
                        __shfl_xor_sync(kFullMask, c.i, off, G)};
      if (better(o, c)) c = o;
    }
    if (sw.t == 0 && half.job >= 0) p.results[half.job] = make_end(kLocal, c);
  }
}

}  // namespace warpsearch::sw::gpu
