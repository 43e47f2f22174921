// dist.hpp: running a database search on several processes with MPI (docs/MPI.md).
//
// A Session brings MPI up for the process (when it was started by an MPI launcher, see Session) and gives
// the world communicator, a Comm: rank, size, the rank within the node, and the few collective operations
// the distributed searches use (barrier, broadcast and gather of byte buffers, uint64 sum/max). Without
// MPI (a build without it, or a process not started by a launcher) the Comm is the one-process
// communicator: rank 0 of 1, every collective a local copy.
//
// Failure protocol. A rank whose step throws must not leave the others waiting in a collective: steps
// that can fail on some ranks only (reading a shard, searching it) run inside exchange() or agree(), which
// catch the error, tell every rank, and throw a CollectiveError on all ranks, whose message names the
// lowest failing rank ("rank R of N: FILE: message"; world ranks, also on a communicator made by split()).
// A step may itself run collectives on a sub-communicator: a CollectiveError it raises keeps its message. A
// CollectiveError is reported once, by rank 0, and every rank exits with its kind's status; any other error
// under MPI ends the job with MPI_Abort.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "warpsearch/error.hpp"

namespace warpsearch::dist {

using Bytes = std::vector<std::uint8_t>;

// What a distributed search splits over the ranks: the database (kDatabase: each rank searches every
// query against its shard; for databases larger than one node's memory or many cores per query) or the
// queries (kQueries: query i, or query batch i, is searched by rank i mod N against the whole database;
// for many queries against a database every node holds). The output is the same either way.
enum class Split : std::uint8_t { kDatabase, kQueries };

class Comm {
 public:
  Comm() = default;  // the one-process communicator (rank 0 of 1)

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  // Rank among the processes of this node (MPI_Comm_split_type SHARED) and their number: for choosing
  // rank-local GPUs.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool uses_mpi() const { return mpi_; }
  // This communicator's rank r in the world communicator, and the world's size (error messages name
  // world ranks).
  int world_rank(int r) const { return world_ranks_.empty() ? r : world_ranks_[static_cast<std::size_t>(r)]; }
  int world_size() const { return world_size_; }

  // Collective: the ranks with the same color form a new communicator, ordered as here (MPI_Comm_split;
  // the node-local rank and size are kept). Without MPI, a copy of this one.
  Comm split(int color) const;

  void barrier() const;
  // bytes of `root` replace bytes on every other rank (any size).
  void broadcast(Bytes& bytes, int root = 0) const;
  // Every rank's bytes, indexed by rank, on `root` (any sizes); an empty vector on the other ranks.
  std::vector<Bytes> gather(std::span<const std::uint8_t> bytes, int root = 0) const;
  // On `root`, parts holds one buffer per rank (its contents are consumed); every rank gets its own
  // (any sizes). On the other ranks parts is not used.
  Bytes scatter(std::vector<Bytes>& parts, int root = 0) const;
  std::uint64_t allreduce_sum(std::uint64_t value) const;
  std::uint64_t allreduce_max(std::uint64_t value) const;
  // Prints "warpsearch: rank R of N: message" on stderr and ends every rank of the job (MPI_Abort) with
  // exit_code; without MPI it exits this process.
  [[noreturn]] void abort(const std::string& message, int exit_code) const;

 private:
  friend class Session;
  friend struct CommAccess;  // comm.cpp
  bool mpi_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  int world_size_ = 1;
  std::vector<int> world_ranks_;  // empty: the world itself
  std::shared_ptr<void> handle_;  // a communicator made by split() (an MPI_Comm); null: MPI_COMM_WORLD
};

// MPI for the lifetime of the object (one per process, in main()). MPI is initialized (MPI_Init_thread,
// funneled: only the thread that created the Session calls MPI) when the build has MPI and either the
// environment shows an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK: mpirun, mpiexec, srun with
// PMI/PMIx) or WARPSEARCH_MPI=1; WARPSEARCH_MPI=0 never initializes it. Otherwise world() is the
// one-process communicator, so `warpsearch ...` without a launcher needs no MPI runtime at all. A build
// without MPI started by a launcher with several processes throws CollectiveError(kUsage).
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();  // MPI_Finalize when initialized here
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Comm& world() const { return world_; }
  static bool mpi_compiled();

 private:
  Comm world_;
};

// An error every rank raised together: agreed through exchange()/agree(), or one every rank raises for
// the same reason before any collective (e.g. a command that does not run under MPI). Only rank 0
// reports it; every rank exits with exit_code(kind()).
class CollectiveError : public Error {
 public:
  using Error::Error;
};

// One step taken by all ranks together: runs produce() on every rank, catching its error; gathers the
// results on rank 0 and tells every rank whether all succeeded. Returns, on rank 0, every rank's bytes
// (indexed by rank; its own included), on the other ranks an empty vector. If any rank failed, throws
// CollectiveError on every rank with the lowest failing rank's error kind and message, prefixed with
// "rank R of N: " (when N > 1) and followed by the list of other failing ranks.
std::vector<Bytes> exchange(const Comm& comm, const std::function<Bytes()>& produce);

// exchange() whose result every rank gets: every rank's bytes, indexed by rank, on every rank (rank 0
// broadcasts them after the agreed gather). One process: produce()'s bytes.
std::vector<Bytes> exchange_all(const Comm& comm, const std::function<Bytes()>& produce);

// exchange() of a step without data: every rank runs step(); if any failed, all throw CollectiveError.
void agree(const Comm& comm, const std::function<void()>& step);

// The GPUs (from `devices`, the node's usable ids) this rank uses when local_size ranks share the node:
// with at least as many GPUs as ranks, devices[i] for i = local_rank, local_rank + local_size, ...;
// with fewer, the one device devices[local_rank % devices.size()] (shared). Empty stays empty.
std::vector<int> local_devices(const std::vector<int>& devices, int local_rank, int local_size);

// The CPUs a process may run on (its affinity mask, ascending ids) and the host it runs on.
struct RankCpus {
  std::string host;
  std::vector<std::uint32_t> cpus;
};
RankCpus this_process_cpus();

// The default number of threads of rank `me` given every rank's CPUs: its CPUs divided among the ranks on
// its host with the same CPU set (unbound ranks share the node's CPUs; ranks bound to their own cores or
// sockets share only those), at least 1.
unsigned cpu_share(const std::vector<RankCpus>& all, int me);

// Collective (every rank calls it): every rank's CPUs exchanged, then this rank's cpu_share; 0 (all the
// CPUs this process may use) for one process.
unsigned default_threads(const Comm& comm);

}  // namespace warpsearch::dist
