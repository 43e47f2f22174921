// scan_kernel.cuh: the CUDA kernel of the scan's kernel 1 (gpu_runner.cu): the DP of model.hpp with
// origins, column records and column states, for many section tasks of one target in one launch.
//
// Contents
//   TaskInfo, BoundaryCell, KernelParams    device-visible launch records (filled by gpu_runner.cu)
//   warp_smem_bytes<R>()                     shared memory of one warp
//   scan_kernel<R>                           the persistent kernel
//
// Work decomposition. The query rows are padded at the TOP with `pad` virtual rows to S strips of 32*R
// rows. A task's columns are cut into column blocks of `block_width` columns (a multiple of the chunk of
// 32 columns; the last block of a task may be narrower). A block's work unit is a group of
// kWarpsPerBlock consecutive strips of one task over one column block (warp w: strip group *
// kWarpsPerBlock + w). Units are numbered block-major (unit = (column block * groups + group) * tasks +
// task) and taken in that order from an atomic counter by resident blocks. A unit depends only on units
// with smaller numbers: the strip above over the same column block (released chunk by chunk through a
// per-(task, strip) progress flag) and the same strips over the previous column block (its row states,
// released through a per-(task, group) count of finished blocks). The lowest unfinished unit therefore
// always runs: no deadlock, whatever the residency. Small units remove the wave quantization of whole-
// strip units (the last wave of a few long units running on a partly idle GPU).
//
// Between column blocks a strip's state lives in the task's end-state rows (TaskInfo::end): the last
// unit writes the true end state there, earlier ones the state after their block, which the next block
// of the same strip reads (through L2: another SM may have written it). Lane 0 also needs H(i0 - 1, j - 1)
// across the cut: saved per (task, strip) in `diag` at the end of each unit.
//
// Inside a unit: lane l owns the R consecutive rows i0 = strip*32R + l*R - pad .. i0+R-1 and at step s
// computes column j = s - l (relative to the task's start), so lane l receives from lane l-1
// (__shfl_up_sync) the bottom row of the cell above it, computed one step earlier: H(i0-1, j), F(i0-1, j)
// with their origins, and the running best of column j over the rows above (score, row, origin). H of
// the diagonal, H(i0-1, j-1), is the previous step's H input. Lane 0 reads these from the warp's input
// chunk in shared memory instead: the boundary row written by strip - 1 (or the zero row above the
// table for strip 0). Lane 31's outputs go to a staging ring and, chunk by chunk (32 columns), to the
// boundary row of strip + 1 in global memory (double-buffered per task by strip parity, released with a
// per-(task, strip) progress flag) or, for the last strip, to the column records of owned columns.
//
// Boundary safety: strip s+2 overwrites chunk c of buffer s%2 only after strip s+1 released chunk c of
// its own output, which it does after it loaded chunk c of buffer s%2; so no write overtakes a read.
//
// Cell arithmetic (model.hpp, with these exact equivalences):
//   * H is kept as HO = H - (O + X) (one subtraction per cell serves E of the next column and F of the
//     next row); D = HO(i-1,j-1) + s + (O + X) (one IADD3).
//   * E and F are kept unclamped: E' = max(E - X, HO) >= -(O + X), so no overflow, and max(E', 0) equals
//     the clamped E of model.hpp at every cell (induction: clamp0(max(clamp0(E) - X, HO)) =
//     clamp0(max(E - X, -X, HO)) = clamp0(max(E - X, HO)) as -X <= 0). Where the clamped value is
//     positive both pick the same operand, so origins agree wherever they are used; outputs clamp.
//   * Gap origin: open wins ties (E' == HO <=> HO >= E - X). H = max(D, E, F) then clamped at 0 (HO
//     floor -(O + X)); H's origin: D if D == H, else E if E >= F, else F (first of D, E, F).
//   * D's origin: H(i-1,j-1)'s origin if H(i-1,j-1) > 0, else (i, j).
//   * Origins of zero values are garbage internally and never read where they matter; state outputs
//     canonicalize (zero value -> kNoOrigin). Query origins are stored relative to the lane's first
//     row (qstart - i0), so a new start is the row offset r (an immediate); a value passed one lane (or
//     one strip) down is converted by subtracting R. The column best carries absolute coordinates.
//   * Virtual rows score -1 against everything and start from zero, so their H stays 0 and they feed
//     row 0 exactly the zero row above the table (H = 0, F <= 0); the column best ignores them (it only
//     moves on a strictly larger score).
//   * Column best: the lane's maximum over its R rows; only when it beats the incoming best (strictly:
//     ties keep the smaller row) the lane searches its first row holding it (a branch that whole warps
//     skip once the rows above hold the column's best, i.e. mostly after the first strips).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>

#include "scan/model.hpp"

namespace warpsearch::scan::gpu {

inline constexpr int kWarpsPerBlock = 4;
inline constexpr int kChunk = 32;  // columns per boundary chunk (one per lane)
inline constexpr unsigned kFullMask = 0xFFFFFFFFu;
inline constexpr int kVirtualScore = -1;  // score of virtual (padding) rows against every class

struct BoundaryCell;

// One task of a launch (sections.hpp SectionTask, device form). Every buffer is the task's own (a launch
// may combine the tasks of two runners, i.e. two queries of one length, on one target each).
struct TaskInfo {
  std::int32_t start = 0;                // first column computed (absolute)
  std::int32_t width = 0;                // columns computed (end - start), > 0
  std::int32_t own_rel = 0;              // own_begin - start: records kept from here
  std::int32_t probe_rel = -1;           // own_begin - 1 - start when a probe is wanted, else -1
  const std::uint8_t* target = nullptr;  // score class of every target column (whole target)
  const std::uint8_t* query = nullptr;   // query codes, m
  ColumnRecord* records = nullptr;       // whole target, column j at index j
  const RowState* initial = nullptr;     // m rows: state after column start - 1; null: all zero
  RowState* probe = nullptr;             // m rows: state after column own_begin - 1; null: none
  RowState* end = nullptr;               // m rows: state after column start + width - 1
  BoundaryCell* boundary = nullptr;      // two boundary rows of width cells (strip parity)
  std::uint32_t* flags = nullptr;        // [strip]: output chunks (from start) released
  std::uint32_t* done = nullptr;         // [group]: column blocks finished by the group's units
  int4* diag = nullptr;                  // [strip]: lane 0's H(i0 - 1, j - 1) (HO, q, t) after a block
};

// One column of a strip's bottom boundary (48 bytes, three 16-byte words).
struct alignas(16) BoundaryCell {
  std::int32_t ho, hq, ht, f;       // H(i,j) - (O + X) of the strip's last row, its origin (q relative to the
                                    // last lane's first row), F(i,j) unclamped
  std::int32_t fq, ft, bs, br;      // F's origin; best of column j so far: score, row (absolute)
  std::int32_t bq, bt, pad0, pad1;  // the best's origin (absolute)
};
static_assert(sizeof(BoundaryCell) == 48);
static_assert(sizeof(RowState) == 24 && sizeof(ColumnRecord) == 16);

struct KernelParams {
  const std::int8_t* class_scores = nullptr;  // [class][kMaxCodes]: s(query code, class)
  const TaskInfo* tasks = nullptr;
  std::uint32_t* counter = nullptr;  // next unit
  std::int32_t m = 0;
  std::int32_t pad = 0;     // virtual rows above row 0
  std::int32_t strips = 0;  // S
  std::int32_t tasks_count = 0;
  std::int32_t classes = 0;
  std::int32_t ox = 0;           // O + X
  std::int32_t x = 0;            // X
  std::int32_t groups = 0;       // strip groups: ceil(S / kWarpsPerBlock)
  std::int32_t block_width = 0;  // columns per column block, a positive multiple of kChunk
  std::uint32_t units = 0;       // column blocks of the widest task * groups * tasks_count
};

// Shared memory of one warp: profile [classes][32 lanes][R bytes], input chunk (32 cells), staging ring
// (64 cells), target class ring (64 bytes).
template <int R>
constexpr std::size_t profile_bytes(int classes) {
  return static_cast<std::size_t>(classes) * 32 * R;
}
template <int R>
constexpr std::size_t warp_smem_bytes(int classes) {
  return profile_bytes<R>(classes) + (kChunk + 2 * kChunk) * sizeof(BoundaryCell) + 2 * kChunk;
}

#if defined(__CUDACC__)

extern __shared__ __align__(16) std::uint8_t scan_smem[];

// Sign-extended byte k of w (PTX prmt with sign replication: selector nibble k | 8).
__device__ __forceinline__ int score_byte(std::uint32_t w, int k) {
  const std::uint32_t ks = static_cast<std::uint32_t>(k) | 8u;
  const std::uint32_t sel = static_cast<std::uint32_t>(k) | (ks << 4) | (ks << 8) | (ks << 12);
  std::uint32_t d;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(d) : "r"(w), "r"(sel));
  return static_cast<int>(d);
}

template <int R>
__device__ __forceinline__ void load_profile(const std::uint8_t* p, std::uint32_t (&w)[R / 4]) {
  if constexpr (R == 16) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else if constexpr (R == 8) {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    w[0] = v.x, w[1] = v.y;
  } else {
    static_assert(R == 4, "R: 4, 8 or 16");
    w[0] = *reinterpret_cast<const std::uint32_t*>(p);
  }
}

__device__ __forceinline__ std::uint32_t load_acquire(std::uint32_t* p) {
  ::cuda::atomic_ref<std::uint32_t, ::cuda::thread_scope_device> a(*p);
  return a.load(::cuda::memory_order_acquire);
}
__device__ __forceinline__ void store_release(std::uint32_t* p, std::uint32_t v) {
  ::cuda::atomic_ref<std::uint32_t, ::cuda::thread_scope_device> a(*p);
  a.store(v, ::cuda::memory_order_release);
}

// One warp's unit: registers of lane `lane` and the warp's shared memory.
template <int R>
struct Unit {
  // this lane's rows: H - (O+X), unclamped E, origins (q relative to i0)
  int ho[R], e[R], hq[R], ht[R], eq[R], et[R];
  // H(i0-1, j-1) of the previous step (this lane's frame)
  int dho, dq, dt;
  // outputs of the last step: bottom row H - (O+X), F and origins (this lane's frame), column best
  int oho, oq, ot, of, ofq, oft;
  int bs, br, bq, bt;

  const TaskInfo* task;
  std::uint8_t* prof;      // this lane's profile words: prof + class * 32R
  BoundaryCell* in_chunk;  // 32 cells
  BoundaryCell* staging;   // 64 cells
  std::uint8_t* ring;      // 64 target classes
  int lane, i0, start, probe_rel, ox, x;
  int cb, ce;  // the unit's column block [cb, ce), relative to the task's start

  // Writes this lane's real rows' state (canonical, model.hpp) into the m rows at `out`.
  __device__ void write_state(RowState* out) const {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = i0 + r;
      if (i < 0) continue;
      const int h = ho[r] + ox;
      const int ev = e[r] > 0 ? e[r] : 0;
      RowState s;
      s.h = h;
      s.e = ev;
      s.h_qstart = h > 0 ? hq[r] + i0 : kNoOrigin;
      s.h_tstart = h > 0 ? ht[r] : kNoOrigin;
      s.e_qstart = ev > 0 ? eq[r] + i0 : kNoOrigin;
      s.e_tstart = ev > 0 ? et[r] : kNoOrigin;
      int2* dst = reinterpret_cast<int2*>(out + i);
      dst[0] = make_int2(s.h, s.e);
      dst[1] = make_int2(s.h_qstart, s.h_tstart);
      dst[2] = make_int2(s.e_qstart, s.e_tstart);
    }
  }

  // Step s: column j = s - lane. kGuard: some lane of the warp may be outside [0, width).
  template <bool kGuard>
  __device__ __forceinline__ void step(int s) {
    // Inputs: the lane above's outputs of step s - 1, or the boundary chunk for lane 0.
    int iho = __shfl_up_sync(kFullMask, oho, 1);
    int iq = __shfl_up_sync(kFullMask, oq, 1);
    int it = __shfl_up_sync(kFullMask, ot, 1);
    int ifv = __shfl_up_sync(kFullMask, of, 1);
    int ifq = __shfl_up_sync(kFullMask, ofq, 1);
    int ift = __shfl_up_sync(kFullMask, oft, 1);
    int ibs = __shfl_up_sync(kFullMask, bs, 1);
    int ibr = __shfl_up_sync(kFullMask, br, 1);
    int ibq = __shfl_up_sync(kFullMask, bq, 1);
    int ibt = __shfl_up_sync(kFullMask, bt, 1);
    {
      const BoundaryCell& c = in_chunk[s & (kChunk - 1)];
      const int4 a = *reinterpret_cast<const int4*>(&c.ho);
      const int4 b = *reinterpret_cast<const int4*>(&c.fq);
      const int2 d = *reinterpret_cast<const int2*>(&c.bq);
      if (lane == 0) {
        iho = a.x, iq = a.y, it = a.z, ifv = a.w;
        ifq = b.x, ift = b.y, ibs = b.z, ibr = b.w;
        ibq = d.x, ibt = d.y;
      }
    }
    iq -= R;  // from the sender's frame (first row i0 - R) to this lane's
    ifq -= R;

    const int j = s - lane;
    const bool act = !kGuard || static_cast<unsigned>(j - cb) < static_cast<unsigned>(ce - cb);
    const int cls = ring[j & (2 * kChunk - 1)];
    std::uint32_t w[R / 4];
    load_profile<R>(prof + cls * (32 * R), w);

    bs = ibs, br = ibr, bq = ibq, bt = ibt;
    if (act) {
      const int jabs = start + j;
      int hod = dho, dqq = dq, dtt = dt;  // H(i-1, j-1)
      int hou = iho, uq = iq, ut = it;    // H(i-1, j)
      int f = ifv, fq = ifq, ft = ift;    // F(i-1, j)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int sc = score_byte(w[r >> 2], r & 3);
        // D(i,j) and its origin
        const int d = hod + sc + ox;
        const bool cont = hod > -ox;
        const int d_q = cont ? dqq : r;
        const int d_t = cont ? dtt : jabs;
        // E(i,j): open from H(i,j-1) on ties
        const int en = __viaddmax_s32(e[r], -x, ho[r]);
        const bool eopen = en == ho[r];
        const int e_q = eopen ? hq[r] : eq[r];
        const int e_t = eopen ? ht[r] : et[r];
        // F(i,j): the same down the column
        const int fn = __viaddmax_s32(f, -x, hou);
        const bool fopen = fn == hou;
        fq = fopen ? uq : fq;
        ft = fopen ? ut : ft;
        // H(i,j): first of D, E, F equal to the maximum; clamped at 0
        const int hraw = __vimax3_s32(d, en, fn);
        const bool take_e = en >= fn;
        const int ef_q = take_e ? e_q : fq;
        const int ef_t = take_e ? e_t : ft;
        const bool take_d = d == hraw;
        const int nq = take_d ? d_q : ef_q;
        const int nt = take_d ? d_t : ef_t;
        const int hon = __viaddmax_s32(hraw, -ox, -ox);
        hod = ho[r], dqq = hq[r], dtt = ht[r];
        ho[r] = hon, hq[r] = nq, ht[r] = nt;
        e[r] = en, eq[r] = e_q, et[r] = e_t;
        hou = hon, uq = nq, ut = nt;
        f = fn;
      }
      oho = hou, oq = uq, ot = ut;
      of = f, ofq = fq, oft = ft;

      // Column best over this lane's rows: only a strictly larger score moves it.
      int lm = ho[0];
#pragma unroll
      for (int r = 1; r + 1 < R; r += 2) lm = __vimax3_s32(lm, ho[r], ho[r + 1]);
      if constexpr (R % 2 == 0) lm = max(lm, ho[R - 1]);
      if (lm + ox > ibs) {  // rare after the first rows: a real branch, skipped by whole warps
        int rr = 0, qq = 0, tt = 0;
#pragma unroll
        for (int r = R - 1; r >= 0; --r) {
          if (ho[r] == lm) rr = r, qq = hq[r], tt = ht[r];
        }
        bs = lm + ox;
        br = i0 + rr;
        bq = i0 + qq;
        bt = tt;
      }
      if (j == probe_rel) write_state(task->probe);
      if (lane == 31) {
        BoundaryCell* c = staging + (j & (2 * kChunk - 1));
        *reinterpret_cast<int4*>(&c->ho) = make_int4(oho, oq, ot, of);
        *reinterpret_cast<int4*>(&c->fq) = make_int4(ofq, oft, bs, br);
        *reinterpret_cast<int2*>(&c->bq) = make_int2(bq, bt);
      }
    } else {
      // Outside the task's columns the state stands still; the bottom row passed down is the state
      // before the first column (the lane below needs it as the diagonal of its first column).
      oho = ho[R - 1], oq = hq[R - 1], ot = ht[R - 1];
    }
    // After its block's last column a lane keeps H(i0 - 1, ce - 1): lane 0 saves it for the next block.
    if (!kGuard || j < ce) dho = iho, dq = iq, dt = it;
  }

  template <bool kGuard>
  __device__ void steps(int s0) {
#pragma unroll 1
    for (int s = s0; s < s0 + kChunk; s += 2) {
      step<kGuard>(s);
      step<kGuard>(s + 1);
    }
  }
};

// Reads a row state written by another unit (through L2: this SM's L1 may hold an older copy).
__device__ __forceinline__ RowState load_state(const RowState* src) {
  const int2* q = reinterpret_cast<const int2*>(src);
  const int2 a = __ldcg(q), b = __ldcg(q + 1), c = __ldcg(q + 2);
  RowState s;
  s.h = a.x, s.e = a.y, s.h_qstart = b.x, s.h_tstart = b.y, s.e_qstart = c.x, s.e_tstart = c.y;
  return s;
}

template <int R>
__device__ void run_unit(const KernelParams& p, std::uint8_t* ws, int lane, int task_index, int strip,
                         int block) {
  static_assert(R == 4 || R == 8 || R == 16, "R: 4, 8 or 16");
  Unit<R> u;
  const TaskInfo& t = p.tasks[task_index];
  u.task = &t;
  u.lane = lane;
  u.i0 = strip * 32 * R + lane * R - p.pad;
  u.start = t.start;
  u.cb = block * p.block_width;
  u.ce = min(t.width, u.cb + p.block_width);
  u.probe_rel = t.probe_rel;
  u.ox = p.ox;
  u.x = p.x;
  std::uint8_t* const prof_base = ws;
  u.prof = prof_base + lane * R;
  u.in_chunk = reinterpret_cast<BoundaryCell*>(ws + profile_bytes<R>(p.classes));
  u.staging = u.in_chunk + kChunk;
  u.ring = reinterpret_cast<std::uint8_t*>(u.staging + 2 * kChunk);

  // Profile of this lane's rows: byte r of lane word = s(q_{i0+r}, class); virtual rows kVirtualScore.
  for (int c = 0; c < p.classes; ++c) {
    const std::int8_t* col = p.class_scores + c * kMaxCodes;
#pragma unroll
    for (int w = 0; w < R / 4; ++w) {
      std::uint32_t word = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int i = u.i0 + 4 * w + k;
        const int sc = i < 0 ? kVirtualScore : col[t.query[i]];
        word |= (static_cast<std::uint32_t>(sc) & 0xFFu) << (8 * k);
      }
      *reinterpret_cast<std::uint32_t*>(prof_base + c * 32 * R + lane * R + 4 * w) = word;
    }
  }

  // State after column cb - 1: the task's initial state for its first block, else the state the
  // previous block of this strip left in the end-state rows. Lane 0 also needs H(i0 - 1, cb - 1).
  int4* const diag = t.diag + strip;
  const RowState* init = block > 0 ? t.end : t.initial;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = u.i0 + r;
    if (init != nullptr && i >= 0) {
      const RowState s = block > 0 ? load_state(init + i) : init[i];
      u.ho[r] = s.h - u.ox;
      u.e[r] = s.e;
      u.hq[r] = s.h_qstart - u.i0;
      u.ht[r] = s.h_tstart;
      u.eq[r] = s.e_qstart - u.i0;
      u.et[r] = s.e_tstart;
    } else {
      u.ho[r] = -u.ox;
      u.e[r] = 0;
      u.hq[r] = kNoOrigin, u.ht[r] = kNoOrigin, u.eq[r] = kNoOrigin, u.et[r] = kNoOrigin;
    }
  }
  u.dho = -u.ox, u.dq = kNoOrigin, u.dt = kNoOrigin;
  if (lane == 0) {
    if (block > 0) {
      const int4 d = __ldcg(diag);
      u.dho = d.x, u.dq = d.y, u.dt = d.z;
    } else if (init != nullptr && u.i0 - 1 >= 0) {
      const RowState s = init[u.i0 - 1];
      u.dho = s.h - u.ox;
      u.dq = s.h_qstart - u.i0;
      u.dt = s.h_tstart;
    }
  }
  u.oho = u.ho[R - 1], u.oq = u.hq[R - 1], u.ot = u.ht[R - 1];
  u.of = 0, u.ofq = kNoOrigin, u.oft = kNoOrigin;
  u.bs = 0, u.br = -1, u.bq = kNoOrigin, u.bt = kNoOrigin;

  const bool has_top = strip > 0;
  const bool has_bottom = strip + 1 < p.strips;
  const BoundaryCell* bin = t.boundary + ((strip + 1) & 1) * static_cast<std::int64_t>(t.width);
  BoundaryCell* bout = t.boundary + (strip & 1) * static_cast<std::int64_t>(t.width);
  std::uint32_t* const flags = t.flags;
  std::uint32_t* const flag_in = has_top ? flags + (strip - 1) : nullptr;
  std::uint32_t* const flag_out = flags + strip;
  if (!has_top) {
    // The zero row above the table: H = 0 (HO = -(O+X)), F = 0, no best yet.
    BoundaryCell c;
    c.ho = -u.ox, c.hq = kNoOrigin, c.ht = kNoOrigin, c.f = 0;
    c.fq = kNoOrigin, c.ft = kNoOrigin, c.bs = 0, c.br = -1;
    c.bq = kNoOrigin, c.bt = kNoOrigin, c.pad0 = 0, c.pad1 = 0;
    u.in_chunk[lane] = c;
  }
  // Classes of columns before the block (read by idle lanes only) must still index the profile.
  u.ring[lane] = 0;
  u.ring[lane + kChunk] = 0;

  // Chunk k covers columns cb + 32k .. cb + 32k + 31; flags count chunks from the task's start.
  const int chunks = (u.ce - u.cb + kChunk - 1) / kChunk;
  const int chunk0 = u.cb / kChunk;
#pragma unroll 1
  for (int k = 0; k <= chunks; ++k) {
    const int c0 = u.cb + k * kChunk;
    if (k < chunks) {
      const int col = c0 + lane;
      u.ring[col & (2 * kChunk - 1)] = col < u.ce ? t.target[t.start + col] : 0;
      if (has_top) {
        const auto need = static_cast<std::uint32_t>(chunk0 + k + 1);
        while (load_acquire(flag_in) < need) __nanosleep(64);
        if (col < u.ce) {
          const int4* src = reinterpret_cast<const int4*>(bin + col);
          int4* dst = reinterpret_cast<int4*>(u.in_chunk + lane);
          dst[0] = __ldcg(src);
          dst[1] = __ldcg(src + 1);
          dst[2] = __ldcg(src + 2);
        }
      }
    }
    __syncwarp();
    if (k == 0 || c0 + kChunk - 1 >= u.ce)
      u.template steps<true>(c0);
    else
      u.template steps<false>(c0);
    __syncwarp();
    if (k >= 1) {
      // Output chunk k - 1 is complete (its last column was finished by lane 31 at step c0 - 2).
      const int col = c0 - kChunk + lane;
      if (col < u.ce) {
        const BoundaryCell* c = u.staging + (col & (2 * kChunk - 1));
        if (has_bottom) {
          const int4* src = reinterpret_cast<const int4*>(c);
          int4* dst = reinterpret_cast<int4*>(bout + col);
          __stcg(dst, src[0]);
          __stcg(dst + 1, src[1]);
          __stcg(dst + 2, src[2]);
        } else if (col >= t.own_rel) {
          const int4 b = *reinterpret_cast<const int4*>(&c->fq);
          const int2 d = *reinterpret_cast<const int2*>(&c->bq);
          __stcg(reinterpret_cast<int4*>(t.records + t.start + col), make_int4(b.z, b.w, d.x, d.y));
        }
      }
      if (has_bottom) {
        __threadfence();
        __syncwarp();
        if (lane == 0) store_release(flag_out, static_cast<std::uint32_t>(chunk0 + k));
      }
    }
  }
  // The state after column ce - 1 (the task's end state after its last block).
  u.write_state(t.end);
  if (lane == 0 && u.ce < t.width) __stcg(diag, make_int4(u.dho, u.dq, u.dt, 0));
}

// Blocks take units in order: unit = (column block * groups + group) * tasks + task, warp w of the
// block computes strip group * kWarpsPerBlock + w. Thread 0 waits until the group's previous column
// block is finished (its units have smaller numbers, so they are running or done), and after the
// unit publishes this block as finished.
template <int R>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, R == 16 ? 3 : 4) scan_kernel(const KernelParams p) {
  __shared__ std::uint32_t next_unit;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  std::uint8_t* ws = scan_smem + static_cast<std::size_t>(warp) * warp_smem_bytes<R>(p.classes);
  const auto tasks = static_cast<std::uint32_t>(p.tasks_count);
  const auto pairs = tasks * static_cast<std::uint32_t>(p.groups);
  for (;;) {
    if (threadIdx.x == 0) {
      const std::uint32_t unit = atomicAdd(p.counter, 1u);
      if (unit < p.units) {
        const std::uint32_t pair = unit % pairs;
        const auto block = static_cast<std::uint32_t>(unit / pairs);
        const std::int32_t width = p.tasks[pair % tasks].width;
        if (block > 0 && static_cast<std::int64_t>(block) * p.block_width < width) {
          std::uint32_t* done = p.tasks[pair % tasks].done + pair / tasks;
          while (load_acquire(done) < block) __nanosleep(128);
        }
      }
      next_unit = unit;
    }
    __syncthreads();
    const std::uint32_t unit = next_unit;
    __syncthreads();
    if (unit >= p.units) break;
    const std::uint32_t pair = unit % pairs;
    const int block = static_cast<int>(unit / pairs);
    const int task = static_cast<int>(pair % tasks);
    const int group = static_cast<int>(pair / tasks);
    if (static_cast<std::int64_t>(block) * p.block_width >= p.tasks[task].width) continue;  // no such block
    const int strip = group * kWarpsPerBlock + warp;
    if (strip < p.strips) run_unit<R>(p, ws, lane, task, strip, block);
    __threadfence();  // every warp's states and diag before thread 0's release
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      store_release(p.tasks[task].done + group, static_cast<std::uint32_t>(block + 1));
    }
  }
}

#endif  // __CUDACC__

}  // namespace warpsearch::scan::gpu
