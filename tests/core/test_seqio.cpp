// test_seqio.cpp: SequenceReader (FASTA/FASTQ, plain/gzip/stdin) and to_letters.
//
// Contents: FASTA grammar (headers, multi-line, CRLF, blank lines, comments, whitespace), residue
// classes (soft mask, unknown letters, strict letters, invalid characters), FASTQ, format detection,
// alphabet guessing, gzip (multi-member, truncated, corrupt), stdin, I/O errors, counters, buffer-size
// invariance (every test input read through buffers of 1 byte and up gives the same records and
// errors), a 120 Mbp single-line sequence, the real data sets (counts from esl-seqstat 0.48), and the
// fuzz corpus (fuzz/corpus/seqio) replayed, including the regression inputs of crashes found by
// fuzz_seqio.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"
#include "warpsearch/sequence.hpp"

namespace warpsearch {
namespace {

namespace fs = std::filesystem;

// ReaderOptions built fluently: Options().alphabet(AlphabetKind::kDna).buffer(7).
struct Options {
  ReaderOptions value;
  Options& alphabet(AlphabetKind kind) {
    value.alphabet = kind;
    return *this;
  }
  Options& format(SeqFormat format) {
    value.format = format;
    return *this;
  }
  Options& strict() {
    value.strict_letters = true;
    return *this;
  }
  Options& allow_empty() {
    value.allow_empty_sequences = true;
    return *this;
  }
  Options& blast_queries() {  // blastp's query reader
    value.allow_unnamed = true;
    value.skip_hyphens = true;
    value.keep_header = true;
    return *this;
  }
  Options& buffer(std::size_t bytes) {
    value.buffer_bytes = bytes;
    return *this;
  }
  operator ReaderOptions() const { return value; }  // NOLINT(google-explicit-constructor)
};

// Compresses data as one gzip member.
std::string gzip(std::string_view data, int level = Z_DEFAULT_COMPRESSION) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The Error that f throws; a test failure if it throws none.
Error error_from(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no warpsearch::Error thrown";
  return Error(ErrorKind::kInternal, "no error");
}

std::vector<Sequence> read_all(const std::string& path, const ReaderOptions& options = {}) {
  SequenceReader reader(path, options);
  std::vector<Sequence> records;
  Sequence seq;
  while (reader.next(seq)) records.push_back(seq);
  return records;
}

// Everything a reader produces for one input: records, counters, or the error.
struct ReadResult {
  std::vector<Sequence> records;
  AlphabetKind alphabet = AlphabetKind::kProtein;
  SeqFormat format = SeqFormat::kAuto;
  std::uint64_t residues = 0, unknown = 0, bytes = 0, line = 0;
  std::string error;  // what() of the Error, empty if none
};

ReadResult read_result(const std::string& path, const ReaderOptions& options) {
  ReadResult r;
  try {
    SequenceReader reader(path, options);
    r.alphabet = reader.alphabet().kind();
    r.format = reader.format();
    Sequence seq;
    while (reader.next(seq)) r.records.push_back(seq);
    r.residues = reader.residues();
    r.unknown = reader.unknown_letters();
    r.bytes = reader.bytes_read();
    r.line = reader.line();
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

void expect_same_records(const std::vector<Sequence>& a, const std::vector<Sequence>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].description, b[i].description);
    EXPECT_EQ(a[i].residues, b[i].residues);
    EXPECT_EQ(a[i].soft_mask, b[i].soft_mask);
    EXPECT_EQ(a[i].quality, b[i].quality);
    EXPECT_EQ(a[i].line, b[i].line);
  }
}

void expect_same_result(const ReadResult& a, const ReadResult& b) {
  EXPECT_EQ(a.error, b.error);
  expect_same_records(a.records, b.records);
  EXPECT_EQ(a.alphabet, b.alphabet);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.residues, b.residues);
  EXPECT_EQ(a.unknown, b.unknown);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.line, b.line);
}

// The invariants every record satisfies.
void expect_valid_record(const Sequence& seq, const Alphabet& alphabet, SeqFormat format) {
  EXPECT_FALSE(seq.name.empty());
  EXPECT_GT(seq.line, 0u);
  for (const std::uint8_t code : seq.residues) ASSERT_LT(code, alphabet.size());
  std::uint64_t previous_end = 0;
  for (std::size_t r = 0; r < seq.soft_mask.size(); ++r) {
    const MaskRun& run = seq.soft_mask[r];
    EXPECT_LT(run.begin, run.end);
    EXPECT_LE(run.end, seq.length());
    if (r > 0) {
      EXPECT_GT(run.begin, previous_end) << "runs overlap or touch";
    }
    previous_end = run.end;
  }
  if (format == SeqFormat::kFastq) {
    EXPECT_EQ(seq.quality.size(), seq.length());
  }
}

std::string letters(const Sequence& seq, AlphabetKind kind) { return to_letters(seq, Alphabet(kind)); }

class SeqioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ws_seqio_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, std::string_view content) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
    return path.string();
  }

  std::string fasta(std::string_view content) { return write("in.fa", content); }

  // what() of the Error reading all of content throws, checking its kind.
  std::string error_text(std::string_view content, ErrorKind kind, const ReaderOptions& options = {}) {
    const std::string path = write("bad.txt", content);
    const Error e = error_from([&] { read_all(path, options); });
    EXPECT_EQ(to_string(e.kind()), std::string(to_string(kind))) << e.what();
    EXPECT_EQ(e.file(), path);
    return e.what();
  }
  std::string where(std::uint64_t line) const {
    return (dir_ / "bad.txt").string() + ":" + std::to_string(line) + ": ";
  }

  fs::path dir_;
};

// ----- FASTA grammar --------------------------------------------------------------------------------

TEST_F(SeqioTest, FastaNamesDescriptionsAndMultiLineSequences) {
  const std::string path =
      fasta(">sp|P1|A  first protein\tdesc  \nMKV\nLLA\n>second\nACDEFGHIKLMNPQRSTVWY\n");
  SequenceReader reader(path);
  EXPECT_EQ(reader.format(), SeqFormat::kFasta);
  EXPECT_EQ(reader.alphabet().kind(), AlphabetKind::kProtein);
  EXPECT_FALSE(reader.gzipped());
  EXPECT_EQ(reader.path(), path);
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "sp|P1|A");
  EXPECT_EQ(seq.description, "first protein\tdesc  ");  // trailing whitespace kept (as Easel)
  EXPECT_EQ(seq.line, 1u);
  EXPECT_EQ(letters(seq, AlphabetKind::kProtein), "MKVLLA");
  EXPECT_TRUE(seq.quality.empty());
  EXPECT_TRUE(seq.soft_mask.empty());
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "second");
  EXPECT_EQ(seq.description, "");
  EXPECT_EQ(seq.line, 4u);
  ASSERT_EQ(seq.length(), 20u);
  for (std::uint8_t i = 0; i < 20; ++i) EXPECT_EQ(seq.residues[i], i);  // HMMER's order
  EXPECT_FALSE(reader.next(seq));
  EXPECT_FALSE(reader.next(seq));  // stays at the end
  EXPECT_EQ(reader.records(), 2u);
  EXPECT_EQ(reader.residues(), 26u);
}

TEST_F(SeqioTest, FastaCrLfLineEnds) {
  const auto records = read_all(fasta(">a desc\r\nAC\r\nGT\r\n\r\n>b\r\nTT\r\n"));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].name, "a");
  EXPECT_EQ(records[0].description, "desc");
  EXPECT_EQ(letters(records[0], AlphabetKind::kDna), "ACGT");
  EXPECT_EQ(records[1].line, 5u);
  EXPECT_EQ(letters(records[1], AlphabetKind::kDna), "TT");
}

TEST_F(SeqioTest, FastaBlankLinesAndWhitespaceAreIgnored) {
  const auto records = read_all(fasta("\n  \n\t\n>a\n\nA C\tG\n  \nT\v\f\n\n>b x\nGG  \n\n\n"));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].line, 4u);
  EXPECT_EQ(letters(records[0], AlphabetKind::kDna), "ACGT");
  EXPECT_EQ(records[1].line, 10u);
  EXPECT_EQ(letters(records[1], AlphabetKind::kDna), "GG");
}

TEST_F(SeqioTest, FastaLastLineWithoutNewline) {
  const auto records = read_all(fasta(">a\nACG\n>b\nTTA"));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(letters(records[1], AlphabetKind::kDna), "TTA");
  SequenceReader reader(fasta(">only"), Options().allow_empty());
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "only");
  EXPECT_EQ(seq.length(), 0u);
}

TEST_F(SeqioTest, FastaCommentLinesBeforeTheFirstHeader) {
  const auto records = read_all(fasta(";comment one\n\n;comment two\n>a\nACGT\n"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].line, 4u);
  // After the first header a ';' is sequence data, and invalid there.
  EXPECT_EQ(error_text(">a\nAC\n;x\n", ErrorKind::kFormat), where(3) + "invalid character ';' in sequence");
}

TEST_F(SeqioTest, FastaTextBeforeTheFirstHeaderIsAnError) {
  EXPECT_EQ(error_text("ACGT\n>a\nACGT\n", ErrorKind::kFormat),
            where(1) + "text before the first '>' header line");
  EXPECT_EQ(error_text(";c\n\n  x\n>a\nAC\n", ErrorKind::kFormat),
            where(3) + "text before the first '>' header line");
  EXPECT_EQ(error_text(" >a\nAC\n", ErrorKind::kFormat), where(1) + "text before the first '>' header line");
}

TEST_F(SeqioTest, FastaMissingNameIsAnError) {
  EXPECT_EQ(error_text(">\nACGT\n", ErrorKind::kFormat), where(1) + "missing sequence name after '>'");
  EXPECT_EQ(error_text(">a\nAC\n> desc\nAC\n", ErrorKind::kFormat),
            where(3) + "missing sequence name after '>'");
  EXPECT_EQ(error_text(">a\nAC\n>\r\n", ErrorKind::kFormat), where(3) + "missing sequence name after '>'");
}

// BLAST+'s query reader: a first record without a header, ">" with no name or blanks before the name, and
// '-' in sequence lines (skipped and counted).
TEST_F(SeqioTest, UnnamedRecordsAndHyphensWhenAllowed) {
  const std::string content = "MK-V\nLL\n>\nAC\n>  id  text \nG-G-\n>   \nW\n>x\nAA\n";
  const std::string path = write("u.fa", content);
  SequenceReader reader(path, Options().blast_queries());
  std::vector<Sequence> records;
  for (Sequence seq; reader.next(seq);) records.push_back(seq);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0].name, "");
  EXPECT_EQ(records[0].header, "");
  EXPECT_EQ(records[0].line, 1u);
  EXPECT_EQ(records[0].length(), 5u);  // MKVLL
  EXPECT_EQ(records[1].name, "");
  EXPECT_EQ(records[1].line, 3u);
  EXPECT_EQ(records[2].name, "id");
  EXPECT_EQ(records[2].description, "text ");
  EXPECT_EQ(records[2].header, "  id  text ");
  EXPECT_EQ(records[2].length(), 2u);
  EXPECT_EQ(records[3].name, "");
  EXPECT_EQ(records[4].name, "x");
  EXPECT_EQ(reader.hyphens(), 3u);
  EXPECT_EQ(reader.first_hyphen_line(), 1u);
  // Without the options each of these is an error.
  EXPECT_EQ(error_text("MK\n>a\nAC\n", ErrorKind::kFormat),
            where(1) + "text before the first '>' header line");
  EXPECT_EQ(error_text(">a\nA-C\n", ErrorKind::kFormat), where(2) + "invalid character '-' in sequence");
  // Other invalid bytes stay errors with them.
  EXPECT_EQ(error_text(">a\nA.C\n", ErrorKind::kFormat, Options().blast_queries()),
            where(2) + "invalid character '.' in sequence");
}

TEST_F(SeqioTest, EmptySequenceIsAnInputErrorUnlessAllowed) {
  const std::string content = ">a\nACGT\n>empty one\n\n>c\nGG\n>last";
  EXPECT_EQ(error_text(content, ErrorKind::kInput), where(3) + "empty sequence 'empty'");
  const auto records = read_all(write("e.fa", content), Options().allow_empty());
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[1].name, "empty");
  EXPECT_EQ(records[1].description, "one");
  EXPECT_EQ(records[1].length(), 0u);
  EXPECT_EQ(records[2].line, 5u);
  EXPECT_EQ(records[3].name, "last");
  EXPECT_EQ(records[3].length(), 0u);
}

TEST_F(SeqioTest, EmptyFileHasNoRecords) {
  SequenceReader reader(fasta(""));
  Sequence seq;
  EXPECT_FALSE(reader.next(seq));
  EXPECT_EQ(reader.format(), SeqFormat::kFasta);
  EXPECT_EQ(reader.alphabet().kind(), AlphabetKind::kProtein);  // guess_alphabet of nothing
  EXPECT_EQ(reader.records(), 0u);
  EXPECT_TRUE(read_all(fasta("\n\n;only a comment\n  \n")).empty());
}

// ----- residue classes ------------------------------------------------------------------------------

TEST_F(SeqioTest, InvalidCharactersAreFormatErrorsWithLine) {
  const ReaderOptions dna = Options().alphabet(AlphabetKind::kDna);
  EXPECT_EQ(error_text(">a\nACGT\nAC-GT\n", ErrorKind::kFormat, dna),
            where(3) + "invalid character '-' in sequence");
  EXPECT_EQ(error_text(">a\nAC1\n", ErrorKind::kFormat, dna), where(2) + "invalid character '1' in sequence");
  EXPECT_EQ(error_text(">a\nAC.\n", ErrorKind::kFormat, dna), where(2) + "invalid character '.' in sequence");
  EXPECT_EQ(error_text(">a\nACGT*\n", ErrorKind::kFormat, dna),
            where(2) + "invalid character '*' in sequence");
  EXPECT_EQ(error_text(">a\nAC\n@b\n", ErrorKind::kFormat, dna),
            where(3) + "invalid character '@' in sequence");
  EXPECT_EQ(error_text(">a\nAC\n\nG\x01", ErrorKind::kFormat, dna),
            where(4) + "invalid character '\\x01' in sequence");
  EXPECT_EQ(error_text(">a\nAC\xE9\n", ErrorKind::kFormat, dna),
            where(2) + "invalid character '\\xE9' in sequence");
  EXPECT_EQ(error_text(std::string(">a\nA\0C\n", 7), ErrorKind::kFormat, dna),
            where(2) + "invalid character '\\x00' in sequence");
}

TEST_F(SeqioTest, StopIsValidOnlyForProtein) {
  const auto records = read_all(fasta(">p\nMKV*\n"), Options().alphabet(AlphabetKind::kProtein));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].residues.back(), kProteinStop);
  EXPECT_EQ(letters(records[0], AlphabetKind::kProtein), "MKV*");
}

TEST_F(SeqioTest, ForeignLettersBecomeUnknownAndAreCounted) {
  const std::string path = fasta(">a\nACXGT\nEj\n>b\nNNNU\n");
  SequenceReader reader(path, Options().alphabet(AlphabetKind::kDna));
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(to_letters(seq, reader.alphabet()), "ACNGTNn");  // 'j' stays soft-masked
  EXPECT_EQ(seq.soft_mask, (std::vector<MaskRun>{{6, 7}}));
  EXPECT_EQ(reader.unknown_letters(), 3u);
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(to_letters(seq, reader.alphabet()), "NNNT");  // N is a symbol, U is T in DNA
  EXPECT_EQ(reader.unknown_letters(), 3u);
}

TEST_F(SeqioTest, StrictLettersRejectsForeignLetters) {
  const ReaderOptions strict = Options().alphabet(AlphabetKind::kDna).strict();
  EXPECT_EQ(error_text(">a\nACGT\nACXGT\n", ErrorKind::kFormat, strict),
            where(3) + "letter 'X' is not in the dna alphabet");
  EXPECT_EQ(error_text(">a\nacgtj\n", ErrorKind::kFormat, strict),
            where(2) + "letter 'j' is not in the dna alphabet");
  // Every letter is a protein symbol.
  std::string all;
  for (char c = 'A'; c <= 'Z'; ++c) all += c;
  const auto records =
      read_all(fasta(">p\n" + all + "\n"), Options().alphabet(AlphabetKind::kProtein).strict());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].length(), 26u);
}

TEST_F(SeqioTest, SoftMaskRunsAreMergedAcrossLinesAndWhitespace) {
  const auto records = read_all(fasta(">a\nACgt\nacGT\nAc\n>b\nac gt\nAA\n>c\nacgt\n"),
                                Options().alphabet(AlphabetKind::kDna));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].soft_mask, (std::vector<MaskRun>{{2, 6}, {9, 10}}));
  EXPECT_EQ(to_letters(records[0], Alphabet::dna()), "ACgtacGTAc");
  EXPECT_EQ(to_letters(records[0], Alphabet::dna(), false), "ACGTACGTAC");
  EXPECT_EQ(records[1].soft_mask, (std::vector<MaskRun>{{0, 4}}));
  EXPECT_EQ(records[2].soft_mask, (std::vector<MaskRun>{{0, 4}}));
  for (const Sequence& seq : records) expect_valid_record(seq, Alphabet::dna(), SeqFormat::kFasta);
}

// ----- FASTQ ----------------------------------------------------------------------------------------

TEST_F(SeqioTest, FastqRecordsKeepQuality) {
  const std::string path = write("r.fq", "@r1 lane 1\nACGT\n+\nII#!\n@r2\nacgTN\n+r2\n@@II~\n");
  SequenceReader reader(path);
  EXPECT_EQ(reader.format(), SeqFormat::kFastq);
  EXPECT_EQ(reader.alphabet().kind(), AlphabetKind::kDna);
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "r1");
  EXPECT_EQ(seq.description, "lane 1");
  EXPECT_EQ(seq.line, 1u);
  EXPECT_EQ(to_letters(seq, reader.alphabet()), "ACGT");
  EXPECT_EQ(seq.quality, "II#!");
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "r2");
  EXPECT_EQ(seq.line, 5u);
  EXPECT_EQ(to_letters(seq, reader.alphabet()), "acgTN");
  EXPECT_EQ(seq.soft_mask, (std::vector<MaskRun>{{0, 3}}));
  EXPECT_EQ(seq.quality, "@@II~");  // a quality line may start with '@'
  EXPECT_FALSE(reader.next(seq));
}

TEST_F(SeqioTest, FastqMultiLineAndCrLf) {
  const auto records = read_all(
      write("r.fq", "\n@r1 x\r\nAC\r\nG T\r\n\r\n+r1 x\r\nI\r\n\r\n@I\r\nI\r\n\n@r2\r\nA\r\n+\r\n#"));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].line, 2u);
  EXPECT_EQ(letters(records[0], AlphabetKind::kDna), "ACGT");
  EXPECT_EQ(records[0].quality, "I@II");
  EXPECT_EQ(records[1].line, 12u);
  EXPECT_EQ(records[1].quality, "#");
}

TEST_F(SeqioTest, FastqQualityLengthMismatch) {
  // Short quality: the next header is taken for quality and overshoots; reported at the last quality line.
  EXPECT_EQ(error_text("@r1\nACGT\n+\nII\n@r2\nACGT\n+\nIIII\n", ErrorKind::kFormat),
            where(4) + "quality length 2 differs from sequence length 4 in FASTQ record 'r1'");
  EXPECT_EQ(error_text("@r1\nACGT\n+\n@r2xx\nAC\n", ErrorKind::kFormat),
            where(3) + "quality length 0 differs from sequence length 4 in FASTQ record 'r1'");
  // A short header line that fits is taken for quality: the overshoot shows up on the line after.
  EXPECT_EQ(error_text("@r1\nACGT\n+\n@r2\nAC\n", ErrorKind::kFormat),
            where(5) + "quality length 5 differs from sequence length 4 in FASTQ record 'r1'");
  // Long quality on one line.
  EXPECT_EQ(error_text("@r1\nACGT\n+\nIIIII\n", ErrorKind::kFormat),
            where(4) + "quality length 5 differs from sequence length 4 in FASTQ record 'r1'");
  // Quality cut short by the end of the file.
  EXPECT_EQ(error_text("@r1\nACGT\n+\nII\n\n", ErrorKind::kFormat),
            where(4) + "quality length 2 differs from sequence length 4 in FASTQ record 'r1'");
  // A second quality line where the record has ended: not a header.
  EXPECT_EQ(error_text("@r1\nACGT\n+\nIIII\nII\n", ErrorKind::kFormat),
            where(5) + "expected a '@' header line (start of a FASTQ record)");
}

TEST_F(SeqioTest, FastqStructureErrors) {
  EXPECT_EQ(error_text("@r1\nACGT\n", ErrorKind::kFormat),
            where(3) + "missing '+' line in FASTQ record 'r1'");
  EXPECT_EQ(error_text("@r1\nACGT\n+r2\nIIII\n", ErrorKind::kFormat),
            where(3) + "'+' line does not repeat the header of FASTQ record 'r1'");
  EXPECT_EQ(error_text("@r1\nACGT\n+\nII I\n", ErrorKind::kFormat),
            where(4) + "invalid quality character ' '");
  EXPECT_EQ(error_text("@r1\nACGT\n+\nII\x7FI\n", ErrorKind::kFormat),
            where(4) + "invalid quality character '\\x7F'");
  EXPECT_EQ(error_text("@\nACGT\n+\nIIII\n", ErrorKind::kFormat),
            where(1) + "missing sequence name after '@'");
  EXPECT_EQ(error_text("@r1\n+\n\n", ErrorKind::kInput), where(1) + "empty sequence 'r1'");
  const auto records = read_all(write("e.fq", "@r1\n+\n@r2\nA\n+\nI\n"), Options().allow_empty());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].quality, "");
  EXPECT_EQ(records[1].quality, "I");
}

// ----- format and alphabet --------------------------------------------------------------------------

TEST_F(SeqioTest, FormatIsDetectedFromContentOrForced) {
  EXPECT_EQ(SequenceReader(write("x.fq", ">a\nAC\n")).format(), SeqFormat::kFasta);
  EXPECT_EQ(SequenceReader(write("x.fa", "\n;c\n@a\nAC\n+\nII\n")).format(), SeqFormat::kFastq);
  EXPECT_EQ(SequenceReader(write("x", "junk\n>a\nAC\n")).format(), SeqFormat::kFasta);
  EXPECT_EQ(error_text(">a\nACGT\n", ErrorKind::kFormat, Options().format(SeqFormat::kFastq)),
            where(1) + "text before the first '@' header line");
  EXPECT_EQ(error_text("@a\nACGT\n+\nIIII\n", ErrorKind::kFormat, Options().format(SeqFormat::kFasta)),
            where(1) + "text before the first '>' header line");
}

TEST_F(SeqioTest, AlphabetIsGuessedFromResidueLettersOnly) {
  // Headers and quality strings are not sampled: both would look like protein.
  EXPECT_EQ(SequenceReader(fasta(">EFILPQ EFILPQEFILPQ\nACGTACGTNN\n")).alphabet().kind(),
            AlphabetKind::kDna);
  EXPECT_EQ(SequenceReader(write("q.fq", "@EFILPQ\nACGU\n+\nEFIL\n@b\nacgu\n+\nEFIL\n")).alphabet().kind(),
            AlphabetKind::kRna);
  EXPECT_EQ(SequenceReader(fasta(">a\nMKVLAAGLLLPW\n")).alphabet().kind(), AlphabetKind::kProtein);
  EXPECT_EQ(SequenceReader(fasta(">a\nacgtacgtacgt\n")).alphabet().kind(), AlphabetKind::kDna);
  // The option wins over the guess.
  SequenceReader forced(fasta(">a\nACGTACGT\n"), Options().alphabet(AlphabetKind::kProtein));
  EXPECT_EQ(forced.alphabet().kind(), AlphabetKind::kProtein);
  Sequence seq;
  ASSERT_TRUE(forced.next(seq));
  EXPECT_EQ(seq.residues[1], *Alphabet::protein().code('C'));
}

TEST_F(SeqioTest, AlphabetGuessUsesTheFirst64KiBOfLettersWhateverTheBuffer) {
  // 64 KiB of DNA letters then protein: the guess sees only the DNA. A 100 KiB header first, so the
  // look-ahead has to grow a small buffer; the result must not depend on buffer_bytes.
  std::string content = ">" + std::string(100 << 10, 'h') + "\n";
  for (int i = 0; i < 1024; ++i) content += std::string(64, "ACGT"[i % 4]) + "\n";
  for (int i = 0; i < 2048; ++i) content += "MKVLEFPQWWYYIILLDDEE\n";
  content += ">b\nACGT\n";
  const std::string path = fasta(content);
  for (const std::size_t buffer : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 20}) {
    SequenceReader reader(path, Options().buffer(buffer));
    EXPECT_EQ(reader.alphabet().kind(), AlphabetKind::kDna) << buffer;
    EXPECT_EQ(reader.bytes_read(), 0u);  // the look-ahead consumes nothing
    Sequence seq;
    ASSERT_TRUE(reader.next(seq));
    EXPECT_EQ(seq.length(), 64u * 1024 + 20u * 2048);
    EXPECT_EQ(reader.unknown_letters(), 2048u * 11);  // L E F P Q I I L L E E are not IUPAC codes
  }
}

TEST_F(SeqioTest, AlphabetLookAheadStopsAfter16MiB) {
  // A 17 MiB header: the look-ahead gives up before the sequence, so nothing is sampled (protein).
  const std::string path = fasta(">big " + std::string(17 << 20, 'd') + "\nACGTACGT\n>b\nACGT\n");
  SequenceReader reader(path, Options().buffer(1000));
  EXPECT_EQ(reader.alphabet().kind(), AlphabetKind::kProtein);
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.description.size(), std::size_t{17} << 20);
  EXPECT_EQ(to_letters(seq, reader.alphabet()), "ACGTACGT");
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.line, 3u);
}

// ----- gzip, stdin, I/O errors ----------------------------------------------------------------------

constexpr std::string_view kMixed = ">a one\nACGTNacgtn\nAC\n>b\nGGGG\n>c two\nTTTTAAAACCCCgggg\n";

TEST_F(SeqioTest, GzipIsDetectedByContentNotName) {
  const ReadResult plain = read_result(write("plain.gz", kMixed), {});
  const std::string gz = write("packed.fa", gzip(kMixed));
  SequenceReader reader(gz);
  EXPECT_TRUE(reader.gzipped());
  EXPECT_FALSE(SequenceReader(write("plain2.gz", kMixed)).gzipped());
  const ReadResult packed = read_result(gz, {});
  EXPECT_EQ(packed.records.size(), 3u);
  expect_same_result(plain, packed);
  EXPECT_EQ(packed.bytes, kMixed.size());
}

TEST_F(SeqioTest, GzipMultiMember) {
  // Split inside a line of a record, plus an empty member.
  const std::string_view text = kMixed;
  const std::string packed =
      gzip(text.substr(0, 9)) + gzip("") + gzip(text.substr(9, 20)) + gzip(text.substr(29));
  const ReadResult r = read_result(write("multi.gz", packed), Options().buffer(5));
  expect_same_result(read_result(write("plain.fa", kMixed), {}), r);
}

TEST_F(SeqioTest, TruncatedGzipIsAnError) {
  std::string content;
  for (int i = 0; i < 2000; ++i)
    content += ">s" + std::to_string(i) + "\nACGTTGCAACGTAGCTAGCTAGCTAGGATCGATCGAT\n";
  const std::string packed = gzip(content);
  for (const std::size_t cut : {packed.size() - 1, packed.size() - 8, packed.size() / 2, std::size_t{11}}) {
    const std::string path = write("cut.gz", std::string_view(packed).substr(0, cut));
    const Error e = error_from([&] { read_all(path); });
    EXPECT_EQ(e.kind(), ErrorKind::kFormat);
    EXPECT_EQ(std::string(e.what()), path + ": truncated gzip stream (unexpected end of file)") << cut;
  }
}

TEST_F(SeqioTest, CorruptGzipIsAnError) {
  std::string content;
  for (int i = 0; i < 2000; ++i)
    content += ">s" + std::to_string(i) + "\nACGTTGCAACGTAGCTAGCTAGCTAGGATCGATCGAT\n";
  std::string packed = gzip(content);
  // A wrong CRC-32 in the trailer.
  std::string bad_crc = packed;
  bad_crc[bad_crc.size() - 8] = static_cast<char>(bad_crc[bad_crc.size() - 8] ^ 0x55);
  const std::string crc_path = write("crc.gz", bad_crc);
  Error e = error_from([&] { read_all(crc_path); });
  EXPECT_EQ(e.kind(), ErrorKind::kFormat);
  EXPECT_EQ(std::string(e.what()), crc_path + ": corrupt gzip stream: incorrect data check");
  // Damaged deflate data.
  std::string bad_data = packed;
  for (std::size_t i = 20; i < 40; ++i) bad_data[i] = static_cast<char>(0xFF);
  const std::string data_path = write("data.gz", bad_data);
  e = error_from([&] { read_all(data_path); });
  EXPECT_EQ(e.kind(), ErrorKind::kFormat);
  EXPECT_EQ(std::string(e.what()).rfind(data_path + ": corrupt gzip stream: ", 0), 0u) << e.what();
  // Bytes after the last member that do not start another one.
  const std::string trailing_path = write("trail.gz", packed + "junk");
  e = error_from([&] { read_all(trailing_path); });
  EXPECT_EQ(std::string(e.what()), trailing_path + ": unexpected data after the end of the gzip stream");
  // A header that is not gzip's after the magic bytes.
  const std::string header_path = write("hdr.gz", std::string("\x1f\x8b\x01\x00\x00\x00", 6));
  e = error_from([&] { read_all(header_path); });
  EXPECT_EQ(std::string(e.what()).rfind(header_path + ": corrupt gzip stream: ", 0), 0u) << e.what();
}

// Reads "-" with fd 0 redirected to path.
ReadResult read_stdin(const std::string& path) {
  const int saved = ::dup(STDIN_FILENO);
  const int fd = ::open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  ReadResult r = read_result("-", Options().buffer(7));
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  return r;
}

TEST_F(SeqioTest, DashReadsStdinPlainOrGzip) {
  const ReadResult expected = read_result(write("plain.fa", kMixed), Options().buffer(7));
  expect_same_result(expected, read_stdin(write("stdin.fa", kMixed)));
  expect_same_result(expected, read_stdin(write("stdin.gz", gzip(kMixed))));
  const ReadResult bad = read_stdin(write("bad.fa", ">a\nAC-\n"));
  EXPECT_EQ(bad.error, "-:2: invalid character '-' in sequence");
}

TEST_F(SeqioTest, UnreadableInputIsAnIoError) {
  const std::string missing = (dir_ / "missing.fa").string();
  Error e = error_from([&] { SequenceReader reader(missing); });
  EXPECT_EQ(e.kind(), ErrorKind::kIo);
  EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
  e = error_from([&] { read_all(dir_.string()); });
  EXPECT_EQ(e.kind(), ErrorKind::kIo);
  EXPECT_EQ(std::string(e.what()), dir_.string() + ": cannot read: Is a directory");
}

// ----- counters, moves, buffer sizes ----------------------------------------------------------------

TEST_F(SeqioTest, CountersTrackProgress) {
  const std::string content = ">a\nACXT\n\n>b\nGG\n";
  SequenceReader reader(fasta(content), Options().alphabet(AlphabetKind::kDna));
  EXPECT_EQ(reader.bytes_read(), 0u);
  EXPECT_EQ(reader.line(), 1u);
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(reader.records(), 1u);
  EXPECT_EQ(reader.residues(), 4u);
  EXPECT_EQ(reader.unknown_letters(), 1u);
  EXPECT_EQ(reader.bytes_read(), 9u);  // up to the next header
  EXPECT_EQ(reader.line(), 4u);
  ASSERT_TRUE(reader.next(seq));
  EXPECT_FALSE(reader.next(seq));
  EXPECT_EQ(reader.records(), 2u);
  EXPECT_EQ(reader.residues(), 6u);
  EXPECT_EQ(reader.bytes_read(), content.size());
  EXPECT_EQ(reader.line(), 6u);
}

TEST_F(SeqioTest, MovedReaderContinues) {
  SequenceReader first(fasta(kMixed), Options().buffer(4));
  Sequence seq;
  ASSERT_TRUE(first.next(seq));
  SequenceReader second(std::move(first));
  ASSERT_TRUE(second.next(seq));
  EXPECT_EQ(seq.name, "b");
  SequenceReader third(fasta(">z\nA\n"));
  third = std::move(second);
  ASSERT_TRUE(third.next(seq));
  EXPECT_EQ(seq.name, "c");
  EXPECT_EQ(third.records(), 3u);
}

// Inputs that stress line and buffer boundaries, each read through many buffer sizes.
const std::vector<std::string>& boundary_inputs() {
  static const std::vector<std::string> inputs = {
      std::string(kMixed),
      ";c\r\n\r\n>a d\r\nAC gt\r\nac\r\n\r\n>b  \tx y \r\nNNNN\r\nACGT",
      ">p desc\nMKVLA*\nmkvla\nXXBZJOU\n>q\nwwwWWW\n",
      "@r1 a\nACGT\nac\n+\nIIII\n@I\n@r2\nAC\n+r2\nII\n\n\n@r3\nGGG\n+\n!!!",
      "@r1\nACGT\n+\nII\n@r2\nACGT\n+\nIIII\n",
      ">a\nACGT\n>b\n\n>c\nAA\n",
      ">a\nAC\nAC-\n",
      ">a\nACGTJ\n",
      ">" + std::string(300, 'n') + " " + std::string(200, 'd') + "\n" + std::string(1000, 'a') + "C\n",
  };
  return inputs;
}

TEST_F(SeqioTest, ResultsDoNotDependOnBufferSize) {
  const std::vector<ReaderOptions> option_sets = {Options(), Options().strict(), Options().allow_empty(),
                                                  Options().alphabet(AlphabetKind::kDna)};
  for (std::size_t i = 0; i < boundary_inputs().size(); ++i) {
    const std::string plain = write(std::to_string(i) + ".txt", boundary_inputs()[i]);
    const std::string packed = write(std::to_string(i) + ".gz", gzip(boundary_inputs()[i]));
    for (const ReaderOptions& base : option_sets) {
      const ReadResult expected = read_result(plain, base);
      for (const std::size_t buffer : {0, 1, 2, 3, 5, 8, 13, 64, 4096}) {
        SCOPED_TRACE("input " + std::to_string(i) + ", buffer " + std::to_string(buffer));
        ReaderOptions options = base;
        options.buffer_bytes = buffer;
        expect_same_result(expected, read_result(plain, options));
        ReadResult from_gzip = read_result(packed, options);
        if (!expected.error.empty()) from_gzip.error.replace(0, packed.size(), plain);
        expect_same_result(expected, from_gzip);
      }
    }
  }
}

TEST_F(SeqioTest, SingleLineSequenceOf120Mbp) {
  constexpr std::size_t kLength = 120'000'000;
  // A lower-case run across the 67th 1 MiB buffer edge (the header line is 18 bytes).
  constexpr std::size_t kMaskBegin = 67 * (std::size_t{1} << 20) - 18 - 50, kMaskEnd = kMaskBegin + 100;
  const fs::path path = dir_ / "long.fa";
  {
    std::ofstream out(path, std::ios::binary);
    out << ">chrLong one line\n";
    std::string chunk(1 << 20, 'A');
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = "ACGT"[i % 4];
    for (std::size_t done = 0; done < kLength;) {
      std::string piece = chunk.substr(0, std::min(chunk.size(), kLength - done));
      for (std::size_t i = 0; i < piece.size(); ++i) {
        if (done + i >= kMaskBegin && done + i < kMaskEnd) piece[i] = static_cast<char>(piece[i] | 0x20);
      }
      out << piece;
      done += piece.size();
    }
    out << "\r\n>tail\nGATTACA\n";
  }
  SequenceReader reader(path.string());
  EXPECT_EQ(reader.alphabet().kind(), AlphabetKind::kDna);
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "chrLong");
  ASSERT_EQ(seq.length(), kLength);
  for (const std::size_t i : {std::size_t{0}, std::size_t{1}, kMaskBegin, kLength / 2 + 3, kLength - 1}) {
    EXPECT_EQ(seq.residues[i], i % 4) << i;  // A C G T are codes 0 1 2 3
  }
  EXPECT_EQ(seq.soft_mask, (std::vector<MaskRun>{{kMaskBegin, kMaskEnd}}));
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "tail");
  EXPECT_EQ(seq.line, 3u);
  EXPECT_FALSE(reader.next(seq));
  EXPECT_EQ(reader.bytes_read(), fs::file_size(path));
}

// ----- real data (counts from esl-seqstat) ----------------------------------------------------------

struct Summary {
  std::uint64_t records = 0, residues = 0, min = UINT64_MAX, max = 0, masked = 0;
  std::uint64_t checksum = 0;  // order-dependent hash of names and residues
};

Summary summarize(const std::string& path, AlphabetKind expected_alphabet) {
  SequenceReader reader(path);
  EXPECT_EQ(reader.alphabet().kind(), expected_alphabet);
  Summary s;
  Sequence seq;
  while (reader.next(seq)) {
    expect_valid_record(seq, reader.alphabet(), reader.format());
    ++s.records;
    s.residues += seq.length();
    s.min = std::min<std::uint64_t>(s.min, seq.length());
    s.max = std::max<std::uint64_t>(s.max, seq.length());
    for (const MaskRun& run : seq.soft_mask) s.masked += run.end - run.begin;
    for (const char c : seq.name) s.checksum = s.checksum * 1099511628211ULL + static_cast<unsigned char>(c);
    for (const std::uint8_t r : seq.residues) s.checksum = s.checksum * 1099511628211ULL + r;
  }
  EXPECT_EQ(reader.records(), s.records);
  EXPECT_EQ(reader.residues(), s.residues);
  if (!reader.gzipped()) {
    EXPECT_EQ(reader.bytes_read(), fs::file_size(path));
  }
  return s;
}

TEST_F(SeqioTest, RealProteinDatabase) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::string path = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  const Summary s = summarize(path, AlphabetKind::kProtein);
  EXPECT_EQ(s.records, 20000u);
  EXPECT_EQ(s.residues, 9055569u);
  EXPECT_EQ(s.min, 7u);
  EXPECT_EQ(s.max, 8081u);
  EXPECT_EQ(s.masked, 0u);
  SequenceReader reader(path);
  Sequence seq;
  ASSERT_TRUE(reader.next(seq));
  EXPECT_EQ(seq.name, "tr|W0FSK4|W0FSK4_9FLAV");
  EXPECT_EQ(seq.description, "Genome polyprotein (Fragment) OS=Dengue virus 3 PE=4 SV=1 Split=0 ");
  EXPECT_EQ(to_letters(seq, reader.alphabet()).substr(0, 12), "MNNQRKKTGKPS");

  // The same file gzipped (in two members) reads the same.
  std::string text(fs::file_size(path), '\0');
  std::ifstream(path, std::ios::binary).read(text.data(), static_cast<std::streamsize>(text.size()));
  const std::string_view view = text;
  const std::string gz =
      write("db.fa.gz", gzip(view.substr(0, 5'000'001), 1) + gzip(view.substr(5'000'001), 1));
  const Summary z = summarize(gz, AlphabetKind::kProtein);
  EXPECT_EQ(z.records, s.records);
  EXPECT_EQ(z.residues, s.residues);
  EXPECT_EQ(z.checksum, s.checksum);
}

TEST_F(SeqioTest, RealChromosome) {
  WS_REQUIRE_TESTDATA("dna/ce2_chrX.fa");
  const Summary s = summarize((test::testdata_dir() / "dna/ce2_chrX.fa").string(), AlphabetKind::kDna);
  EXPECT_EQ(s.records, 1u);
  EXPECT_EQ(s.residues, 17718849u);
  EXPECT_EQ(s.masked, 0u);  // this file is all upper case
}

TEST_F(SeqioTest, RealLowerCaseAmplicons) {
  WS_REQUIRE_TESTDATA("dna/BioMarKs50k.fa");
  const Summary s = summarize((test::testdata_dir() / "dna/BioMarKs50k.fa").string(), AlphabetKind::kDna);
  EXPECT_EQ(s.records, 50000u);
  EXPECT_EQ(s.residues, 19073606u);
  EXPECT_EQ(s.min, 2u);
  EXPECT_EQ(s.max, 497u);
  EXPECT_EQ(s.masked, s.residues);  // all lower case: one run per record
}

// ----- fuzz regressions and corpus -----------------------------------------------------------------

// fuzz_seqio found: a gzip member with a bad CRC, after text a FASTQ parser rejects. Which error comes
// first depends on how far the inflater runs ahead of the parser; there is an error either way.
TEST_F(SeqioTest, FuzzRegressionGzipCrcErrorAfterParseError) {
  constexpr std::string_view kInput(
      "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xb3\xcb\x35\xe4\x72\x74\x06\x00\xfe\x00\xa7\x38\x06\x00"
      "\x00\x00\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x73\x0f\xe1\xb2\xcb\x35\xe2\x0a\x09\xe1\x02\x00"
      "\x36\x46\x4f\x8c\x0a\x00\x00\x00",
      56);
  const std::string path = write("crc.gz", kInput);
  for (const std::size_t buffer : {std::size_t{3}, std::size_t{1} << 20}) {
    const ReadResult r =
        read_result(path, Options().alphabet(AlphabetKind::kDna).format(SeqFormat::kFastq).buffer(buffer));
    EXPECT_TRUE(r.records.empty());
    EXPECT_TRUE(r.error == path + ": corrupt gzip stream: incorrect data check" ||
                r.error == path + ":1: text before the first '@' header line")
        << r.error;
  }
}

// Every corpus input, read as fuzz_seqio reads it: only warpsearch::Error may escape, records are
// valid, and a 3-byte buffer gives the same result as the default one, except that a damaged gzip stream
// may be reported instead of a parse error further on, or the other way round (see fuzz_seqio.cpp).
TEST_F(SeqioTest, FuzzCorpusReplays) {
  const fs::path corpus = test::source_dir() / "fuzz/corpus/seqio";
  ASSERT_TRUE(fs::is_directory(corpus)) << corpus;
  std::size_t inputs = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(corpus)) {
    SCOPED_TRACE(entry.path().filename().string());
    ++inputs;
    const std::string path = entry.path().string();
    for (const ReaderOptions& options :
         std::vector<ReaderOptions>{Options(), Options().strict().allow_empty(),
                                    Options().alphabet(AlphabetKind::kRna).format(SeqFormat::kFastq)}) {
      const ReadResult r = read_result(path, options);
      for (const Sequence& seq : r.records) expect_valid_record(seq, Alphabet(r.alphabet), r.format);
      ReaderOptions tiny = options;
      tiny.buffer_bytes = 3;
      const ReadResult small = read_result(path, tiny);
      const auto gzip_error = [](const std::string& e) { return e.find("gzip stream") != std::string::npos; };
      if (gzip_error(r.error) || gzip_error(small.error)) {
        EXPECT_FALSE(r.error.empty());
        EXPECT_FALSE(small.error.empty());
      } else {
        expect_same_result(r, small);
      }
    }
  }
  EXPECT_GE(inputs, 5u);
}

}  // namespace
}  // namespace warpsearch
