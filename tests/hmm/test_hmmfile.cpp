// test_hmmfile.cpp: the HMMER3 ASCII reader (src/hmm/hmmfile.hpp) and the P7_HMM routines (hmm.hpp).
//
// Oracle: HMMER 3.3.2's own reader. `hmmconvert -b` writes the model HMMER read as raw binary (every
// float exactly as in memory), so each model we read is compared field by field, bit for bit, with what
// HMMER read from the same file: all test models, every legacy format 3/a..3/f (made with
// `hmmconvert --outfmt`), and `hmmstat`'s summary. Also: gzip input, several models per file, comments,
// blank lines and CRLF, and malformed or truncated inputs (kFormat errors with the right line).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/hmm.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/search_internal.hpp"
#include "hmm_test_support.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

namespace fs = std::filesystem;

using hmmtest::run_capture;

bool have_tool(const char* name) {
  std::string out;
  return run_capture(std::string("command -v ") + name, &out) == 0;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Every test model available: the HMMER test set and the Pfam set of CUDAMPF.
std::vector<std::string> all_model_files() {
  std::vector<std::string> files;
  for (const fs::path& dir : {test::testdata_dir() / "hmm", fs::path("/work/shared/data/cudampf_models")}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".hmm") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// ---- HMMER's binary save format (p7_hmmfile_WriteBinary, format 3/f), parsed for comparison. ----
struct BinHmm {
  int flags = 0, M = 0, abc_type = 0;
  std::vector<float> mat, ins, t;  // mat[1..M] (M*K), ins[0..M], t[0..M] (7 each)
  std::string name, acc, desc, comlog, ctime;
  bool has_comlog = false, has_ctime = false;
  std::string rf, mm, cons, cs, ca;  // M+2 bytes each when present
  int nseq = 0, max_length = 0;
  float eff_nseq = 0;
  std::vector<int> map;
  uint32_t checksum = 0;
  std::array<float, 6> evparam{}, cutoff{};
  std::vector<float> compo;
};

class BinReader {
 public:
  explicit BinReader(std::string bytes) : b_(std::move(bytes)) {}
  bool done() const { return pos_ >= b_.size(); }
  template <typename T>
  T get() {
    if (pos_ + sizeof(T) > b_.size()) throw std::runtime_error("binary HMM truncated");
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string bytes(std::size_t n) {
    if (pos_ + n > b_.size()) throw std::runtime_error("binary HMM truncated");
    std::string s = b_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  // write_bin_string: int length including the NUL (0 for NULL), then the bytes.
  std::string str(bool* present = nullptr) {
    const int len = get<int>();
    if (present != nullptr) *present = len > 0;
    if (len <= 0) return {};
    std::string s = bytes(static_cast<std::size_t>(len));
    return s.substr(0, s.size() - 1);
  }

 private:
  std::string b_;
  std::size_t pos_ = 0;
};

std::vector<BinHmm> parse_binary(const std::string& bytes) {
  constexpr uint32_t kV3fMagic = 0xe8ededbaU;
  std::vector<BinHmm> out;
  BinReader r(bytes);
  while (!r.done()) {
    if (r.get<uint32_t>() != kV3fMagic) throw std::runtime_error("bad binary magic");
    BinHmm h;
    h.flags = r.get<int>();
    h.M = r.get<int>();
    h.abc_type = r.get<int>();
    const int K = h.abc_type == 3 ? 20 : 4;  // eslAMINO = 3, eslRNA = 1, eslDNA = 2
    const auto fl = [&](std::vector<float>& v, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) v.push_back(r.get<float>());
    };
    const auto M1 = static_cast<std::size_t>(h.M) + 1;
    fl(h.mat, static_cast<std::size_t>(h.M) * static_cast<std::size_t>(K));
    fl(h.ins, M1 * static_cast<std::size_t>(K));
    fl(h.t, M1 * 7);
    h.name = r.str();
    if (h.flags & kHmmAcc) h.acc = r.str();
    if (h.flags & kHmmDesc) h.desc = r.str();
    if (h.flags & kHmmRF) h.rf = r.bytes(M1 + 1);
    if (h.flags & kHmmMMask) h.mm = r.bytes(M1 + 1);
    if (h.flags & kHmmCons) h.cons = r.bytes(M1 + 1);
    if (h.flags & kHmmCS) h.cs = r.bytes(M1 + 1);
    if (h.flags & kHmmCA) h.ca = r.bytes(M1 + 1);
    h.comlog = r.str(&h.has_comlog);
    h.nseq = r.get<int>();
    h.eff_nseq = r.get<float>();
    h.max_length = r.get<int>();
    h.ctime = r.str(&h.has_ctime);
    if (h.flags & kHmmMap)
      for (std::size_t k = 0; k < M1; ++k) h.map.push_back(r.get<int>());
    h.checksum = r.get<uint32_t>();
    for (auto& v : h.evparam) v = r.get<float>();
    for (auto& v : h.cutoff) v = r.get<float>();
    if (h.flags & kHmmCompo) fl(h.compo, static_cast<std::size_t>(K));
    out.push_back(std::move(h));
  }
  return out;
}

// HMMER's own reading of a file, via `hmmconvert -b`.
std::vector<BinHmm> hmmer_read(const std::string& path) {
  std::string out;
  const int rc = run_capture("hmmconvert -b " + quote(path), &out);
  if (rc != 0) throw std::runtime_error("hmmconvert -b failed on " + path);
  return parse_binary(out);
}

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// Annotation string of ours (size M+1, [0] = ' ') against HMMER's M+2 bytes (trailing NUL).
void expect_annotation(const std::string& ours, const std::string& theirs, const char* what) {
  if (theirs.empty()) {
    EXPECT_TRUE(ours.empty()) << what;
    return;
  }
  ASSERT_EQ(ours.size() + 1, theirs.size()) << what;
  EXPECT_EQ(ours, theirs.substr(0, ours.size())) << what;
  EXPECT_EQ(theirs.back(), '\0') << what;
}

void expect_same_model(const Hmm& h, const BinHmm& b) {
  SCOPED_TRACE(h.name);
  ASSERT_EQ(h.M, b.M);
  const int expect_type = h.abc->type == AbcType::kAmino ? 3 : h.abc->type == AbcType::kDNA ? 2 : 1;
  EXPECT_EQ(expect_type, b.abc_type);
  EXPECT_EQ(static_cast<int>(h.flags), b.flags);
  const int K = h.abc->K;
  std::size_t mismatches = 0;
  for (int k = 0; k <= h.M; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    for (int x = 0; x < K; ++x) {
      const auto ux = static_cast<std::size_t>(x);
      if (k >= 1 && bits(h.mat[uk][ux]) != bits(b.mat[(uk - 1) * static_cast<std::size_t>(K) + ux]))
        ++mismatches;
      if (bits(h.ins[uk][ux]) != bits(b.ins[uk * static_cast<std::size_t>(K) + ux])) ++mismatches;
    }
    for (std::size_t z = 0; z < 7; ++z)
      if (bits(h.t[uk][z]) != bits(b.t[uk * 7 + z])) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u) << "probability floats differ from HMMER's";
  EXPECT_EQ(h.name, b.name);
  EXPECT_EQ(h.acc, b.acc);
  EXPECT_EQ(h.desc, b.desc);
  expect_annotation(h.rf, b.rf, "rf");
  expect_annotation(h.mm, b.mm, "mm");
  expect_annotation(h.consensus, b.cons, "consensus");
  expect_annotation(h.cs, b.cs, "cs");
  expect_annotation(h.ca, b.ca, "ca");
  EXPECT_EQ(h.comlog, b.comlog);
  EXPECT_EQ(!h.comlog.empty(), b.has_comlog);
  EXPECT_EQ(h.ctime, b.ctime);
  EXPECT_EQ(!h.ctime.empty(), b.has_ctime);
  EXPECT_EQ(h.nseq, b.nseq);
  EXPECT_EQ(bits(h.eff_nseq), bits(b.eff_nseq));
  EXPECT_EQ(h.max_length, b.max_length);
  EXPECT_EQ(h.map, b.map);
  EXPECT_EQ(h.checksum, b.checksum);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(bits(h.evparam[i]), bits(b.evparam[i])) << "evparam " << i;
    EXPECT_EQ(bits(h.cutoff[i]), bits(b.cutoff[i])) << "cutoff " << i;
  }
  if (h.has(kHmmCompo)) {
    ASSERT_EQ(b.compo.size(), static_cast<std::size_t>(K));
    for (std::size_t x = 0; x < static_cast<std::size_t>(K); ++x)
      EXPECT_EQ(bits(h.compo[x]), bits(b.compo[x])) << x;
  }
}

void expect_same_models(const std::vector<Hmm>& ours, const std::vector<BinHmm>& theirs) {
  ASSERT_EQ(ours.size(), theirs.size());
  for (std::size_t i = 0; i < ours.size(); ++i) expect_same_model(ours[i], theirs[i]);
}

#define REQUIRE_HMMER()                                                             \
  do {                                                                              \
    if (!have_tool("hmmconvert") || !have_tool("hmmstat"))                          \
      GTEST_SKIP() << "HMMER 3.3.2 (hmmconvert, hmmstat) not installed: no oracle"; \
  } while (0)

TEST(HmmFile, AllTestModelsMatchHmmerBitForBit) {
  REQUIRE_HMMER();
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  const auto files = all_model_files();
  ASSERT_GE(files.size(), 13u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    expect_same_models(read_all_hmms(f), hmmer_read(f));
  }
}

TEST(HmmFile, SummaryMatchesHmmstat) {
  REQUIRE_HMMER();
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  for (const auto& f : all_model_files()) {
    SCOPED_TRACE(f);
    const auto models = read_all_hmms(f);
    std::string out;
    ASSERT_EQ(run_capture("hmmstat " + quote(f), &out), 0);
    std::istringstream in(out);
    std::string line;
    std::size_t i = 0;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      ASSERT_LT(i, models.size());
      const Hmm& h = models[i++];
      std::istringstream ls(line);
      std::string idx, name, acc, nseq, effn, M;
      ls >> idx >> name >> acc >> nseq >> effn >> M;
      EXPECT_EQ(name, h.name);
      EXPECT_EQ(acc, h.has(kHmmAcc) ? h.acc : "-");
      EXPECT_EQ(nseq, std::to_string(h.nseq));
      EXPECT_EQ(effn, fmt::format("{:.2f}", static_cast<double>(h.eff_nseq)));
      EXPECT_EQ(M, std::to_string(h.M));
    }
    EXPECT_EQ(i, models.size());
  }
}

// Every legacy ASCII format, written by hmmconvert from real models (amino and DNA), read by both.
TEST(HmmFile, LegacyFormatsMatchHmmer) {
  REQUIRE_HMMER();
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  test::TempDir dir("hmmfile_legacy");
  const char* fmts[] = {"3/a", "3/b", "3/c", "3/d", "3/e", "3/f"};
  for (const char* model : {"globins4.hmm", "MADE1.hmm", "fn3.hmm", "Pkinase.hmm"}) {
    const std::string src = (test::testdata_dir() / "hmm" / model).string();
    for (int f = 0; f < 6; ++f) {
      SCOPED_TRACE(std::string(model) + " " + fmts[f]);
      const std::string conv = dir / "conv.hmm";
      std::string out;
      ASSERT_EQ(run_capture(std::string("hmmconvert --outfmt ") + fmts[f] + " " + quote(src), &out), 0);
      test::write_file(conv, out);
      HmmReader reader(conv);
      EXPECT_EQ(static_cast<int>(reader.format()), f);
      std::vector<Hmm> ours;
      while (auto h = reader.next()) ours.push_back(std::move(*h));
      ASSERT_EQ(ours.size(), 1u);
      EXPECT_EQ(ours[0].version, fmts[f]);
      expect_same_models(ours, hmmer_read(conv));
      // Legacy formats have no consensus column: both readers compute it (p7_hmm_SetConsensus).
      EXPECT_TRUE(ours[0].has(kHmmCons));
      EXPECT_EQ(ours[0].consensus.size(), static_cast<std::size_t>(ours[0].M) + 1);
    }
  }
}

std::string slurp(const std::string& path) { return test::read_file(path); }

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
}

TEST(HmmFile, SeveralModelsPlainAndGzip) {
  REQUIRE_HMMER();
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  const fs::path hd = test::testdata_dir() / "hmm";
  test::TempDir dir("hmmfile_multi");
  // Same format tag (3/f) and alphabet in all, as HMMER requires within one file.
  const std::string cat = slurp((hd / "globins4.hmm").string()) + slurp((hd / "Pkinase.hmm").string()) +
                          slurp((hd / "fn3.hmm").string()) + slurp((hd / "globins4.hmm").string());
  const std::string plain = dir / "multi.hmm";
  const std::string gz = dir / "multi.hmm.gz";
  test::write_file(plain, cat);
  write_gzip(gz, cat);
  const auto theirs = hmmer_read(plain);
  ASSERT_EQ(theirs.size(), 4u);
  {
    SCOPED_TRACE("plain");
    const auto ours = read_all_hmms(plain);
    expect_same_models(ours, theirs);
    EXPECT_EQ(ours[0].name, "globins4");
    EXPECT_EQ(ours[2].name, "fn3");
  }
  {
    SCOPED_TRACE("gzip");
    expect_same_models(read_all_hmms(gz), theirs);
  }
  // A gzip file without the .gz suffix is still recognized (zlib detects it by content).
  const std::string gz2 = dir / "multi_noext";
  write_gzip(gz2, cat);
  expect_same_models(read_all_hmms(gz2), theirs);
}

TEST(HmmFile, CommentsBlankLinesAndCrlfAreTolerated) {
  REQUIRE_HMMER();
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  const std::string src = (test::testdata_dir() / "hmm/fn3.hmm").string();
  const auto theirs = hmmer_read(src);
  std::istringstream in(slurp(src));
  std::string line, edited, crlf;
  int n = 0;
  while (std::getline(in, line)) {
    if (++n % 7 == 0) edited += "\n   \n# a comment line\n";
    // A '#' token ends a line for the token parser, but DESC/DATE/COM take the whole rest of the line.
    const bool rest_of_line =
        line.rfind("DESC", 0) == 0 || line.rfind("DATE", 0) == 0 || line.rfind("COM", 0) == 0;
    edited += line + (rest_of_line ? "" : "   # trailing comment token") + "\n";
    crlf += line + "\r\n";
  }
  test::TempDir dir("hmmfile_comments");
  test::write_file(dir / "a.hmm", edited);
  test::write_file(dir / "b.hmm", crlf);
  // HMMER reads the edited files as the original; so must we.
  expect_same_models(read_all_hmms(dir / "a.hmm"), hmmer_read(dir / "a.hmm"));
  expect_same_models(read_all_hmms(dir / "a.hmm"), theirs);
  expect_same_models(read_all_hmms(dir / "b.hmm"), hmmer_read(dir / "b.hmm"));
  expect_same_models(read_all_hmms(dir / "b.hmm"), theirs);
}

// ---- malformed inputs ----

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) v.push_back(line);
  return v;
}

std::string join(const std::vector<std::string>& v, std::size_t n = std::string::npos) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < n; ++i) s += v[i] + "\n";
  return s;
}

// Reads every model of text; expects a kFormat error at `line` whose message contains `what`.
void expect_format_error(const std::string& text, std::uint64_t line, const std::string& what) {
  test::TempDir dir("hmmfile_bad");
  const std::string path = dir / "bad.hmm";
  test::write_file(path, text);
  try {
    read_all_hmms(path);
    ADD_FAILURE() << "no error; expected: " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat) << e.what();
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(e.message().find(what), std::string::npos) << e.what();
  }
}

class HmmFileErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path p = test::testdata_dir() / "hmm/globins4.hmm";
    if (!fs::exists(p)) GTEST_SKIP() << "test data hmm/globins4.hmm not fetched";
    g_ = lines_of(slurp(p.string()));
    ASSERT_EQ(g_.size(), 469u);  // line 22 + 3(k-1) is node k's match line; 469 is "//"
  }
  std::vector<std::string> g_;
  static std::size_t match_line(int k) { return 22 + 3 * static_cast<std::size_t>(k - 1); }
};

TEST_F(HmmFileErrors, TruncatedBody) {
  // Cut right after node 5's transition line (line 36): node 6 is missing.
  expect_format_error(join(g_, 36), 36,
                      "Premature end of data in main model section, at node 6 (expected 149)");
  // Cut after node 5's match line: no insert line.
  expect_format_error(join(g_, match_line(5)), match_line(5), "no insert emission line, node 5");
  expect_format_error(join(g_, match_line(5) + 1), match_line(5) + 1, "no transition line, node 5");
  expect_format_error(join(g_, 468), 468, "missing //");
  expect_format_error(join(g_, 17), 17, "Premature end of data before main model section");
  expect_format_error(join(g_, 19), 19, "Premature end of data after COMPO line");
  expect_format_error(join(g_, 20), 20, "no node 0 transition line");
  // Truncated inside the header: HMMER would stop silently; we report it.
  expect_format_error(join(g_, 12), 12, "Premature end of file in model header");
}

TEST_F(HmmFileErrors, HugeLengWithShortBodyFailsWithoutAllocatingIt) {
  // A damaged LENG (2e9 nodes, hundreds of GB if allocated up front) with a body cut after node 5: the
  // reader sizes its arrays by the nodes it has read and reports the missing node 6.
  auto lines = g_;
  for (auto& l : lines)
    if (l.rfind("LENG", 0) == 0) l = "LENG  2000000000";
  expect_format_error(join(lines, 36), 36,
                      "Premature end of data in main model section, at node 6 (expected 2000000000)");
}

TEST_F(HmmFileErrors, BadFields) {
  auto g = g_;
  g[match_line(7) - 1].replace(0, 7, "      8");
  expect_format_error(join(g), match_line(7), "Expected match line to start with 7 (of 149); saw 8");

  g = g_;
  g[match_line(3)] = "          2.68618  4.42225";  // node 3 insert line with 2 of 20 fields
  expect_format_error(join(g), match_line(3) + 1,
                      "Too few probability fields on insert line, node 3: expected 20, got 2");

  g = g_;
  g[match_line(3) + 1] = "          0.03156  3.86736";
  expect_format_error(join(g), match_line(3) + 2, "Too few probability fields on transition line, node 3");

  g = g_;
  g[match_line(2) - 1] = "      2   1.70038  4.17733";
  expect_format_error(join(g), match_line(2),
                      "Too few probability fields on match line, node 2: expected 20, got 2");

  g = g_;
  g[match_line(2) - 1] = g[match_line(2) - 1].substr(0, 197);  // emissions, MAP, CONS only
  ASSERT_NE(g[match_line(2) - 1].find_last_not_of(' '), std::string::npos);
  expect_format_error(join(g), match_line(2), "Missing RF field on match line for node 2");

  g = g_;
  g[468] = "///";
  expect_format_error(join(g), 469, "Expected closing //; found /// instead");

  g = g_;
  g[4] = "RF    maybe";
  expect_format_error(join(g), 5, "RF header line must say yes/no, not maybe");

  g = g_;
  g[3] = "ALPH  protein";
  expect_format_error(join(g), 4, "Unrecognized alphabet type protein");

  g = g_;
  g[2] = "LENG  abc";
  expect_format_error(join(g), 3, "Invalid model length abc on LENG line");

  g = g_;
  g[10] = "NSEQ";
  expect_format_error(join(g), 11, "Nothing follows NSEQ tag");

  g = g_;
  g[11] = "EFFN  -1";
  expect_format_error(join(g), 12, "Invalid eff_nseq on EFFN line");

  g = g_;
  g[14] = "STATS LOCAL SSV -10.7 0.7";
  expect_format_error(join(g), 15, "Failed to parse STATS, SSV unrecognized as field 3");

  g = g_;
  g.erase(g.begin() + 14);  // VITERBI line gone
  expect_format_error(join(g), 16, "Missing one or more STATS parameter lines");

  g = g_;
  g.erase(g.begin() + 1);  // no NAME
  expect_format_error(join(g), 16, "No NAME found for HMM");

  g = g_;
  g[0] = "HMMER9/z [x]";
  expect_format_error(join(g), 1, "Format tag is 'HMMER9/z': unrecognized");

  expect_format_error("", 0, "file is empty");
  expect_format_error("\n# only a comment\n\n", 3, "file is empty");
}

TEST_F(HmmFileErrors, MixedTagsAndAlphabetsInOneFile) {
  // A second model with another format tag (3/e after 3/f) is refused, as by HMMER.
  auto second = g_;
  second[0] = "HMMER3/e [3.0 | March 2010]";
  expect_format_error(join(g_) + join(second), 470, "Didn't find HMMER3/f tag");
  // A DNA model after an amino one.
  auto dna = g_;
  dna[3] = "ALPH  DNA";
  expect_format_error(join(g_) + join(dna), 473,
                      "Alphabet type mismatch: was amino, but current HMM says DNA");
}

TEST(HmmFile, MissingFileIsIoError) {
  try {
    HmmReader r("/nonexistent/dir/x.hmm");
    FAIL() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(e.file(), "/nonexistent/dir/x.hmm");
  }
}

// ---- P7_HMM routines ----

TEST(HmmModel, CompositionReproducesTheFilesCompoLine) {
  // hmmbuild wrote COMPO from p7_hmm_SetComposition on its unrounded parameters; recomputing it from
  // the (5-decimal) parameters in the file must agree to the file's printed precision.
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  for (const auto& f : all_model_files()) {
    for (const Hmm& h : read_all_hmms(f)) {
      if (!h.has(kHmmCompo)) continue;
      SCOPED_TRACE(h.name);
      Hmm c = h;
      set_composition(c);
      float sum = 0.0f;
      for (int x = 0; x < h.abc->K; ++x) {
        const auto ux = static_cast<std::size_t>(x);
        EXPECT_NEAR(-std::log(c.compo[ux]), -std::log(h.compo[ux]), 2e-3) << x;
        sum += c.compo[ux];
      }
      EXPECT_NEAR(sum, 1.0f, 1e-5f);
    }
  }
}

TEST(HmmModel, OccupancyRecurrence) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  const auto h = read_all_hmms((test::testdata_dir() / "hmm/globins4.hmm").string()).at(0);
  std::vector<float> mocc(static_cast<std::size_t>(h.M) + 1), iocc(static_cast<std::size_t>(h.M) + 1);
  calculate_occupancy(h, mocc.data(), iocc.data());
  EXPECT_EQ(mocc[0], 0.0f);
  EXPECT_EQ(mocc[1], h.t[0][kHMI] + h.t[0][kHMM]);
  for (int k = 2; k <= h.M; ++k) {
    const auto& tp = h.t[static_cast<std::size_t>(k - 1)];
    const double m = mocc[static_cast<std::size_t>(k - 1)];
    // The double-precision value of the recurrence, rounded once, is within one float ulp.
    const double exact = m * (static_cast<double>(tp[kHMM]) + tp[kHMI]) + (1.0 - m) * tp[kHDM];
    EXPECT_NEAR(mocc[static_cast<std::size_t>(k)], exact, 2e-7) << k;
    EXPECT_GT(mocc[static_cast<std::size_t>(k)], 0.0f);
    EXPECT_LE(mocc[static_cast<std::size_t>(k)], 1.0f + 1e-6f);
  }
  EXPECT_EQ(iocc[0], h.t[0][kHMI] / h.t[0][kHIM]);
}

TEST(HmmModel, ConsensusCasing) {
  Hmm h;
  create_body(h, 3, abc(AbcType::kDNA));
  EXPECT_EQ(h.mat[0][0], 1.0f);
  EXPECT_EQ(h.t[0][kHDM], 1.0f);
  h.mat[1] = {0.1f, 0.9f, 0.0f, 0.0f};     // C at threshold 0.9: upper
  h.mat[2] = {0.3f, 0.3f, 0.2f, 0.2f};     // tie A/C: first (A), below threshold: lower
  h.mat[3] = {0.05f, 0.05f, 0.0f, 0.89f};  // T below 0.9: lower
  set_consensus(h);
  EXPECT_EQ(h.consensus, " Cat");
  EXPECT_TRUE(h.has(kHmmCons));
  Hmm p;
  create_body(p, 2, abc(AbcType::kAmino));
  p.mat[1][5] = 0.5f;  // G at the amino threshold 0.5: upper
  p.mat[2][19] = 0.49f;
  set_consensus(p);
  EXPECT_EQ(p.consensus, " Gy");
}

// "-" reads the models from stdin (plain or gzip), as hmmsearch's `hmmsearch - seqdb`.
TEST(HmmReaderStdin, DashReadsStandardInput) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  const std::string path = (test::testdata_dir() / "hmm/fn3.hmm").string();
  const std::vector<Hmm> expected = read_all_hmms(path);
  ASSERT_EQ(expected.size(), 1u);
  const test::TempDir dir("h11_hmmfile");
  const std::string gz_path = dir / "fn3.hmm.gz";
  {
    const std::string text = test::read_file(path);
    gzFile gz = gzopen(gz_path.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(gz);
  }
  for (const std::string& input : {path, gz_path}) {
    const int saved = ::dup(0);
    ASSERT_GE(saved, 0);
    const int fd = ::open(input.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::dup2(fd, 0), 0);
    ::close(fd);
    std::vector<Hmm> got;
    try {
      got = read_all_hmms("-");
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
    ::dup2(saved, 0);
    ::close(saved);
    ASSERT_EQ(got.size(), 1u) << input;
    EXPECT_EQ(got[0].name, expected[0].name);
    EXPECT_EQ(got[0].M, expected[0].M);
    EXPECT_EQ(got[0].mat, expected[0].mat);
    EXPECT_EQ(got[0].t, expected[0].t);
  }
}

// Every input kept in fuzz/corpus/hmmfile (seeds and past findings of fuzz_hmmfile) reads or fails with
// an Error, as a model file and as a target database in both alphabets.
TEST(HmmReaderFuzzCorpus, EveryInputReadsOrFailsWithAnError) {
  const fs::path corpus = test::source_dir() / "fuzz/corpus/hmmfile";
  ASSERT_TRUE(fs::is_directory(corpus)) << corpus;
  int files = 0, models = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    ++files;
    const std::string path = entry.path().string();
    try {
      models += static_cast<int>(read_all_hmms(path).size());
    } catch (const Error& e) {
      EXPECT_FALSE(std::string(e.what()).empty());
    }
    for (const AbcType t : {AbcType::kAmino, AbcType::kDNA}) {
      try {
        const TargetDb db = read_target_db(path, abc(t));
        for (const TargetSeq& s : db.seqs) EXPECT_EQ(s.dsq.size(), static_cast<std::size_t>(s.L) + 2) << path;
      } catch (const Error& e) {
        EXPECT_FALSE(std::string(e.what()).empty());
      }
    }
  }
  EXPECT_GE(files, 10);
  EXPECT_GE(models, 9);  // the seed models
}

}  // namespace
}  // namespace warpsearch::hmm
