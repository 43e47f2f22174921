// bench_gpu.cpp: database-on-GPU entries: upload a packed database's residues and offsets to the GPU
// and run the per-sequence residue histogram kernel over it, against the CPU reference of that kernel.
//
// The input is packed once per input by the "packed-db" setup (untimed); a run maps the database and
// times upload + kernel + download of the counts (the CUDA context is created before the timed region:
// a search pays it once per process), so Mres/s here is the rate at which a resident database can be
// (re)loaded from the page cache and swept once, the floor under every GPU database search. The CPU
// entry times the reference over the same mapped database.
#include <chrono>
#include <filesystem>
#include <string>

#include "gpu/residue_histogram.hpp"
#include "registry.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/gpu.hpp"

#ifdef WARPSEARCH_HAVE_CUDA
#include "gpu/cuda/buffers.cuh"
#include "gpu/cuda/residue_histogram.cuh"
#endif

namespace warpsearch::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::string db_path(const Context& ctx) { return ctx.tmp + "/packed-db"; }

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

const Setup kPackedDb{"packed-db", [](const Context& ctx) { make_db(ctx.input, db_path(ctx)); }};

Work histogram_cpu(const Context& ctx) {
  const PackedDb db = PackedDb::open(db_path(ctx));
  const Clock::time_point start = Clock::now();
  const auto counts = gpu::residue_histogram_reference(db.all_residues(), db.residue_offsets());
  Work work;
  work.timed_s = seconds_since(start);
  work.bytes = db.total_residues();
  work.residues = db.total_residues();
  work.records = counts.size() / kMaxCodes;
  return work;
}

#ifdef WARPSEARCH_HAVE_CUDA
Work histogram_gpu(const Context& ctx) {
  const DeviceProbe probe = probe_devices();
  if (probe.devices.empty()) throw Error(ErrorKind::kGpu, "no usable GPU: " + probe.unavailable_reason);
  const PackedDb db = PackedDb::open(db_path(ctx));
  gpu::DeviceGuard guard(probe.devices.front().id);
  gpu::Stream stream;  // the context exists from here on
  const Clock::time_point start = Clock::now();
  gpu::DeviceBuffer<std::uint8_t> residues(db.total_residues());
  gpu::DeviceBuffer<std::uint64_t> offsets(db.size() + 1);
  gpu::DeviceBuffer<std::uint32_t> counts(db.size() * kMaxCodes);
  residues.upload(db.all_residues());
  offsets.upload(db.residue_offsets());
  gpu::launch_residue_histogram(residues.data(), offsets.data(), db.size(), counts.data(), stream.get());
  std::vector<std::uint32_t> host(db.size() * kMaxCodes);
  counts.download_async(host, stream);
  stream.synchronize();
  Work work;
  work.timed_s = seconds_since(start);
  work.bytes = db.total_residues();
  work.residues = db.total_residues();
  work.records = db.size();
  return work;
}

std::string gpu_unavailable() {
  if (!gpu_support_compiled()) return "built without CUDA";
  // No CUDA call here: the harness forks runs, and a CUDA context must not exist before fork.
  if (!std::filesystem::exists("/dev/nvidiactl")) return "no NVIDIA driver device files";
  return "";
}
#endif

const Registration kCpuHistogram{{
    .name = "cpu-residue-histogram",
    .description = "CPU reference of the per-sequence residue histogram over a packed database",
    .headline = Headline::kResidues,
    .setup = kPackedDb,
    .body = InternalRun{histogram_cpu},
}};

#ifdef WARPSEARCH_HAVE_CUDA
const Registration kGpuHistogram{{
    .name = "gpu-db-upload-histogram",
    .description = "upload a packed database to GPU 0 and run the residue histogram kernel over it",
    .headline = Headline::kResidues,
    .setup = kPackedDb,
    .body = InternalRun{histogram_gpu},
    .unavailable = gpu_unavailable,
}};
#endif

}  // namespace
}  // namespace warpsearch::bench
