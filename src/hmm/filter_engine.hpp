// filter_engine.hpp: the acceleration filters of the pipeline (MSV with its SSV pre-check, Viterbi
// filter) run over a whole database for one model at a time, on CPU threads or on a GPU, with results
// bit-identical to msv_filter / viterbi_filter on each target (profile configured for the target's length
// exactly as Pipeline::process does with reconfig_length).
//
// Contents:
//   FilterSeq          one target: dsq[1..L] (Easel layout, common.hpp)
//   FilterEngine       the interface: set_database, set_model, msv (every target), viterbi (listed targets)
//   FilterEngineStats  what the last calls did (cells, fallbacks, seconds) for --timing and benchmarks
//   make_cpu_filter_engine   the SSE2 filters on a ThreadPool (the definition every engine must equal)
//   make_gpu_filter_engine   the CUDA engine (src/hmm/cuda/): CUDA builds only, else Error(kGpu)
//
// Contract (every engine):
//   - set_database(seqs): the targets of the following calls; the engine may copy them (the GPU engine
//     uploads them once; the pointers need not stay valid afterwards). Replaces any previous database.
//     Targets of length 0 are allowed (the pipeline skips them; engines return what the CPU functions
//     return for an empty target).
//   - set_model(om): om in a local mode (multihit or unihit), any length configuration: the engine
//     configures each target's length itself with msv_tjb_for_length / vit_move_for_length.
//   - msv(out): out[s] == msv_filter(dsq_s, L_s, om configured for L_s) for every target s, bit for bit
//     (score and overflow flag); out.size() == number of targets, else Error(kInternal).
//   - viterbi(ids, out): out[j] == viterbi_filter(dsq_ids[j], ...) for each listed target.
//   - ssv / msv_full / viterbi_states: the integer end states the results come from (msvfilter.hpp,
//     vitfilter.hpp), for tests and benchmarks: ssv_xe(out) every target's SSV xE byte capped at
//     255 - om.bias_b, i.e. min(ssv_xe_reference, 255 - bias_b) (every xE at or above that cap means
//     overflow and ssv_decide decides the same; an engine may stop a target once it gets there), defined
//     for every target, also where ssv_applicable is false; msv_full(ids, out) the full MSV state (no SSV
//     pre-check; xJ is 0 when overflow is set); vit_states(ids, out) the Viterbi state (xC is -32768
//     when overflow is set).
//   - Results do not depend on thread counts, batch sizes, launch shapes or the order of ids.
//   - Not thread-safe: one caller thread at a time per engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hmm/msvfilter.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/vitfilter.hpp"

namespace warpsearch {
class ThreadPool;
}

namespace warpsearch::hmm {

struct FilterSeq {
  const uint8_t* dsq = nullptr;  // dsq[1..L]
  int64_t L = 0;
};

struct FilterEngineStats {
  uint64_t ssv_cells = 0;       // M * L summed over the targets the SSV pass ran on
  uint64_t msv_full_cells = 0;  // M * L of the full MSV (targets SSV could not decide)
  uint64_t msv_full_targets = 0;
  uint64_t vit_cells = 0;
  uint64_t vit_targets = 0;
  double ssv_seconds = 0.0;  // device (or CPU) time of each part, seconds
  double msv_full_seconds = 0.0;
  double vit_seconds = 0.0;
  double upload_seconds = 0.0;  // set_database + set_model transfers
  void reset() { *this = FilterEngineStats{}; }
};

class FilterEngine {
 public:
  virtual ~FilterEngine() = default;
  virtual void set_database(std::span<const FilterSeq> seqs) = 0;
  virtual void set_model(const OProfile& om) = 0;
  virtual void msv(std::span<FilterScore> out) = 0;
  virtual void viterbi(std::span<const uint32_t> ids, std::span<FilterScore> out) = 0;
  virtual void ssv_xe(std::span<int> out) = 0;
  virtual void msv_full(std::span<const uint32_t> ids, std::span<MsvState> out) = 0;
  virtual void vit_states(std::span<const uint32_t> ids, std::span<VitState> out) = 0;
  /// e.g. "GPU 0 (NVIDIA H100 80GB HBM3): SSV/MSV 16x2-bit groups, Viterbi 32-bit" or "CPU, 16 threads".
  virtual std::string describe() const = 0;
  /// Accumulated since construction or the last stats().reset().
  virtual FilterEngineStats& stats() = 0;
};

/// The CPU engine: msv_filter / viterbi_filter (SSE2) over the targets on `pool`'s threads; the integer
/// states through the plain-loop references. The pool must outlive the engine.
std::unique_ptr<FilterEngine> make_cpu_filter_engine(ThreadPool& pool);

/// The GPU engine on CUDA device `device`. residue_budget: device bytes for the packed residues (0: half the
/// free device memory); a database larger than that is processed in chunks uploaded in turn (tests pass a
/// small budget to force chunks). In builds without CUDA: Error(kGpu, "built without CUDA").
std::unique_ptr<FilterEngine> make_gpu_filter_engine(int device, std::size_t residue_budget = 0);

}  // namespace warpsearch::hmm
