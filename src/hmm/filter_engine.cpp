// filter_engine.cpp: the CPU filter engine (filter_engine.hpp's definition of every engine's results),
// and make_gpu_filter_engine for builds without CUDA (it throws; CUDA builds define it in src/hmm/cuda/).
//
// The CPU engine keeps its own copy of the database (set_database: the contract lets the caller free its
// sequences afterwards) and a copy of the model. Every call is a parallel_for over the targets (or the
// listed ids) on the pool; each chunk copies the profile once and configures it for each target's length
// with reconfig_length, exactly as Pipeline::process does before msv_filter / viterbi_filter, then writes
// the target's result by index: results do not depend on the pool size or the chunking.
//   msv        p7_MSVFilter as msv_filter composes it (ssv_filter, then msv_filter_full when the SSV cannot
//              decide; kRange is overflow), spelled out here to count the full-MSV fallbacks; length-0
//              targets: -inf, no overflow (the contract's value; the pipeline never scores them)
//   viterbi    viterbi_filter
//   ssv_xe / msv_full / vit_states   the plain-loop references of the integer states
// Stats: cells are M * L of the targets each part ran on; seconds are the wall time of the calls (on CPU
// threads the SSV and its full-MSV fallbacks are not timed apart: msv() counts as ssv_seconds).
#include "hmm/filter_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

namespace warpsearch::hmm {
namespace {

// Targets per parallel chunk: each chunk copies the profile once.
constexpr std::size_t kEngineChunk = 32;

class CpuFilterEngine final : public FilterEngine {
 public:
  explicit CpuFilterEngine(ThreadPool& pool) : pool_(pool) {}

  void set_database(std::span<const FilterSeq> seqs) override {
    // One buffer: target s is sentinel, residues, sentinel at offset_[s] (dsq[0..L+1], Easel layout).
    std::size_t total = 0;
    for (const FilterSeq& s : seqs) total += static_cast<std::size_t>(s.L) + 2;
    residues_.assign(total, kDsqSentinel);
    offset_.resize(seqs.size());
    length_.resize(seqs.size());
    std::size_t at = 0;
    for (std::size_t s = 0; s < seqs.size(); ++s) {
      offset_[s] = at;
      length_[s] = seqs[s].L;
      for (int64_t i = 1; i <= seqs[s].L; ++i) residues_[at + static_cast<std::size_t>(i)] = seqs[s].dsq[i];
      at += static_cast<std::size_t>(seqs[s].L) + 2;
    }
  }

  void set_model(const OProfile& om) override { om_ = om; }

  void msv(std::span<FilterScore> out) override {
    require_model("msv");
    if (out.size() != length_.size()) size_error("msv", out.size(), length_.size());
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<uint64_t> ssv_cells(chunks(out.size()), 0), full_cells(chunks(out.size()), 0),
        full_targets(chunks(out.size()), 0);
    for_targets(out.size(), [&](std::size_t c, std::size_t j, const OProfile& om) {
      const int L = static_cast<int>(length_[j]);
      if (L == 0) {  // the contract: what msv_filter returns for an empty target
        out[j] = msv_filter(dsq(j), 0, om);
        return;
      }
      const uint64_t cells = static_cast<uint64_t>(om.M) * static_cast<uint64_t>(L);
      if (ssv_applicable(om, om.tjb_b)) ssv_cells[c] += cells;
      const SsvResult r = ssv_filter(dsq(j), L, om);
      if (r.status == SsvStatus::kOk) {
        out[j] = FilterScore{r.score, false};
      } else if (r.status == SsvStatus::kRange) {
        out[j] = FilterScore{std::numeric_limits<float>::infinity(), true};
      } else {
        out[j] = msv_filter_full(dsq(j), L, om);
        full_cells[c] += cells;
        ++full_targets[c];
      }
    });
    for (std::size_t c = 0; c < ssv_cells.size(); ++c) {
      stats_.ssv_cells += ssv_cells[c];
      stats_.msv_full_cells += full_cells[c];
      stats_.msv_full_targets += full_targets[c];
    }
    stats_.ssv_seconds += seconds_since(t0);
  }

  void viterbi(std::span<const uint32_t> ids, std::span<FilterScore> out) override {
    require_ids("viterbi", ids, out.size());
    const auto t0 = std::chrono::steady_clock::now();
    for_targets(
        ids.size(),
        [&](std::size_t, std::size_t j, const OProfile& om) {
          out[j] = viterbi_filter(dsq(ids[j]), static_cast<int>(length_[ids[j]]), om);
        },
        ids);
    count_vit(ids);
    stats_.vit_seconds += seconds_since(t0);
  }

  void ssv_xe(std::span<int> out) override {
    require_model("ssv_xe");
    if (out.size() != length_.size()) size_error("ssv_xe", out.size(), length_.size());
    const auto t0 = std::chrono::steady_clock::now();
    for_targets(out.size(), [&](std::size_t, std::size_t j, const OProfile& om) {
      // The contract caps xE at 255 - bias_b (every value from there on means overflow).
      out[j] = std::min(ssv_xe_reference(dsq(j), static_cast<int>(length_[j]), om),
                        255 - static_cast<int>(om.bias_b));
    });
    for (const int64_t L : length_)
      stats_.ssv_cells += static_cast<uint64_t>(om_->M) * static_cast<uint64_t>(L);
    stats_.ssv_seconds += seconds_since(t0);
  }

  void msv_full(std::span<const uint32_t> ids, std::span<MsvState> out) override {
    require_ids("msv_full", ids, out.size());
    const auto t0 = std::chrono::steady_clock::now();
    for_targets(
        ids.size(),
        [&](std::size_t, std::size_t j, const OProfile& om) {
          out[j] = msv_full_state_reference(dsq(ids[j]), static_cast<int>(length_[ids[j]]), om);
        },
        ids);
    for (const uint32_t id : ids)
      stats_.msv_full_cells += static_cast<uint64_t>(om_->M) * static_cast<uint64_t>(length_[id]);
    stats_.msv_full_targets += ids.size();
    stats_.msv_full_seconds += seconds_since(t0);
  }

  void vit_states(std::span<const uint32_t> ids, std::span<VitState> out) override {
    require_ids("vit_states", ids, out.size());
    const auto t0 = std::chrono::steady_clock::now();
    for_targets(
        ids.size(),
        [&](std::size_t, std::size_t j, const OProfile& om) {
          out[j] = viterbi_state_reference(dsq(ids[j]), static_cast<int>(length_[ids[j]]), om);
        },
        ids);
    count_vit(ids);
    stats_.vit_seconds += seconds_since(t0);
  }

  std::string describe() const override {
    return fmt::format("CPU, {} thread{}", pool_.size(), pool_.size() == 1 ? "" : "s");
  }

  FilterEngineStats& stats() override { return stats_; }

 private:
  const uint8_t* dsq(std::size_t s) const { return residues_.data() + offset_[s]; }

  static std::size_t chunks(std::size_t n) { return (n + kEngineChunk - 1) / kEngineChunk; }

  static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // body(chunk, j, om): item j of n (a target index, or an index into ids), with om a chunk-local copy of
  // the model configured for the length of item j's target.
  template <class Body>
  void for_targets(std::size_t n, const Body& body, std::span<const uint32_t> ids = {}) {
    pool_.parallel_for(n, kEngineChunk, [&](std::size_t begin, std::size_t end) {
      OProfile om = *om_;
      for (std::size_t j = begin; j < end; ++j) {
        const std::size_t s = ids.empty() ? j : ids[j];
        reconfig_length(om, static_cast<int>(length_[s]));
        body(begin / kEngineChunk, j, om);
      }
    });
  }

  void count_vit(std::span<const uint32_t> ids) {
    for (const uint32_t id : ids)
      stats_.vit_cells += static_cast<uint64_t>(om_->M) * static_cast<uint64_t>(length_[id]);
    stats_.vit_targets += ids.size();
  }

  void require_model(const char* what) const {
    if (!om_)
      throw Error(ErrorKind::kInternal, fmt::format("FilterEngine::{} called before set_model", what));
  }

  void require_ids(const char* what, std::span<const uint32_t> ids, std::size_t out_size) const {
    require_model(what);
    if (out_size != ids.size()) size_error(what, out_size, ids.size());
    for (const uint32_t id : ids) {
      if (id >= length_.size()) {
        throw Error(ErrorKind::kInternal,
                    fmt::format("FilterEngine::{}: target id {} out of range ({} targets)", what, id,
                                length_.size()));
      }
    }
  }

  [[noreturn]] static void size_error(const char* what, std::size_t got, std::size_t want) {
    throw Error(ErrorKind::kInternal,
                fmt::format("FilterEngine::{}: output holds {} results, expected {}", what, got, want));
  }

  ThreadPool& pool_;
  std::vector<uint8_t> residues_;
  std::vector<std::size_t> offset_;
  std::vector<int64_t> length_;
  std::optional<OProfile> om_;
  FilterEngineStats stats_;
};

}  // namespace

std::unique_ptr<FilterEngine> make_cpu_filter_engine(ThreadPool& pool) {
  return std::make_unique<CpuFilterEngine>(pool);
}

#if !defined(WARPSEARCH_HAVE_CUDA)
std::unique_ptr<FilterEngine> make_gpu_filter_engine(int device, std::size_t /*residue_budget*/) {
  throw Error(
      ErrorKind::kGpu,
      fmt::format("cannot run the hmmsearch filters on GPU {}: warpsearch was built without CUDA", device));
}
#endif

}  // namespace warpsearch::hmm
