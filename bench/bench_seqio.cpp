// bench_seqio.cpp: the timed whole-file read behind the harness's read-fasta entries (bench_io.cpp).
#include "bench_seqio.hpp"

#include <chrono>

#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

double warpsearch_bench_read_fasta(const std::string& path, std::uint64_t* residues, std::uint64_t* records) {
  const auto start = std::chrono::steady_clock::now();
  warpsearch::SequenceReader reader(path);
  warpsearch::Sequence seq;
  while (reader.next(seq)) {
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (residues != nullptr) *residues = reader.residues();
  if (records != nullptr) *records = reader.records();
  return elapsed.count();
}
