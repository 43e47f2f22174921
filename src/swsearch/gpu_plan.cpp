// gpu_plan.cpp: letter classes, the substitution table and the length partitions of the swsearch GPU kernels;
// also make_gpu_engine for builds without CUDA (it throws; CUDA builds define it in src/swsearch/cuda/).
#include "swsearch/gpu_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "swsearch/engine.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::swsearch::gpu {

LetterClasses make_letter_classes(const sw::PassModel& model, std::uint32_t present) {
  LetterClasses c;
  int n = 0;
  for (int code = 0; code < kMaxCodes; ++code) {
    if ((present >> code & 1u) == 0) continue;  // of_code stays 0
    int found = -1;
    for (int k = 0; k < n && found < 0; ++k) {
      const int r = c.rep[static_cast<std::size_t>(k)];
      bool same = true;
      for (int x = 0; x < kMaxCodes && same; ++x)
        same = model.table[code * kMaxCodes + x] == model.table[r * kMaxCodes + x] &&
               model.table[x * kMaxCodes + code] == model.table[x * kMaxCodes + r];
      if (same) found = k;
    }
    if (found < 0) {
      found = n++;
      c.rep[static_cast<std::size_t>(found)] = static_cast<std::uint8_t>(code);
    }
    c.of_code[static_cast<std::size_t>(code)] = static_cast<std::uint8_t>(found);
  }
  c.K = n + 1;  // + the pad class
  return c;
}

std::uint32_t codes_present(std::span<const std::uint8_t> codes) {
  std::uint32_t mask = 0;
  for (const std::uint8_t c : codes) mask |= 1u << (c & 31u);
  return mask;
}

std::vector<std::uint32_t> letter_table(const sw::PassModel& model, const LetterClasses& query,
                                        const LetterClasses& db, int pad_score) {
  const int Kq = query.K, Kd = db.K;
  std::vector<std::uint32_t> t(static_cast<std::size_t>(Kq) * static_cast<std::size_t>(Kd));
  for (int q = 0; q < Kq; ++q)
    for (int a = 0; a < Kd; ++a) {
      const int v = q == Kq - 1 || a == Kd - 1 ? pad_score
                                               : model.score(query.rep[static_cast<std::size_t>(q)],
                                                             db.rep[static_cast<std::size_t>(a)]);
      const auto h = static_cast<std::uint32_t>(static_cast<std::uint16_t>(static_cast<std::int16_t>(v)));
      t[static_cast<std::size_t>(q) * static_cast<std::size_t>(Kd) + static_cast<std::size_t>(a)] = h;
    }
  return t;
}

std::vector<std::uint32_t> pair_table(const sw::PassModel& model, const LetterClasses& query,
                                      const LetterClasses& db, int pad_score) {
  const std::vector<std::uint32_t> one = letter_table(model, query, db, pad_score);
  const auto Kq = static_cast<std::size_t>(query.K), Kd = static_cast<std::size_t>(db.K);
  const auto Kb = static_cast<std::size_t>(pair_stride(db.K));
  std::vector<std::uint32_t> t(Kq * Kb * Kb, 0u);
  for (std::size_t q = 0; q < Kq; ++q)
    for (std::size_t b = 0; b < Kd; ++b)
      for (std::size_t a = 0; a < Kd; ++a)
        t[q * Kb * Kb + a + Kb * b] = one[q * Kd + a] | one[q * Kd + b] << 16;
  return t;
}

QpairPlan qpair_plan(std::size_t m) {
  QpairPlan plan;
  for (const Shape s : kShapes)
    if (m <= static_cast<std::size_t>(s.width())) {
      plan.shape = s;
      return plan;
    }
  plan.multi = true;
  std::size_t best = 0;
  for (const int R : kQpairMultiR) {
    const Shape s{32, R};
    const std::size_t w = static_cast<std::size_t>(s.width()), tiles = (m + w - 1) / w;
    if (best == 0 || tiles * w <= best) {
      best = tiles * w;
      plan.shape = s;
      plan.tiles = static_cast<int>(tiles);
    }
  }
  return plan;
}

std::vector<std::uint32_t> query_pair_profile(const sw::PassModel& model, std::span<const std::uint8_t> a,
                                              std::span<const std::uint8_t> b, const LetterClasses& db,
                                              Shape shape, int tiles, int pad_score) {
  const auto Kd = static_cast<std::size_t>(db.K), R = static_cast<std::size_t>(shape.R);
  const auto G = static_cast<std::size_t>(shape.G), W = G * R;
  std::vector<std::uint32_t> out(static_cast<std::size_t>(tiles) * Kd * R * 32u);
  auto half = [&](std::span<const std::uint8_t> q, std::size_t i, std::size_t d) {
    const int v = i >= q.size() || d + 1 == Kd ? pad_score : model.score(q[i], db.rep[d]);
    return static_cast<std::uint32_t>(static_cast<std::uint16_t>(static_cast<std::int16_t>(v)));
  };
  std::size_t w = 0;
  for (std::size_t t = 0; t < static_cast<std::size_t>(tiles); ++t)
    for (std::size_t d = 0; d < Kd; ++d)
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t lane = 0; lane < 32; ++lane) {
          const std::size_t i = t * W + (lane % G) * R + r;
          out[w++] = half(a, i, d) | half(b, i, d) << 16;
        }
  return out;
}

BatchPlan plan_batch(std::span<const std::uint64_t> lengths) {
  std::vector<std::uint32_t> order;
  order.reserve(lengths.size());
  for (std::size_t k = 0; k < lengths.size(); ++k)
    if (lengths[k] > 0) order.push_back(static_cast<std::uint32_t>(k));
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return lengths[x] != lengths[y] ? lengths[x] > lengths[y] : x < y;
  });
  auto shape_of = [](std::uint64_t len) {
    for (std::size_t s = 0; s < kShapes.size(); ++s)
      if (len <= static_cast<std::uint64_t>(kShapes[s].width())) return static_cast<int>(s);
    return -1;
  };
  BatchPlan plan;
  std::size_t i = 0;
  while (i < order.size()) {
    const int shape = shape_of(lengths[order[i]]);
    std::size_t j = i;
    while (j < order.size() && shape_of(lengths[order[j]]) == shape) ++j;
    Partition part;
    part.shape = shape;
    part.first_pair = static_cast<std::uint32_t>(plan.pair_a.size());
    part.max_length = lengths[order[i]];
    for (std::size_t k = i; k < j; k += 2) {
      plan.pair_a.push_back(order[k]);
      plan.pair_b.push_back(k + 1 < j ? order[k + 1] : kNone);
      part.residues += lengths[order[k]] + (k + 1 < j ? lengths[order[k + 1]] : 0);
    }
    part.pairs = static_cast<std::uint32_t>(plan.pair_a.size()) - part.first_pair;
    plan.partitions.push_back(part);
    i = j;
  }
  return plan;
}

}  // namespace warpsearch::swsearch::gpu

namespace warpsearch::swsearch {
#if !defined(WARPSEARCH_HAVE_CUDA)
std::unique_ptr<ScoreEngine> make_gpu_engine(const sw::PassModel& /*model*/, int device,
                                             std::size_t /*border_budget*/) {
  throw Error(ErrorKind::kGpu,
              fmt::format("cannot run swsearch on GPU {}: warpsearch was built without CUDA", device));
}
#endif
}  // namespace warpsearch::swsearch
