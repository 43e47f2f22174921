// test_pipeline.cpp: the hmmsearch pipeline (pipeline.hpp), the in-memory target database
// (search_internal.hpp) and the library entry point (warpsearch/hmmsearch.hpp): Easel's compensated sum,
// option rules, invariants of the hits and counters on real models and sequences, independence of the
// processing order and of the thread count, FASTA parsing rules and their errors.
// (The comparison with the installed hmmsearch is in test_oracle.cpp.)
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/bg.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmmfile.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/pipeline.hpp"
#include "hmm/profile.hpp"
#include "hmm/reporting.hpp"
#include "hmm/search_internal.hpp"
#include "hmm/stats.hpp"
#include "hmm/tophits.hpp"
#include "hmm_test_support.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/hmmsearch.hpp"

namespace warpsearch::hmm {
namespace {

std::string tdata(const std::string& rel) { return (test::testdata_dir() / rel).string(); }

// ---------------------------------------------------------------------------------------------------
// Compensated sum and options
// ---------------------------------------------------------------------------------------------------

TEST(PipelineKahan, CompensatesWhereTheNaiveFloatSumLosesTerms) {
  std::vector<float> v(1, 1.0f);
  v.insert(v.end(), 1000, 1e-8f);  // each term is below half an ulp of 1.0f: a naive float sum stays 1.0f
  float naive = 0.0f;
  for (const float x : v) naive += x;
  double exact = 0.0;
  for (const float x : v) exact += static_cast<double>(x);
  EXPECT_EQ(naive, 1.0f);
  const float k = kahan_fsum(v.data(), static_cast<int>(v.size()));
  EXPECT_NE(k, 1.0f);
  EXPECT_NEAR(static_cast<double>(k), exact, 1.2e-7);
  EXPECT_EQ(kahan_fsum(v.data(), 0), 0.0f);
  const float three[] = {0.5f, 0.25f, 0.125f};  // exact in float: same as any order
  EXPECT_EQ(kahan_fsum(three, 3), 0.875f);
}

TEST(PipelineOptionsTest, MaxAndFilterCapsAsHmmer) {
  PipelineOptions p;
  EXPECT_EQ(p.F1, 0.02);
  EXPECT_EQ(p.F2, 1e-3);
  EXPECT_EQ(p.F3, 1e-5);
  EXPECT_TRUE(p.do_biasfilter);
  EXPECT_TRUE(p.do_null2);
  EXPECT_EQ(p.seed, 42u);
  p.set_F1(3.0);
  p.set_F2(0.5);
  EXPECT_EQ(p.F1, 1.0);
  EXPECT_EQ(p.F2, 0.5);
  p.set_max();
  EXPECT_TRUE(p.do_max);
  EXPECT_FALSE(p.do_biasfilter);
  EXPECT_EQ(p.F1, 1.0);
  EXPECT_EQ(p.F2, 1.0);
  EXPECT_EQ(p.F3, 1.0);
}

// ---------------------------------------------------------------------------------------------------
// The pipeline on real data
// ---------------------------------------------------------------------------------------------------

struct Prepared {
  Hmm hmm;
  OProfile om;
  TargetDb db;
};

Prepared prepare(const std::string& hmm_rel, const std::string& db_rel) {
  HmmReader reader(tdata(hmm_rel));
  std::optional<Hmm> hmm = reader.next();
  if (!hmm) throw std::runtime_error("no model in " + hmm_rel);
  const Bg bg = make_bg(*hmm->abc);
  const Profile gm = config_profile(*hmm, bg, 100, ProfileMode::kLocal);
  Prepared p{*hmm, convert_profile(gm), read_target_db(tdata(db_rel), *hmm->abc)};
  return p;
}

// Runs one pipeline over the targets in the given order; returns the sorted hits and the counts.
struct PipelineRun {
  TopHits hits;
  PipelineCounts counts;
};

PipelineRun run_pipeline(const Prepared& p, const std::vector<std::size_t>& order,
                         const PipelineOptions& popts, const ReportOptions& ropts = {}) {
  const FlushToZeroScope ftz;
  OProfile om = p.om;
  Bg bg = make_bg(*p.hmm.abc);
  Pipeline pli(popts, ropts);
  pli.new_model(om, bg);
  PipelineRun r;
  for (const std::size_t s : order) {
    const TargetSeq& t = p.db.seqs[s];
    pli.process(om, bg, t.dsq, t.L, {t.name, t.acc, t.desc, static_cast<int64_t>(s)}, r.hits);
  }
  r.hits.sort_by_sortkey();
  r.counts = pli.counts();
  return r;
}

std::vector<std::size_t> iota_order(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(PipelineRunTest, CountersAndHitInvariantsOnGlobins) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const Prepared p = prepare("hmm/globins4.hmm", "prot/globins45.fa");
  const PipelineRun r = run_pipeline(p, iota_order(p.db.seqs.size()), PipelineOptions{});
  EXPECT_EQ(r.counts.nmodels, 1u);
  EXPECT_EQ(r.counts.nnodes, static_cast<uint64_t>(p.hmm.M));
  EXPECT_EQ(r.counts.nseqs, 45u);
  EXPECT_EQ(r.counts.nres, p.db.nres);
  EXPECT_GE(r.counts.nseqs, r.counts.n_past_msv);
  EXPECT_GE(r.counts.n_past_msv, r.counts.n_past_bias);
  EXPECT_GE(r.counts.n_past_bias, r.counts.n_past_vit);
  EXPECT_GE(r.counts.n_past_vit, r.counts.n_past_fwd);
  ASSERT_EQ(r.hits.size(), 45u);  // every globin is a strong hit of globins4
  const float tau = p.om.evparam[kFTau], lambda = p.om.evparam[kFLambda];
  for (std::size_t h = 0; h < r.hits.size(); ++h) {
    const Hit& hit = r.hits.hit(h);
    ASSERT_EQ(hit.ndom, static_cast<int>(hit.dcl.size()));
    ASSERT_GE(hit.ndom, 1);
    EXPECT_EQ(hit.lnP, exp_logsurv(hit.score, tau, lambda));
    EXPECT_EQ(hit.sortkey, -hit.lnP);
    EXPECT_EQ(hit.pre_lnP, exp_logsurv(hit.pre_score, tau, lambda));
    EXPECT_GE(hit.pre_score, hit.score);  // null2 only lowers scores
    EXPECT_EQ(hit.flags, 0u);             // flags are set by threshold() without bit cutoffs
    float best = hit.dcl[0].bitscore;
    for (const Domain& d : hit.dcl) {
      EXPECT_LE(d.ienv, d.iali);
      EXPECT_LE(d.iali, d.jali);
      EXPECT_LE(d.jali, d.jenv);
      EXPECT_GE(d.dombias, 0.0f);
      EXPECT_EQ(d.lnP, exp_logsurv(d.bitscore, tau, lambda));
      best = std::max(best, d.bitscore);
    }
    EXPECT_EQ(hit.dcl[static_cast<std::size_t>(hit.best_domain)].bitscore, best);
    if (h > 0) {
      EXPECT_GE(r.hits.hit(h - 1).sortkey, hit.sortkey);
    }
  }
}

TEST(PipelineRunTest, EmptyTargetIsCountedButNotScored) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  Prepared p = prepare("hmm/globins4.hmm", "prot/globins45.fa");
  p.db = parse_target_db(">empty\n>one\nVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHF\n", *p.hmm.abc, "mem");
  ASSERT_EQ(p.db.seqs[0].L, 0);
  const PipelineRun r = run_pipeline(p, {0}, PipelineOptions{});
  EXPECT_EQ(r.counts.nseqs, 1u);
  EXPECT_EQ(r.counts.nres, 0u);
  EXPECT_EQ(r.counts.n_past_msv, 0u);
  EXPECT_TRUE(r.hits.empty());
}

// Reseeding before each stochastic traceback and the index-based running Z make every target's result
// independent of what the pipeline saw before: any processing order gives the same sorted hit list.
TEST(PipelineRunTest, ResultsDoNotDependOnTheProcessingOrder) {
  WS_REQUIRE_TESTDATA("hmm/fn3.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  Prepared p = prepare("hmm/fn3.hmm", "prot/globins45.fa");
  {
    TargetDb big = read_target_db(tdata("prot/mmseqs_DB20k.fasta"), *p.hmm.abc);
    big.seqs.resize(1500);
    p.db = std::move(big);
  }
  PipelineOptions popts;
  popts.set_max();  // many targets reach domain definition
  std::vector<std::size_t> forward = iota_order(p.db.seqs.size());
  std::vector<std::size_t> backward(forward.rbegin(), forward.rend());
  const PipelineRun a = run_pipeline(p, forward, popts);
  const PipelineRun b = run_pipeline(p, backward, popts);
  ASSERT_GT(a.hits.size(), 5u);
  ASSERT_EQ(a.hits.size(), b.hits.size());
  EXPECT_EQ(a.counts.n_past_fwd, b.counts.n_past_fwd);
  for (std::size_t h = 0; h < a.hits.size(); ++h) {
    const Hit& x = a.hits.hit(h);
    const Hit& y = b.hits.hit(h);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.score, y.score);
    EXPECT_EQ(x.lnP, y.lnP);
    ASSERT_EQ(x.dcl.size(), y.dcl.size());
    for (std::size_t d = 0; d < x.dcl.size(); ++d) {
      EXPECT_EQ(x.dcl[d].bitscore, y.dcl[d].bitscore);
      EXPECT_EQ(x.dcl[d].ienv, y.dcl[d].ienv);
      EXPECT_EQ(x.dcl[d].jenv, y.dcl[d].jenv);
      EXPECT_EQ(x.dcl[d].ad.aseq, y.dcl[d].ad.aseq);
    }
  }
}

TEST(PipelineRunTest, MissingBitCutoffsAreAnInputError) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  const Prepared p = prepare("hmm/globins4.hmm", "prot/globins45.fa");
  ReportOptions ropts;
  ropts.set_bit_cutoffs(BitCutoffs::kGA);
  Pipeline pli(PipelineOptions{}, ropts);
  Bg bg = make_bg(*p.hmm.abc);
  try {
    pli.new_model(p.om, bg);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(e.message().find("GA bit thresholds unavailable on model globins4"), std::string::npos)
        << e.what();
  }
}

TEST(PipelineRunTest, BitCutoffsFlagHitsInThePipeline) {
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  Prepared p = prepare("hmm/Pkinase.hmm", "prot/globins45.fa");
  TargetDb big = read_target_db(tdata("prot/mmseqs_DB20k.fasta"), *p.hmm.abc);
  big.seqs.resize(800);
  p.db = std::move(big);
  ReportOptions ropts;
  ropts.set_bit_cutoffs(BitCutoffs::kGA);
  const PipelineRun r = run_pipeline(p, iota_order(p.db.seqs.size()), PipelineOptions{}, ropts);
  ASSERT_GT(r.hits.size(), 0u);
  for (std::size_t h = 0; h < r.hits.size(); ++h) {
    const Hit& hit = r.hits.hit(h);
    EXPECT_GE(hit.score, p.om.cutoff[kGA1]);  // only reportable targets enter the list
    EXPECT_NE(hit.flags & kIsReported, 0u);
    EXPECT_EQ(hit.sortkey, static_cast<double>(hit.score));  // inclusion by score sorts by score
    for (const Domain& d : hit.dcl) EXPECT_EQ(d.is_reported, d.bitscore >= p.om.cutoff[kGA2]);
  }
}

// ---------------------------------------------------------------------------------------------------
// Target database
// ---------------------------------------------------------------------------------------------------

TEST(TargetDbTest, HeadersAndResiduesFollowEaselRules) {
  const Abc& a = abc(AbcType::kAmino);
  const TargetDb db = parse_target_db(
      "\n  \n>seq1 the description  \r\nACDE fgh\r\n\tIK*\n>  seq2\n>seq3\x01more\x01x\nWY\n", a, "mem.fa");
  ASSERT_EQ(db.seqs.size(), 3u);
  EXPECT_EQ(db.seqs[0].name, "seq1");
  EXPECT_EQ(db.seqs[0].desc, "the description  ");  // trailing spaces kept, \r dropped
  EXPECT_EQ(db.seqs[0].line, 3u);
  EXPECT_EQ(db.seqs[0].L, 10);
  EXPECT_EQ(textize(db.seqs[0].dsq, a), "ACDEFGHIK*");
  EXPECT_EQ(db.seqs[0].dsq.front(), kDsqSentinel);
  EXPECT_EQ(db.seqs[0].dsq.back(), kDsqSentinel);
  EXPECT_EQ(db.seqs[1].name, "seq2");
  EXPECT_EQ(db.seqs[1].desc, "");
  EXPECT_EQ(db.seqs[1].L, 0);
  EXPECT_EQ(db.seqs[1].line, 6u);
  EXPECT_EQ(db.seqs[2].name, "seq3\x01more\x01x");  // ctrl-A is not whitespace for the name
  EXPECT_EQ(db.seqs[2].L, 2);
  EXPECT_EQ(db.nres, 12u);
}

TEST(TargetDbTest, DnaSynonymsAndDegeneracies) {
  const Abc& a = abc(AbcType::kDNA);
  const TargetDb db = parse_target_db(">d\nacgtuNRYx\n", a, "mem.fa");
  ASSERT_EQ(db.seqs.size(), 1u);
  EXPECT_EQ(textize(db.seqs[0].dsq, a), "ACGTTNRYN");
}

void expect_format_error(std::string_view text, const Abc& a, uint64_t line, const std::string& fragment) {
  try {
    parse_target_db(text, a, "bad.fa");
    ADD_FAILURE() << "no error for " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat) << e.what();
    EXPECT_EQ(e.file(), "bad.fa");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(e.message().find(fragment), std::string::npos) << e.what();
  }
}

TEST(TargetDbTest, ErrorsNameFileLineAndCharacter) {
  const Abc& amino = abc(AbcType::kAmino);
  expect_format_error(">s1\nACDE\n>s2\nAC-DE\n", amino, 4, "illegal character '-' in sequence 's2'");
  expect_format_error(">s1\nAC1\n", amino, 2, "illegal character '1'");
  expect_format_error(">s1\nACDEQ\n", abc(AbcType::kDNA), 2, "illegal character 'E'");
  expect_format_error("ACDE\n>s1\nAC\n", amino, 1, "expected a FASTA file");
  expect_format_error(">\nACDE\n", amino, 1, "no FASTA name");
  expect_format_error("", amino, 0, "empty");
  expect_format_error(" \n\n", amino, 0, "empty");
}

TEST(TargetDbTest, ReadsGzipAndReportsMissingFiles) {
  const test::TempDir dir("h8_db");
  const std::string path = dir / "db.fa.gz";
  const std::string text = ">a desc\nACDEFGHIKL\nMNPQ\n>b\nRSTVWY\n";
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(gz);
  const TargetDb db = read_target_db(path, abc(AbcType::kAmino));
  ASSERT_EQ(db.seqs.size(), 2u);
  EXPECT_EQ(db.seqs[0].L, 14);
  EXPECT_EQ(db.seqs[1].L, 6);
  EXPECT_EQ(db.seqs[0].desc, "desc");
  try {
    read_target_db(dir / "missing.fa", abc(AbcType::kAmino));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
  }
}

TEST(TargetDbTest, FastqRecordsFollowTheFastaRules) {
  const Abc& a = abc(AbcType::kAmino);
  const TargetDb db = parse_target_db(
      "\n@r1 first read \nACDE\nfgh\n+\nIIII\nIII\n\n@r2\n+r2\n@empty\n+\n@r3\r\nWY*\r\n+r3\r\n@@!\r\n", a,
      "mem.fq");
  ASSERT_EQ(db.seqs.size(), 4u);
  EXPECT_EQ(db.seqs[0].name, "r1");
  EXPECT_EQ(db.seqs[0].desc, "first read ");
  EXPECT_EQ(db.seqs[0].line, 2u);
  EXPECT_EQ(textize(db.seqs[0].dsq, a), "ACDEFGH");
  EXPECT_EQ(db.seqs[1].L, 0);
  EXPECT_EQ(db.seqs[2].name, "empty");
  EXPECT_EQ(db.seqs[3].name, "r3");
  EXPECT_EQ(textize(db.seqs[3].dsq, a), "WY*");  // quality "@@!" starts with '@': read by length
  EXPECT_EQ(db.seqs[3].line, 13u);
  EXPECT_EQ(db.nres, 10u);
  // The same records in FASTA give the same digitized targets.
  const TargetDb fa = parse_target_db(">r1 first read \nACDEfgh\n>r2\n>empty\n>r3\nWY*\n", a, "mem.fa");
  ASSERT_EQ(fa.seqs.size(), db.seqs.size());
  for (std::size_t i = 0; i < fa.seqs.size(); ++i) {
    EXPECT_EQ(fa.seqs[i].name, db.seqs[i].name);
    EXPECT_EQ(fa.seqs[i].desc, db.seqs[i].desc);
    EXPECT_EQ(fa.seqs[i].dsq, db.seqs[i].dsq);
  }
}

TEST(TargetDbTest, FastqErrorsNameFileLineAndRecord) {
  const Abc& amino = abc(AbcType::kAmino);
  expect_format_error("@r1\nACDE\n", amino, 1, "missing '+' line in FASTQ record 'r1'");
  expect_format_error("@r1\nACDE\n+\nIII\n", amino, 4, "quality length 3 differs from sequence length 4");
  expect_format_error("@r1\nACDE\n+\nIIIII\n", amino, 4, "quality length 5 differs from sequence length 4");
  expect_format_error("@r1\nAC\n+\nI\x05\n", amino, 4, "invalid quality character '\\x05'");
  expect_format_error("@r1\nAC\n+\nI\x7fI\n", amino, 4, "invalid quality character '\\x7F'");
  expect_format_error("@r1\nAC\n+r2\nII\n", amino, 3, "'+' line does not repeat the name");
  expect_format_error("@r1\nAC\n+\nII\n>r2\nAC\n", amino, 5, "expected a '@' header line");
  expect_format_error("@r1\nA1\n+\nII\n", amino, 2, "illegal character '1' in sequence 'r1'");
  expect_format_error("@\nAC\n+\nII\n", amino, 1, "no FASTQ name");
  expect_format_error(">r1\nACDEQ\n", abc(AbcType::kDNA), 2,
                      "a protein database cannot be searched with a nucleotide model");
}

// Random FASTA/FASTQ text: names, descriptions with trailing blanks, CRLF, blank lines, lines from 0 to
// 200 residues and one line of 3 MiB (longer than the 1 MiB read buffer, so it grows it).
std::string random_db_text(uint32_t seed, bool fastq) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  auto rnd = [&x](uint64_t n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x % n;
  };
  const std::string letters = "ACDEFGHIKLMNPQRSTVWYBJZOUXacdefghiklmnpqrstvwy*";
  std::string text;
  for (int r = 0; r < 400; ++r) {
    std::string seq;
    const int lines = static_cast<int>(rnd(5)) + (r == 123 ? 1 : 0);
    std::vector<std::size_t> line_lengths;
    for (int l = 0; l < lines; ++l) {
      const std::size_t n = (r == 123 && l == 0) ? (3u << 20) : rnd(201);
      line_lengths.push_back(n);
      for (std::size_t i = 0; i < n; ++i) seq += letters[rnd(letters.size())];
    }
    const std::string eol = rnd(4) == 0 ? "\r\n" : "\n";
    text += std::string(fastq ? "@" : ">") + "seq" + std::to_string(r);
    if (rnd(2) == 0) text += " description " + std::to_string(rnd(1000)) + std::string(rnd(3), ' ');
    text += eol;
    std::size_t pos = 0;
    for (const std::size_t n : line_lengths) {
      text += seq.substr(pos, n) + eol;
      pos += n;
    }
    if (fastq) {
      text += "+" + eol;
      for (std::size_t i = 0; i < seq.size(); ++i) text += static_cast<char>('!' + rnd(94));
      text += eol;
    }
    if (rnd(8) == 0) text += eol;  // blank line
  }
  return text;
}

void expect_same_db(const TargetDb& a, const TargetDb& b) {
  ASSERT_EQ(a.seqs.size(), b.seqs.size());
  EXPECT_EQ(a.nres, b.nres);
  for (std::size_t i = 0; i < a.seqs.size(); ++i) {
    EXPECT_EQ(a.seqs[i].name, b.seqs[i].name) << i;
    EXPECT_EQ(a.seqs[i].desc, b.seqs[i].desc) << i;
    EXPECT_EQ(a.seqs[i].L, b.seqs[i].L) << i;
    EXPECT_TRUE(a.seqs[i].dsq == b.seqs[i].dsq) << i;
  }
}

TEST(TargetDbTest, StreamedFilesEqualTheInMemoryParse) {
  const test::TempDir dir("h11_db");
  const Abc& a = abc(AbcType::kAmino);
  for (const bool fastq : {false, true}) {
    const std::string text = random_db_text(fastq ? 2u : 1u, fastq);
    const TargetDb expected = parse_target_db(text, a, "mem");
    ASSERT_EQ(expected.seqs.size(), 400u);
    EXPECT_GE(expected.seqs[123].L, 3 << 20);
    const std::string plain = dir / "db.txt";
    test::write_file(plain, text);
    expect_same_db(read_target_db(plain, a), expected);
    const std::string gz_path = dir / "db.txt.gz";
    gzFile gz = gzopen(gz_path.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(gz);
    expect_same_db(read_target_db(gz_path, a), expected);
  }
}

TEST(TargetDbTest, TruncatedGzipAndDirectoriesAreErrors) {
  const test::TempDir dir("h11_db");
  const std::string text = random_db_text(3, false).substr(0, 200000);
  const std::string gz_path = dir / "db.fa.gz";
  gzFile gz = gzopen(gz_path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(gz);
  const std::string whole = test::read_file(gz_path);
  test::write_file(dir / "cut.fa.gz", whole.substr(0, whole.size() / 2));
  try {
    read_target_db(dir / "cut.fa.gz", abc(AbcType::kAmino));
    FAIL() << "a truncated gzip file was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat) << e.what();
  }
  try {
    read_target_db(dir.path().string(), abc(AbcType::kAmino));
    FAIL() << "a directory was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo) << e.what();
    EXPECT_NE(e.message().find("directory"), std::string::npos) << e.what();
  }
}

// The parallel FASTA reader (blocks cut at record starts, pieces parsed on the pool) against the serial
// in-memory parse: the same records with the same header lines, or the same error (kind, message, file,
// line), for any thread count and block size. 100-byte blocks make one to a few records per block,
// blocks that grow for longer records and lines, and many pieces.
struct ReadOutcome {
  std::optional<TargetDb> db;
  std::optional<Error> error;
};

template <class F>
ReadOutcome outcome_of(F&& read) {
  ReadOutcome r;
  try {
    r.db = read();
  } catch (const Error& e) {
    r.error = e;
  }
  return r;
}

void expect_same_outcome(const ReadOutcome& got, const ReadOutcome& want, const std::string& what) {
  ASSERT_EQ(got.error.has_value(), want.error.has_value()) << what << ": "
                                                           << (got.error    ? got.error->what()
                                                               : want.error ? want.error->what()
                                                                            : "");
  if (want.error) {
    EXPECT_EQ(got.error->kind(), want.error->kind()) << what;
    EXPECT_EQ(got.error->message(), want.error->message()) << what;
    EXPECT_EQ(got.error->file(), want.error->file()) << what;
    EXPECT_EQ(got.error->line(), want.error->line()) << what;
    return;
  }
  const TargetDb& a = *got.db;
  const TargetDb& b = *want.db;
  ASSERT_EQ(a.seqs.size(), b.seqs.size()) << what;
  EXPECT_EQ(a.nres, b.nres) << what;
  EXPECT_EQ(a.path, b.path) << what;
  for (std::size_t i = 0; i < a.seqs.size(); ++i) {
    const TargetSeq& x = a.seqs[i];
    const TargetSeq& y = b.seqs[i];
    if (x.name != y.name || x.desc != y.desc || x.L != y.L || x.line != y.line || x.dsq != y.dsq) {
      ADD_FAILURE() << what << ": record " << i << " differs (" << x.name << " line " << x.line << " vs "
                    << y.name << " line " << y.line << ")";
      return;
    }
  }
}

// Writes text to path (gzip-compressed when gzip) and compares its parallel read with every thread count
// and block size against the serial parse of text.
void expect_parallel_read_is_serial(const std::string& path, const std::string& text, bool gzip,
                                    const std::vector<std::size_t>& blocks, const Abc& a) {
  if (gzip) {
    gzFile gz = gzopen(path.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(gz);
  } else {
    test::write_file(path, text);
  }
  const ReadOutcome want = outcome_of([&] { return parse_target_db(text, a, path); });
  for (const unsigned threads : {1u, 2u, 3u, 8u}) {
    for (const std::size_t block : blocks) {
      const ReadOutcome got = outcome_of([&] { return read_target_db(path, a, threads, block); });
      expect_same_outcome(got, want,
                          path + " threads " + std::to_string(threads) + " block " + std::to_string(block));
    }
  }
}

// The first records of a FASTA file, up to about max_bytes.
std::string fasta_head(const std::string& path, std::size_t max_bytes) {
  const std::string text = test::read_file(path);
  const std::size_t cut = text.find("\n>", std::min(max_bytes, text.size()));
  return cut == std::string::npos ? text : text.substr(0, cut + 1);
}

// Replaces the first residue line of the record starting at '>' number `record` (0-based) with a line
// holding an illegal character in its middle.
std::string with_illegal_char(std::string text, std::size_t record, char c) {
  std::size_t pos = 0;
  for (std::size_t r = 0; r <= record; ++r) pos = text.find('>', pos + (r > 0 ? 1 : 0));
  const std::size_t line = text.find('\n', pos) + 1;
  const std::size_t eol = text.find('\n', line);
  text[line + (eol - line) / 2] = c;
  return text;
}

TEST(TargetDbParallelTest, RealDatabasesEqualTheSerialParse) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const test::TempDir dir("h12_db");
  const Abc& a = abc(AbcType::kAmino);
  const std::vector<std::size_t> tiny = {100, 1000, 1u << 16, kTargetDbBlockBytes};
  expect_parallel_read_is_serial(dir / "globins45.fa", test::read_file(tdata("prot/globins45.fa")), false,
                                 tiny, a);
  const std::string head = fasta_head(tdata("prot/mmseqs_DB20k.fasta"), 300000);
  expect_parallel_read_is_serial(dir / "db20k_head.fa", head, false, tiny, a);
  expect_parallel_read_is_serial(dir / "db20k_head.fa.gz", head, true, {100, 4096}, a);
  const std::string whole = test::read_file(tdata("prot/mmseqs_DB20k.fasta"));
  expect_parallel_read_is_serial(dir / "db20k.fa", whole, false, {1u << 16, 1u << 20, kTargetDbBlockBytes},
                                 a);
}

TEST(TargetDbParallelTest, UnusualLayoutsEqualTheSerialParse) {
  const test::TempDir dir("h12_db");
  const Abc& a = abc(AbcType::kAmino);
  const std::vector<std::size_t> blocks = {1, 7, 100, 1000, kTargetDbBlockBytes};
  // Leading whitespace (the first '>' not at a line start), CRLF, blank lines, empty records, a record
  // '>' inside a header and a sequence line, no final newline.
  const std::string small =
      " \n\t\r\n  >first the > description \r\nACDE\r\n\r\nfgh\n>empty\n>e2 x\n\n\n>s3\nAC*DE\nKL>M\n"
      ">s4\n\n" +
      std::string(250, 'W') + "\n>last\nWY";
  expect_parallel_read_is_serial(dir / "small.fa", small, false, blocks, a);
  expect_parallel_read_is_serial(dir / "small_nl.fa", small + "\n", false, blocks, a);
  expect_parallel_read_is_serial(dir / "empty_last.fa", ">a\nAC\n>b\n", false, blocks, a);
  // Random records: CRLF, blank lines, empty sequences and a 3 MiB line (longer than the blocks).
  expect_parallel_read_is_serial(dir / "random.fa", random_db_text(5, false), false,
                                 {100, 1u << 16, kTargetDbBlockBytes}, a);
  // FASTQ (read serially; quality lines start with '@') and the start-of-file errors.
  expect_parallel_read_is_serial(dir / "random.fq", random_db_text(6, true), false, {100, 1u << 20}, a);
  expect_parallel_read_is_serial(dir / "empty.fa", "", false, blocks, a);
  expect_parallel_read_is_serial(dir / "blank.fa", " \n\r\n\n", false, blocks, a);
  expect_parallel_read_is_serial(dir / "garbage.fa", "\n\nACDE\n>s1\nAC\n", false, blocks, a);
  expect_parallel_read_is_serial(dir / "noname.fa", "\n >\nACDE\n", false, blocks, a);
}

TEST(TargetDbParallelTest, ErrorsDeepInTheFileEqualTheSerialParse) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const test::TempDir dir("h12_db");
  const Abc& amino = abc(AbcType::kAmino);
  const std::string head = fasta_head(tdata("prot/mmseqs_DB20k.fasta"), 200000);
  const std::vector<std::size_t> blocks = {100, 1000, 1u << 16, kTargetDbBlockBytes};
  // One illegal character deep in the file; two (the first one is reported, whatever piece or block
  // the second falls in); an empty name; the error on the last line without a final newline.
  const std::string one = with_illegal_char(head, 250, '-');
  expect_parallel_read_is_serial(dir / "one.fa", one, false, blocks, amino);
  expect_parallel_read_is_serial(dir / "one.fa.gz", one, true, {100, 1u << 16}, amino);
  expect_parallel_read_is_serial(dir / "two.fa", with_illegal_char(one, 251, '1'), false, blocks, amino);
  expect_parallel_read_is_serial(dir / "two_far.fa", with_illegal_char(one, 20, '9'), false, blocks, amino);
  std::string noname = head;
  noname.insert(noname.find("\n>", noname.size() / 2) + 1, ">\nACDE\n");
  expect_parallel_read_is_serial(dir / "noname.fa", noname, false, blocks, amino);
  expect_parallel_read_is_serial(dir / "last.fa", head + ">z\nAC#", false, blocks, amino);
  // A protein database read with a DNA model fails at its first protein letter.
  expect_parallel_read_is_serial(dir / "dna.fa", head, false, {100, 1u << 16}, abc(AbcType::kDNA));
  // A serial parse reports the error of a record read before a read error: so does the parallel one.
  const std::string early = with_illegal_char(head, 100, '-');  // in the first half of the file
  std::string gz_text;
  {
    const std::string path = dir / "cut.fa.gz";
    gzFile gz = gzopen(path.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, early.data(), static_cast<unsigned>(early.size())), static_cast<int>(early.size()));
    gzclose(gz);
    gz_text = test::read_file(path);
  }
  test::write_file(dir / "cut.fa.gz", gz_text.substr(0, gz_text.size() * 3 / 4));
  const std::string clean = head;
  {
    const std::string path = dir / "clean.fa.gz";
    gzFile gz = gzopen(path.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, clean.data(), static_cast<unsigned>(clean.size())), static_cast<int>(clean.size()));
    gzclose(gz);
    const std::string bytes = test::read_file(path);
    test::write_file(path, bytes.substr(0, bytes.size() * 3 / 4));
  }
  const ReadOutcome want = outcome_of([&] { return parse_target_db(early, amino, dir / "cut.fa.gz"); });
  ASSERT_TRUE(want.error.has_value());
  for (const unsigned threads : {1u, 2u, 8u}) {
    for (const std::size_t block : {100u, 1000u, 1u << 16}) {
      expect_same_outcome(
          outcome_of([&] { return read_target_db(dir / "cut.fa.gz", amino, threads, block); }), want,
          "cut.fa.gz");
      try {
        read_target_db(dir / "clean.fa.gz", amino, threads, block);
        ADD_FAILURE() << "a truncated gzip file was read";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kFormat) << e.what();
        EXPECT_NE(e.message().find("truncated gzip stream"), std::string::npos) << e.what();
      }
    }
  }
}

// A packed database gives the digitized targets of the FASTA it was made from (its codes are mapped
// through their letters to the model alphabet's Easel codes).
TEST(TargetDbTest, PackedDatabaseEqualsItsFasta) {
  const test::TempDir dir("h11_db");
  const std::string protein =
      ">p1 a protein  \nACDEFGHIKLMNPQRSTVWY\nBJZOUX*acdefghik\n>p2\nwybjzoux\n>p3 third one\nMKV\n";
  test::write_file(dir / "p.fa", protein);
  MakeDbOptions mo;
  mo.alphabet = AlphabetKind::kProtein;
  make_db(dir / "p.fa", dir / "p", mo);
  const Abc& amino = abc(AbcType::kAmino);
  expect_same_db(read_target_db(dir / "p", amino), parse_target_db(protein, amino, "p.fa"));
  expect_same_db(read_target_db(dir / "p.wsdb", amino), parse_target_db(protein, amino, "p.fa"));

  // DNA, searched with DNA and (as hmmsearch would read the FASTA) with protein models.
  const std::string dna = ">d1 dna\nACGTRYMKSWHBVDN\nacgtrymkswhbvdn\n>d2\nGATTACA\n";
  test::write_file(dir / "d.fa", dna);
  mo.alphabet = AlphabetKind::kDna;
  make_db(dir / "d.fa", dir / "d", mo);
  for (const AbcType t : {AbcType::kDNA, AbcType::kRNA, AbcType::kAmino}) {
    expect_same_db(read_target_db(dir / "d", abc(t)), parse_target_db(dna, abc(t), "d.fa"));
  }

  // A protein database with a DNA model: the first residue outside the DNA alphabet is an error.
  try {
    read_target_db(dir / "p", abc(AbcType::kDNA));
    FAIL() << "protein database read with the DNA alphabet";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat) << e.what();
    EXPECT_NE(e.message().find("residue 'E' at position 4 of sequence 'p1' (#1)"), std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find("not in the DNA alphabet of the model"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------
// Library entry point
// ---------------------------------------------------------------------------------------------------

struct Captured {
  std::string report, tbl, dom, pfam;
  hmmsearch::Summary summary;
};

Captured capture(const std::string& hmm, const std::string& db, const hmmsearch::Options& o) {
  Captured c;
  hmmsearch::Sinks sinks;
  sinks.report = [&c](std::string_view t) { c.report += t; };
  sinks.tblout = [&c](std::string_view t) { c.tbl += t; };
  sinks.domtblout = [&c](std::string_view t) { c.dom += t; };
  sinks.pfamtblout = [&c](std::string_view t) { c.pfam += t; };
  c.summary = hmmsearch::search(hmm, db, o, sinks);
  return c;
}

using hmmtest::without_comment_lines;

// Text without its "# Date:" lines.
std::string without_date(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("# Date:", 0) != 0) out += line + '\n';
  return out;
}

TEST(HmmsearchApi, OutputIsIndependentOfTheThreadCount) {
  WS_REQUIRE_TESTDATA("hmm/Pkinase.hmm");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const test::TempDir dir("h8_api");
  // Two models in one file, against the first 1500 targets of DB20k.
  const std::string hmm = dir / "two.hmm";
  test::write_file(hmm, test::read_file(tdata("hmm/fn3.hmm")) + test::read_file(tdata("hmm/Pkinase.hmm")));
  const std::string all = test::read_file(tdata("prot/mmseqs_DB20k.fasta"));
  std::size_t cut = 0;
  for (int n = 0; n < 1500; ++n) cut = all.find('>', cut + 1);
  const std::string db = dir / "db.fa";
  test::write_file(db, all.substr(0, cut));

  hmmsearch::Options o;
  o.threads = 1;
  const Captured one = capture(hmm, db, o);
  ASSERT_EQ(one.summary.models.size(), 2u);
  EXPECT_EQ(one.summary.targets, 1500u);
  EXPECT_GT(one.summary.models[0].nreported + one.summary.models[1].nreported, 10u);
  EXPECT_EQ(one.summary.models[1].name, "Pkinase");
  EXPECT_EQ(one.summary.models[1].Z, 1500.0);
  EXPECT_EQ(one.summary.models[1].domZ, static_cast<double>(one.summary.models[1].nreported));
  for (const unsigned threads : {2u, 3u, 8u}) {
    o.threads = threads;
    const Captured c = capture(hmm, db, o);
    EXPECT_EQ(without_comment_lines(c.report), without_comment_lines(one.report)) << threads;
    EXPECT_EQ(without_comment_lines(c.tbl), without_comment_lines(one.tbl)) << threads;
    EXPECT_EQ(without_comment_lines(c.dom), without_comment_lines(one.dom)) << threads;
    // pfamtblout's section headers are '#' lines, so only its tail's date line (which differs between
    // runs started in different seconds) is left out.
    EXPECT_EQ(without_date(c.pfam), without_date(one.pfam)) << threads;
  }
  // The report holds one block per model, the tables one header (first model) and one tail.
  EXPECT_NE(one.report.find("Query:       fn3  [M="), std::string::npos);
  EXPECT_NE(one.report.find("Query:       Pkinase  [M="), std::string::npos);
  EXPECT_EQ(one.report.substr(one.report.size() - 5), "[ok]\n");
  const std::size_t header = one.tbl.find("# target name");
  ASSERT_NE(header, std::string::npos);
  EXPECT_EQ(one.tbl.find("# target name", header + 1), std::string::npos);
  EXPECT_NE(one.tbl.find("# [ok]\n"), std::string::npos);
}

TEST(HmmsearchApi, ValidatesOptionsAsHmmsearch) {
  hmmsearch::Options o;
  o.E = 0.0;
  EXPECT_THROW(hmmsearch::validate(o), Error);
  o = {};
  o.E = 1.0;
  o.T = 20.0;
  EXPECT_THROW(hmmsearch::validate(o), Error);
  o = {};
  o.textw = 100;
  EXPECT_THROW(hmmsearch::validate(o), Error);
  o = {};
  o.max = true;
  o.F1 = 0.1;
  EXPECT_THROW(hmmsearch::validate(o), Error);
  o = {};
  o.cutoffs = hmmsearch::BitCutoffs::kTC;
  o.incdomE = 0.1;
  EXPECT_THROW(hmmsearch::validate(o), Error);
  o = {};
  o.T = -5.0;
  o.domT = 3.0;
  o.textw = 120;
  o.max = true;
  EXPECT_NO_THROW(hmmsearch::validate(o));
  try {
    o = {};
    o.Z = -1.0;
    hmmsearch::validate(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("-Z"), std::string::npos);
  }
}

// FASTA, FASTQ and packed database forms of one database give identical outputs.
TEST(HmmsearchApi, PackedDatabaseAndFastqGiveTheFastaResults) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const test::TempDir dir("h11_api");
  const std::string hmm = dir / "two.hmm";
  test::write_file(hmm, test::read_file(tdata("hmm/globins4.hmm")) + test::read_file(tdata("hmm/fn3.hmm")));
  // globins45 plus 1000 DB20k targets, as FASTA, as FASTQ and as a packed database.
  const std::string all = test::read_file(tdata("prot/mmseqs_DB20k.fasta"));
  std::size_t cut = 0;
  for (int n = 0; n < 1000; ++n) cut = all.find('>', cut + 1);
  const std::string fasta = test::read_file(tdata("prot/globins45.fa")) + all.substr(0, cut);
  test::write_file(dir / "db.fa", fasta);
  const TargetDb parsed = parse_target_db(fasta, abc(AbcType::kAmino), "db.fa");
  std::string fastq;
  for (const TargetSeq& t : parsed.seqs) {
    const std::string residues = textize(t.dsq, abc(AbcType::kAmino));
    fastq += "@" + t.name + (t.desc.empty() ? "" : " " + t.desc) + "\n" + residues + "\n+\n" +
             std::string(residues.size(), 'I') + "\n";
  }
  test::write_file(dir / "db.fq", fastq);
  make_db(dir / "db.fa", dir / "packed");

  hmmsearch::Options o;
  o.threads = 2;
  const Captured fa = capture(hmm, dir / "db.fa", o);
  ASSERT_EQ(fa.summary.models.size(), 2u);
  EXPECT_EQ(fa.summary.targets, 1045u);
  EXPECT_GE(fa.summary.models[0].nreported, 45u);
  for (const std::string& db : {dir / "db.fq", dir / "packed", dir / "packed.wsdb"}) {
    const Captured c = capture(hmm, db, o);
    EXPECT_EQ(without_comment_lines(c.report), without_comment_lines(fa.report)) << db;
    EXPECT_EQ(without_comment_lines(c.tbl), without_comment_lines(fa.tbl)) << db;
    EXPECT_EQ(without_comment_lines(c.dom), without_comment_lines(fa.dom)) << db;
    EXPECT_EQ(without_comment_lines(c.pfam), without_comment_lines(fa.pfam)) << db;
  }
}

// hmmsearch digitizes the database in the model's alphabet: a DNA model with a protein database fails at
// the first letter outside the DNA alphabet (before any output); a protein model reads DNA as protein.
TEST(HmmsearchApi, AlphabetMismatchBehavesAsHmmsearch) {
  WS_REQUIRE_TESTDATA("hmm/MADE1.hmm");
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("dna/humanMito.fa");
  Captured c;
  hmmsearch::Sinks sinks;
  sinks.report = [&c](std::string_view t) { c.report += t; };
  sinks.tblout = [&c](std::string_view t) { c.tbl += t; };
  try {
    hmmsearch::search(tdata("hmm/MADE1.hmm"), tdata("prot/globins45.fa"), {}, sinks);
    FAIL() << "a protein database was searched with a DNA model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat);
    EXPECT_EQ(e.file(), tdata("prot/globins45.fa"));
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(e.message().find("illegal character 'L' in sequence 'MYG_ESCGI' for the DNA alphabet"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c.report, "");
  EXPECT_EQ(c.tbl, "");
  const Captured dna = capture(tdata("hmm/globins4.hmm"), tdata("dna/humanMito.fa"), {});
  EXPECT_EQ(dna.summary.targets, 1u);
  EXPECT_EQ(dna.summary.residues, 16571u);
}

}  // namespace
}  // namespace warpsearch::hmm
