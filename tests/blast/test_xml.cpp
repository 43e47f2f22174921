// test_xml.cpp: tests of src/blast/xml (BLAST+ 2.12 blastp -outfmt 5). The whole format is compared with
// blastp itself in tests/cli/test_cli_blastp.cpp (BlastpCli.XmlSameAsBlastp); these pin the pieces: text
// escaping (entities, Latin-1 bytes for UTF-8 letters up to U+00FF, references beyond), number formats, one
// query's block (masked residues as X in Hsp_qseq, identities and the midline on the unmasked query,
// statistics), the messages of a query without hits and of an empty one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "blast/xml.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {

std::vector<std::uint8_t> codes(const std::string& letters) {
  std::vector<std::uint8_t> out;
  for (char c : letters) out.push_back(*Alphabet::protein().code(c));
  return out;
}

TEST(BlastXml, EscapesAsBlastp) {
  EXPECT_EQ(xml_escape("A&B <x> \"y\" it's"), "A&amp;B &lt;x&gt; &quot;y&quot; it&apos;s");
  EXPECT_EQ(xml_escape("caf\xc3\xa9 \xc2\xb5"), "caf\xe9 \xb5");               // Latin-1 bytes
  EXPECT_EQ(xml_escape("\xe2\x82\xac\xf0\x9f\x98\x80"), "&#x20AC;&#x1F600;");  // beyond Latin-1
  EXPECT_EQ(xml_escape("raw \xe9 end \xc3"), "raw \xe9 end \xc3");             // not UTF-8: bytes kept
  EXPECT_EQ(xml_escape(""), "");
}

TEST(BlastXml, NumbersAsBlastp) {
  EXPECT_EQ(xml_double(10), "10");
  EXPECT_EQ(xml_double(1e-5), "1e-05");
  EXPECT_EQ(xml_double(0.0025), "0.0025");
  EXPECT_EQ(xml_double(3171150), "3171150");
  EXPECT_EQ(xml_double(0.041), "0.041");
  EXPECT_EQ(xml_double(123456789012.0), "123456789012");
  EXPECT_EQ(xml_double(-1), "-1");
}

TEST(BlastXml, QueryBlock) {
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  XmlOptions options;
  options.database = "db & co";
  options.evalue = 1e-5;
  options.database_sequences = 300;
  options.database_letters = 126450;
  const XmlWriter w(m, options);
  const std::string header = w.header("q1 first", 9);
  EXPECT_NE(header.find("<BlastOutput_db>db &amp; co</BlastOutput_db>"), std::string::npos);
  EXPECT_NE(header.find("<BlastOutput_query-def>q1 first</BlastOutput_query-def>"), std::string::npos);
  EXPECT_NE(header.find("<Parameters_expect>1e-05</Parameters_expect>"), std::string::npos);
  EXPECT_NE(header.find("<Parameters_filter>F</Parameters_filter>"), std::string::npos);
  EXPECT_TRUE(header.ends_with("</Parameters>\n  </BlastOutput_param>\n<BlastOutput_iterations>\n"))
      << header;

  // Query MKWVTFISLL against subject MKWLTF-SLL...: one substitution (V/L, positive), one subject gap;
  // residues 2..3 (KW) masked.
  const std::vector<std::uint8_t> query = codes("MKWVTFISLL"), subject = codes("MKWLTFSLLA");
  XmlQuery q;
  q.number = 7;
  q.defline = "q7 title  \tafter tab";
  q.residues = query;
  const std::vector<Interval> mask = {{1, 3}};
  q.mask = mask;
  q.gapped = {0.267, 0.041, 0.14, 0, 0};
  q.length_adjustment = 3;
  q.search_space = 3171150;
  XmlSubjectHits hit;
  hit.subject = {"gnl|BL_ORD_ID|4", "some title ", "4", subject};
  TabularHsp hsp;
  hsp.score = 40;
  hsp.bits = 19.99999;
  hsp.evalue = 1.532549e-3;
  hsp.q_start = 0;
  hsp.q_end = 10;
  hsp.s_start = 0;
  hsp.s_end = 9;
  hsp.script = {{EditOp::kSubstitution, 6}, {EditOp::kInsertion, 1}, {EditOp::kSubstitution, 3}};
  hit.hsps.push_back(hsp);
  const std::vector<XmlSubjectHits> hits = {hit};
  const std::string out = w.query(q, hits);
  const auto has = [&out](const std::string& text) {
    EXPECT_NE(out.find(text), std::string::npos) << text << "\nin\n" << out;
  };
  has("<Iteration>\n  <Iteration_iter-num>7</Iteration_iter-num>\n  "
      "<Iteration_query-ID>Query_7</Iteration_query-ID>");
  has("<Iteration_query-def>q7 title</Iteration_query-def>");
  has("<Hit>\n  <Hit_num>1</Hit_num>\n  <Hit_id>gnl|BL_ORD_ID|4</Hit_id>\n  <Hit_def>some title </Hit_def>");
  has("<Hsp_bit-score>20</Hsp_bit-score>");
  has("<Hsp_evalue>0.00153255</Hsp_evalue>");
  has("<Hsp_query-from>1</Hsp_query-from>\n      <Hsp_query-to>10</Hsp_query-to>");
  has("<Hsp_hit-from>1</Hsp_hit-from>\n      <Hsp_hit-to>9</Hsp_hit-to>");
  has("<Hsp_identity>8</Hsp_identity>\n      <Hsp_positive>9</Hsp_positive>\n      <Hsp_gaps>1</Hsp_gaps>");
  has("<Hsp_align-len>10</Hsp_align-len>");
  has("<Hsp_qseq>MXXVTFISLL</Hsp_qseq>\n      <Hsp_hseq>MKWLTF-SLL</Hsp_hseq>\n      <Hsp_midline>MKW+TF "
      "SLL</Hsp_midline>");
  has("<Statistics_db-num>300</Statistics_db-num>\n      <Statistics_db-len>126450</Statistics_db-len>");
  has("<Statistics_hsp-len>3</Statistics_hsp-len>\n      "
      "<Statistics_eff-space>3171150</Statistics_eff-space>");
  has("<Statistics_kappa>0.041</Statistics_kappa>\n      <Statistics_lambda>0.267</Statistics_lambda>");
  EXPECT_EQ(out.find("Iteration_message"), std::string::npos);
  EXPECT_TRUE(out.ends_with("  </Iteration_stat>\n</Iteration>\n")) << out;

  // No hits; then an empty query.
  const std::string none = w.query(q, {});
  EXPECT_NE(none.find("<Iteration_hits>\n</Iteration_hits>\n"), std::string::npos);
  EXPECT_NE(none.find("  <Iteration_message>No hits found</Iteration_message>\n</Iteration>\n"),
            std::string::npos);
  XmlQuery empty;
  empty.number = 1;
  empty.defline = "q1";
  const std::string e = w.query(empty, {});
  EXPECT_NE(e.find("<Statistics_kappa>-1</Statistics_kappa>"), std::string::npos);
  EXPECT_NE(e.find("<Iteration_message>Query_1 q1:  Query_1 q1: Sequence contains no data  No hits "
                   "found</Iteration_message>"),
            std::string::npos);
  EXPECT_EQ(w.footer(), "</BlastOutput_iterations>\n</BlastOutput>\n\n");

  // -subject: no database name, statistics 0 and 0; no defline: "unnamed protein product".
  options.subject_mode = true;
  const XmlWriter ws(m, options);
  EXPECT_NE(
      ws.header("", 9).find("<BlastOutput_db></BlastOutput_db>\n  <BlastOutput_query-ID>Query_1</BlastOutput_"
                            "query-ID>\n  <BlastOutput_query-def>unnamed protein product<"),
      std::string::npos);
  const std::string s = ws.query(q, hits);
  EXPECT_NE(
      s.find("<Statistics_db-num>0</Statistics_db-num>\n      <Statistics_db-len>0</Statistics_db-len>"),
      std::string::npos);
}

}  // namespace
}  // namespace warpsearch::blast
