// gpu_engine.cu: the CUDA score engine of swsearch (engine.hpp): the database batch resident on one
// GPU, length-partitioned (gpu_plan.hpp), scored against each query by the 16-bit kernels of
// sw_kernels.cuh (score_kernel for one query, score_kernel_qs for two at once: scores2); pairs whose 16-bit
// score saturates are rescored on the host with 32-bit SIMD lanes.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/check.cuh"
#include "sw/simd/pass.hpp"
#include "swsearch/cuda/sw_kernels.cuh"
#include "swsearch/engine.hpp"
#include "swsearch/gpu_plan.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::swsearch {
namespace {

namespace cu = ::warpsearch::gpu;
using gpu::KernelParams;

using KernelFn = void (*)(KernelParams);

template <int G, int R, bool kMulti>
KernelFn kernel_for(int mode) {
  return mode == gpu::kPair ? &gpu::score_kernel<G, R, kMulti, gpu::kPair>
                            : &gpu::score_kernel<G, R, kMulti, gpu::kPrivate>;
}

// f(G, R) for the single-tile shape s of gpu::kShapes, G and R as std::integral_constant (the kernels'
// compile-time shapes; tests/swsearch_gpu runs every shape).
template <class F>
auto with_shape(gpu::Shape s, F&& f) {
#define WS_SW_SHAPE(g, r) \
  if (s.G == (g) && s.R == (r)) return f(std::integral_constant<int, g>{}, std::integral_constant<int, r>{});
  WS_SW_SHAPE(4, 8)
  WS_SW_SHAPE(4, 16)
  WS_SW_SHAPE(8, 12)
  WS_SW_SHAPE(8, 16)
  WS_SW_SHAPE(16, 12)
  WS_SW_SHAPE(16, 16)
  WS_SW_SHAPE(32, 10)
  WS_SW_SHAPE(32, 12)
  WS_SW_SHAPE(32, 14)
  WS_SW_SHAPE(32, 16)
#undef WS_SW_SHAPE
  throw Error(ErrorKind::kInternal,
              "swsearch: no kernel for shape " + std::to_string(s.G) + "x" + std::to_string(s.R));
}

// The kernel of a shape (single-tile) or of the multi-tile shape, in table mode `mode`.
KernelFn kernel_of(gpu::Shape s, bool multi, int mode) {
  if (multi) {
    static_assert(gpu::kMultiShape.G == 32 && gpu::kMultiShape.R == 16);
    return kernel_for<32, 16, true>(mode);
  }
  return with_shape(
      s, [mode](auto g, auto r) { return kernel_for<decltype(g)::value, decltype(r)::value, false>(mode); });
}

using QsKernelFn = void (*)(gpu::QsParams);

// The query-stationary kernel of a shape (single-tile) or of a multi-tile shape (G = 32, R of
// gpu::kQpairMultiR).
QsKernelFn qs_kernel_of(gpu::Shape s, bool multi) {
  if (multi) {
    static_assert(gpu::kQpairMultiR[0] == 10 && gpu::kQpairMultiR[3] == 16);
    if (s.G == 32 && s.R == 10) return &gpu::score_kernel_qs<32, 10, true>;
    if (s.G == 32 && s.R == 12) return &gpu::score_kernel_qs<32, 12, true>;
    if (s.G == 32 && s.R == 14) return &gpu::score_kernel_qs<32, 14, true>;
    if (s.G == 32 && s.R == 16) return &gpu::score_kernel_qs<32, 16, true>;
    throw Error(ErrorKind::kInternal,
                "swsearch: no multi-tile query-pair kernel for R = " + std::to_string(s.R));
  }
  return with_shape(s, [](auto g, auto r) -> QsKernelFn {
    return &gpu::score_kernel_qs<decltype(g)::value, decltype(r)::value, false>;
  });
}

// Measurement knob WARPSEARCH_SW_GPU_TABLE=pair|private (default pair, the faster: sw_kernels.cuh);
// results are identical.
int table_mode_from_env() {
  const char* v = std::getenv("WARPSEARCH_SW_GPU_TABLE");
  if (v == nullptr || *v == '\0' || std::string(v) == "pair") return gpu::kPair;
  if (std::string(v) == "private") return gpu::kPrivate;
  throw Error(ErrorKind::kUsage, std::string("WARPSEARCH_SW_GPU_TABLE must be pair or private, not ") + v);
}

std::uint32_t both_halves(int v) {
  const auto h = static_cast<std::uint16_t>(static_cast<std::int16_t>(v));
  return static_cast<std::uint32_t>(h) | static_cast<std::uint32_t>(h) << 16;
}

class GpuScoreEngine final : public ScoreEngine {
 public:
  GpuScoreEngine(const sw::PassModel& model, int device, std::size_t border_budget)
      : model_(model), device_(device), border_budget_(border_budget) {
    if (model.mode != sw::Mode::kLocal)
      throw Error(ErrorKind::kInternal, "swsearch GPU engine: local mode only");
    cu::DeviceGuard guard(device_);
    cudaDeviceProp prop{};
    WS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    name_ = prop.name;
    sms_ = prop.multiProcessorCount;
    mode_ = table_mode_from_env();
    // The largest table any query and batch can need (every code its own class): the kernels' attribute.
    const gpu::LetterClasses all = gpu::make_letter_classes(model_);
    max_smem_ = gpu::table_smem_bytes(all.K, all.K, mode_);
    if (max_smem_ > static_cast<std::size_t>(prop.sharedMemPerBlockOptin))
      throw Error(ErrorKind::kGpu, "swsearch: the substitution table (" + std::to_string(max_smem_) +
                                       " bytes) does not fit in shared memory");
    // Stream and events belong to this device: created here, under the guard (members default-constructed
    // before the constructor body would live on whichever device was current).
    stream_ = cu::Stream();
    start_ = cu::Event();
    stop_ = cu::Event();
    ready_ = cu::Event();
    for (std::size_t i = 0; i < kSideStreams; ++i) {
      side_[i] = cu::Stream();
      side_done_[i] = cu::Event();
    }
    d_class_ = cu::DeviceBuffer<std::uint8_t>(kMaxCodes);
    for (const gpu::Shape s : gpu::kShapes) prepare(kernel_of(s, false, mode_), max_smem_);
    prepare(kernel_of(gpu::kMultiShape, true, mode_), max_smem_);
    const std::size_t max_qs_smem = gpu::qs_smem_bytes(all.K, gpu::kMultiShape.R);
    if (max_qs_smem > static_cast<std::size_t>(prop.sharedMemPerBlockOptin))
      throw Error(ErrorKind::kGpu, "swsearch: the query profile tile (" + std::to_string(max_qs_smem) +
                                       " bytes) does not fit in shared memory");
    for (const gpu::Shape s : gpu::kShapes) prepare(qs_kernel_of(s, false), max_qs_smem);
    for (const int R : gpu::kQpairMultiR) prepare(qs_kernel_of(gpu::Shape{32, R}, true), max_qs_smem);
  }

  void set_database(const DbBatch& batch) override {
    cu::DeviceGuard guard(device_);
    const auto t0 = std::chrono::steady_clock::now();
    batch_ = batch;
    n_ = batch.size();
    db_classes_ = gpu::make_letter_classes(model_, gpu::codes_present(batch.residues));
    d_class_.upload(std::span<const std::uint8_t>(db_classes_.of_code.data(), db_classes_.of_code.size()));
    std::vector<std::uint64_t> lengths(n_);
    for (std::size_t k = 0; k < n_; ++k) lengths[k] = batch.length(k);
    plan_ = gpu::plan_batch(lengths);
    std::vector<uint2> pairs(plan_.pair_a.size());
    for (std::size_t k = 0; k < pairs.size(); ++k) pairs[k] = make_uint2(plan_.pair_a[k], plan_.pair_b[k]);
    d_res_ = cu::DeviceBuffer<std::uint8_t>(std::max<std::size_t>(batch.residues.size(), 1));
    if (!batch.residues.empty()) d_res_.upload(batch.residues);
    d_off_ = cu::DeviceBuffer<std::uint64_t>(batch.offsets.size());
    if (!batch.offsets.empty()) d_off_.upload(batch.offsets);
    d_pairs_ = cu::DeviceBuffer<uint2>(std::max<std::size_t>(pairs.size(), 1));
    if (!pairs.empty()) d_pairs_.upload(std::span<const uint2>(pairs));
    // The query-pair kernels' order: the non-empty sequences, longest first (the pairs list, unpaired).
    std::vector<std::uint32_t> order;
    order.reserve(2 * plan_.pair_a.size());
    for (std::size_t k = 0; k < plan_.pair_a.size(); ++k) {
      order.push_back(plan_.pair_a[k]);
      if (plan_.pair_b[k] != gpu::kNone) order.push_back(plan_.pair_b[k]);
    }
    longest_ = order.empty() ? 0 : batch.length(order.front());
    nseq_ = order.size();
    d_order_ = cu::DeviceBuffer<std::uint32_t>(std::max<std::size_t>(order.size(), 1));
    if (!order.empty()) d_order_.upload(std::span<const std::uint32_t>(order));
    d_scores_ = cu::DeviceBuffer<std::int32_t>(std::max<std::size_t>(n_, 1));
    h_scores_ = cu::PinnedBuffer<std::int32_t>(std::max<std::size_t>(n_, 1));
    d_scores_b_ = cu::DeviceBuffer<std::int32_t>(std::max<std::size_t>(n_, 1));
    h_scores_b_ = cu::PinnedBuffer<std::int32_t>(std::max<std::size_t>(n_, 1));
    stats_.upload_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void scores(std::span<const std::uint8_t> query, std::span<std::int32_t> out) override {
    if (out.size() != n_) throw Error(ErrorKind::kInternal, "swsearch GPU engine: output size mismatch");
    if (query.empty()) throw Error(ErrorKind::kInternal, "swsearch GPU engine: empty query");
    if (n_ == 0) return;
    cu::DeviceGuard guard(device_);
    const int m = static_cast<int>(query.size());
    // Letter classes, padded with the pad class past the last row any kernel reads (m + 1 + 2 * 31 rows,
    // rounded up to 4, plus the word loaded one iteration ahead).
    const std::size_t qpad = (static_cast<std::size_t>(m) + 128 + 3) & ~std::size_t{3};
    const gpu::LetterClasses qc = gpu::make_letter_classes(model_, gpu::codes_present(query));
    std::vector<std::uint8_t> q(qpad, static_cast<std::uint8_t>(qc.K - 1));
    for (int i = 0; i < m; ++i)
      q[static_cast<std::size_t>(i)] = qc.of_code[query[static_cast<std::size_t>(i)] & 31];
    // The table for this query's letters against the batch's (at most 33 x 33 x 33 words).
    table_ = mode_ == gpu::kPair ? gpu::pair_table(model_, qc, db_classes_, gpu::kPadScore)
                                 : gpu::letter_table(model_, qc, db_classes_, gpu::kPadScore);
    if (d_table_.size() < table_.size()) d_table_ = cu::DeviceBuffer<std::uint32_t>(table_.size());
    d_table_.upload_async(table_, stream_);
    const std::size_t smem = gpu::table_smem_bytes(qc.K, db_classes_.K, mode_);
    if (d_query_.size() < qpad) d_query_ = cu::DeviceBuffer<std::uint8_t>(qpad);
    d_query_.upload_async(q, stream_);
    d_scores_.fill_zero_async(stream_);  // zero-length sequences are not in any pair

    KernelParams p;
    p.residues = d_res_.data();
    p.offsets = d_off_.data();
    p.query = d_query_.data();
    p.m = m;
    p.table = d_table_.data();
    p.code_class = d_class_.data();
    p.Kq = qc.K;
    p.Kd = db_classes_.K;
    p.ox2 = both_halves(model_.open + model_.extend);
    p.neg_x2 = both_halves(-model_.extend);
    p.scores = d_scores_.data();

    // The partitions' kernels run on kSideStreams streams, so small partitions and the tail of one
    // partition's grid overlap with the others (one stream measured 2.72 TCUPS on 100k sequences and 3.3 on
    // 400k, where the tails weigh less).
    start_.record(stream_);
    ready_.record(stream_);
    for (std::size_t i = 0; i < kSideStreams; ++i)
      WS_CUDA_CHECK(cudaStreamWaitEvent(side_[i].get(), ready_.get(), 0));
    for (std::size_t k = 0; k < plan_.partitions.size(); ++k) {
      const gpu::Partition& part = plan_.partitions[k];
      const gpu::Shape shape =
          part.shape >= 0 ? gpu::kShapes[static_cast<std::size_t>(part.shape)] : gpu::kMultiShape;
      const bool multi = part.max_length > static_cast<std::uint64_t>(shape.width());
      const KernelFn fn = kernel_of(shape, multi, mode_);
      const int groups_per_block = gpu::kBlockThreads / shape.G;
      std::size_t blocks = (part.pairs + static_cast<std::size_t>(groups_per_block) - 1) /
                           static_cast<std::size_t>(groups_per_block);
      p.pairs = d_pairs_.data() + part.first_pair;
      p.npairs = part.pairs;
      p.border = nullptr;
      p.bstride = 0;
      if (multi) {
        // Multi-tile: one border column per group slot; the grid is at most what is resident at once.
        blocks = std::min<std::size_t>(blocks, resident_blocks(fn, gpu::kBlockThreads, smem));
        blocks = border_blocks(blocks, static_cast<std::size_t>(groups_per_block), m);
        const std::size_t slots = blocks * static_cast<std::size_t>(groups_per_block);
        const std::size_t need = slots * static_cast<std::size_t>(m);
        if (d_border_.size() < need) d_border_ = cu::DeviceBuffer<uint2>(need);
        p.border = d_border_.data();
        p.bstride = static_cast<std::uint32_t>(m);
      }
      fn<<<static_cast<unsigned>(blocks), gpu::kBlockThreads, smem, side_[k % kSideStreams].get()>>>(p);
      WS_CUDA_CHECK(cudaGetLastError());
    }
    for (std::size_t i = 0; i < kSideStreams; ++i) {
      side_done_[i].record(side_[i]);
      WS_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), side_done_[i].get(), 0));
    }
    stop_.record(stream_);
    d_scores_.download_async(std::span<std::int32_t>(h_scores_.data(), n_), stream_);
    stream_.synchronize();
    stats_.kernel_seconds += static_cast<double>(cu::Event::elapsed_ms(start_, stop_)) / 1000.0;
    stats_.cells += static_cast<std::uint64_t>(m) * batch_.residues.size();

    finish(query, h_scores_.data(), out);
  }

  void scores2(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
               std::span<std::int32_t> out_a, std::span<std::int32_t> out_b) override {
    if (out_a.size() != n_ || out_b.size() != n_)
      throw Error(ErrorKind::kInternal, "swsearch GPU engine: output size mismatch");
    if (a.empty() || b.empty()) throw Error(ErrorKind::kInternal, "swsearch GPU engine: empty query");
    if (n_ == 0) return;
    cu::DeviceGuard guard(device_);
    const std::size_t m = std::max(a.size(), b.size());
    const gpu::QpairPlan plan = gpu::qpair_plan(m);
    const gpu::Shape shape = plan.shape;
    const bool multi = plan.multi;
    const int tiles = plan.tiles;
    table_ = gpu::query_pair_profile(model_, a, b, db_classes_, shape, tiles, gpu::kPadScore);
    if (d_table_.size() < table_.size()) d_table_ = cu::DeviceBuffer<std::uint32_t>(table_.size());
    d_table_.upload_async(table_, stream_);
    d_scores_.fill_zero_async(stream_);  // zero-length sequences are not in the order
    d_scores_b_.fill_zero_async(stream_);
    const std::size_t smem = gpu::qs_smem_bytes(db_classes_.K, shape.R);
    const QsKernelFn fn = qs_kernel_of(shape, multi);
    const int groups_per_block = gpu::kQsBlockThreads / shape.G;
    std::size_t blocks =
        (nseq_ + static_cast<std::size_t>(groups_per_block) - 1) / static_cast<std::size_t>(groups_per_block);
    blocks = std::max<std::size_t>(std::min(blocks, resident_blocks(fn, gpu::kQsBlockThreads, smem)), 1);

    gpu::QsParams p;
    p.residues = d_res_.data();
    p.offsets = d_off_.data();
    p.order = d_order_.data();
    p.nseq = static_cast<std::uint32_t>(nseq_);
    p.profile = d_table_.data();
    p.tiles = tiles;
    p.code_class = d_class_.data();
    p.Kd = db_classes_.K;
    p.ox2 = both_halves(model_.open + model_.extend);
    p.neg_x2 = both_halves(-model_.extend);
    p.scores_a = d_scores_.data();
    p.scores_b = d_scores_b_.data();
    if (multi) {
      blocks = border_blocks(blocks, static_cast<std::size_t>(groups_per_block), longest_);
      const std::size_t need = blocks * static_cast<std::size_t>(groups_per_block) * longest_;
      if (d_border_.size() < need) d_border_ = cu::DeviceBuffer<uint2>(need);
      p.border = d_border_.data();
      p.bstride = static_cast<std::uint32_t>(longest_);
    }
    start_.record(stream_);
    if (nseq_ > 0) {
      fn<<<static_cast<unsigned>(blocks), gpu::kQsBlockThreads, smem, stream_.get()>>>(p);
      WS_CUDA_CHECK(cudaGetLastError());
    }
    stop_.record(stream_);
    d_scores_.download_async(std::span<std::int32_t>(h_scores_.data(), n_), stream_);
    d_scores_b_.download_async(std::span<std::int32_t>(h_scores_b_.data(), n_), stream_);
    stream_.synchronize();
    stats_.kernel_seconds += static_cast<double>(cu::Event::elapsed_ms(start_, stop_)) / 1000.0;
    stats_.cells += static_cast<std::uint64_t>(a.size() + b.size()) * batch_.residues.size();
    finish(a, h_scores_.data(), out_a);
    finish(b, h_scores_b_.data(), out_b);
  }

  std::string describe() const override {
    return "GPU " + std::to_string(device_) + " (" + name_ + "): swsearch 16-bit DPX kernels, " +
           (mode_ == gpu::kPair ? "pair" : "bank-private") + " table (query pairs: query profile)";
  }
  Stats stats() const override { return stats_; }

 private:
  // Allows kernel fn up to `smem` bytes of dynamic shared memory.
  template <class Fn>
  static void prepare(Fn fn, std::size_t smem) {
    WS_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  }
  // out = the kernel's scores, those saturated in 16 bits rescored exactly with 32-bit lanes (the pass
  // chooses them for this size).
  void finish(std::span<const std::uint8_t> query, const std::int32_t* got, std::span<std::int32_t> out) {
    for (std::size_t k = 0; k < n_; ++k) {
      std::int32_t s = got[k];
      if (s >= gpu::kSat16) {
        s = sw::simd::pass(model_, query, batch_.sequence(k), workspace_).score;
        ++stats_.overflow_rescored;
      }
      out[k] = s;
    }
  }
  // Blocks of `threads` threads of kernel fn resident at once on the device.
  template <class Fn>
  std::size_t resident_blocks(Fn fn, int threads, std::size_t smem) const {
    int per_sm = 0;
    WS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(fn),
                                                                threads, smem));
    return static_cast<std::size_t>(std::max(per_sm, 1)) * static_cast<std::size_t>(sms_);
  }
  // At most `blocks` blocks of `groups` groups, each group with a border column of `stride` cells, within
  // the border budget (at least one block).
  std::size_t border_blocks(std::size_t blocks, std::size_t groups, std::size_t stride) const {
    const std::size_t per_block = std::max<std::size_t>(groups * stride * sizeof(uint2), 1);
    return std::clamp<std::size_t>(border_budget_ / per_block, 1, std::max<std::size_t>(blocks, 1));
  }

  sw::PassModel model_;
  int device_ = 0;
  std::string name_;
  int sms_ = 1;
  gpu::LetterClasses db_classes_;  // of the current batch
  int mode_ = gpu::kPair;
  std::size_t max_smem_ = 0;
  // The current query's table or query pair's profile (host copy kept for the async upload).
  std::vector<std::uint32_t> table_;
  std::size_t nseq_ = 0;       // non-empty sequences of the batch
  std::uint64_t longest_ = 0;  // their longest length
  cu::DeviceBuffer<std::uint32_t> d_order_;
  cu::DeviceBuffer<std::int32_t> d_scores_b_;
  cu::PinnedBuffer<std::int32_t> h_scores_b_;
  cu::Stream stream_;
  cu::Event start_, stop_;
  static constexpr std::size_t kSideStreams = 3;
  cu::Event ready_;
  std::array<cu::Stream, kSideStreams> side_;
  std::array<cu::Event, kSideStreams> side_done_;
  cu::DeviceBuffer<std::uint32_t> d_table_;
  cu::DeviceBuffer<std::uint8_t> d_class_;
  DbBatch batch_;
  std::size_t n_ = 0;
  gpu::BatchPlan plan_;
  cu::DeviceBuffer<std::uint8_t> d_res_;
  cu::DeviceBuffer<std::uint64_t> d_off_;
  cu::DeviceBuffer<uint2> d_pairs_;
  cu::DeviceBuffer<std::int32_t> d_scores_;
  cu::PinnedBuffer<std::int32_t> h_scores_;
  cu::DeviceBuffer<std::uint8_t> d_query_;
  cu::DeviceBuffer<uint2> d_border_;
  std::size_t border_budget_;
  sw::simd::Workspace workspace_;
  Stats stats_;
};

}  // namespace

std::unique_ptr<ScoreEngine> make_gpu_engine(const sw::PassModel& model, int device,
                                             std::size_t border_budget) {
  return std::make_unique<GpuScoreEngine>(model, device, border_budget);
}

}  // namespace warpsearch::swsearch
