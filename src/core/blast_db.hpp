// blast_db.hpp: reading BLAST+ protein databases (makeblastdb 2.12, format versions 4 and 5) by name, as
// blastp -db resolves them, so every search command can take one wherever it takes a FASTA file
// (SequenceSource, db.hpp). Format notes: docs/FORMATS.md, "BLAST+ protein databases".
//
// Contents:
//   BlastSeqId      one Seq-id of a defline (ASN.1 Seq-id), with blastp's text forms of it
//   BlastDefline    one Blast-def-line of a sequence's .phr entry (title, Seq-ids, taxid), with the texts
//                   blastp prints for it (sseqid, sacc, stitle, the pairwise-report line)
//   BlastDb         a database: volumes memory-mapped, alias files resolved, residues converted from
//                   NCBIstdaa to our protein codes, deflines decoded from ASN.1 BER
//
// Files of one volume VOL (all integers big-endian unless noted):
//   VOL.pin  index: u32 version (4 or 5), u32 type (1 protein, 0 nucleotide), [v5: u32 volume number],
//            u32-length-prefixed title, [v5: u32-length-prefixed LMDB file name], u32-length-prefixed
//            date (NUL padded), u32 n, u64 total residues (LITTLE-endian), u32 max length, then
//            u32 header offsets[n + 1] into .phr and u32 sequence offsets[n + 1] into .psq
//            (the file is exactly that long for a protein volume).
//   VOL.psq  a NUL byte, then each sequence in NCBIstdaa (1 byte per residue) followed by a NUL;
//            sequence i is [seq[i], seq[i + 1] - 1), so its length is seq[i + 1] - seq[i] - 1.
//   VOL.phr  each sequence's Blast-def-line-set in ASN.1 BER, at [hdr[i], hdr[i + 1]).
// An alias file NAME.pal lists volumes and/or further alias files (DBLIST); makeblastdb writes one for a
// multi-volume database (DBLIST NAME.00 NAME.01 ...). The LMDB files of v5 (.pdb, .pot, .ptf, .pto)
// and ISAM/mask files are not needed and not read.
//
// Name resolution (CSeqDB's): `name` is a space-separated list of database names (double quotes group a
// name containing spaces). Each is looked up as given (relative to the working directory) and then in
// every directory of $BLASTDB (':'-separated; ~/.ncbirc is not read), taking NAME.pal before NAME.pin.
// A DBLIST entry of an alias file is resolved against the alias file's directory, alias first; a volume
// entry is first looked for in the working directory under its base name (CSeqDB's "local copy first"),
// an entry equal to the alias file's own base name is the volume of that name. Volumes are deduplicated
// and ordered as CSeqDB orders them, by (file name, full path) in byte order, whatever the DBLIST
// order: that is the OID order. Alias files that restrict the database (GILIST, TILIST, SEQIDLIST,
// TAXIDLIST, OIDLIST, FIRST_OID, LAST_OID, MEMB_BIT, MASKLIST and their NEG_ forms) are refused with
// Error(kInput) instead of being searched unrestricted. The keys TITLE, NSEQ, LENGTH, STATS_NSEQ,
// STATS_TOTLEN and MIN_SEQ_LENGTH are honoured as CSeqDB's alias walkers do (a node with the key
// supplies the value, otherwise its children do; sums, minimum, "; "-joined titles).
//
// Residues: NCBIstdaa codes 1..27 (A B C D E F G H I K L M N P Q R S T V W X Y Z U * O J) map one to
// one onto our 27 protein codes (alphabet.hpp); nothing is lost. makeblastdb stores a '-' letter of its
// input as NCBIstdaa 0 inside the sequence (blastp then scores it with the matrix's '-' row, -4 against
// everything in BLOSUM62): we have no gap code, so by default such a residue is Error(kInput) naming
// the .psq file, the OID and the position; BlastDbOptions::gap_code maps it to a code of our choice
// instead (kProteinStop is closest: -4 against everything but '*'). Codes above 27 are Error(kFormat).
//
// Deflines (found with makeblastdb / blastp / blastdbcmd 2.12, tests/core/test_blast_db.cpp compares
// against blastp's own output):
//   (a) without -parse_seqids every sequence has one defline whose only Seq-id is gnl|BL_ORD_ID|OID and
//       whose title is the whole FASTA header line after '>' (makeblastdb turns each tab into three
//       spaces, other control characters into '#', and ^A-separated headers into one title). blastp
//       shows: sseqid = sacc = the first space-delimited word of the title after leading spaces
//       ("unnamed" for an empty title, the real Seq-id gnl|BL_ORD_ID|OID for a title of only spaces);
//       stitle = the title verbatim ("N/A" when empty); pairwise report ">title" ("unnamed protein
//       product" when empty).
//   (b) with -parse_seqids the header's id is parsed into Seq-ids and the title is the rest of the
//       line; one defline per ^A-separated header. blastp shows: sseqid = "gi|N|" (when there is a gi)
//       followed by the FASTA form of the best-ranked non-gi Seq-id (CSeq_id::Score, local ids without
//       "lcl|"), e.g. sp|P69905|HBA_HUMAN, gi|12345|ref|NP_000509.1|, gnl|db|ident1, foo; sacc = the best
//       id's accession without version (P69905, NP_000509, db:ident1, 1ABC_A); stitle = the title
//       ("N/A" when empty); pairwise report ">ID title" with ID the accession.version (P69905,
//       NP_000509.1, 1ABC_A, db:ident1, foo; the FASTA form when there is no accession: gi|55,
//       pir||S12345). Only the first defline of a set is shown (sallseqid / salltitles join all).
// to_sequence() fills Sequence::name = sseqid and Sequence::description so that "name description" is
// what blastp prints as stitle in case (a) (the title after the first word and one space, further
// spaces kept) except for a title with leading spaces (they are dropped), an empty title (name
// "unnamed", description empty, stitle "N/A") or one of only spaces (name gnl|BL_ORD_ID|OID). In case
// (b) description = the title, so "name description" is sseqid + title, which blastp prints nowhere as
// such (stitle is the title alone, the report line starts with the accession): formatters that need
// blastp's exact text take it from deflines().
//
// Minimum subject length of blastp's hit-saving cutoff (BlastHitSavingParametersUpdate's n, taken in
// blast_setup.c from BlastSeqSrcGetMinSeqLen when a Gumbel block exists; search.hpp): for -db it is
// CSeqDB::GetMinLength(), which CSeqDBImpl sets from the alias MIN_SEQ_LENGTH walker over the database's
// alias tree (volumes contribute CSeqDBIdxFile::GetMinLength(), which is 0: the index stores no
// shortest length) and replaces by BLAST_SEQSRC_MINLENGTH = 10 when it is <= 0. So for every database
// makeblastdb writes, single- or multi-volume, v4 or v5, n = 10, whatever the real shortest sequence;
// only an alias file with a positive MIN_SEQ_LENGTH on every path to every volume changes it (to the
// smallest such value, which may be below 10). cutoff_min_length() returns this. (For -subject blastp
// uses max(shortest subject, 10) instead: search.hpp.)
//
// Everything is memory-mapped (the OS pages residues in on demand); open() reads each volume's header
// and checks file sizes and the end offsets (O(volumes)); accessors check the offsets of the OID they
// read (O(1)); min_length() scans the index once (O(n), cached); verify() checks every offset, residue
// and defline. Malformed files: Error(kFormat) naming the file; a nucleotide database, a restricted
// alias: Error(kInput); missing files: Error(kIo) naming the path tried. All const members are safe to
// call from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "warpsearch/sequence.hpp"

namespace warpsearch {

// The Seq-id CHOICE alternatives (ASN.1 Seq-id, in its order: the BER context tag is the value).
enum class SeqIdKind : std::uint8_t {
  kLocal = 0,
  kGibbsq = 1,
  kGibbmt = 2,
  kGiim = 3,
  kGenbank = 4,
  kEmbl = 5,
  kPir = 6,
  kSwissprot = 7,
  kPatent = 8,
  kOther = 9,  // RefSeq
  kGeneral = 10,
  kGi = 11,
  kDdbj = 12,
  kPrf = 13,
  kPdb = 14,
  kTpg = 15,
  kTpe = 16,
  kTpd = 17,
  kGpipe = 18,
  kNamedAnnotTrack = 19,
};

// Whether a kind holds a Textseq-id (accession, name, release, version).
bool is_textseq(SeqIdKind kind);

struct BlastSeqId {
  SeqIdKind kind = SeqIdKind::kLocal;
  // Textseq-id: accession; general: db; pdb: molecule; patent: country; giim: db.
  std::string accession;
  // Textseq-id: name; local and general: the Object-id string (empty when numeric); pdb: chain id;
  // patent: number (or application number when pre_grant).
  std::string name;
  std::string release;                  // Textseq-id and giim release ("reviewed" / "unreviewed" for sp/tr)
  std::optional<std::int64_t> version;  // Textseq-id version
  // gi, gibbsq, gibbmt, giim: the id; local and general: the Object-id integer (numeric); patent: the
  // sequence number.
  std::int64_t number = 0;
  bool numeric = false;    // local / general: the Object-id is an integer
  bool pre_grant = false;  // patent: an application number (FASTA "pgp|") rather than a patent number

  // CSeq_id::AsFastaString: "sp|P69905|HBA_HUMAN", "ref|NP_000509.1|", "gi|12345", "lcl|foo",
  // "gnl|db|ident1", "pdb|1ABC|A", "pat|US|5123|1", "pir||S12345".
  std::string fasta() const;
  // CSeq_id::GetLabel(eContent): accession (with ".version" when with_version and set; the name when
  // there is no accession), local id, "db:tag", "1ABC_A", "US5123_1", the number of a gi.
  std::string content(bool with_version) const;
  // CSeq_id::Score (TextScore): lower is better; gi 200, general 150, local and patent 100, RefSeq 80,
  // other Textseq-ids 50, plus 4 without version, 3 without accession, 2 without name.
  int text_score() const;
};

struct BlastDefline {
  std::string title;
  std::vector<BlastSeqId> ids;
  std::optional<std::int64_t> taxid;

  // True when the first Seq-id is gnl|BL_ORD_ID|N: the database was made without -parse_seqids and the
  // title holds the whole FASTA header (case (a) above).
  bool has_ordinal_id() const;
  // The best-ranked Seq-id (CSeq_id::Score, first on ties); nullptr when there are none.
  const BlastSeqId* best_id() const;
  // blastp's sseqid (outfmt 6/7), e.g. "sp|P69905|HBA_HUMAN", or the title's first word in case (a).
  std::string seqid() const;
  // blastp's sacc.
  std::string accession() const;
  // blastp's stitle: the title, "N/A" when empty.
  std::string tabular_title() const;
  // The text after '>' of blastp's pairwise report (outfmt 0): "title" in case (a), "ID title" in (b).
  std::string report_line() const;
  // That ID ("P69905", "NP_000509.1"); empty in case (a) or without Seq-ids.
  std::string report_id() const;
};

// Sequence::name / description for a defline (see the header comment): name = seqid().
void blast_defline_name(const BlastDefline& defline, std::string& name, std::string& description);

struct BlastDbOptions {
  // Our protein code for NCBIstdaa 0 ('-' in makeblastdb's input) inside a sequence; nullopt: such a
  // residue is Error(kInput).
  std::optional<std::uint8_t> gap_code;
};

// One volume (VOL.pin/.psq/.phr) of a database; its sequences are OIDs [first_oid, first_oid + sequences).
struct BlastDbVolume {
  std::string path;  // base path, without extension
  std::uint32_t format_version = 0;
  std::string title;
  std::string date;
  std::uint64_t first_oid = 0;
  std::uint64_t sequences = 0;
  std::uint64_t residues = 0;  // the index's total (u64 little-endian field)
  std::uint64_t max_length = 0;
  std::uint64_t file_bytes = 0;  // .pin + .psq + .phr
};

class BlastDb {
 public:
  // Opens the database `name` (resolved as described above). Errors: no such database: Error(kIo)
  // naming the paths tried; a nucleotide database or a restricted alias: Error(kInput); malformed
  // files, alias cycles, unknown alias syntax: Error(kFormat) naming the file.
  static BlastDb open(const std::string& name, BlastDbOptions options = {});
  // Whether `name` resolves to a BLAST database (protein or nucleotide: NAME.pal, .pin, .nal or .nin
  // found as open() would look for them). A path ending in .pal or .pin of an existing file also counts
  // (open() strips the extension).
  static bool exists(const std::string& name);

  BlastDb(BlastDb&&) noexcept;
  BlastDb& operator=(BlastDb&&) noexcept;
  BlastDb(const BlastDb&) = delete;
  BlastDb& operator=(const BlastDb&) = delete;
  ~BlastDb();

  const std::string& name() const;
  // CSeqDB::GetTitle: the TITLE walker's "; "-joined result (makeblastdb: the -title, or the input file).
  const std::string& title() const;
  // The index's "Posted date" string of the most recent volume (as CSeqDB::GetDate), e.g.
  // "Nov 21, 2026  7:20 PM".
  const std::string& date() const;
  // The format version of the first volume (4 or 5; volumes may mix them).
  std::uint32_t format_version() const;
  std::span<const BlastDbVolume> volumes() const;
  const std::vector<std::string>& alias_files() const;  // every alias file read, in reading order

  std::uint64_t size() const;            // number of OIDs (sequences)
  std::uint64_t total_residues() const;  // sum of the volumes' index totals
  std::uint64_t max_length() const;      // largest of the volumes' index maxima
  // The shortest sequence (one pass over the sequence offsets on first call, then cached); 0 for an
  // empty database.
  std::uint64_t min_length() const;
  // What blastp uses for statistics (BLAST_GetSubjectTotals): STATS_TOTLEN / STATS_NSEQ from alias files
  // when positive, else the LENGTH / NSEQ walkers (alias values, otherwise the volumes' totals / OIDs).
  // Equal to total_residues() / size() for every database makeblastdb writes.
  std::uint64_t stats_total_length() const;
  std::uint64_t stats_num_seqs() const;
  // blastp's minimum subject length for the hit-saving cutoff with -db (see the header comment): the
  // MIN_SEQ_LENGTH alias walker's value, or BLAST_SEQSRC_MINLENGTH = 10 when that is <= 0 (always, for
  // databases makeblastdb writes).
  int cutoff_min_length() const;
  std::uint64_t file_bytes() const;  // all volume files and alias files

  // Accessors take oid < size(); each checks the offsets it reads (Error(kFormat) naming the file).
  std::uint64_t length(std::uint64_t oid) const;
  // The mapped NCBIstdaa bytes of a sequence (valid while the BlastDb lives).
  std::span<const std::uint8_t> ncbistdaa(std::uint64_t oid) const;
  // Our protein codes (replaces `out`).
  void residues(std::uint64_t oid, std::vector<std::uint8_t>& out) const;
  // The same into out, which must hold exactly length(oid) codes (else Error(kInternal)).
  void residues(std::uint64_t oid, std::span<std::uint8_t> out) const;
  // The decoded Blast-def-line-set (at least one defline).
  std::vector<BlastDefline> deflines(std::uint64_t oid) const;
  // Fills seq: name / description from the first defline (blast_defline_name), residues, no soft mask,
  // line = 0.
  void to_sequence(std::uint64_t oid, Sequence& seq) const;

  // Checks everything open() and the accessors check lazily, for every OID: offsets monotone and in
  // bounds, NUL separators, every residue code (a gap is an error unless gap_code is set), every
  // defline decodes, each volume's residue total and maximum length match its sequences.
  void verify() const;

 private:
  struct Impl;
  BlastDb();
  std::unique_ptr<Impl> impl_;
};

// NCBIstdaa (0..27) -> our protein code (alphabet.hpp); kCodeInvalid for 0 (gap) and codes above 27.
std::uint8_t ncbistdaa_to_code(std::uint8_t ncbistdaa);

}  // namespace warpsearch
