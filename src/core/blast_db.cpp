// blast_db.cpp: BlastDb: BLAST+ protein database reader (name resolution, alias files, volume index,
// NCBIstdaa residues, Blast-def-line-set ASN.1 BER deflines) and blastp's text forms of Seq-ids.
// Layout and rules: blast_db.hpp and docs/FORMATS.md.
#include "core/blast_db.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "core/mapped_file.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch {
namespace {

namespace fs = std::filesystem;

constexpr int kSeqSrcMinLength = 10;  // BLAST_SEQSRC_MINLENGTH (blast_seqsrc.h)
constexpr int kMaxAliasDepth = 64;    // nesting limit of alias files (cycles are detected separately)
constexpr int kMaxBerDepth = 32;      // nesting limit of ASN.1 values in a defline set

// ---------------------------------------------------------------------------------------------------
// Files

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::uint64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

std::string read_text_file(const std::string& path) {
  MappedFile file;
  file.open(path, "BLAST database file");
  return {reinterpret_cast<const char*>(file.data()), static_cast<std::size_t>(file.size())};
}

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

std::uint64_t le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The text up to the first NUL (the index pads its date with NULs; CSeqDB's x_FixString does the same).
std::string until_nul(std::string_view s) { return std::string(s.substr(0, s.find('\0'))); }

// ---------------------------------------------------------------------------------------------------
// NCBIstdaa

// NCBIstdaa letters by code: "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ".
constexpr std::string_view kNcbiStdaa = "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ";

constexpr std::array<std::uint8_t, 256> build_ncbistdaa_table() {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = kCodeInvalid;
  for (std::size_t code = 1; code < kNcbiStdaa.size(); ++code) {
    const char letter = kNcbiStdaa[code];
    for (std::size_t i = 0; i < kProteinSymbols.size(); ++i) {
      if (kProteinSymbols[i] == letter) t[code] = static_cast<std::uint8_t>(i);
    }
  }
  return t;
}
constexpr std::array<std::uint8_t, 256> kNcbiStdaaToCode = build_ncbistdaa_table();
static_assert(kNcbiStdaaToCode[1] == 0 && kNcbiStdaaToCode[21] == kProteinUnknown &&
                  kNcbiStdaaToCode[25] == kProteinStop && kNcbiStdaaToCode[27] == 21 &&
                  kNcbiStdaaToCode[0] == kCodeInvalid,
              "NCBIstdaa table: A=0, X=unknown, *=stop, J=21, gap unmapped");

// ---------------------------------------------------------------------------------------------------
// ASN.1 BER (the subset NCBI's serializer writes: explicit context tags, definite or indefinite lengths)

struct BerNode {
  std::uint8_t cls = 0;  // 0 universal, 1 application, 2 context, 3 private
  bool constructed = false;
  std::uint32_t tag = 0;
  std::size_t begin = 0;  // content
  std::size_t end = 0;    // end of content (before the end-of-contents octets of an indefinite length)
  std::size_t next = 0;   // first byte after the element
};

class BerReader {
 public:
  BerReader(std::span<const std::uint8_t> bytes, const std::string& file, std::uint64_t oid,
            std::uint64_t base)
      : bytes_(bytes), file_(file), oid_(oid), base_(base) {}

  [[noreturn]] void fail(const std::string& what, std::size_t pos) const {
    throw Error(ErrorKind::kFormat,
                fmt::format("malformed defline (ASN.1 Blast-def-line-set) of OID {} at byte {}: {}", oid_,
                            base_ + pos, what),
                file_);
  }

  std::size_t size() const { return bytes_.size(); }

  BerNode parse(std::size_t pos, std::size_t limit, int depth) const {
    if (depth > kMaxBerDepth) fail("values nested too deeply", pos);
    BerNode n;
    if (pos >= limit) fail("value expected, data ends", pos);
    const std::uint8_t first = bytes_[pos++];
    n.cls = static_cast<std::uint8_t>(first >> 6);
    n.constructed = (first & 0x20) != 0;
    n.tag = first & 0x1fu;
    if (n.tag == 0x1f) {  // high tag number, base 128
      n.tag = 0;
      for (int i = 0;; ++i) {
        if (pos >= limit || i == 4) fail("bad tag", pos);
        const std::uint8_t b = bytes_[pos++];
        n.tag = (n.tag << 7) | (b & 0x7fu);
        if ((b & 0x80) == 0) break;
      }
    }
    if (pos >= limit) fail("length expected, data ends", pos);
    const std::uint8_t len = bytes_[pos++];
    if (len == 0x80) {
      if (!n.constructed) fail("indefinite length on a primitive value", pos);
      n.begin = pos;
      std::size_t p = pos;
      while (true) {
        if (p + 2 <= limit && bytes_[p] == 0 && bytes_[p + 1] == 0) break;
        if (p >= limit) fail("indefinite-length value not terminated", p);
        p = parse(p, limit, depth + 1).next;
      }
      n.end = p;
      n.next = p + 2;
      return n;
    }
    std::uint64_t length = len;
    if (len > 0x80) {
      const int count = len & 0x7f;
      if (count > 8) fail("bad length", pos);
      length = 0;
      for (int i = 0; i < count; ++i) {
        if (pos >= limit) fail("length expected, data ends", pos);
        length = (length << 8) | bytes_[pos++];
      }
    }
    if (length > limit - pos) fail("value runs past its container", pos);
    n.begin = pos;
    n.end = pos + static_cast<std::size_t>(length);
    n.next = n.end;
    return n;
  }

  // The elements inside a constructed node.
  std::vector<BerNode> children(const BerNode& node, int depth) const {
    std::vector<BerNode> out;
    if (!node.constructed) fail("constructed value expected", node.begin);
    for (std::size_t p = node.begin; p < node.end;) {
      out.push_back(parse(p, node.end, depth + 1));
      p = out.back().next;
    }
    return out;
  }

  // The single value inside an explicit tag [n].
  BerNode inner(const BerNode& node, int depth) const {
    if (!node.constructed || node.cls != 2) fail("explicitly tagged value expected", node.begin);
    const BerNode value = parse(node.begin, node.end, depth + 1);
    if (value.next != node.end) fail("more than one value inside a tag", value.next);
    return value;
  }

  std::string string_value(const BerNode& node, int depth) const {
    if (node.cls != 0) fail("string expected", node.begin);
    if (!node.constructed) {
      return {reinterpret_cast<const char*>(bytes_.data() + node.begin), node.end - node.begin};
    }
    std::string out;  // constructed string: concatenated primitive segments
    for (const BerNode& part : children(node, depth)) out += string_value(part, depth + 1);
    return out;
  }

  std::int64_t integer_value(const BerNode& node) const {
    if (node.constructed || node.tag != 2 || (node.cls != 0 && node.cls != 1))
      fail("integer expected", node.begin);
    const std::size_t len = node.end - node.begin;
    if (len == 0 || len > 9 || (len == 9 && bytes_[node.begin] != 0)) fail("bad integer", node.begin);
    std::uint64_t v = (bytes_[node.begin] & 0x80) != 0 ? ~std::uint64_t{0} : 0;
    for (std::size_t i = node.begin; i < node.end; ++i) v = (v << 8) | bytes_[i];
    return static_cast<std::int64_t>(v);
  }

  // An explicitly tagged string / integer member.
  std::string tagged_string(const BerNode& node, int depth) const {
    return string_value(inner(node, depth), depth + 1);
  }
  std::int64_t tagged_integer(const BerNode& node, int depth) const {
    return integer_value(inner(node, depth));
  }

 private:
  std::span<const std::uint8_t> bytes_;
  const std::string& file_;
  std::uint64_t oid_;
  std::uint64_t base_;  // offset of the defline set in its file (for messages)
};

// Object-id ::= CHOICE { id INTEGER, str VisibleString }
void read_object_id(const BerReader& ber, const BerNode& choice, int depth, BlastSeqId& id) {
  if (choice.cls != 2 || !choice.constructed) ber.fail("Object-id expected", choice.begin);
  if (choice.tag == 0) {
    id.number = ber.tagged_integer(choice, depth);
    id.numeric = true;
  } else if (choice.tag == 1) {
    id.name = ber.tagged_string(choice, depth);
  } else {
    ber.fail("unknown Object-id alternative", choice.begin);
  }
}

// Members [tag] of a SEQUENCE value, as (tag, node) pairs.
std::vector<BerNode> sequence_members(const BerReader& ber, const BerNode& seq, int depth) {
  if (seq.cls != 0 || seq.tag != 16 || !seq.constructed) ber.fail("SEQUENCE expected", seq.begin);
  std::vector<BerNode> members = ber.children(seq, depth);
  for (const BerNode& m : members) {
    if (m.cls != 2 || !m.constructed) ber.fail("tagged SEQUENCE member expected", m.begin);
  }
  return members;
}

BlastSeqId read_seq_id(const BerReader& ber, const BerNode& choice, int depth) {
  if (choice.cls != 2 || !choice.constructed) ber.fail("Seq-id expected", choice.begin);
  if (choice.tag > static_cast<std::uint32_t>(SeqIdKind::kNamedAnnotTrack)) {
    ber.fail(fmt::format("unknown Seq-id type {}", choice.tag), choice.begin);
  }
  BlastSeqId id;
  id.kind = static_cast<SeqIdKind>(choice.tag);
  const BerNode value = ber.inner(choice, depth);
  const int d = depth + 2;
  switch (id.kind) {
    case SeqIdKind::kLocal: read_object_id(ber, value, d, id); break;
    case SeqIdKind::kGibbsq:
    case SeqIdKind::kGibbmt:
    case SeqIdKind::kGi: id.number = ber.integer_value(value); break;
    case SeqIdKind::kGiim:  // Giimport-id ::= SEQUENCE { id INTEGER, db VisibleString OPTIONAL, release ... }
      for (const BerNode& m : sequence_members(ber, value, d)) {
        if (m.tag == 0) id.number = ber.tagged_integer(m, d);
        if (m.tag == 1) id.accession = ber.tagged_string(m, d);
        if (m.tag == 2) id.release = ber.tagged_string(m, d);
      }
      break;
    case SeqIdKind::kPatent:  // Patent-seq-id ::= SEQUENCE { seqid INTEGER, cit Id-pat }
      for (const BerNode& m : sequence_members(ber, value, d)) {
        if (m.tag == 0) id.number = ber.tagged_integer(m, d);
        if (m.tag != 1) continue;
        // Id-pat ::= SEQUENCE { country, id CHOICE { number, app-number }, doc-type OPTIONAL }
        for (const BerNode& p : sequence_members(ber, ber.inner(m, d), d + 2)) {
          if (p.tag == 0) id.accession = ber.tagged_string(p, d + 2);
          if (p.tag != 1) continue;
          const BerNode number = ber.inner(p, d + 2);
          if (number.cls != 2 || number.tag > 1) ber.fail("bad patent number", number.begin);
          id.pre_grant = number.tag == 1;
          id.name = ber.tagged_string(number, d + 4);
        }
      }
      break;
    case SeqIdKind::kGeneral:  // Dbtag ::= SEQUENCE { db VisibleString, tag Object-id }
      for (const BerNode& m : sequence_members(ber, value, d)) {
        if (m.tag == 0) id.accession = ber.tagged_string(m, d);
        if (m.tag == 1) read_object_id(ber, ber.inner(m, d), d + 2, id);
      }
      break;
    case SeqIdKind::kPdb: {  // PDB-seq-id ::= SEQUENCE { mol, chain INTEGER DEFAULT 32, rel OPTIONAL,
                             // chain-id }
      std::optional<std::int64_t> chain;
      bool have_chain_id = false;
      for (const BerNode& m : sequence_members(ber, value, d)) {
        if (m.tag == 0) id.accession = ber.tagged_string(m, d);
        if (m.tag == 1) chain = ber.tagged_integer(m, d);
        if (m.tag == 3) {
          id.name = ber.tagged_string(m, d);
          have_chain_id = true;
        }
      }
      // Without chain-id the old one-character chain applies (default ' ').
      if (!have_chain_id) id.name = std::string(1, static_cast<char>(chain.value_or(32)));
      break;
    }
    default:  // Textseq-id ::= SEQUENCE { name, accession, release, version INTEGER } (all optional)
      for (const BerNode& m : sequence_members(ber, value, d)) {
        if (m.tag == 0) id.name = ber.tagged_string(m, d);
        if (m.tag == 1) id.accession = ber.tagged_string(m, d);
        if (m.tag == 2) id.release = ber.tagged_string(m, d);
        if (m.tag == 3) id.version = ber.tagged_integer(m, d);
      }
      break;
  }
  return id;
}

// Blast-def-line-set ::= SEQUENCE OF Blast-def-line
// Blast-def-line ::= SEQUENCE { title [0] OPTIONAL, seqid [1] SEQUENCE OF Seq-id, taxid [2] OPTIONAL,
//                               memberships [3], links [4], other-info [5] (ignored) }
std::vector<BlastDefline> decode_defline_set(const BerReader& ber) {
  const BerNode set = ber.parse(0, ber.size(), 0);
  if (set.next != ber.size()) ber.fail("bytes after the defline set", set.next);
  if (set.cls != 0 || set.tag != 16 || !set.constructed) ber.fail("SEQUENCE OF Blast-def-line expected", 0);
  std::vector<BlastDefline> out;
  for (const BerNode& line : ber.children(set, 0)) {
    BlastDefline defline;
    for (const BerNode& m : sequence_members(ber, line, 1)) {
      if (m.tag == 0) {
        defline.title = ber.tagged_string(m, 2);
      } else if (m.tag == 1) {
        const BerNode ids = ber.inner(m, 2);
        if (ids.cls != 0 || ids.tag != 16) ber.fail("SEQUENCE OF Seq-id expected", ids.begin);
        for (const BerNode& choice : ber.children(ids, 3)) defline.ids.push_back(read_seq_id(ber, choice, 4));
      } else if (m.tag == 2) {
        defline.taxid = ber.tagged_integer(m, 2);
      }
    }
    out.push_back(std::move(defline));
  }
  if (out.empty()) ber.fail("no defline", 0);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Seq-id texts

std::string_view textseq_prefix(const BlastSeqId& id) {
  switch (id.kind) {
    case SeqIdKind::kGenbank: return "gb";
    case SeqIdKind::kEmbl: return "emb";
    case SeqIdKind::kPir: return "pir";
    case SeqIdKind::kSwissprot: return id.release == "unreviewed" ? "tr" : "sp";
    case SeqIdKind::kOther: return "ref";
    case SeqIdKind::kDdbj: return "dbj";
    case SeqIdKind::kPrf: return "prf";
    case SeqIdKind::kTpg: return "tpg";
    case SeqIdKind::kTpe: return "tpe";
    case SeqIdKind::kTpd: return "tpd";
    case SeqIdKind::kGpipe: return "gpp";
    case SeqIdKind::kNamedAnnotTrack: return "nat";
    default: return "";
  }
}

std::string object_id_text(const BlastSeqId& id) { return id.numeric ? std::to_string(id.number) : id.name; }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Case (a): the first word of the title (blastp's fake local id), empty for a title of only spaces.
std::string title_word(const std::string& title) {
  const std::string_view t = trim(title.empty() ? std::string_view("unnamed protein product") : title);
  return std::string(t.substr(0, t.find(' ')));
}

// CShowBlastDefline::GetSeqIdListString(ids, show_gi = true).
std::string seq_id_list_string(const BlastDefline& d) {
  std::string out;
  const BlastSeqId* gi = nullptr;
  for (const BlastSeqId& id : d.ids) {
    if (id.kind == SeqIdKind::kGi) {
      gi = &id;
      break;
    }
  }
  if (gi != nullptr) out = gi->fasta();
  const BlastSeqId* best = d.best_id();
  if (best != nullptr && best->kind != SeqIdKind::kGi) {
    if (gi != nullptr) out += '|';
    out += best->kind == SeqIdKind::kLocal ? best->content(false) : best->fasta();
  }
  return out.empty() ? "Unknown" : out;
}

constexpr std::string_view kUnnamed = "unnamed protein product";

// ---------------------------------------------------------------------------------------------------
// Name resolution and alias files

enum class Found { kNone, kAlias, kVolume, kNucleotide };

// Which database files exist for base path `base`: protein alias, then protein volume, then nucleotide.
Found probe(const std::string& base) {
  if (is_file(base + ".pal")) return Found::kAlias;
  if (is_file(base + ".pin")) return Found::kVolume;
  if (is_file(base + ".nal") || is_file(base + ".nin")) return Found::kNucleotide;
  return Found::kNone;
}

// The database search path after the working directory: $BLASTDB, ':'-separated.
std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("BLASTDB")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  return dirs;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty() || (!name.empty() && name.front() == '/')) return name;
  return (fs::path(dir) / name).string();
}

std::string normal_path(const std::string& path) {
  std::string s = fs::path(path).lexically_normal().string();
  return s.empty() ? std::string(".") : s;
}

// SeqDB_SplitQuoted: space-separated names, double quotes group a name with spaces.
std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  bool have = false;
  for (const char c : list) {
    if (c == '"') {
      quoted = !quoted;
      have = true;
    } else if (c == ' ' && !quoted) {
      if (have) out.push_back(std::move(cur));
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (have) out.push_back(std::move(cur));
  return out;
}

struct Resolved {
  Found found = Found::kNone;
  std::string base;                // the path found, without extension
  std::vector<std::string> tried;  // base paths looked at
};

// A top-level database name: as given, then in each $BLASTDB directory (relative names only).
Resolved resolve_name(std::string name) {
  Resolved r;
  for (const std::string_view ext : {std::string_view(".pal"), std::string_view(".pin")}) {
    if (name.size() > ext.size() && name.ends_with(ext) && is_file(name))
      name.resize(name.size() - ext.size());
  }
  std::vector<std::string> candidates{name};
  if (name.empty() || name.front() != '/') {
    for (const std::string& dir : search_dirs()) candidates.push_back(join_path(dir, name));
  }
  for (const std::string& base : candidates) {
    r.tried.push_back(base);
    const Found f = probe(base);
    if (f == Found::kAlias || f == Found::kVolume) {
      r.found = f;
      r.base = base;
      return r;
    }
    if (f == Found::kNucleotide && r.found == Found::kNone) {
      r.found = f;
      r.base = base;
    }
  }
  return r;
}

struct AliasNode {
  std::string file;  // NAME.pal ("" for the root: the names given to open())
  std::string dir;   // its directory
  std::map<std::string, std::string, std::less<>> values;
  std::vector<std::unique_ptr<AliasNode>> children;  // alias files listed
  std::vector<std::string> volumes;                  // volume base paths listed (deduplicated)
};

constexpr std::array<std::string_view, 13> kRestrictingKeys = {
    "GILIST",   "TILIST",   "SEQIDLIST",  "TAXIDLIST",  "OIDLIST",       "FIRST_OID",    "LAST_OID",
    "MEMB_BIT", "MASKLIST", "NEG_GILIST", "NEG_TILIST", "NEG_SEQIDLIST", "NEG_TAXIDLIST"};

// CSeqDBAliasNode::x_ReadValues / s_SeqDB_ReadLine.
void read_alias_values(AliasNode& node) {
  const std::string text = read_text_file(node.file);
  std::size_t p = 0;
  while (p < text.size()) {
    while (p < text.size() && text[p] == ' ') ++p;
    std::size_t eol = p;
    while (eol < text.size() && text[eol] != '\n' && text[eol] != '\r') ++eol;
    std::string_view line(text.data() + p, eol - p);
    p = eol + 1;
    if (line.empty() || line.front() == '#') continue;
    std::size_t name_end = 0;
    while (name_end < line.size() && line[name_end] != ' ' && line[name_end] != '\t') ++name_end;
    std::string name(line.substr(0, name_end));
    std::string_view value = line.substr(name_end);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    std::string v(value);
    std::replace(v.begin(), v.end(), '\t', ' ');
    node.values[name] = std::move(v);
  }
  for (const std::string_view key : kRestrictingKeys) {
    if (node.values.contains(key)) {
      throw Error(ErrorKind::kInput,
                  fmt::format("the alias file restricts the database with {}; restricted BLAST databases "
                              "are not supported (use the unrestricted database)",
                              key),
                  node.file);
    }
  }
}

void add_volume(AliasNode& node, const std::string& base) {
  const std::string path = normal_path(base);
  if (std::find(node.volumes.begin(), node.volumes.end(), path) == node.volumes.end())
    node.volumes.push_back(path);
}

std::unique_ptr<AliasNode> read_alias(const std::string& base, std::vector<std::string>& stack,
                                      std::vector<std::string>& files_read);

// CSeqDBAliasNode::x_ExpandAliases for one DBLIST entry of a node read from an alias file.
void expand_entry(AliasNode& node, const std::string& entry, std::vector<std::string>& stack,
                  std::vector<std::string>& files_read) {
  const fs::path entry_path(entry);
  const std::string self = fs::path(node.file).stem().string();
  if (!entry_path.has_parent_path() && entry == self) {  // "DBLIST X" in X.pal: the volume X
    add_volume(node, join_path(node.dir, entry));
    return;
  }
  const std::string base = join_path(node.dir, entry);
  if (is_file(base + ".pal")) {
    node.children.push_back(read_alias(base, stack, files_read));
    return;
  }
  const std::string local = entry_path.filename().string();  // the local copy first (CSeqDB)
  if (is_file(local + ".pin")) {
    add_volume(node, local);
    return;
  }
  if (is_file(base + ".pin")) {
    add_volume(node, base);
    return;
  }
  const Resolved r = resolve_name(entry);  // restart with the database search path
  if (r.found == Found::kAlias) {
    node.children.push_back(read_alias(r.base, stack, files_read));
    return;
  }
  if (r.found == Found::kVolume) {
    add_volume(node, r.base);
    return;
  }
  throw Error(ErrorKind::kIo,
              fmt::format("cannot find the volume or alias file '{}' listed in DBLIST (tried {}.pal, {}.pin)",
                          entry, base, base),
              node.file);
}

std::unique_ptr<AliasNode> read_alias(const std::string& base, std::vector<std::string>& stack,
                                      std::vector<std::string>& files_read) {
  auto node = std::make_unique<AliasNode>();
  node->file = base + ".pal";
  const std::string key = normal_path(node->file);
  if (std::find(stack.begin(), stack.end(), key) != stack.end()) {
    throw Error(ErrorKind::kFormat, "alias files are mutually recursive", node->file);
  }
  if (stack.size() >= static_cast<std::size_t>(kMaxAliasDepth)) {
    throw Error(ErrorKind::kFormat, "alias files nested too deeply", node->file);
  }
  stack.push_back(key);
  files_read.push_back(node->file);
  node->dir = fs::path(base).parent_path().string();
  read_alias_values(*node);
  const auto list = node->values.find("DBLIST");
  const std::vector<std::string> entries =
      list == node->values.end() ? std::vector<std::string>{} : split_names(list->second);
  if (entries.empty())
    throw Error(ErrorKind::kFormat, "the alias file lists no database (DBLIST)", node->file);
  for (const std::string& entry : entries) expand_entry(*node, entry, stack, files_read);
  stack.pop_back();
  return node;
}

// CSeqDB_AliasWalker::WalkNodes: a node with `key` supplies its value; otherwise its alias children, then
// its volumes do.
template <typename OnValue, typename OnVolume>
void walk(const AliasNode& node, std::string_view key, OnValue&& on_value, OnVolume&& on_volume) {
  if (const auto it = node.values.find(key); it != node.values.end()) {
    on_value(it->second, node.file);
    return;
  }
  for (const auto& child : node.children) walk(*child, key, on_value, on_volume);
  for (const std::string& vol : node.volumes) on_volume(vol);
}

std::int64_t parse_alias_integer(const std::string& value, std::string_view key, const std::string& file) {
  std::int64_t v = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, v);
  if (ec != std::errc() || ptr != end) {
    throw Error(ErrorKind::kFormat, fmt::format("{} is not an integer: '{}'", key, value), file);
  }
  return v;
}

void collect_volumes(const AliasNode& node, std::set<std::string>& out) {
  out.insert(node.volumes.begin(), node.volumes.end());
  for (const auto& child : node.children) collect_volumes(*child, out);
}

// "Nov 21, 2026  7:20 PM" -> a sortable key; nullopt if the date does not parse.
std::optional<std::array<int, 4>> date_key(const std::string& date) {
  static constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  int month = -1;
  for (std::size_t m = 0; m < kMonths.size(); ++m) {
    if (date.starts_with(kMonths[m])) month = static_cast<int>(m);
  }
  int day = 0, year = 0, hour = 0, minute = 0;
  char ampm[3] = {};
  if (month < 0 ||
      std::sscanf(date.c_str() + 3, " %d, %d %d:%d %2s", &day, &year, &hour, &minute, ampm) != 5) {
    return std::nullopt;
  }
  hour %= 12;
  if (ampm[0] == 'P') hour += 12;
  return std::array<int, 4>{year, month, day, hour * 60 + minute};
}

// ---------------------------------------------------------------------------------------------------
// Volumes

struct VolumeFiles {
  std::string pin_path, psq_path, phr_path;
  MappedFile pin, psq, phr;
  const std::uint8_t* hdr_offsets = nullptr;  // n + 1 big-endian u32
  const std::uint8_t* seq_offsets = nullptr;
};

// Reads VOL.pin's header and maps the three files; checks sizes and end offsets.
void open_volume(const std::string& base, BlastDbVolume& info, VolumeFiles& files) {
  files.pin_path = base + ".pin";
  files.psq_path = base + ".psq";
  files.phr_path = base + ".phr";
  files.pin.open(files.pin_path, "BLAST database file");
  const std::string& pin = files.pin_path;
  const std::uint8_t* p = files.pin.data();
  const std::uint64_t size = files.pin.size();
  std::uint64_t pos = 0;
  const auto need = [&](std::uint64_t bytes, const char* what) {
    if (size - pos < bytes) {
      throw Error(ErrorKind::kFormat, fmt::format("index truncated: {} expected at byte {}", what, pos), pin);
    }
  };
  const auto u32 = [&](const char* what) {
    need(4, what);
    const std::uint32_t v = be32(p + pos);
    pos += 4;
    return v;
  };
  const auto str = [&](const char* what) {
    const std::uint32_t len = u32(what);
    need(len, what);
    std::string s(reinterpret_cast<const char*>(p + pos), len);
    pos += len;
    return until_nul(s);
  };
  info.path = base;
  info.format_version = u32("format version");
  if (info.format_version != 4 && info.format_version != 5) {
    throw Error(ErrorKind::kFormat,
                fmt::format("not a BLAST database index (format version {}; versions 4 and 5 are supported)",
                            info.format_version),
                pin);
  }
  const std::uint32_t type = u32("database type");
  if (type == 0) throw Error(ErrorKind::kFormat, "the index says nucleotide in a protein (.pin) file", pin);
  if (type != 1) throw Error(ErrorKind::kFormat, fmt::format("bad database type {}", type), pin);
  if (info.format_version == 5) u32("volume number");
  info.title = str("title");
  if (info.format_version == 5) str("LMDB file name");
  info.date = str("date");
  info.sequences = u32("sequence count");
  need(8, "total length");
  info.residues = le64(p + pos);
  pos += 8;
  info.max_length = u32("maximum length");
  const std::uint64_t expected = pos + 8 * (info.sequences + 1);
  if (size != expected) {
    throw Error(ErrorKind::kFormat,
                fmt::format("index has {} bytes, expected {} for {} sequences (truncated or damaged)", size,
                            expected, info.sequences),
                pin);
  }
  files.hdr_offsets = p + pos;
  files.seq_offsets = p + pos + 4 * (info.sequences + 1);
  files.psq.open(files.psq_path, "BLAST database file");
  files.phr.open(files.phr_path, "BLAST database file");
  const std::uint64_t n = info.sequences;
  const std::uint32_t hdr0 = be32(files.hdr_offsets), hdr_n = be32(files.hdr_offsets + 4 * n);
  const std::uint32_t seq0 = be32(files.seq_offsets), seq_n = be32(files.seq_offsets + 4 * n);
  if (hdr0 != 0 || hdr_n != files.phr.size()) {
    throw Error(ErrorKind::kFormat,
                fmt::format("header file has {} bytes but the index covers [{}, {}) (truncated, or from "
                            "another database?)",
                            files.phr.size(), hdr0, hdr_n),
                files.phr_path);
  }
  if (seq_n != files.psq.size() || (n > 0 && (seq0 == 0 || seq0 > seq_n)) ||
      info.residues > files.psq.size()) {
    throw Error(ErrorKind::kFormat,
                fmt::format("sequence file has {} bytes but the index covers [{}, {}) with {} residues "
                            "(truncated, or from another database?)",
                            files.psq.size(), seq0, seq_n, info.residues),
                files.psq_path);
  }
  info.file_bytes = files.pin.size() + files.psq.size() + files.phr.size();
}

}  // namespace

// -----------------------------------------------------------------------------------------------------
// Seq-id and defline texts

bool is_textseq(SeqIdKind kind) {
  switch (kind) {
    case SeqIdKind::kGenbank:
    case SeqIdKind::kEmbl:
    case SeqIdKind::kPir:
    case SeqIdKind::kSwissprot:
    case SeqIdKind::kOther:
    case SeqIdKind::kDdbj:
    case SeqIdKind::kPrf:
    case SeqIdKind::kTpg:
    case SeqIdKind::kTpe:
    case SeqIdKind::kTpd:
    case SeqIdKind::kGpipe:
    case SeqIdKind::kNamedAnnotTrack: return true;
    default: return false;
  }
}

std::string BlastSeqId::fasta() const {
  switch (kind) {
    case SeqIdKind::kLocal: return "lcl|" + object_id_text(*this);
    case SeqIdKind::kGibbsq: return "bbs|" + std::to_string(number);
    case SeqIdKind::kGibbmt: return "bbm|" + std::to_string(number);
    case SeqIdKind::kGiim: return "gim|" + std::to_string(number);
    case SeqIdKind::kGi: return "gi|" + std::to_string(number);
    case SeqIdKind::kPatent:
      return fmt::format("{}|{}|{}|{}", pre_grant ? "pgp" : "pat", accession, name, number);
    case SeqIdKind::kGeneral: return "gnl|" + accession + "|" + object_id_text(*this);
    case SeqIdKind::kPdb: return "pdb|" + accession + "|" + name;
    default: {
      std::string acc = accession;
      if (version && !accession.empty()) acc += "." + std::to_string(*version);
      return fmt::format("{}|{}|{}", textseq_prefix(*this), acc, name);
    }
  }
}

std::string BlastSeqId::content(bool with_version) const {
  switch (kind) {
    case SeqIdKind::kLocal: return object_id_text(*this);
    case SeqIdKind::kGibbsq:
    case SeqIdKind::kGibbmt:
    case SeqIdKind::kGiim:
    case SeqIdKind::kGi: return std::to_string(number);
    case SeqIdKind::kPatent: return accession + name + "_" + std::to_string(number);
    case SeqIdKind::kGeneral: return accession + ":" + object_id_text(*this);
    case SeqIdKind::kPdb: return accession + "_" + name;
    default:
      if (accession.empty()) return name;
      return with_version && version ? accession + "." + std::to_string(*version) : accession;
  }
}

int BlastSeqId::text_score() const {
  int base = 5;
  switch (kind) {
    case SeqIdKind::kGiim:
    case SeqIdKind::kGi: base = 20; break;
    case SeqIdKind::kGeneral:
    case SeqIdKind::kGibbsq:
    case SeqIdKind::kGibbmt: base = 15; break;
    case SeqIdKind::kLocal:
    case SeqIdKind::kPatent: base = 10; break;
    case SeqIdKind::kOther: base = 8; break;
    default: break;
  }
  int score = base * 10;
  if (is_textseq(kind)) {
    if (!version) score += 4;
    if (accession.empty()) score += 3;
    if (name.empty()) score += 2;
  }
  return score;
}

bool BlastDefline::has_ordinal_id() const {
  return !ids.empty() && ids.front().kind == SeqIdKind::kGeneral && ids.front().accession == "BL_ORD_ID";
}

const BlastSeqId* BlastDefline::best_id() const {
  const BlastSeqId* best = nullptr;
  for (const BlastSeqId& id : ids) {
    if (best == nullptr || id.text_score() < best->text_score()) best = &id;
  }
  return best;
}

std::string BlastDefline::seqid() const {
  if (has_ordinal_id()) {
    std::string word = title_word(title);
    if (!word.empty()) return word;
  }
  return seq_id_list_string(*this);
}

std::string BlastDefline::accession() const {
  if (has_ordinal_id()) {
    std::string word = title_word(title);
    if (!word.empty()) return word;
  }
  const BlastSeqId* best = best_id();
  return best == nullptr ? std::string("Unknown") : best->content(false);
}

std::string BlastDefline::tabular_title() const { return title.empty() ? std::string("N/A") : title; }

std::string BlastDefline::report_id() const {
  if (has_ordinal_id()) return {};
  const BlastSeqId* best = best_id();
  if (best == nullptr) return {};
  const bool label = best->kind == SeqIdKind::kLocal || best->kind == SeqIdKind::kGeneral ||
                     best->kind == SeqIdKind::kPdb || best->kind == SeqIdKind::kPatent ||
                     (is_textseq(best->kind) && !best->accession.empty());
  return label ? best->content(true) : best->fasta();
}

std::string BlastDefline::report_line() const {
  std::string text = title.empty() ? std::string(kUnnamed) : title;
  // An untitled PDB chain is shown with the title blastp's defline generator makes for it.
  const BlastSeqId* best = has_ordinal_id() ? nullptr : best_id();
  if (title.empty() && best != nullptr && best->kind == SeqIdKind::kPdb) text = "Chain " + best->name;
  const std::string id = report_id();
  return id.empty() ? text : id + " " + text;
}

void blast_defline_name(const BlastDefline& defline, std::string& name, std::string& description) {
  name = defline.seqid();
  if (!defline.has_ordinal_id()) {
    description = defline.title;
    return;
  }
  std::string_view t(defline.title);
  while (!t.empty() && is_space(t.front())) t.remove_prefix(1);
  if (!t.empty() && t.starts_with(name) && t.size() > name.size()) {
    description.assign(t.substr(name.size() + 1));
  } else {
    description.clear();
  }
}

std::uint8_t ncbistdaa_to_code(std::uint8_t ncbistdaa) { return kNcbiStdaaToCode[ncbistdaa]; }

// -----------------------------------------------------------------------------------------------------
// BlastDb

struct BlastDb::Impl {
  std::string name;
  BlastDbOptions options;
  std::string title;
  std::string date;
  std::vector<BlastDbVolume> volumes;
  std::vector<std::unique_ptr<VolumeFiles>> files;
  std::vector<std::string> alias_files;
  std::uint64_t size = 0;
  std::uint64_t total_residues = 0;
  std::uint64_t max_length = 0;
  std::uint64_t stats_total_length = 0;
  std::uint64_t stats_num_seqs = 0;
  int cutoff_min_length = kSeqSrcMinLength;
  std::uint64_t file_bytes = 0;
  static constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();
  mutable std::atomic<std::uint64_t> min_length{kUnknown};

  // The volume holding oid and the oid's index inside it.
  std::pair<std::size_t, std::uint64_t> locate(std::uint64_t oid) const {
    if (oid >= size) {
      throw Error(ErrorKind::kInternal, fmt::format("OID {} out of range (the database has {})", oid, size),
                  name);
    }
    const auto it = std::upper_bound(volumes.begin(), volumes.end(), oid,
                                     [](std::uint64_t o, const BlastDbVolume& v) { return o < v.first_oid; });
    const auto v = static_cast<std::size_t>(it - volumes.begin()) - 1;
    return {v, oid - volumes[v].first_oid};
  }

  // [begin, end) of a sequence in .psq, checked: 1 <= begin < end <= size, NULs around it.
  std::pair<std::uint64_t, std::uint64_t> seq_range(std::size_t v, std::uint64_t i) const {
    const VolumeFiles& f = *files[v];
    const std::uint64_t begin = be32(f.seq_offsets + 4 * i);
    const std::uint64_t end = be32(f.seq_offsets + 4 * (i + 1));
    const std::uint8_t* psq = f.psq.data();
    if (begin == 0 || begin >= end || end > f.psq.size() || psq[begin - 1] != 0 || psq[end - 1] != 0) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("bad sequence offsets [{}, {}) for OID {} (file has {} bytes)", begin, end,
                              volumes[v].first_oid + i, f.psq.size()),
                  f.psq_path);
    }
    return {begin, end - 1};
  }

  std::pair<std::uint64_t, std::uint64_t> hdr_range(std::size_t v, std::uint64_t i) const {
    const VolumeFiles& f = *files[v];
    const std::uint64_t begin = be32(f.hdr_offsets + 4 * i);
    const std::uint64_t end = be32(f.hdr_offsets + 4 * (i + 1));
    if (begin >= end || end > f.phr.size()) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("bad header offsets [{}, {}) for OID {} (file has {} bytes)", begin, end,
                              volumes[v].first_oid + i, f.phr.size()),
                  f.phr_path);
    }
    return {begin, end};
  }

  // Our codes of sequence i of volume v, whose seq_range is [begin, end), into out[0, end - begin): a
  // branch-free table pass, then, only when some byte had no code, a second pass that substitutes gaps or
  // reports the first bad byte.
  void convert_into(std::size_t v, std::uint64_t i, std::uint64_t begin, std::uint64_t end,
                    std::uint8_t* out) const {
    const std::uint8_t* psq = files[v]->psq.data() + begin;
    const auto n = static_cast<std::size_t>(end - begin);
    bool bad = false;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint8_t code = kNcbiStdaaToCode[psq[k]];
      out[k] = code;
      bad |= code == kCodeInvalid;
    }
    if (!bad) return;
    for (std::size_t k = 0; k < n; ++k) {
      if (out[k] != kCodeInvalid) continue;
      const std::uint64_t oid = volumes[v].first_oid + i;
      const std::uint8_t raw = psq[k];
      if (raw != 0) {
        throw Error(ErrorKind::kFormat,
                    fmt::format("residue code {} (not NCBIstdaa) in OID {} at position {}", raw, oid, k),
                    files[v]->psq_path);
      }
      if (!options.gap_code) {
        throw Error(ErrorKind::kInput,
                    fmt::format("OID {} has a gap ('-', NCBIstdaa 0) at position {}, which warpsearch cannot "
                                "score as blastp does; rebuild the database without '-' in the sequences",
                                oid, k),
                    files[v]->psq_path);
      }
      out[k] = *options.gap_code;
    }
  }

  void convert(std::size_t v, std::uint64_t i, std::vector<std::uint8_t>& out) const {
    const auto [begin, end] = seq_range(v, i);
    out.resize(static_cast<std::size_t>(end - begin));
    convert_into(v, i, begin, end, out.data());
  }

  std::vector<BlastDefline> decode(std::size_t v, std::uint64_t i) const {
    const auto [begin, end] = hdr_range(v, i);
    const VolumeFiles& f = *files[v];
    const BerReader ber({f.phr.data() + begin, static_cast<std::size_t>(end - begin)}, f.phr_path,
                        volumes[v].first_oid + i, begin);
    return decode_defline_set(ber);
  }
};

BlastDb::BlastDb() : impl_(std::make_unique<Impl>()) {}
BlastDb::BlastDb(BlastDb&&) noexcept = default;
BlastDb& BlastDb::operator=(BlastDb&&) noexcept = default;
BlastDb::~BlastDb() = default;

bool BlastDb::exists(const std::string& name) {
  if (name.empty() || name == "-") return false;
  const std::vector<std::string> names = split_names(name);
  if (names.empty()) return false;
  return std::all_of(names.begin(), names.end(),
                     [](const std::string& n) { return resolve_name(n).found != Found::kNone; });
}

BlastDb BlastDb::open(const std::string& name, BlastDbOptions options) {
  BlastDb db;
  Impl& d = *db.impl_;
  d.name = name;
  d.options = options;
  if (options.gap_code && *options.gap_code >= kProteinCodes) {
    throw Error(ErrorKind::kUsage, fmt::format("gap code {} is not a protein code", *options.gap_code));
  }

  // The alias tree: a root node listing the names given.
  AliasNode root;
  const std::vector<std::string> names = split_names(name);
  if (names.empty()) throw Error(ErrorKind::kUsage, "empty BLAST database name");
  std::vector<std::string> stack;
  for (const std::string& n : names) {
    const Resolved r = resolve_name(n);
    if (r.found == Found::kNucleotide) {
      throw Error(ErrorKind::kInput, "a nucleotide BLAST database; protein sequences are needed", r.base);
    }
    if (r.found == Found::kNone) {
      std::string tried;
      for (const std::string& t : r.tried)
        tried += fmt::format("{}{}.pal, {}.pin", tried.empty() ? "" : ", ", t, t);
      throw Error(ErrorKind::kIo, fmt::format("no BLAST database found (tried {})", tried), n);
    }
    if (r.found == Found::kAlias) {
      root.children.push_back(read_alias(r.base, stack, d.alias_files));
    } else {
      add_volume(root, r.base);
    }
  }

  // Volumes in CSeqDB's order: by file name, then full path.
  std::set<std::string> unique;
  collect_volumes(root, unique);
  std::vector<std::string> paths(unique.begin(), unique.end());
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
    const std::string fa = fs::path(a).filename().string(), fb = fs::path(b).filename().string();
    return fa != fb ? fa < fb : a < b;
  });
  std::map<std::string, std::size_t> index_of;
  std::optional<std::array<int, 4>> latest;
  for (const std::string& path : paths) {
    BlastDbVolume info;
    auto files = std::make_unique<VolumeFiles>();
    open_volume(path, info, *files);
    info.first_oid = d.size;
    d.size += info.sequences;
    d.total_residues += info.residues;
    d.max_length = std::max(d.max_length, info.max_length);
    d.file_bytes += info.file_bytes;
    if (d.date.empty()) d.date = info.date;
    if (const auto key = date_key(info.date); key && (!latest || *key > *latest)) {
      latest = key;
      d.date = info.date;
    }
    index_of[path] = d.volumes.size();
    d.volumes.push_back(std::move(info));
    d.files.push_back(std::move(files));
  }
  if (d.size > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorKind::kInput, fmt::format("{} sequences: more than 2^32 - 1", d.size), name);
  }
  for (const std::string& f : d.alias_files) d.file_bytes += file_size_or_zero(f);

  const auto volume = [&](const std::string& path) -> const BlastDbVolume& {
    return d.volumes[index_of.at(path)];
  };
  // TITLE: "; "-joined (SeqDB_JoinDelim skips empty parts).
  walk(
      root, "TITLE",
      [&](const std::string& value, const std::string&) {
        if (!value.empty()) d.title += (d.title.empty() ? "" : "; ") + value;
      },
      [&](const std::string& vol) {
        const std::string& t = volume(vol).title;
        if (!t.empty()) d.title += (d.title.empty() ? "" : "; ") + t;
      });
  // Sums wrap modulo 2^64 as CSeqDB's Uint8 walkers do (sibling alias values may be anything: a signed
  // sum could overflow).
  const auto sum_walk = [&](std::string_view key, auto from_volume) {
    std::uint64_t sum = 0;
    walk(
        root, key,
        [&](const std::string& value, const std::string& file) {
          sum += static_cast<std::uint64_t>(parse_alias_integer(value, key, file));
        },
        [&](const std::string& vol) { sum += static_cast<std::uint64_t>(from_volume(volume(vol))); });
    return static_cast<std::int64_t>(sum);
  };
  const std::int64_t stats_len = sum_walk("STATS_TOTLEN", [](const BlastDbVolume&) { return 0; });
  const std::int64_t stats_nseq = sum_walk("STATS_NSEQ", [](const BlastDbVolume&) { return 0; });
  d.stats_total_length = static_cast<std::uint64_t>(
      stats_len > 0 ? stats_len : sum_walk("LENGTH", [](const BlastDbVolume& v) { return v.residues; }));
  d.stats_num_seqs = static_cast<std::uint64_t>(
      stats_nseq > 0 ? stats_nseq : sum_walk("NSEQ", [](const BlastDbVolume& v) { return v.sequences; }));
  // MIN_SEQ_LENGTH: the minimum; a volume contributes 0 (its index stores no shortest length); <= 0 -> 10.
  std::int64_t min_len = std::numeric_limits<std::int32_t>::max();  // the walker starts at INT4_MAX
  walk(
      root, "MIN_SEQ_LENGTH",
      [&](const std::string& value, const std::string& file) {
        min_len = std::min(min_len, parse_alias_integer(value, "MIN_SEQ_LENGTH", file));
      },
      [&](const std::string&) { min_len = std::min<std::int64_t>(min_len, 0); });
  d.cutoff_min_length = min_len <= 0 ? kSeqSrcMinLength : static_cast<int>(min_len);
  return db;
}

const std::string& BlastDb::name() const { return impl_->name; }
const std::string& BlastDb::title() const { return impl_->title; }
const std::string& BlastDb::date() const { return impl_->date; }
std::uint32_t BlastDb::format_version() const {
  return impl_->volumes.empty() ? 0 : impl_->volumes.front().format_version;
}
std::span<const BlastDbVolume> BlastDb::volumes() const { return impl_->volumes; }
const std::vector<std::string>& BlastDb::alias_files() const { return impl_->alias_files; }
std::uint64_t BlastDb::size() const { return impl_->size; }
std::uint64_t BlastDb::total_residues() const { return impl_->total_residues; }
std::uint64_t BlastDb::max_length() const { return impl_->max_length; }
std::uint64_t BlastDb::stats_total_length() const { return impl_->stats_total_length; }
std::uint64_t BlastDb::stats_num_seqs() const { return impl_->stats_num_seqs; }
int BlastDb::cutoff_min_length() const { return impl_->cutoff_min_length; }
std::uint64_t BlastDb::file_bytes() const { return impl_->file_bytes; }

std::uint64_t BlastDb::min_length() const {
  const Impl& d = *impl_;
  std::uint64_t cached = d.min_length.load(std::memory_order_relaxed);
  if (cached != Impl::kUnknown) return cached;
  std::uint64_t shortest = d.size == 0 ? 0 : std::numeric_limits<std::uint64_t>::max();
  for (std::size_t v = 0; v < d.volumes.size(); ++v) {
    const std::uint8_t* offsets = d.files[v]->seq_offsets;
    std::uint32_t prev = be32(offsets);
    for (std::uint64_t i = 0; i < d.volumes[v].sequences; ++i) {
      const std::uint32_t next = be32(offsets + 4 * (i + 1));
      if (next <= prev) {
        throw Error(ErrorKind::kFormat,
                    fmt::format("sequence offsets not increasing at OID {}", d.volumes[v].first_oid + i),
                    d.files[v]->pin_path);
      }
      shortest = std::min<std::uint64_t>(shortest, next - prev - 1);
      prev = next;
    }
  }
  d.min_length.store(shortest, std::memory_order_relaxed);
  return shortest;
}

std::uint64_t BlastDb::length(std::uint64_t oid) const {
  const auto [v, i] = impl_->locate(oid);
  const auto [begin, end] = impl_->seq_range(v, i);
  return end - begin;
}

std::span<const std::uint8_t> BlastDb::ncbistdaa(std::uint64_t oid) const {
  const auto [v, i] = impl_->locate(oid);
  const auto [begin, end] = impl_->seq_range(v, i);
  return {impl_->files[v]->psq.data() + begin, static_cast<std::size_t>(end - begin)};
}

void BlastDb::residues(std::uint64_t oid, std::vector<std::uint8_t>& out) const {
  const auto [v, i] = impl_->locate(oid);
  impl_->convert(v, i, out);
}

void BlastDb::residues(std::uint64_t oid, std::span<std::uint8_t> out) const {
  const auto [v, i] = impl_->locate(oid);
  const auto [begin, end] = impl_->seq_range(v, i);
  if (out.size() != end - begin) {
    throw Error(
        ErrorKind::kInternal,
        fmt::format("BlastDb::residues: OID {} has {} residues, not {}", oid, end - begin, out.size()),
        impl_->name);
  }
  impl_->convert_into(v, i, begin, end, out.data());
}

std::vector<BlastDefline> BlastDb::deflines(std::uint64_t oid) const {
  const auto [v, i] = impl_->locate(oid);
  return impl_->decode(v, i);
}

void BlastDb::to_sequence(std::uint64_t oid, Sequence& seq) const {
  const auto [v, i] = impl_->locate(oid);
  const std::vector<BlastDefline> lines = impl_->decode(v, i);
  blast_defline_name(lines.front(), seq.name, seq.description);
  impl_->convert(v, i, seq.residues);
  seq.soft_mask.clear();
  seq.quality.clear();
  seq.line = 0;
}

void BlastDb::verify() const {
  const Impl& d = *impl_;
  std::vector<std::uint8_t> codes;
  for (std::size_t v = 0; v < d.volumes.size(); ++v) {
    const BlastDbVolume& vol = d.volumes[v];
    const VolumeFiles& f = *d.files[v];
    std::uint64_t residues = 0;
    std::uint64_t longest = 0;
    for (std::uint64_t i = 0; i < vol.sequences; ++i) {
      // seq_range / hdr_range check begin < end for every OID, so both offset arrays strictly increase.
      const auto [begin, end] = d.seq_range(v, i);
      d.convert(v, i, codes);
      residues += end - begin;
      longest = std::max(longest, end - begin);
      d.decode(v, i);
    }
    if (residues != vol.residues || longest != vol.max_length) {
      throw Error(ErrorKind::kFormat,
                  fmt::format("the index says {} residues, longest {}, but the sequences have {}, longest {}",
                              vol.residues, vol.max_length, residues, longest),
                  f.pin_path);
    }
  }
}

}  // namespace warpsearch
