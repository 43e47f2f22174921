// test_output.cpp: the text formats of `warpsearch scan` (src/scan/output.hpp) on handcrafted
// QueryResults whose every expected character was worked out by hand from the conventions in
// docs/SCAN.md: TSV (plus and minus strand, without traceback), SAM (hard clips swapping on the minus
// strand, FLAG 16/256, tags), PAF (tp:A:P/S), the view (rows of 60 columns, coordinates on both rows,
// descending minus-strand target positions, rows made only of gaps), headers once per output, and
// E-values formatted as blastn 2.12.0 -outfmt 6 prints them (values observed with -searchsp).
//
// The example: query q1 (30 residues) against chrA (50 residues):
//   q1   GGATCACAGTCTACACTGCTCACTCCAACC
//   chrA CCGGCCCCTGATCATAGGTCTAGGGTGCTTTTGAGTGTGTATACCACTGG
// hit 1, plus:  q1[2,12) ATCAC AG-TCT vs chrA[10,21) ATCATAGGTCT: 4=1X2=1D3=, 9 matches, 1 mismatch,
//               1 gap column, 11 columns, score 9*5 - 3 - (8 + 1) = 33
// hit 2, minus: q1[20,28) CACTCCAA vs the reverse complement of chrA[30,37) (CACTCAA): seen along the
//               forward target, the reverse-complemented query rcq[2,10) against chrA[30,37) is 3=1I4=;
//               read from the query's side 4=1I3=; 7 matches, 1 gap column, score 35 - 9 = 26
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scan/output.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::scan {
namespace {

constexpr const char* kQuery = "GGATCACAGTCTACACTGCTCACTCCAACC";
constexpr const char* kChrA = "CCGGCCCCTGATCATAGGTCTAGGGTGCTTTTGAGTGTGTATACCACTGG";

Hit plus_hit() {
  Hit h;
  h.target_index = 0;
  h.target_name = "chrA";
  h.target_length = 50;
  h.minus = false;
  h.score = 33;
  h.query_begin = 2;
  h.query_end = 12;
  h.target_begin = 10;
  h.target_end = 21;
  h.cigar = "4=1X2=1D3=";
  h.matches = 9;
  h.mismatches = 1;
  h.gap_opens = 1;
  h.gap_columns = 1;
  h.length = 11;
  h.evalue = 4.67e-32;
  h.bits = 15.25;
  return h;
}

Hit minus_hit() {
  Hit h;
  h.target_index = 0;
  h.target_name = "chrA";
  h.target_length = 50;
  h.minus = true;
  h.score = 26;
  h.query_begin = 20;
  h.query_end = 28;
  h.target_begin = 30;
  h.target_end = 37;
  h.cigar = "3=1I4=";
  h.matches = 7;
  h.mismatches = 0;
  h.gap_opens = 1;
  h.gap_columns = 1;
  h.length = 8;
  return h;  // no statistics
}

QueryResult example() {
  QueryResult r;
  r.query_name = "q1";
  r.query_length = 30;
  r.hits = {plus_hit(), minus_hit()};
  r.targets = {{"chrA", 50}, {"chrB", 7}};
  return r;
}

// A second query of the same run: one hit on chrB (7 residues), plus strand, whole sequences.
QueryResult second_query() {
  QueryResult r;
  r.query_name = "q2";
  r.query_length = 7;
  Hit h;
  h.target_index = 1;
  h.target_name = "chrB";
  h.target_length = 7;
  h.score = 35;
  h.query_begin = 0;
  h.query_end = 7;
  h.target_begin = 0;
  h.target_end = 7;
  h.cigar = "7=";
  h.matches = 7;
  h.length = 7;
  h.evalue = 0.0694;
  r.hits = {h};
  r.targets = {{"chrA", 50}, {"chrB", 7}};
  return r;
}

TEST(ScanOutput, EvalueAsBlastTabular) {
  // Observed with blastn 2.12.0 -outfmt "6 evalue" (the same hits at several -searchsp values).
  EXPECT_EQ(format_evalue(1e-200), "0.0");
  EXPECT_EQ(format_evalue(0.0), "0.0");
  EXPECT_EQ(format_evalue(9.73e-121), "9.73e-121");
  EXPECT_EQ(format_evalue(4.67e-32), "4.67e-32");
  EXPECT_EQ(format_evalue(1.4e-13), "1.40e-13");
  EXPECT_EQ(format_evalue(6.94e-11), "6.94e-11");
  EXPECT_EQ(format_evalue(2.08e-4), "2.08e-04");
  EXPECT_EQ(format_evalue(6.94e-4), "6.94e-04");
  EXPECT_EQ(format_evalue(0.0009), "0.001");  // from 0.0009 on: three decimals
  EXPECT_EQ(format_evalue(0.00694), "0.007");
  EXPECT_EQ(format_evalue(0.0694), "0.069");
  EXPECT_EQ(format_evalue(0.097), "0.097");
  EXPECT_EQ(format_evalue(0.14), "0.14");
  EXPECT_EQ(format_evalue(0.694), "0.69");
  EXPECT_EQ(format_evalue(1.4), "1.4");
  EXPECT_EQ(format_evalue(9.7), "9.7");
  EXPECT_EQ(format_evalue(69.4), "69");
  EXPECT_EQ(format_evalue(694.0), "694");
  EXPECT_EQ(format_evalue(69367815.0), "69367815");
  // The boundaries belong to the band above them.
  EXPECT_EQ(format_evalue(1e-180), "1.00e-180");
  EXPECT_EQ(format_evalue(0.1), "0.10");
  EXPECT_EQ(format_evalue(1.0), "1.0");
  EXPECT_EQ(format_evalue(10.0), "10");
}

TEST(ScanOutput, Tsv) {
  const QueryResult r = example();
  std::string out = tsv_header();
  for (const Hit& h : r.hits) append_tsv(out, r, h);
  EXPECT_EQ(out,
            "query\ttarget\tstrand\tscore\tqstart\tqend\ttstart\ttend\tcigar\tidentity\tevalue\n"
            "q1\tchrA\t+\t33\t3\t12\t11\t21\t4=1X2=1D3=\t81.82\t4.67e-32\n"
            "q1\tchrA\t-\t26\t21\t28\t37\t31\t3=1I4=\t87.50\t-\n");
}

TEST(ScanOutput, TsvWithoutTraceback) {
  QueryResult r = example();
  for (Hit& h : r.hits) {  // what a scan with Config::traceback = false reports
    h.cigar.clear();
    h.matches = h.mismatches = h.gap_opens = h.gap_columns = h.length = 0;
  }
  std::string out;
  for (const Hit& h : r.hits) append_tsv(out, r, h);
  EXPECT_EQ(out,
            "q1\tchrA\t+\t33\t3\t12\t11\t21\t*\t*\t4.67e-32\n"
            "q1\tchrA\t-\t26\t21\t28\t37\t31\t*\t*\t-\n");
  EXPECT_EQ(identity_percent(r.hits[0]), "*");
  // The formats that print the alignment refuse such hits (the CLI rejects the combination earlier).
  for (const OutputFormat f : {OutputFormat::kSam, OutputFormat::kPaf, OutputFormat::kView}) {
    EXPECT_TRUE(needs_traceback(f));
    ResultFormatter formatter(f, "0.1.0");
    const std::vector<ViewLetters> letters(2, ViewLetters{kQuery, ""});
    try {
      formatter.format(r, letters);
      ADD_FAILURE() << "no error for format " << static_cast<int>(f);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInternal);
      EXPECT_NE(e.message().find("traceback was off"), std::string::npos) << e.message();
    }
  }
  EXPECT_FALSE(needs_traceback(OutputFormat::kTsv));
}

TEST(ScanOutput, SamClipsAndFlags) {
  const QueryResult r = example();
  EXPECT_EQ(sam_cigar(r.hits[0], 30), "2H4=1X2=1D3=18H");
  // Minus strand: along the forward target the query is reverse-complemented, so the 30 - 28 = 2
  // residues after query_end come first and the 20 before query_begin last.
  EXPECT_EQ(sam_cigar(r.hits[1], 30), "2H3=1I4=20H");
  Hit whole = second_query().hits[0];
  EXPECT_EQ(sam_cigar(whole, 7), "7=");
  whole.minus = true;
  whole.query_begin = 1;
  EXPECT_EQ(sam_cigar(whole, 7), "7=1H");
  EXPECT_EQ(edit_distance(r.hits[0]), 2u);

  std::string out = sam_header(r.targets, "0.1.0");
  append_sam(out, r, r.hits[0], true);
  append_sam(out, r, r.hits[1], false);
  EXPECT_EQ(out,
            "@HD\tVN:1.6\tSO:unsorted\n"
            "@SQ\tSN:chrA\tLN:50\n"
            "@SQ\tSN:chrB\tLN:7\n"
            "@PG\tID:warpsearch\tPN:warpsearch\tVN:0.1.0\n"
            "q1\t0\tchrA\t11\t255\t2H4=1X2=1D3=18H\t*\t0\t0\t*\t*\tAS:i:33\tNM:i:2\tZE:f:4.67e-32\n"
            "q1\t272\tchrA\t31\t255\t2H3=1I4=20H\t*\t0\t0\t*\t*\tAS:i:26\tNM:i:1\n");
  // Empty target records are listed in QueryResult::targets but cannot be @SQ lines (LN >= 1).
  const std::vector<std::pair<std::string, std::uint64_t>> with_empty = {{"a", 5}, {"empty", 0}, {"b", 1}};
  EXPECT_EQ(sam_header(with_empty, "v"),
            "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:a\tLN:5\n@SQ\tSN:b\tLN:1\n"
            "@PG\tID:warpsearch\tPN:warpsearch\tVN:v\n");
  // A minus-strand primary hit has FLAG 16 alone; a plus-strand secondary one 256.
  std::string flags;
  append_sam(flags, r, r.hits[1], true);
  append_sam(flags, r, r.hits[0], false);
  EXPECT_TRUE(flags.starts_with("q1\t16\tchrA\t31\t")) << flags;
  EXPECT_NE(flags.find("\nq1\t256\tchrA\t11\t"), std::string::npos) << flags;
}

TEST(ScanOutput, Paf) {
  const QueryResult r = example();
  std::string out;
  append_paf(out, r, r.hits[0], true);
  append_paf(out, r, r.hits[1], false);
  EXPECT_EQ(
      out,
      "q1\t30\t2\t12\t+\tchrA\t50\t10\t21\t9\t11\t255\ttp:A:P\tAS:i:33\tcg:Z:4=1X2=1D3=\tZE:f:4.67e-32\n"
      "q1\t30\t20\t28\t-\tchrA\t50\t30\t37\t7\t8\t255\ttp:A:S\tAS:i:26\tcg:Z:3=1I4=\n");
}

TEST(ScanOutput, CigarReversalAndComplement) {
  EXPECT_EQ(reverse_cigar("3=1I4="), "4=1I3=");
  EXPECT_EQ(reverse_cigar("12=1X2D100="), "100=2D1X12=");
  EXPECT_EQ(reverse_cigar("7="), "7=");
  for (const char* bad : {"3=1", "=", "3M", "0=", "3=x"}) {
    EXPECT_THROW(reverse_cigar(bad), Error) << bad;
  }
  EXPECT_EQ(reverse_complement_letters("ACGTRYMKBVHDSWN"), "NWSHDBVMKRYACGT");
  EXPECT_EQ(reverse_complement_letters("aacgtN"), "Nacgtt");  // case is kept
  EXPECT_EQ(reverse_complement_letters("AUGc", true), "gCAU");
  EXPECT_EQ(reverse_complement_letters(""), "");
}

TEST(ScanOutput, View) {
  const QueryResult r = example();
  const std::string chr(kChrA);
  const std::vector<ViewLetters> letters = {{kQuery, std::string_view(chr).substr(10, 11)},
                                            {kQuery, std::string_view(chr).substr(30, 7)}};
  ResultFormatter formatter(OutputFormat::kView, "0.1.0");
  EXPECT_EQ(formatter.format(r, letters),
            "Query: q1 (30 residues): 2 alignments\n"
            "\n"
            "Alignment 1: q1 vs chrA (50 residues), strand +\n"
            "  Score = 33 (15.2 bits), E-value = 4.67e-32\n"
            "  Identities = 9/11 (81.82%), Gaps = 1/11 (9.09%)\n"
            "\n"
            "Query   3 ATCACAG-TCT 12\n"
            "          |||| || |||\n"
            "Target 11 ATCATAGGTCT 21\n"
            "\n"
            "Alignment 2: q1 vs chrA (50 residues), strand -\n"
            "  Score = 26, E-value = -\n"
            "  Identities = 7/8 (87.50%), Gaps = 1/8 (12.50%)\n"
            "\n"
            "Query  21 CACTCCAA 28\n"
            "          |||| |||\n"
            "Target 37 CACT-CAA 31\n"
            "\n");
  // Letters that do not fit the hit are a caller bug.
  const std::vector<ViewLetters> short_target = {{kQuery, std::string_view(chr).substr(10, 10)},
                                                 {kQuery, std::string_view(chr).substr(30, 7)}};
  EXPECT_THROW(ResultFormatter(OutputFormat::kView, "x").format(r, short_target), Error);
  EXPECT_THROW(ResultFormatter(OutputFormat::kView, "x").format(r, std::span(letters).first(1)), Error);
}

// 5=120D5=: three rows of 60 columns, the middle one without any query residue, which shows the
// position before it (5) at both ends.
TEST(ScanOutput, ViewRowsAndGapOnlyRows) {
  QueryResult r;
  r.query_name = "long";
  r.query_length = 10;
  Hit h;
  h.target_name = "t";
  h.target_length = 130;
  h.score = 50 - 128;  // any value: the view prints it
  h.query_begin = 0;
  h.query_end = 10;
  h.target_begin = 0;
  h.target_end = 130;
  h.cigar = "5=120D5=";
  h.matches = 10;
  h.gap_opens = 1;
  h.gap_columns = 120;
  h.length = 130;
  r.hits = {h};
  const std::string target = "ACGTA" + std::string(120, 'G') + "CCCCC";
  const std::string query = "ACGTACCCCC";
  const std::string pad(11, ' ');  // "Target" + ' ' + 3 digits + ' '
  std::string plus;
  append_view(plus, r, h, 1, {query, target});
  EXPECT_EQ(plus,
            "Alignment 1: long vs t (130 residues), strand +\n"
            "  Score = -78, E-value = -\n"
            "  Identities = 10/130 (7.69%), Gaps = 120/130 (92.31%)\n"
            "\n"
            "Query    1 ACGTA" +
                std::string(55, '-') + " 5\n" + pad + "|||||" + std::string(55, ' ') + "\n" +
                "Target   1 ACGTA" + std::string(55, 'G') +
                " 60\n"
                "\n"
                "Query    5 " +
                std::string(60, '-') + " 5\n" + pad + std::string(60, ' ') + "\n" + "Target  61 " +
                std::string(60, 'G') +
                " 120\n"
                "\n"
                "Query    6 -----CCCCC 10\n" +
                pad + "     |||||\n" +
                "Target 121 GGGGGCCCCC 130\n"
                "\n");

  // The same on the minus strand: the target row is the reverse complement, positions count down.
  h.minus = true;
  std::string minus;
  append_view(minus, r, h, 1, {"GGGGGTACGT", target});
  EXPECT_NE(minus.find("Query    1 GGGGG" + std::string(55, '-') + " 5\n"), std::string::npos) << minus;
  EXPECT_NE(minus.find("Target 130 GGGGG" + std::string(55, 'C') + " 71\n"), std::string::npos) << minus;
  EXPECT_NE(minus.find("Query    5 " + std::string(60, '-') + " 5\n"), std::string::npos) << minus;
  EXPECT_NE(minus.find("Target  70 " + std::string(60, 'C') + " 11\n"), std::string::npos) << minus;
  EXPECT_NE(minus.find("Query    6 -----TACGT 10\n"), std::string::npos) << minus;
  EXPECT_NE(minus.find("Target  10 CCCCCTACGT 1\n"), std::string::npos) << minus;
}

TEST(ScanOutput, HeaderOncePerOutput) {
  ResultFormatter tsv(OutputFormat::kTsv, "0.1.0");
  const std::string a = tsv.format(example());
  const std::string b = tsv.format(second_query());
  EXPECT_TRUE(a.starts_with(tsv_header()));
  EXPECT_EQ(b, "q2\tchrB\t+\t35\t1\t7\t1\t7\t7=\t100.00\t0.069\n");
  EXPECT_EQ(tsv.finish(), "");

  // SAM: @SQ lines from the first result; each query's first hit is primary.
  ResultFormatter sam(OutputFormat::kSam, "9.9");
  const std::string s1 = sam.format(example());
  const std::string s2 = sam.format(second_query());
  EXPECT_TRUE(
      s1.starts_with("@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chrA\tLN:50\n@SQ\tSN:chrB\tLN:7\n"
                     "@PG\tID:warpsearch\tPN:warpsearch\tVN:9.9\nq1\t0\t"))
      << s1;
  EXPECT_EQ(s2, "q2\t0\tchrB\t1\t255\t7=\t*\t0\t0\t*\t*\tAS:i:35\tNM:i:0\tZE:f:0.069\n");

  ResultFormatter paf(OutputFormat::kPaf, "0.1.0");
  const std::string p1 = paf.format(example());
  ASSERT_NE(p1.find("\ttp:A:S\t"), std::string::npos) << p1;
  EXPECT_LT(p1.find("\ttp:A:P\t"), p1.find("\ttp:A:S\t")) << p1;
  EXPECT_EQ(paf.format(second_query()),
            "q2\t7\t0\t7\t+\tchrB\t7\t0\t7\t7\t7\t255\ttp:A:P\tAS:i:35\tcg:Z:7=\tZE:f:0.069\n");

  // A query without hits: TSV/SAM/PAF print nothing for it, the view says so.
  QueryResult none;
  none.query_name = "q3";
  none.query_length = 12;
  EXPECT_EQ(tsv.format(none), "");
  ResultFormatter view(OutputFormat::kView, "0.1.0");
  EXPECT_EQ(view.format(none), "Query: q3 (12 residues): 0 alignments\n\n");

  // An output that received no result still gets its header.
  EXPECT_EQ(ResultFormatter(OutputFormat::kTsv, "0.1.0").finish(), tsv_header());
  EXPECT_EQ(ResultFormatter(OutputFormat::kSam, "0.1.0").finish(),
            "@HD\tVN:1.6\tSO:unsorted\n@PG\tID:warpsearch\tPN:warpsearch\tVN:0.1.0\n");
  EXPECT_EQ(ResultFormatter(OutputFormat::kPaf, "0.1.0").finish(), "");
}

TEST(ScanOutput, ParseFormat) {
  EXPECT_EQ(parse_output_format("tsv"), OutputFormat::kTsv);
  EXPECT_EQ(parse_output_format("sam"), OutputFormat::kSam);
  EXPECT_EQ(parse_output_format("paf"), OutputFormat::kPaf);
  EXPECT_EQ(parse_output_format("view"), OutputFormat::kView);
  EXPECT_FALSE(parse_output_format("bam").has_value());
  EXPECT_FALSE(parse_output_format("TSV").has_value());
}

}  // namespace
}  // namespace warpsearch::scan
