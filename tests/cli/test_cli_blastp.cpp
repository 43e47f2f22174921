// test_cli_blastp.cpp: `warpsearch blastp` as a user runs it: the output compared byte for byte with the
// installed blastp 2.12 run with the same options (-subject, and -db on a makeblastdb database and on the
// FASTA file itself; skipped without blastp/makeblastdb), BLAST+'s one-dash option spellings and CLI11's
// two-dash ones, thread counts, stdin and -out, and every usage / input error with its exit status and
// no output file left behind.
//
// Inputs: globins45 all-vs-all, and 5 queries of mmseqs_QUERY500 against the first 2000 sequences of
// mmseqs_DB20k (both subsets written into the test's temporary directory, deflines as in the files).
// Searches use -comp_based_stats 0 where they are compared with blastp (the search engine's modes 1/2 are
// tested in tests/blast).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"

namespace {

using warpsearch::test::CliResult;
using warpsearch::test::contains;
using warpsearch::test::read_file;
using warpsearch::test::run_cli;
using warpsearch::test::shell_quote;
using warpsearch::test::TempDir;
using warpsearch::test::write_file;

std::string tdata(const std::string& rel) { return (warpsearch::test::testdata_dir() / rel).string(); }

bool have_blast_tools() {
  return std::system("blastp -version >/dev/null 2>&1") == 0 &&
         std::system("makeblastdb -version >/dev/null 2>&1") == 0;
}

// The first `n` records of a FASTA file, as written there.
std::string first_records(const std::string& path, int n) {
  std::ifstream in(path);
  std::string line, out;
  int records = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>' && ++records > n) break;
    out += line + "\n";
  }
  return out;
}

// blastp ARGS (shell words) with stdout captured; empty string and a failed assertion if it fails.
std::string oracle(const TempDir& dir, const std::string& args) {
  const std::string out = dir / "oracle.out";
  const std::string cmd = "blastp " + args + " > " + shell_quote(out) + " 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return read_file(out);
}

// Runs `warpsearch blastp ARGS` and expects success.
std::string ws(const std::string& args, const std::string& stdin_path = "/dev/null") {
  const CliResult r = run_cli("blastp " + args, stdin_path);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return r.out;
}

// The inputs of the comparisons, written once per test into its directory.
class BlastpCli : public ::testing::Test {
 protected:
  void SetUp() override {
    WS_REQUIRE_TESTDATA("prot/globins45.fa");
    WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
    WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
    globins = shell_quote(tdata("prot/globins45.fa"));
    write_file(dir / "q5.fa", first_records(tdata("prot/mmseqs_QUERY500.fasta"), 5));
    write_file(dir / "db2k.fa", first_records(tdata("prot/mmseqs_DB20k.fasta"), 2000));
    q5 = shell_quote(dir / "q5.fa");
    db2k = shell_quote(dir / "db2k.fa");
  }

  // makeblastdb of db2k.fa; returns the database name (quoted).
  std::string make_blast_db() {
    const std::string name = dir / "db2k_blast";
    const std::string cmd =
        "makeblastdb -dbtype prot -in " + db2k + " -out " + shell_quote(name) + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return shell_quote(name);
  }

  // Expects `warpsearch blastp ARGS` and `blastp ARGS` to print the same bytes (and something).
  void expect_same_as_blastp(const std::string& args) {
    const std::string expected = oracle(dir, args);
    EXPECT_FALSE(expected.empty()) << args;
    EXPECT_EQ(ws(args), expected) << args;
  }

  TempDir dir{"ws_cli_blastp"};
  std::string globins, q5, db2k;
};

TEST_F(BlastpCli, SubjectModeSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string all = "-query " + globins + " -subject " + globins + " -comp_based_stats 0";
  expect_same_as_blastp(all + " -outfmt 6");
  expect_same_as_blastp(all + " -outfmt 7");
  expect_same_as_blastp(all +
                        " -outfmt '7 std qlen slen stitle qcovs qcovhsp ppos btop score' -evalue 1e-20 "
                        "-max_target_seqs 7 -max_hsps 1");
  expect_same_as_blastp(all + " -outfmt 0");
  // -max_target_seqs also sets how many subjects outfmt 0 lists and aligns.
  expect_same_as_blastp(all + " -outfmt 0 -max_target_seqs 3");
  // -num_descriptions / -num_alignments: listed and aligned subjects of the report (the larger is kept); with
  // a tabular format -num_alignments is the number kept.
  expect_same_as_blastp(all + " -outfmt 0 -num_descriptions 5 -num_alignments 2");
  expect_same_as_blastp(all + " -outfmt 0 -num_descriptions 0 -num_alignments 3");
  expect_same_as_blastp(all + " -outfmt 0 -num_descriptions 4 -num_alignments 0");
  expect_same_as_blastp(all + " -outfmt 0 -num_alignments 1");
  expect_same_as_blastp(all + " -outfmt 6 -num_alignments 3");
  expect_same_as_blastp(all + " -outfmt 7 -num_descriptions 3");
  // -line_length: alignment letters per line (1: blastp leaves the numbers off the first column's lines).
  expect_same_as_blastp(all + " -outfmt 0 -line_length 37 -max_target_seqs 5");
  expect_same_as_blastp(all + " -outfmt 0 -line_length 1 -max_target_seqs 2");
  expect_same_as_blastp(all + " -outfmt 6 -line_length 20");
  // -qcov_hsp_perc: HSPs below the query coverage dropped from the final lists (after -max_hsps, lists not
  // refilled), with BLAST's rounding (+0.5 below 99 %).
  expect_same_as_blastp(all + " -outfmt 6 -qcov_hsp_perc 98.5");
  expect_same_as_blastp(all + " -outfmt 7 -qcov_hsp_perc 99 -max_hsps 1");
  expect_same_as_blastp(all + " -outfmt 0 -qcov_hsp_perc 97 -max_target_seqs 5");
  // Options that change nothing here (default values, or formats they do not apply to).
  expect_same_as_blastp(all +
                        " -outfmt 6 -soft_masking TRUE -mt_mode 0 -num_threads 2 -sorthits 3 -sorthsps 4");
  expect_same_as_blastp(all + " -outfmt 0 -soft_masking f -sorthsps 0 -max_target_seqs 2");
  // -dbsize: the database length of the statistics (E-values, search space); the report's totals stay.
  expect_same_as_blastp(all + " -outfmt 6 -dbsize 1000000");
  expect_same_as_blastp(all + " -outfmt 0 -dbsize 5000 -max_target_seqs 3");
  expect_same_as_blastp(all + " -outfmt 7 -dbsize 0");
  // Comma-separated output and chosen separators (values unquoted, titles with commas as they are).
  expect_same_as_blastp(all + " -outfmt 10");
  expect_same_as_blastp(all + " -outfmt '10 qseqid sseqid evalue bitscore'");
  expect_same_as_blastp(all + " -outfmt '6 delim=;; std qlen'");
  expect_same_as_blastp(all + " -outfmt '7 delim=, qseqid sseqid score'");
  // Integer values as BLAST+ reads them: decimal with leading zeros (not octal), or 0x and hexadecimal.
  expect_same_as_blastp(all + " -outfmt 6 -max_target_seqs 010");
  expect_same_as_blastp(all + " -outfmt 6 -max_target_seqs 0x9 -max_hsps 01");
  expect_same_as_blastp(all + " -outfmt 6 -seg yes");
  // A query without ungapped statistics (all X): no hits, its report without Karlin blocks, as blastp.
  write_file(dir / "allx.fa", ">allx\nXXXXXXXXXXXXXXXX\n" + first_records(tdata("prot/globins45.fa"), 1));
  const std::string allx = "-query " + shell_quote(dir / "allx.fa") + " -subject " + globins;
  expect_same_as_blastp(allx + " -outfmt 0");
  expect_same_as_blastp(allx + " -outfmt 7 -comp_based_stats 0");
  expect_same_as_blastp("-query " + q5 + " -subject " + db2k + " -comp_based_stats 0 -outfmt 6");
  expect_same_as_blastp("-query " + q5 + " -subject " + db2k + " -comp_based_stats 0 -outfmt 0");
}

// Query headers as blastp prints them in "Query=" and "# Query:": blank runs kept, the header cut at a
// tab (blastp's FASTA reader ends a defline at its first control character).
TEST_F(BlastpCli, QueryHeadersWithBlankRunsAndTabs) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string globin = first_records(tdata("prot/globins45.fa"), 1);
  const std::string residues = globin.substr(globin.find('\n') + 1);
  write_file(dir / "qh.fa", ">qa  two  spaces title  \n" + residues + ">qb title\twith tab\n" + residues +
                                ">qc\ttab after the id\n" + residues);
  const std::string args =
      "-query " + shell_quote(dir / "qh.fa") + " -subject " + globins + " -comp_based_stats 0";
  expect_same_as_blastp(args + " -outfmt 7");
  expect_same_as_blastp(args + " -outfmt 0");
  expect_same_as_blastp(args + " -outfmt '6 qseqid sseqid score'");
}

// Queries blastp reads with a warning: without a header line or a name (reported as Query_N, N the query's
// number in the file), with blanks before the name, empty (reported without hits), with '-' (skipped).
TEST_F(BlastpCli, QueriesWithoutNamesEmptyOrWithHyphens) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string globin = first_records(tdata("prot/globins45.fa"), 1);
  const std::string residues = globin.substr(globin.find('\n') + 1);
  std::string gapped = residues.substr(0, 40);
  gapped.insert(20, "--");
  const std::string before_gapped = residues + ">\n" + residues + ">  spaced title\n" + residues + ">   \n" +
                                    residues + ">empty one\n\n>gapped\n";
  write_file(dir / "qu.fa", before_gapped + gapped + "\n");
  const auto gapped_line = std::count(before_gapped.begin(), before_gapped.end(), '\n') + 1;
  const std::string args = "-query " + shell_quote(dir / "qu.fa") + " -subject " + globins +
                           " -comp_based_stats 0 -max_target_seqs 3";
  expect_same_as_blastp(args + " -outfmt 7");
  expect_same_as_blastp(args + " -outfmt 0");
  expect_same_as_blastp(args + " -outfmt '6 qseqid qacc qlen sseqid score'");
  const CliResult warned = run_cli("blastp " + args + " -outfmt 6");
  EXPECT_NE(warned.err.find("query 5 (empty one): empty sequence"), std::string::npos) << warned.err;
  EXPECT_NE(warned.err.find("qu.fa:" + std::to_string(gapped_line) +
                            ": '-' in the query sequences (2 of them) skipped"),
            std::string::npos)
      << warned.err;
  // No query with a residue: an error, as blastp's "Query is Empty!", and no output file.
  write_file(dir / "qe.fa", ">a\n>b\n\n");
  const CliResult r = run_cli("blastp -query " + shell_quote(dir / "qe.fa") + " -subject " + globins +
                              " -out " + shell_quote(dir / "qe.out"));
  EXPECT_EQ(r.status, 4);
  EXPECT_NE(r.err.find("every query sequence is empty"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "qe.out"));
}

// A -subject file read as blastp reads it: text before the first header and headers without a name (">",
// ">   ") are unnamed subjects (sseqid "unnamed", sallseqid "Subject_N", title "unnamed protein product"),
// an empty record is a subject without hits counted in the totals (sequences, and the minimum length: 10),
// '-' is skipped; each with a warning. A file of empty records only: no hits, the statistics still reported.
TEST_F(BlastpCli, SubjectsWithoutNamesEmptyOrWithHyphens) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string records = first_records(tdata("prot/globins45.fa"), 7);
  std::vector<std::string> seqs;  // residues of the 7 records, one line each
  for (std::size_t at = records.find('>'); at != std::string::npos; at = records.find('>', at + 1)) {
    const std::size_t start = records.find('\n', at) + 1;
    std::string r = records.substr(start, records.find('>', start) - start);
    std::erase(r, '\n');
    seqs.push_back(r);
  }
  ASSERT_EQ(seqs.size(), 7u);
  std::string gapped;  // 3 hyphens
  gapped.append(seqs[4], 0, 20).append("--").append(seqs[4], 20, 20).append("-").append(seqs[4], 40);
  std::string before_gapped = seqs[1];  // no header line
  for (const std::string& part : {std::string("\n>named\n"), seqs[2], std::string("\n>empty one desc\n>\n"),
                                  seqs[3], std::string("\n>hyph some\n")})
    before_gapped += part;
  std::string file = before_gapped;
  for (const std::string& part : {gapped, std::string("\n>   \n"), seqs[5], std::string("\n>  text here\n"),
                                  seqs[6], std::string("\n")})
    file += part;
  write_file(dir / "su.fa", file);
  const auto gapped_line = std::count(before_gapped.begin(), before_gapped.end(), '\n') + 1;
  const std::string args =
      "-query " + shell_quote(tdata("prot/HBB_HUMAN")) + " -subject " + shell_quote(dir / "su.fa");
  expect_same_as_blastp(args + " -outfmt 7");
  expect_same_as_blastp(args + " -outfmt 0");
  expect_same_as_blastp(args + " -outfmt '6 sseqid sallseqid sacc saccver sallacc stitle slen evalue'");
  expect_same_as_blastp(args + " -outfmt 6 -comp_based_stats 0 -evalue 1000");
  const CliResult warned = run_cli("blastp " + args + " -outfmt 6");
  EXPECT_NE(warned.err.find("subject 3 (empty one desc): empty sequence"), std::string::npos) << warned.err;
  EXPECT_NE(warned.err.find("su.fa:" + std::to_string(gapped_line) +
                            ": '-' in the subject sequences (3 of them) skipped"),
            std::string::npos)
      << warned.err;
  write_file(dir / "se.fa", ">e1\n>e2 x\n\n");
  const std::string empty =
      "-query " + shell_quote(tdata("prot/HBB_HUMAN")) + " -subject " + shell_quote(dir / "se.fa");
  expect_same_as_blastp(empty + " -outfmt 0");
  expect_same_as_blastp(empty + " -outfmt 7");
}

// Subject deflines with blank runs and tabs: -subject prints them as blastp's FASTA reader gives them (cut
// at a tab); a FASTA -db as makeblastdb stores them (blanks kept, each tab three spaces).
TEST_F(BlastpCli, SubjectTitlesWithBlankRunsAndTabs) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string globin = first_records(tdata("prot/globins45.fa"), 1);
  const std::string residues = globin.substr(globin.find('\n') + 1);
  write_file(dir / "st.fa", ">a1  two  blanks  \n" + residues + ">a2\tone\ttab\n" + residues +
                                ">a3\t\ttwo tabs\t\t\n" + residues + ">a4 x\t y\n" + residues + ">a5 \t z\n" +
                                residues + ">a6    \n" + residues);
  const std::string fasta = shell_quote(dir / "st.fa");
  const std::string q = "-query " + shell_quote(tdata("prot/HBB_HUMAN")) + " -comp_based_stats 0 -outfmt ";
  for (const char* format : {"0", "'6 sseqid stitle salltitles'", "'7 std stitle'"})
    expect_same_as_blastp(q + format + " -subject " + fasta);
  const std::string made = dir / "st_blast";
  const std::string cmd =
      "makeblastdb -dbtype prot -in " + fasta + " -out " + shell_quote(made) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (const char* format : {"'6 sseqid stitle salltitles'", "'6 std stitle'"})
    EXPECT_EQ(ws(q + format + " -db " + fasta), oracle(dir, q + format + " -db " + shell_quote(made)))
        << format;
}

TEST_F(BlastpCli, DatabaseModeSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string blast_db = make_blast_db();
  const std::string args = "-query " + q5 + " -comp_based_stats 0 -outfmt ";
  const std::string expected = oracle(dir, args + "6 -db " + blast_db);
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(ws(args + "6 -db " + blast_db), expected);
  // The FASTA file the database was made from, as -db, gives blastp -db's statistics and output.
  EXPECT_EQ(ws(args + "6 -db " + db2k), expected);
  // Subject titles, the database's title and date.
  expect_same_as_blastp(args + "'7 std stitle salltitles' -db " + blast_db);
  expect_same_as_blastp(args + "0 -db " + blast_db);
  expect_same_as_blastp(args + "'10 std stitle' -db " + blast_db);  // titles with commas, unquoted
}

// A database made with -parse_seqids: ids of every common kind (and untitled records, a PDB chain among
// them) print as blastp prints them: sseqid whole, sacc / saccver the accession, stitle without the id,
// the pairwise report's rows and ">" lines "ACCESSION title" with the title wrapped on its own.
TEST_F(BlastpCli, ParseSeqidsDatabaseSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  std::istringstream in(first_records(tdata("prot/mmseqs_DB20k.fasta"), 400));
  const std::string alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string fasta, line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '>') {
      fasta += line + "\n";
      continue;
    }
    ++n;
    const std::size_t space = line.find(' ');
    std::string title = space == std::string::npos ? std::string() : line.substr(space + 1);
    const std::string num = std::to_string(100000 + n);
    const std::string ids[] = {"sp|P" + num + "|X" + num + "_HUMAN",
                               "ref|NP_" + num + "." + std::to_string(n % 3 + 1) + "|",
                               "gb|AAB" + num + ".1|",
                               "pdb|" + std::to_string(n % 9 + 1) + alnum[n % 26] + alnum[(n / 26) % 36] +
                                   alnum[(n / 936) % 36] + "|" + alnum[n % 26],
                               "lcl|seq" + num,
                               "gnl|mydb|id" + num,
                               "emb|CAA" + num + ".2|",
                               "tr|Q" + num + "|Q" + num + "_MOUSE",
                               "gi|" + num + "|ref|XP_" + num + ".1|"};
    if (n % 11 == 0) title.clear();
    if (n % 13 == 0) title += "  two  spaces";
    fasta += ">" + ids[n % 9] + (title.empty() ? "" : " " + title) + "\n";
  }
  write_file(dir / "ps.fa", fasta);
  const std::string name = dir / "ps_blast";
  const std::string cmd = "makeblastdb -dbtype prot -parse_seqids -in " + shell_quote(dir / "ps.fa") +
                          " -out " + shell_quote(name) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  write_file(dir / "q_ps.fa", first_records(tdata("prot/mmseqs_DB20k.fasta"), 30));
  const std::string args = "-query " + shell_quote(dir / "q_ps.fa") + " -db " + shell_quote(name) +
                           " -comp_based_stats 0 -evalue 1 -outfmt ";
  expect_same_as_blastp(args + "'6 qseqid sseqid sacc saccver sallseqid sallacc stitle salltitles evalue'");
  expect_same_as_blastp(args + "7");
  expect_same_as_blastp(args + "0");
  expect_same_as_blastp(args + "5");  // XML: Hit_id the ids, Hit_def the title, Hit_accession the accession
}

// -outfmt 5 (XML, src/blast/xml.hpp): a database made without -parse_seqids (Hit_id gnl|BL_ORD_ID|N), with
// composition-based statistics 0 and 2, -seg (X in Hsp_qseq, "L;"), -max_target_seqs / -max_hsps, E-value
// thresholds printed as %g; -subject (Subject_N accessions, empty BlastOutput_db, db-num 0); queries with
// XML specials and a Latin-1 letter in their deflines, one without a defline ("unnamed protein product"),
// an empty one ("Sequence contains no data", statistics -1) and one without hits.
TEST_F(BlastpCli, XmlSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string blast_db = make_blast_db();
  const std::string db = "-query " + q5 + " -db " + blast_db + " -outfmt 5";
  expect_same_as_blastp(db + " -comp_based_stats 0 -evalue 1e-5");
  expect_same_as_blastp(db + " -evalue 0.0025 -max_target_seqs 7 -max_hsps 2");
  expect_same_as_blastp(db + " -comp_based_stats 1 -seg yes -evalue 1000");
  expect_same_as_blastp("-query " + globins + " -subject " + globins + " -outfmt 5 -evalue 1e-3");
  expect_same_as_blastp("-query " + globins + " -subject " + globins +
                        " -outfmt 5 -comp_based_stats 0 -seg yes");
  const std::string globin = first_records(tdata("prot/globins45.fa"), 2);
  const std::string body = globin.substr(globin.find('\n') + 1);
  write_file(dir / "q_xml.fa", ">odd A&B <x> \"y\" it's caf\xc3\xa9 au lait \n" + body + ">\n" + body +
                                   ">empty one\n>none\nWWWWWWWWWW\n" + globin);
  const std::string special = "-query " + shell_quote(dir / "q_xml.fa") + " -outfmt 5";
  expect_same_as_blastp(special + " -db " + blast_db);
  expect_same_as_blastp(special + " -subject " + globins + " -comp_based_stats 0");
}

// Composition-based statistics: blastp's default (mode 2, no -comp_based_stats given), mode 1 and mode 3,
// tabular and pairwise (whose HSP lines name the adjustment method per HSP).
TEST_F(BlastpCli, CompositionBasedStatsSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string blast_db = make_blast_db();
  expect_same_as_blastp("-query " + q5 + " -outfmt 6 -db " + blast_db);
  expect_same_as_blastp("-query " + q5 + " -outfmt 0 -db " + blast_db);
  expect_same_as_blastp("-query " + q5 + " -outfmt 6 -comp_based_stats 1 -db " + blast_db);
  expect_same_as_blastp("-query " + globins + " -subject " + globins + " -outfmt 0 -comp_based_stats 1");
  expect_same_as_blastp("-query " + globins + " -subject " + globins + " -outfmt 7 -comp_based_stats 3");
  expect_same_as_blastp("-query " + globins + " -subject " + globins + " -outfmt 0 -seg yes");
}

// -searchsp: given at all, blastp switches to the old statistics (Karlin-Altschul E-values over the
// effective search space, the hit-saving cutoff from them, no 5 x preliminary E-value with
// -comp_based_stats 2 and 3, Karlin blocks without the Gumbel parameters); a non-zero value replaces the
// effective search space (blastp then ignores -dbsize); 0 keeps the computed one.
TEST_F(BlastpCli, SearchSpaceSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string db = "-query " + q5 + " -db " + make_blast_db();
  expect_same_as_blastp(db + " -outfmt 6 -comp_based_stats 0 -searchsp 1000000000");
  expect_same_as_blastp(db + " -outfmt 6 -searchsp 50000 -max_target_seqs 20");
  expect_same_as_blastp(db + " -outfmt 0 -searchsp 0");
  expect_same_as_blastp(db + " -outfmt 7 -comp_based_stats 3 -searchsp 123456789012 -dbsize 999");
  const std::string all = "-query " + globins + " -subject " + globins;
  expect_same_as_blastp(all + " -outfmt 0 -comp_based_stats 1 -searchsp 20000000 -max_target_seqs 3");
  expect_same_as_blastp(all + " -outfmt 6 -comp_based_stats 0 -searchsp 0 -dbsize 5000000");
}

// Query splitting: blastp searches a query batch of 19,800 residues or more in overlapping chunks and merges
// the chunks' preliminary hits (src/blast/split.hpp). The queries are mutated stretches (15 % substitutions,
// a fixed generator) of the database's sequences back to back, so that many hits lie across chunk
// boundaries: a batch of 9,960 + 30 + 10,010 residues (chunks [0, 10051) and [9951, 20000): the second
// query lies inside the overlap, the third starts in it), one of 9,900 + 90 + 12,000 (the second query
// across the boundary) and a query of 31,000 alone (3 chunks). Identical to blastp -db with
// -comp_based_stats 0 (E <= 100) and 2, and with -seg yes.
TEST_F(BlastpCli, LongQueryBatchesSplitAsBlastpSplitsThem) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  std::string residues;
  {
    std::ifstream in(dir / "db2k.fa");
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '>') residues += line;
  }
  ASSERT_GT(residues.size(), 200000u);
  std::uint32_t state = 12345;
  const auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  std::size_t from = 0;
  const auto stretch = [&](std::size_t n) {
    std::string q = residues.substr(from, n);
    from += n + 777;
    for (char& c : q)
      if (next() % 100 < 15) c = letters[next() % 20];
    return q;
  };
  std::string fasta;
  int number = 0;
  for (const std::size_t n : {9960, 30, 10010, 9900, 90, 12000, 31000}) {
    const std::string q = stretch(n);
    fasta += ">long" + std::to_string(number++) + " " + std::to_string(n) + " residues\n";
    for (std::size_t i = 0; i < q.size(); i += 60) fasta += q.substr(i, 60) + "\n";
  }
  write_file(dir / "long.fa", fasta);
  const std::string db = make_blast_db();
  const std::string base = "-query " + shell_quote(dir / "long.fa") + " -db " + db + " -outfmt 6";
  expect_same_as_blastp(base + " -comp_based_stats 0 -evalue 100");
  expect_same_as_blastp(base);
  expect_same_as_blastp(base + " -seg yes -max_target_seqs 50");
}

// The synthetic database with planted homologs (scripts/make_blastp_data.sh small: shuffled UniProt
// background + 5 homologs of each of 20 queries at 90..25 % identity): identical to blastp -db in modes 2
// (default) and 0, and every planted homolog that blastp finds (E <= 1e-3) is found.
TEST_F(BlastpCli, PlantedHomologDatabaseSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  if (std::system("python3 -c 'pass' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not installed";
  const std::string data = dir / "planted";
  const std::string make =
      "bash " + shell_quote((warpsearch::test::source_dir() / "scripts/make_blastp_data.sh").string()) + " " +
      shell_quote(data) + " small >/dev/null 2>&1";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  const std::string db = shell_quote(data + "/db.fa"), name = shell_quote(data + "/blastdb");
  ASSERT_EQ(
      std::system(("makeblastdb -dbtype prot -in " + db + " -out " + name + " >/dev/null 2>&1").c_str()), 0);
  const std::string queries = shell_quote(data + "/queries.fa");
  for (const std::string mode : {"", " -comp_based_stats 0"}) {
    const std::string args =
        "-query " + queries + " -db " + name + " -outfmt '6 qseqid sseqid evalue'" + mode;
    const std::string expected = oracle(dir, args);
    const std::string actual = ws(args);
    EXPECT_EQ(actual, expected) << args;
    // Planted homologs (ids "pl_...") reported with E <= 1e-3, per program.
    const auto planted = [](const std::string& text) {
      std::set<std::string> found;
      for (const std::string& line : warpsearch::test::lines(text)) {
        std::istringstream in(line);
        std::string q, s;
        double e = 0;
        in >> q >> s >> e;
        if (s.rfind("pl_", 0) == 0 && e <= 1e-3) found.insert(q + " " + s);
      }
      return found;
    };
    EXPECT_EQ(planted(actual), planted(expected));
    EXPECT_GE(planted(expected).size(), 90U) << "blastp found fewer planted homologs than expected";
  }
}

TEST_F(BlastpCli, MatrixGapAndExtensionOptionsSameAsBlastp) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string all = "-query " + globins + " -subject " + globins + " -comp_based_stats 0 -outfmt 6";
  // Gap costs default per matrix as in BLAST+ (BLOSUM50 13/2, PAM250 14/2); explicit ones override.
  expect_same_as_blastp(all + " -matrix BLOSUM50");
  expect_same_as_blastp(all + " -matrix PAM250");
  // Matrices with their own default threshold and two-hit window (BLOSUM45 14 / 60, BLOSUM80 12 / 25,
  // PAM30 16 / 15, PAM70 14 / 20) and gap costs; and the window given explicitly.
  for (const char* m : {"BLOSUM45", "BLOSUM80", "PAM30", "PAM70", "BLOSUM90"})
    expect_same_as_blastp(all + " -matrix " + m);
  expect_same_as_blastp(all + " -matrix BLOSUM80 -window_size 40");
  expect_same_as_blastp(all + " -gapopen 9 -gapextend 2 -word_size 2 -threshold 13 -evalue 1e-5");
  expect_same_as_blastp(all + " -xdrop_ungap 5 -xdrop_gap 10 -xdrop_gap_final 12 -window_size 20");
  // A given gapped X-dropoff of 0 is used as it is; a threshold below 1 seeds from exact words only and
  // the pairwise footer prints the threshold as given.
  expect_same_as_blastp(all + " -xdrop_gap_final 0");
  expect_same_as_blastp(all + " -xdrop_gap 0");
  expect_same_as_blastp(all + " -threshold 0.5");
  const std::string pairwise = "-query " + q5 + " -subject " + db2k + " -comp_based_stats 0 -outfmt 0";
  expect_same_as_blastp(pairwise + " -threshold 11.5");
  // A matrix file with a built-in matrix's scores: that matrix's statistics and default gap costs.
  WS_REQUIRE_TESTDATA("mat/BLOSUM50");
  EXPECT_EQ(ws(all + " -matrix " + shell_quote(tdata("mat/BLOSUM50"))),
            oracle(dir, all + " -matrix BLOSUM50"));
}

TEST_F(BlastpCli, OneAndTwoDashSpellingsAndGlobalOptionsAgree) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string expected = oracle(
      dir, "-query " + q5 + " -subject " + db2k + " -comp_based_stats 0 -evalue 1e-3 -outfmt '6 std qlen'");
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(ws("--query " + q5 + " --subject " + db2k +
               " --comp_based_stats 0 --evalue 1e-3 --outfmt '6 std qlen'"),
            expected);
  EXPECT_EQ(
      ws("-query=" + q5 + " --subject=" + db2k + " -comp_based_stats=0 -evalue=1e-3 -outfmt='6 std qlen'"),
      expected);
  // Global options before and after the command; after it, in either spelling.
  for (const std::string& form :
       {std::string("-q blastp %s -threads 3"), std::string("--threads 2 blastp %s -quiet"),
        std::string("blastp %s --quiet --threads=2")}) {
    const std::string args =
        "-query " + q5 + " -subject " + db2k + " -comp_based_stats 0 -evalue 1e-3 -outfmt '6 std qlen'";
    const std::size_t at = form.find("%s");
    const CliResult r = run_cli(form.substr(0, at) + args + form.substr(at + 2));
    EXPECT_EQ(r.status, 0) << form << "\n" << r.err;
    EXPECT_EQ(r.out, expected) << form;
  }
}

TEST_F(BlastpCli, ThreadCountsStdinAndOutputFileGiveTheSameBytes) {
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const std::string args = "-subject " + db2k + " -comp_based_stats 0 -outfmt 7";
  const std::string expected = oracle(dir, "-query " + q5 + " " + args);
  EXPECT_EQ(ws("-query " + q5 + " " + args + " -num_threads 1"), expected);
  EXPECT_EQ(ws("-query " + q5 + " " + args + " -num_threads 4"), expected);
  EXPECT_EQ(run_cli("--threads 3 blastp -query " + q5 + " " + args).out, expected);
  EXPECT_EQ(ws("-query - " + args, dir / "q5.fa"), expected);
  const std::string out = dir / "hits.tsv";
  EXPECT_EQ(ws("-query " + q5 + " " + args + " -num_threads 2 -out " + shell_quote(out)), "");
  EXPECT_EQ(read_file(out), expected);
}

TEST_F(BlastpCli, HelpAndVersion) {
  const CliResult help = run_cli("blastp -help");
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(contains(help.out, "--query") && contains(help.out, "--comp_based_stats") &&
              contains(help.out, "Examples"))
      << help.out;
  const CliResult version = run_cli("blastp -version");
  EXPECT_EQ(version.status, 0);
  EXPECT_TRUE(contains(version.out, "2.12.0+")) << version.out;
}

// An error: the exit status, a message containing `part`, and no output file (nor a temporary one).
void expect_error(const TempDir& dir, const std::string& args, int status, const std::string& part) {
  const std::set<std::string> before = dir.listing();
  const std::string out = dir / "out.tsv";
  const CliResult r = run_cli("blastp " + args + " -out " + shell_quote(out));
  EXPECT_EQ(r.status, status) << args << "\n" << r.err;
  EXPECT_TRUE(contains(r.err, part)) << args << "\nexpected '" << part << "' in: " << r.err;
  EXPECT_EQ(r.out, "") << args;
  EXPECT_EQ(dir.listing(), before) << args;
}

TEST_F(BlastpCli, InputErrors) {
  const std::string subject = " -subject " + globins + " -outfmt 6 -comp_based_stats 0";
  write_file(dir / "empty.fa", "");
  expect_error(dir, "-query " + shell_quote(dir / "empty.fa") + subject, 4, "holds no sequences");
  expect_error(dir, "-query " + globins + " -subject " + shell_quote(dir / "empty.fa") + " -outfmt 6", 4,
               "holds no sequences");
  write_file(dir / "zero.fa", ">a\nMKV\n>b\n>c\nACDEF\n");
  // An empty record in a FASTA -db, which stands for a makeblastdb database (-subject takes it, as blastp).
  expect_error(dir, "-query " + globins + " -db " + shell_quote(dir / "zero.fa") + " -outfmt 6", 4,
               "zero.fa:3: empty sequence 'b'");
  // An invalid residue in the second query: reported with its file and line.
  write_file(dir / "bad.fa", ">a\nMKVLAAGIVG\n>b\nMKV\nLA1AG\n");
  expect_error(dir, "-query " + shell_quote(dir / "bad.fa") + subject, 4, "bad.fa:5:");
  expect_error(
      dir,
      "-query " + shell_quote(dir / "bad.fa") + " -subject " + globins + " -outfmt 0 -comp_based_stats 0", 4,
      "bad.fa:5:");  // after the report's header was written: still no file
  expect_error(dir, "-query " + globins + " -subject " + shell_quote(dir / "bad.fa") + " -outfmt 6", 4,
               "bad.fa:5:");
  expect_error(dir, "-query " + shell_quote(dir / "missing.fa") + subject, 3, "missing.fa");
  expect_error(dir, "-query " + globins + " -subject " + shell_quote(dir / "missing.fa") + " -outfmt 6", 3,
               "missing.fa");
  // Unwritable output: fails at once, nothing created.
  const CliResult r =
      run_cli("blastp -query " + globins + subject + " -out " + shell_quote(dir / "no/such/dir.tsv"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "no/such/dir.tsv")) << r.err;
}

TEST_F(BlastpCli, UsageErrors) {
  const std::string q = "-query " + globins;
  const std::string s = q + " -subject " + globins + " -comp_based_stats 0";
  expect_error(
      dir, s + " -outfmt 6 -matrix BLOSUM99", 2,
      "supported matrices are: BLOSUM45, BLOSUM50, BLOSUM62, BLOSUM80, BLOSUM90, PAM30, PAM70, PAM250");
  expect_error(
      dir, s + " -outfmt 6 -gapopen 5 -gapextend 5", 2,
      "not supported for BLOSUM62; supported (open/extend) values are: 11/2, 10/2, 9/2, 8/2, 7/2, 6/2, "
      "13/1, 12/1, 11/1, 10/1, 9/1");
  if (std::filesystem::exists(tdata("mat/BLOSUM62"))) {
    // A matrix file whose scores are no built-in matrix's: BLAST+ has no statistics for it.
    std::string text = read_file(tdata("mat/BLOSUM62"));
    const std::size_t row_a = text.find("\nA  4 ");
    ASSERT_NE(row_a, std::string::npos);
    text[row_a + 4] = '5';
    write_file(dir / "odd.mat", text);
    expect_error(dir, s + " -outfmt 6 -matrix " + shell_quote(dir / "odd.mat"), 2,
                 "scores like none of them");
  }
  expect_error(dir, s + " -outfmt 6 -matrix PAM30 -gapextend 2", 2,
               "-gapopen 9 -gapextend 2 are not supported for PAM30");
  // A negative number is a value, never an option name.
  expect_error(dir, s + " -outfmt 6 -gapopen -1", 2, "-gapopen -1 -gapextend 1 are not supported");
  expect_error(dir, q + " -subject " + globins + " -db " + globins + " -outfmt 6", 2, "-db and -subject");
  expect_error(dir, q + " -outfmt 6", 2, "either a database (-db) or subject sequences (-subject)");
  expect_error(dir, s + " -outfmt 6 -foo 1", 2, "-foo");
  expect_error(dir, s + " -outfmt 6 -html", 2, "-html is not supported");
  expect_error(dir, s + " -outfmt 6 -culling_limit 1", 2, "-culling_limit is not supported");
  expect_error(dir, s + " -outfmt 6 -qcov_hsp_perc 100.5", 2, "-qcov_hsp_perc 100.5: must be from 0 to 100");
  expect_error(dir, s + " -outfmt 6 -qcov_hsp_perc -1", 2, "-qcov_hsp_perc -1: must be from 0 to 100");
  expect_error(dir, s + " -outfmt 6 -dbsize -5", 2, "-dbsize -5: must be >= 0");
  expect_error(dir, s + " -outfmt 6 -searchsp -1", 2, "-searchsp -1: must be >= 0");
  // Options accepted only where they change nothing here.
  expect_error(dir, s + " -outfmt 6 -soft_masking maybe", 2, "-soft_masking maybe: expected true or false");
  expect_error(dir, s + " -outfmt 6 -soft_masking true -seg yes", 2, "-soft_masking true with -seg");
  expect_error(dir, s + " -outfmt 6 -mt_mode 0", 2, "-mt_mode requires -num_threads");
  expect_error(dir, s + " -outfmt 6 -mt_mode 1 -num_threads 2", 2, "-mt_mode 1");
  expect_error(dir, s + " -outfmt 6 -mt_mode 2 -num_threads 1", 2, "-mt_mode 2: must be 0 or 1");
  expect_error(dir, s + " -outfmt 6 -sorthits 5", 2, "-sorthits 5: must be from 0 to 4");
  expect_error(dir, s + " -outfmt 0 -sorthsps 2", 2, "-sorthsps 2: only the default order (0)");
  expect_error(dir, s + " -outfmt 0 -sorthits 0", 2, "-sorthits with -outfmt 0 is not supported");
  expect_error(dir, s + " -outfmt 4", 2, "supported formats are 0 (pairwise), 5 (XML)");
  expect_error(dir, s + " -outfmt '5 qseqid'", 2, "format 5 (XML) takes no field list");
  expect_error(dir, s + " -outfmt '6 qseqid nosuchfield'", 2, "nosuchfield");
  expect_error(dir, q + " -subject " + globins + " -outfmt 6 -comp_based_stats 9", 2, "-comp_based_stats 9");
  expect_error(dir, s + " -outfmt 6 -seg maybe", 2, "-seg maybe");
  expect_error(dir, s + " -outfmt 6 -task blastp-short", 2, "-task blastp-short");
  expect_error(dir, s + " -outfmt 6 -word_size 6", 2, "-word_size 6");
  expect_error(dir, s + " -outfmt 6 -num_threads 0", 2, "-num_threads 0");
  expect_error(dir, s + " -outfmt 6 -evalue 0", 2, "-evalue 0");
  expect_error(dir, s + " -outfmt 6 -threshold 0", 2, "-threshold 0: a non-zero threshold is required");
  expect_error(dir, s + " -outfmt 6 -xdrop_ungap 0", 2, "-xdrop_ungap 0");
  expect_error(dir, q + " -subject - -outfmt 6", 2, "cannot be stdin");
  expect_error(dir, s + " -num_descriptions 3 -max_target_seqs 3", 2, "incompatible with -max_target_seqs");
  expect_error(dir, s + " -num_descriptions 0 -num_alignments 0", 2, "no hits are being saved");
  expect_error(dir, s + " -outfmt 6 -num_alignments -1", 2, "-num_alignments: must be >= 0");
  expect_error(dir, s + " -line_length 0", 2, "-line_length 0: must be >= 1");
}

}  // namespace
