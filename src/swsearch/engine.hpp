// engine.hpp: score engines of the swsearch family: exact local affine-gap Smith-Waterman scores of one
// query against every sequence of a database batch.
//
//   DbBatch          a batch of database sequences (digital codes back to back, offsets)
//   ScoreEngine      set_database (resident for every query), scores(query) -> one score per sequence,
//                    scores2(a, b): two queries at once
//   make_cpu_engine  striped SIMD on a thread pool (src/sw/simd); the definition every engine matches
//   make_gpu_engine  one CUDA device (src/swsearch/cuda); 16-bit kernels, overflow rescored wider
//
// The score is sw::reference::pass(model, query, target).score in local mode (src/sw/model.hpp): the
// maximum over all cells of H, at least 0. Every engine returns exactly that for every pair; an engine
// that computes in 16 bits detects saturation and recomputes those pairs with 32-bit arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "sw/model.hpp"

namespace warpsearch {
class ThreadPool;
}

namespace warpsearch::swsearch {

// Sequence k of a batch is residues[offsets[k], offsets[k+1]). Lengths may be 0 (score 0). The memory
// belongs to the caller and must stay valid while an engine holds the batch (until the next
// set_database or the engine's destruction).
struct DbBatch {
  std::span<const std::uint8_t> residues;
  std::span<const std::uint64_t> offsets;  // size() + 1 entries, offsets[0] == 0
  std::size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::uint64_t length(std::size_t k) const { return offsets[k + 1] - offsets[k]; }
  std::span<const std::uint8_t> sequence(std::size_t k) const {
    return residues.subspan(offsets[k], offsets[k + 1] - offsets[k]);
  }
};

class ScoreEngine {
 public:
  virtual ~ScoreEngine() = default;
  // Makes `batch` the database of every following scores() call (a GPU engine uploads it once).
  virtual void set_database(const DbBatch& batch) = 0;
  // out[k] = local score of query vs sequence k, for every k < batch.size() (out.size() must equal it).
  // query: digital codes, length >= 1. Thread-compatible: one caller at a time per engine.
  virtual void scores(std::span<const std::uint8_t> query, std::span<std::int32_t> out) = 0;
  // Two queries at once: exactly scores(a, out_a) and scores(b, out_b) (the GPU engine runs both in one
  // pass, one query per 16-bit half of its registers).
  virtual void scores2(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                       std::span<std::int32_t> out_a, std::span<std::int32_t> out_b) {
    scores(a, out_a);
    scores(b, out_b);
  }
  // e.g. "CPU, 16 threads, avx2" or "GPU 0 (NVIDIA H100 80GB HBM3): swsearch kernels 16-bit DPX"
  virtual std::string describe() const = 0;
  struct Stats {
    std::uint64_t cells = 0;              // query x target cells scored
    std::uint64_t overflow_rescored = 0;  // pairs recomputed with wider arithmetic
    double kernel_seconds = 0.0;          // device time of the score kernels (GPU engines)
    double upload_seconds = 0.0;          // host -> device time of set_database (GPU engines)
  };
  virtual Stats stats() const = 0;
};

// model.mode must be kLocal. The pool must outlive the engine.
std::unique_ptr<ScoreEngine> make_cpu_engine(const sw::PassModel& model, ThreadPool& pool);
// One CUDA device. Throws Error(kGpu) without CUDA support or on CUDA failures. Pairs whose 16-bit score
// saturates are rescored on the calling thread with sw::simd::pass (32-bit lanes).
//
// border_budget: device bytes for the border columns of the multi-tile kernels (one column per resident
// group, as long as the query (one query per pass) or the batch's longest sequence (query pairs)); when
// the whole grid would need more, the kernels run on fewer blocks (they loop over their work), down to
// one. Proteins need well under the default; a DNA database with chromosome-length records would not
// fit otherwise.
inline constexpr std::size_t kDefaultBorderBudget = std::size_t{2} << 30;
std::unique_ptr<ScoreEngine> make_gpu_engine(const sw::PassModel& model, int device,
                                             std::size_t border_budget = kDefaultBorderBudget);

}  // namespace warpsearch::swsearch
