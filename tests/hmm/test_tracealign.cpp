// Tests of the hmmsearch -A alignment (tracealign.hpp, stockholm.hpp): hand-built alignment displays with
// the expected Stockholm text worked out from HMMER's rules (column layout, insert justification, PP
// encoding, name margins, block splitting, uniquified names), backconversion invariants, and golden
// comparisons with the installed hmmsearch: its own per-domain alignment displays are parsed from its
// --notextw main output, rebuilt into hits, and our -A file must equal its -A file byte for byte, in both
// the Stockholm (default) and Pfam (--notextw) layouts, for protein and DNA models.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/stockholm.hpp"
#include "hmm/tophits.hpp"
#include "hmm/trace.hpp"
#include "hmm/tracealign.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

const Abc& amino() { return abc(AbcType::kAmino); }

/// A display built from its three mandatory lines and optional PP line; coordinates from hmmfrom/sqfrom
/// and the line contents (model '.' = insert, aseq '-' = delete).
AliDisplay make_ad(const std::string& sqname, int hmmfrom, int64_t sqfrom, const std::string& model,
                   const std::string& aseq, const std::string& pp, int M = 10) {
  AliDisplay ad;
  ad.model = model;
  ad.aseq = aseq;
  ad.mline = std::string(model.size(), ' ');
  ad.ppline = pp;
  ad.N = static_cast<int>(model.size());
  ad.hmmname = "toy";
  ad.M = M;
  ad.sqname = sqname;
  ad.hmmfrom = hmmfrom;
  int nk = 0;
  int64_t ni = 0;
  for (std::size_t a = 0; a < model.size(); ++a) {
    if (model[a] != '.') ++nk;
    if (aseq[a] != '-') ++ni;
  }
  ad.hmmto = hmmfrom + nk - 1;
  ad.sqfrom = sqfrom;
  ad.sqto = sqfrom + ni - 1;
  ad.L = ad.sqto + 5;
  return ad;
}

Hit make_hit(const std::string& name, std::vector<AliDisplay> ads, bool included = true) {
  Hit h;
  h.name = name;
  h.flags = kIsReported | (included ? kIsIncluded : 0u);
  for (AliDisplay& ad : ads) {
    Domain d;
    d.is_reported = true;
    d.is_included = true;
    d.ad = std::move(ad);
    h.dcl.push_back(std::move(d));
  }
  h.ndom = static_cast<int>(h.dcl.size());
  return h;
}

AlignmentQuery toy_query() {
  AlignmentQuery q;
  q.name = "toy";
  q.abc = &amino();
  return q;
}

TEST(TraceAlign, BackconvertBuildsAValidTraceAndSubsequence) {
  AliDisplay ad = make_ad("seqA", 3, 11, "acd..efGH", "ACDkqE-GH", "9*8765.43");
  ad.sqdesc = "some protein";
  ad.sqacc = "P12345";
  FauxSeq sq;
  Trace tr;
  backconvert(ad, amino(), sq, tr);
  EXPECT_EQ(sq.name, "seqA/11-18");
  EXPECT_EQ(sq.desc, "[subseq from] some protein");
  EXPECT_EQ(sq.acc, "P12345");
  EXPECT_EQ(sq.n, 8);
  EXPECT_EQ(textize(sq.dsq, amino()), "ACDKQEGH");
  ASSERT_EQ(tr.N, ad.N + 6);
  EXPECT_EQ(validate_trace(tr, sq.dsq.data(), static_cast<int>(sq.n)), "");
  // S N B M3 M4 M5 I5 I5 M6 D7 M8 M9 E C T
  const std::vector<int8_t> st = {kTS, kTN, kTB, kTM, kTM, kTM, kTI, kTI, kTM, kTD, kTM, kTM, kTE, kTC, kTT};
  const std::vector<int> k = {0, 0, 0, 3, 4, 5, 5, 5, 6, 7, 8, 9, 0, 0, 0};
  EXPECT_EQ(tr.st, st);
  EXPECT_EQ(tr.k, k);
  ASSERT_TRUE(tr.has_pp);
  EXPECT_FLOAT_EQ(tr.pp[3], 0.9f);
  EXPECT_FLOAT_EQ(tr.pp[4], 1.0f);
  EXPECT_FLOAT_EQ(tr.pp[9], 0.0f);
  EXPECT_EQ(tr.M, 10);

  // Without a description the source name is used; without PP the trace has no posteriors.
  AliDisplay plain = make_ad("seqB", 1, 1, "ac", "AC", "");
  backconvert(plain, amino(), sq, tr);
  EXPECT_EQ(sq.desc, "[subseq from] seqB");
  EXPECT_FALSE(tr.has_pp);
}

TEST(TraceAlign, BackconvertRejectsInconsistentDisplays) {
  FauxSeq sq;
  Trace tr;
  AliDisplay ad = make_ad("s", 1, 1, "acd", "ACD", "999");
  ad.hmmto = 4;  // the display covers nodes 1..3 only
  EXPECT_THROW(backconvert(ad, amino(), sq, tr), Error);
  AliDisplay bad = make_ad("s", 1, 1, "acd", "A1D", "999");  // '1' is no residue symbol
  EXPECT_THROW(backconvert(bad, amino(), sq, tr), Error);
}

TEST(TraceAlign, SimpleAlignmentWithDeletionsAndLocalEnds) {
  // M = 6. seqA covers nodes 1..6 with a deletion at node 4; seqB covers nodes 2..5.
  std::vector<Hit> hits;
  hits.push_back(make_hit("seqA", {make_ad("seqA", 1, 5, "abcdef", "ACD-FG", "*99.99", 6)}));
  hits.push_back(make_hit("seqB", {make_ad("seqB", 2, 1, "bcde", "CDEF", "5555", 6)}));
  const auto ali = stockholm_alignment(hits, toy_query(), 120);
  ASSERT_TRUE(ali.has_value());
  EXPECT_EQ(ali->nseq, 2);
  // Margin: max(maxname + 1, 7 + 6, maxname + 2 + 7) with maxname = 8 ("seqA/5-9") -> 17.
  // PP_cons: node 1 '*' alone; nodes 2, 3, 5 mean(0.9f, 0.5f) = 0.7 -> '7'; node 4 '5' alone; node 6 '9'.
  const std::string expected =
      "# STOCKHOLM 1.0\n"
      "#=GF ID toy\n"
      "#=GF AU hmmsearch (HMMER 3.3.2)\n"
      "\n"
      "#=GS seqA/5-9 DE [subseq from] seqA\n"
      "#=GS seqB/1-4 DE [subseq from] seqB\n"
      "\n"
      "seqA/5-9         ACD-FG\n"
      "#=GR seqA/5-9 PP *99.99\n"
      "seqB/1-4         -CDEF-\n"
      "#=GR seqB/1-4 PP .5555.\n"
      "#=GC PP_cons     *77579\n"
      "#=GC RF          xxxxxx\n"
      "//\n";
  EXPECT_EQ(ali->text, expected);
  EXPECT_EQ(alignment_saved_line(ali, "out.sto"),
            "# Alignment of 2 hits satisfying inclusion thresholds saved to: out.sto\n");
}

TEST(TraceAlign, PosteriorCodesSurviveDecodeAndEncode) {
  // One sequence: every PP code decodes (p7_alidisplay_DecodePostProb) and re-encodes to itself, and the
  // consensus of a single row equals the row.
  std::vector<Hit> hits;
  hits.push_back(make_hit("s", {make_ad("s", 1, 1, "abcdefghijk", "ACDEFGHIKLM", "0123456789*", 11)}));
  const auto ali = stockholm_alignment(hits, toy_query(), 120);
  ASSERT_TRUE(ali.has_value());
  EXPECT_NE(ali->text.find("#=GR s/1-11 PP 0123456789*\n"), std::string::npos) << ali->text;
  EXPECT_NE(ali->text.find("#=GC PP_cons   0123456789*\n"), std::string::npos) << ali->text;
}

TEST(TraceAlign, InsertionsAreSplitHalfLeftHalfRight) {
  // M = 4. Inserts after node 2: seqA 5 residues, seqB 2, seqE 3, seqC none (five insert columns); seqD has
  // the only insert after node 1 (one column: never rejustified). A row keeps floor(n/2) of its inserted
  // residues left-justified and right-justifies the rest; PP codes move with their residues.
  std::vector<Hit> hits;
  hits.push_back(make_hit("seqA", {make_ad("seqA", 1, 1, "ab.....cd", "ACvwxyzDE", "**34567**", 4)}));
  hits.push_back(make_hit("seqB", {make_ad("seqB", 1, 1, "ab..cd", "ACpqDE", "**76**", 4)}));
  hits.push_back(make_hit("seqE", {make_ad("seqE", 1, 1, "ab...cd", "ACrstDE", "**123**", 4)}));
  hits.push_back(make_hit("seqC", {make_ad("seqC", 1, 1, "abcd", "ACDE", "****", 4)}));
  hits.push_back(make_hit("seqD", {make_ad("seqD", 1, 1, "a.bcd", "AkCDE", "*5***", 4)}));
  const auto ali = stockholm_alignment(hits, toy_query(), 120);
  ASSERT_TRUE(ali.has_value());
  const std::string expected =
      "# STOCKHOLM 1.0\n"
      "#=GF ID toy\n"
      "#=GF AU hmmsearch (HMMER 3.3.2)\n"
      "\n"
      "#=GS seqA/1-9 DE [subseq from] seqA\n"
      "#=GS seqB/1-6 DE [subseq from] seqB\n"
      "#=GS seqE/1-7 DE [subseq from] seqE\n"
      "#=GS seqC/1-4 DE [subseq from] seqC\n"
      "#=GS seqD/1-5 DE [subseq from] seqD\n"
      "\n"
      "seqA/1-9         A.CvwxyzDE\n"
      "#=GR seqA/1-9 PP *.*34567**\n"
      "seqB/1-6         A.Cp...qDE\n"
      "#=GR seqB/1-6 PP *.*7...6**\n"
      "seqE/1-7         A.Cr..stDE\n"
      "#=GR seqE/1-7 PP *.*1..23**\n"
      "seqC/1-4         A.C.....DE\n"
      "#=GR seqC/1-4 PP *.*.....**\n"
      "seqD/1-5         AkC.....DE\n"
      "#=GR seqD/1-5 PP *5*.....**\n"
      "#=GC PP_cons     *.*.....**\n"
      "#=GC RF          x.x.....xx\n"
      "//\n";
  EXPECT_EQ(ali->text, expected);
}

/// Appends `states` to a trace with posteriors: each entry (state, k, i, pp).
struct St {
  TraceState s;
  int k, i;
  float p;
};
Trace build_trace(const std::vector<St>& states, int M, int L) {
  Trace t(true);
  for (const St& x : states) t.append_with_pp(x.s, x.k, x.i, x.p);
  t.M = M;
  t.L = L;
  return t;
}

FauxSeq faux(const std::string& name, const std::string& residues) {
  FauxSeq s;
  s.name = name;
  s.dsq = digitize(residues, amino());
  s.n = static_cast<int64_t>(residues.size());
  return s;
}

TEST(TraceAlign, FlanksAreLowerCaseNTermRightJustifiedAndTrimmable) {
  // Profile traces with N and C flank residues (as hmmalign would give; hmmsearch's displays have none).
  const std::vector<FauxSeq> sq = {faux("one", "KLACWDFG"), faux("two", "PACD")};
  const std::vector<Trace> tr = {build_trace({{kTS, 0, 0, 0},
                                              {kTN, 0, 0, 0},
                                              {kTN, 0, 1, 0.6f},
                                              {kTN, 0, 2, 0.6f},
                                              {kTB, 0, 0, 0},
                                              {kTM, 1, 3, 0.6f},
                                              {kTM, 2, 4, 0.6f},
                                              {kTI, 2, 5, 0.6f},
                                              {kTM, 3, 6, 0.6f},
                                              {kTE, 0, 0, 0},
                                              {kTC, 0, 0, 0},
                                              {kTC, 0, 7, 0.6f},
                                              {kTC, 0, 8, 0.6f},
                                              {kTT, 0, 0, 0}},
                                             3, 8),
                                 build_trace({{kTS, 0, 0, 0},
                                              {kTN, 0, 0, 0},
                                              {kTN, 0, 1, 1.0f},
                                              {kTB, 0, 0, 0},
                                              {kTM, 1, 2, 1.0f},
                                              {kTM, 2, 3, 1.0f},
                                              {kTM, 3, 4, 1.0f},
                                              {kTE, 0, 0, 0},
                                              {kTC, 0, 0, 0},
                                              {kTT, 0, 0, 0}},
                                             3, 4)};
  for (std::size_t x = 0; x < tr.size(); ++x)
    ASSERT_EQ(validate_trace(tr[x], sq[x].dsq.data(), static_cast<int>(sq[x].n)), "");
  const TextMsa msa = tracealign_seqs(sq, tr, 3, kAllConsensusCols, amino());
  ASSERT_EQ(msa.alen, 8);
  EXPECT_EQ(msa.aseq[0], "klACwDfg");
  EXPECT_EQ(msa.aseq[1], ".pAC.D..");  // the N flank is right-justified; the C flank is left as placed
  EXPECT_EQ(msa.pp[0], "66666666");
  EXPECT_EQ(msa.pp[1], ".***.*..");
  EXPECT_EQ(msa.pp_cons, "..88.8..");  // mean(0.6f, 1.0f) = 0.8 -> '8'
  EXPECT_EQ(msa.rf, "..xx.x..");
  EXPECT_EQ(msa.sqname, (std::vector<std::string>{"one", "two"}));

  const TextMsa trimmed = tracealign_seqs(sq, tr, 3, kAllConsensusCols | kTrim, amino());
  EXPECT_EQ(trimmed.alen, 4);
  EXPECT_EQ(trimmed.aseq[0], "ACwD");
  EXPECT_EQ(trimmed.aseq[1], "AC.D");
  EXPECT_EQ(trimmed.pp[1], "**.*");
  EXPECT_EQ(trimmed.rf, "xx.x");
}

TEST(TraceAlign, AllDeleteColumnsCollapseUnlessAllConsensusColumns) {
  // Node 2 is deleted by every row. Without p7_ALL_CONSENSUS_COLS it gets no column, and the delete
  // must not overwrite the insert column before it (HMMER bug h77).
  std::vector<FauxSeq> sq;
  std::vector<Trace> tr;
  for (const auto& [model, aseq] :
       std::vector<std::pair<std::string, std::string>>{{"abc", "A-C"}, {"a.bc", "Am-C"}, {"abc", "K-L"}}) {
    AliDisplay ad =
        make_ad("s" + std::to_string(sq.size()), 1, 1, model, aseq, std::string(model.size(), '9'), 3);
    for (std::size_t a = 0; a < ad.ppline.size(); ++a)
      if (aseq[a] == '-') ad.ppline[a] = '.';
    sq.emplace_back();
    tr.emplace_back();
    backconvert(ad, amino(), sq.back(), tr.back());
  }
  const TextMsa collapsed = tracealign_seqs(sq, tr, 3, 0u, amino());
  EXPECT_EQ(collapsed.aseq, (std::vector<std::string>{"A.C", "AmC", "K.L"}));
  EXPECT_EQ(collapsed.rf, "x.x");
  EXPECT_EQ(collapsed.pp_cons, "9.9");
  const TextMsa full = tracealign_seqs(sq, tr, 3, kAllConsensusCols, amino());
  EXPECT_EQ(full.aseq, (std::vector<std::string>{"A.-C", "Am-C", "K.-L"}));
  EXPECT_EQ(full.rf, "x.xx");
  EXPECT_EQ(full.pp_cons, "9..9");
  EXPECT_EQ(full.pp[1], "99.9");
}

TEST(TraceAlign, OnlyIncludedDomainsOfIncludedHitsInRankOrder) {
  std::vector<Hit> hits;
  hits.push_back(make_hit(
      "first", {make_ad("first", 1, 1, "ab", "AC", "**", 2), make_ad("first", 1, 9, "ab", "DE", "**", 2)}));
  hits[0].dcl[0].is_included = false;  // reported but not included
  hits.push_back(make_hit("notinc", {make_ad("notinc", 1, 1, "ab", "FG", "**", 2)}, false));
  hits.push_back(make_hit("last", {make_ad("last", 1, 3, "ab", "HI", "**", 2)}));
  const auto ali = stockholm_alignment(hits, toy_query(), 120);
  ASSERT_TRUE(ali.has_value());
  EXPECT_EQ(ali->nseq, 2);
  EXPECT_EQ(ali->text.find("first/1-2"), std::string::npos);
  EXPECT_EQ(ali->text.find("notinc"), std::string::npos);
  const auto a = ali->text.find("\nfirst/9-10 ");
  const auto b = ali->text.find("\nlast/3-4 ");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_LT(a, b);

  // The TopHits overload ranks first (hmmsearch sorts before writing -A).
  TopHits th;
  hits[0].sortkey = 5.0;
  hits[2].sortkey = 1.0;
  th.add(hits[2]);
  th.add(hits[1]);
  th.add(hits[0]);
  th.sort_by_sortkey();
  const auto ranked = stockholm_alignment(th, toy_query(), 120);
  ASSERT_TRUE(ranked.has_value());
  EXPECT_EQ(ranked->text, ali->text);

  // Nothing included: no alignment, and hmmsearch's message.
  for (Hit& h : hits) h.flags &= ~kIsIncluded;
  const auto none = stockholm_alignment(hits, toy_query(), 120);
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(alignment_saved_line(none, "x.sto"),
            "# No hits satisfy inclusion thresholds; no alignment saved\n");
}

TEST(TraceAlign, QueryAndSequenceAnnotationAndDuplicateNames) {
  std::vector<Hit> hits;
  AliDisplay a1 = make_ad("dup", 1, 1, "abc", "ACD", "***", 3);
  a1.sqacc = "P00001";
  a1.sqdesc = "first copy";
  AliDisplay a2 = make_ad("dup", 1, 1, "abc", "ACE", "***", 3);
  hits.push_back(make_hit("dup", {a1}));
  hits.push_back(make_hit("dup", {a2}));
  AlignmentQuery q = toy_query();
  q.acc = "PF99999.1";
  q.desc = "Toy domain";
  const auto ali = stockholm_alignment(hits, q, 120);
  ASSERT_TRUE(ali.has_value());
  // Two equal names: Easel prefixes "<i>|" (one digit for nseq = 2) and warns; uniqwidth = 2, maxname = 7,
  // margin = 2 + 7 + 2 + 7 = 18.
  const std::string expected =
      "# STOCKHOLM 1.0\n"
      "# WARNING: seq names have been made unique by adding a prefix of \"<seq#>|\"\n"
      "#=GF ID toy\n"
      "#=GF AC PF99999.1\n"
      "#=GF DE Toy domain\n"
      "#=GF AU hmmsearch (HMMER 3.3.2)\n"
      "\n"
      "#=GS 0|dup/1-3 AC P00001\n"
      "\n"
      "#=GS 0|dup/1-3 DE [subseq from] first copy\n"
      "#=GS 1|dup/1-3 DE [subseq from] dup\n"
      "\n"
      "0|dup/1-3         ACD\n"
      "#=GR 0|dup/1-3 PP ***\n"
      "1|dup/1-3         ACE\n"
      "#=GR 1|dup/1-3 PP ***\n"
      "#=GC PP_cons      ***\n"
      "#=GC RF           xxx\n"
      "//\n";
  EXPECT_EQ(ali->text, expected);
}

TEST(TraceAlign, StockholmBlocksOf200ColumnsPfamOneBlock) {
  const std::string alpha = "ACDEFGHIKLMNPQRSTVWY";
  std::string model, aseq, pp;
  for (int k = 0; k < 250; ++k) {
    aseq += alpha[static_cast<std::size_t>(k) % alpha.size()];
    model += 'x';
    pp += static_cast<char>('0' + k % 10);
  }
  std::vector<Hit> hits;
  hits.push_back(make_hit("long", {make_ad("long", 1, 1, model, aseq, pp, 250)}));
  const auto sto = stockholm_alignment(hits, toy_query(), 120);
  const auto pfam = stockholm_alignment(hits, toy_query(), 0);
  ASSERT_TRUE(sto && pfam);
  const std::string head =
      "# STOCKHOLM 1.0\n#=GF ID toy\n#=GF AU hmmsearch (HMMER 3.3.2)\n\n#=GS long/1-250 DE [subseq from] "
      "long\n\n";
  auto block = [&](std::size_t from, std::size_t n) {
    return "long/1-250         " + aseq.substr(from, n) + "\n#=GR long/1-250 PP " + pp.substr(from, n) +
           "\n#=GC PP_cons       " + pp.substr(from, n) + "\n#=GC RF            " + std::string(n, 'x') +
           "\n";
  };
  EXPECT_EQ(sto->text, head + block(0, 200) + "\n" + block(200, 50) + "//\n");
  EXPECT_EQ(pfam->text, head + block(0, 250) + "//\n");

  // An explicit width splits the same way, including a last partial block.
  TextMsa msa;
  msa.name = "m";
  msa.sqname = {"a", "bb"};
  msa.sqacc = {"", ""};
  msa.sqdesc = {"", ""};
  msa.aseq = {"ABCDE", "FGHIJ"};
  msa.alen = 5;
  EXPECT_EQ(write_stockholm(msa, int64_t{2}),
            "# STOCKHOLM 1.0\n#=GF ID m\n\na  AB\nbb FG\n\na  CD\nbb HI\n\na  E\nbb J\n//\n");
}

// ---- Golden comparisons with the installed hmmsearch --------------------------------------------------

bool program_available(const std::string& name) {
  return std::system((name + " -h >/dev/null 2>&1").c_str()) == 0;
}
bool hmmsearch_available() { return program_available("hmmsearch"); }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Whitespace-separated tokens of a line with their start columns.
std::vector<std::pair<std::size_t, std::string>> tokens(const std::string& line) {
  std::vector<std::pair<std::size_t, std::string>> out;
  std::size_t p = 0;
  while ((p = line.find_first_not_of(' ', p)) != std::string::npos) {
    const std::size_t e = std::min(line.find(' ', p), line.size());
    out.emplace_back(p, line.substr(p, e - p));
    p = e;
  }
  return out;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

/// The query and its hits as hmmsearch --notextw printed them (one query per output): name, accession,
/// description and M from the header; for each reported hit (in rank order) its name and description
/// from the ">>" line, the inclusion mark of each reported domain from the domain table, and each
/// domain's alignment display (model, match, sequence and PP lines, coordinates) from its "== domain"
/// block. That is exactly the information p7_tophits_Alignment reads.
struct ParsedSearch {
  std::string name, acc, desc;
  int M = 0;
  std::vector<Hit> hits;
};

ParsedSearch parse_hmmsearch_output(const std::string& text) {
  ParsedSearch ps;
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::size_t z = 0;
  bool in_domains = false;
  std::vector<bool> included;  // per reported domain of the current hit
  for (; z < lines.size(); ++z) {
    const std::string& line = lines[z];
    if (line.rfind("Query:", 0) == 0) {
      const auto t = tokens(line);
      ps.name = t.at(1).second;
      ps.M = std::stoi(line.substr(line.find("[M=") + 3));
    } else if (line.rfind("Accession:", 0) == 0) {
      ps.acc = tokens(line).at(1).second;
    } else if (line.rfind("Description:", 0) == 0) {
      ps.desc = line.substr(line.find_first_not_of(' ', 12));
    } else if (line.rfind("Domain annotation for each sequence", 0) == 0) {
      in_domains = true;
    } else if (line.rfind("Internal pipeline statistics", 0) == 0) {
      break;
    } else if (in_domains && line.rfind(">> ", 0) == 0) {
      Hit h;
      const std::size_t e = line.find(' ', 3);
      h.name = line.substr(3, e - 3);
      h.desc = e + 2 <= line.size() ? line.substr(e + 2) : std::string();
      h.flags = kIsReported;
      ps.hits.push_back(std::move(h));
      included.clear();
    } else if (in_domains && !ps.hits.empty()) {
      const auto t = tokens(line);
      if (t.size() > 2 && is_number(t[0].second) && (t[1].second == "!" || t[1].second == "?")) {
        included.push_back(t[1].second == "!");
      } else if (line.rfind("  == domain ", 0) == 0) {
        const int dnum = std::stoi(line.substr(12));
        // Skip RF/CS/MM lines up to the model line: "<hmmname> <from> <model> <to>".
        std::size_t m = z + 1;
        while (m < lines.size()) {
          const auto mt = tokens(lines[m]);
          if (mt.size() == 4 && mt[0].second == ps.name && is_number(mt[1].second)) break;
          ++m;
        }
        const auto mt = tokens(lines.at(m));
        const auto st = tokens(lines.at(m + 2));
        AliDisplay ad;
        const std::size_t off = mt[2].first;
        ad.model = mt[2].second;
        ad.N = static_cast<int>(ad.model.size());
        ad.mline = lines[m + 1].substr(off, ad.model.size());
        ad.mline.resize(ad.model.size(), ' ');
        ad.aseq = st.at(2).second;
        const std::string& ppl = lines.at(m + 3);
        if (ppl.size() > 3 && ppl.compare(ppl.size() - 3, 3, " PP") == 0)
          ad.ppline = ppl.substr(off, ad.model.size());
        ad.hmmname = ps.name;
        ad.hmmacc = ps.acc;
        ad.hmmdesc = ps.desc;
        ad.hmmfrom = std::stoi(mt[1].second);
        ad.hmmto = std::stoi(mt[3].second);
        ad.M = ps.M;
        Hit& h = ps.hits.back();
        ad.sqname = h.name;
        ad.sqdesc = h.desc;
        ad.sqfrom = std::stoll(st[1].second);
        ad.sqto = std::stoll(st[3].second);
        Domain d;
        d.is_reported = true;
        d.is_included = included.at(static_cast<std::size_t>(dnum - 1));
        d.ad = std::move(ad);
        if (d.is_included) h.flags |= kIsIncluded;
        h.dcl.push_back(std::move(d));
        h.ndom = static_cast<int>(h.dcl.size());
        z = m + 3;
      }
    }
  }
  return ps;
}

/// Runs hmmsearch twice (--notextw main output + Pfam-layout -A; default Stockholm -A), rebuilds the hits
/// from the main output and compares our -A text for both layouts with HMMER's files.
void check_against_hmmsearch(const std::string& hmm, const std::string& db, const AbcType type,
                             int min_seqs) {
  test::TempDir dir("ws_tracealign");
  const std::string out = dir / "out.txt", pfam = dir / "pfam.sto", sto = dir / "sto.sto";
  const std::string q = "hmmsearch --notextw -o '" + out + "' -A '" + pfam + "' '" + hmm + "' '" + db + "'";
  const std::string q2 = "hmmsearch -o /dev/null -A '" + sto + "' '" + hmm + "' '" + db + "'";
  ASSERT_EQ(std::system(q.c_str()), 0) << q;
  ASSERT_EQ(std::system(q2.c_str()), 0) << q2;
  const std::string main_out = read_text(out);
  ParsedSearch ps = parse_hmmsearch_output(main_out);
  ASSERT_GT(ps.M, 0);
  AlignmentQuery query;
  query.name = ps.name;
  query.acc = ps.acc;
  query.desc = ps.desc;
  query.abc = &abc(type);
  const auto ours_pfam = stockholm_alignment(ps.hits, query, 0);
  const auto ours_sto = stockholm_alignment(ps.hits, query, 120);
  ASSERT_TRUE(ours_pfam.has_value());
  ASSERT_TRUE(ours_sto.has_value());
  EXPECT_GE(ours_pfam->nseq, min_seqs);
  EXPECT_EQ(ours_pfam->text, read_text(pfam));
  EXPECT_EQ(ours_sto->text, read_text(sto));
  // hmmsearch's own note in the main output.
  EXPECT_NE(main_out.find(alignment_saved_line(ours_pfam, pfam)), std::string::npos);
}

TEST(TraceAlignOracle, Globins4OnGlobins45) {
  WS_REQUIRE_TESTDATA("hmm/globins4.hmm");
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!hmmsearch_available()) GTEST_SKIP() << "hmmsearch not installed";
  const auto td = test::testdata_dir();
  check_against_hmmsearch((td / "hmm/globins4.hmm").string(), (td / "prot/globins45.fa").string(),
                          AbcType::kAmino, 45);
}

TEST(TraceAlignOracle, PfamModelsOnDB20k) {
  // fn3: many multi-domain hits, accession and description; Pkinase: M > 200 (two Stockholm blocks) and
  // long inserts; RRM_1: another family with inserts of every length.
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!hmmsearch_available()) GTEST_SKIP() << "hmmsearch not installed";
  const auto td = test::testdata_dir();
  for (const char* model : {"hmm/fn3.hmm", "hmm/Pkinase.hmm", "hmm/RRM_1.hmm"}) {
    SCOPED_TRACE(model);
    check_against_hmmsearch((td / model).string(), (td / "prot/mmseqs_DB20k.fasta").string(), AbcType::kAmino,
                            50);
  }
}

TEST(TraceAlignOracle, DnaModelOnEmittedSequences) {
  WS_REQUIRE_TESTDATA("hmm/MADE1.hmm");
  if (!hmmsearch_available() || !program_available("hmmemit"))
    GTEST_SKIP() << "hmmsearch/hmmemit not installed";
  test::TempDir dir("ws_tracealign_dna");
  const std::string fa = dir / "emit.fa";
  const std::string hmm = (test::testdata_dir() / "hmm/MADE1.hmm").string();
  const std::string cmd = "hmmemit -N 40 --seed 7 -p -L 300 '" + hmm + "' > '" + fa + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  check_against_hmmsearch(hmm, fa, AbcType::kDNA, 10);
}

TEST(TraceAlignOracle, SeveralQueriesAppendOneRecordEachOrNothing) {
  // hmmsearch appends one record per query with included domains to the -A file and notes each query's
  // outcome after its "//" in the main output (globins4: 45 domains; XYPPX and fn3: none on globins45).
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  WS_REQUIRE_TESTDATA("hmm/XYPPX.hmm");
  if (!hmmsearch_available() || !program_available("hmmconvert"))
    GTEST_SKIP() << "hmmsearch/hmmconvert not installed";
  const auto td = test::testdata_dir();
  test::TempDir dir("ws_tracealign_multi");
  const std::string hmms = dir / "three.hmm", out = dir / "out.txt", sto = dir / "ali.sto";
  std::string cmd = "(";
  for (const char* m : {"hmm/globins4.hmm", "hmm/XYPPX.hmm", "hmm/fn3.hmm"})
    cmd += "hmmconvert '" + (td / m).string() + "';";  // one HMMER3/f file (formats cannot be mixed)
  cmd += ") > '" + hmms + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  cmd = "hmmsearch --notextw -o '" + out + "' -A '" + sto + "' '" + hmms + "' '" +
        (td / "prot/globins45.fa").string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string main_out = read_text(out);
  std::string ours;
  std::size_t start = main_out.find("\nQuery:");
  int nqueries = 0, nrecords = 0;
  while (start != std::string::npos) {
    const std::size_t end = main_out.find("\n//\n", start);
    ASSERT_NE(end, std::string::npos);
    const ParsedSearch ps = parse_hmmsearch_output(main_out.substr(start + 1, end - start));
    AlignmentQuery query;
    query.name = ps.name;
    query.acc = ps.acc;
    query.desc = ps.desc;
    query.abc = &amino();
    const auto ali = stockholm_alignment(ps.hits, query, 0);
    if (ali) {
      ours += ali->text;
      ++nrecords;
    }
    const std::string note = alignment_saved_line(ali, sto);
    EXPECT_EQ(main_out.compare(end + 4, note.size(), note), 0) << ps.name;
    ++nqueries;
    start = main_out.find("\nQuery:", end);
  }
  EXPECT_EQ(nqueries, 3);
  EXPECT_EQ(nrecords, 1);
  EXPECT_EQ(ours, read_text(sto));
}

}  // namespace
}  // namespace warpsearch::hmm
