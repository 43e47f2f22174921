// HMMER3 ASCII save-file reader (see hmmfile.hpp). The parser follows p7_hmmfile.c read_asc30hmm field
// by field: Easel's file-parser conventions (blank lines and lines starting with '#' are skipped, tokens
// are separated by space/tab/CR/LF, a token starting with '#' ends the line), the optional header
// tags, the optional COMPO line, node 0, nodes 1..M with their annotation columns (which depend on the
// format version) and the closing "//". Input goes through zlib, so gzip files read transparently.
#include "hmm/hmmfile.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

struct HmmReader::Source {
  gzFile gz = nullptr;
  std::string path;

  ~Source() {
    if (gz != nullptr) gzclose(gz);
  }

  // Reads the next physical line (without '\n') into line; false at end of file.
  bool getline(std::string& line) {
    line.clear();
    char buf[8192];
    bool any = false;
    while (gzgets(gz, buf, static_cast<int>(sizeof(buf))) != nullptr) {
      any = true;
      const std::size_t n = std::strlen(buf);
      if (n > 0 && buf[n - 1] == '\n') {
        line.append(buf, n - 1);
        return true;
      }
      line.append(buf, n);
      if (gzeof(gz)) return true;
    }
    int err = Z_OK;
    const char* msg = gzerror(gz, &err);
    if (err != Z_OK && err != Z_STREAM_END) {
      throw Error(ErrorKind::kIo, fmt::format("read failed: {}", err == Z_ERRNO ? std::strerror(errno) : msg),
                  path);
    }
    return any;
  }
};

namespace {

bool is_delim(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// esl_strchop: drop trailing whitespace.
std::string chop(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// C's atoi/atof/atoll on a token. The token is not NUL-terminated in the line buffer, so it is copied
// (into a stack buffer when short, as numeric fields always are).
template <typename F>
auto with_cstr(std::string_view tok, F f) {
  std::array<char, 64> buf{};
  if (tok.size() < buf.size()) {
    std::memcpy(buf.data(), tok.data(), tok.size());
    return f(buf.data());
  }
  return f(std::string(tok).c_str());
}
int to_int(std::string_view tok) {
  return with_cstr(tok, [](const char* s) { return static_cast<int>(std::strtol(s, nullptr, 10)); });
}
double to_double(std::string_view tok) {
  return with_cstr(tok, [](const char* s) { return std::strtod(s, nullptr); });
}
long long to_llong(std::string_view tok) {
  return with_cstr(tok, [](const char* s) { return std::strtoll(s, nullptr, 10); });
}

// A probability field: "*" (first character) is 0, else the field is -ln(p): p = expf((float)-x), the
// double value rounded to float before HMMER's float expf.
float prob_field(std::string_view tok) {
  if (tok[0] == '*') return 0.0f;
  return std::exp(static_cast<float>(-1.0 * to_double(tok)));
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

constexpr const char* kTags[] = {"HMMER3/a", "HMMER3/b", "HMMER3/c", "HMMER3/d", "HMMER3/e", "HMMER3/f"};

}  // namespace

const char* hmm_format_tag(HmmFormat f) { return kTags[static_cast<int>(f)]; }

HmmReader::HmmReader(const std::string& path) : path_(path), src_(std::make_unique<Source>()) {
  src_->path = path;
  if (path == "-") {  // stdin (plain or gzip), as p7_hmmfile_OpenE
    const int fd = ::dup(0);
    src_->gz = fd < 0 ? nullptr : gzdopen(fd, "rb");
    if (src_->gz == nullptr) {
      if (fd >= 0) ::close(fd);
      throw_system_error("cannot open HMM file", path);
    }
  } else {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw_system_error("cannot open HMM file", path);
    if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::kIo, "cannot open HMM file: is a directory", path);
    src_->gz = gzopen(path.c_str(), "rb");
    if (src_->gz == nullptr) throw_system_error("cannot open HMM file", path);
  }
  gzbuffer(src_->gz, 1u << 17);

  // open_engine: the first token of the file is the format tag.
  std::string_view tag;
  if (!next_line() || !token(tag)) {
    throw Error(ErrorKind::kFormat, "file is empty: expected a HMMER3 format tag line such as HMMER3/f",
                path_, lineno_);
  }
  for (int f = 0; f < 6; ++f) {
    if (tag == kTags[f]) {
      format_ = static_cast<HmmFormat>(f);
      return;
    }
  }
  if (tag == "HMMER2.0") fail("HMMER2.0 format is not supported: convert the file with hmmconvert");
  fail(fmt::format(
      "Format tag is '{}': unrecognized. Current H3 format is 'HMMER3/f'. Previous H3 formats also "
      "supported.",
      tag));
}

HmmReader::~HmmReader() = default;

void HmmReader::fail(const std::string& msg) const { throw Error(ErrorKind::kFormat, msg, path_, lineno_); }

bool HmmReader::next_line() {
  while (src_->getline(line_)) {
    ++lineno_;
    pos_ = 0;
    while (pos_ < line_.size() && is_space(line_[pos_])) ++pos_;
    if (pos_ < line_.size() && line_[pos_] != '#') return true;
  }
  line_.clear();
  pos_ = 0;
  return false;
}

bool HmmReader::token(std::string_view& tok) {
  while (pos_ < line_.size() && is_delim(line_[pos_])) ++pos_;
  if (pos_ >= line_.size()) return false;
  const std::size_t start = pos_;
  while (pos_ < line_.size() && !is_delim(line_[pos_])) ++pos_;
  tok = std::string_view(line_).substr(start, pos_ - start);
  if (pos_ < line_.size()) ++pos_;  // step over the delimiter, as esl_strtok_adv does
  return tok[0] != '#';
}

bool HmmReader::remaining_line(std::string_view& rest) {
  while (pos_ < line_.size() && is_space(line_[pos_])) ++pos_;
  const std::size_t start = pos_;
  while (pos_ < line_.size() && line_[pos_] != '\r' && line_[pos_] != '\n') ++pos_;
  rest = std::string_view(line_).substr(start, pos_ - start);
  if (pos_ < line_.size()) ++pos_;
  return !rest.empty();
}

std::optional<Hmm> HmmReader::next() {
  std::string_view tok;
  if (newly_opened_) {
    newly_opened_ = false;
  } else {
    if (!next_line()) return std::nullopt;
    token(tok);
    if (tok != kTags[static_cast<int>(format_)]) {
      fail(fmt::format("Didn't find {} tag: bad format or not a HMMER save file?",
                       kTags[static_cast<int>(format_)]));
    }
  }
  const int fmtv = static_cast<int>(format_);
  const bool f3b = fmtv >= static_cast<int>(HmmFormat::k3b);
  const bool f3c = fmtv >= static_cast<int>(HmmFormat::k3c);
  const bool f3e = fmtv >= static_cast<int>(HmmFormat::k3e);
  const bool f3f = fmtv >= static_cast<int>(HmmFormat::k3f);

  Hmm hmm;
  hmm.version = kTags[fmtv] + 5;  // "3/f"
  const Abc* a = nullptr;
  unsigned statstracker = 0;
  bool have_name = false;

  auto need = [&](const char* msg) {
    if (!token(tok)) fail(msg);
    return tok;
  };
  auto yes_no = [&](const char* field, HmmFlag flag) {
    need(fmt::format("No yes/no found for {} line", field).c_str());
    if (iequals(tok, "yes")) {
      hmm.flags |= flag;
    } else if (!iequals(tok, "no")) {
      fail(fmt::format("{} header line must say yes/no, not {}", field, tok));
    }
  };
  auto cutoff_pair = [&](const char* field, int c1, int c2, HmmFlag flag) {
    if (a == nullptr) fail(fmt::format("{} line appears before the ALPH line", field));
    const std::string msg = fmt::format("Too few fields on {} line", field);
    need(msg.c_str());
    const auto v1 = static_cast<float>(to_double(tok));
    hmm.cutoff[static_cast<std::size_t>(c1)] = v1;
    if (a->type == AbcType::kDNA || a->type == AbcType::kRNA) {
      hmm.cutoff[static_cast<std::size_t>(c2)] = v1;  // nucleic models give one value for both
    } else {
      need(msg.c_str());
      hmm.cutoff[static_cast<std::size_t>(c2)] = static_cast<float>(to_double(tok));
    }
    hmm.flags |= flag;
  };

  // Header section, up to the "HMM" line.
  for (;;) {
    if (!next_line()) fail("Premature end of file in model header: expected the HMM line");
    std::string_view tag;
    if (!token(tag)) fail("Premature end of line");
    std::string_view rest;
    if (tag == "NAME") {
      need("No name found on NAME line");
      hmm.name = chop(tok);
      have_name = true;
    } else if (tag == "ACC") {
      need("No accession found on ACC line");
      hmm.acc = chop(tok);
      hmm.flags |= kHmmAcc;
    } else if (tag == "DESC") {
      if (!remaining_line(rest)) fail("No description found on DESC line");
      hmm.desc = chop(rest);
      hmm.flags |= kHmmDesc;
    } else if (tag == "LENG") {
      need("No model length found on LENG line");
      if ((hmm.M = to_int(tok)) == 0) fail(fmt::format("Invalid model length {} on LENG line", tok));
    } else if (f3c && tag == "MAXL") {
      need("No max length found on MAXL line");
      if ((hmm.max_length = to_int(tok)) == 0) fail(fmt::format("Invalid max length {} on MAXL line", tok));
    } else if (tag == "ALPH") {
      need("No alphabet type found on ALPH");
      const Abc* this_abc = nullptr;
      if (iequals(tok, "amino")) {
        this_abc = &abc(AbcType::kAmino);
      } else if (iequals(tok, "dna")) {
        this_abc = &abc(AbcType::kDNA);
      } else if (iequals(tok, "rna")) {
        this_abc = &abc(AbcType::kRNA);
      } else {
        fail(fmt::format("Unrecognized alphabet type {}", tok));
      }
      if (abc_ != nullptr && abc_ != this_abc) {
        fail(fmt::format("Alphabet type mismatch: was {}, but current HMM says {}", abc_type_name(abc_->type),
                         tok));
      }
      a = this_abc;
    } else if (tag == "RF") {
      yes_no("RF", kHmmRF);
    } else if (tag == "MM") {
      yes_no("MM", kHmmMMask);
    } else if (tag == "CONS") {
      yes_no("CONS", kHmmCons);
    } else if (tag == "CS") {
      yes_no("CS", kHmmCS);
    } else if (tag == "MAP") {
      yes_no("MAP", kHmmMap);
    } else if (tag == "DATE") {
      if (!remaining_line(rest)) fail("No date found on DATE line");
      hmm.ctime = std::string(rest);
    } else if (tag == "COM") {
      need("No command number on COM line");
      if (!remaining_line(rest)) fail("No command on COM line");
      if (!hmm.comlog.empty()) hmm.comlog += '\n';
      hmm.comlog += rest;
    } else if (tag == "NSEQ") {
      need("Nothing follows NSEQ tag");
      if ((hmm.nseq = to_int(tok)) == 0)
        fail(fmt::format("Invalid nseq on NSEQ line: should be integer, not {}", tok));
    } else if (tag == "EFFN") {
      need("Nothing follows EFFN tag");
      if ((hmm.eff_nseq = static_cast<float>(to_double(tok))) <= 0.0f) {
        fail(fmt::format("Invalid eff_nseq on EFFN line: should be a real number, not {}", tok));
      }
    } else if (tag == "CKSUM") {
      need("Nothing follows CKSUM tag");
      hmm.checksum = static_cast<uint32_t>(to_llong(tok));
      hmm.flags |= kHmmChksum;
    } else if (tag == "STATS") {
      std::string_view t1, t2, t3, t4;
      const char* few = "Too few fields on STATS line";
      t1 = need(few);
      t2 = need(few);
      t3 = need(few);
      if (f3b) t4 = need(few);
      if (!iequals(t1, "LOCAL")) fail(fmt::format("Failed to parse STATS, {} unrecognized as field 2", t1));
      auto& ev = hmm.evparam;
      if (f3b) {
        const auto v3 = static_cast<float>(to_double(t3));
        const auto v4 = static_cast<float>(to_double(t4));
        if (iequals(t2, "MSV")) {
          ev[kMMu] = v3;
          ev[kMLambda] = v4;
          statstracker |= 0x1;
        } else if (iequals(t2, "VITERBI")) {
          ev[kVMu] = v3;
          ev[kVLambda] = v4;
          statstracker |= 0x2;
        } else if (iequals(t2, "FORWARD")) {
          ev[kFTau] = v3;
          ev[kFLambda] = v4;
          statstracker |= 0x4;
        } else {
          fail(fmt::format("Failed to parse STATS, {} unrecognized as field 3", t2));
        }
      } else {  // HMMER3/a: one value per line
        const auto v3 = static_cast<float>(to_double(t3));
        if (iequals(t2, "VLAMBDA")) {
          ev[kMLambda] = ev[kVLambda] = ev[kFLambda] = v3;
          statstracker |= 0x1;
        } else if (iequals(t2, "VMU")) {
          ev[kMMu] = ev[kVMu] = v3;
          statstracker |= 0x2;
        } else if (iequals(t2, "FTAU")) {
          ev[kFTau] = v3;
          statstracker |= 0x4;
        } else {
          fail(fmt::format("Failed to parse STATS, {} unrecognized as field 3", t2));
        }
      }
    } else if (tag == "GA") {
      cutoff_pair("GA", kGA1, kGA2, kHmmGA);
    } else if (tag == "TC") {
      cutoff_pair("TC", kTC1, kTC2, kHmmTC);
    } else if (tag == "NC") {
      cutoff_pair("NC", kNC1, kNC2, kHmmNC);
    } else if (tag == "HMM") {
      break;
    }
    // Any other tag is ignored, as HMMER does.
  }

  if (statstracker == 0x7) {
    hmm.flags |= kHmmStats;
  } else if (statstracker != 0) {
    fail("Missing one or more STATS parameter lines");
  }
  if (!have_name) fail("No NAME found for HMM");
  if (hmm.M <= 0) fail("No LENG found for HMM (or LENG <= 0)");
  if (a == nullptr) fail("No ALPH found for HMM");

  // The line after "HMM" names the transitions; the next one starts the model (COMPO or node 0).
  if (!next_line()) fail("Premature end of data before main model section");
  if (!next_line()) fail("Premature end of data before main model section");
  const int M = hmm.M;
  const int K = a->K;
  // The body grows with the nodes actually read (doubling), so that a damaged LENG line cannot make the
  // reader allocate gigabytes before it finds the file short; a complete model ends at exactly M + 1.
  constexpr int kFirstNodes = 1023;
  create_body(hmm, std::min(M, kFirstNodes), *a);
  hmm.M = M;
  auto size_annotations = [&](std::size_t n) {
    if (hmm.has(kHmmRF)) hmm.rf.resize(n, ' ');
    if (hmm.has(kHmmMMask)) hmm.mm.resize(n, ' ');
    if (hmm.has(kHmmCons)) hmm.consensus.resize(n, ' ');
    if (hmm.has(kHmmCS)) hmm.cs.resize(n, ' ');
    if (hmm.has(kHmmMap)) hmm.map.resize(n, 0);
  };
  size_annotations(hmm.t.size());
  auto make_room = [&](std::size_t node) {
    if (node < hmm.t.size()) return;
    const std::size_t n = std::min(2 * hmm.t.size(), static_cast<std::size_t>(M) + 1);
    hmm.t.resize(n, std::array<float, kHmmNTransitions>{});
    hmm.mat.resize(n, std::vector<float>(static_cast<std::size_t>(K), 0.0f));
    hmm.ins.resize(n, std::vector<float>(static_cast<std::size_t>(K), 0.0f));
    size_annotations(n);
  };

  need("Premature end of data before main model section");
  if (tok == "COMPO") {
    for (int x = 0; x < K; ++x)
      hmm.compo[static_cast<std::size_t>(x)] = prob_field(need("Too few fields on COMPO line"));
    hmm.flags |= kHmmCompo;
    if (!next_line()) fail("Premature end of data after COMPO line");
    need("Premature end of data after COMPO line");
  } else {
    // HMMER's reader zeroes the model (p7_hmm_Zero) before parsing, so a model without a COMPO line (e.g.
    // from hmmconvert of an HMMER2 file) keeps compo = 0 (flag unset), and the bias filter's second state
    // emits nothing. Measured against hmmsearch 3.3.2: identical pass counts and tables only with zeros.
    hmm.compo.fill(0.0f);
  }

  // Node 0: insert emissions, then the begin/I0 transitions.
  auto& ins0 = hmm.ins[0];
  ins0[0] = prob_field(tok);
  for (int x = 1; x < K; ++x) {
    if (!token(tok)) fail(fmt::format("Too few fields on insert line, node 0: expected {}, got {}", K, x));
    ins0[static_cast<std::size_t>(x)] = prob_field(tok);
  }
  if (!next_line()) fail("Premature end of data in main model: no node 0 transition line");
  for (int x = 0; x < kHmmNTransitions; ++x) {
    hmm.t[0][static_cast<std::size_t>(x)] = prob_field(need("Too few fields on begin (0) transition line"));
  }

  // Nodes 1..M: match line (node number, K emissions, MAP [CONS] RF [MM] CS), insert line, transition line.
  for (int k = 1; k <= M; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    if (!next_line() || !token(tok)) {
      fail(fmt::format("Premature end of data in main model section, at node {} (expected {})", k, M));
    }
    if (to_int(tok) != k)
      fail(fmt::format("Expected match line to start with {} (of {}); saw {}", k, M, tok));
    make_room(uk);
    auto& mk = hmm.mat[uk];
    for (int x = 0; x < K; ++x) {
      if (!token(tok)) {
        fail(fmt::format("Too few probability fields on match line, node {}: expected {}, got {}", k, K, x));
      }
      mk[static_cast<std::size_t>(x)] = prob_field(tok);
    }
    auto column = [&](const char* field) {  // message built only on failure
      if (!token(tok))
        fail(fmt::format("Missing {} field on match line for node {}: should at least be -", field, k));
    };
    column("MAP");
    if (hmm.has(kHmmMap)) hmm.map[uk] = to_int(tok);
    if (f3e) {
      column("CONS");
      if (hmm.has(kHmmCons)) hmm.consensus[uk] = tok[0];
    }
    column("RF");
    if (hmm.has(kHmmRF)) hmm.rf[uk] = tok[0];
    if (f3f) {
      column("MM");
      if (hmm.has(kHmmMMask)) hmm.mm[uk] = tok[0];
    }
    column("CS");
    if (hmm.has(kHmmCS)) hmm.cs[uk] = tok[0];

    if (!next_line())
      fail(fmt::format("Premature end of data in main model: no insert emission line, node {}", k));
    auto& ik = hmm.ins[uk];
    for (int x = 0; x < K; ++x) {
      if (!token(tok)) {
        fail(fmt::format("Too few probability fields on insert line, node {}: expected {}, got {}", k, K, x));
      }
      ik[static_cast<std::size_t>(x)] = prob_field(tok);
    }
    if (!next_line())
      fail(fmt::format("Premature end of data in main model: no transition line, node {}", k));
    auto& tk = hmm.t[uk];
    for (int x = 0; x < kHmmNTransitions; ++x) {
      if (!token(tok)) {
        fail(fmt::format("Too few probability fields on transition line, node {}: expected {}, got {}", k,
                         kHmmNTransitions, x));
      }
      tk[static_cast<std::size_t>(x)] = prob_field(tok);
    }
  }

  if (!next_line()) fail("Premature end of data: missing //?");
  need("Premature end of data: missing //?");
  if (tok != "//") fail(fmt::format("Expected closing //; found {} instead", tok));

  if (!f3e) set_consensus(hmm);  // legacy formats carry no consensus column
  abc_ = a;
  return hmm;
}

std::vector<Hmm> read_all_hmms(const std::string& path) {
  HmmReader reader(path);
  std::vector<Hmm> out;
  while (auto h = reader.next()) out.push_back(std::move(*h));
  return out;
}

}  // namespace warpsearch::hmm
