// pass_emulator.hpp: a host emulation of the CUDA pass engine for tests without a GPU.
//
// emulate_run() does what PassEngine::run does (classify, sort, plan launches, pack residues, prep
// kernel, pass kernels, scatter) with the same planning code (sw/gpu_plan.hpp) and the same per-thread
// arithmetic (sw/cuda/pass_cells.hpp: prep_column, build_profile, Column, trackers, DPX/prmt lane ops
// in their exact host forms). Only the GPU orchestration differs: lanes of a group run one after the
// other at each skewed step (reading their upper neighbour's previous-step outputs, as
// __shfl_up_sync delivers them), border columns are read when needed rather than prefetched, and the
// group reduction is a loop. Agreement with the reference therefore checks the algorithm (virtual rows,
// padding, tiles, tie rule, 16x2 packing, plans); the GPU tests check the orchestration on a device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "sw/cuda/pass_cells.hpp"
#include "sw/gpu_plan.hpp"
#include "sw/model.hpp"

namespace warpsearch::sw::gpu::test {

// Skewed steps the emulation ran, summed over groups and tiles (shows the known-score stops working).
inline std::uint64_t emulated_steps = 0;

// Emulates the slots of warp w (PassParams hold host pointers; letters/border are filled by prep).
template <class L, int G, int R, bool kLocal>
void emulate_warp(const PassParams& p, std::uint32_t w) {
  using V = typename L::V;
  using Tracker = std::conditional_t<kLocal, LocalTracker<L, R>, EdgeTracker<L>>;
  const WarpInfo wi = p.warps[w];
  const int K = p.letters_count;
  const bool global = p.mode == static_cast<std::int32_t>(Mode::kGlobal);
  std::vector<std::uint8_t> prof(static_cast<std::size_t>(kLaneBytes) * L::kPairs * K * R);
  const V neg_x = L::splat(-static_cast<std::int64_t>(p.extend));
  using Col = Column<L, R, kLocal>;
  const V open = Col::open_operand(p);
  const V neg_open = Col::neg_open_operand(p);
  const auto bias = static_cast<int>(stored_bias<L>(p));
  const int S = static_cast<int>(wi.cols);
  const int T = static_cast<int>(wi.tiles);
  for (int g = 0; g < 32 / G; ++g) {
    const SlotInfo& slot = p.slots[wi.first_slot + static_cast<std::uint32_t>(g)];
    const std::uint64_t col0 = wi.column + static_cast<std::uint64_t>(g) * wi.cols;
    std::vector<Col> cols(G);
    std::vector<Tracker> tr(G);
    if constexpr (kLocal)
      for (Tracker& one : tr) one.bias = bias;
    // Known scores (pass_kernel.cuh Sweep::sweep<true>): the kernel ends a tile when the whole warp is
    // settled; here each group stops as soon as it is settled itself (earlier, never later), which
    // must give the same results.
    const bool known = kLocal && (wi.flags & kWarpKnownScores) != 0;
    constexpr int kGuarded = (G - 1 + 3) / 4 * 4;
    int lim[2] = {0x7FFFFFFF, 0x7FFFFFFF};
    int valid = S;
    auto found = [&](int t, int h) {
      const int bj = tr[static_cast<std::size_t>(t)].bj[h];
      return bj >= 0 && bj < lim[h] ? bj : lim[h];
    };
    for (int tile = 0; tile < T; ++tile) {
      V floor = 0;  // the group's best so far (the kernel's shuffle reduction), or the known scores
      if (known) {
        floor = L::pack(slot.half[0].score, slot.half[1].score);
      } else if constexpr (kLocal) {
        for (const Tracker& one : tr) floor = L::max(floor, one.accumulated());
      }
      for (int t = 0; t < G; ++t) {
        const int first_row = tile * G * R + t * R;
        build_profile<L, R>(p, slot, p.ctab, first_row, prof.data() + (g * G + t) * R);
        cols[static_cast<std::size_t>(t)].init(p, slot, first_row);
        if constexpr (kLocal) {
          tr[static_cast<std::size_t>(t)].begin_tile(floor);
        } else {
          tr[static_cast<std::size_t>(t)].begin_tile(slot, tile, t);
        }
      }
      std::vector<std::uint32_t> x(G, 0), out_h(G, 0), out_f(G, 0);
      int next_valid = S;
      for (int s = 0; s < S; ++s) {
        ++emulated_steps;
        for (int t = G - 1; t >= 0; --t) {  // downwards: lane t reads lane t-1's previous-step outputs
          const auto ut = static_cast<std::size_t>(t);
          const int j = s - t;
          std::uint32_t xin = 0, hin = 0, fin = 0;
          if (t == 0) {
            const std::uint64_t c = col0 + static_cast<std::uint64_t>(s);
            xin = p.letters[c];
            hin = p.border[2 * c];
            fin = p.border[2 * c + 1];
            if (known && s >= valid) {
              hin = Col::low_h(open);
              fin = Col::low_f(open);
            }
          } else {
            xin = x[ut - 1];
            hin = out_h[ut - 1];
            fin = out_f[ut - 1];
          }
          x[ut] = xin;
          const std::uint8_t* lane_prof = prof.data() + (g * G + t) * R;
          std::uint32_t wa[R / 4], wb[R / 4];
          load_words<R>(lane_prof + (xin & 0xFFFFu), wa);
          load_words<R>(lane_prof + (xin >> 16), wb);
          V f = fin;
          Col& col = cols[ut];
          if (j >= 0) {  // the kernel's choice of T's instruction (the same value either way)
            if (known) {
              col.template step<false>(wa, wb, hin, f, neg_x, open, neg_open);
            } else {
              col.step(wa, wb, hin, f, neg_x, open, neg_open);
            }
          }
          out_h[ut] = col.H[R - 1];
          out_f[ut] = f;
          if (t == G - 1 && tile + 1 < T && j >= 0) {
            const std::uint64_t c = col0 + static_cast<std::uint64_t>(j);
            p.border[2 * c] = out_h[ut];
            p.border[2 * c + 1] = out_f[ut];
          }
          if constexpr (kLocal) {
            const V next = tr[ut].raised(col.H);
            if (next != tr[ut].best) tr[ut].improve(col.H, next, j, tile * G * R + t * R);
          } else {
            tr[ut].step(out_h[ut], j, global);
          }
        }
        // The kernel's share_best() after each unguarded chunk of 4 steps (local mode, unknown scores).
        if constexpr (kLocal) {
          if (!known && s % 4 == 3 && s - 3 >= kGuarded) {
            V m = 0;
            for (const Tracker& one : tr) m = L::max(m, one.best);
            for (Tracker& one : tr) one.best = L::max(one.best, L::add(m, L::splat(-1)));
          }
        }
        if (known && s % 4 == 3 && s - 3 >= kGuarded) {
          bool settled = true;
          for (int h = 0; h < L::kPairs; ++h) {
            if (slot.half[h].job < 0) continue;
            bool any = false;
            for (int t = 0; t < G; ++t) any = any || found(t, h) <= s - (G - 1);
            settled = settled && any;
          }
          if (settled) {
            next_valid = s - (G - 1) + 1;
            break;
          }
        }
      }
      if (known) {
        for (int h = 0; h < 2; ++h) {
          int m = lim[h];
          for (int t = 0; t < G; ++t) m = std::min(m, found(t, h));
          lim[h] = m;
        }
        valid = next_valid;
      }
      for (Tracker& one : tr) one.end_tile();
    }
    for (int h = 0; h < L::kPairs; ++h) {
      const HalfInfo& half = slot.half[h];
      if (half.job < 0) continue;
      Candidate best = tr[0].result(h, half);
      for (int t = 1; t < G; ++t) {
        const Candidate c = tr[static_cast<std::size_t>(t)].result(h, half);
        if (better(c, best)) best = c;
      }
      p.results[half.job] = make_end(kLocal, best);
    }
  }
}

template <class L, int G, int R, bool kLocal>
void emulate_bucket(const PassParams& p, const Bucket& b) {
  for (std::uint32_t w = b.warp_begin; w < b.warp_end; ++w) {
    const WarpInfo& wi = p.warps[w];
    for (int g = 0; g < 32 / G; ++g) {  // the prep kernel
      const SlotInfo& slot = p.slots[wi.first_slot + static_cast<std::uint32_t>(g)];
      for (std::uint32_t j = 0; j < wi.cols; ++j) {
        const std::uint64_t c = wi.column + static_cast<std::uint64_t>(g) * wi.cols + j;
        prep_column<L>(p, slot, p.code_class, R, j, p.letters[c], p.border[2 * c], p.border[2 * c + 1]);
      }
    }
    emulate_warp<L, G, R, kLocal>(p, w);
  }
}

template <class L, bool kLocal, std::size_t... S>
void emulate_bucket_shape(const PassParams& p, const Bucket& b, std::index_sequence<S...>) {
  ((b.shape == S ? emulate_bucket<L, kPassShapes[S].g, kPassShapes[S].r, kLocal>(p, b) : void()), ...);
}

// One launch: the plan's residues packed as the engine packs them, then prep + pass per bucket.
inline void emulate_launch(const PassModel& model, const LetterClasses& lc, const LaunchPlan& plan,
                           std::span<const PassJob> jobs, std::span<EndPoint> out) {
  std::vector<std::uint8_t> residues(plan.residues);
  for (std::size_t l = 0; l < plan.jobs.size(); ++l) {
    const PassJob& job = jobs[plan.jobs[l]];
    std::memcpy(residues.data() + plan.offsets[l], job.query, job.qlen);
    std::memcpy(residues.data() + plan.offsets[l] + job.qlen, job.target, job.tlen);
  }
  std::vector<std::uint32_t> letters(plan.columns), border(2 * plan.columns);
  std::vector<EndPoint> results(plan.jobs.size());
  PassParams p;
  p.residues = residues.data();
  p.slots = plan.slots.data();
  p.warps = plan.warps.data();
  p.letters = letters.data();
  p.border = border.data();
  p.results = results.data();
  p.ctab = lc.ctab.data();
  p.open = model.open;
  p.extend = model.extend;
  p.mode = static_cast<std::int32_t>(model.mode);
  p.letters_count = lc.count;
  p.pad_class = lc.pad;
  std::copy(lc.code_class.begin(), lc.code_class.end(), p.code_class);
  const auto shapes = std::make_index_sequence<kPassShapes.size()>();
  for (const Bucket& b : plan.buckets) {
    const bool local = model.mode == Mode::kLocal;
    if (b.lane == LaneKind::k16x2) {
      local ? emulate_bucket_shape<Lane16x2, true>(p, b, shapes)
            : emulate_bucket_shape<Lane16x2, false>(p, b, shapes);
    } else {
      local ? emulate_bucket_shape<Lane32, true>(p, b, shapes)
            : emulate_bucket_shape<Lane32, false>(p, b, shapes);
    }
  }
  for (std::size_t l = 0; l < plan.jobs.size(); ++l) out[plan.jobs[l]] = results[l];
}

struct EmulatedRun {
  std::vector<EndPoint> ends;
  std::size_t launches = 0;
  std::uint64_t cells16 = 0;
  std::uint64_t cells32 = 0;
};

// PassEngine::run on the host, with explicit launch caps.
inline EmulatedRun emulate_run(const PassModel& model, std::span<const PassJob> jobs,
                               const PassPolicy& policy, const LaunchCaps& caps) {
  EmulatedRun run;
  run.ends.resize(jobs.size());
  const LetterClasses lc = letter_classes(model);
  std::vector<JobClass> classes(jobs.size());
  for (std::size_t k = 0; k < jobs.size(); ++k)
    classes[k] = classify(model, jobs[k].qlen, jobs[k].tlen, policy, jobs[k].score > 0);
  const std::vector<SortedJob> order = sort_jobs(classes, jobs);
  LaunchPlan plan;
  for (std::size_t pos = 0; pos < order.size();) {
    pos = plan_launch(model, order, pos, caps, plan);
    emulate_launch(model, lc, plan, jobs, run.ends);
    ++run.launches;
    run.cells16 += plan.cells16;
    run.cells32 += plan.cells32;
  }
  return run;
}

}  // namespace warpsearch::sw::gpu::test
