// subject_ids.hpp: what blastp prints for a subject of a BLAST+ database made with -parse_seqids.
//
// Such a database stores each header's id parsed into Seq-ids and the rest of the line as the title
// (core/blast_db.hpp, case (b)), and blastp prints them apart: e.g. for ">sp|P69905|HBA_HUMAN Hemoglobin"
// sseqid "sp|P69905|HBA_HUMAN", sacc / saccver "P69905", stitle "Hemoglobin", and in -outfmt 0 the
// description row and ">" line "P69905 Hemoglobin". Subjects read from FASTA files, packed databases or
// databases made without -parse_seqids have no ParsedSubjectIds: their texts come from the header as read.
#pragma once

#include <string>

namespace warpsearch::blast {

struct ParsedSubjectIds {
  std::string seqid;        // sseqid: the first defline's ids (BlastDefline::seqid)
  std::string all_seqids;   // sallseqid: every defline's, joined by ';'
  std::string acc;          // sacc: the best id's accession without version
  std::string accver;       // saccver: with its version
  std::string all_accs;     // sallacc: every defline's sacc, joined by ';'
  std::string title;        // stitle ("N/A" when empty)
  std::string all_titles;   // salltitles: every defline's title, joined by "<>"
  std::string report_line;  // -outfmt 0: the description row's and the ">" line's text (accession, title)
  std::string report_id;    // that accession ("" when the line is the title alone): the ">" line wraps
                            // the title after it as if it stood alone
  // -outfmt 5 (xml.hpp): Hit_def, the first defline's title as stored ("" when untitled), and
  // Hit_accession, the best id's label (sacc, except a general id's tag alone: "id7" of "gnl|db|id7").
  std::string plain_title;
  std::string xml_accession;

  friend bool operator==(const ParsedSubjectIds&, const ParsedSubjectIds&) = default;
};

}  // namespace warpsearch::blast
