// gpu_filters.cu: the GPU FilterEngine (filter_engine.hpp) on one CUDA device.
//
// Database: the targets' residue codes are packed (each target 16-byte aligned, followed by >= 16 bytes of
// padding for the kernels' 4-byte residue loads) and kept on the device for all models. A database larger
// than the memory budget (half the free device memory at set_database) is cut into chunks of consecutive
// targets that are uploaded in turn by every pass; the per-target arrays (lengths, per-length constants,
// outputs) are always resident. Targets of length 0 are filtered on the host with the CPU functions.
//
// Model: set_model builds the kernels' tables from the OProfile accessors (msv_cost, ssv_score, vit_match,
// vit_trans) in the layout of filter_kernels.cuh for the launch shape chosen from M (choose_shape16 /
// choose_shape32) and uploads them.
//
// Results: the kernels return integer states; the host turns them into results with the CPU's functions
// (ssv_decide, msv_score_from_state, vit_score_from_state) and the per-target tjb / move words of
// msv_tjb_for_length / vit_move_for_length, so scores are the CPU's bit for bit.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/check.cuh"
#include "hmm/cuda/filter_kernels.cuh"
#include "hmm/cuda/filter_launch.hpp"
#include "hmm/filter_engine.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

namespace cu = ::warpsearch::gpu;  // CUDA resource owners (buffers.cuh)
using gpu::LaunchShape;

constexpr int kPadBytes = 16;
// An empty target in Easel layout (dsq[0] and dsq[L+1] sentinels), for the length-0 targets.
constexpr uint8_t kEmptyDsq[2] = {kDsqSentinel, kDsqSentinel};
constexpr int16_t kSsvPad = -16384;  // SSV w of padding nodes / rows: relu keeps them at 0
constexpr int16_t kMsvPad = -255;    // MSV -cost of padding: cell 0 (-infinity)

std::size_t align16(std::size_t v) { return (v + 15) & ~std::size_t{15}; }

// SSV/MSV shape: sub-warp groups of G threads with Q words (2Q nodes per thread) when M <= 2 * 32 * 64 and
// the table fits in shared memory, else one block per target.
LaunchShape choose_shape16(int M, int Kp, int smem_optin) {
  LaunchShape best;
  double best_eff = -1.0;
  // Useful cells per lane instruction: a row costs a thread about kRowOverhead + 2 Q instructions (residue,
  // shuffle, carry, address; two cells per instruction pair) for the M * S useful cells of the warp's groups.
  constexpr double kRowOverhead = 8.0;
  for (int Q : gpu::kSsvSubQ) {
    for (int G = 1; G <= 32; ++G) {
      if (2 * G * Q < M) continue;
      const int S = 32 / G;
      const double eff = static_cast<double>(M) * S / (32.0 * (kRowOverhead + 2.0 * Q));
      const int smem = (Kp + 1) * gpu::table_row_stride(Q, G) * 8;
      if (smem > smem_optin) continue;
      if (eff > best_eff + 1e-9) {
        best_eff = eff;
        best = LaunchShape{false, G, Q, gpu::sub_warp_threads(), 0, smem};
      }
      break;  // larger G with the same Q only adds padding
    }
  }
  if (best_eff > 0.0) return best;
  for (int Q : gpu::kSsvBlockQ) {
    const int warps = (M + 2 * 32 * Q - 1) / (2 * 32 * Q);
    if (warps > 32) continue;
    const int G = 32 * warps;
    const double eff = static_cast<double>(M) / (2.0 * Q * G);
    if (eff > best_eff + 1e-9) {
      best_eff = eff;
      best = LaunchShape{true, G, Q, G, 0, 0};
    }
  }
  if (best_eff < 0.0) {
    throw Error(ErrorKind::kInput, "model of " + std::to_string(M) +
                                       " nodes is longer than the GPU MSV filter's " +
                                       std::to_string(2 * 1024 * 64) + "-node limit (use --device cpu)");
  }
  return best;
}

// The full-MSV shape for short target lists (the pipeline's fallbacks, the targets the SSV cannot decide): a
// list that fills only part of the GPU takes as long as its longest target's chain of rows, so the fewest
// nodes per thread (the smallest Q with a group of at most 32 threads; the kernel's speculative blocks then
// leave one shuffle and a few instructions per row), instead of choose_shape16's most cells per instruction.
// Long models keep choose_shape16's shape.
LaunchShape choose_shape16_latency(int M, int Kp, int smem_optin) {
  for (int Q : gpu::kSsvSubQ) {
    const int G = (M + 2 * Q - 1) / (2 * Q);
    if (G > 32) continue;
    const int smem = (Kp + 1) * gpu::table_row_stride(Q, G) * 8;
    if (smem > smem_optin) continue;
    return LaunchShape{false, G, Q, gpu::sub_warp_threads(), 0, smem};
  }
  return choose_shape16(M, Kp, smem_optin);
}

// Viterbi shape: 32-bit cells, Q nodes per thread; sub-warp groups up to 80 * 32 nodes (emissions in shared
// memory, transitions in registers for Q <= 16, else in shared memory too), else one block per target
// (transitions in shared memory when they fit). Scored like choose_shape16 with a per-row overhead of about 6
// nodes' work, among the (Q, G) measured efficient on an H200 (docs/PERFORMANCE.md, 2026-11-29, a sweep of
// every CUDAMPF model length): up to M = 256 the register-transition kernels (Q <= 16); beyond, the
// shared-transition kernels run at about 700 GCUPS per fully used warp (Q = 80: 600, scored x 0.85) as long
// as a warp holds few groups: Q = 32 with G >= 8, Q = 48 and 64 one group per warp, Q = 72 with G >= 6,
// Q = 80 with G >= 8 (Q = 72 with 6 groups of 5 lanes and Q = 80 with 8 of 4 ran at half that).
LaunchShape choose_shape32(int M, int Kp, int smem_optin) {
  LaunchShape best;
  double best_eff = -1.0;
  constexpr double kRowOverhead = 6.0;
  const auto preferred = [M](int Q, int G) {
    if (M <= 256) return Q <= gpu::kVitSubRegsMaxQ;
    switch (Q) {
      case 32: return G >= 8;
      case 48:
      case 64: return G >= 17;
      case 72: return G >= 6;
      case 80: return G >= 8;
      default: return false;
    }
  };
  int tier_max = 80;
  // Tuning knobs for measurements (docs/HMMSEARCH.md): the largest sub-warp Q (longer models go to block
  // mode), whether Q <= 16 keeps the transitions in registers (default) or in shared memory, and one Q to use
  // (any instantiated one; with G <= 32).
  if (const char* env = std::getenv("WARPSEARCH_HMM_GPU_VIT_MAXQ"))
    tier_max = std::min(tier_max, std::atoi(env));
  const char* regs_env = std::getenv("WARPSEARCH_HMM_GPU_VIT_REGS");
  const int regs_max = regs_env != nullptr && std::atoi(regs_env) == 0 ? 0 : gpu::kVitSubRegsMaxQ;
  const char* q_env = std::getenv("WARPSEARCH_HMM_GPU_VIT_Q");
  const int only_q = q_env != nullptr ? std::atoi(q_env) : 0;
  // Every M <= 2560 has a preferred shape; the second pass (any sub-warp shape) is a safety net.
  for (int pass = 0; pass < 2 && best_eff < 0.0; ++pass) {
    for (int Q : gpu::kVitSubQ) {
      if (Q > tier_max) break;
      if (only_q > 0 && Q != only_q) continue;
      for (int G = 1; G <= 32; ++G) {
        if (G * Q < M) continue;
        if (only_q == 0 && pass == 0 && !preferred(Q, G)) break;
        const int S = 32 / G;
        const double eff =
            static_cast<double>(M) * S / (32.0 * (kRowOverhead + Q)) * (only_q == 0 && Q == 80 ? 0.85 : 1.0);
        const int smem =
            (Kp * gpu::vit_emit_stride(Q) + (Q > regs_max ? gpu::vit_trans_stride(Q) : 0)) * G * 2;
        if (smem > smem_optin) continue;
        if (eff > best_eff + 1e-9) {
          best_eff = eff;
          best = LaunchShape{false, G, Q, gpu::sub_warp_threads(), 0, smem, Q <= regs_max};
        }
        break;
      }
    }
  }
  if (best_eff > 0.0) return best;
  for (int Q : gpu::kVitBlockQ) {
    const int warps = (M + 32 * Q - 1) / (32 * Q);
    if (32 * warps > gpu::vit_block_max_threads(Q)) continue;
    const int G = 32 * warps;
    const double eff = static_cast<double>(M) / (static_cast<double>(G) * (kRowOverhead + Q));
    if (eff > best_eff + 1e-9) {
      best_eff = eff;
      const int trans_bytes = gpu::vit_trans_stride(Q) * G * 2;
      best = LaunchShape{true, G, Q, G, 0, trans_bytes <= smem_optin ? trans_bytes : 0};
    }
  }
  if (best_eff < 0.0) {
    throw Error(ErrorKind::kInput, "model of " + std::to_string(M) +
                                       " nodes is longer than the GPU Viterbi filter's " +
                                       std::to_string(1024 * 100) + "-node limit (use --device cpu)");
  }
  return best;
}

// Packs node values v(x, k) (k = 1..M; pad beyond M and for the pad row x = Kp) into the 16x2 word table.
template <class F>
std::vector<uint32_t> pack16(const LaunchShape& sh, int M, int Kp, int16_t pad, F&& value) {
  const int Q = sh.Q, G = sh.G;
  const std::size_t rs = static_cast<std::size_t>(gpu::table_row_stride(Q, G));
  std::vector<uint32_t> tab(static_cast<std::size_t>(Kp + 1) * rs * 2, 0u);
  for (int x = 0; x <= Kp; ++x) {
    for (int t = 0; t < G; ++t) {
      for (int j = 0; j < Q; ++j) {
        uint32_t w = 0;
        for (int b = 0; b < 2; ++b) {
          const int k = (2 * t + b) * Q + j + 1;
          const int16_t v = (x < Kp && k <= M) ? value(x, k) : pad;
          w |= static_cast<uint32_t>(static_cast<uint16_t>(v)) << (16 * b);
        }
        tab[(static_cast<std::size_t>(x) * rs + static_cast<std::size_t>(j / 2) * G + t) * 2 + (j & 1)] = w;
      }
    }
  }
  return tab;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class GpuFilterEngine final : public FilterEngine {
 public:
  GpuFilterEngine(int device, std::size_t residue_budget)
      : device_(device), budget_override_(residue_budget) {
    int count = 0;
    WS_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count) {
      throw Error(ErrorKind::kGpu, "GPU " + std::to_string(device) + " does not exist (" +
                                       std::to_string(count) + " visible)");
    }
    const cu::DeviceGuard guard(device_);
    cudaDeviceProp prop{};
    WS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    name_ = prop.name;
    sms_ = prop.multiProcessorCount;
    smem_optin_ = static_cast<int>(prop.sharedMemPerBlockOptin) - 2048;
    stream_ = std::make_unique<cu::Stream>();
    ev0_ = std::make_unique<cu::Event>();
    ev1_ = std::make_unique<cu::Event>();
    counter_ = cu::DeviceBuffer<unsigned int>(1);
  }

  void set_database(std::span<const FilterSeq> seqs) override {
    const auto t0 = std::chrono::steady_clock::now();
    const cu::DeviceGuard guard(device_);
    n_ = seqs.size();
    if (n_ > std::numeric_limits<uint32_t>::max())
      throw Error(ErrorKind::kInput, "too many targets for the GPU filters");
    len_.assign(n_, 0);
    off_.assign(n_, 0);
    empty_.clear();
    std::size_t total = 0;
    for (std::size_t s = 0; s < n_; ++s) {
      if (seqs[s].L > std::numeric_limits<int32_t>::max() - 64) {
        throw Error(ErrorKind::kInput,
                    "target of " + std::to_string(seqs[s].L) + " residues is too long for the GPU filters");
      }
      len_[s] = static_cast<int32_t>(seqs[s].L);
      off_[s] = total;
      total = align16(total + static_cast<std::size_t>(len_[s]) + kPadBytes);
      if (len_[s] == 0) empty_.push_back(static_cast<uint32_t>(s));
    }
    // Packed by several host threads (a 1M-target database is ~0.5 GB): each writes its targets' residues
    // and the zero padding up to the next target, so every byte is written once (no zero-fill first).
    packed_.reset(new uint8_t[std::max<std::size_t>(total, 1)]);
    {
      const std::size_t nthreads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                                           std::max<std::size_t>(1, n_ / 4096));
      auto pack = [&](std::size_t part) {
        for (std::size_t s = n_ * part / nthreads; s < n_ * (part + 1) / nthreads; ++s) {
          uint8_t* dst = packed_.get() + off_[s];
          const std::size_t end = (s + 1 < n_ ? off_[s + 1] : total) - off_[s];
          if (len_[s] > 0) std::copy_n(seqs[s].dsq + 1, len_[s], dst);
          std::fill(dst + len_[s], dst + end, uint8_t{0});
        }
      };
      std::vector<std::thread> helpers;
      for (std::size_t part = 1; part < nthreads; ++part) helpers.emplace_back(pack, part);
      pack(0);
      for (std::thread& t : helpers) t.join();
    }
    // Chunks of consecutive targets within the residue budget.
    std::size_t free_mem = 0, total_mem = 0;
    WS_CUDA_CHECK(cudaMemGetInfo(&free_mem, &total_mem));
    std::size_t budget = std::max<std::size_t>(free_mem / 2, std::size_t{64} << 20);
    if (budget_override_ > 0) budget = budget_override_;
    chunks_.clear();
    std::size_t begin = 0;
    while (begin < n_) {
      std::size_t end = begin;
      const std::size_t base = off_[begin];
      while (end < n_) {
        const std::size_t stop = end + 1 < n_ ? off_[end + 1] : total;
        if (end > begin && stop - base > budget) break;
        ++end;
      }
      chunks_.push_back(Chunk{begin, end, base, (end < n_ ? off_[end] : total) - base});
      begin = end;
    }
    std::size_t biggest = 0;
    for (const Chunk& c : chunks_) biggest = std::max(biggest, c.bytes);
    d_res_ = cu::DeviceBuffer<uint8_t>(std::max<std::size_t>(biggest, 16));
    resident_ = static_cast<std::size_t>(-1);
    d_off_ = cu::DeviceBuffer<uint64_t>(std::max<std::size_t>(n_, 1));
    d_len_ = cu::DeviceBuffer<int32_t>(std::max<std::size_t>(n_, 1));
    d_out_ = cu::DeviceBuffer<int32_t>(std::max<std::size_t>(n_, 1));
    d_tjb_ = cu::DeviceBuffer<uint8_t>(std::max<std::size_t>(n_, 1));
    d_move_ = cu::DeviceBuffer<int16_t>(std::max<std::size_t>(n_, 1));
    d_items_ = cu::DeviceBuffer<uint32_t>(std::max<std::size_t>(n_, 1));
    if (n_ > 0) {
      d_off_.upload(std::span<const uint64_t>(off_));
      d_len_.upload(std::span<const int32_t>(len_));
    }
    // Every chunk's non-empty targets, longest first (the work list of the passes over all targets).
    all_items_.assign(chunks_.size(), {});
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      for (std::size_t s = chunks_[c].begin; s < chunks_[c].end; ++s)
        if (len_[s] > 0) all_items_[c].push_back(static_cast<uint32_t>(s));
      std::stable_sort(all_items_[c].begin(), all_items_[c].end(),
                       [&](uint32_t a, uint32_t b) { return len_[a] > len_[b]; });
    }
    ssv_lists_M_ = -1;
    ssv_lists_core_ = -1;
    if (chunks_.size() == 1) ensure_chunk(0);
    tjb_scale_ = -1.0f;
    move_key_ = {-1.0f, -1.0f};
    if (have_model_) configure_lengths();  // a kept model meets the new targets' lengths
    stats_.upload_seconds += seconds_since(t0);
  }

  void set_model(const OProfile& om) override {
    const auto t0 = std::chrono::steady_clock::now();
    const cu::DeviceGuard guard(device_);
    om_ = om;
    const int M = om.M, Kp = om.abc->Kp;
    Kp_ = Kp;
    shape16_ = choose_shape16(M, Kp, smem_optin_);
    std::vector<uint32_t> ssv = pack16(shape16_, M, Kp, kSsvPad, [&](int x, int k) {
      return static_cast<int16_t>(-static_cast<int>(om.ssv_score(x, k)));
    });
    std::vector<uint32_t> msv = pack16(shape16_, M, Kp, kMsvPad, [&](int x, int k) {
      return static_cast<int16_t>(-static_cast<int>(om.msv_cost(x, k)));
    });
    d_ssv_tab_ = cu::DeviceBuffer<uint32_t>(ssv.size());
    d_ssv_tab_.upload(std::span<const uint32_t>(ssv));
    d_msv_tab_ = cu::DeviceBuffer<uint32_t>(msv.size());
    d_msv_tab_.upload(std::span<const uint32_t>(msv));
    shape16_.smem_bytes = shape16_.block_mode ? 0 : static_cast<int>(ssv.size() * 4);
    shape16_lat_ = choose_shape16_latency(M, Kp, smem_optin_);
    if (shape16_lat_.block_mode || (shape16_lat_.G == shape16_.G && shape16_lat_.Q == shape16_.Q)) {
      shape16_lat_ = shape16_;
      d_msv_tab_lat_ = cu::DeviceBuffer<uint32_t>();
    } else {
      std::vector<uint32_t> lat = pack16(shape16_lat_, M, Kp, kMsvPad, [&](int x, int k) {
        return static_cast<int16_t>(-static_cast<int>(om.msv_cost(x, k)));
      });
      d_msv_tab_lat_ = cu::DeviceBuffer<uint32_t>(lat.size());
      d_msv_tab_lat_.upload(std::span<const uint32_t>(lat));
      shape16_lat_.smem_bytes = static_cast<int>(lat.size() * 4);
    }

    shape32_ = choose_shape32(M, Kp, smem_optin_);
    const int Q = shape32_.Q, G = shape32_.G;
    const int es = gpu::vit_emit_stride(Q), ts = gpu::vit_trans_stride(Q);
    std::vector<int16_t> emit(static_cast<std::size_t>(Kp) * G * es, int16_t{-32768}),
        trans(static_cast<std::size_t>(G) * ts, int16_t{-32768});
    for (int t = 0; t < G; ++t) {
      for (int j = 0; j < Q; ++j) {
        const int k = t * Q + j + 1;
        if (k > M) continue;  // padding nodes: -32768 (-infinity) everywhere
        for (int x = 0; x < Kp; ++x)
          emit[(static_cast<std::size_t>(x) * G + t) * es + j] = om.vit_match(x, k);
        static constexpr int kOrder[8] = {kOBM, kOMM, kOIM, kODM, kOMD, kOMI, kOII, kODD};
        for (int tt = 0; tt < 8; ++tt)
          trans[static_cast<std::size_t>(t) * ts + tt * Q + j] = om.vit_trans(kOrder[tt], k);
      }
    }
    d_emit_ = cu::DeviceBuffer<int16_t>(emit.size());
    d_emit_.upload(std::span<const int16_t>(emit));
    d_trans_ = cu::DeviceBuffer<int16_t>(trans.size());
    d_trans_.upload(std::span<const int16_t>(trans));
    have_model_ = true;
    configure_lengths();
    stats_.upload_seconds += seconds_since(t0);
  }

  void ssv_xe(std::span<int> out) override {
    check_out(out.size(), n_, "ssv_xe");
    std::vector<int32_t> d = run_ssv();
    const int cap = 255 - om_.bias_b;
    for (std::size_t s = 0; s < n_; ++s) {
      out[s] = len_[s] == 0 ? std::min(ssv_xe_reference(kEmptyDsq, 0, om_), cap) : std::min(128 + d[s], cap);
    }
  }

  void msv(std::span<FilterScore> out) override {
    check_out(out.size(), n_, "msv");
    std::vector<int32_t> d = run_ssv();
    const int cap = 255 - om_.bias_b;
    std::vector<uint32_t> full;
    for (std::size_t s = 0; s < n_; ++s) {
      if (len_[s] == 0) continue;
      const int tjb = tjb_[s];
      SsvResult r{SsvStatus::kNoResult, 0.0f};
      if (ssv_applicable(om_, tjb)) r = ssv_decide(std::min(128 + d[s], cap), om_, tjb);
      if (r.status == SsvStatus::kOk) {
        out[s] = FilterScore{r.score, false};
      } else if (r.status == SsvStatus::kRange) {
        out[s] = FilterScore{std::numeric_limits<float>::infinity(), true};
      } else {
        full.push_back(static_cast<uint32_t>(s));
      }
    }
    if (!full.empty()) {
      std::vector<MsvState> st(full.size());
      msv_full(full, st);
      for (std::size_t j = 0; j < full.size(); ++j)
        out[full[j]] = msv_score_from_state(st[j], om_, tjb_[full[j]]);
    }
    for (uint32_t s : empty_) {
      OProfile om = om_;
      reconfig_length(om, 0);
      out[s] = msv_filter(kEmptyDsq, 0, om);
    }
  }

  void msv_full(std::span<const uint32_t> ids, std::span<MsvState> out) override {
    check_ids(ids, out.size(), "msv_full");
    std::vector<int32_t> r = run_ids(ids, Kind::kMsv);
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const uint32_t s = ids[j];
      if (len_[s] == 0) {
        out[j] = msv_full_state_reference(kEmptyDsq, 0, om_);
      } else {
        out[j] = r[s] == gpu::kMsvOverflow ? MsvState{0, true} : MsvState{r[s], false};
      }
    }
  }

  void vit_states(std::span<const uint32_t> ids, std::span<VitState> out) override {
    check_ids(ids, out.size(), "vit_states");
    std::vector<int32_t> r = run_ids(ids, Kind::kVit);
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const uint32_t s = ids[j];
      if (len_[s] == 0) {
        out[j] = viterbi_state_reference(kEmptyDsq, 0, om_);
      } else {
        out[j] = r[s] == gpu::kVitOverflow ? VitState{-32768, true} : VitState{r[s], false};
      }
    }
  }

  void viterbi(std::span<const uint32_t> ids, std::span<FilterScore> out) override {
    std::vector<VitState> st(ids.size());
    vit_states(ids, st);
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const uint32_t s = ids[j];
      const int move = len_[s] == 0 ? vit_move_for_length(om_, 0) : move_[s];
      out[j] = vit_score_from_state(st[j], om_, move);
    }
  }

  std::string describe() const override {
    std::string d = "GPU " + std::to_string(device_) + " (" + name_ + "): hmm filters";
    if (have_model_) {
      d += ", SSV/MSV " + std::string(shape16_.block_mode ? "block" : "sub-warp") +
           " G=" + std::to_string(shape16_.G) + " Q=" + std::to_string(shape16_.Q) + ", Viterbi " +
           (shape32_.block_mode ? "block" : "sub-warp") + " G=" + std::to_string(shape32_.G) +
           " Q=" + std::to_string(shape32_.Q);
      if (d_msv_tab_lat_.size() > 0)
        d += ", short full-MSV lists G=" + std::to_string(shape16_lat_.G) +
             " Q=" + std::to_string(shape16_lat_.Q);
    }
    if (chunks_.size() > 1) d += ", database in " + std::to_string(chunks_.size()) + " chunks";
    return d;
  }

  FilterEngineStats& stats() override { return stats_; }

 private:
  enum class Kind { kSsv, kMsv, kVit };
  struct Chunk {
    std::size_t begin, end;   // targets
    std::size_t base, bytes;  // packed residue range
  };

  static void check_out(std::size_t got, std::size_t want, const char* what) {
    if (got != want) {
      throw Error(ErrorKind::kInternal, std::string("FilterEngine::") + what + ": output of " +
                                            std::to_string(got) + " entries for " + std::to_string(want) +
                                            " targets");
    }
  }
  void check_ids(std::span<const uint32_t> ids, std::size_t out, const char* what) const {
    check_out(out, ids.size(), what);
    for (uint32_t s : ids) {
      if (s >= n_)
        throw Error(ErrorKind::kInternal, std::string("FilterEngine::") + what + ": target id out of range");
    }
    if (!have_model_)
      throw Error(ErrorKind::kInternal, std::string("FilterEngine::") + what + " before set_model");
  }

  // The per-target constants of the current model and database: tjb (MSV) and the N/C/J move word
  // (Viterbi). They depend on the profile's scales and nj only, so they are recomputed when those change
  // or when the database changes.
  void configure_lengths() {
    const OProfile& om = om_;
    if (om.scale_b != tjb_scale_) {
      tjb_.assign(n_, 0);
      for (std::size_t s = 0; s < n_; ++s) tjb_[s] = msv_tjb_for_length(om, len_[s]);
      if (n_ > 0) d_tjb_.upload(std::span<const uint8_t>(tjb_));
      tjb_scale_ = om.scale_b;
    }
    if (om.scale_w != move_key_[0] || om.nj != move_key_[1]) {
      move_.assign(n_, 0);
      for (std::size_t s = 0; s < n_; ++s) move_[s] = vit_move_for_length(om, len_[s]);
      if (n_ > 0) d_move_.upload(std::span<const int16_t>(move_));
      move_key_ = {om.scale_w, om.nj};
    }
  }

  // SSV segments (filter_kernels.cuh): a target longer than 2 * core rows is cut into parts owning `core`
  // rows each, every part but the first starting at least M - 1 rows before its owned rows (rounded down to a
  // multiple of 4 for the kernels' 4-residue loads). The lists depend on M only through core = max(4 M, 2048)
  // and the start offsets of the cut targets, so they are kept while both stay (all models of M <= 512 share
  // one set). Built without sorting the whole list: the uncut targets keep all_items_' longest-first order,
  // the few segments of cut targets are sorted and merged in (the order only schedules the work: a target's
  // result is the maximum over its segments).
  void build_ssv_lists() {
    const int M = om_.M;
    const int64_t core = (std::max<int64_t>(4 * static_cast<int64_t>(M), 2048) + 3) & ~int64_t{3};
    if (ssv_lists_core_ == core && (ssv_lists_M_ == M || !ssv_lists_cut_)) return;
    bool any_cut = false;
    ssv_items_.assign(chunks_.size(), {});
    ssv_spans_.assign(chunks_.size(), {});
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      std::vector<std::pair<uint32_t, int2>> cut;  // segments of the cut targets
      std::vector<uint32_t>& items = ssv_items_[c];
      std::vector<int2>& spans = ssv_spans_[c];
      items.reserve(all_items_[c].size());
      spans.reserve(all_items_[c].size());
      for (uint32_t s : all_items_[c]) {
        const int64_t L = len_[s];
        if (L <= 2 * core) {
          items.push_back(s);
          spans.push_back(make_int2(0, static_cast<int>(L)));
          continue;
        }
        for (int64_t a = 0; a < L; a += core) {
          const int64_t b = std::min(L, a + core);
          const int64_t start = a == 0 ? 0 : std::max<int64_t>(0, (a - (M - 1)) & ~int64_t{3});
          cut.push_back({s, make_int2(static_cast<int>(start), static_cast<int>(b - start))});
        }
      }
      if (cut.empty()) continue;
      any_cut = true;
      std::stable_sort(cut.begin(), cut.end(),
                       [](const auto& x, const auto& y) { return x.second.y > y.second.y; });
      // Merge the two longest-first lists.
      std::vector<uint32_t> mi;
      std::vector<int2> ms;
      mi.reserve(items.size() + cut.size());
      ms.reserve(items.size() + cut.size());
      std::size_t i = 0, j = 0;
      while (i < items.size() || j < cut.size()) {
        if (j == cut.size() || (i < items.size() && spans[i].y >= cut[j].second.y)) {
          mi.push_back(items[i]);
          ms.push_back(spans[i]);
          ++i;
        } else {
          mi.push_back(cut[j].first);
          ms.push_back(cut[j].second);
          ++j;
        }
      }
      items = std::move(mi);
      spans = std::move(ms);
    }
    ssv_lists_M_ = M;
    ssv_lists_core_ = core;
    ssv_lists_cut_ = any_cut;
    ssv_uploaded_ = static_cast<std::size_t>(-1);
  }

  void ensure_chunk(std::size_t c) {
    if (resident_ == c) return;
    const Chunk& ch = chunks_[c];
    if (ch.bytes > 0) {
      d_res_.upload(std::span<const uint8_t>(packed_.get() + ch.base, ch.bytes));
    }
    resident_ = c;
  }

  // Runs one kernel over the listed targets of every chunk (all non-empty targets for kSsv); returns the
  // per-target-id output array (entries of unlisted targets unspecified).
  std::vector<int32_t> run_kernel(Kind kind, const std::vector<uint32_t>& ids_in, bool all = false) {
    if (!have_model_) throw Error(ErrorKind::kInternal, "FilterEngine: no model set");
    const cu::DeviceGuard guard(device_);
    std::vector<int32_t> out(n_, 0);
    if (n_ == 0) return out;
    // Split the (non-empty) ids by chunk, each part longest first.
    std::vector<std::vector<uint32_t>> parts(all ? 0 : chunks_.size());
    if (!all)
      for (uint32_t s : ids_in) {
        if (len_[s] == 0) continue;
        const auto it = std::upper_bound(chunks_.begin(), chunks_.end(), s,
                                         [](uint32_t v, const Chunk& c) { return v < c.end; });
        parts[static_cast<std::size_t>(it - chunks_.begin())].push_back(s);
      }
    double kernel_s = 0.0;
    uint64_t cells = 0;
    // Chunks in resident-first order so a resident chunk is not uploaded twice.
    std::vector<std::size_t> order(chunks_.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (resident_ < chunks_.size()) std::swap(order[0], order[resident_]);
    for (std::size_t c : order) {
      std::vector<uint32_t>& items = all ? all_items_[c] : parts[c];
      if (items.empty()) continue;
      if (!all)
        std::stable_sort(items.begin(), items.end(),
                         [&](uint32_t a, uint32_t b) { return len_[a] > len_[b]; });
      for (uint32_t s : items) cells += static_cast<uint64_t>(len_[s]) * static_cast<uint64_t>(om_.M);
      ensure_chunk(c);
      const uint32_t nitems =
          all ? static_cast<uint32_t>(ssv_items_[c].size()) : static_cast<uint32_t>(items.size());
      if (all) {
        if (ssv_uploaded_ != c) {  // the resident chunk's SSV work list stays on the device
          if (d_ssv_items_.size() < nitems) {
            d_ssv_items_ = cu::DeviceBuffer<uint32_t>(nitems);
            d_ssv_spans_ = cu::DeviceBuffer<int2>(nitems);
          }
          d_ssv_items_.upload(std::span<const uint32_t>(ssv_items_[c]));
          d_ssv_spans_.upload(std::span<const int2>(ssv_spans_[c]));
          ssv_uploaded_ = c;
        }
      } else {
        if (d_items_.size() < items.size()) d_items_ = cu::DeviceBuffer<uint32_t>(items.size());
        d_items_.upload(std::span<const uint32_t>(items));
      }
      counter_.fill_zero_async(*stream_);
      gpu::DbView db;
      db.res = d_res_.data();
      db.off = d_off_.data();
      db.base = chunks_[c].base;
      db.len = d_len_.data();
      db.items = all ? d_ssv_items_.data() : d_items_.data();
      db.spans = all ? d_ssv_spans_.data() : nullptr;
      db.n = nitems;
      db.counter = counter_.data();
      ev0_->record(*stream_);
      if (kind == Kind::kVit) {
        gpu::VitParams p;
        p.emit = d_emit_.data();
        p.emit_entries = static_cast<int>(d_emit_.size());
        p.trans = d_trans_.data();
        p.trans_in_smem = shape32_.block_mode && shape32_.smem_bytes > 0 ? 1 : 0;
        p.G = shape32_.G;
        p.base = om_.base_w;
        p.e_move = om_.xw[kOE][kOMove];
        p.e_loop = om_.xw[kOE][kOLoop];
        p.n_loop = om_.xw[kON][kOLoop];
        p.c_loop = om_.xw[kOC][kOLoop];
        p.j_loop = om_.xw[kOJ][kOLoop];
        p.move = d_move_.data();
        p.out = d_out_.data();
        LaunchShape sh = shape32_;
        sh.grid = grid_for(sh, nitems);
        gpu::launch_vit(sh, db, p, stream_->get());
      } else if (kind == Kind::kMsv) {
        const bool lat = use_msv_latency_shape(nitems);
        const cu::DeviceBuffer<uint32_t>& tab = lat ? d_msv_tab_lat_ : d_msv_tab_;
        gpu::MsvParams p;
        p.table = reinterpret_cast<const uint2*>(tab.data());
        p.G = (lat ? shape16_lat_ : shape16_).G;
        p.pad_code = Kp_;
        p.table_words = static_cast<int>(tab.size());
        p.bias = om_.bias_b;
        p.base = om_.base_b;
        p.tec = om_.tec_b;
        p.tbm = om_.tbm_b;
        p.tjb = d_tjb_.data();
        p.out = d_out_.data();
        LaunchShape sh = lat ? shape16_lat_ : shape16_;
        sh.grid = grid_for(sh, nitems);
        gpu::launch_msv(sh, db, p, stream_->get());
      } else {
        gpu::SsvParams p;
        p.table = reinterpret_cast<const uint2*>(d_ssv_tab_.data());
        p.G = shape16_.G;
        p.pad_code = Kp_;
        p.table_words = static_cast<int>(d_ssv_tab_.size());
        p.T = 127 - om_.bias_b;
        p.out = d_out_.data();
        LaunchShape sh = shape16_;
        sh.grid = grid_for(sh, nitems);
        gpu::launch_ssv(sh, db, p, stream_->get());
      }
      ev1_->record(*stream_);
      kernel_s += cu::Event::elapsed_ms(*ev0_, *ev1_) / 1000.0;
    }
    d_out_.download(std::span<int32_t>(out));
    if (kind == Kind::kSsv) {
      stats_.ssv_cells += cells;
      stats_.ssv_seconds += kernel_s;
    } else if (kind == Kind::kMsv) {
      stats_.msv_full_cells += cells;
      stats_.msv_full_seconds += kernel_s;
      stats_.msv_full_targets += ids_in.size();  // (never called with all)
    } else {
      stats_.vit_cells += cells;
      stats_.vit_seconds += kernel_s;
      stats_.vit_targets += ids_in.size();
    }
    return out;
  }

  std::vector<int32_t> run_ssv() {
    build_ssv_lists();
    // The kernel takes the maximum over a target's segments with atomicMax.
    {
      const cu::DeviceGuard guard(device_);
      d_out_.fill_zero_async(*stream_);
    }
    return run_kernel(Kind::kSsv, {}, true);
  }
  std::vector<int32_t> run_ids(std::span<const uint32_t> ids, Kind kind) {
    return run_kernel(kind, std::vector<uint32_t>(ids.begin(), ids.end()));
  }

  // Whether a full-MSV list of n targets runs with the latency shape: when it has a latency shape of its own
  // and the list fits 16 warps per SM. WARPSEARCH_HMM_GPU_MSV_LATENCY_MAX (a measurement and test knob) sets
  // the largest such list instead (0: never).
  bool use_msv_latency_shape(std::size_t n) const {
    if (d_msv_tab_lat_.size() == 0) return false;
    std::size_t limit = static_cast<std::size_t>(sms_) * 16 * static_cast<std::size_t>(32 / shape16_lat_.G);
    if (const char* env = std::getenv("WARPSEARCH_HMM_GPU_MSV_LATENCY_MAX"))
      limit = static_cast<std::size_t>(std::strtoull(env, nullptr, 10));
    return n <= limit;
  }

  // Persistent grids: as many blocks as fit on the device at once (never more than the work needs).
  int grid_for(const LaunchShape& sh, std::size_t items) const {
    int per_sm = 1;
    if (sh.block_mode) {
      per_sm = std::max(1, 2048 / sh.block);
      if (sh.smem_bytes > 0)
        per_sm = std::max(1, std::min(per_sm, (smem_optin_ + 2048) / (sh.smem_bytes + 1024)));
      const std::size_t blocks = items;
      return static_cast<int>(std::min<std::size_t>(blocks, static_cast<std::size_t>(per_sm) * sms_));
    }
    if (sh.smem_bytes > 0)
      per_sm = std::max(1, std::min(8, (smem_optin_ + 2048) / (sh.smem_bytes + 1024)));
    else
      per_sm = 8;
    const int S = 32 / sh.G;
    const std::size_t warps = (items + static_cast<std::size_t>(S) - 1) / static_cast<std::size_t>(S);
    // A list of fewer warps than SMs gets one block per warp (the kernels' first round puts one warp of it on
    // each SM); else blocks of 8 busy warps.
    const std::size_t blocks = std::max((warps + 7) / 8, std::min(warps, static_cast<std::size_t>(sms_)));
    return static_cast<int>(
        std::max<std::size_t>(1, std::min<std::size_t>(blocks, static_cast<std::size_t>(per_sm) * sms_)));
  }

  int device_;
  std::string name_;
  int sms_ = 0;
  int smem_optin_ = 0;
  std::unique_ptr<cu::Stream> stream_;
  std::unique_ptr<cu::Event> ev0_, ev1_;
  cu::DeviceBuffer<unsigned int> counter_;

  std::size_t n_ = 0;
  std::vector<int32_t> len_;
  std::vector<uint64_t> off_;
  std::vector<uint32_t> empty_;
  std::unique_ptr<uint8_t[]> packed_;  // the targets at off_, each zero-padded to the next
  std::vector<Chunk> chunks_;
  std::size_t resident_ = static_cast<std::size_t>(-1);
  std::size_t budget_override_ = 0;
  cu::DeviceBuffer<uint8_t> d_res_;
  cu::DeviceBuffer<uint64_t> d_off_;
  cu::DeviceBuffer<int32_t> d_len_, d_out_;
  cu::DeviceBuffer<uint8_t> d_tjb_;
  cu::DeviceBuffer<int16_t> d_move_;
  cu::DeviceBuffer<uint32_t> d_items_;
  std::vector<std::vector<uint32_t>> all_items_;  // per chunk: its non-empty targets, longest first
  // The SSV work lists of the current model length: per chunk, segment target ids and (first row, rows),
  // longest first (build_ssv_lists); ssv_uploaded_: the chunk whose lists d_ssv_* hold.
  int ssv_lists_M_ = -1;
  int64_t ssv_lists_core_ = -1;  // core of the lists held
  bool ssv_lists_cut_ = false;   // whether they cut a target (then they depend on M as well)
  std::vector<std::vector<uint32_t>> ssv_items_;
  std::vector<std::vector<int2>> ssv_spans_;
  std::size_t ssv_uploaded_ = static_cast<std::size_t>(-1);
  cu::DeviceBuffer<uint32_t> d_ssv_items_;
  cu::DeviceBuffer<int2> d_ssv_spans_;
  std::vector<uint8_t> tjb_;
  std::vector<int16_t> move_;
  float tjb_scale_ = -1.0f;
  std::array<float, 2> move_key_{-1.0f, -1.0f};

  OProfile om_;
  bool have_model_ = false;
  int Kp_ = 0;
  LaunchShape shape16_, shape32_;
  // The full MSV's shape for short lists (choose_shape16_latency) and its table; shape16_ and an empty table
  // when the model has none of its own.
  LaunchShape shape16_lat_;
  cu::DeviceBuffer<uint32_t> d_ssv_tab_, d_msv_tab_;
  cu::DeviceBuffer<uint32_t> d_msv_tab_lat_;
  cu::DeviceBuffer<int16_t> d_emit_, d_trans_;
  FilterEngineStats stats_;
};

}  // namespace

std::unique_ptr<FilterEngine> make_gpu_filter_engine(int device, std::size_t residue_budget) {
  return std::make_unique<GpuFilterEngine>(device, residue_budget);
}

}  // namespace warpsearch::hmm
