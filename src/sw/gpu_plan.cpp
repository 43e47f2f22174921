// gpu_plan.cpp: host-side planning of the CUDA pass engine: letter classes, job classification, the
// launch order (LSD radix sort) and the cutting of sorted jobs into slots, warps and buckets.
#include "sw/gpu_plan.hpp"

#include <algorithm>
#include <array>

#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::sw::gpu {

LetterClasses letter_classes(const PassModel& model) {
  LetterClasses lc;
  std::vector<std::array<std::int8_t, kMaxCodes>> columns;
  for (int c = 0; c < kMaxCodes; ++c) {
    std::array<std::int8_t, kMaxCodes> col{};
    for (int q = 0; q < kMaxCodes; ++q) col[static_cast<std::size_t>(q)] = model.table[q * kMaxCodes + c];
    const auto found = std::find(columns.begin(), columns.end(), col);
    lc.code_class[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(found - columns.begin());
    if (found == columns.end()) columns.push_back(col);
  }
  // The pad letter: any class in non-local modes (padded columns are never tracked there); in local
  // mode a class scoring <= kPadScore against every query code, added if the matrix has none.
  lc.pad = 0;
  if (model.mode == Mode::kLocal) {
    const auto all_low = [](const std::array<std::int8_t, kMaxCodes>& col) {
      return std::all_of(col.begin(), col.end(), [](std::int8_t s) { return s <= kPadScore; });
    };
    const auto found = std::find_if(columns.begin(), columns.end(), all_low);
    lc.pad = static_cast<int>(found - columns.begin());
    if (found == columns.end()) {
      std::array<std::int8_t, kMaxCodes> pad{};
      pad.fill(static_cast<std::int8_t>(kPadScore));
      columns.push_back(pad);
    }
  }
  lc.count = static_cast<int>(columns.size());
  lc.ctab.resize(static_cast<std::size_t>(kMaxCodes) * columns.size());
  for (std::size_t q = 0; q < kMaxCodes; ++q)
    for (std::size_t c = 0; c < columns.size(); ++c) lc.ctab[q * columns.size() + c] = columns[c][q];
  return lc;
}

JobClass classify(const PassModel& model, std::uint32_t qlen, std::uint32_t tlen, const PassPolicy& policy,
                  bool known_score) {
  const bool local = model.mode == Mode::kLocal;
  const bool known = local && known_score;
  const auto virtual_rows = [&](int r) { return local ? 0 : static_cast<int>((r - qlen % r) % r); };
  const auto& max_rows = known ? policy.known_max_rows : policy.max_rows;
  JobClass c;
  c.known = known;
  c.shape = static_cast<std::uint8_t>(known ? policy.known_long_shape : policy.long_shape);
  for (std::size_t s = 0; s < kPassShapes.size(); ++s) {
    const PassShape sh = kPassShapes[s];
    const std::int64_t rows = static_cast<std::int64_t>(qlen) + virtual_rows(sh.r);
    if (rows <= max_rows[s] && rows <= sh.g * sh.r) {
      c.shape = static_cast<std::uint8_t>(s);
      break;
    }
  }
  const PassShape sh = kPassShapes[c.shape];
  c.virtual_rows = virtual_rows(sh.r);
  const std::uint64_t rows = static_cast<std::uint64_t>(qlen) + static_cast<std::uint64_t>(c.virtual_rows);
  const auto tile_rows = static_cast<std::uint64_t>(sh.g * sh.r);
  c.tiles = static_cast<std::uint32_t>((rows + tile_rows - 1) / tile_rows);
  // Virtual rows extend the row space (their values grow like real rows): include them in the bound.
  c.lane = fits_int16(model, static_cast<std::int64_t>(qlen) + (local ? 0 : sh.r - 1), tlen) ? LaneKind::k16x2
                                                                                             : LaneKind::k32;
  return c;
}

void sort_jobs(std::span<const JobClass> classes, std::span<const PassJob> jobs,
               std::vector<SortedJob>& order, SortScratch& scratch, ThreadPool* pool) {
  using Item = SortScratch::Item;
  const std::size_t n = classes.size();
  // Dense keys ((lane, shape, known), tiles, length) in as few bits as the batch needs, sorted by LSD
  // radix in passes of at most 12 bits (two for typical batches), moving the planning record along
  // with the key; ties keep input order. Every step runs over fixed chunks of kSortGrain jobs (on the
  // pool when there is one): per-chunk histograms, offsets in (digit, chunk) order and per-chunk
  // scatters give exactly the sequential stable sort, for any thread count.
  const std::size_t chunks = std::max<std::size_t>(1, (n + kSortGrain - 1) / kSortGrain);
  const auto for_chunks = [&](const auto& body) {
    const auto run = [&](std::size_t begin, std::size_t end) { body(begin / kSortGrain, begin, end); };
    if (pool != nullptr && chunks > 1) {
      pool->parallel_for(n, kSortGrain, run);
    } else {
      for (std::size_t c = 0; c < chunks; ++c) run(c * kSortGrain, std::min(n, (c + 1) * kSortGrain));
    }
  };
  std::vector<std::uint64_t>& maxima = scratch.maxima;  // per chunk: max tiles, max target length
  maxima.assign(2 * chunks, 0);
  for_chunks([&](std::size_t c, std::size_t begin, std::size_t end) {
    std::uint64_t tiles = 0, tlen = 0;
    for (std::size_t k = begin; k < end; ++k) {
      tiles = std::max<std::uint64_t>(tiles, classes[k].tiles);
      tlen = std::max<std::uint64_t>(tlen, jobs[k].tlen);
    }
    maxima[2 * c] = tiles;
    maxima[2 * c + 1] = tlen;
  });
  std::uint64_t max_tiles = 0, max_tlen = 0;
  for (std::size_t c = 0; c < chunks; ++c) {
    max_tiles = std::max(max_tiles, maxima[2 * c]);
    max_tlen = std::max(max_tlen, maxima[2 * c + 1]);
  }
  const std::uint64_t groups = 2 * kPassShapes.size() * 2;
  std::vector<Item>& items = scratch.items;
  std::vector<Item>& tmp = scratch.tmp;
  items.resize(n);
  tmp.resize(n);
  for_chunks([&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const JobClass& c = classes[k];
      const PassJob& j = jobs[k];
      const std::int32_t score = c.known ? j.score : 0;
      const std::uint64_t group =
          (static_cast<std::uint64_t>(c.lane) * kPassShapes.size() + c.shape) * 2 + (c.known ? 1 : 0);
      const std::uint64_t length =
          c.known ? std::min<std::uint64_t>(j.tlen, static_cast<std::uint64_t>(score)) : j.tlen;
      items[k].key = (group * (max_tiles + 1) + c.tiles) * (max_tlen + 1) + length;
      items[k].job = {static_cast<std::uint32_t>(k),
                      j.qlen,
                      j.tlen,
                      c.tiles,
                      c.lane,
                      c.shape,
                      static_cast<std::uint8_t>(c.virtual_rows),
                      j.reversed,
                      score};
    }
  });
  const std::uint64_t max_key = groups * (max_tiles + 1) * (max_tlen + 1);
  int bits = 1;
  while (bits < 64 && (max_key >> bits) != 0) ++bits;
  const int passes = (bits + 11) / 12;
  const int digit_bits = (bits + passes - 1) / passes;
  const std::uint64_t mask = (std::uint64_t{1} << digit_bits) - 1;
  const std::size_t digits = static_cast<std::size_t>(mask) + 1;
  std::vector<std::size_t>& count = scratch.count;  // [chunk][digit]: count, then scatter offset
  count.resize(chunks * digits);
  for (int shift = 0; shift < bits; shift += digit_bits) {
    for_chunks([&](std::size_t c, std::size_t begin, std::size_t end) {
      std::size_t* const cnt = count.data() + c * digits;
      std::fill(cnt, cnt + digits, 0);
      for (std::size_t k = begin; k < end; ++k) ++cnt[(items[k].key >> shift) & mask];
    });
    if (n == 0) break;
    const std::size_t first = (items[0].key >> shift) & mask;
    std::size_t in_first = 0;
    for (std::size_t c = 0; c < chunks; ++c) in_first += count[c * digits + first];
    if (in_first == n) continue;  // one digit value: nothing to do
    std::size_t sum = 0;
    for (std::size_t d = 0; d < digits; ++d)
      for (std::size_t c = 0; c < chunks; ++c) {
        std::size_t& x = count[c * digits + d];
        const std::size_t here = x;
        x = sum;
        sum += here;
      }
    for_chunks([&](std::size_t c, std::size_t begin, std::size_t end) {
      std::size_t* const off = count.data() + c * digits;
      for (std::size_t k = begin; k < end; ++k) tmp[off[(items[k].key >> shift) & mask]++] = items[k];
    });
    items.swap(tmp);
  }
  order.resize(n);
  for_chunks([&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) order[k] = items[k].job;
  });
}

std::vector<SortedJob> sort_jobs(std::span<const JobClass> classes, std::span<const PassJob> jobs) {
  std::vector<SortedJob> order;
  SortScratch scratch;
  sort_jobs(classes, jobs, order, scratch);
  return order;
}

void LaunchPlan::clear() {
  jobs.clear();
  offsets.clear();
  slots.clear();
  warps.clear();
  buckets.clear();
  residues = columns = cells16 = cells32 = 0;
}

LaunchCaps LaunchPlan::needs() const {
  return {jobs.size(), static_cast<std::size_t>(residues), static_cast<std::size_t>(columns), slots.size(),
          warps.size()};
}

namespace {

std::uint32_t round_up4(std::uint64_t x) { return static_cast<std::uint32_t>((x + 3) / 4 * 4); }

// Columns each slot of a warp sweeps: every column of its longest target seen by every lane (the last
// lane starts G - 1 steps late), rounded up to the kernel's 4-column chunks.
std::uint32_t warp_cols(std::uint32_t max_n, int g) {
  return round_up4(std::uint64_t{max_n} + static_cast<unsigned>(g) - 1);
}

// The warp being filled.
struct OpenWarp {
  bool active = false;
  LaneKind lane = LaneKind::k16x2;
  std::uint8_t shape = 0;
  int slots_per_warp = 0;
  int pairs = 0;
  std::uint32_t first_slot = 0;
  int slots_used = 0;   // completed slots
  int halves_used = 0;  // halves filled in the current slot
  std::uint32_t max_n = 0;
  std::uint32_t max_tiles = 0;
  bool known = false;  // the warp's jobs have known scores
};

void close_warp(OpenWarp& w, LaunchPlan& plan) {
  if (!w.active) return;
  if (w.halves_used > 0) ++w.slots_used;
  for (; w.slots_used < w.slots_per_warp; ++w.slots_used) plan.slots.push_back(SlotInfo{});
  const PassShape sh = kPassShapes[w.shape];
  WarpInfo info;
  info.column = plan.columns;
  info.cols = warp_cols(w.max_n, sh.g);
  info.tiles = w.max_tiles;
  info.first_slot = w.first_slot;
  info.flags = w.known ? kWarpKnownScores : 0u;
  plan.columns += static_cast<std::uint64_t>(w.slots_per_warp) * info.cols;
  plan.warps.push_back(info);
  plan.buckets.back().warp_end = static_cast<std::uint32_t>(plan.warps.size());
  w = OpenWarp{};
}

}  // namespace

std::size_t plan_launch(const PassModel& model, std::span<const SortedJob> order, std::size_t pos,
                        const LaunchCaps& caps, LaunchPlan& plan) {
  plan.clear();
  const bool local = model.mode == Mode::kLocal;
  OpenWarp w;
  for (; pos < order.size(); ++pos) {
    const SortedJob& c = order[pos];
    const PassShape sh = kPassShapes[c.shape];
    const int spw = 32 / sh.g;
    const bool known = c.score > 0;
    if (w.active && (w.lane != c.lane || w.shape != c.shape || w.known != known)) close_warp(w, plan);

    // Sizes of the launch if this job joins the open (or a new) warp.
    const std::uint32_t max_n = w.active ? std::max(w.max_n, c.tlen) : c.tlen;
    const std::uint64_t columns = plan.columns + static_cast<std::uint64_t>(spw) * warp_cols(max_n, sh.g);
    const std::size_t slots = (w.active ? w.first_slot : plan.slots.size()) + static_cast<std::size_t>(spw);
    const std::size_t warps = plan.warps.size() + 1;
    const std::uint64_t residues = plan.residues + c.qlen + c.tlen;
    const bool fits = plan.jobs.size() + 1 <= caps.jobs && residues <= caps.residues &&
                      columns <= caps.columns && slots <= caps.slots && warps <= caps.warps;
    if (!fits && !plan.jobs.empty()) break;

    if (!w.active) {
      w.active = true;
      w.lane = c.lane;
      w.shape = c.shape;
      w.slots_per_warp = spw;
      w.pairs = lane_pairs(c.lane);
      w.known = known;
      w.first_slot = static_cast<std::uint32_t>(plan.slots.size());
      if (plan.buckets.empty() || plan.buckets.back().lane != c.lane ||
          plan.buckets.back().shape != c.shape) {
        const auto begin = static_cast<std::uint32_t>(plan.warps.size());
        plan.buckets.push_back(Bucket{c.lane, c.shape, begin, begin});
      }
    }
    if (w.halves_used == 0) plan.slots.push_back(SlotInfo{});
    HalfInfo& half = plan.slots.back().half[w.halves_used];
    half.query = plan.residues;
    half.target = plan.residues + c.qlen;
    half.m = static_cast<std::int32_t>(c.qlen);
    half.n = static_cast<std::int32_t>(c.tlen);
    half.job = static_cast<std::int32_t>(plan.jobs.size());
    half.virtual_rows = c.virtual_rows;
    half.reversed = c.reversed ? 1u : 0u;
    half.score = c.score;
    if (!local) {
      const std::int64_t row = static_cast<std::int64_t>(c.qlen) - 1 + c.virtual_rows;
      half.end_tile = static_cast<std::int32_t>(row / (sh.g * sh.r));
      half.end_thread = static_cast<std::int32_t>((row % (sh.g * sh.r)) / sh.r);
    }
    plan.jobs.push_back(c.job);
    plan.offsets.push_back(plan.residues);
    plan.residues = residues;
    (c.lane == LaneKind::k16x2 ? plan.cells16 : plan.cells32) += std::uint64_t{c.qlen} * c.tlen;
    w.max_n = max_n;
    w.max_tiles = std::max(w.max_tiles, c.tiles);
    if (++w.halves_used == w.pairs) {
      w.halves_used = 0;
      if (++w.slots_used == w.slots_per_warp) close_warp(w, plan);
    }
  }
  close_warp(w, plan);
  return pos;
}

}  // namespace warpsearch::sw::gpu
