// Tests of the hmmsearch text outputs (output.hpp) against HMMER 3.3.2's own outputs in
// tests/golden/hmm (see PROVENANCE.md there). The hit lists are rebuilt from hmmsearch's --tblout,
// --domtblout and --notextw main output (numbers, flags, alignment lines), thresholded with threshold()
// and written again with every writer; the result must equal the golden text byte for byte (apart from
// the timing lines and the tabular tail's date/directory, which are taken from the golden file). Unit
// tests cover alignment wrapping details on hand-made displays.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hmm/output.hpp"
#include "hmm/reporting.hpp"
#include "hmm/tophits.hpp"
#include "testdata.hpp"

namespace warpsearch::hmm {
namespace {

std::string golden_path(const std::string& name) {
  return (warpsearch::test::source_dir() / "tests" / "golden" / "hmm" / name).string();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> v;
  std::size_t p = 0;
  while (p < s.size()) {
    std::size_t e = s.find('\n', p);
    if (e == std::string::npos) e = s.size();
    v.push_back(s.substr(p, e - p));
    p = e + 1;
  }
  return v;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// First n whitespace-separated fields of a line, and the text after the single space that follows them.
std::vector<std::string> fields(const std::string& line, int n, std::string* rest) {
  std::vector<std::string> f;
  std::size_t p = 0;
  for (int i = 0; i < n; i++) {
    while (p < line.size() && line[p] == ' ') p++;
    std::size_t e = line.find(' ', p);
    if (e == std::string::npos) e = line.size();
    f.push_back(line.substr(p, e - p));
    p = e;
  }
  if (rest) *rest = p + 1 <= line.size() ? line.substr(p + 1) : std::string();
  return f;
}

std::string undash(const std::string& s) { return s == "-" ? std::string() : s; }

// One query's worth of HMMER output, parsed.
struct QueryRun {
  QueryInfo q;
  std::vector<std::vector<std::string>> tbl;  // tblout fields (19 with description)
  std::vector<std::vector<std::string>> dom;  // domtblout fields (23 with description)
  std::vector<std::string> main_lines;        // this query's block of the --notextw main output
  PipelineCounts counts;
};

// Parses the --notextw main output: per query, its lines from "Query:" to "//".
std::vector<QueryRun> parse_main(const std::string& text) {
  std::vector<QueryRun> runs;
  QueryRun* cur = nullptr;
  for (const std::string& line : split_lines(text)) {
    if (starts_with(line, "Query:       ")) {
      runs.emplace_back();
      cur = &runs.back();
      std::string rest;
      auto f = fields(line, 3, &rest);
      cur->q.name = f[1];
      cur->q.M = std::stoi(f[2].substr(3));
    }
    if (!cur) continue;
    cur->main_lines.push_back(line);
    if (starts_with(line, "Accession:   ")) cur->q.acc = line.substr(13);
    if (starts_with(line, "Description: ")) cur->q.desc = line.substr(13);
    auto num = [&](const char* label, uint64_t& a, uint64_t* b) {
      if (!starts_with(line, label)) return;
      std::istringstream ss(line.substr(std::string(label).size()));
      ss >> a;
      if (b) {
        std::string paren;
        ss >> paren;
        *b = std::stoull(paren.substr(1));
      }
    };
    num("Query model(s):", cur->counts.nmodels, &cur->counts.nnodes);
    num("Target sequences:", cur->counts.nseqs, &cur->counts.nres);
    num("Passed MSV filter:", cur->counts.n_past_msv, nullptr);
    num("Passed bias filter:", cur->counts.n_past_bias, nullptr);
    num("Passed Vit filter:", cur->counts.n_past_vit, nullptr);
    num("Passed Fwd filter:", cur->counts.n_past_fwd, nullptr);
    if (line == "//") cur = nullptr;
  }
  return runs;
}

void attach_tables(std::vector<QueryRun>& runs, const std::string& tbl, const std::string& dom) {
  for (const std::string& line : split_lines(tbl)) {
    if (line.empty() || line[0] == '#') continue;
    std::string rest;
    auto f = fields(line, 18, &rest);
    f.push_back(rest);
    for (QueryRun& r : runs)
      if (r.q.name == f[2]) r.tbl.push_back(f);
  }
  for (const std::string& line : split_lines(dom)) {
    if (line.empty() || line[0] == '#') continue;
    std::string rest;
    auto f = fields(line, 22, &rest);
    f.push_back(rest);
    for (QueryRun& r : runs)
      if (r.q.name == f[3]) r.dom.push_back(f);
  }
}

// Alignment lines of the nd-th reported domain of target `showname` in a --notextw block, copied into ad.
void parse_alignment(const QueryRun& run, const std::string& showname, int nd, AliDisplay& ad) {
  const auto& L = run.main_lines;
  std::size_t z = 0;
  while (z < L.size() && L[z] != ">> " + showname && !starts_with(L[z], ">> " + showname + "  ")) z++;
  ASSERT_LT(z, L.size()) << showname;
  const std::string header = "  == domain " + std::to_string(nd) + "  ";
  while (z < L.size() && !starts_with(L[z], header)) z++;
  ASSERT_LT(z, L.size()) << showname << " domain " << nd;
  z++;
  // Annotation lines (CS, RF) end with their tag; then the model line; its alignment column gives the
  // offset of every line of the block.
  std::vector<std::pair<std::string, std::string>> pre;
  while (ends_with(L[z], " CS") || ends_with(L[z], " RF") || ends_with(L[z], " MM"))
    pre.push_back({L[z], ""}), z++;
  const std::string& model_line = L[z];
  std::string rest;
  auto f = fields(model_line, 4, &rest);
  const std::size_t col = model_line.find(' ' + f[2] + ' ', model_line.find(f[1])) + 1;
  const std::size_t n = f[2].size();
  ad.model = f[2];
  ad.N = static_cast<int>(n);
  ad.mline = L[z + 1].substr(col, n);
  ad.aseq = L[z + 2].substr(col, n);
  for (auto& [line, s] : pre) {
    if (ends_with(line, " CS")) ad.csline = line.substr(col, n);
    if (ends_with(line, " RF")) ad.rfline = line.substr(col, n);
    if (ends_with(line, " MM")) ad.mmline = line.substr(col, n);
  }
  if (z + 3 < L.size() && ends_with(L[z + 3], " PP")) ad.ppline = L[z + 3].substr(col, n);
}

// Rebuilds the hit list of one query from its tables and main-output alignments.
TopHits rebuild_hits(const QueryRun& run, bool with_alignments, bool show_acc) {
  TopHits th;
  const double Z = static_cast<double>(run.counts.nseqs);
  int rank = 0;
  for (const auto& t : run.tbl) {
    Hit h;
    h.name = t[0];
    h.acc = undash(t[1]);
    h.desc = undash(t[18]);
    h.lnP = std::log(std::stod(t[4]) / Z);
    h.score = std::stof(t[5]);
    h.pre_score = h.score + std::stof(t[6]);
    // Keep HMMER's rank: the printed E-values are too coarse to re-derive the exact order.
    h.sortkey = 1e6 - rank;
    h.seqidx = rank++;
    h.nexpected = std::stof(t[10]);
    h.nregions = std::stoi(t[11]);
    h.nclustered = std::stoi(t[12]);
    h.noverlaps = std::stoi(t[13]);
    h.nenvelopes = std::stoi(t[14]);
    h.ndom = std::stoi(t[15]);
    int nd = 0;
    for (const auto& d : run.dom) {
      if (d[0] != h.name) continue;
      Domain dom;
      dom.bitscore = std::stof(d[13]);
      dom.lnP = std::log(std::stod(d[12]) / Z);
      dom.dombias = static_cast<float>(std::stod(d[14]) * kLog2);
      dom.ad.hmmfrom = std::stoi(d[15]);
      dom.ad.hmmto = std::stoi(d[16]);
      dom.iali = dom.ad.sqfrom = std::stoll(d[17]);
      dom.jali = dom.ad.sqto = std::stoll(d[18]);
      dom.ienv = std::stoll(d[19]);
      dom.jenv = std::stoll(d[20]);
      dom.oasc = static_cast<float>(std::stod(d[21]) * (1.0 + static_cast<double>(dom.jenv - dom.ienv)));
      dom.ad.L = std::stoll(d[2]);
      dom.ad.M = std::stoi(d[5]);
      dom.ad.hmmname = run.q.name;
      dom.ad.hmmacc = run.q.acc;
      dom.ad.sqname = h.name;
      dom.ad.sqacc = h.acc;
      if (with_alignments) parse_alignment(run, (show_acc && !h.acc.empty()) ? h.acc : h.name, ++nd, dom.ad);
      h.dcl.push_back(dom);
    }
    // The best domain may be one that was not reported: rebuild it from the tblout columns.
    bool best_found = false;
    for (const Domain& d : h.dcl) {
      char a[32], b[32];
      std::snprintf(a, sizeof a, "%.1f", static_cast<double>(d.bitscore));
      std::snprintf(b, sizeof b, "%.1f", std::stod(t[8]));
      if (std::string(a) == b) best_found = true;
    }
    if (!best_found) {
      Domain dom;
      dom.bitscore = std::stof(t[8]);
      dom.lnP = std::log(std::stod(t[7]) / Z);
      dom.dombias = static_cast<float>(std::stod(t[9]) * kLog2);
      dom.iali = dom.jali = 1;
      h.dcl.push_back(dom);
    }
    // Remaining unreported domains: far below any threshold.
    while (static_cast<int>(h.dcl.size()) < h.ndom) {
      Domain dom;
      dom.bitscore = -1000.0f;
      dom.lnP = 50.0;
      h.dcl.push_back(dom);
    }
    EXPECT_EQ(static_cast<int>(h.dcl.size()), h.ndom) << h.name;
    h.best_domain = 0;
    for (int d = 0; d < h.ndom; d++)
      if (h.dcl[static_cast<std::size_t>(d)].bitscore >
          h.dcl[static_cast<std::size_t>(h.best_domain)].bitscore)
        h.best_domain = d;
    th.add(std::move(h));
  }
  th.sort_by_sortkey();
  return th;
}

// Golden text without the (time-dependent) stopwatch lines.
std::string without_timing(const std::string& text) {
  std::string out;
  for (const std::string& line : split_lines(text))
    if (!starts_with(line, "# CPU time: ") && !starts_with(line, "# Mc/sec: ")) out += line + "\n";
  return out;
}

// Splits a tabular file into its body and its comment tail ("#\n# Program: ..."), and renders the tail
// with our writer from the fields the golden file recorded.
void check_tail_and_strip(std::string& golden, const std::string& qfile, const std::string& tfile) {
  const std::size_t p = golden.find("#\n# Program:");
  ASSERT_NE(p, std::string::npos);
  const std::string tail = golden.substr(p);
  golden.resize(p);
  std::map<std::string, std::string> v;
  for (const std::string& line : split_lines(tail))
    if (line.size() > 19 && line[0] == '#') v[line.substr(2, 16)] = line.substr(19);
  std::string ours;
  write_tabular_tail(ours, v["Program:        "], qfile, tfile, v["Option settings:"], v["Current dir:    "],
                     v["Date:           "] + "\n");
  EXPECT_EQ(ours, tail);
}

struct GoldenCase {
  std::string stem;     // golden file stem
  std::string hmmfile;  // as given on the command line
  std::string seqfile;
  ReportOptions opts;  // thresholds of the run (Z and domZ are set from the search)
  UsedOptions used;    // option lines of the default-width main output
  bool show_alignments = true;
};

void run_golden(const GoldenCase& gc) {
  const std::string nw_text = read_text(golden_path(gc.stem + (gc.show_alignments ? "_nw.out" : ".out")));
  std::vector<QueryRun> runs = parse_main(nw_text);
  ASSERT_FALSE(runs.empty());
  attach_tables(runs, read_text(golden_path(gc.stem + ".tbl")), read_text(golden_path(gc.stem + ".dom")));

  std::string main_out, main_nw, tbl, dom, pfam;
  UsedOptions used = gc.used;
  write_header(main_out, gc.hmmfile, gc.seqfile, used);
  UsedOptions used_nw;
  used_nw.o = gc.stem + "_nw.out";
  used_nw.notextw = true;
  used_nw.acc = used.acc;
  used_nw.incE = used.incE;
  used_nw.incdomE = used.incdomE;
  used_nw.cpu = used.cpu;
  write_header(main_nw, gc.hmmfile, gc.seqfile, used_nw);

  for (std::size_t r = 0; r < runs.size(); r++) {
    const QueryRun& run = runs[r];
    for (int width : {120, 0}) {
      if (!gc.show_alignments && width == 0) continue;
      TopHits th = rebuild_hits(run, gc.show_alignments, gc.opts.show_accessions);
      ReportOptions opts = gc.opts;
      opts.textw = width ? gc.opts.textw : 0;
      opts.show_alignments = gc.show_alignments;
      opts.Z = static_cast<double>(run.counts.nseqs);
      threshold(th, opts);
      PipelineCounts counts = run.counts;
      std::string& out = width ? main_out : main_nw;
      write_query(out, run.q);
      write_query_results(out, th, opts, counts, nullptr);
      if (width) {
        write_tabular_targets(tbl, run.q, th, opts, r == 0);
        write_tabular_domains(dom, run.q, th, opts, r == 0);
        write_tabular_xfam(pfam, run.q, th, opts);
      }
    }
  }
  main_out += "[ok]\n";
  main_nw += "[ok]\n";

  EXPECT_EQ(main_out, without_timing(read_text(golden_path(gc.stem + ".out"))));
  if (gc.show_alignments) {
    EXPECT_EQ(main_nw, without_timing(nw_text));
  }
  for (auto [ext, ours] :
       {std::pair<std::string, std::string*>{".tbl", &tbl}, {".dom", &dom}, {".pfam", &pfam}}) {
    std::string golden = read_text(golden_path(gc.stem + ext));
    check_tail_and_strip(golden, gc.hmmfile, gc.seqfile);
    EXPECT_EQ(*ours, golden) << gc.stem << ext;
  }
}

TEST(OutputGolden, Globins4InclusionThresholds) {
  GoldenCase gc;
  gc.stem = "g4";
  gc.hmmfile = "globins4.hmm";
  gc.seqfile = "globins12.fa";
  gc.opts.incE = gc.opts.incdomE = 1e-60;
  gc.used.o = "g4.out";
  gc.used.tblout = "g4.tbl";
  gc.used.domtblout = "g4.dom";
  gc.used.pfamtblout = "g4.pfam";
  gc.used.incE = gc.used.incdomE = 1e-60;
  gc.used.cpu = 0;
  run_golden(gc);
}

TEST(OutputGolden, Fn3MultiDomainAccessions) {
  GoldenCase gc;
  gc.stem = "fn3";
  gc.hmmfile = "fn3.hmm";
  gc.seqfile = "7LESS_DROME";
  gc.opts.show_accessions = true;
  gc.used.o = "fn3.out";
  gc.used.tblout = "fn3.tbl";
  gc.used.domtblout = "fn3.dom";
  gc.used.pfamtblout = "fn3.pfam";
  gc.used.acc = true;
  gc.used.cpu = 0;
  run_golden(gc);
}

TEST(OutputGolden, MultiQueryNoAlignmentsNoHits) {
  GoldenCase gc;
  gc.stem = "multi";
  gc.hmmfile = "multi.hmm";
  gc.seqfile = "7LESS_DROME";
  gc.show_alignments = false;
  gc.opts.domE = 0.01;
  gc.opts.textw = 150;
  gc.used.o = "multi.out";
  gc.used.tblout = "multi.tbl";
  gc.used.domtblout = "multi.dom";
  gc.used.pfamtblout = "multi.pfam";
  gc.used.noali = true;
  gc.used.textw = 150;
  gc.used.domE = 0.01;
  gc.used.cpu = 0;
  run_golden(gc);
}

// Hand-made display for wrapping tests: 45 columns, inserts and deletions, RF/CS/PP lines.
AliDisplay wrap_display() {
  AliDisplay ad;
  ad.model = "abcde.ghijklmnopqrstuvwxyzabcdefghijklmnopqrs";
  ad.aseq = "ABCDEfGHIJ-LMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRS";
  ad.mline = std::string(45, '+');
  ad.ppline = std::string(45, '9');
  ad.rfline = std::string(45, 'x');
  ad.csline = std::string(45, 'H');
  ad.N = 45;
  ad.hmmname = "q";
  ad.hmmacc = "ACC01";
  ad.sqname = "target";
  ad.hmmfrom = 7;
  ad.hmmto = 50;
  ad.sqfrom = 95;
  ad.sqto = 138;  // 44 residues from 95
  ad.M = 60;
  ad.L = 200;
  return ad;
}

TEST(AliDisplayPrint, SingleBlockUnlimitedWidth) {
  AliDisplay ad = wrap_display();
  std::string out;
  write_alidisplay(out, ad, 40, 0, false);
  // namewidth 6 ("target"), coordwidth 3: annotation lines are indented 2 + 10 + 1 columns.
  const std::string pad(6 + 3 + 1, ' ');
  const std::string expect = "  " + pad + " " + ad.csline + " CS\n" + "  " + pad + " " + ad.rfline + " RF\n" +
                             "       q   7 " + ad.model + " 50 \n" + "  " + pad + " " + ad.mline + "\n" +
                             "  target  95 " + ad.aseq + " 138\n" + "  " + pad + " " + ad.ppline + " PP\n";
  EXPECT_EQ(out, expect);
}

TEST(AliDisplayPrint, WrapsAtLinewidthWithMinimumWidth) {
  AliDisplay ad = wrap_display();
  std::string out;
  // 30 - 6 - 2*3 - 5 = 13 columns would fit; the minimum of 40 wins.
  write_alidisplay(out, ad, 40, 30, true);  // --acc: the model shows its accession (5 chars)
  std::vector<std::string> lines = split_lines(out);
  ASSERT_EQ(lines.size(), 13u);  // two blocks of 6 lines and a blank line between them
  EXPECT_EQ(lines[2], "   ACC01   7 " + ad.model.substr(0, 40) + " 45 ");  // 39 match columns: 7..45
  EXPECT_EQ(lines[4], "  target  95 " + ad.aseq.substr(0, 40) + " 133");   // 39 residues: 95..133
  EXPECT_EQ(lines[6], "");
  EXPECT_EQ(lines[9], "   ACC01  46 " + ad.model.substr(40) + " 50 ");
  EXPECT_EQ(lines[11], "  target 134 " + ad.aseq.substr(40) + " 138");
}

TEST(AliDisplayPrint, BlockWithoutResiduesAndReverseCoordinates) {
  AliDisplay ad;
  ad.model = "abcdefgh";
  ad.aseq = "A------B";
  ad.mline = "        ";
  ad.N = 8;
  ad.hmmname = "m";
  ad.sqname = "s";
  ad.hmmfrom = 1;
  ad.hmmto = 8;
  ad.sqfrom = 12;  // reverse strand style coordinates count down
  ad.sqto = 11;
  std::string out;
  write_alidisplay(out, ad, 2, 2 + 1 + 4 + 5, false);  // aliwidth = 12 - 1 - 4 - 5 = 2
  std::vector<std::string> lines = split_lines(out);
  ASSERT_EQ(lines.size(), 4u * 3u + 3u);
  EXPECT_EQ(lines[0], "  m  1 ab 2 ");
  EXPECT_EQ(lines[2], "  s 12 A- 12");
  EXPECT_EQ(lines[6], "  s  - --  -");  // no residue in the block: dashes for both coordinates
  EXPECT_EQ(lines[14], "  s 11 -B 11");
}

TEST(OutputFormat, TargetsDescriptionTruncationAndNewness) {
  TopHits th;
  Hit h;
  h.name = "seq1";
  h.desc = std::string(40, 'd') + "TAIL";
  h.score = 12.34f;
  h.pre_score = 13.0f;
  h.lnP = std::log(2e-5);
  h.flags = kIsReported | kIsNew;
  h.ndom = 1;
  h.best_domain = 0;
  h.nreported = 1;
  Domain d;
  d.bitscore = 12.0f;
  d.lnP = std::log(3e-5);
  h.dcl.push_back(d);
  th.add(h);
  th.sort_by_sortkey();
  th.nreported = 1;
  ReportOptions opts;
  opts.Z = 1;
  opts.textw = 100;  // descw = max(32, 100 - 8 - 61) = 32
  std::string out;
  write_targets(out, th, opts);
  std::vector<std::string> lines = split_lines(out);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[4], "  ------ inclusion threshold ------");
  EXPECT_EQ(lines[5],
            "+     2e-05   12.3   0.7      3e-05   12.0   0.0    0.0  1  seq1      " + std::string(32, 'd'));
}

}  // namespace
}  // namespace warpsearch::hmm
