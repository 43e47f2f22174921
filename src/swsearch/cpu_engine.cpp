// cpu_engine.cpp: the CPU score engine of swsearch (make_cpu_engine, engine.hpp): the local score of one
// query against every sequence of the database batch, one striped-SIMD pass per pair (sw::simd::pass,
// the best instruction set of this CPU) on the thread pool.
//
// The targets are cut into parallel_for chunks of about kChunkResidues residues on average (the chunk
// boundaries depend only on the batch, never on timing or the thread count); each worker thread reuses
// one sw::simd::Workspace for all its pairs. Every score is written by index, so the output is the same
// for any thread count. A sequence of length 0 scores 0 (simd::pass needs non-empty sequences).
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "sw/simd/pass.hpp"
#include "swsearch/engine.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::swsearch {
namespace {

// Average residues per parallel_for chunk: large enough to amortise the chunk dispatch, small enough
// that long and short sequences balance over the threads.
constexpr std::uint64_t kChunkResidues = 1 << 16;

class CpuEngine final : public ScoreEngine {
 public:
  CpuEngine(const sw::PassModel& model, ThreadPool& pool)
      : model_(model), pool_(pool), isa_(sw::simd::best_isa()) {
    if (model.mode != sw::Mode::kLocal)
      throw Error(ErrorKind::kInternal, "swsearch CPU engine: the model's mode must be local");
  }

  void set_database(const DbBatch& batch) override {
    if (!batch.offsets.empty() &&
        (batch.offsets.front() != 0 || batch.offsets.back() > batch.residues.size()))
      throw Error(ErrorKind::kInternal, "swsearch CPU engine: batch offsets do not match its residues");
    batch_ = batch;
    const std::uint64_t residues = batch.offsets.empty() ? 0 : batch.offsets.back();
    const std::size_t n = batch.size();
    // Sequences per chunk such that a chunk holds about kChunkResidues residues on average.
    grain_ = residues == 0 ? std::max<std::size_t>(n, 1)
                           : static_cast<std::size_t>(std::clamp<std::uint64_t>(
                                 kChunkResidues * n / residues, 1, std::max<std::uint64_t>(n, 1)));
    residues_ = residues;
  }

  void scores(std::span<const std::uint8_t> query, std::span<std::int32_t> out) override {
    if (query.empty()) throw Error(ErrorKind::kInput, "swsearch CPU engine: empty query");
    if (out.size() != batch_.size())
      throw Error(ErrorKind::kInternal,
                  fmt::format("swsearch CPU engine: {} scores requested for {} sequences", out.size(),
                              batch_.size()));
    const DbBatch batch = batch_;
    const sw::PassModel& model = model_;
    const sw::simd::Isa isa = isa_;
    pool_.parallel_for(batch.size(), grain_, [&](std::size_t begin, std::size_t end) {
      thread_local sw::simd::Workspace workspace;
      for (std::size_t k = begin; k < end; ++k) {
        const std::span<const std::uint8_t> target = batch.sequence(k);
        out[k] = target.empty() ? 0 : sw::simd::pass(model, query, target, workspace, isa).score;
      }
    });
    stats_.cells += static_cast<std::uint64_t>(query.size()) * residues_;
  }

  std::string describe() const override {
    return fmt::format("CPU, {} thread{}, {}", pool_.size(), pool_.size() == 1 ? "" : "s",
                       sw::simd::isa_name(isa_));
  }

  Stats stats() const override { return stats_; }

 private:
  sw::PassModel model_;
  ThreadPool& pool_;
  sw::simd::Isa isa_;
  DbBatch batch_;
  std::size_t grain_ = 1;
  std::uint64_t residues_ = 0;
  Stats stats_;
};

}  // namespace

std::unique_ptr<ScoreEngine> make_cpu_engine(const sw::PassModel& model, ThreadPool& pool) {
  return std::make_unique<CpuEngine>(model, pool);
}

}  // namespace warpsearch::swsearch
