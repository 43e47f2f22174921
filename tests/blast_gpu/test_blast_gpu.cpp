// test_blast_gpu.cpp: blastp's GPU seed stage (src/blast/cuda/gpu_stage.cu, gpu_stage.hpp) against its CPU
// reference stage_reference, bit for bit, and blastp_run with GPUs against blastp_run on the CPU.
// CUDA builds only; every test is skipped without a usable GPU.
//
// Contents: random proteins with planted similar regions (many HSPs per pair, restricted-alignment redos,
// X runs, subjects shorter than a word), several option sets (BLOSUM62 word 3, word 2, BLOSUM45 window
// 60, -evalue 1e-5 / 1000), one stage reused over several batches and a batch with a single subject; a
// batch of 300,000 subjects (hundreds per warp: the running diagonal offset and its clears);
// real UniProt queries (including the longest of the 500) against DB20k records; blastp_run with one GPU
// (and with the GPU listed twice: two stages on one device) == blastp_run on the CPU for -comp_based_stats
// 0 and 2, hits and counts, on a planted database.
#include <gtest/gtest.h>

#ifdef WARPSEARCH_HAVE_CUDA

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "blast/engine.hpp"
#include "blast/gpu_stage.hpp"
#include "blast/search.hpp"
#include "blast_random.hpp"
#include "protein_fasta.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"

namespace warpsearch::blast {
namespace {

using test::Codes;
using test::planted_set;
using Set = test::PlantedSet;
using test::read_fasta;
using test::Record;
using test::TempDir;
using test::write_fasta;

int first_gpu() {
  const DeviceProbe probe = probe_devices();
  return probe.devices.empty() ? -1 : probe.devices.front().id;
}

#define REQUIRE_GPU(dev)       \
  const int dev = first_gpu(); \
  if (dev < 0) GTEST_SKIP() << probe_devices().unavailable_reason

// The searchable queries' contexts (database totals as given, or the set's subjects') and the pointers a
// GpuStage takes.
struct Contexts {
  std::vector<QueryContext> owned;
  std::vector<const QueryContext*> ptrs;
  Contexts(const std::vector<Codes>& queries, const BlastpOptions& options, std::int64_t db_length,
           std::int64_t db_seqs) {
    owned.reserve(queries.size());
    for (const Codes& q : queries) {
      QueryContext c = QueryContext::create(q, options, db_length, db_seqs, 10);
      if (c.searchable()) owned.push_back(std::move(c));
    }
    for (const QueryContext& c : owned) ptrs.push_back(&c);
  }
  Contexts(const Contexts&) = delete;  // ptrs point into owned
  Contexts& operator=(const Contexts&) = delete;
  Contexts(const Set& set, const BlastpOptions& options)
      : Contexts(set.queries, options, total_length(set), static_cast<std::int64_t>(set.subjects.size())) {}
  static std::int64_t total_length(const Set& set) {
    std::int64_t n = 0;
    for (const Codes& c : set.subjects) n += static_cast<std::int64_t>(c.size());
    return n;
  }
};

// The subjects back to back (the run overload for contiguous batches).
struct Packed {
  std::vector<std::uint8_t> residues;
  std::vector<std::uint64_t> starts{0};
  explicit Packed(std::span<const Residues> subjects) {
    for (const Residues& r : subjects) {
      residues.insert(residues.end(), r.begin(), r.end());
      starts.push_back(residues.size());
    }
  }
};

void expect_same(const StageOutput& gpu, const StageOutput& cpu) {
  ASSERT_EQ(gpu.pairs.size(), cpu.pairs.size());
  for (std::size_t k = 0; k < cpu.pairs.size(); ++k) ASSERT_EQ(gpu.pairs[k], cpu.pairs[k]) << "pair " << k;
  ASSERT_EQ(gpu.hsps.size(), cpu.hsps.size());
  for (std::size_t k = 0; k < cpu.hsps.size(); ++k) ASSERT_EQ(gpu.hsps[k], cpu.hsps[k]) << "hsp " << k;
  EXPECT_EQ(gpu.counts.word_hits, cpu.counts.word_hits);
  EXPECT_EQ(gpu.counts.ungapped_extensions, cpu.counts.ungapped_extensions);
  EXPECT_EQ(gpu.counts.ungapped_saved, cpu.counts.ungapped_saved);
  EXPECT_EQ(gpu.counts.gapped_extensions, cpu.counts.gapped_extensions);
  EXPECT_EQ(gpu.counts.redone_subjects, cpu.counts.redone_subjects);
}

// mixed: the data must give both screen verdicts (not at -evalue 1000, where the hit-saving cutoff is below
// the ungapped cutoff, so every saved HSP reaches it and every pair is kFull).
void check_set(const Set& set, const BlastpOptions& options, int device, bool keep_all, bool mixed = true) {
  const Contexts contexts(set, options);
  const std::vector<const QueryContext*>& ptrs = contexts.ptrs;
  std::vector<Residues> subjects(set.subjects.begin(), set.subjects.end());
  GpuStage stage(ptrs, device);
  // Two batches through one stage (the diagonal tables carry over), then the whole set.
  const std::size_t half = subjects.size() / 2;
  const std::span<const Residues> all(subjects);
  for (const auto part : {all.first(half), all.subspan(half), all}) {
    StageOutput gpu;
    stage.run(part, keep_all, gpu);
    const StageOutput cpu = stage_reference(ptrs, part, keep_all, kStageScreenCapacity);
    expect_same(gpu, cpu);
    const Packed packed(part);
    StageOutput gpu_packed;
    stage.run(packed.residues, packed.starts, keep_all, gpu_packed);
    expect_same(gpu_packed, cpu);
    if (part.size() == subjects.size()) {
      EXPECT_GT(cpu.counts.ungapped_saved, 0);
      const auto full = std::count_if(cpu.pairs.begin(), cpu.pairs.end(),
                                      [](const StagePair& p) { return p.screen == ScreenResult::kFull; });
      EXPECT_GT(full, 0);
      if (mixed) {
        EXPECT_LT(static_cast<std::size_t>(full), cpu.pairs.size());
      }
    }
  }
}

TEST(BlastGpuStage, RandomPlantedEqualsReference) {
  REQUIRE_GPU(device);
  const Set set = planted_set(7, 12, 1500);
  BlastpOptions options;
  check_set(set, options, device, true);
  check_set(set, options, device, false);
}

TEST(BlastGpuStage, OptionVariantsEqualReference) {
  REQUIRE_GPU(device);
  const Set set = planted_set(11, 6, 800);
  BlastpOptions w2;
  w2.word_size = 2;
  check_set(set, w2, device, true);
  BlastpOptions b45;
  b45.matrix = "BLOSUM45";
  b45.gaps = {15, 2};
  check_set(set, b45, device, true);
  BlastpOptions strict;
  strict.evalue = 1e-5;
  check_set(set, strict, device, true);
  BlastpOptions loose;
  loose.evalue = 1000;
  check_set(set, loose, device, true, false);
}

TEST(BlastGpuStage, SingleSubjectBatches) {
  REQUIRE_GPU(device);
  const Set set = planted_set(5, 4, 30);
  BlastpOptions options;
  const Contexts contexts(set.queries, options, 1000000, 1000);
  const std::vector<const QueryContext*>& ptrs = contexts.ptrs;
  GpuStage stage(ptrs, device);
  for (const Codes& s : set.subjects) {
    const Residues r(s);
    StageOutput gpu;
    stage.run(std::span<const Residues>(&r, 1), true, gpu);
    expect_same(gpu, stage_reference(ptrs, std::span<const Residues>(&r, 1), true, kStageScreenCapacity));
  }
}

// Hundreds of subjects per warp, so that the running diagonal offset passes the 16-bit entries' bound
// (and the table is cleared) many times within a launch, with stale entries on the diagonals of later
// hits: short planted subjects, runs of subjects near the 16-bit limit, and a few for the 32-bit variant.
TEST(BlastGpuStage, ManySubjectsPerWarpEqualReference) {
  REQUIRE_GPU(device);
  std::mt19937_64 rng(2311);
  Set set;
  for (int i = 0; i < 3; ++i) set.queries.push_back(test::random_protein(rng, 100 + rng() % 400));
  for (int i = 0; i < 300000; ++i) {
    const std::size_t n = i % 5000 < 6 ? 15000 + rng() % 1400 : i % 7919 == 0 ? 17000 : 25 + rng() % 90;
    Codes s = test::random_protein(rng, n);
    if (rng() % 3 == 0) test::plant(rng, set.queries[rng() % 3], s, static_cast<int>(rng() % 40));
    set.subjects.push_back(std::move(s));
  }
  const Contexts contexts(set, BlastpOptions{});
  const std::vector<const QueryContext*>& ptrs = contexts.ptrs;
  const std::vector<Residues> subjects(set.subjects.begin(), set.subjects.end());
  GpuStage stage(ptrs, device);
  const Packed packed(subjects);
  StageOutput gpu;
  stage.run(packed.residues, packed.starts, true, gpu);
  const StageOutput cpu = stage_reference(ptrs, subjects, true, kStageScreenCapacity);
  EXPECT_GT(cpu.pairs.size(), 10000U);
  expect_same(gpu, cpu);
  // Starts that do not describe the residues: an internal error, not a wrong search.
  std::vector<std::uint64_t> bad = packed.starts;
  bad.back() += 1;
  EXPECT_THROW(stage.run(packed.residues, bad, true, gpu), Error);
}

TEST(BlastGpuStage, RealProteinsEqualReference) {
  REQUIRE_GPU(device);
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  const auto queries = read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string());
  const auto db = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string());
  Set set;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < queries.size(); ++i)
    if (queries[i].codes.size() > queries[longest].codes.size()) longest = i;
  set.queries.push_back(queries[longest].codes);
  for (std::size_t i = 0; i < queries.size() && set.queries.size() < 40; i += 13)
    set.queries.push_back(queries[i].codes);
  for (std::size_t i = 0; i < db.size() && set.subjects.size() < 4000; i += 5)
    set.subjects.push_back(db[i].codes);
  BlastpOptions options;
  check_set(set, options, device, true);
}

// blastp_run on a FASTA database: GPU == CPU (hits with every field, counts).
TEST(BlastGpuEngine, RunEqualsCpu) {
  REQUIRE_GPU(device);
  const Set set = planted_set(21, 16, 3000);
  TempDir dir;
  std::vector<Record> records;
  for (std::size_t i = 0; i < set.subjects.size(); ++i)
    if (set.subjects[i].size() >= 1)
      records.push_back({"s" + std::to_string(i) + " subject", set.subjects[i]});
  const std::string db = (dir.path() / "db.fa").string();
  write_fasta(records, db);
  std::vector<BlastpQuery> queries;
  for (std::size_t i = 0; i < set.queries.size(); ++i)
    queries.push_back({"q" + std::to_string(i), set.queries[i]});
  const DatabaseTotals totals = database_totals(db);
  for (const int cbs : {0, 2}) {
    BlastpRunOptions cpu;
    cpu.search.comp_based_stats = cbs;
    cpu.threads = 2;
    cpu.batch_residues = 300000;
    BlastpRunOptions gpu = cpu;
    gpu.gpus = {device};
    gpu.gpu_batch_residues = 250000;  // several batches in flight
    BlastpRunOptions gpu2 = gpu;
    gpu2.gpus = {device, device};  // two stages on one device, batches alternating
    const BlastpRunResult a = blastp_run(queries, db, totals, cpu);
    for (const BlastpRunOptions* o : {&gpu, &gpu2}) {
      const BlastpRunResult b = blastp_run(queries, db, totals, *o);
      ASSERT_EQ(a.queries.size(), b.queries.size());
      std::size_t hits = 0;
      for (std::size_t q = 0; q < a.queries.size(); ++q) {
        ASSERT_EQ(a.queries[q].hits.size(), b.queries[q].hits.size()) << "query " << q;
        for (std::size_t i = 0; i < a.queries[q].hits.size(); ++i) {
          EXPECT_EQ(a.queries[q].hits[i].oid, b.queries[q].hits[i].oid);
          EXPECT_EQ(a.queries[q].hits[i].hsps, b.queries[q].hits[i].hsps);
          hits += a.queries[q].hits[i].hsps.size();
        }
        EXPECT_EQ(a.queries[q].adjust_rules, b.queries[q].adjust_rules);
      }
      EXPECT_GT(hits, 10u);
      EXPECT_EQ(a.counts.word_hits, b.counts.word_hits);
      EXPECT_EQ(a.counts.ungapped_extensions, b.counts.ungapped_extensions);
      EXPECT_EQ(a.counts.ungapped_saved, b.counts.ungapped_saved);
      EXPECT_EQ(a.counts.gapped_extensions, b.counts.gapped_extensions);
      EXPECT_EQ(a.counts.prelim_hsps, b.counts.prelim_hsps);
      EXPECT_EQ(a.counts.redone_subjects, b.counts.redone_subjects);
      EXPECT_GT(b.timings.gpu_pairs, b.timings.gpu_full_pairs);
    }
  }
}

}  // namespace
}  // namespace warpsearch::blast

#else

TEST(BlastGpuStage, NeedsCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif  // WARPSEARCH_HAVE_CUDA
