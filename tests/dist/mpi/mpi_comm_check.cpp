// mpi_comm_check.cpp: the MPI communicator and failure protocol of warpsearch/dist.hpp under mpiexec
// (CTest dist.mpi_comm_check runs it on 3 ranks). Not a GoogleTest suite: every rank runs the same checks
// and rank 0 reports; the exit status is 0 only if every check passed on every rank.
//
// Checks: gather of buffers of different sizes (an empty one included) in rank order; scatter (the same
// sizes the other way); default_threads (a share of this host's CPUs); broadcast; uint64
// sum and max; exchange() where every rank succeeds; exchange() where one rank, then two ranks, throw an
// Error (every rank gets a CollectiveError with the lowest failing rank's kind and "rank R of N: message",
// plus the list of the other failing ranks) and where a rank throws a non-Error exception (kInternal);
// split() into two halves (ranks, sizes, world ranks, collectives within a half) and a failure inside one
// half's step nested in a step of all ranks (every rank gets the half's message, naming the world rank);
// and that the ranks still work together after those failures (nobody hangs).
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"

using warpsearch::Error;
using warpsearch::ErrorKind;
namespace dist = warpsearch::dist;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what, const dist::Comm& comm) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: check failed: %s\n", comm.rank(), what.c_str());
}

dist::Bytes pattern(int rank, std::size_t n) {
  dist::Bytes b(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<std::uint8_t>((i * 31 + static_cast<std::size_t>(rank)) & 0xFF);
  return b;
}

std::size_t size_of(int rank) { return rank == 1 ? 0 : static_cast<std::size_t>(rank) * 100003 + 7; }

// Runs a step that fails on the ranks in `failing`; returns the CollectiveError's kind and message seen here.
std::pair<ErrorKind, std::string> failing_step(const dist::Comm& comm, const std::vector<int>& failing,
                                               bool non_error) {
  try {
    dist::agree(comm, [&] {
      for (const int r : failing) {
        if (r != comm.rank()) continue;
        if (non_error) throw std::runtime_error("boom");
        throw Error(ErrorKind::kFormat, fmt::format("bad shard {}", r), "shard.fa", 12);
      }
    });
  } catch (const dist::CollectiveError& e) {
    return {e.kind(), e.what()};
  } catch (const std::exception& e) {
    return {ErrorKind::kUsage, std::string("not a CollectiveError: ") + e.what()};
  }
  return {ErrorKind::kUsage, "no error"};
}

}  // namespace

int main(int argc, char** argv) {
  dist::Session session(argc, argv);
  const dist::Comm& comm = session.world();
  const int n = comm.size();
  expect(comm.uses_mpi(), "started by mpiexec but MPI is not in use", comm);
  expect(comm.local_rank() >= 0 && comm.local_rank() < comm.local_size(), "local rank out of range", comm);

  // default_threads: every rank's share of the CPUs (all ranks run on this host, unbound under CTest)
  {
    const unsigned share = dist::default_threads(comm);
    const std::size_t cpus = dist::this_process_cpus().cpus.size();
    expect(share >= 1 && share <= cpus, fmt::format("default_threads {} of {} CPUs", share, cpus), comm);
  }

  // scatter: rank 0 sends each rank its own pattern (rank 1 an empty buffer)
  {
    std::vector<dist::Bytes> parts;
    if (comm.is_root())
      for (int r = 0; r < n; ++r) parts.push_back(pattern(r, size_of(r)));
    expect(comm.scatter(parts) == pattern(comm.rank(), size_of(comm.rank())), "scatter: this rank's buffer",
           comm);
  }

  // gather: sizes differ per rank, rank 1 sends nothing
  const std::vector<dist::Bytes> all = comm.gather(pattern(comm.rank(), size_of(comm.rank())));
  if (comm.is_root()) {
    expect(all.size() == static_cast<std::size_t>(n), "gather: one buffer per rank", comm);
    for (int r = 0; r < n && r < static_cast<int>(all.size()); ++r)
      expect(all[static_cast<std::size_t>(r)] == pattern(r, size_of(r)),
             fmt::format("gather: buffer of rank {}", r), comm);
  } else {
    expect(all.empty(), "gather: non-root ranks get nothing", comm);
  }
  // broadcast
  dist::Bytes b = comm.is_root() ? pattern(99, 250001) : dist::Bytes{1, 2};
  comm.broadcast(b);
  expect(b == pattern(99, 250001), "broadcast", comm);
  // allreduce
  expect(comm.allreduce_sum(static_cast<std::uint64_t>(comm.rank()) + 1) ==
             static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n + 1) / 2,
         "allreduce sum", comm);
  expect(comm.allreduce_max(static_cast<std::uint64_t>(comm.rank()) * 10) ==
             static_cast<std::uint64_t>(n - 1) * 10,
         "allreduce max", comm);
  comm.barrier();

  // exchange, all succeed
  const std::vector<dist::Bytes> ex = dist::exchange(
      comm, [&] { return pattern(comm.rank(), static_cast<std::size_t>(comm.rank()) * 3 + 1); });
  if (comm.is_root()) {
    expect(ex.size() == static_cast<std::size_t>(n), "exchange: one message per rank", comm);
    for (int r = 0; r < n && r < static_cast<int>(ex.size()); ++r)
      expect(ex[static_cast<std::size_t>(r)] == pattern(r, static_cast<std::size_t>(r) * 3 + 1),
             fmt::format("exchange: message of rank {}", r), comm);
  }

  if (n >= 2) {
    // the last rank fails
    auto [kind, text] = failing_step(comm, {n - 1}, false);
    expect(kind == ErrorKind::kFormat, "one failing rank: kind kept", comm);
    expect(text == fmt::format("rank {} of {}: shard.fa:12: bad shard {}", n - 1, n, n - 1),
           "one failing rank: message (got '" + text + "')", comm);
    // the last two ranks fail: the lowest one is reported, the other listed
    if (n >= 3) {
      std::tie(kind, text) = failing_step(comm, {n - 1, n - 2}, false);
      expect(text == fmt::format("rank {} of {}: shard.fa:12: bad shard {} (rank {} failed too)", n - 2, n,
                                 n - 2, n - 1),
             "two failing ranks: message (got '" + text + "')", comm);
    }
    // a non-Error exception
    std::tie(kind, text) = failing_step(comm, {0}, true);
    expect(kind == ErrorKind::kInternal && text == fmt::format("rank 0 of {}: boom", n),
           "non-Error exception (got '" + text + "')", comm);
  }
  // split into halves: [0, n/2) and [n/2, n)
  {
    const bool first = comm.rank() < n / 2;
    const dist::Comm half = comm.split(first ? 0 : 1);
    const int expected_size = first ? n / 2 : n - n / 2;
    const int base = first ? 0 : n / 2;
    expect(half.size() == expected_size, fmt::format("split: size {}", half.size()), comm);
    expect(half.rank() == comm.rank() - base, fmt::format("split: rank {}", half.rank()), comm);
    expect(half.world_size() == n, "split: world size", comm);
    for (int r = 0; r < half.size(); ++r)
      expect(half.world_rank(r) == base + r, fmt::format("split: world rank of {}", r), comm);
    expect(half.allreduce_sum(1) == static_cast<std::uint64_t>(expected_size), "split: allreduce in the half",
           comm);
    const std::vector<dist::Bytes> in_half =
        dist::exchange_all(half, [&] { return dist::Bytes{static_cast<std::uint8_t>(comm.rank())}; });
    bool same = in_half.size() == static_cast<std::size_t>(expected_size);
    for (std::size_t r = 0; same && r < in_half.size(); ++r)
      same = in_half[r] == dist::Bytes{static_cast<std::uint8_t>(base + static_cast<int>(r))};
    expect(same, "split: exchange_all in the half", comm);
    if (n >= 2) {
      // The last rank fails inside its half's step, which runs inside a step of all ranks.
      std::string text;
      try {
        dist::agree(comm, [&] {
          dist::agree(half, [&] {
            if (comm.rank() == n - 1) throw Error(ErrorKind::kIo, "cannot read", "t.fa", 5);
          });
        });
      } catch (const dist::CollectiveError& e) {
        text = e.what();
      }
      // Every rank: the half's own message (its lowest failing rank, as a world rank), not prefixed again.
      expect(text == fmt::format("rank {} of {}: t.fa:5: cannot read", n - 1, n),
             "nested failure: message (got '" + text + "')", comm);
    }
  }

  // still working together after the failures
  expect(comm.allreduce_sum(1) == static_cast<std::uint64_t>(n), "allreduce after failures", comm);

  const std::uint64_t total = comm.allreduce_sum(static_cast<std::uint64_t>(failures));
  if (comm.is_root())
    std::printf("mpi_comm_check: %d ranks, %llu failed checks\n", n, static_cast<unsigned long long>(total));
  return total == 0 ? 0 : 1;
}
