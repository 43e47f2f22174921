// db_source.cpp: SequenceSource, the "packed database, BLAST+ database or FASTA/FASTQ file" input of every
// search.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>

#include "core/blast_db.hpp"
#include "core/db_format.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch {
namespace {

bool starts_with_db_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, db_format::kMagic.size()> bytes{};
  if (!in.read(bytes.data(), bytes.size())) return false;
  return std::equal(bytes.begin(), bytes.end(), db_format::kMagic.begin(),
                    [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; });
}

}  // namespace

bool SequenceSource::is_packed_db(const std::string& path) {
  if (path.empty() || path == "-") return false;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return starts_with_db_magic(path);
  // A damaged PREFIX.wsdb still means "database": open() then says what is wrong with it.
  return std::filesystem::exists(path + std::string(db_format::kHeaderExtension), ec);
}

bool SequenceSource::is_blast_db(const std::string& path) {
  if (path.empty() || path == "-" || is_packed_db(path)) return false;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec) && !path.ends_with(".pal") && !path.ends_with(".pin")) {
    return false;
  }
  return BlastDb::exists(path);
}

SequenceSource SequenceSource::open(const std::string& path, ReaderOptions options) {
  SequenceSource source;
  source.path_ = path;
  if (is_packed_db(path)) {
    source.db_ = std::make_unique<PackedDb>(PackedDb::open(path));
    const Alphabet& have = source.db_->alphabet();
    if (options.alphabet && Alphabet(*options.alphabet).is_nucleotide() != have.is_nucleotide()) {
      throw Error(ErrorKind::kInput,
                  fmt::format("the database is {} but {} sequences were requested", to_string(have.kind()),
                              to_string(*options.alphabet)),
                  path);
    }
  } else if (is_blast_db(path)) {
    if (options.alphabet && Alphabet(*options.alphabet).is_nucleotide()) {
      throw Error(ErrorKind::kInput,
                  fmt::format("the BLAST database is protein but {} sequences were requested",
                              to_string(*options.alphabet)),
                  path);
    }
    source.blast_ = std::make_unique<BlastDb>(BlastDb::open(path));
  } else {
    source.reader_ = std::make_unique<SequenceReader>(path, options);
  }
  return source;
}

SequenceSource::SequenceSource(SequenceSource&&) noexcept = default;
SequenceSource& SequenceSource::operator=(SequenceSource&&) noexcept = default;
SequenceSource::~SequenceSource() = default;

bool SequenceSource::next(Sequence& seq) {
  if (reader_) return reader_->next(seq);
  if (blast_) {
    if (next_id_ >= blast_->size()) return false;
    blast_->to_sequence(next_id_++, seq);
    return true;
  }
  if (next_id_ >= db_->size()) return false;
  db_->to_sequence(next_id_++, seq);
  return true;
}

const Alphabet& SequenceSource::alphabet() const {
  static constexpr Alphabet kProtein = Alphabet::protein();
  if (blast_) return kProtein;
  return db_ ? db_->alphabet() : reader_->alphabet();
}

std::uint64_t SequenceSource::records() const { return reader_ ? reader_->records() : next_id_; }

std::uint64_t SequenceSource::unknown_letters() const {
  if (blast_) return 0;
  return db_ ? db_->unknown_letters() : reader_->unknown_letters();
}

}  // namespace warpsearch
