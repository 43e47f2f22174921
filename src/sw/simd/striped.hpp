// striped.hpp: the striped SIMD pass (Farrar 2007), one template for every instruction set, lane
// width and mode. The ISA translation units (striped_sse41.cpp, striped_avx2.cpp) supply a traits type
// per vector width x element type and instantiate striped::by_mode with a narrow (int16) and a wide
// (int32) traits type; dispatch.cpp calls their entry points below.
//
// Layout. With L lanes per vector and seg = ceil(m / L) vectors per column, query row i lives in
// vector s = i % seg, lane l = i / seg (row i = l * seg + s). Rows i >= m are padding: they sit above
// every real row in the lane order, and values only flow to larger rows (F runs down a column, the
// diagonal comes from row i - 1), so padding never reaches a real cell.
//
// Column j (target residue t_j), with O = open, X = extend, OX = O + X:
//   main loop over s = 0..seg-1, the vector rows r = {l * seg + s}:
//     H(r,j) = max(H(r-1,j-1) + s(q_r,t_j), E(r,j), F~(r,j) [, 0])   F~: F within the lane only
//     E(r,j+1) = max(E(r,j) - X, H(r,j) - OX)                        (kept in e_col[s])
//     F~(r+1,j) = max(F~(r,j) - X, H(r,j) - OX)
//   lazy-F loop: F~ misses chains that cross from lane l-1 into lane l. The F leaving each lane's last
//   row is shifted one lane up and run down the column again, raising H where it wins, until in every
//   lane the chain can change neither H(r) nor F(r+1): F <= H_old(r) - O. (parasail's test,
//   F - X <= H_new - O - X, stops too early when O = 0: a raised H(r) = F then feeds F(r+1) = F - X.)
//   At most L passes carry a chain across all lanes.
//   E is not raised with H here (as in parasail): a D step taken from such an H, F(r,j) - O - mX at
//   (r, j+m), never exceeds F(r, j+m) (the same gaps in the order D then I, which the DP does see),
//   so every H stays exact.
// Invariants after column j: h_store holds H(., j) exactly; e_col holds E(., j+1) up to the terms
// that F(., j+1) dominates.
//
// Ends (model.hpp). Local: the column's vector max is compared with the best so far; only on a strict
// improvement is the column scanned for the smallest row holding the new maximum, so the first maximum
// in column-major order wins. Values raised by the lazy-F loop equal F(i,j) <= H(i',j) - O - X for
// some i' < i in the same column, so they are never a column maximum when O + X >= 1, and the max
// taken in the main loop is the max of the final column. Global: H(m-1, n-1). Semiglobal: H(m-1, j)
// after the lazy-F loop, first strict improvement over j.
//
// Range. A pass runs in 16-bit lanes only when fits_int16 holds (every real value within +-32000),
// with saturating adds so padding rows saturate instead of wrapping; 32-bit lanes have 2^30 headroom.
// -inf is kNegInf of the traits; chains decaying from it in the lazy-F loop use sub_floor so they can
// never wrap around.
//
// Traits interface (V): Vec, Elem, kLanes, kNegInf; zero(), set1(x), lane0(x) (x in lane 0, zeros
// elsewhere), adds, subs (saturating for int16), sub_floor (never below kNegInf), subs_to_zero
// (max(a - b, 0) for a >= 0; one unsigned saturating subtract in int16), max, bit_or,
// shift_up (lane l -> l+1, zero into lane 0), mask_gt / mask_eq (a > b / a == b as a byte mask,
// sizeof(Elem) bits per lane, lane 0 lowest) and hmax.
//
// The template uses only the traits, raw pointers and integers (no std:: algorithms), so nothing
// compiled with an ISA's flags can be merged with a generic copy of the same inline function.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sw/model.hpp"
#include "sw/simd/pass.hpp"

namespace warpsearch::sw::simd {

// Entry points of the ISA translation units; call only when isa_supported() says so. wide selects the
// 32-bit lanes. Inputs as for pass() (checked there), known its known_score.
EndPoint striped_sse41(const PassModel& model, const std::uint8_t* q, std::size_t m, const std::uint8_t* t,
                       std::size_t n, Workspace& workspace, bool wide, std::int32_t known);
EndPoint striped_avx2(const PassModel& model, const std::uint8_t* q, std::size_t m, const std::uint8_t* t,
                      std::size_t n, Workspace& workspace, bool wide, std::int32_t known);

namespace striped {

inline constexpr std::uint8_t kCodeMask = kMaxCodes - 1;  // codes index a 32-entry table row

// Lowest row of the column h (seg vectors) holding value v, or m if none does.
template <class V>
std::size_t first_row(const typename V::Vec* h, std::size_t seg, std::size_t m, typename V::Vec v) {
  std::size_t row = m;
  for (std::size_t s = 0; s < seg; ++s) {
    const unsigned mask = V::mask_eq(h[s], v);
    if (mask == 0) continue;
    const std::size_t lane = static_cast<std::size_t>(__builtin_ctz(mask)) / sizeof(typename V::Elem);
    const std::size_t r = lane * seg + s;
    if (r < row) row = r;
    if (lane == 0) break;  // lane 0 holds rows 0..seg-1: nothing later can be smaller
  }
  return row;
}

// known (local mode): the pass's score when the caller knows it (> 0), else 0; the sweep then ends
// with the first column that reaches it (no value exceeds the pass's score, so that column holds the
// column-major first maximum).
template <class V, Mode kMode>
EndPoint run(const PassModel& model, const std::uint8_t* q, std::size_t m, const std::uint8_t* t,
             std::size_t n, Workspace& workspace, std::int32_t known) {
  using Vec = typename V::Vec;
  using Elem = typename V::Elem;
  constexpr std::size_t kLanes = V::kLanes;
  constexpr bool kLocal = kMode == Mode::kLocal;
  const std::size_t seg = (m + kLanes - 1) / kLanes;

  // One block: the query profile (seg vectors per code), H of the previous and current column, E.
  Vec* const profile =
      reinterpret_cast<Vec*>(workspace.buffer((static_cast<std::size_t>(kMaxCodes) + 3) * seg * sizeof(Vec)));
  Vec* h_load = profile + static_cast<std::size_t>(kMaxCodes) * seg;  // H(., j-1)
  Vec* h_store = h_load + seg;                                        // H(., j)
  Vec* const e_col = h_store + seg;                                   // E(., j) in, E(., j+1) out

  const std::int64_t open = model.open;
  const std::int64_t ext = model.extend;
  const std::int64_t oe = open + ext;

  // Query profile for the codes the target uses: profile[c * seg + s] lane l = s(q_{l*seg+s}, c).
  // Padding rows score below zero (and below every entry), so they stay below the real rows they
  // descend from.
  bool used[kMaxCodes] = {};
  for (std::size_t j = 0; j < n; ++j) used[t[j] & kCodeMask] = true;
  const std::int64_t pad = (model.min_score < 0 ? model.min_score : 0) - 1;
  for (std::size_t c = 0; c < static_cast<std::size_t>(kMaxCodes); ++c) {
    if (!used[c]) continue;
    Elem* p = reinterpret_cast<Elem*>(profile + c * seg);
    for (std::size_t s = 0; s < seg; ++s)
      for (std::size_t l = 0; l < kLanes; ++l) {
        const std::size_t i = l * seg + s;
        p[s * kLanes + l] = static_cast<Elem>(
            i < m ? model.table[static_cast<std::size_t>(q[i] & kCodeMask) * kMaxCodes + c] : pad);
      }
  }

  // Column -1: H(i,-1) (local 0, else -(O + (i+1)X); padding rows copy row m-1) and
  // E(i,0) = H(i,-1) - O - X.
  {
    Elem* h = reinterpret_cast<Elem*>(h_load);
    Elem* e = reinterpret_cast<Elem*>(e_col);
    for (std::size_t s = 0; s < seg; ++s)
      for (std::size_t l = 0; l < kLanes; ++l) {
        std::size_t i = l * seg + s;
        if (i >= m) i = m - 1;
        const std::int64_t hb = kLocal ? 0 : -(open + static_cast<std::int64_t>(i + 1) * ext);
        h[s * kLanes + l] = static_cast<Elem>(hb);
        e[s * kLanes + l] = static_cast<Elem>(hb - oe);
      }
  }

  const Vec v_oe = V::set1(oe);
  const Vec v_x = V::set1(ext);
  const Vec v_o = V::set1(open);
  const Vec v_zero = V::zero();
  const Vec v_neg_lane0 = V::lane0(V::kNegInf);           // -inf in lane 0, 0 elsewhere
  const Vec v_neg_up = V::shift_up(V::set1(V::kNegInf));  // 0 in lane 0, -inf elsewhere
  // F entering row 0 when H(-1, j) = 0 (local, semiglobal): F(0,j) = -(O + X), -inf in other lanes.
  const Vec v_f_flat = V::bit_or(v_neg_up, V::lane0(-oe));

  const std::size_t last_seg = (m - 1) % seg;  // vector and lane of row m-1
  const std::size_t last_lane = (m - 1) / seg;

  // Best so far (local: 0, nothing found; semiglobal: -inf, so column 0 always improves) and its
  // broadcast, so the per-column test is one vector compare.
  std::int64_t best = kLocal ? 0 : V::kNegInf;
  std::int64_t best_i = -1;
  std::int64_t best_j = -1;
  Vec v_best = V::set1(best);
  const unsigned last_lane_bit = 1u << (last_lane * sizeof(Elem));

  for (std::size_t j = 0; j < n; ++j) {
    const Vec* const prof = profile + static_cast<std::size_t>(t[j] & kCodeMask) * seg;

    // Row 0's diagonal is H(-1, j-1), shifted into lane 0; row l*seg's is the previous lane's last row.
    Vec v_h = V::shift_up(h_load[seg - 1]);
    Vec v_f = v_f_flat;
    if constexpr (kMode == Mode::kGlobal) {
      const std::int64_t top_prev = j == 0 ? 0 : -(open + static_cast<std::int64_t>(j) * ext);  // H(-1,j-1)
      const std::int64_t top = -(open + static_cast<std::int64_t>(j + 1) * ext);                // H(-1,j)
      v_h = V::bit_or(v_h, V::lane0(top_prev));
      v_f = V::bit_or(v_neg_up, V::lane0(top - oe));
    }

    Vec v_max = v_zero;
    for (std::size_t s = 0; s < seg; ++s) {
      v_h = V::adds(v_h, prof[s]);
      const Vec v_e = e_col[s];
      v_h = V::max(v_h, v_e);
      v_h = V::max(v_h, v_f);
      if constexpr (kLocal) v_h = V::max(v_h, v_zero);
      h_store[s] = v_h;
      if constexpr (kLocal) v_max = V::max(v_max, v_h);
      v_h = V::subs(v_h, v_oe);
      e_col[s] = V::max(V::subs(v_e, v_x), v_h);
      v_f = V::max(V::subs(v_f, v_x), v_h);
      v_h = h_load[s];
    }

    // Lazy F: carry each lane's outgoing F into the next lane until it no longer matters anywhere.
    for (std::size_t k = 0; k < kLanes; ++k) {
      v_f = V::bit_or(V::shift_up(v_f), v_neg_lane0);
      std::size_t s = 0;
      for (; s < seg; ++s) {
        const Vec h = h_store[s];
        // Local: F <= 0 can neither raise H >= 0 nor start a chain above 0, so it is done too
        // (fewer passes: measured faster than the plain test).
        const Vec limit = kLocal ? V::subs_to_zero(h, v_o) : V::subs(h, v_o);
        if (V::mask_gt(v_f, limit) == 0) break;
        h_store[s] = V::max(h, v_f);
        v_f = V::sub_floor(v_f, v_x);
      }
      if (s < seg) break;
    }

    if constexpr (kLocal) {
      if (V::mask_gt(v_max, v_best) != 0) {
        const Elem col_best = V::hmax(v_max);
        v_best = V::set1(col_best);
        best = col_best;
        best_j = static_cast<std::int64_t>(j);
        best_i = static_cast<std::int64_t>(first_row<V>(h_store, seg, m, v_best));
        if (known > 0 && best >= known) break;
      }
    } else if constexpr (kMode == Mode::kSemiGlobal) {
      // Row m-1 is one lane of one vector: compare in registers, read the element only on improvement.
      if ((V::mask_gt(h_store[last_seg], v_best) & last_lane_bit) != 0) {
        best = reinterpret_cast<const Elem*>(h_store + last_seg)[last_lane];
        v_best = V::set1(best);
        best_j = static_cast<std::int64_t>(j);
      }
    }

    Vec* const swap = h_load;
    h_load = h_store;
    h_store = swap;
  }

  EndPoint end;
  if constexpr (kLocal) {
    if (best > 0)
      end = {static_cast<std::int32_t>(best), static_cast<std::int32_t>(best_i),
             static_cast<std::int32_t>(best_j)};
  } else if constexpr (kMode == Mode::kGlobal) {
    const Elem h_end = reinterpret_cast<const Elem*>(h_load + last_seg)[last_lane];  // H(m-1, n-1)
    end = {static_cast<std::int32_t>(h_end), static_cast<std::int32_t>(m - 1),
           static_cast<std::int32_t>(n - 1)};
  } else {
    end = {static_cast<std::int32_t>(best), static_cast<std::int32_t>(m - 1),
           static_cast<std::int32_t>(best_j)};
  }
  return end;
}

// The pass for model.mode in Narrow (int16) or Wide (int32) lanes.
template <class Narrow, class Wide>
EndPoint by_mode(const PassModel& model, const std::uint8_t* q, std::size_t m, const std::uint8_t* t,
                 std::size_t n, Workspace& workspace, bool wide, std::int32_t known) {
  switch (model.mode) {
    case Mode::kLocal:
      return wide ? run<Wide, Mode::kLocal>(model, q, m, t, n, workspace, known)
                  : run<Narrow, Mode::kLocal>(model, q, m, t, n, workspace, known);
    case Mode::kGlobal:
      return wide ? run<Wide, Mode::kGlobal>(model, q, m, t, n, workspace, 0)
                  : run<Narrow, Mode::kGlobal>(model, q, m, t, n, workspace, 0);
    case Mode::kSemiGlobal:
      return wide ? run<Wide, Mode::kSemiGlobal>(model, q, m, t, n, workspace, 0)
                  : run<Narrow, Mode::kSemiGlobal>(model, q, m, t, n, workspace, 0);
  }
  return {};
}

}  // namespace striped
}  // namespace warpsearch::sw::simd
