// Text-mode multiple sequence alignments and their Stockholm writer, exactly as Easel 0.48 writes them
// (esl_msafile_stockholm.c, stockholm_write): the "# STOCKHOLM 1.0" header, the #=GF ID/AC/DE/AU lines,
// the #=GS AC and DE sections, the alignment blocks with #=GR PP and #=GC PP_cons/RF lines, the name
// margin and the uniquifying "<n>|" prefix Easel adds when sequence names repeat. Contents: TextMsa (the
// subset of ESL_MSA that HMMER's trace alignments fill), MsaLayout and write_stockholm.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace warpsearch::hmm {

/// A text-mode alignment (the parts of ESL_MSA that p7_tracealign_Seqs and hmmsearch set). Optional
/// strings are empty when absent (Easel's NULL). Invariants: sqname, sqacc, sqdesc and aseq have nseq()
/// entries; every aseq[i] has alen characters; pp is either empty (no per-residue posterior annotation,
/// ESL_MSA pp == NULL) or has nseq() entries, each empty (that sequence has no PP line) or of length alen;
/// pp_cons and rf are empty or of length alen.
struct TextMsa {
  std::string name;  // #=GF ID
  std::string acc;   // #=GF AC
  std::string desc;  // #=GF DE
  std::string au;    // #=GF AU
  std::vector<std::string> sqname;
  std::vector<std::string> sqacc;   // #=GS <name> AC; written only when at least one is non-empty
  std::vector<std::string> sqdesc;  // #=GS <name> DE; written only when at least one is non-empty
  std::vector<std::string> aseq;    // aligned text, alen characters each
  std::vector<std::string> pp;      // #=GR <name> PP
  std::string pp_cons;              // #=GC PP_cons
  std::string rf;                   // #=GC RF
  int64_t alen = 0;

  int nseq() const { return static_cast<int>(sqname.size()); }
};

/// Easel's two writers of this format: eslMSAFILE_STOCKHOLM (blocks of 200 columns) and eslMSAFILE_PFAM
/// (one block, each sequence on one line). hmmsearch -A uses Stockholm unless --notextw is given.
enum class MsaLayout { kStockholm, kPfam };

/// The whole Stockholm record of `msa` ("# STOCKHOLM 1.0" ... "//\n"), byte-identical to
/// esl_msafile_Write(fp, msa, eslMSAFILE_STOCKHOLM or eslMSAFILE_PFAM) for the fields TextMsa holds.
std::string write_stockholm(const TextMsa& msa, MsaLayout layout);

/// The same with an explicit number of alignment columns per block (cpl >= 1; Easel's stockholm_write).
std::string write_stockholm(const TextMsa& msa, int64_t cpl);

}  // namespace warpsearch::hmm
