// count_residues.cpp: a minimal pipeline program linking the installed warpsearch library.
// Reads a FASTA/FASTQ file (plain or gzip) or a packed database and prints records and residues.
#include <cstdio>
#include <exception>

#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/version.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: count_residues FASTA|DB\n");
    return 2;
  }
  try {
    auto source = warpsearch::SequenceSource::open(argv[1], {});
    warpsearch::Sequence seq;
    unsigned long long records = 0, residues = 0;
    while (source.next(seq)) {
      ++records;
      residues += seq.length();
    }
    std::printf("warpsearch %s: %llu sequences, %llu residues (%s)\n", warpsearch::kVersion, records,
                residues, source.is_packed() ? "packed database" : "sequence file");
    return 0;
  } catch (const warpsearch::Error& e) {
    std::fprintf(stderr, "count_residues: %s\n", e.what());
    return warpsearch::exit_code(e.kind());
  }
}
