// test_oracle.cpp: warpsearch::hmmsearch::search() against the installed HMMER 3.3.2 `hmmsearch` (the
// oracle; tests skip when it is not on PATH). Each case runs both on the same model file and database and
// requires identical text: --tblout, --domtblout and --pfamtblout rows, and the main report (-o) line by
// line, which includes the hit tables, every domain table and alignment, and the pipeline pass counts;
// only '#' lines (program banner, file names, timing, dates) are left out. The oracle runs with --cpu 1
// (HMMER's hit list with several threads may keep marginal extra hits that change column widths); ours
// runs with 3 threads, so the comparison also checks thread independence.
//
// Cases: test models x globins45 / DB20k subsets, option variants (thresholds, cutoffs, --max, --nobias,
// --nonull2, -Z/--domZ, display), a multi-model file, MADE1 (DNA) against genome fragments, CUDAMPF's Pfam
// models against a DB20k subset, and planted databases (hmmemit -N 20 --seed 1 homologs + esl-shuffle
// decoys).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "hmm_test_support.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/hmmsearch.hpp"

namespace warpsearch::hmm {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> find_program(const std::string& name, const std::vector<fs::path>& extra = {}) {
  std::vector<fs::path> dirs = extra;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string d;
    while (std::getline(ss, d, ':')) dirs.emplace_back(d);
  }
  for (const fs::path& d : dirs) {
    const fs::path p = d / name;
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

std::string tdata(const std::string& rel) { return (test::testdata_dir() / rel).string(); }

// One shell word: single-quoted, embedded single quotes escaped.
std::string quote(const std::string& arg) {
  std::string out = "'";
  for (const char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Texts {
  std::string report, tbl, dom, pfam, ali;
};

using hmmtest::without_comment_lines;

// The pipeline statistics lines of a report (the pass counts), for a focused message on mismatch.
std::string pass_counts(const std::string& report) {
  std::string out;
  std::istringstream in(report);
  std::string line;
  while (std::getline(in, line)) {
    for (const char* key :
         {"Query model(s):", "Target sequences:", "Passed ", "Initial search space", "Domain search space"}) {
      if (line.rfind(key, 0) == 0) {
        out += line + "\n";
        break;
      }
    }
  }
  return out;
}

std::size_t count_lines(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += c == '\n';
  return n;
}

class Oracle : public ::testing::Test {
 protected:
  void SetUp() override {
    hmmsearch_ = find_program("hmmsearch");
    if (!hmmsearch_) GTEST_SKIP() << "HMMER's hmmsearch is not installed (oracle tests skipped)";
  }

  Texts run_hmmer(const std::string& args, const std::string& hmm, const std::string& db) {
    const std::string o = dir_ / "r.out", t = dir_ / "r.tbl", d = dir_ / "r.dom", p = dir_ / "r.pfam",
                      a = dir_ / "r.sto";
    std::filesystem::remove(a);
    const std::string cmd = *hmmsearch_ + " --cpu 1 " + args + " -o " + quote(o) + " --tblout " + quote(t) +
                            " --domtblout " + quote(d) + " --pfamtblout " + quote(p) + " -A " + quote(a) +
                            " " + quote(hmm) + " " + quote(db) + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return {test::read_file(o), test::read_file(t), test::read_file(d), test::read_file(p),
            test::read_file(a)};
  }

  static Texts run_ours(const hmmsearch::Options& options, const std::string& hmm, const std::string& db) {
    Texts r;
    hmmsearch::Sinks sinks;
    sinks.report = [&r](std::string_view s) { r.report += s; };
    sinks.tblout = [&r](std::string_view s) { r.tbl += s; };
    sinks.domtblout = [&r](std::string_view s) { r.dom += s; };
    sinks.pfamtblout = [&r](std::string_view s) { r.pfam += s; };
    sinks.alignment = [&r](std::string_view s) { r.ali += s; };
    hmmsearch::RunLabels labels;
    labels.A = "r.sto";
    hmmsearch::Options o = options;
    o.threads = 3;
    hmmsearch::search(hmm, db, o, sinks, labels);
    return r;
  }

  // Runs both and compares; returns the number of oracle tblout + domtblout rows (to check that a case
  // is not vacuous where hits are expected).
  std::size_t compare(const std::string& label, const std::string& hmmer_args,
                      const hmmsearch::Options& options, const std::string& hmm, const std::string& db) {
    SCOPED_TRACE(label + " [hmmsearch " + hmmer_args + " " + hmm + " " + db + "]");
    const Texts ref = run_hmmer(hmmer_args, hmm, db);
    const Texts ours = run_ours(options, hmm, db);
    EXPECT_FALSE(ref.report.empty());
    EXPECT_EQ(pass_counts(ours.report), pass_counts(ref.report));
    EXPECT_EQ(without_comment_lines(ours.tbl), without_comment_lines(ref.tbl));
    EXPECT_EQ(without_comment_lines(ours.dom), without_comment_lines(ref.dom));
    EXPECT_EQ(without_comment_lines(ours.pfam), without_comment_lines(ref.pfam));
    EXPECT_EQ(without_comment_lines(ours.report), without_comment_lines(ref.report));
    EXPECT_EQ(ours.ali, ref.ali);
    return count_lines(without_comment_lines(ref.tbl)) + count_lines(without_comment_lines(ref.dom));
  }

  // The first n records of a FASTA file, written into the scratch directory.
  std::string subset(const std::string& path, int n, const std::string& name) {
    const std::string all = test::read_file(path);
    std::size_t cut = 0;
    for (int i = 0; i < n && cut != std::string::npos; ++i) cut = all.find('>', cut + 1);
    const std::string out = dir_ / name;
    test::write_file(out, all.substr(0, cut == std::string::npos ? all.size() : cut));
    return out;
  }

  std::optional<std::string> hmmsearch_;
  test::TempDir dir_{"h8_oracle"};
};

TEST_F(Oracle, TestModelsAgainstGlobins45) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  std::size_t rows = 0;
  for (const char* m : {"globins4", "fn3", "Pkinase", "RRM_1", "20aa"}) {
    WS_REQUIRE_TESTDATA(std::string("hmm/") + m + ".hmm");
    rows += compare(m, "", {}, tdata(std::string("hmm/") + m + ".hmm"), tdata("prot/globins45.fa"));
  }
  EXPECT_GE(rows, 90u);  // globins4 finds all 45 globins
}

TEST_F(Oracle, TestModelsAgainstDb20kSubset) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::string db = subset(tdata("prot/mmseqs_DB20k.fasta"), 3000, "db3k.fa");
  std::size_t rows = 0;
  for (const char* m : {"globins4", "fn3", "Pkinase", "RRM_1", "SMC_N", "LuxC", "Patched", "2OG-FeII_Oxy_3",
                        "Caudal_act", "XYPPX", "M1", "20aa"}) {
    WS_REQUIRE_TESTDATA(std::string("hmm/") + m + ".hmm");
    rows += compare(m, "", {}, tdata(std::string("hmm/") + m + ".hmm"), db);
  }
  EXPECT_GE(rows, 100u);
}

TEST_F(Oracle, OptionVariants) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  const std::string db = subset(tdata("prot/mmseqs_DB20k.fasta"), 2000, "db2k.fa");
  using Set = std::function<void(hmmsearch::Options&)>;
  const std::vector<std::pair<std::string, Set>> cases = {
      {"--max", [](hmmsearch::Options& o) { o.max = true; }},
      {"--nobias", [](hmmsearch::Options& o) { o.nobias = true; }},
      {"--nonull2", [](hmmsearch::Options& o) { o.nonull2 = true; }},
      {"-T 20 --domT 15", [](hmmsearch::Options& o) { o.T = 20, o.domT = 15; }},
      {"-E 0.001 --domE 0.0001", [](hmmsearch::Options& o) { o.E = 0.001, o.domE = 0.0001; }},
      {"--incE 1e-20 --incdomE 1e-5", [](hmmsearch::Options& o) { o.incE = 1e-20, o.incdomE = 1e-5; }},
      {"--incT 50 --incdomT 30", [](hmmsearch::Options& o) { o.incT = 50, o.incdomT = 30; }},
      {"--cut_ga", [](hmmsearch::Options& o) { o.cutoffs = hmmsearch::BitCutoffs::kGA; }},
      {"--cut_nc", [](hmmsearch::Options& o) { o.cutoffs = hmmsearch::BitCutoffs::kNC; }},
      {"--cut_tc", [](hmmsearch::Options& o) { o.cutoffs = hmmsearch::BitCutoffs::kTC; }},
      {"-Z 1000000 --domZ 50", [](hmmsearch::Options& o) { o.Z = 1e6, o.domZ = 50; }},
      {"--F1 0.1 --F2 0.01 --F3 0.001", [](hmmsearch::Options& o) { o.F1 = 0.1, o.F2 = 0.01, o.F3 = 0.001; }},
      {"--acc --noali", [](hmmsearch::Options& o) { o.acc = true, o.noali = true; }},
      {"--textw 200", [](hmmsearch::Options& o) { o.textw = 200; }},
      {"--notextw", [](hmmsearch::Options& o) { o.notextw = true; }},
      {"--seed 7", [](hmmsearch::Options& o) { o.seed = 7u; }},
  };
  for (const auto& [args, set] : cases) {
    hmmsearch::Options o;
    set(o);
    for (const char* m : {"Pkinase", "fn3"}) {
      EXPECT_GT(compare(std::string(m) + " " + args, args, o, tdata(std::string("hmm/") + m + ".hmm"), db),
                0u);
    }
  }
}

TEST_F(Oracle, MultiModelFile) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  const std::string hmm = dir_ / "multi.hmm";
  test::write_file(hmm, test::read_file(tdata("hmm/globins4.hmm")) + test::read_file(tdata("hmm/fn3.hmm")) +
                            test::read_file(tdata("hmm/Pkinase.hmm")));
  const std::string db = subset(tdata("prot/mmseqs_DB20k.fasta"), 2000, "db2k.fa");
  EXPECT_GT(compare("globins4+fn3+Pkinase", "", {}, hmm, db), 50u);
}

// Models without a COMPO line (optional in the format; hmmconvert of HMMER2 files writes none): HMMER reads
// the composition as zeros, which changes the bias filter (SMC_N against 2,000 DB20k proteins: 410 targets
// pass it instead of 214, so more reach the later stages).
TEST_F(Oracle, ModelsWithoutCompoLine) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::string db = subset(tdata("prot/mmseqs_DB20k.fasta"), 2000, "db2k_nocompo.fa");
  std::size_t rows = 0;
  for (const char* m : {"SMC_N", "Pkinase", "fn3"}) {
    WS_REQUIRE_TESTDATA(std::string("hmm/") + m + ".hmm");
    std::string text = test::read_file(tdata(std::string("hmm/") + m + ".hmm"));
    const std::size_t at = text.find("\n  COMPO ");
    ASSERT_NE(at, std::string::npos) << m;
    text.erase(at + 1, text.find('\n', at + 1) - at);
    const std::string hmm = dir_ / (std::string(m) + "_nocompo.hmm");
    test::write_file(hmm, text);
    rows += compare(std::string(m) + " without COMPO", "", {}, hmm, db);
  }
  EXPECT_GE(rows, 100u);
}

TEST_F(Oracle, DnaModelAgainstGenomeFragments) {
  WS_REQUIRE_TESTDATA("hmm/MADE1.hmm");
  WS_REQUIRE_TESTDATA("dna/dna_target.fa");
  // 25 kb windows every 20 kb (HMMER's hmmsearch refuses targets over 100 kb).
  std::string seq;
  {
    std::istringstream in(test::read_file(tdata("dna/dna_target.fa")));
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '>') seq += line;
  }
  std::string fa;
  for (std::size_t i = 0; i < seq.size(); i += 20000) {
    fa += ">frag" + std::to_string(i / 20000) + " pos " + std::to_string(i + 1) + "\n";
    const std::string w = seq.substr(i, 25000);
    for (std::size_t j = 0; j < w.size(); j += 60) fa += w.substr(j, 60) + "\n";
  }
  const std::string db = dir_ / "frags.fa";
  test::write_file(db, fa);
  EXPECT_GT(compare("MADE1", "", {}, tdata("hmm/MADE1.hmm"), db), 5u);
  hmmsearch::Options max;
  max.max = true;
  compare("MADE1 --max", "--max", max, tdata("hmm/MADE1.hmm"), db);
}

TEST_F(Oracle, CudampfModelsAgainstDb20kSubset) {
  // The 24 Pfam models of the CUDAMPF benchmarks (M = 100..2405, HMMER3/b) are not redistributed with the
  // project: WARPSEARCH_CUDAMPF_MODELS names their folder (default: ../shared/data/cudampf_models).
  const char* env = std::getenv("WARPSEARCH_CUDAMPF_MODELS");
  const fs::path models =
      env != nullptr ? fs::path(env) : fs::path(WARPSEARCH_SOURCE_DIR) / "../shared/data/cudampf_models";
  if (!fs::exists(models)) GTEST_SKIP() << models << " not present (set WARPSEARCH_CUDAMPF_MODELS)";
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::string db = subset(tdata("prot/mmseqs_DB20k.fasta"), 2000, "db2k.fa");
  std::size_t rows = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(models))
    if (e.path().extension() == ".hmm") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 24u) << "expected the 24 CUDAMPF models in " << models;
  for (const fs::path& p : files) rows += compare(p.stem().string(), "", {}, p.string(), db);
  EXPECT_GT(rows, 10u);
}

TEST_F(Oracle, PlantedHomologsAmongShuffledDecoys) {
  const std::optional<std::string> hmmemit = find_program("hmmemit");
  const std::optional<std::string> shuffle = find_program("esl-shuffle", {test::testdata_dir() / "bin"});
  if (!hmmemit || !shuffle) GTEST_SKIP() << "hmmemit or esl-shuffle not installed";
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::string decoy_src = subset(tdata("prot/mmseqs_DB20k.fasta"), 1000, "decoy_src.fa");
  const std::string decoys = dir_ / "decoys.fa";
  ASSERT_EQ(
      std::system(
          (*shuffle + " --seed 1 " + quote(decoy_src) + " > " + quote(decoys) + " 2>/dev/null").c_str()),
      0);
  for (const char* m : {"Pkinase", "fn3", "globins4", "RRM_1", "SMC_N"}) {
    WS_REQUIRE_TESTDATA(std::string("hmm/") + m + ".hmm");
    const std::string hmm = tdata(std::string("hmm/") + m + ".hmm");
    const std::string emitted = dir_ / "emitted.fa";
    ASSERT_EQ(std::system((*hmmemit + " -N 20 --seed 1 " + quote(hmm) + " > " + quote(emitted)).c_str()), 0);
    const std::string db = dir_ / "planted.fa";
    test::write_file(db, test::read_file(emitted) + test::read_file(decoys));
    EXPECT_GE(compare(std::string("planted ") + m, "", {}, hmm, db), 30u);
  }
}

}  // namespace
}  // namespace warpsearch::hmm
