// comm.cpp: the communicator and session of warpsearch/dist.hpp, on MPI when the build has it
// (WARPSEARCH_HAVE_MPI) and the process was started by a launcher, else the one-process communicator;
// plus the failure protocol (exchange, agree), the rank-local GPU choice and the default thread count
// (each rank's share of its node's CPUs).
//
// Transfers of any size: gather() sends each rank's buffer to the root point to point (its length, then
// pieces of at most kPieceBytes, since MPI counts are ints), received in rank order; scatter() sends each
// rank its buffer the same way; broadcast() sends the length, then the pieces. Only the thread that
// created the Session calls MPI (MPI_THREAD_FUNNELED).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "dist/bytes.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/thread_pool.hpp"

#ifdef WARPSEARCH_HAVE_MPI
#include <mpi.h>
#endif
#include <unistd.h>

namespace warpsearch::dist {
namespace {

#ifndef WARPSEARCH_HAVE_MPI
// Number of processes an MPI launcher started (OMPI_COMM_WORLD_SIZE, PMI_SIZE), 1 when none says.
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) {
      const int n = std::atoi(v);
      if (n > 1) return n;
    }
  }
  return 1;
}
#endif

#ifdef WARPSEARCH_HAVE_MPI
constexpr std::size_t kPieceBytes = std::size_t{1} << 30;
constexpr int kGatherTag = 7301;
constexpr int kScatterTag = 7302;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ErrorKind::kInternal,
              fmt::format("{} failed: {}", what, std::string(text, static_cast<std::size_t>(len))));
}

bool launched_by_mpi() {
  if (const char* force = std::getenv("WARPSEARCH_MPI")) {
    if (std::string(force) == "1") return true;
    if (std::string(force) == "0") return false;
  }
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}
#endif

}  // namespace

struct CommAccess {
  static const std::shared_ptr<void>& handle(const Comm& comm) { return comm.handle_; }
};

namespace {
#ifdef WARPSEARCH_HAVE_MPI
// The MPI communicator of a Comm: its own (made by split) or the world.
MPI_Comm handle_of(const Comm& comm) {
  const std::shared_ptr<void>& h = CommAccess::handle(comm);
  return h ? *static_cast<const MPI_Comm*>(h.get()) : MPI_COMM_WORLD;
}
#endif
}  // namespace

Comm Comm::split(int color) const {
  Comm out = *this;
#ifdef WARPSEARCH_HAVE_MPI
  if (!mpi_) return out;
  MPI_Comm made = MPI_COMM_NULL;
  check(MPI_Comm_split(handle_of(*this), color, rank_, &made), "MPI_Comm_split");
  out.handle_ = std::shared_ptr<void>(new MPI_Comm(made), [](void* p) {
    auto* c = static_cast<MPI_Comm*>(p);
    MPI_Comm_free(c);
    delete c;
  });
  check(MPI_Comm_rank(made, &out.rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(made, &out.size_), "MPI_Comm_size");
  const int mine = world_rank(rank_);
  out.world_ranks_.assign(static_cast<std::size_t>(out.size_), 0);
  check(MPI_Allgather(&mine, 1, MPI_INT, out.world_ranks_.data(), 1, MPI_INT, made), "MPI_Allgather");
#else
  static_cast<void>(color);
#endif
  return out;
}

void Comm::barrier() const {
#ifdef WARPSEARCH_HAVE_MPI
  if (mpi_) check(MPI_Barrier(handle_of(*this)), "MPI_Barrier");
#endif
}

void Comm::broadcast(Bytes& bytes, int root) const {
#ifdef WARPSEARCH_HAVE_MPI
  if (!mpi_ || size_ == 1) return;
  auto n = static_cast<std::uint64_t>(bytes.size());
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, root, handle_of(*this)), "MPI_Bcast");
  if (rank_ != root) bytes.resize(static_cast<std::size_t>(n));
  for (std::size_t at = 0; at < bytes.size(); at += kPieceBytes) {
    const std::size_t piece = std::min(kPieceBytes, bytes.size() - at);
    check(MPI_Bcast(bytes.data() + at, static_cast<int>(piece), MPI_BYTE, root, handle_of(*this)),
          "MPI_Bcast");
  }
#else
  static_cast<void>(bytes);
  static_cast<void>(root);
#endif
}

#ifdef WARPSEARCH_HAVE_MPI
namespace {
// Point-to-point transfer of a byte buffer of any size: its length, then pieces of kPieceBytes.
void send_bytes(MPI_Comm comm, std::span<const std::uint8_t> bytes, int dest, int tag) {
  auto n = static_cast<std::uint64_t>(bytes.size());
  check(MPI_Send(&n, 1, MPI_UINT64_T, dest, tag, comm), "MPI_Send");
  for (std::size_t at = 0; at < bytes.size(); at += kPieceBytes) {
    const std::size_t piece = std::min(kPieceBytes, bytes.size() - at);
    check(MPI_Send(bytes.data() + at, static_cast<int>(piece), MPI_BYTE, dest, tag, comm), "MPI_Send");
  }
}

Bytes receive_bytes(MPI_Comm comm, int source, int tag) {
  std::uint64_t n = 0;
  check(MPI_Recv(&n, 1, MPI_UINT64_T, source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  Bytes b(static_cast<std::size_t>(n));
  for (std::size_t at = 0; at < b.size(); at += kPieceBytes) {
    const std::size_t piece = std::min(kPieceBytes, b.size() - at);
    check(MPI_Recv(b.data() + at, static_cast<int>(piece), MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE),
          "MPI_Recv");
  }
  return b;
}
}  // namespace
#endif

std::vector<Bytes> Comm::gather(std::span<const std::uint8_t> bytes, int root) const {
  std::vector<Bytes> all;
  if (!mpi_ || size_ == 1) {
    all.emplace_back(bytes.begin(), bytes.end());
    return all;
  }
#ifdef WARPSEARCH_HAVE_MPI
  if (rank_ != root) {
    send_bytes(handle_of(*this), bytes, root, kGatherTag);
    return all;
  }
  all.resize(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r)
    all[static_cast<std::size_t>(r)] =
        r == root ? Bytes(bytes.begin(), bytes.end()) : receive_bytes(handle_of(*this), r, kGatherTag);
#else
  static_cast<void>(root);
#endif
  return all;
}

Bytes Comm::scatter(std::vector<Bytes>& parts, int root) const {
  if (rank_ == root && parts.size() != static_cast<std::size_t>(size_))
    throw Error(ErrorKind::kInternal, fmt::format("scatter of {} parts on {} ranks", parts.size(), size_));
  if (!mpi_ || size_ == 1) return std::move(parts[static_cast<std::size_t>(rank_)]);
#ifdef WARPSEARCH_HAVE_MPI
  if (rank_ != root) return receive_bytes(handle_of(*this), root, kScatterTag);
  for (int r = 0; r < size_; ++r) {
    if (r == root) continue;
    send_bytes(handle_of(*this), parts[static_cast<std::size_t>(r)], r, kScatterTag);
    parts[static_cast<std::size_t>(r)] = Bytes();
  }
  return std::move(parts[static_cast<std::size_t>(root)]);
#else
  return {};
#endif
}

#ifdef WARPSEARCH_HAVE_MPI
namespace {
std::uint64_t allreduce(MPI_Comm comm, std::uint64_t value, MPI_Op op) {
  std::uint64_t out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, op, comm), "MPI_Allreduce");
  return out;
}
}  // namespace
#endif

std::uint64_t Comm::allreduce_sum(std::uint64_t value) const {
#ifdef WARPSEARCH_HAVE_MPI
  if (mpi_ && size_ > 1) return allreduce(handle_of(*this), value, MPI_SUM);
#endif
  return value;
}

std::uint64_t Comm::allreduce_max(std::uint64_t value) const {
#ifdef WARPSEARCH_HAVE_MPI
  if (mpi_ && size_ > 1) return allreduce(handle_of(*this), value, MPI_MAX);
#endif
  return value;
}

void Comm::abort(const std::string& message, int exit_code) const {
  if (size_ > 1) {
    std::fprintf(stderr, "warpsearch: rank %d of %d: %s\n", rank_, size_, message.c_str());
  } else {
    std::fprintf(stderr, "warpsearch: %s\n", message.c_str());
  }
  std::fflush(stderr);
#ifdef WARPSEARCH_HAVE_MPI
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, exit_code);
#endif
  std::exit(exit_code);
}

Session::Session(int& argc, char**& argv) {
#ifdef WARPSEARCH_HAVE_MPI
  if (!launched_by_mpi()) return;
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  world_.mpi_ = true;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &world_.rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &world_.size_), "MPI_Comm_size");
  world_.world_size_ = world_.size_;
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_.rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  check(MPI_Comm_rank(node, &world_.local_rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(node, &world_.local_size_), "MPI_Comm_size");
  MPI_Comm_free(&node);
#else
  static_cast<void>(argc);
  static_cast<void>(argv);
  // Started by a launcher with several processes, but without MPI each would search everything and write
  // the same outputs: refuse (every process does, the same way).
  if (launcher_size() > 1)
    throw CollectiveError(
        ErrorKind::kUsage,
        fmt::format("started as one of {} MPI processes, but this warpsearch was built without "
                    "MPI (WARPSEARCH_MPI=OFF): run it as one process, or rebuild with MPI",
                    launcher_size()));
#endif
}

Session::~Session() {
#ifdef WARPSEARCH_HAVE_MPI
  if (world_.mpi_) MPI_Finalize();
#endif
}

bool Session::mpi_compiled() {
#ifdef WARPSEARCH_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::vector<Bytes> exchange(const Comm& comm, const std::function<Bytes()>& produce) {
  if (comm.size() == 1) {  // one process: the step's own error, unchanged
    std::vector<Bytes> all;
    all.push_back(produce());
    return all;
  }
  // Each rank's message: its bytes then a trailer byte 0; or, after an error, [kind, collective, what()]
  // then 1 (collective: a CollectiveError of a nested step on a sub-communicator, whose text already
  // names its rank).
  Bytes message;
  try {
    message = produce();
    message.push_back(0);
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    const bool oom = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    ByteWriter w;
    w.u8(static_cast<std::uint8_t>(error != nullptr ? error->kind() : ErrorKind::kInternal));
    w.boolean(dynamic_cast<const CollectiveError*>(&e) != nullptr);
    w.str(error != nullptr ? std::string(e.what())
          : oom            ? std::string("out of memory")
                           : std::string(e.what()));
    message = w.take();
    message.push_back(1);
  }
  std::vector<Bytes> all = comm.gather(message);
  message = Bytes();
  // Rank 0's verdict: [0] all succeeded, or [1, kind, text] naming the lowest failing rank.
  Bytes verdict{0};
  if (comm.is_root()) {
    std::vector<int> failed;
    for (std::size_t r = 0; r < all.size(); ++r)
      if (all[r].back() != 0) failed.push_back(static_cast<int>(r));
    if (!failed.empty()) {
      Bytes& first = all[static_cast<std::size_t>(failed.front())];
      ByteReader in(std::span<const std::uint8_t>(first.data(), first.size() - 1));
      const std::uint8_t kind = in.u8();
      const bool collective = in.boolean();
      std::string text = in.str();
      if (!collective) {
        std::vector<int> world;
        for (const int r : failed) world.push_back(comm.world_rank(r));
        text = fmt::format("rank {} of {}: {}", world.front(), comm.world_size(), text);
        if (world.size() > 1)
          text += fmt::format(" (rank{} {} failed too)", world.size() > 2 ? "s" : "",
                              fmt::join(world.begin() + 1, world.end(), ", "));
      }
      ByteWriter w;
      w.u8(1);
      w.u8(kind);
      w.str(text);
      verdict = w.take();
    }
  }
  comm.broadcast(verdict);
  ByteReader in(verdict);
  if (in.u8() != 0) {
    const auto kind = static_cast<ErrorKind>(in.u8());
    throw CollectiveError(kind, in.str());
  }
  for (Bytes& b : all) b.pop_back();
  return all;
}

std::vector<Bytes> exchange_all(const Comm& comm, const std::function<Bytes()>& produce) {
  std::vector<Bytes> parts = exchange(comm, produce);
  if (comm.size() == 1) return parts;
  Bytes packed;
  if (comm.is_root()) {
    ByteWriter w;
    for (const Bytes& p : parts) w.bytes(p);
    packed = w.take();
  }
  parts.clear();
  comm.broadcast(packed);
  ByteReader in(packed);
  std::vector<Bytes> all(static_cast<std::size_t>(comm.size()));
  for (Bytes& b : all) b = in.bytes();
  in.expect_done();
  return all;
}

void agree(const Comm& comm, const std::function<void()>& step) {
  static_cast<void>(exchange(comm, [&step] {
    step();
    return Bytes();
  }));
}

std::vector<int> local_devices(const std::vector<int>& devices, int local_rank, int local_size) {
  std::vector<int> mine;
  if (devices.empty()) return mine;
  const auto n = static_cast<int>(devices.size());
  if (n >= local_size) {
    for (int i = local_rank; i < n; i += local_size) mine.push_back(devices[static_cast<std::size_t>(i)]);
  } else {
    mine.push_back(devices[static_cast<std::size_t>(local_rank % n)]);
  }
  return mine;
}

RankCpus this_process_cpus() {
  RankCpus r;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) r.host = host;
  for (const unsigned c : ThreadPool::available_cpu_ids()) r.cpus.push_back(static_cast<std::uint32_t>(c));
  return r;
}

unsigned cpu_share(const std::vector<RankCpus>& all, int me) {
  const RankCpus& mine = all.at(static_cast<std::size_t>(me));
  std::size_t sharing = 0;
  for (const RankCpus& r : all) sharing += r.host == mine.host && r.cpus == mine.cpus ? 1 : 0;
  return std::max<unsigned>(1, static_cast<unsigned>(mine.cpus.size() / std::max<std::size_t>(1, sharing)));
}

unsigned default_threads(const Comm& comm) {
  if (comm.size() <= 1) return 0;
  const RankCpus mine = this_process_cpus();
  ByteWriter w;
  w.str(mine.host);
  w.integer(static_cast<std::uint64_t>(mine.cpus.size()));
  for (const std::uint32_t c : mine.cpus) w.integer(c);
  const std::vector<Bytes> parts = comm.gather(w.take());
  Bytes table;
  if (comm.is_root()) {
    ByteWriter t;
    for (const Bytes& p : parts) t.bytes(p);
    table = t.take();
  }
  comm.broadcast(table);
  std::vector<RankCpus> all;
  ByteReader in(table);
  for (int r = 0; r < comm.size(); ++r) {
    const Bytes one = in.bytes();
    ByteReader pr(one);
    RankCpus rc;
    rc.host = pr.str();
    rc.cpus.resize(pr.count(4));
    for (std::uint32_t& c : rc.cpus) c = pr.integer<std::uint32_t>();
    pr.expect_done();
    all.push_back(std::move(rc));
  }
  in.expect_done();
  return cpu_share(all, comm.rank());
}

}  // namespace warpsearch::dist
