// test_shard_bytes_comm.cpp: the building blocks of src/dist without MPI.
//
// ShardPlan: shard_bounds on random length sets (and edge cases: no sequences, all empty, more parts than
// sequences, one huge sequence) against the rule computed directly from its definition (the part of the
// midpoint of each sequence's weight), plus its properties: contiguous, covering, each part's weight
// within one sequence of W / parts; the streaming ShardPlanner gives the same parts.
// Bytes: every integer width (extremes, negative), floats by bit pattern (NaN payloads, -0.0, infinities),
// strings with NUL bytes round-trip; a truncated message or an overlong count throws.
// OneProcessComm: the size-1 communicator (rank 0 of 1, gather and scatter = own bytes, broadcast and
// allreduce identities); exchange()/agree() with one rank return the step's bytes and rethrow its own error
// unchanged. LocalDevices: the rank-local GPU choice. CpuShare: the default thread count of a rank
// (unbound, bound to cores or to shared sockets, several hosts, more ranks than CPUs).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dist/bytes.hpp"
#include "dist/shard.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::dist {
namespace {

// The part of every sequence straight from the definition (exact rational arithmetic in long double is
// not needed: the values here are small enough for uint64).
std::vector<int> parts_by_definition(const std::vector<std::uint64_t>& lengths, int parts) {
  std::uint64_t total = 0;
  for (const std::uint64_t l : lengths) total += l + 1;
  std::vector<int> out;
  std::uint64_t prefix = 0;
  for (const std::uint64_t l : lengths) {
    const std::uint64_t w = l + 1;
    out.push_back(static_cast<int>((2 * prefix + w) * static_cast<std::uint64_t>(parts) / (2 * total)));
    prefix += w;
  }
  return out;
}

void check_plan(const std::vector<std::uint64_t>& lengths, int parts) {
  SCOPED_TRACE(::testing::Message() << lengths.size() << " sequences, " << parts << " parts");
  const std::vector<std::uint64_t> bounds = shard_bounds(lengths, parts);
  ASSERT_EQ(bounds.size(), static_cast<std::size_t>(parts) + 1);
  EXPECT_EQ(bounds.front(), 0u);
  EXPECT_EQ(bounds.back(), lengths.size());
  for (int p = 0; p < parts; ++p) EXPECT_LE(bounds[p], bounds[p + 1]);
  const std::vector<int> expected = parts_by_definition(lengths, parts);
  std::uint64_t total = 0, longest = 0;
  for (const std::uint64_t l : lengths) total += l + 1, longest = std::max(longest, l + 1);
  std::uint64_t sum_w = 0;
  for (const std::uint64_t l : lengths) sum_w += l + 1;
  ShardPlanner planner(sum_w, parts);
  for (int p = 0; p < parts; ++p) {
    std::uint64_t weight = 0;
    for (std::uint64_t i = bounds[p]; i < bounds[p + 1]; ++i) {
      EXPECT_EQ(expected[i], p) << "sequence " << i;
      EXPECT_EQ(planner.next(lengths[i]), p) << "sequence " << i;
      weight += lengths[i] + 1;
    }
    const double ideal = static_cast<double>(total) / parts;
    EXPECT_LE(std::abs(static_cast<double>(weight) - ideal), static_cast<double>(longest)) << "part " << p;
    const ShardRange r = shard_range(
        lengths.size(), [&lengths](std::uint64_t i) { return lengths[i]; }, p, parts);
    EXPECT_EQ(r, (ShardRange{bounds[p], bounds[p + 1]}));
  }
}

TEST(ShardPlan, RandomLengthSetsFollowTheRule) {
  std::mt19937_64 rng(20261122);
  for (int trial = 0; trial < 200; ++trial) {
    const auto n = static_cast<std::size_t>(std::uniform_int_distribution<int>(0, 300)(rng));
    const std::uint64_t max_len = trial % 3 == 0 ? 5 : trial % 3 == 1 ? 400 : 40000;
    std::vector<std::uint64_t> lengths(n);
    for (auto& l : lengths) l = std::uniform_int_distribution<std::uint64_t>(0, max_len)(rng);
    check_plan(lengths, std::uniform_int_distribution<int>(1, 17)(rng));
  }
}

TEST(ShardPlan, EdgeCases) {
  check_plan({}, 1);
  check_plan({}, 4);
  check_plan({0, 0, 0, 0, 0}, 3);     // empty sequences weigh 1 each
  check_plan({10, 20}, 7);            // more parts than sequences: empty parts
  check_plan({5, 1000000, 5, 5}, 3);  // one sequence larger than a part's share
  check_plan(std::vector<std::uint64_t>(1000, 100), 16);
  const std::vector<std::uint64_t> b = shard_bounds(std::vector<std::uint64_t>{10, 20}, 7);
  std::size_t nonempty = 0;
  for (std::size_t p = 0; p + 1 < b.size(); ++p) nonempty += b[p + 1] > b[p] ? 1 : 0;
  EXPECT_EQ(nonempty, 2u);
  EXPECT_THROW(ShardPlanner(10, 0), Error);
}

TEST(ShardPlan, HugeTotalsDoNotOverflow) {
  // 2 * W * parts exceeds 2^64: the planner's wide arithmetic keeps the rule exact.
  const std::uint64_t big = std::uint64_t{1} << 61;
  ShardPlanner planner(2 * (big + 1), 4);
  EXPECT_EQ(planner.next(big), 1);  // midpoint at 1/4 of the total: part floor(4 * 1/4) = 1
  EXPECT_EQ(planner.next(big), 3);
}

TEST(Bytes, IntegersFloatsAndStringsRoundTrip) {
  ByteWriter w;
  w.integer(std::numeric_limits<std::int64_t>::min());
  w.integer(std::numeric_limits<std::uint64_t>::max());
  w.integer(std::int32_t{-123456789});
  w.integer(std::uint16_t{0xBEEF});
  w.u8(0x80);
  w.boolean(true);
  w.boolean(false);
  const float nan_f = std::bit_cast<float>(std::uint32_t{0x7FC01234});
  const double nan_d = std::bit_cast<double>(std::uint64_t{0x7FF8000000ABCDEFull});
  for (const float f : {0.0f, -0.0f, 1.5f, -3.25e-38f, std::numeric_limits<float>::infinity(), nan_f,
                        std::numeric_limits<float>::denorm_min()})
    w.f32(f);
  for (const double d : {0.0, -0.0, 1e300, -2.5e-310, -std::numeric_limits<double>::infinity(), nan_d})
    w.f64(d);
  const std::string with_nul("a\0b\xff", 4);
  w.str(with_nul);
  w.str("");
  w.bytes(std::vector<std::uint8_t>{1, 2, 3});
  const Bytes msg = w.take();
  // Little-endian on the wire whatever the host: the first value's low byte comes first.
  EXPECT_EQ(msg[0], 0x00);
  EXPECT_EQ(msg[7], 0x80);

  ByteReader r(msg);
  EXPECT_EQ(r.integer<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(r.integer<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(r.integer<std::int32_t>(), -123456789);
  EXPECT_EQ(r.integer<std::uint16_t>(), 0xBEEF);
  EXPECT_EQ(r.u8(), 0x80);
  EXPECT_TRUE(r.boolean());
  EXPECT_FALSE(r.boolean());
  for (const float f : {0.0f, -0.0f, 1.5f, -3.25e-38f, std::numeric_limits<float>::infinity(), nan_f,
                        std::numeric_limits<float>::denorm_min()})
    EXPECT_EQ(std::bit_cast<std::uint32_t>(r.f32()), std::bit_cast<std::uint32_t>(f));
  for (const double d : {0.0, -0.0, 1e300, -2.5e-310, -std::numeric_limits<double>::infinity(), nan_d})
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.f64()), std::bit_cast<std::uint64_t>(d));
  EXPECT_EQ(r.str(), with_nul);
  EXPECT_EQ(r.str(), "");
  EXPECT_EQ(r.bytes(), (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_TRUE(r.done());
  EXPECT_NO_THROW(r.expect_done());
}

TEST(Bytes, TruncatedOrCorruptMessagesThrow) {
  ByteWriter w;
  w.integer(std::uint32_t{7});
  w.str("hello");
  const Bytes msg = w.take();
  for (std::size_t cut = 0; cut < msg.size(); ++cut) {
    ByteReader r(std::span<const std::uint8_t>(msg.data(), cut));
    EXPECT_THROW(
        {
          r.integer<std::uint32_t>();
          r.str();
        },
        Error)
        << "cut at " << cut;
  }
  ByteWriter huge;
  huge.integer(std::uint64_t{1} << 60);  // a count far beyond the message
  const Bytes h = huge.take();
  ByteReader r(h);
  EXPECT_THROW(r.count(1), Error);
  ByteReader extra(msg);
  extra.integer<std::uint32_t>();
  EXPECT_THROW(extra.expect_done(), Error);
}

TEST(Bytes, Int32ArraysRoundTripAndCheckTheirLength) {
  struct Row {
    std::int32_t a, b, c;
  };
  const std::vector<Row> rows = {{1, -2, 3},
                                 {std::numeric_limits<std::int32_t>::min(), 0, 7},
                                 {std::numeric_limits<std::int32_t>::max(), -1, 42}};
  ByteWriter w;
  w.int32s(rows.data(), rows.size() * 3);
  w.integer(std::uint8_t{9});
  const Bytes msg = w.take();
  EXPECT_EQ(msg.size(), 8u + 36u + 1u);
  EXPECT_EQ(msg[8], 1u);  // little-endian whatever the host
  ByteReader r(msg);
  std::vector<Row> back(rows.size());
  r.int32s(back.data(), back.size() * 3);
  EXPECT_EQ(r.integer<std::uint8_t>(), 9u);
  r.expect_done();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].a, rows[i].a);
    EXPECT_EQ(back[i].b, rows[i].b);
    EXPECT_EQ(back[i].c, rows[i].c);
  }
  ByteReader other(msg);  // another length than the message holds
  std::vector<Row> four(4);
  EXPECT_THROW(other.int32s(four.data(), 12), Error);
  ByteReader cut(std::span<const std::uint8_t>(msg.data(), 20));
  EXPECT_THROW(cut.int32s(back.data(), 9), Error);
}

TEST(OneProcessComm, CollectivesAreLocal) {
  const Comm comm;
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  EXPECT_TRUE(comm.is_root());
  EXPECT_FALSE(comm.uses_mpi());
  EXPECT_EQ(comm.local_rank(), 0);
  EXPECT_EQ(comm.local_size(), 1);
  comm.barrier();
  Bytes b{1, 2, 3};
  comm.broadcast(b);
  EXPECT_EQ(b, (Bytes{1, 2, 3}));
  const std::vector<Bytes> all = comm.gather(b);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], b);
  std::vector<Bytes> parts{Bytes{4, 5}};
  EXPECT_EQ(comm.scatter(parts), (Bytes{4, 5}));
  std::vector<Bytes> two{Bytes{1}, Bytes{2}};
  EXPECT_THROW(static_cast<void>(comm.scatter(two)), Error);  // not one part per rank
  EXPECT_EQ(comm.allreduce_sum(41), 41u);
  EXPECT_EQ(comm.allreduce_max(7), 7u);

  const std::vector<Bytes> ex = exchange(comm, [] { return Bytes{9, 8}; });
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(ex[0], (Bytes{9, 8}));
  const Comm half = comm.split(3);  // without MPI: this communicator again
  EXPECT_EQ(half.size(), 1);
  EXPECT_EQ(half.rank(), 0);
  EXPECT_EQ(half.world_rank(0), 0);
  EXPECT_EQ(half.world_size(), 1);
  const std::vector<Bytes> all_ex = exchange_all(comm, [] { return Bytes{7}; });
  ASSERT_EQ(all_ex.size(), 1u);
  EXPECT_EQ(all_ex[0], (Bytes{7}));
  // One process: the step's own error, unchanged (not a CollectiveError, no rank prefix).
  try {
    agree(comm, [] { throw Error(ErrorKind::kIo, "cannot open", "x.fa", 3); });
    FAIL() << "no error";
  } catch (const CollectiveError&) {
    FAIL() << "a one-process error must stay as it is";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(std::string(e.what()), "x.fa:3: cannot open");
  }
}

TEST(OneProcessComm, SessionWithoutLauncherIsOneProcess) {
  // No launcher variables in the test environment (ctest runs the suite directly): no MPI.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
      std::getenv("PMIX_RANK") != nullptr || std::getenv("WARPSEARCH_MPI") != nullptr)
    GTEST_SKIP() << "running under an MPI launcher";
  int argc = 1;
  char name[] = "test_dist";
  char* args[] = {name, nullptr};
  char** argv = args;
  const Session session(argc, argv);
  EXPECT_EQ(session.world().size(), 1);
  EXPECT_FALSE(session.world().uses_mpi());
}

std::vector<std::uint32_t> cpu_range(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> v(count);
  for (std::uint32_t i = 0; i < count; ++i) v[i] = first + i;
  return v;
}

TEST(CpuShare, RanksShareTheCpusTheyMayUse) {
  // Unbound: 4 ranks on one 64-CPU host, 16 each; on two hosts, each host's ranks share its CPUs.
  std::vector<RankCpus> unbound(4, RankCpus{"a", cpu_range(0, 64)});
  for (int r = 0; r < 4; ++r) EXPECT_EQ(cpu_share(unbound, r), 16u);
  const std::vector<RankCpus> hosts{
      {"a", cpu_range(0, 64)}, {"a", cpu_range(0, 64)}, {"b", cpu_range(0, 64)}};
  EXPECT_EQ(cpu_share(hosts, 0), 32u);
  EXPECT_EQ(cpu_share(hosts, 2), 64u);
  // Bound to their own cores: all of them; bound to a socket shared by two ranks: half of it.
  const std::vector<RankCpus> cores{{"a", cpu_range(0, 8)}, {"a", cpu_range(8, 8)}, {"a", cpu_range(16, 6)}};
  EXPECT_EQ(cpu_share(cores, 1), 8u);
  EXPECT_EQ(cpu_share(cores, 2), 6u);
  const std::vector<RankCpus> sockets{
      {"a", cpu_range(0, 32)}, {"a", cpu_range(0, 32)}, {"a", cpu_range(32, 32)}, {"a", cpu_range(32, 32)}};
  for (int r = 0; r < 4; ++r) EXPECT_EQ(cpu_share(sockets, r), 16u);
  // More ranks than CPUs: at least one thread each.
  const std::vector<RankCpus> crowded(5, RankCpus{"a", cpu_range(0, 2)});
  EXPECT_EQ(cpu_share(crowded, 4), 1u);
  // One process: all its CPUs; the one-process communicator asks for none in particular (0).
  const RankCpus me = this_process_cpus();
  EXPECT_FALSE(me.cpus.empty());
  EXPECT_EQ(cpu_share({me}, 0), me.cpus.size());
  EXPECT_EQ(default_threads(Comm()), 0u);
}

TEST(LocalDevices, SplitsOrSharesTheNodesGpus) {
  EXPECT_EQ(local_devices({}, 0, 2), std::vector<int>{});
  EXPECT_EQ(local_devices({0, 1, 2, 3}, 0, 1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(local_devices({0, 1, 2, 3}, 1, 2), (std::vector<int>{1, 3}));
  EXPECT_EQ(local_devices({4, 5, 6}, 2, 3), std::vector<int>{6});
  EXPECT_EQ(local_devices({0, 1}, 3, 4), std::vector<int>{1});  // fewer GPUs than ranks: shared
  EXPECT_EQ(local_devices({7}, 2, 4), std::vector<int>{7});
  // Every GPU is used by some rank, and with enough GPUs by exactly one.
  std::vector<int> seen;
  for (int r = 0; r < 3; ++r)
    for (const int d : local_devices({0, 1, 2, 3, 4, 5, 6}, r, 3)) seen.push_back(d);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace warpsearch::dist
