// search_internal.hpp: the parts of the hmmsearch driver (search.cpp) that tests use directly: the
// in-memory target database read with Easel's FASTA rules (esl_sqio_ascii.c, digital mode).
//
// The database is read once and kept in memory for all query models: each record keeps its name,
// description (HMMER prints both), its Easel-digitized residues (Dsq layout: sentinels at [0] and
// [L+1]) and the line of its header for messages. Reading rules, as Easel's FASTA parser:
//   - the file may be plain or gzip (detected from content; multi-member gzip), "-" reads stdin;
//   - whitespace before the first '>' is skipped; anything else there is a format error;
//   - header: '>' then optional spaces/tabs, the name up to the first whitespace (must not be empty),
//     spaces/tabs, then the description up to the end of line (or a ctrl-A), trailing spaces kept;
//   - sequence lines: ' ', '\t', '\r' ignored; letters mapped by the model alphabet's FASTA input map
//     (abc.hpp fasta_inmap: case-insensitive, synonyms, '*' allowed, '-' and digits illegal);
//     an illegal character is Error(kFormat) naming the file, the line, the character and the record;
//   - a record may be empty (length 0: hmmsearch counts it but never scores it);
//   - no length limit (HMMER 3.3.2 refuses targets > 100000 residues; we search them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/common.hpp"

namespace warpsearch::hmm {

/// One target sequence (ESL_SQ in digital mode, the fields hmmsearch uses).
struct TargetSeq {
  std::string name;
  std::string acc;   // always empty for FASTA (kept for the output writers, which print '-')
  std::string desc;  // empty when the header has no description
  Dsq dsq;           // dsq[0] = dsq[L+1] = kDsqSentinel, residues dsq[1..L]
  int64_t L = 0;
  uint64_t line = 0;  // 1-based line of the '>' header
};

struct TargetDb {
  std::string path;
  std::vector<TargetSeq> seqs;
  uint64_t nres = 0;  // total residues
};

/// Parses FASTA text (already decompressed) digitized with alphabet a. path is used in messages only.
TargetDb parse_target_db(std::string_view text, const Abc& a, const std::string& path);

/// Reads a whole FASTA file (plain or gzip, "-" = stdin) digitized with alphabet a.
/// Throws Error(kIo) when it cannot be read, Error(kFormat) when it is empty or misformatted.
TargetDb read_target_db(const std::string& path, const Abc& a);

}  // namespace warpsearch::hmm
