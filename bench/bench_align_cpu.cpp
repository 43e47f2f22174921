// bench_align_cpu.cpp: CPU pairwise alignment entries: our striped SIMD pass (sw::simd::pass, local mode,
// score and end cell) over the ADEPT-shaped pair sets of align_dataset.hpp, and the peer, parasail's
// striped 16-bit Smith-Waterman (parasail_sw_striped_16, runtime-dispatched to its widest ISA; it also
// reports the end cell), on the same pairs with the same number of threads.
//
// Both sides build their query profile inside every call, as a one-to-one aligner must. The pair set
// is synthesized in the run's child before the timed region (Work::timed_s covers only the
// alignments); parallel_for chunks of kGrain pairs, one Workspace per thread. Work::cells is the sum of
// m * n, so the harness reports GCUPS. Residues come from --input when its alphabet matches the entry,
// else from the test data (align_dataset.hpp).
//
// The -cigar entries do the whole job of `warpsearch align --cigar` for each of 1000 pairs:
// ours the forward pass, the start-finding pass and the traceback (sw::traceback, its direction fill
// in simd/trace_fill.hpp) with the CIGAR string; the peer parasail_sw_trace_striped_16 and
// parasail_result_get_cigar (runtime-dispatched, its widest ISA), which give the same.
//
// Scoring: protein BLOSUM62, gaps 11/1; DNA +2/-3, gaps 5/2 (BLAST+ conventions, open + k * extend;
// parasail is given open + extend as its open).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "align_dataset.hpp"
#include "registry.hpp"
#include "sw/model.hpp"
#include "sw/pairwise.hpp"
#include "sw/simd/pass.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/thread_pool.hpp"

#ifdef WARPSEARCH_HAVE_PARASAIL
#include <parasail.h>
#endif

namespace warpsearch::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kSeed = 0xADE97;
constexpr std::size_t kGrain = 32;

std::size_t pair_count(AlignSetKind kind) { return kind == AlignSetKind::kProtein ? 10'000 : 20'000; }
constexpr std::size_t kCigarPairs = 1000;

struct Scoring {
  ScoringMatrix matrix;
  GapCosts gaps;
};

Scoring scoring(AlignSetKind kind) {
  if (kind == AlignSetKind::kProtein) return {ScoringMatrix::builtin("BLOSUM62"), {11, 1}};
  return {ScoringMatrix::dna(2, -3), {5, 2}};
}

Work batch_work(const align::Batch& batch, double seconds) {
  Work work;
  work.timed_s = seconds;
  work.records = batch.size();
  work.cells = batch.cells();
  for (std::size_t i = 0; i < batch.size(); ++i)
    work.residues += batch.query(i).size() + batch.target(i).size();
  return work;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Work simd_pass(const Context& ctx, AlignSetKind kind) {
  const align::Batch batch = make_align_dataset(kind, pair_count(kind), kSeed, ctx.input);
  const Scoring sc = scoring(kind);
  const sw::PassModel model = sw::PassModel::make(sc.matrix, sc.gaps, align::Mode::kLocal);
  const sw::simd::Isa isa = sw::simd::best_isa();
  ThreadPool pool(ctx.threads);
  std::vector<std::int32_t> scores(batch.size());
  const Clock::time_point start = Clock::now();
  pool.parallel_for(batch.size(), kGrain, [&](std::size_t begin, std::size_t end) {
    thread_local sw::simd::Workspace workspace;  // one per thread, reused by all its chunks
    for (std::size_t i = begin; i < end; ++i)
      scores[i] = sw::simd::pass(model, batch.query(i), batch.target(i), workspace, isa).score;
  });
  return batch_work(batch, seconds_since(start));
}

// Score, start, end and CIGAR of every pair, as the CPU Aligner computes them.
Work simd_cigar(const Context& ctx, AlignSetKind kind) {
  const align::Batch batch = make_align_dataset(kind, kCigarPairs, kSeed, ctx.input);
  const Scoring sc = scoring(kind);
  const sw::PassModel model = sw::PassModel::make(sc.matrix, sc.gaps, align::Mode::kLocal);
  const sw::simd::Isa isa = sw::simd::best_isa();
  ThreadPool pool(ctx.threads);
  std::vector<std::size_t> cigar_bytes(batch.size());
  const Clock::time_point start = Clock::now();
  pool.parallel_for(batch.size(), 4, [&](std::size_t begin, std::size_t end) {
    thread_local sw::simd::Workspace workspace;
    std::vector<std::uint8_t> rq, rt;
    for (std::size_t i = begin; i < end; ++i) {
      const auto q = batch.query(i), t = batch.target(i);
      const sw::EndPoint fwd = sw::simd::pass(model, q, t, workspace, isa);
      sw::EndPoint rev;
      if (sw::needs_reverse(model, fwd, q.size())) {
        const sw::ReverseExtent ext = sw::reverse_extent(model.mode, fwd, q.size());
        sw::reverse_prefix(q, ext.qlen, rq);
        sw::reverse_prefix(t, ext.tlen, rt);
        rev = sw::simd::pass(model, rq, rt, workspace, isa, sw::reverse_known_score(model, fwd));
      }
      align::Result r = sw::make_result(model, fwd, rev, q.size(), t.size());
      sw::traceback(model, q, t, r);
      cigar_bytes[i] = r.cigar.size();
    }
  });
  return batch_work(batch, seconds_since(start));
}

#ifdef WARPSEARCH_HAVE_PARASAIL
// The pairs as letters of parasail's matrix alphabet (protein: J, O, U, which BLOSUM62 in parasail
// lacks, become X).
std::vector<std::string> as_letters(const align::Batch& batch, AlignSetKind kind, bool queries) {
  const Alphabet alphabet(align_set_alphabet(kind));
  std::vector<std::string> out(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    for (const std::uint8_t code : queries ? batch.query(i) : batch.target(i)) {
      char c = alphabet.symbol(code);
      if (kind == AlignSetKind::kProtein && (c == 'J' || c == 'O' || c == 'U')) c = 'X';
      out[i].push_back(c);
    }
  }
  return out;
}

// trace: parasail_sw_trace_striped_16 and the CIGAR string on the kCigarPairs pairs of the -cigar
// entries; else parasail_sw_striped_16 (score and end) on the pairs of cpu-align-*.
Work parasail_sw(const Context& ctx, AlignSetKind kind, bool trace) {
  const align::Batch batch =
      make_align_dataset(kind, trace ? kCigarPairs : pair_count(kind), kSeed, ctx.input);
  const std::vector<std::string> queries = as_letters(batch, kind, true);
  const std::vector<std::string> targets = as_letters(batch, kind, false);
  const Scoring sc = scoring(kind);
  parasail_matrix_t* created =
      kind == AlignSetKind::kDna ? parasail_matrix_create("ACGTRYMKSWHBVDN", 2, -3) : nullptr;
  const parasail_matrix_t* matrix = created != nullptr ? created : parasail_matrix_lookup("blosum62");
  if (matrix == nullptr) throw Error(ErrorKind::kInternal, "parasail: no scoring matrix");
  const int open = sc.gaps.open + sc.gaps.extend;  // parasail's open is the cost of a length-1 gap
  const int extend = sc.gaps.extend;
  ThreadPool pool(ctx.threads);
  std::vector<std::int32_t> scores(batch.size());
  std::vector<std::size_t> cigar_bytes(batch.size());
  std::atomic<std::size_t> saturated{0};
  const Clock::time_point start = Clock::now();
  pool.parallel_for(batch.size(), trace ? 4 : kGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const char* q = queries[i].c_str();
      const char* t = targets[i].c_str();
      const int m = static_cast<int>(queries[i].size()), n = static_cast<int>(targets[i].size());
      parasail_result_t* r = trace ? parasail_sw_trace_striped_16(q, m, t, n, open, extend, matrix)
                                   : parasail_sw_striped_16(q, m, t, n, open, extend, matrix);
      if (parasail_result_is_saturated(r) != 0) saturated.fetch_add(1);
      scores[i] = r->score;
      if (trace) {
        parasail_cigar_t* cigar = parasail_result_get_cigar(r, q, m, t, n, matrix);
        char* text = parasail_cigar_decode(cigar);
        cigar_bytes[i] = std::strlen(text);
        std::free(text);
        parasail_cigar_free(cigar);
      }
      parasail_result_free(r);
    }
  });
  const double seconds = seconds_since(start);
  if (created != nullptr) parasail_matrix_free(created);
  if (saturated.load() != 0)
    throw Error(ErrorKind::kInternal,
                "parasail: " + std::to_string(saturated.load()) + " pairs saturated 16 bits");
  return batch_work(batch, seconds);
}

std::string parasail_unavailable() { return ""; }
#else
Work parasail_sw(const Context&, AlignSetKind, bool) {
  throw Error(ErrorKind::kUsage, "warpsearch-bench was built without libparasail");
}
std::string parasail_unavailable() { return "built without libparasail (Debian: libparasail-dev)"; }
#endif

const Registration kCpuProtein{{
    .name = "cpu-align-protein",
    .description = "striped SIMD local pass (score + end), 10000 ADEPT-shaped protein pairs, BLOSUM62 11/1",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return simd_pass(ctx, AlignSetKind::kProtein); }},
}};

const Registration kCpuDna{{
    .name = "cpu-align-dna",
    .description = "striped SIMD local pass (score + end), 20000 ADEPT-shaped DNA pairs, +2/-3 5/2",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return simd_pass(ctx, AlignSetKind::kDna); }},
}};

const Registration kCpuProteinCigar{{
    .name = "cpu-align-protein-cigar",
    .description =
        "striped SIMD passes + traceback (score, start, end, CIGAR), 1000 ADEPT-shaped protein pairs",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return simd_cigar(ctx, AlignSetKind::kProtein); }},
}};

const Registration kCpuDnaCigar{{
    .name = "cpu-align-dna-cigar",
    .description = "striped SIMD passes + traceback (score, start, end, CIGAR), 1000 ADEPT-shaped DNA pairs",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return simd_cigar(ctx, AlignSetKind::kDna); }},
}};

const Registration kParasailProteinCigar{{
    .name = "parasail-sw-trace-protein",
    .description = "peer: parasail_sw_trace_striped_16 + parasail_result_get_cigar on the pairs of "
                   "cpu-align-protein-cigar",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return parasail_sw(ctx, AlignSetKind::kProtein, true); }},
    .unavailable = parasail_unavailable,
}};

const Registration kParasailDnaCigar{{
    .name = "parasail-sw-trace-dna",
    .description =
        "peer: parasail_sw_trace_striped_16 + parasail_result_get_cigar on the pairs of cpu-align-dna-cigar",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return parasail_sw(ctx, AlignSetKind::kDna, true); }},
    .unavailable = parasail_unavailable,
}};

const Registration kParasailProtein{{
    .name = "parasail-sw-striped-protein",
    .description = "peer: parasail_sw_striped_16 on the pairs of cpu-align-protein, same threads",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return parasail_sw(ctx, AlignSetKind::kProtein, false); }},
    .unavailable = parasail_unavailable,
}};

const Registration kParasailDna{{
    .name = "parasail-sw-striped-dna",
    .description = "peer: parasail_sw_striped_16 on the pairs of cpu-align-dna, same threads",
    .headline = Headline::kCells,
    .body = InternalRun{[](const Context& ctx) { return parasail_sw(ctx, AlignSetKind::kDna, false); }},
    .unavailable = parasail_unavailable,
}};

}  // namespace
}  // namespace warpsearch::bench
