// test_packed_db.cpp: make_db / PackedDb / SequenceSource / summarize: round trips against
// SequenceReader, partitions, corruption of every file, failure without partial output, real data and
// the fuzz corpus replay.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../../fuzz/packed_db_harness.hpp"
#include "core/db_format.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch {
namespace {

namespace fs = std::filesystem;
namespace layout = db_format;

using test::read_file;
using test::write_file;

// A scratch directory named after this suite.
class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("test_packed_db") {}
};

void write_gzip(const std::string& path, const std::string& text) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(gz);
}

std::vector<Sequence> read_all(const std::string& path, ReaderOptions options = {}) {
  SequenceReader reader(path, options);
  std::vector<Sequence> out;
  Sequence seq;
  while (reader.next(seq)) out.push_back(seq);
  return out;
}

// Expects the database to hold exactly what SequenceReader reads from the input.
void expect_same_as_reader(const PackedDb& db, const std::string& input, ReaderOptions options = {}) {
  const std::vector<Sequence> expected = read_all(input, options);
  ASSERT_EQ(db.size(), expected.size());
  std::uint64_t residues = 0;
  Sequence seq;
  for (std::uint64_t i = 0; i < db.size(); ++i) {
    const Sequence& e = expected[i];
    EXPECT_EQ(db.name(i), e.name) << i;
    EXPECT_EQ(db.description(i), e.description) << i;
    EXPECT_EQ(db.length(i), e.residues.size()) << i;
    EXPECT_TRUE(std::ranges::equal(db.residues(i), e.residues)) << i;
    EXPECT_TRUE(std::ranges::equal(db.soft_mask(i), e.soft_mask)) << i;
    db.to_sequence(i, seq);
    EXPECT_EQ(seq.name, e.name);
    EXPECT_EQ(seq.description, e.description);
    EXPECT_EQ(seq.residues, e.residues);
    EXPECT_EQ(seq.soft_mask, e.soft_mask);
    residues += e.residues.size();
  }
  EXPECT_EQ(db.total_residues(), residues);
}

// Partitions cover the sorted order, which is sorted by (length, id) and a permutation of the ids.
void expect_valid_partitions(const PackedDb& db) {
  const auto order = db.sorted_order();
  ASSERT_EQ(order.size(), db.size());
  std::vector<std::uint32_t> ids(order.begin(), order.end());
  std::sort(ids.begin(), ids.end());
  for (std::uint32_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], i);
  for (std::size_t p = 1; p < order.size(); ++p) {
    ASSERT_LT(std::pair(db.length(order[p - 1]), order[p - 1]), std::pair(db.length(order[p]), order[p]));
  }
  std::uint64_t pos = 0;
  std::uint64_t residues = 0;
  for (const DbPartition& part : db.partitions()) {
    EXPECT_EQ(part.begin, pos);
    EXPECT_GT(part.end, part.begin);
    std::uint64_t part_residues = 0;
    for (; pos < part.end; ++pos) {
      const std::uint64_t len = db.length(order[pos]);
      EXPECT_GE(len, part.length_lo);
      EXPECT_LE(len, part.length_hi);
      part_residues += len;
    }
    EXPECT_EQ(part.residues, part_residues);
    EXPECT_EQ(part.min_length, db.length(order[part.begin]));
    EXPECT_EQ(part.max_length, db.length(order[part.end - 1]));
    residues += part_residues;
  }
  EXPECT_EQ(pos, db.size());
  EXPECT_EQ(residues, db.total_residues());
}

constexpr const char* kProteinFasta =
    ">sp|P1|ONE first protein\n"
    "MKVLAAGIVG\n"
    "LLLAcdefGH\r\n"
    "\n"
    ">two\n"
    "ACDEFGHIKLMNPQRSTVWYBJZOUX*\n"
    ">three   spaced   description  \n"
    "mmmmKKKKkk\n"
    ">four x\n"
    "W\n";

template <class F>
ErrorKind error_kind(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message != nullptr) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no warpsearch::Error thrown";
  return ErrorKind::kInternal;
}

TEST(PackedDb, RoundTripProtein) {
  TempDir dir;
  write_file(dir / "in.fa", kProteinFasta);
  const MakeDbResult r = make_db(dir / "in.fa", dir / "db");
  EXPECT_EQ(r.sequences, 4u);
  EXPECT_EQ(r.alphabet, AlphabetKind::kProtein);
  EXPECT_EQ(r.residues, 20u + 27u + 10u + 1u);
  EXPECT_EQ(r.min_length, 1u);
  EXPECT_EQ(r.max_length, 27u);
  EXPECT_EQ(r.masked_residues, 4u + 4u + 2u);
  EXPECT_EQ(dir.listing(),
            (std::set<std::string>{"in.fa", "db.wsdb", "db.wsq", "db.wsh", "db.wsx", "db.wsm", "db.wso"}));

  const PackedDb db = PackedDb::open(dir / "db", {.verify = true});
  expect_same_as_reader(db, dir / "in.fa");
  expect_valid_partitions(db);
  EXPECT_EQ(db.name(0), "sp|P1|ONE");
  EXPECT_EQ(db.description(0), "first protein");
  EXPECT_EQ(db.description(1), "");
  EXPECT_EQ(db.alphabet().kind(), AlphabetKind::kProtein);
  EXPECT_EQ(db.title(), "in.fa");
  EXPECT_EQ(db.source(), dir / "in.fa");
  EXPECT_EQ(db.max_length(), 27u);
  EXPECT_EQ(db.min_length(), 1u);
  EXPECT_EQ(db.mask_runs(), 3u);
  EXPECT_EQ(db.format_version(), kDbFormatVersion);
  // Lengths 20, 27, 10, 1: all in the first default class (<= 64).
  ASSERT_EQ(db.partitions().size(), 1u);
  EXPECT_EQ(db.partitions()[0].length_lo, 0u);
  EXPECT_EQ(db.partitions()[0].length_hi, 64u);
  EXPECT_EQ(std::vector<std::uint32_t>(db.sorted_order().begin(), db.sorted_order().end()),
            (std::vector<std::uint32_t>{3, 2, 0, 1}));

  // "PREFIX.wsdb" names the same database.
  const PackedDb again = PackedDb::open(dir / "db.wsdb");
  EXPECT_EQ(again.size(), 4u);
  EXPECT_EQ(again.prefix(), dir / "db");
}

TEST(PackedDb, GzipInputGivesIdenticalFiles) {
  TempDir dir;
  write_file(dir / "in.fa", kProteinFasta);
  write_gzip(dir / "in.fa.gz", kProteinFasta);
  MakeDbOptions options;
  options.title = "t";
  make_db(dir / "in.fa", dir / "plain", options);
  make_db(dir / "in.fa.gz", dir / "gz", options);
  const PackedDb db = PackedDb::open(dir / "gz", {.verify = true});
  expect_same_as_reader(db, dir / "in.fa.gz");
  for (const char* ext : {".wsq", ".wsh", ".wsx", ".wsm", ".wso"}) {
    EXPECT_EQ(read_file(dir / (std::string("plain") + ext)), read_file(dir / (std::string("gz") + ext)))
        << ext;
  }
}

TEST(PackedDb, DnaUnknownLettersAndStrict) {
  TempDir dir;
  write_file(dir / "in.fa", ">chr1 test\nACGTNNacgtRYXXQ\n>chr2\nACGUacgu\n");
  MakeDbOptions options;
  options.alphabet = AlphabetKind::kDna;
  const MakeDbResult r = make_db(dir / "in.fa", dir / "db", options);
  EXPECT_EQ(r.alphabet, AlphabetKind::kDna);
  EXPECT_EQ(r.unknown_letters, 3u);  // X, X, Q
  const PackedDb db = PackedDb::open(dir / "db", {.verify = true});
  EXPECT_EQ(db.unknown_letters(), 3u);
  expect_same_as_reader(db, dir / "in.fa", ReaderOptions{.alphabet = AlphabetKind::kDna});
  EXPECT_EQ(db.residues(0)[14], kDnaUnknown);

  options.strict_letters = true;
  options.overwrite = true;
  std::string message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "in.fa", dir / "strict", options); }, &message),
            ErrorKind::kFormat);
  EXPECT_NE(message.find(dir / "in.fa"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir / "strict.wsdb"));
}

TEST(PackedDb, PartitionsCoverEverySequenceInLengthOrder) {
  TempDir dir;
  std::mt19937 rng(42);
  std::string fasta;
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  for (int i = 0; i < 500; ++i) {
    const int len = 1 + static_cast<int>(rng() % (i % 10 == 0 ? 20000 : 700));
    fasta += ">s" + std::to_string(i) + "\n";
    for (int j = 0; j < len; ++j) fasta += letters[rng() % letters.size()];
    fasta += "\n";
  }
  write_file(dir / "in.fa", fasta);
  make_db(dir / "in.fa", dir / "db");
  const PackedDb db = PackedDb::open(dir / "db", {.verify = true});
  expect_same_as_reader(db, dir / "in.fa");
  expect_valid_partitions(db);
  EXPECT_GE(db.partitions().size(), 5u);
  EXPECT_EQ(db.partitions().back().length_hi, std::numeric_limits<std::uint64_t>::max());

  MakeDbOptions custom;
  custom.partition_bounds = {100, 1000};
  make_db(dir / "in.fa", dir / "custom", custom);
  const PackedDb c = PackedDb::open(dir / "custom");
  expect_valid_partitions(c);
  ASSERT_EQ(c.partitions().size(), 3u);
  EXPECT_EQ(c.partitions()[1].length_lo, 101u);
  EXPECT_EQ(c.partitions()[1].length_hi, 1000u);

  custom.partition_bounds = {};
  make_db(dir / "in.fa", dir / "single", custom);
  ASSERT_EQ(PackedDb::open(dir / "single").partitions().size(), 1u);

  custom.partition_bounds = {100, 100};
  EXPECT_EQ(error_kind([&] { make_db(dir / "in.fa", dir / "bad", custom); }), ErrorKind::kUsage);
}

TEST(PackedDb, DuplicateNamesAreAnInputError) {
  TempDir dir;
  write_file(dir / "in.fa", ">a\nMK\n>b first\nMK\n>c\nMK\n>b second\nMK\n");
  std::string message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "in.fa", dir / "db"); }, &message), ErrorKind::kInput);
  EXPECT_EQ(message, dir / "in.fa" + ":7: duplicate sequence name 'b' (first at line 3)");
  EXPECT_EQ(dir.listing(), std::set<std::string>{"in.fa"});
}

TEST(PackedDb, EmptyInputIsAnInputError) {
  TempDir dir;
  write_file(dir / "empty.fa", "");
  std::string message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "empty.fa", dir / "db"); }, &message), ErrorKind::kInput);
  EXPECT_NE(message.find("no sequences"), std::string::npos) << message;
  EXPECT_EQ(dir.listing(), std::set<std::string>{"empty.fa"});
}

TEST(PackedDb, ZeroLengthRecordIsAnError) {
  TempDir dir;
  write_file(dir / "in.fa", ">a\nMK\n>b\n>c\nMK\n");
  std::string message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "in.fa", dir / "db"); }, &message), ErrorKind::kInput);
  EXPECT_NE(message.find("empty sequence 'b'"), std::string::npos) << message;
  EXPECT_EQ(dir.listing(), std::set<std::string>{"in.fa"});
}

TEST(PackedDb, BadInputHalfwayLeavesNoFiles) {
  TempDir dir;
  std::string fasta;
  for (int i = 0; i < 2000; ++i) fasta += ">s" + std::to_string(i) + "\n" + std::string(300, 'A') + "\n";
  fasta += ">broken\nACDE1FGH\n";
  write_file(dir / "in.fa", fasta);
  std::string message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "in.fa", dir / "db"); }, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find(dir / "in.fa" + ":4002"), std::string::npos) << message;
  EXPECT_EQ(dir.listing(), std::set<std::string>{"in.fa"});
}

TEST(PackedDb, ExistingDatabaseNeedsOverwrite) {
  TempDir dir;
  write_file(dir / "in.fa", kProteinFasta);
  write_file(dir / "other.fa", ">x\nMKV\n");
  make_db(dir / "in.fa", dir / "db.wsdb");  // a ".wsdb" suffix names the prefix
  const auto before = dir.listing();
  EXPECT_TRUE(before.contains("db.wsq"));
  std::string message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "other.fa", dir / "db"); }, &message), ErrorKind::kUsage);
  EXPECT_NE(message.find("--force"), std::string::npos) << message;
  EXPECT_EQ(PackedDb::open(dir / "db").size(), 4u);

  MakeDbOptions options;
  options.overwrite = true;
  make_db(dir / "other.fa", dir / "db", options);
  EXPECT_EQ(PackedDb::open(dir / "db", {.verify = true}).size(), 1u);
  EXPECT_EQ(dir.listing(), before);
}

TEST(PackedDb, UnwritableDestinationIsAnIoError) {
  TempDir dir;
  write_file(dir / "in.fa", kProteinFasta);
  EXPECT_EQ(error_kind([&] { make_db(dir / "in.fa", dir / "missing/db"); }), ErrorKind::kIo);
  EXPECT_EQ(error_kind([&] { make_db(dir / "nothere.fa", dir / "db"); }), ErrorKind::kIo);
  EXPECT_EQ(dir.listing(), std::set<std::string>{"in.fa"});
}

TEST(PackedDb, DatabaseAsInputIsRefused) {
  TempDir dir;
  write_file(dir / "in.fa", kProteinFasta);
  make_db(dir / "in.fa", dir / "db");
  const auto before = dir.listing();
  std::string message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "db", dir / "copy"); }, &message), ErrorKind::kInput);
  EXPECT_NE(message.find("packed database already"), std::string::npos) << message;
  EXPECT_EQ(error_kind([&] { make_db(dir / "db.wsdb", dir / "copy"); }), ErrorKind::kInput);
  EXPECT_EQ(dir.listing(), before);
}

class CorruptDb : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string fasta;
    for (int i = 0; i < 50; ++i) {
      fasta += ">seq" + std::to_string(i) + " description " + std::to_string(i) + "\n";
      fasta += std::string(static_cast<std::size_t>(5 + i * 7), "ACDEFGHIKL"[i % 10]) + "mmmkk\n";
    }
    write_file(dir_ / "in.fa", fasta);
    make_db(dir_ / "in.fa", prefix());
    pristine_ = fuzz::read_db_files(prefix());
  }
  std::string prefix() const { return dir_ / "db"; }
  std::string path(std::size_t f) const { return db_file_paths(prefix())[f]; }

  // Opens with verification and returns the error's kind and message.
  ErrorKind open_error(std::string* message = nullptr) const {
    return error_kind([&] { PackedDb::open(prefix(), {.verify = true}); }, message);
  }

  TempDir dir_;
  fuzz::DbFiles pristine_;
};

TEST_F(CorruptDb, FlippedByteInAnyFileIsDetected) {
  for (std::size_t f = 0; f < fuzz::kDbFiles; ++f) {
    for (const double where : {0.0, 0.5, 1.0}) {
      fuzz::DbFiles files = pristine_;
      const auto at = static_cast<std::size_t>(where * static_cast<double>(files[f].size() - 1));
      files[f][at] = static_cast<char>(files[f][at] ^ 0x10);
      fuzz::write_db_files(prefix(), files);
      std::string message;
      EXPECT_EQ(open_error(&message), ErrorKind::kFormat) << path(f) << " at " << at;
      EXPECT_NE(message.find(path(f)), std::string::npos) << message;
    }
  }
}

TEST_F(CorruptDb, TruncatedOrMissingFileIsDetectedWithoutVerify) {
  for (std::size_t f = 0; f < fuzz::kDbFiles; ++f) {
    fuzz::DbFiles files = pristine_;
    files[f].pop_back();
    fuzz::write_db_files(prefix(), files);
    std::string message;
    EXPECT_EQ(error_kind([&] { PackedDb::open(prefix()); }, &message), ErrorKind::kFormat) << path(f);
    EXPECT_NE(message.find(path(f)), std::string::npos) << message;

    fuzz::write_db_files(prefix(), pristine_);
    fs::remove(path(f));
    EXPECT_EQ(error_kind([&] { PackedDb::open(prefix()); }, &message), ErrorKind::kIo) << path(f);
    EXPECT_NE(message.find(path(f)), std::string::npos) << message;
  }
  fuzz::write_db_files(prefix(), pristine_);
  EXPECT_EQ(PackedDb::open(prefix(), {.verify = true}).size(), 50u);
}

TEST_F(CorruptDb, WrongVersionAndMagic) {
  fuzz::DbFiles files = pristine_;
  auto* h = reinterpret_cast<unsigned char*>(files[layout::kDataFiles].data());
  layout::put_u32(h + layout::kOffVersion, 2);
  fuzz::repair_checksums(files);
  fuzz::write_db_files(prefix(), files);
  std::string message;
  EXPECT_EQ(open_error(&message), ErrorKind::kFormat);
  EXPECT_NE(message.find("unsupported database format version 2"), std::string::npos) << message;

  files = pristine_;
  files[layout::kDataFiles][1] = 'X';
  fuzz::write_db_files(prefix(), files);
  EXPECT_EQ(open_error(&message), ErrorKind::kFormat);
  EXPECT_NE(message.find("bad magic"), std::string::npos) << message;
}

TEST_F(CorruptDb, StructuralDamageWithValidChecksumsIsDetected) {
  const auto damaged = [&](std::size_t file, std::size_t offset, std::uint64_t value, int width) {
    fuzz::DbFiles files = pristine_;
    auto* p = reinterpret_cast<unsigned char*>(files[file].data()) + offset;
    if (width == 4) {
      layout::put_u32(p, static_cast<std::uint32_t>(value));
    } else {
      layout::put_u64(p, value);
    }
    fuzz::repair_checksums(files);
    fuzz::write_db_files(prefix(), files);
    std::string message;
    EXPECT_EQ(error_kind([&] { PackedDb::open(prefix()); }, &message), ErrorKind::kFormat)
        << file << "@" << offset << ": " << message;
  };
  constexpr std::uint64_t n = 50;
  damaged(layout::kIndexFile, 8 * 3, 1'000'000, 8);               // residue offset beyond the file
  damaged(layout::kIndexFile, 8 * (n + 1 + 5), 3, 8);             // header offsets decrease
  damaged(layout::kIndexFile, 8 * 3 * (n + 1) + 4 * 7, 1000, 4);  // name longer than its header
  damaged(layout::kIndexFile, 8 * (2 * (n + 1) + 2), 99, 8);      // mask offset beyond the runs
  damaged(layout::kMaskFile, 16 * 4, 0, 8);                       // masked residue count
  damaged(layout::kMaskFile, 16 * 4 + 8, 1'000'000, 8);           // mask run beyond its sequence
  damaged(layout::kOrderFile, 0, 7, 4);                           // order not a permutation
  damaged(layout::kOrderFile, 4 * 10, 11, 4);
  damaged(layout::kDataFiles, layout::kOffSequences, n + 1, 8);  // sequence count
  damaged(layout::kDataFiles, layout::kOffMaxLength, 5, 8);      // header stats vs index
  damaged(layout::kDataFiles, layout::kOffMaskedResidues, 1, 8);
  damaged(layout::kDataFiles, layout::kOffPartitionCount, 0, 4);
  damaged(layout::kDataFiles, layout::kFixedBytes + 40, 3, 8);      // partition 0's end
  damaged(layout::kDataFiles, layout::kFixedBytes + 48, 12345, 8);  // partition 0's residues
  damaged(layout::kDataFiles, layout::kOffAlphabet, 7, 4);
}

TEST_F(CorruptDb, OutOfAlphabetResidueIsCaughtByVerifyAndToSequence) {
  fuzz::DbFiles files = pristine_;
  files[layout::kResidueFile][3] = static_cast<char>(kProteinCodes);
  fuzz::repair_checksums(files);
  fuzz::write_db_files(prefix(), files);
  const PackedDb db = PackedDb::open(prefix());
  Sequence seq;
  EXPECT_EQ(error_kind([&] { db.to_sequence(0, seq); }), ErrorKind::kFormat);
  db.to_sequence(1, seq);
  std::string message;
  EXPECT_EQ(error_kind([&] { db.verify(); }, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find("sequence 0 ('seq0')"), std::string::npos) << message;
}

TEST_F(CorruptDb, RandomDamageNeverCrashes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 150; ++round) {
    fuzz::DbFiles files = pristine_;
    const std::size_t f = rng() % fuzz::kDbFiles;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
      if (files[f].empty()) break;
      files[f][rng() % files[f].size()] = static_cast<char>(rng());
    }
    if (rng() % 4 == 0) files[f].resize(rng() % (files[f].size() + 1));
    if (rng() % 2 == 0) fuzz::repair_checksums(files);
    fuzz::write_db_files(prefix(), files);
    fuzz::exercise_db(prefix(), rng() % 2 == 0);
  }
}

TEST(PackedDbFuzzCorpus, ReplaysWithoutCrashing) {
  const fs::path corpus = test::source_dir() / "fuzz/corpus/packed_db";
  ASSERT_TRUE(fs::is_directory(corpus)) << corpus;
  TempDir dir;
  int inputs = 0;
  int opened = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    const std::string bytes = read_file(entry.path().string());
    opened += fuzz::run_input(dir / "db", reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++inputs;
  }
  EXPECT_GT(inputs, 0);
  EXPECT_GT(opened, 0);  // the seeds include valid databases
}

TEST(SequenceSource, PackedAndFastaGiveTheSameSequences) {
  TempDir dir;
  write_file(dir / "in.fa", kProteinFasta);
  make_db(dir / "in.fa", dir / "db");
  EXPECT_TRUE(SequenceSource::is_packed_db(dir / "db"));
  EXPECT_TRUE(SequenceSource::is_packed_db(dir / "db.wsdb"));
  EXPECT_FALSE(SequenceSource::is_packed_db(dir / "in.fa"));
  EXPECT_FALSE(SequenceSource::is_packed_db(dir / "nothing"));
  EXPECT_FALSE(SequenceSource::is_packed_db("-"));

  SequenceSource fasta = SequenceSource::open(dir / "in.fa");
  SequenceSource packed = SequenceSource::open(dir / "db");
  EXPECT_FALSE(fasta.is_packed());
  ASSERT_TRUE(packed.is_packed());
  EXPECT_EQ(packed.packed_db()->size(), 4u);
  EXPECT_EQ(fasta.packed_db(), nullptr);
  Sequence a;
  Sequence b;
  std::uint64_t count = 0;
  while (fasta.next(a)) {
    ASSERT_TRUE(packed.next(b));
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.description, b.description);
    EXPECT_EQ(a.residues, b.residues);
    EXPECT_EQ(a.soft_mask, b.soft_mask);
    ++count;
    EXPECT_EQ(packed.records(), count);
  }
  EXPECT_FALSE(packed.next(b));
  EXPECT_EQ(count, 4u);
  EXPECT_EQ(fasta.alphabet().kind(), packed.alphabet().kind());

  std::string message;
  EXPECT_EQ(
      error_kind([&] { SequenceSource::open(dir / "db", ReaderOptions{.alphabet = AlphabetKind::kDna}); },
                 &message),
      ErrorKind::kInput);
  EXPECT_NE(message.find("the database is protein"), std::string::npos) << message;
  EXPECT_EQ(error_kind([&] { SequenceSource::open(dir / "nothing"); }), ErrorKind::kIo);
  write_file(dir / "broken.wsdb", "garbage");
  EXPECT_TRUE(SequenceSource::is_packed_db(dir / "broken"));
  EXPECT_EQ(error_kind([&] { SequenceSource::open(dir / "broken"); }, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find("bad magic"), std::string::npos) << message;
}

TEST(SequenceSource, ExistingFileWinsOverSameNamedDatabase) {
  TempDir dir;
  write_file(dir / "x.fa", kProteinFasta);
  write_file(dir / "y.fa", ">only\nMK\n");
  make_db(dir / "y.fa", dir / "x.fa");  // a database named after the FASTA file
  SequenceSource source = SequenceSource::open(dir / "x.fa");
  EXPECT_FALSE(source.is_packed());
  EXPECT_TRUE(SequenceSource::open(dir / "x.fa.wsdb").is_packed());
}

TEST(DbSummary, PackedAndFastaAgree) {
  TempDir dir;
  write_file(dir / "in.fa", ">a\nMKVL\n>b\nMKVLMKVLMK\n>c\nmkVLmk\n>d\nM\n>e\nMKVLMKVLMKVLMKVLMKVL\n");
  make_db(dir / "in.fa", dir / "db");
  SequenceSource fasta = SequenceSource::open(dir / "in.fa");
  SequenceSource packed = SequenceSource::open(dir / "db");
  const DbSummary f = summarize(fasta);
  const DbSummary p = summarize(packed);
  for (const DbSummary* s : {&f, &p}) {
    EXPECT_EQ(s->sequences, 5u);
    EXPECT_EQ(s->residues, 41u);
    EXPECT_EQ(s->min_length, 1u);
    EXPECT_EQ(s->max_length, 20u);
    EXPECT_DOUBLE_EQ(s->mean_length, 41.0 / 5);
    EXPECT_EQ(s->n50, 10u);  // 20 < 41/2 <= 20 + 10
    EXPECT_EQ(s->masked_residues, 4u);
    EXPECT_EQ(s->mask_runs, 2u);
    ASSERT_EQ(s->histogram.size(), 5u);  // [1,1] [2,3] [4,7] [8,15] [16,31]
    EXPECT_EQ(s->histogram[0].lo, 1u);
    EXPECT_EQ(s->histogram[1].sequences, 0u);
    EXPECT_EQ(s->histogram[2].lo, 4u);
    EXPECT_EQ(s->histogram[2].hi, 7u);
    EXPECT_EQ(s->histogram[2].sequences, 2u);
    EXPECT_EQ(s->histogram[2].residues, 10u);
    EXPECT_EQ(s->histogram[4].hi, 31u);
  }
  EXPECT_FALSE(f.packed);
  EXPECT_TRUE(p.packed);
  EXPECT_EQ(p.partitions.size(), 1u);
  EXPECT_EQ(p.title, "in.fa");
  EXPECT_EQ(p.file_bytes, [&] {
    std::uint64_t total = 0;
    for (const std::string& path : db_file_paths(dir / "db")) total += fs::file_size(path);
    return total;
  }());
}

// Residues counted independently of the reader: letters and '*' on non-header lines.
std::pair<std::uint64_t, std::uint64_t> count_records_and_letters(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::uint64_t records = 0;
  std::uint64_t letters = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      ++records;
      continue;
    }
    for (const char c : line)
      letters += (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '*') ? 1 : 0;
  }
  return {records, letters};
}

TEST(PackedDbRealData, Mmseqs20k) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::string input = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  const auto [records, letters] = count_records_and_letters(input);
  ASSERT_EQ(records, 20000u);
  TempDir dir;
  const MakeDbResult r = make_db(input, dir / "db");
  EXPECT_EQ(r.sequences, 20000u);
  EXPECT_EQ(r.residues, letters);
  const PackedDb db = PackedDb::open(dir / "db", {.verify = true});
  EXPECT_EQ(db.size(), 20000u);
  EXPECT_EQ(db.total_residues(), letters);
  EXPECT_EQ(db.alphabet().kind(), AlphabetKind::kProtein);
  expect_same_as_reader(db, input);
  expect_valid_partitions(db);
}

TEST(PackedDbRealData, CelegansChrX) {
  WS_REQUIRE_TESTDATA("dna/ce2_chrX.fa");
  const std::string input = (test::testdata_dir() / "dna/ce2_chrX.fa").string();
  TempDir dir;
  const MakeDbResult r = make_db(input, dir / "db");
  EXPECT_EQ(r.sequences, 1u);
  EXPECT_EQ(r.residues, 17'718'849u);
  EXPECT_EQ(r.alphabet, AlphabetKind::kDna);
  const PackedDb db = PackedDb::open(dir / "db", {.verify = true});
  EXPECT_EQ(db.length(0), 17'718'849u);
  EXPECT_EQ(db.name(0), "chrX");
  ASSERT_EQ(db.partitions().size(), 1u);
  EXPECT_EQ(db.partitions()[0].length_hi, std::numeric_limits<std::uint64_t>::max());
  expect_same_as_reader(db, input);
}

}  // namespace
}  // namespace warpsearch
