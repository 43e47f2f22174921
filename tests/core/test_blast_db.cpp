// test_blast_db.cpp: BlastDb / SequenceSource on BLAST+ protein databases built by makeblastdb 2.12 (format
// 5 and 4, with and without -parse_seqids, multi-volume, alias files): residues bit for bit against the
// FASTA input read by SequenceReader, titles against the FASTA headers, sseqid / sacc / stitle / the
// pairwise-report line against blastp's own output, OID order, titles and residues against blastdbcmd,
// the alias rules (order, nesting, restricted aliases, MIN_SEQ_LENGTH / STATS keys), every kind of
// damaged or missing file, and the fuzz corpus replay (fuzz/corpus/blast_db through
// fuzz/blast_db_harness.hpp). Skipped when makeblastdb is not installed (CI installs ncbi-blast+).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../../fuzz/blast_db_harness.hpp"
#include "core/blast_db.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::write_file;

class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("test_blast_db") {}
};

bool have_tool(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

#define REQUIRE_BLAST_TOOLS()                                                 \
  do {                                                                        \
    if (!have_tool("makeblastdb") || !have_tool("blastdbcmd"))                \
      GTEST_SKIP() << "makeblastdb / blastdbcmd (ncbi-blast+) not installed"; \
  } while (0)

std::string quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; returns its stdout, or fails the test on a non-zero exit.
std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return out;
  }
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  return out;
}

// makeblastdb -dbtype prot; extra: "-parse_seqids", "-blastdb_version 4", "-max_file_sz N".
void makeblastdb(const std::string& in, const std::string& out, const std::string& extra = "",
                 const std::string& dbtype = "prot") {
  run("makeblastdb -in " + quote(in) + " -dbtype " + dbtype + " -out " + quote(out) + " " + extra +
      " >/dev/null");
  ASSERT_TRUE(fs::exists(out + (dbtype == "prot" ? ".pin" : ".nin")) ||
              fs::exists(out + (dbtype == "prot" ? ".pal" : ".nal")))
      << out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t p = 0;
  while (p < text.size()) {
    const std::size_t e = text.find('\n', p);
    out.push_back(text.substr(p, e == std::string::npos ? std::string::npos : e - p));
    if (e == std::string::npos) break;
    p = e + 1;
  }
  return out;
}

// The header lines (after '>') of a FASTA file, in order.
std::vector<std::string> fasta_headers(const std::string& path) {
  std::vector<std::string> out;
  for (const std::string& line : split_lines(read_file(path))) {
    if (!line.empty() && line[0] == '>') out.push_back(line.substr(1));
  }
  return out;
}

std::vector<Sequence> read_fasta(const std::string& path) {
  ReaderOptions options;
  options.alphabet = AlphabetKind::kProtein;
  SequenceReader reader(path, options);
  std::vector<Sequence> out;
  Sequence seq;
  while (reader.next(seq)) out.push_back(seq);
  return out;
}

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

std::string random_protein(std::mt19937_64& rng, std::size_t length, std::string_view letters) {
  std::string s;
  for (std::size_t i = 0; i < length; ++i) s += letters[rng() % letters.size()];
  return s;
}

constexpr std::string_view kStandard = "ACDEFGHIKLMNPQRSTVWY";

// Headers that makeblastdb accepts with and without -parse_seqids: every Seq-id type it parses,
// multi-id headers, empty / double-spaced / trailing-space / long titles.
std::vector<std::string> id_headers() {
  std::vector<std::string> h = {
      "sp|P69905|HBA_HUMAN Hemoglobin subunit alpha OS=Homo sapiens",
      "gi|12345|ref|NP_000509.1| hemoglobin beta",
      "myseq1 plain local id  with  double  spaces",
      "lcl|foo bar",
      "gnl|db|ident1 general id desc",
      "XP_123456.1 plain accession desc here",
      "noDesc",
      "pdb|1ABC|A chain A",
      "tr|W0FSK4|W0FSK4_9FLAV Genome polyprotein (Fragment) OS=Dengue virus 3 PE=4 SV=1 Split=0 ",
      "emb|CAA12345.1| something",
      "1234 numeric id",
      "abc|def unknown prefix",
      "gnl|db|x|ref|NP_1.1| ref beats general",
      "lcl|a|gnl|b|c local beats general",
      "emb|X12345.1|NAME embl with name",
      "sp|P12345.2| swissprot with version",
      "pir||S12345 pir name only",
      "prf||1234A prf",
      "pat|US|5123|1 patent",
      "gnl|db|123 numeric tag",
      "lcl|77 numeric local",
      "gi|66|gb|AAA12345.1| gi and genbank",
      "ref|NP_9| refseq without version",
      "tpg|DAA12345.1| third party",
      "pdb|2XYZ|BB two-letter chain",
      "gb|AAB12345.2|LOCUS1 genbank with locus",
      "dbj|BAA12345.1| ddbj",
      "emb|X22345|gb|AAA22345.1| versioned genbank beats embl",
      "ref|NP_000001.1|sp|P22345| swissprot beats refseq",
      "pat|US|6123|1|gnl|db|q patent beats general",
      "lcl|q2|pat|US|7123|1 first of equal scores",
      "long " + std::string(300, 'x') + " title " + std::string(100, 'y'),
  };
  for (int i = 0; i < 6; ++i) h.push_back(fmt::format("ws{} generated record {}", i, i * 7));
  // Last: makeblastdb 2.12 -parse_seqids aborts ("Input id list not in ascending oid order") when a record
  // whose only id is a gi is followed by others.
  h.push_back("gi|55 gi only");
  return h;
}

// Writes a FASTA file of distinct random standard-residue sequences (30..229 residues) under `headers`.
void write_records(const std::string& path, const std::vector<std::string>& headers, std::uint64_t seed,
                   std::string_view letters = kStandard) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (const std::string& h : headers) {
    const std::string seq = random_protein(rng, 30 + rng() % 200, letters);
    text += ">" + h + "\n";
    for (std::size_t p = 0; p < seq.size(); p += 60) text += seq.substr(p, 60) + "\n";
  }
  write_file(path, text);
}

// The title makeblastdb stores with -parse_seqids: the header after its id word and one space.
std::string parsed_title(const std::string& header) {
  const std::size_t space = header.find(' ');
  return space == std::string::npos ? std::string() : header.substr(space + 1);
}

// Residues and titles of every OID against the FASTA input.
void expect_matches_fasta(const BlastDb& db, const std::string& fasta, bool parse_seqids) {
  const std::vector<Sequence> records = read_fasta(fasta);
  const std::vector<std::string> headers = fasta_headers(fasta);
  ASSERT_EQ(db.size(), records.size());
  std::uint64_t total = 0, longest = 0, shortest = UINT64_MAX;
  std::vector<std::uint8_t> codes;
  Sequence seq;
  for (std::uint64_t oid = 0; oid < db.size(); ++oid) {
    const Sequence& e = records[oid];
    db.residues(oid, codes);
    ASSERT_EQ(codes, e.residues) << oid;
    ASSERT_EQ(db.length(oid), e.residues.size());
    const std::vector<BlastDefline> lines = db.deflines(oid);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].has_ordinal_id(), !parse_seqids);
    const std::string title = parse_seqids ? parsed_title(headers[oid]) : headers[oid];
    EXPECT_EQ(lines[0].title, title) << oid;
    db.to_sequence(oid, seq);
    EXPECT_EQ(seq.residues, e.residues);
    EXPECT_TRUE(seq.soft_mask.empty());
    EXPECT_EQ(seq.name, lines[0].seqid());
    if (!parse_seqids) {
      // "name description" is the header (these headers have no leading spaces).
      EXPECT_EQ(seq.description.empty() ? seq.name : seq.name + " " + seq.description, headers[oid]) << oid;
      EXPECT_EQ(seq.name, e.name) << oid;
    } else {
      EXPECT_EQ(seq.description, title);
    }
    total += e.residues.size();
    longest = std::max<std::uint64_t>(longest, e.residues.size());
    shortest = std::min<std::uint64_t>(shortest, e.residues.size());
  }
  EXPECT_EQ(db.total_residues(), total);
  EXPECT_EQ(db.max_length(), longest);
  EXPECT_EQ(db.min_length(), shortest);
  EXPECT_EQ(db.stats_total_length(), total);
  EXPECT_EQ(db.stats_num_seqs(), db.size());
  EXPECT_EQ(db.cutoff_min_length(), 10);
  EXPECT_NO_THROW(db.verify());
}

// OID order, titles, lengths and residues against blastdbcmd -entry all.
void expect_matches_blastdbcmd(const BlastDb& db, const std::string& name) {
  const std::vector<std::string> lines =
      split_lines(run("blastdbcmd -db " + quote(name) + " -entry all -outfmt '%o|%l|%s|%t'"));
  ASSERT_EQ(lines.size(), db.size());
  const Alphabet protein = Alphabet::protein();
  std::vector<std::uint8_t> codes;
  for (std::uint64_t oid = 0; oid < db.size(); ++oid) {
    const std::string& line = lines[oid];
    const std::size_t a = line.find('|'), b = line.find('|', a + 1), c = line.find('|', b + 1);
    ASSERT_NE(c, std::string::npos);
    EXPECT_EQ(line.substr(0, a), std::to_string(oid));
    EXPECT_EQ(line.substr(a + 1, b - a - 1), std::to_string(db.length(oid)));
    db.residues(oid, codes);
    std::string letters;
    for (const std::uint8_t code : codes) letters += protein.symbol(code);
    // blastdbcmd 2.12 prints '*' (NCBIstdaa 25) as the byte 0xFF.
    std::string printed = line.substr(b + 1, c - b - 1);
    std::replace(printed.begin(), printed.end(), '\xff', '*');
    EXPECT_EQ(printed, letters) << oid;
    EXPECT_EQ(line.substr(c + 1), db.deflines(oid).front().title) << oid;
  }
}

struct BlastpRow {
  std::string sseqid, sacc, stitle;
};

// blastp with query i named q<i> = OID i's residues: the self hit of every query (100% identity over both
// whole lengths; the sequences are distinct) gives that OID's sseqid / sacc / stitle. Also returns the
// pairwise report's defline texts (">..." up to "Length=", wrapped lines joined).
std::map<std::uint64_t, BlastpRow> blastp_self_hits(const BlastDb& db, const std::string& name,
                                                    const std::string& dir,
                                                    std::set<std::string>* report_lines) {
  std::string queries;
  std::vector<std::uint8_t> codes;
  const Alphabet protein = Alphabet::protein();
  for (std::uint64_t oid = 0; oid < db.size(); ++oid) {
    db.residues(oid, codes);
    queries += fmt::format(">q{}\n", oid);
    for (const std::uint8_t c : codes) queries += protein.symbol(c);
    queries += "\n";
  }
  const std::string qpath = dir + "/queries.fa";
  write_file(qpath, queries);
  const std::string common = "blastp -query " + quote(qpath) + " -db " + quote(name) +
                             " -comp_based_stats 0 -max_target_seqs 1000 -evalue 1e-5";
  std::map<std::uint64_t, BlastpRow> rows;
  for (const std::string& line : split_lines(
           run(common + " -max_hsps 1 -outfmt '6 qseqid pident length qlen slen sseqid sacc stitle'"))) {
    std::vector<std::string> f;
    std::size_t p = 0;
    for (int k = 0; k < 7; ++k) {
      const std::size_t t = line.find('\t', p);
      f.push_back(line.substr(p, t - p));
      p = t + 1;
    }
    f.push_back(line.substr(p));
    if (f[1] != "100.000" || f[2] != f[3] || f[3] != f[4]) continue;
    rows[std::stoull(f[0].substr(1))] = {f[5], f[6], f[7]};
  }
  if (report_lines != nullptr) {
    const std::vector<std::string> out = split_lines(run(common));
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i].empty() || out[i][0] != '>') continue;
      std::string text = out[i].substr(1);
      for (++i; i < out.size() && !out[i].starts_with("Length="); ++i) text += out[i];
      report_lines->insert(text);
    }
  }
  return rows;
}

void expect_deflines_match_blastp(const BlastDb& db, const std::string& name, const std::string& dir) {
  if (!have_tool("blastp")) return;
  std::set<std::string> report;
  const std::map<std::uint64_t, BlastpRow> rows = blastp_self_hits(db, name, dir, &report);
  ASSERT_EQ(rows.size(), db.size()) << "every query finds itself";
  std::set<std::string> expected_report;
  Sequence seq;
  for (const auto& [oid, row] : rows) {
    const BlastDefline line = db.deflines(oid).front();
    EXPECT_EQ(line.seqid(), row.sseqid) << oid;
    EXPECT_EQ(line.accession(), row.sacc) << oid;
    EXPECT_EQ(line.tabular_title(), row.stitle) << oid;
    db.to_sequence(oid, seq);
    EXPECT_EQ(seq.name, row.sseqid) << oid;
    if (line.has_ordinal_id() && !line.title.empty() && line.title.front() != ' ') {
      EXPECT_EQ(seq.description.empty() ? seq.name : seq.name + " " + seq.description, row.stitle) << oid;
    }
    expected_report.insert(line.report_line());
  }
  EXPECT_EQ(report, expected_report);
}

// ---------------------------------------------------------------------------------------------------

struct Variant {
  const char* label;
  const char* args;
  bool parse_seqids;
  std::uint32_t version;
};

class BlastDbVariants : public ::testing::TestWithParam<Variant> {};

TEST_P(BlastDbVariants, ResiduesTitlesAndBlastpDeflines) {
  REQUIRE_BLAST_TOOLS();
  const Variant& v = GetParam();
  TempDir dir;
  write_records(dir / "in.fa", id_headers(), 11);
  makeblastdb(dir / "in.fa", dir / "db", v.args);
  const BlastDb db = BlastDb::open(dir / "db");
  EXPECT_EQ(db.format_version(), v.version);
  EXPECT_EQ(db.volumes().size(), 1u);
  EXPECT_EQ(db.title(), dir / "in.fa") << "makeblastdb's default title is the input path";
  EXPECT_TRUE(db.date().find(", 20") != std::string::npos) << db.date();
  expect_matches_fasta(db, dir / "in.fa", v.parse_seqids);
  expect_matches_blastdbcmd(db, dir / "db");
  expect_deflines_match_blastp(db, dir / "db", dir.path().string());
}

INSTANTIATE_TEST_SUITE_P(
    MakeBlastDb, BlastDbVariants,
    ::testing::Values(Variant{"v5", "", false, 5}, Variant{"v4", "-blastdb_version 4", false, 4},
                      Variant{"v5_parse_seqids", "-parse_seqids", true, 5},
                      Variant{"v4_parse_seqids", "-parse_seqids -blastdb_version 4", true, 4}),
    [](const auto& param_info) { return std::string(param_info.param.label); });

// Titles without -parse_seqids that are not "word rest": empty, leading / only spaces, tabs, control
// characters, ^A-joined headers; letters of the whole alphabet and lowercase.
TEST(BlastDb, OddTitlesAndAllLettersAgreeWithBlastp) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  const std::vector<std::string> headers = {"  leading  two  spaces ",
                                            "",
                                            "   ",
                                            "t1\ta\t\tb",
                                            "x  y",
                                            "dup",
                                            "dup",
                                            "ctrl\x0b"
                                            "char",
                                            "first\x01second title",
                                            "plain"};
  write_records(dir / "in.fa", headers, 5);
  makeblastdb(dir / "in.fa", dir / "db");
  const BlastDb db = BlastDb::open(dir / "db");
  ASSERT_EQ(db.size(), headers.size());
  EXPECT_EQ(db.deflines(3).front().title, "t1   a      b") << "makeblastdb: tab -> 3 spaces";
  EXPECT_EQ(db.deflines(7).front().title, "ctrl#char") << "makeblastdb: control character -> '#'";
  Sequence seq;
  db.to_sequence(1, seq);
  EXPECT_EQ(seq.name, "unnamed");
  db.to_sequence(2, seq);
  EXPECT_EQ(seq.name, "gnl|BL_ORD_ID|2");
  db.to_sequence(0, seq);
  EXPECT_EQ(seq.name, "leading");
  EXPECT_EQ(seq.description, " two  spaces ");
  expect_matches_blastdbcmd(db, dir / "db");
  expect_deflines_match_blastp(db, dir / "db", dir.path().string());

  // Every letter: NCBIstdaa holds all 26 letters and '*'; lowercase is stored upper case. (Mostly standard
  // residues: makeblastdb refuses input that its format guesser does not take for protein FASTA.)
  write_records(
      dir / "all.fa", {"a", "b", "c", "d"}, 9,
      "ACDEFGHIKLMNPQRSTVWYACDEFGHIKLMNPQRSTVWYACDEFGHIKLMNPQRSTVWYACDEFGHIKLMNPQRSTVWYBJZOUX*acdefxbzjou");
  makeblastdb(dir / "all.fa", dir / "all");
  const BlastDb all = BlastDb::open(dir / "all");
  expect_matches_fasta(all, dir / "all.fa", false);
  expect_matches_blastdbcmd(all, dir / "all");
  for (std::uint8_t raw = 0; raw < 28; ++raw) {
    const std::uint8_t code = ncbistdaa_to_code(raw);
    if (raw == 0) {
      EXPECT_EQ(code, kCodeInvalid);
    } else {
      ASSERT_LT(code, kProteinCodes);
      EXPECT_EQ(Alphabet::protein().symbol(code), std::string_view("-ABCDEFGHIKLMNPQRSTVWXYZU*OJ")[raw]);
    }
  }
  EXPECT_EQ(ncbistdaa_to_code(28), kCodeInvalid);
}

TEST(BlastDb, MultiVolumeV5AndV4InFastaOrder) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  std::vector<std::string> headers;
  for (int i = 0; i < 600; ++i) headers.push_back(fmt::format("mv{} multi-volume record {}", i, i));
  write_records(dir / "in.fa", headers, 3);
  for (const std::string version : {"5", "4"}) {
    const std::string name = dir / ("mv" + version);
    makeblastdb(dir / "in.fa", name, "-max_file_sz 20000 -blastdb_version " + version);
    ASSERT_TRUE(fs::exists(name + ".pal"));
    const BlastDb db = BlastDb::open(name);
    EXPECT_GT(db.volumes().size(), 3u);
    EXPECT_EQ(db.alias_files().size(), 1u);
    std::uint64_t first = 0;
    for (const BlastDbVolume& vol : db.volumes()) {
      EXPECT_EQ(vol.first_oid, first);
      EXPECT_EQ(vol.format_version, std::stoul(version));
      first += vol.sequences;
    }
    expect_matches_fasta(db, dir / "in.fa", false);
    expect_matches_blastdbcmd(db, name);
    // SequenceSource reads it by name, in OID order.
    SequenceSource source = SequenceSource::open(name);
    ASSERT_NE(source.blast_db(), nullptr);
    EXPECT_FALSE(source.is_packed());
    EXPECT_EQ(source.reader(), nullptr);
    const std::vector<Sequence> records = read_fasta(dir / "in.fa");
    Sequence seq;
    std::uint64_t n = 0;
    while (source.next(seq)) {
      ASSERT_LT(n, records.size());
      EXPECT_EQ(seq.residues, records[n].residues);
      EXPECT_EQ(seq.name, records[n].name);
      EXPECT_EQ(seq.description, records[n].description);
      ++n;
    }
    EXPECT_EQ(n, records.size());
    EXPECT_EQ(source.records(), n);
    EXPECT_EQ(source.alphabet().kind(), AlphabetKind::kProtein);
  }
}

// Alias files written by hand: any DBLIST order and duplicates give CSeqDB's sorted volume order, relative
// paths resolve against the alias file, aliases nest, several names can be given at once, $BLASTDB is
// searched; the TITLE / STATS / MIN_SEQ_LENGTH keys follow CSeqDB's walkers.
TEST(BlastDb, AliasFilesResolveAndOrderAsBlast) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  std::vector<std::string> headers;
  for (int i = 0; i < 600; ++i) headers.push_back(fmt::format("al{} alias record", i));
  write_records(dir / "in.fa", headers, 4);
  fs::create_directory(dir / "vols");
  makeblastdb(dir / "in.fa", dir / "vols/mv", "-max_file_sz 20000");
  const BlastDb plain = BlastDb::open(dir / "vols/mv");
  ASSERT_GE(plain.volumes().size(), 3u);
  std::string reversed;
  for (std::size_t i = plain.volumes().size(); i-- > 0;)
    reversed += " ../vols/" + fs::path(plain.volumes()[i].path).filename().string();
  fs::create_directory(dir / "alias");
  write_file(dir / "alias/rev.pal", "# comment\nTITLE reversed\nDBLIST" + reversed + " ../vols/mv.01\n");
  const BlastDb rev = BlastDb::open(dir / "alias/rev");
  EXPECT_EQ(rev.title(), "reversed");
  ASSERT_EQ(rev.size(), plain.size());
  for (std::uint64_t oid = 0; oid < rev.size(); oid += 37) {
    EXPECT_EQ(rev.deflines(oid).front().title, plain.deflines(oid).front().title);
  }
  expect_matches_blastdbcmd(rev, dir / "alias/rev");

  // Nested alias, several names, a second database, a name found through $BLASTDB.
  write_records(dir / "other.fa", {"other1 a", "other2 b"}, 8);
  makeblastdb(dir / "other.fa", dir / "vols/aaa");
  write_file(dir / "nest.pal", "DBLIST alias/rev vols/aaa\n");
  const BlastDb nest = BlastDb::open(dir / "nest");
  EXPECT_EQ(nest.size(), plain.size() + 2);
  EXPECT_EQ(nest.title(), "reversed; " + (dir / "other.fa")) << "alias TITLE; volume title (the input path)";
  EXPECT_EQ(nest.alias_files().size(), 2u);
  EXPECT_EQ(nest.deflines(0).front().title, "other1 a") << "volume aaa sorts before mv.00";
  expect_matches_blastdbcmd(nest, dir / "nest");
  const std::string both = (dir / "vols/mv") + " " + (dir / "vols/aaa");
  const BlastDb two = BlastDb::open(both);
  EXPECT_EQ(two.size(), plain.size() + 2);
  expect_matches_blastdbcmd(two, both);
  ASSERT_EQ(::setenv("BLASTDB", (dir / "vols").c_str(), 1), 0);
  EXPECT_TRUE(BlastDb::exists("aaa"));
  EXPECT_TRUE(SequenceSource::is_blast_db("aaa"));
  EXPECT_EQ(BlastDb::open("aaa").size(), 2u);
  ::unsetenv("BLASTDB");
  EXPECT_FALSE(BlastDb::exists("aaa"));

  // Minimum length of the hit-saving cutoff and the statistics totals.
  EXPECT_EQ(plain.cutoff_min_length(), 10) << "a volume reports no shortest length: BLAST_SEQSRC_MINLENGTH";
  EXPECT_GT(plain.min_length(), 10u);
  write_file(dir / "min.pal", "DBLIST vols/aaa\nMIN_SEQ_LENGTH 25\nSTATS_TOTLEN 123456\nSTATS_NSEQ 77\n");
  const BlastDb min = BlastDb::open(dir / "min");
  EXPECT_EQ(min.cutoff_min_length(), 25);
  EXPECT_EQ(min.stats_total_length(), 123456u);
  EXPECT_EQ(min.stats_num_seqs(), 77u);
  EXPECT_EQ(min.total_residues(), BlastDb::open(dir / "vols/aaa").total_residues());
  write_file(dir / "min3.pal", "DBLIST min\nMIN_SEQ_LENGTH 3\nLENGTH 999\nNSEQ 5\n");
  const BlastDb min3 = BlastDb::open(dir / "min3");
  EXPECT_EQ(min3.cutoff_min_length(), 3);
  EXPECT_EQ(min3.stats_total_length(), 123456u) << "STATS_TOTLEN of the nested alias still applies";
  EXPECT_EQ(min3.stats_num_seqs(), 77u);
  write_file(dir / "len.pal", "DBLIST vols/aaa\nLENGTH 999\nNSEQ 5\n");
  const BlastDb len = BlastDb::open(dir / "len");
  EXPECT_EQ(len.stats_total_length(), 999u);
  EXPECT_EQ(len.stats_num_seqs(), 5u);
  EXPECT_EQ(len.size(), 2u);
  write_file(dir / "mixed.pal", "DBLIST min vols/mv\n");
  EXPECT_EQ(BlastDb::open(dir / "mixed").cutoff_min_length(), 10) << "a plain volume contributes 0";
  write_file(dir / "zero.pal", "DBLIST vols/aaa\nMIN_SEQ_LENGTH 0\n");
  EXPECT_EQ(BlastDb::open(dir / "zero").cutoff_min_length(), 10);
}

TEST(BlastDb, RestrictedAliasesAndBadAliasesAreRefused) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  write_records(dir / "in.fa", {"r1 a", "r2 b"}, 1);
  makeblastdb(dir / "in.fa", dir / "db");
  std::string message;
  for (const std::string key : {"GILIST", "OIDLIST", "SEQIDLIST", "TAXIDLIST", "MEMB_BIT", "FIRST_OID"}) {
    write_file(dir / "r.pal", "DBLIST db\n" + key + " something\n");
    EXPECT_EQ(error_kind([&] { BlastDb::open(dir / "r"); }, &message), ErrorKind::kInput) << key;
    EXPECT_NE(message.find(dir / "r.pal"), std::string::npos) << message;
    EXPECT_NE(message.find(key), std::string::npos) << message;
  }
  write_file(dir / "missing.pal", "DBLIST db nothere\n");
  EXPECT_EQ(error_kind([&] { BlastDb::open(dir / "missing"); }, &message), ErrorKind::kIo);
  EXPECT_NE(message.find("nothere"), std::string::npos) << message;
  write_file(dir / "empty.pal", "TITLE nothing listed\n");
  EXPECT_EQ(error_kind([&] { BlastDb::open(dir / "empty"); }), ErrorKind::kFormat);
  write_file(dir / "a.pal", "DBLIST b\n");
  write_file(dir / "b.pal", "DBLIST a\n");
  EXPECT_EQ(error_kind([&] { BlastDb::open(dir / "a"); }, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find("recursive"), std::string::npos) << message;
  write_file(dir / "self.pal", "DBLIST db\nNSEQ many\n");
  EXPECT_EQ(error_kind([&] { BlastDb::open(dir / "self"); }), ErrorKind::kFormat);
  // "DBLIST X" inside X.pal names the volume X.
  makeblastdb(dir / "in.fa", dir / "same");
  write_file(dir / "same.pal", "TITLE self-named\nDBLIST same\n");
  const BlastDb same = BlastDb::open(dir / "same");
  EXPECT_EQ(same.size(), 2u);
  EXPECT_EQ(same.title(), "self-named");
}

TEST(BlastDb, MissingNucleotideAndGappedDatabases) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  std::string message;
  EXPECT_EQ(error_kind([&] { BlastDb::open(dir / "nothing"); }, &message), ErrorKind::kIo);
  EXPECT_NE(message.find(dir / "nothing.pin"), std::string::npos) << message;
  EXPECT_FALSE(BlastDb::exists(dir / "nothing"));
  EXPECT_FALSE(SequenceSource::is_blast_db(dir / "nothing"));
  EXPECT_EQ(error_kind([&] { SequenceSource::open(dir / "nothing"); }), ErrorKind::kIo);

  write_file(dir / "dna.fa", ">n1\nACGTACGTACGTAAACCCGGGTTT\n>n2\nACGTTTTTGGGGCCCCAAAATTT\n");
  makeblastdb(dir / "dna.fa", dir / "dna", "", "nucl");
  EXPECT_TRUE(SequenceSource::is_blast_db(dir / "dna"));
  EXPECT_EQ(error_kind([&] { BlastDb::open(dir / "dna"); }, &message), ErrorKind::kInput);
  EXPECT_NE(message.find("nucleotide"), std::string::npos) << message;
  EXPECT_EQ(error_kind([&] { SequenceSource::open(dir / "dna"); }), ErrorKind::kInput);

  // '-' in makeblastdb's input is stored as NCBIstdaa 0 inside the sequence.
  write_file(dir / "gap.fa", ">g1 gapped\nMKTAYIAK-QRQISFVKSHFSRQ\n>g2 plain\nMKTAYIAKQRQISFVKSHFSRQLE\n");
  makeblastdb(dir / "gap.fa", dir / "gap");
  const BlastDb gap = BlastDb::open(dir / "gap");
  EXPECT_EQ(gap.length(0), 23u);
  EXPECT_EQ(gap.ncbistdaa(0)[8], 0);
  std::vector<std::uint8_t> codes;
  EXPECT_EQ(error_kind([&] { gap.residues(0, codes); }, &message), ErrorKind::kInput);
  EXPECT_NE(message.find("gap"), std::string::npos) << message;
  EXPECT_NO_THROW(gap.residues(1, codes));
  EXPECT_EQ(error_kind([&] { gap.verify(); }), ErrorKind::kInput);
  BlastDbOptions options;
  options.gap_code = kProteinStop;
  const BlastDb mapped = BlastDb::open(dir / "gap", options);
  mapped.residues(0, codes);
  EXPECT_EQ(codes[8], kProteinStop);
  // The same into a caller's span (the blastp reader's contiguous batches), which must fit exactly.
  std::vector<std::uint8_t> into(23);
  mapped.residues(0, std::span<std::uint8_t>(into));
  EXPECT_EQ(into, codes);
  EXPECT_EQ(error_kind([&] { gap.residues(0, std::span<std::uint8_t>(into)); }, &message), ErrorKind::kInput);
  EXPECT_NE(message.find("position 8"), std::string::npos) << message;
  std::vector<std::uint8_t> wrong(5);
  EXPECT_EQ(error_kind([&] { mapped.residues(0, std::span<std::uint8_t>(wrong)); }), ErrorKind::kInternal);
  EXPECT_NO_THROW(mapped.verify());

  // An existing FASTA file wins over NAME.pin; NAME.pin itself names the database; a packed database of
  // the same name wins.
  write_file(dir / "gap2", ">x\nMKV\n");
  makeblastdb(dir / "gap.fa", dir / "gap2");
  EXPECT_FALSE(SequenceSource::is_blast_db(dir / "gap2"));
  EXPECT_EQ(SequenceSource::open(dir / "gap2").reader()->path(), dir / "gap2");
  EXPECT_TRUE(SequenceSource::is_blast_db(dir / "gap2.pin"));
  EXPECT_EQ(SequenceSource::open(dir / "gap2.pin").blast_db()->size(), 2u);
  write_file(dir / "pk.fa", ">p1\nMKVLAAGIVG\n");
  make_db(dir / "pk.fa", dir / "pk");
  makeblastdb(dir / "pk.fa", dir / "pk");
  EXPECT_TRUE(SequenceSource::is_packed_db(dir / "pk"));
  EXPECT_FALSE(SequenceSource::is_blast_db(dir / "pk"));
  EXPECT_TRUE(SequenceSource::open(dir / "pk").is_packed());
}

// Every file of a volume damaged in turn.
class DamagedBlastDb : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("makeblastdb")) GTEST_SKIP() << "makeblastdb not installed";
    write_records(dir_ / "in.fa", id_headers(), 21);
    makeblastdb(dir_ / "in.fa", dir_ / "db", "-parse_seqids");
    for (const char* ext : {".pin", ".psq", ".phr"})
      original_[ext] = read_file(dir_ / (std::string("db") + ext));
  }
  void restore() {
    for (const auto& [ext, bytes] : original_) write_file(dir_ / ("db" + ext), bytes);
  }
  // Replaces a file with `bytes`; returns the error kind of open() + reading everything + verify().
  ErrorKind damage(const std::string& ext, const std::string& bytes, std::string* message = nullptr) {
    restore();
    write_file(dir_ / ("db" + ext), bytes);
    return error_kind(
        [&] {
          const BlastDb db = BlastDb::open(dir_ / "db");
          std::vector<std::uint8_t> codes;
          for (std::uint64_t oid = 0; oid < db.size(); ++oid) {
            db.residues(oid, codes);
            db.deflines(oid);
          }
          db.min_length();
          db.verify();
        },
        message);
  }
  TempDir dir_;
  std::map<std::string, std::string> original_;
};

TEST_F(DamagedBlastDb, TruncatedFilesNameTheFile) {
  std::string message;
  for (const char* ext : {".pin", ".psq", ".phr"}) {
    const std::string& bytes = original_[ext];
    for (const std::size_t cut : {std::size_t{1}, std::size_t{4}, bytes.size() / 2, bytes.size() - 8}) {
      EXPECT_EQ(damage(ext, bytes.substr(0, bytes.size() - cut), &message), ErrorKind::kFormat) << ext << cut;
      EXPECT_NE(message.find(dir_ / (std::string("db") + ext)), std::string::npos) << message;
    }
    restore();
    fs::remove(dir_ / (std::string("db") + ext));
    if (std::string(ext) == ".pin") {
      EXPECT_EQ(error_kind([&] { BlastDb::open(dir_ / "db"); }), ErrorKind::kIo);
    } else {
      EXPECT_EQ(error_kind([&] { BlastDb::open(dir_ / "db"); }, &message), ErrorKind::kIo);
      EXPECT_NE(message.find(dir_ / (std::string("db") + ext)), std::string::npos) << message;
    }
  }
}

TEST_F(DamagedBlastDb, BadHeaderOffsetsResiduesAndAsn1) {
  std::string message;
  std::string pin = original_[".pin"];
  pin[3] = 7;  // version 7
  EXPECT_EQ(damage(".pin", pin, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find("version 7"), std::string::npos) << message;
  pin = original_[".pin"];
  pin[7] = 0;  // nucleotide type in a .pin
  EXPECT_EQ(damage(".pin", pin), ErrorKind::kFormat);
  EXPECT_EQ(damage(".pin", std::string(300, '\xff')), ErrorKind::kFormat);
  EXPECT_EQ(damage(".pin", ""), ErrorKind::kFormat);

  // A sequence offset in the middle moved past the next one.
  restore();
  const BlastDb good = BlastDb::open(dir_ / "db");
  const std::size_t n = good.size();
  const std::size_t seq_offsets = original_[".pin"].size() - 4 * (n + 1);
  pin = original_[".pin"];
  pin[seq_offsets + 4 * 5 + 2] = '\x7f';
  EXPECT_EQ(damage(".pin", pin, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find(dir_ / "db.psq"), std::string::npos) << message;
  // A header offset moved backwards.
  pin = original_[".pin"];
  pin[seq_offsets - 4 * (n + 1) + 4 * 3 + 3] = 0;
  pin[seq_offsets - 4 * (n + 1) + 4 * 3 + 2] = 0;
  EXPECT_EQ(damage(".pin", pin, &message), ErrorKind::kFormat);

  // A residue byte that is no NCBIstdaa code; a missing NUL separator.
  std::string psq = original_[".psq"];
  psq[5] = 40;
  EXPECT_EQ(damage(".psq", psq, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find("residue code 40"), std::string::npos) << message;
  psq = original_[".psq"];
  psq[psq.size() - 1] = 1;
  EXPECT_EQ(damage(".psq", psq), ErrorKind::kFormat);

  // ASN.1 damage: wrong outer tag, a length running past the entry, garbage.
  std::string phr = original_[".phr"];
  phr[0] = 0x31;
  EXPECT_EQ(damage(".phr", phr, &message), ErrorKind::kFormat);
  EXPECT_NE(message.find("OID 0"), std::string::npos) << message;
  phr = original_[".phr"];
  const std::size_t title = phr.find('\x1a');
  ASSERT_NE(title, std::string::npos);
  phr[title + 1] = '\x7e';
  EXPECT_EQ(damage(".phr", phr), ErrorKind::kFormat);
  EXPECT_EQ(damage(".phr", std::string(phr.size(), '\x30')), ErrorKind::kFormat);
  restore();
}

TEST_F(DamagedBlastDb, RandomDamageNeverCrashes) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 60; ++round) {
    const char* ext = std::array<const char*, 3>{".pin", ".psq", ".phr"}[round % 3];
    std::string bytes = original_[ext];
    for (int k = 0; k < 1 + round % 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    restore();
    write_file(dir_ / (std::string("db") + ext), bytes);
    try {
      const BlastDb db = BlastDb::open(dir_ / "db");
      Sequence seq;
      for (std::uint64_t oid = 0; oid < db.size(); ++oid) {
        db.to_sequence(oid, seq);
        for (const BlastDefline& line : db.deflines(oid)) {
          (void)line.seqid();
          (void)line.report_line();
        }
      }
      db.verify();
    } catch (const Error&) {
      // A damaged byte may or may not be detectable; it must never crash.
    }
  }
  restore();
}

TEST(BlastDb, SummaryFromTheIndex) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  std::vector<std::string> headers;
  for (int i = 0; i < 200; ++i) headers.push_back(fmt::format("s{}", i));
  write_records(dir / "in.fa", headers, 12);
  makeblastdb(dir / "in.fa", dir / "db", "-max_file_sz 20000 -title 'my title'");
  SequenceSource blast = SequenceSource::open(dir / "db");
  SequenceSource fasta = SequenceSource::open(dir / "in.fa");
  const DbSummary b = summarize(blast);
  const DbSummary f = summarize(fasta);
  EXPECT_TRUE(b.blast);
  EXPECT_FALSE(b.packed);
  EXPECT_EQ(b.title, "my title");
  EXPECT_EQ(b.format_version, 5u);
  EXPECT_GT(b.volumes, 1u);
  EXPECT_EQ(b.files, 3 * b.volumes + 1);
  EXPECT_EQ(b.sequences, f.sequences);
  EXPECT_EQ(b.residues, f.residues);
  EXPECT_EQ(b.min_length, f.min_length);
  EXPECT_EQ(b.max_length, f.max_length);
  EXPECT_EQ(b.n50, f.n50);
  ASSERT_EQ(b.histogram.size(), f.histogram.size());
  for (std::size_t i = 0; i < b.histogram.size(); ++i)
    EXPECT_EQ(b.histogram[i].sequences, f.histogram[i].sequences);
}

TEST(BlastDbRealData, Mmseqs20kPrefixMultiVolume) {
  REQUIRE_BLAST_TOOLS();
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  TempDir dir;
  // The first 3000 records (about 1.5 MB).
  const std::string text = read_file((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string());
  std::size_t end = 0;
  for (int records = 0; records < 3000 && end != std::string::npos; ++records) end = text.find('>', end + 1);
  write_file(dir / "in.fa", text.substr(0, end));
  makeblastdb(dir / "in.fa", dir / "v5", "-max_file_sz 400000");
  makeblastdb(dir / "in.fa", dir / "v4", "-blastdb_version 4");
  for (const char* name : {"v5", "v4"}) {
    const BlastDb db = BlastDb::open(dir / name);
    EXPECT_EQ(db.size(), 3000u);
    expect_matches_fasta(db, dir / "in.fa", false);
  }
  EXPECT_GT(BlastDb::open(dir / "v5").volumes().size(), 2u);
}

// blastp's "minimum subject length" n of the hit-saving cutoff for -db (blast_db.hpp): a database and an
// alias over it with MIN_SEQ_LENGTH = cutoff_min_length() (10) give identical output, while an alias with
// MIN_SEQ_LENGTH = the real shortest length (300) changes which weak hits blastp finds. So blastp uses
// 10, not the shortest sequence, for a plain database.
TEST(BlastDbRealData, CutoffMinLengthIsWhatBlastpUses) {
  REQUIRE_BLAST_TOOLS();
  if (!have_tool("blastp")) GTEST_SKIP() << "blastp not installed";
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  TempDir dir;
  std::string subjects, queries;
  int count = 0;
  for (const Sequence& seq : read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string())) {
    if (seq.length() < 300 || seq.length() > 600) continue;
    subjects += fmt::format(">{}\n{}\n", seq.name, to_letters(seq, Alphabet::protein(), false));
    if (++count == 1500) break;
  }
  count = 0;
  for (const Sequence& seq : read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string())) {
    queries += fmt::format(">{}\n{}\n", seq.name, to_letters(seq, Alphabet::protein(), false));
    if (++count == 6) break;
  }
  write_file(dir / "db.fa", subjects);
  write_file(dir / "q.fa", queries);
  makeblastdb(dir / "db.fa", dir / "db");
  const BlastDb db = BlastDb::open(dir / "db");
  ASSERT_EQ(db.min_length(), 300u);
  ASSERT_EQ(db.cutoff_min_length(), 10);
  write_file(dir / "cutoff.pal", fmt::format("DBLIST db\nMIN_SEQ_LENGTH {}\n", db.cutoff_min_length()));
  write_file(dir / "shortest.pal", fmt::format("DBLIST db\nMIN_SEQ_LENGTH {}\n", db.min_length()));
  EXPECT_EQ(BlastDb::open(dir / "shortest").cutoff_min_length(), 300);
  const auto hits = [&](const std::string& name) {
    return run(
        "blastp -query " + quote(dir / "q.fa") + " -db " + quote(dir / name) +
        " -outfmt '6 qseqid sseqid evalue bitscore' -evalue 100 -max_target_seqs 5000 -comp_based_stats 0");
  };
  const std::string plain = hits("db");
  EXPECT_EQ(plain, hits("cutoff"));
  EXPECT_NE(plain, hits("shortest"));
  EXPECT_GT(split_lines(plain).size(), 100u);
}

// Every input of the fuzz corpus (makeblastdb seeds and minimised crashers) goes through the fuzz harness:
// only warpsearch::Error may come out of it (run_input catches exactly that), nothing may crash.
TEST(BlastDbFuzzCorpus, ReplaysWithoutCrashing) {
  const fs::path corpus = test::source_dir() / "fuzz/corpus/blast_db";
  ASSERT_TRUE(fs::is_directory(corpus)) << corpus;
  TempDir dir;
  int inputs = 0;
  int opened = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    const std::string bytes = read_file(entry.path().string());
    const bool ok = fuzz::blast::run_input(dir.path().string(),
                                           reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    // The seeds named v4_* / v5_* are valid makeblastdb databases (the gap seed opens only with gap_code).
    const std::string name = entry.path().filename().string();
    if (name.starts_with("v4_") || name.starts_with("v5_")) {
      EXPECT_EQ(ok, name != "v5_gap_rejected") << name;
    }
    opened += ok;
    ++inputs;
  }
  EXPECT_GT(inputs, 0);
  EXPECT_GT(opened, 0);
}

// The harness's encoding round-trips a real database: makeblastdb output encoded as a fuzz input opens from
// the harness's files with the same sequences and deflines as the original, directly and through alias
// files (one, and a tree db.pal -> a.pal, b.pal -> vol).
TEST(BlastDbFuzzCorpus, HarnessEncodingRoundTrips) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  TempDir work;
  write_file(dir / "in.fa", ">sp|P69905|HBA_HUMAN Hemoglobin alpha\nMVLSPADKTNVKAAWGKV\n>foo bar\nMKV\n");
  const std::array<std::string, 3> aliases = {"", "TITLE t\nDBLIST vol\n",
                                              std::string("DBLIST a b\n\0DBLIST vol\n\0DBLIST vol\n", 35)};
  for (const char* extra : {"-parse_seqids", "-blastdb_version 4"}) {
    makeblastdb(dir / "in.fa", dir / "orig", extra);
    const BlastDb orig = BlastDb::open(dir / "orig");
    for (const std::string& alias : aliases) {
      fuzz::blast::DbFiles files = fuzz::blast::read_volume_files(dir / "orig");
      files[fuzz::blast::kAliasFile] = alias;
      const std::uint8_t flags = alias.empty() ? 0 : fuzz::blast::kWriteAlias | fuzz::blast::kVerify;
      const std::string input = fuzz::blast::encode_input(files, flags);
      ASSERT_TRUE(fuzz::blast::run_input(work.path().string(),
                                         reinterpret_cast<const std::uint8_t*>(input.data()), input.size()))
          << extra;
      const BlastDb copy = BlastDb::open(work / (alias.empty() ? "vol" : "db"));
      const std::size_t alias_files = alias.empty() ? 0 : alias.starts_with("DBLIST a b") ? 3 : 1;
      EXPECT_EQ(copy.alias_files().size(), alias_files) << alias;
      EXPECT_EQ(fs::exists(work / "a.pal"), alias_files == 3);
      ASSERT_EQ(copy.size(), orig.size());
      EXPECT_EQ(copy.total_residues(), orig.total_residues());
      Sequence a;
      Sequence b;
      for (std::uint64_t oid = 0; oid < orig.size(); ++oid) {
        orig.to_sequence(oid, a);
        copy.to_sequence(oid, b);
        EXPECT_EQ(b.name, a.name);
        EXPECT_EQ(b.description, a.description);
        EXPECT_EQ(b.residues, a.residues);
        EXPECT_EQ(copy.deflines(oid)[0].report_line(), orig.deflines(oid)[0].report_line());
      }
    }
  }
}

// Sibling alias values are summed modulo 2^64 as CSeqDB does (a signed sum overflowed: undefined behaviour
// found by reviewing the alias walkers while fuzzing; fuzz/corpus/blast_db/alias_sum_overflow replays it).
TEST(BlastDb, HugeSiblingAliasLengthsWrapAsCSeqDB) {
  REQUIRE_BLAST_TOOLS();
  TempDir dir;
  write_file(dir / "in.fa", ">a\nMKVLA\n");
  makeblastdb(dir / "in.fa", dir / "vol");
  write_file(dir / "a.pal", "DBLIST vol\nLENGTH 9223372036854775807\nNSEQ -1\n");
  write_file(dir / "b.pal", "DBLIST vol\nLENGTH 9223372036854775807\nNSEQ 3\n");
  write_file(dir / "db.pal", "DBLIST a b\n");
  const BlastDb db = BlastDb::open(dir / "db");
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.stats_total_length(), 2 * std::uint64_t{9223372036854775807});
  EXPECT_EQ(db.stats_num_seqs(), 2u);
}

}  // namespace
}  // namespace warpsearch
