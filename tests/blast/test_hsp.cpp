// test_hsp.cpp: blastp's post-gapped statistics and HSP-list rules (src/blast/hsp.hpp) against BLAST+ 2.12.
//
// Oracles:
//   - libblast.so (BLAST+ 2.12's core library, dlopen()ed as tests/stats does; structs declared below as in
//     blast_stat.h / blast_hits.h / blast_query_info.h): ErfC, BLAST_ComputeLengthAdjustment,
//     BLAST_SpougeStoE, BLAST_KarlinStoE_simple bit for bit on random arguments; HSP-list purging, score /
//     E-value sorting, interval-tree containment and hit-list retention on random crafted HSP lists.
//   - blastp 2.12 itself: the E-values and bit scores of its tabular reports recomputed from score, query
//     and subject lengths and printed with BLAST's formatting, in -subject mode and against a makeblastdb
//     database (whose "Effective search space used" is checked too).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "blast/hsp.hpp"
#include "libblast.hpp"
#include "stats/blast_stats.hpp"
#include "stats/karlin.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {

using Int2 = std::int16_t;
using Int4 = std::int32_t;
using Int8 = std::int64_t;
using Boolean = std::uint8_t;

struct BlastKarlinBlk {
  double Lambda, K, logK, H, paramC;
};
struct BlastGumbelBlk {
  double Lambda, C, G, a, Alpha, Sigma, a_un, Alpha_un, b, Beta, Tau;
  Int8 db_length;
  Boolean filled;
};
struct BlastSeg {
  Int2 frame;
  Int4 offset, end, gapped_start;
};
struct BlastHSP {
  Int4 score, num_ident;
  double bit_score, evalue;
  BlastSeg query, subject;
  Int4 context;
  void* gap_info;
  Int4 num;
  Int2 comp_adjustment_method;
  void* pat_info;
  Int4 num_positives;
  void* map_info;
};
struct BlastHSPList {
  Int4 oid, query_index;
  BlastHSP** hsp_array;
  Int4 hspcnt, allocated, hsp_max;
  Boolean do_not_reallocate;
  double best_evalue;
};
struct BlastHitList {
  Int4 hsplist_count, hsplist_max;
  double worst_evalue;
  Int4 low_score;
  Boolean heapified;
  BlastHSPList** hsplist_array;
  Int4 hsplist_current;
};
struct BlastContextInfo {
  Int4 query_offset, query_length;
  Int8 eff_searchsp;
  Int4 length_adjustment, query_index;
  std::int8_t frame;
  Boolean is_valid;
  Int4 segment_flags;
};
struct BlastQueryInfo {
  Int4 first_context, last_context;
  int num_queries;
  BlastContextInfo* contexts;
  std::uint32_t max_length, min_length;
  void* pattern_info;
};

constexpr int kBlastpProgram = 0x3;  // eBlastTypeBlastp
constexpr int kQueryAndSubject = 1;  // eQueryAndSubject

class LibBlast {
 public:
  static const LibBlast* get() {
    static const LibBlast* lib = [] {
      // test::open_libblast(): nullptr when absent or under AddressSanitizer.
      if (void* h = test::open_libblast()) return static_cast<const LibBlast*>(new LibBlast(h));
      return static_cast<const LibBlast*>(nullptr);
    }();
    return lib;
  }

  double (*erfc)(double);
  Int4 (*length_adjustment)(double, double, double, double, Int4, Int8, Int4, Int4*);
  double (*spouge)(Int4, BlastKarlinBlk*, BlastGumbelBlk*, Int4, Int4);
  double (*stoe_simple)(Int4, BlastKarlinBlk*, Int8);
  Int2 (*gumbel_load)(BlastGumbelBlk*, Int4, Int4, const char*);
  Int2 (*gapped_load)(BlastKarlinBlk*, Int4, Int4, const char*, Boolean);
  Int2 (*hsp_init)(Int4, Int4, Int4, Int4, Int4, Int4, Int4, Int2, Int2, Int4, void**, BlastHSP**);
  BlastHSPList* (*hsp_list_new)(Int4);
  BlastHSPList* (*hsp_list_free)(BlastHSPList*);
  Int2 (*hsp_list_save)(BlastHSPList*, BlastHSP*);
  Int4 (*purge)(int, BlastHSPList*, Boolean);
  void (*sort_by_score)(BlastHSPList*);
  void (*sort_by_evalue)(BlastHSPList*);
  void* (*tree_init)(Int4, Int4, Int4, Int4);
  void* (*tree_free)(void*);
  Int2 (*tree_add)(BlastHSP*, void*, const BlastQueryInfo*, int);
  Boolean (*tree_contains)(const void*, const BlastHSP*, const BlastQueryInfo*, Int4);
  BlastQueryInfo* (*query_info_new)(int, int);
  BlastQueryInfo* (*query_info_free)(BlastQueryInfo*);
  BlastHitList* (*hit_list_new)(Int4);
  BlastHitList* (*hit_list_free)(BlastHitList*);
  Int2 (*hit_list_update)(BlastHitList*, BlastHSPList*);

 private:
  explicit LibBlast(void* h) {
    load(h, erfc, "ErfC");
    load(h, length_adjustment, "BLAST_ComputeLengthAdjustment");
    load(h, spouge, "BLAST_SpougeStoE");
    load(h, stoe_simple, "BLAST_KarlinStoE_simple");
    load(h, gumbel_load, "Blast_GumbelBlkLoadFromTables");
    load(h, gapped_load, "Blast_KarlinBlkGappedLoadFromTables");
    load(h, hsp_init, "Blast_HSPInit");
    load(h, hsp_list_new, "Blast_HSPListNew");
    load(h, hsp_list_free, "Blast_HSPListFree");
    load(h, hsp_list_save, "Blast_HSPListSaveHSP");
    load(h, purge, "Blast_HSPListPurgeHSPsWithCommonEndpoints");
    load(h, sort_by_score, "Blast_HSPListSortByScore");
    load(h, sort_by_evalue, "Blast_HSPListSortByEvalue");
    load(h, tree_init, "Blast_IntervalTreeInit");
    load(h, tree_free, "Blast_IntervalTreeFree");
    load(h, tree_add, "BlastIntervalTreeAddHSP");
    load(h, tree_contains, "BlastIntervalTreeContainsHSP");
    load(h, query_info_new, "BlastQueryInfoNew");
    load(h, query_info_free, "BlastQueryInfoFree");
    load(h, hit_list_new, "Blast_HitListNew");
    load(h, hit_list_free, "Blast_HitListFree");
    load(h, hit_list_update, "Blast_HitListUpdate");
  }
  template <typename F>
  static void load(void* h, F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(h, name));
    if (f == nullptr) throw std::runtime_error(std::string("libblast.so lacks ") + name);
  }
};

#define REQUIRE_LIBBLAST(lib)            \
  const LibBlast* lib = LibBlast::get(); \
  if ((lib) == nullptr) GTEST_SKIP() << "BLAST+'s libblast.so not found (set WARPSEARCH_LIBBLAST)"

}  // namespace

void PrintTo(const Hsp& h, std::ostream* os) {
  *os << "{S=" << h.score << " q=" << h.q_start << ".." << h.q_end << " s=" << h.s_start << ".." << h.s_end
      << " E=" << h.evalue << "}";
}

namespace {

std::uint64_t bits_of(double x) {
  std::uint64_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

const ScoringMatrix& matrix(const std::string& name) {
  static std::map<std::string, ScoringMatrix> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, ScoringMatrix::builtin(name)).first;
  return it->second;
}

// (matrix, gaps) pairs BLAST+ tabulates, some of them.
struct Setting {
  std::string matrix;
  GapCosts gaps;
};
const std::vector<Setting>& settings() {
  static const std::vector<Setting> s = {{"BLOSUM62", {11, 1}}, {"BLOSUM62", {9, 2}},  {"BLOSUM45", {14, 2}},
                                         {"BLOSUM80", {10, 1}}, {"PAM30", {9, 1}},     {"PAM70", {10, 1}},
                                         {"BLOSUM50", {13, 2}}, {"BLOSUM90", {10, 1}}, {"PAM250", {14, 2}}};
  return s;
}

// ------------------------------------------------------------------------------------------------------
// Functions against libblast.

TEST(HspStats, ErfcMatchesLibblastBitForBit) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937_64 rng(6);
  std::vector<double> xs = {0.0, -0.0, 1e-12, -1e-12, 0.5,   -0.5, 1.5, 2.5,
                            4.5, 5.8,  27.99, 28.0,   -28.0, -40,  40};
  std::uniform_real_distribution<double> wide(-30, 30), narrow(-3, 3);
  for (int i = 0; i < 20000; ++i) xs.push_back(i % 2 ? wide(rng) : narrow(rng));
  for (double x : xs) {
    ASSERT_EQ(bits_of(blast_erfc(x)), bits_of(lib->erfc(x))) << x;
    // BLAST's ErfC drops the last denominator coefficient on [0.5, 1.5): errors up to ~1e-8 there.
    EXPECT_NEAR(blast_erfc(x), std::erfc(x), 1e-8) << x;
  }
}

TEST(HspStats, LengthAdjustmentMatchesLibblast) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937_64 rng(7);
  int checked = 0;
  for (const Setting& st : settings()) {
    const auto g = stats::gapped_params(matrix(st.matrix), st.gaps);
    ASSERT_TRUE(g.has_value()) << st.matrix;
    for (int i = 0; i < 400; ++i) {
      const int qlen = std::uniform_int_distribution<int>(1, i % 3 == 0 ? 60 : 40000)(rng);
      const int nseqs = std::uniform_int_distribution<int>(1, i % 2 ? 5 : 2000000)(rng);
      const Int8 dblen =
          std::uniform_int_distribution<Int8>(nseqs, static_cast<Int8>(nseqs) * (i % 4 == 0 ? 20 : 800))(rng);
      Int4 expected = -1;
      const Int4 rc = lib->length_adjustment(g->K, std::log(g->K), g->alpha / g->lambda, g->beta, qlen, dblen,
                                             nseqs, &expected);
      const LengthAdjustment got =
          length_adjustment(g->K, std::log(g->K), g->alpha / g->lambda, g->beta, qlen, dblen, nseqs);
      ASSERT_EQ(got.adjustment, expected) << st.matrix << " " << qlen << " " << dblen << " " << nseqs;
      ASSERT_EQ(got.converged, rc == 0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 400 * static_cast<int>(settings().size()));
}

TEST(HspStats, SpougeAndKarlinEvaluesMatchLibblast) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937_64 rng(8);
  for (const Setting& st : settings()) {
    const auto g = stats::gapped_params(matrix(st.matrix), st.gaps);
    const auto gum = stats::gumbel_params(matrix(st.matrix), st.gaps);
    ASSERT_TRUE(g && gum) << st.matrix;
    BlastKarlinBlk kbp{};
    ASSERT_EQ(lib->gapped_load(&kbp, st.gaps.open, st.gaps.extend, st.matrix.c_str(), 0), 0);
    ASSERT_EQ(bits_of(kbp.Lambda), bits_of(g->lambda));
    ASSERT_EQ(bits_of(kbp.K), bits_of(g->K));
    kbp.logK = std::log(kbp.K);
    BlastGumbelBlk gbp{};
    ASSERT_EQ(lib->gumbel_load(&gbp, st.gaps.open, st.gaps.extend, st.matrix.c_str()), 0);
    for (int i = 0; i < 3000; ++i) {
      const int score = std::uniform_int_distribution<int>(1, i % 5 == 0 ? 3000 : 200)(rng);
      const int m = std::uniform_int_distribution<int>(1, i % 3 == 0 ? 50 : 30000)(rng);
      const int n = std::uniform_int_distribution<int>(1, i % 2 == 0 ? 50 : 30000)(rng);
      const Int8 db = i % 4 == 0 ? 0 : std::uniform_int_distribution<Int8>(n, Int8{1} << 36)(rng);
      gbp.db_length = db;
      const double expected = lib->spouge(score, &kbp, &gbp, m, n);
      ASSERT_EQ(bits_of(spouge_evalue(score, *g, *gum, m, n, db)), bits_of(expected))
          << st.matrix << " S=" << score << " m=" << m << " n=" << n << " db=" << db;
      const Int8 ss = std::uniform_int_distribution<Int8>(1, Int8{1} << 44)(rng);
      ASSERT_EQ(bits_of(karlin_evalue(score, *g, ss)), bits_of(lib->stoe_simple(score, &kbp, ss)));
    }
  }
}

// ------------------------------------------------------------------------------------------------------
// Formatting: BLAST's printf rules at the boundaries.

TEST(HspFormat, EvalueAndBitScoreStrings) {
  EXPECT_EQ(format_evalue(0.0), "0.0");
  EXPECT_EQ(format_evalue(9.9e-181), "0.0");
  EXPECT_EQ(format_evalue(3.4e-150), "3e-150");
  EXPECT_EQ(format_evalue(4.56e-50), "5e-50");
  EXPECT_EQ(format_evalue(0.00089), "9e-04");
  EXPECT_EQ(format_evalue(0.0123), "0.012");
  EXPECT_EQ(format_evalue(0.55), "0.55");
  EXPECT_EQ(format_evalue(6.62), "6.6");
  EXPECT_EQ(format_evalue(123.4), "  123");
  EXPECT_EQ(tabular_evalue(123.4), "123");
  EXPECT_EQ(tabular_evalue(5.3567e-136), "5.36e-136");
  EXPECT_EQ(tabular_evalue(0.00089), "8.90e-04");
  EXPECT_EQ(tabular_evalue(0.0009), "0.001");
  EXPECT_EQ(tabular_evalue(1e-181), "0.0");
  EXPECT_EQ(format_bit_score(9.64), " 9.6");
  EXPECT_EQ(format_bit_score(31.64), "31.6");
  EXPECT_EQ(format_bit_score(99.95), "  99");  // (long) truncation above 99.9, as BLAST
  EXPECT_EQ(format_bit_score(1234.9), "1234");
  EXPECT_EQ(format_bit_score(12345.6), "1.235e+04");
}

// ------------------------------------------------------------------------------------------------------
// End to end against blastp 2.12.

bool have_program(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

std::string run_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

// The records [first, last) of a FASTA file, and their residue counts.
struct FastaSlice {
  std::string text;
  std::vector<int> lengths;
};
FastaSlice fasta_slice(const std::string& path, int first, int last) {
  std::ifstream in(path);
  FastaSlice out;
  std::string line;
  int index = -1;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      ++index;
      if (index >= last) break;
      if (index >= first) out.lengths.push_back(0);
    }
    if (index >= first) {
      out.text += line + "\n";
      if (line[0] != '>') out.lengths.back() += static_cast<int>(line.size());
    }
  }
  return out;
}

struct TabRow {
  std::string evalue, bits;
  int score = 0, qlen = 0, slen = 0;
};
// Rows of "qseqid sseqid evalue bitscore score qlen slen", split at tabs (bit scores may start with a space).
std::vector<TabRow> parse_tab(const std::string& out) {
  std::vector<TabRow> rows;
  std::istringstream is(out);
  std::string line;
  while (std::getline(is, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string field; std::getline(ls, field, '\t');) f.push_back(field);
    if (f.size() != 7) throw std::runtime_error("bad tabular line: " + line);
    rows.push_back({f[2], f[3], std::stoi(f[4]), std::stoi(f[5]), std::stoi(f[6])});
  }
  return rows;
}

constexpr const char* kFormat = "-outfmt '6 qseqid sseqid evalue bitscore score qlen slen'";

TEST(HspBlastp, SubjectModeEvaluesAndBitScores) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_program("blastp")) GTEST_SKIP() << "blastp not installed";
  const std::string db = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  test::TempDir dir("hsp_subject");
  const FastaSlice queries = fasta_slice(db, 100, 104);
  const FastaSlice subjects = fasta_slice(db, 200, 400);
  const std::string qf = (dir.path() / "q.fa").string(), sf = (dir.path() / "s.fa").string();
  std::ofstream(qf) << queries.text;
  std::ofstream(sf) << subjects.text;
  Int8 total = 0;
  for (int l : subjects.lengths) total += l;
  int checked = 0;
  for (const Setting& st : {Setting{"BLOSUM62", {11, 1}}, Setting{"PAM30", {9, 1}}}) {
    const std::string cmd = "blastp -query " + qf + " -subject " + sf +
                            " -comp_based_stats 0 -seg no -evalue 1000 " + "-matrix " + st.matrix +
                            " -gapopen " + std::to_string(st.gaps.open) + " -gapextend " +
                            std::to_string(st.gaps.extend) + " " + kFormat;
    for (const TabRow& r : parse_tab(run_output(cmd))) {
      const auto calc = EvalueCalculator::create(matrix(st.matrix), st.gaps, r.qlen, total,
                                                 static_cast<int>(subjects.lengths.size()));
      ASSERT_TRUE(calc.has_value());
      EXPECT_EQ(tabular_evalue(calc->evalue(r.score, r.slen)), r.evalue) << st.matrix << " S=" << r.score;
      EXPECT_EQ(format_bit_score(calc->bit_score(r.score)), r.bits) << st.matrix << " S=" << r.score;
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
  // The search space of -subject mode: the subjects' totals, as for a database.
  const std::string report =
      run_output("blastp -query " + qf + " -subject " + sf + " -comp_based_stats 0 -seg no");
  std::vector<Int8> spaces;
  for (std::size_t at = 0; (at = report.find("Effective search space used: ", at)) != std::string::npos;) {
    at += std::strlen("Effective search space used: ");
    spaces.push_back(std::stoll(report.substr(at)));
  }
  ASSERT_EQ(spaces.size(), queries.lengths.size());
  const auto g = stats::gapped_params(matrix("BLOSUM62"), {11, 1});
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    EXPECT_EQ(effective_lengths(*g, queries.lengths[i], total, static_cast<int>(subjects.lengths.size()))
                  .search_space,
              spaces[i])
        << i;
  }
}

TEST(HspBlastp, DatabaseModeEvaluesAndSearchSpace) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_program("blastp") || !have_program("makeblastdb")) GTEST_SKIP() << "blastp / makeblastdb missing";
  const std::string db = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  test::TempDir dir("hsp_db");
  const FastaSlice queries = fasta_slice(db, 10, 13);
  const FastaSlice subjects = fasta_slice(db, 1000, 1600);
  const std::string qf = (dir.path() / "q.fa").string(), sf = (dir.path() / "s.fa").string();
  std::ofstream(qf) << queries.text;
  std::ofstream(sf) << subjects.text;
  const std::string dbp = (dir.path() / "db").string();
  ASSERT_EQ(std::system(("makeblastdb -dbtype prot -in " + sf + " -out " + dbp + " >/dev/null 2>&1").c_str()),
            0);
  Int8 total = 0;
  for (int l : subjects.lengths) total += l;
  const int nseqs = static_cast<int>(subjects.lengths.size());
  const std::string base =
      "blastp -query " + qf + " -db " + dbp + " -comp_based_stats 0 -seg no -evalue 1000 ";
  int checked = 0;
  for (const TabRow& r : parse_tab(run_output(base + kFormat))) {
    const auto calc = EvalueCalculator::create(matrix("BLOSUM62"), {11, 1}, r.qlen, total, nseqs);
    ASSERT_TRUE(calc.has_value());
    EXPECT_EQ(tabular_evalue(calc->evalue(r.score, r.slen)), r.evalue)
        << "S=" << r.score << " slen=" << r.slen;
    EXPECT_EQ(format_bit_score(calc->bit_score(r.score)), r.bits);
    ++checked;
  }
  EXPECT_GT(checked, 100);
  // The pairwise report's per-query "Effective search space used".
  const std::string report = run_output(base);
  std::vector<Int8> spaces;
  for (std::size_t at = 0; (at = report.find("Effective search space used: ", at)) != std::string::npos;) {
    at += std::strlen("Effective search space used: ");
    spaces.push_back(std::stoll(report.substr(at)));
  }
  ASSERT_EQ(spaces.size(), queries.lengths.size());
  const auto g = stats::gapped_params(matrix("BLOSUM62"), {11, 1});
  for (std::size_t i = 0; i < spaces.size(); ++i)
    EXPECT_EQ(effective_lengths(*g, queries.lengths[i], total, nseqs).search_space, spaces[i]) << i;
}

// blastp's subject order, HSP order, -max_hsps and -max_target_seqs against a database, with E-values
// recomputed by EvalueCalculator (exact doubles) and subject oids from the database's FASTA order.
TEST(HspBlastp, HitOrderMaxHspsAndMaxTargetSeqs) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_program("blastp") || !have_program("makeblastdb")) GTEST_SKIP() << "blastp / makeblastdb missing";
  const std::string db = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  test::TempDir dir("hsp_order");
  const FastaSlice queries = fasta_slice(db, 20, 26);
  const FastaSlice subjects = fasta_slice(db, 3000, 5000);
  const std::string qf = (dir.path() / "q.fa").string(), sf = (dir.path() / "s.fa").string();
  std::ofstream(qf) << queries.text;
  std::ofstream(sf) << subjects.text;
  const std::string dbp = (dir.path() / "db").string();
  ASSERT_EQ(std::system(("makeblastdb -dbtype prot -in " + sf + " -out " + dbp + " >/dev/null 2>&1").c_str()),
            0);
  std::map<std::string, int> oid_of;
  {
    std::istringstream is(subjects.text);
    std::string line;
    int oid = 0;
    while (std::getline(is, line))
      if (!line.empty() && line[0] == '>') oid_of[line.substr(1, line.find_first_of(" \t") - 1)] = oid++;
  }
  Int8 total = 0;
  for (int l : subjects.lengths) total += l;
  const int nseqs = static_cast<int>(subjects.lengths.size());
  const std::string base =
      "blastp -query " + qf + " -db " + dbp +
      " -comp_based_stats 0 -seg no -evalue 100 -outfmt '6 qseqid sseqid score qstart qend sstart "
      "send qlen slen' ";
  // Per query: subjects in report order, each with its HSPs in report order.
  using Report = std::map<std::string, std::vector<SubjectHits>>;
  auto parse = [&](const std::string& out) {
    Report r;
    std::istringstream is(out);
    std::string line;
    while (std::getline(is, line)) {
      std::istringstream ls(line);
      std::string q, sid;
      Hsp h;
      int qlen = 0, slen = 0;
      ls >> q >> sid >> h.score >> h.q_start >> h.q_end >> h.s_start >> h.s_end >> qlen >> slen;
      --h.q_start;  // 1-based inclusive -> 0-based half-open
      --h.s_start;
      h.evalue =
          EvalueCalculator::create(matrix("BLOSUM62"), {11, 1}, qlen, total, nseqs)->evalue(h.score, slen);
      std::vector<SubjectHits>& v = r[q];
      const int oid = oid_of.at(sid);
      if (v.empty() || v.back().oid != oid) v.push_back(SubjectHits{oid, {}});
      v.back().hsps.push_back(h);
    }
    return r;
  };
  const Report full = parse(run_output(base));
  ASSERT_EQ(full.size(), queries.lengths.size());
  int subjects_seen = 0, multi = 0;
  for (const auto& [q, lists] : full) {
    for (const SubjectHits& l : lists) {
      for (std::size_t i = 1; i < l.hsps.size(); ++i)
        EXPECT_LT(compare_hsps_by_evalue(l.hsps[i - 1], l.hsps[i]), 0);
      multi += l.hsps.size() > 1;
    }
    std::vector<SubjectHits> sorted = lists;
    select_hit_lists(sorted, sorted.size());
    for (std::size_t i = 0; i < lists.size(); ++i)
      ASSERT_EQ(sorted[i].oid, lists[i].oid) << q << " rank " << i;
    subjects_seen += static_cast<int>(lists.size());
  }
  EXPECT_GT(subjects_seen, 50);
  EXPECT_GT(multi, 0);
  // -max_hsps 1: the first HSP of each subject; -max_target_seqs 5: the first five subjects.
  const Report one = parse(run_output(base + "-max_hsps 1"));
  const Report five = parse(run_output(base + "-max_target_seqs 5"));
  for (const auto& [q, lists] : full) {
    std::vector<SubjectHits> trimmed = lists;
    for (SubjectHits& l : trimmed) trim_to_max_hsps(l.hsps, 1);
    ASSERT_EQ(one.at(q).size(), trimmed.size());
    for (std::size_t i = 0; i < trimmed.size(); ++i) EXPECT_EQ(one.at(q)[i].hsps, trimmed[i].hsps);
    std::vector<SubjectHits> top = lists;
    select_hit_lists(top, 5);
    ASSERT_EQ(five.at(q).size(), top.size());
    for (std::size_t i = 0; i < top.size(); ++i) EXPECT_EQ(five.at(q)[i].oid, top[i].oid);
  }
}

// ------------------------------------------------------------------------------------------------------
// HSP lists against libblast on random crafted lists.

// Random HSPs on a small grid so that common endpoints and containment are frequent.
std::vector<Hsp> random_hsps(std::mt19937_64& rng, int count, int span) {
  std::vector<Hsp> out;
  std::uniform_int_distribution<int> pos(0, span), len(1, span / 2), sc(20, 60);
  for (int i = 0; i < count; ++i) {
    Hsp h;
    h.q_start = pos(rng);
    h.s_start = pos(rng);
    h.q_end = h.q_start + len(rng);
    h.s_end = h.s_start + len(rng);
    h.score = sc(rng);
    h.evalue = std::exp(-0.1 * h.score) *
               (1 + 0.01 * static_cast<double>(rng() % 3));  // some ties broken differently
    if (rng() % 7 == 0) h.evalue = 1e-185 * static_cast<double>(rng() % 5 + 1);
    out.push_back(h);
  }
  return out;
}

struct LibList {
  const LibBlast* lib;
  BlastHSPList* list;
  LibList(const LibBlast* l, const std::vector<Hsp>& hsps) : lib(l), list(l->hsp_list_new(0)) {
    for (const Hsp& h : hsps) {
      BlastHSP* p = nullptr;
      lib->hsp_init(h.q_start, h.q_end, h.s_start, h.s_end, h.q_start, h.s_start, 0, 0, 0, h.score, nullptr,
                    &p);
      p->evalue = h.evalue;
      lib->hsp_list_save(list, p);
    }
  }
  ~LibList() { lib->hsp_list_free(list); }
  LibList(const LibList&) = delete;
  LibList& operator=(const LibList&) = delete;
  std::vector<Hsp> hsps() const {
    std::vector<Hsp> out;
    for (int i = 0; i < list->hspcnt; ++i) {
      const BlastHSP* p = list->hsp_array[i];
      Hsp h;
      h.score = p->score;
      h.q_start = p->query.offset;
      h.q_end = p->query.end;
      h.s_start = p->subject.offset;
      h.s_end = p->subject.end;
      h.evalue = p->evalue;
      out.push_back(h);
    }
    return out;
  }
};

TEST(HspList, PurgeAndSortMatchLibblast) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<Hsp> input = random_hsps(rng, 1 + trial % 40, trial % 2 ? 12 : 60);
    {
      LibList ref(lib, input);
      lib->purge(kBlastpProgram, ref.list, 0);  // blastp purges whatever the flag says
      lib->sort_by_score(ref.list);
      std::vector<Hsp> got = input;
      purge_common_endpoints(got);
      sort_hsps_by_score(got);
      ASSERT_EQ(got, ref.hsps()) << "trial " << trial;
    }
    {
      LibList ref(lib, input);
      lib->sort_by_evalue(ref.list);
      std::vector<Hsp> got = input;
      sort_hsps_by_evalue(got);
      // Equal keys (duplicated HSPs) may come in any order; compare the keys.
      const std::vector<Hsp> want = ref.hsps();
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(compare_hsps_by_evalue(got[i], want[i]), 0);
    }
  }
}

TEST(HspList, ContainmentMatchesLibblastIntervalTree) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937_64 rng(10);
  BlastQueryInfo* qi = lib->query_info_new(kBlastpProgram, 1);
  qi->contexts[0].query_offset = 0;
  qi->contexts[0].query_length = 200;
  qi->contexts[0].is_valid = 1;
  int removed = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    // As the traceback's final pass sees them: common endpoints purged, sorted by score.
    std::vector<Hsp> input = random_hsps(rng, 1 + trial % 40, trial % 2 ? 15 : 80);
    purge_common_endpoints(input);
    sort_hsps_by_score(input);
    LibList ref(lib, input);
    void* tree = lib->tree_init(0, 201, 0, 201);
    std::vector<Hsp> want;
    for (int i = 0; i < ref.list->hspcnt; ++i) {
      BlastHSP* p = ref.list->hsp_array[i];
      if (!lib->tree_contains(tree, p, qi, 0)) {
        lib->tree_add(p, tree, qi, kQueryAndSubject);
        want.push_back(input[static_cast<std::size_t>(i)]);
      }
    }
    lib->tree_free(tree);
    std::vector<Hsp> got = input;
    remove_contained_hsps(got);
    ASSERT_EQ(got, want) << "trial " << trial;
    removed += static_cast<int>(input.size() - got.size());
  }
  lib->query_info_free(qi);
  EXPECT_GT(removed, 500);
}

TEST(HspList, ReapAndMaxHsps) {
  std::mt19937_64 rng(11);
  std::vector<Hsp> hsps = random_hsps(rng, 50, 100);
  sort_hsps_by_evalue(hsps);
  std::vector<Hsp> reaped = hsps;
  const double cut = hsps[20].evalue;
  reap_by_evalue(reaped, cut);
  std::vector<Hsp> expected;
  for (const Hsp& h : hsps)
    if (!(h.evalue > cut)) expected.push_back(h);
  EXPECT_EQ(reaped, expected);
  std::vector<Hsp> trimmed = hsps;
  trim_to_max_hsps(trimmed, 7);
  EXPECT_EQ(trimmed, std::vector<Hsp>(hsps.begin(), hsps.begin() + 7));
  trimmed = hsps;
  trim_to_max_hsps(trimmed, 0);
  EXPECT_EQ(trimmed, hsps);
}

TEST(HspList, HitListRetentionMatchesLibblast) {
  REQUIRE_LIBBLAST(lib);
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + trial % 60;
    const int keep = 1 + static_cast<int>(rng() % 20);
    std::vector<SubjectHits> lists;
    for (int oid = 0; oid < n; ++oid) {
      SubjectHits s;
      s.oid = oid;
      s.hsps = random_hsps(rng, 1 + static_cast<int>(rng() % 3), 50);
      for (Hsp& h : s.hsps) {  // few distinct values: ties on E-value and score
        h.score = 20 + static_cast<int>(rng() % 4);
        h.evalue = rng() % 4 == 0 ? 1e-190 : std::exp(-0.2 * h.score);
      }
      sort_hsps_by_evalue(s.hsps);
      lists.push_back(std::move(s));
    }
    std::shuffle(lists.begin(), lists.end(), rng);  // any insertion order
    BlastHitList* hl = lib->hit_list_new(keep);
    std::vector<LibList*> owned;
    for (const SubjectHits& s : lists) {
      auto* l = new LibList(lib, s.hsps);
      l->list->oid = s.oid;
      lib->hit_list_update(hl, l->list);
      l->list = lib->hsp_list_new(0);  // the hit list owns (or freed) the original
      owned.push_back(l);
    }
    std::vector<int> want;
    for (int i = 0; i < hl->hsplist_count; ++i) want.push_back(hl->hsplist_array[i]->oid);
    lib->hit_list_free(hl);
    for (LibList* l : owned) delete l;
    std::vector<SubjectHits> got = lists;
    select_hit_lists(got, static_cast<std::size_t>(keep));
    std::vector<int> got_oids;
    for (const SubjectHits& s : got) got_oids.push_back(s.oid);
    std::sort(want.begin(), want.end());
    std::sort(got_oids.begin(), got_oids.end());
    ASSERT_EQ(got_oids, want) << "trial " << trial;
  }
}

TEST(HspList, HitListOrderAndPrelimSize) {
  SubjectHits a{3, {Hsp{50, 0, 10, 0, 10, 1e-10, 0, {}}}};
  SubjectHits b{7, {Hsp{50, 0, 10, 0, 10, 1e-10, 0, {}}}};
  SubjectHits c{1, {Hsp{60, 0, 10, 0, 10, 1e-200, 0, {}}}};
  SubjectHits d{2, {Hsp{70, 0, 10, 0, 10, 1e-190, 0, {}}}};  // both below 1e-180: score decides
  std::vector<SubjectHits> v = {a, b, c, d, SubjectHits{9, {}}};
  select_hit_lists(v, 10);
  std::vector<int> oids;
  for (const SubjectHits& s : v) oids.push_back(s.oid);
  EXPECT_EQ(oids, (std::vector<int>{2, 1, 7, 3}));  // equal E and score: larger oid first
  EXPECT_EQ(prelim_hitlist_size(500, false), 550);
  EXPECT_EQ(prelim_hitlist_size(1, false), 10);
  EXPECT_EQ(prelim_hitlist_size(30, false), 60);
  EXPECT_EQ(prelim_hitlist_size(500, true), 1050);
  EXPECT_EQ(prelim_hitlist_size(600, true), 1250);
}

}  // namespace
}  // namespace warpsearch::blast
