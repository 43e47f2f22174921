// bench_seqio.hpp: the timed FASTA/FASTQ read that the harness's read-fasta entries run.
#pragma once

#include <cstdint>
#include <string>

// Reads every record of path (plain or gzip, "-" for stdin) with SequenceReader and default options,
// reusing one Sequence. Returns the wall-clock seconds from opening the file to the end of the input;
// stores the residue and record counts where the pointers are not null. Throws warpsearch::Error on
// unreadable or malformed input.
double warpsearch_bench_read_fasta(const std::string& path, std::uint64_t* residues, std::uint64_t* records);
