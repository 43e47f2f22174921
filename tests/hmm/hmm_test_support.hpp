// Fixtures shared by the hmm test suites (tests/hmm): running an installed HMMER/Easel tool and capturing
// its stdout, stripping '#' comment lines from report text, a model configured up to its striped profile
// (Hmm -> Bg -> Profile -> OProfile), and a configured problem with its full Forward, Backward and
// posterior-decoding matrices (the inputs of null2, stochastic traceback and optimal accuracy).
// Random models and sequences come from h2_support.hpp (std::mt19937) and oprofile_test_util.hpp
// (std::mt19937_64); this header builds on them and generates nothing of its own.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include "h2_support.hpp"
#include "hmm/abc.hpp"
#include "hmm/bg.hpp"
#include "hmm/common.hpp"
#include "hmm/decoding.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/hmm.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/profile.hpp"

namespace warpsearch::hmm::hmmtest {

/// Runs the shell command cmd (stderr discarded) and replaces *out with its stdout. Returns the command's
/// exit status, or -1 if it could not be started or did not exit normally.
inline int run_capture(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return -1;
  std::array<char, 65536> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out->append(buf.data(), n);
  const int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/// The lines of text that do not start with '#' (hmmsearch puts its banner, file names, timing and dates
/// in '#' lines), each with its '\n'; a last line without '\n' is kept as is.
inline std::string without_comment_lines(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size() - 1;
    if (text[pos] != '#') out.append(text, pos, eol - pos + 1);
    pos = eol + 1;
  }
  return out;
}

/// A model configured in HMMER's default (multihit local) mode for length L: the core model, its
/// background (length set to L), the generic profile and its striped conversion.
struct ConfiguredModel {
  Hmm hmm;
  Bg bg;
  Profile gm;
  OProfile om;
};

/// Configures hmm for target length L (make_bg, set_length, config_profile, convert_profile).
inline ConfiguredModel configure_model(const Hmm& hmm, int L) {
  ConfiguredModel m;
  m.hmm = hmm;
  m.bg = make_bg(*hmm.abc);
  set_length(m.bg, L);
  m.gm = config_profile(m.hmm, m.bg, L);
  m.om = convert_profile(m.gm);
  return m;
}

/// A random amino-acid model of M nodes (h2test::random_hmm drawn from std::mt19937(seed)), configured
/// for length L.
inline ConfiguredModel random_configured_model(uint32_t seed, int M, int L) {
  std::mt19937 rng(seed);
  return configure_model(h2test::random_hmm(rng, M, abc(AbcType::kAmino)), L);
}

/// A striped profile configured in local mode for the L residues of dsq, with the full (not parser)
/// Forward, Backward and posterior-decoding matrices of that sequence: what domain definition holds
/// when it calls null2, the stochastic traceback and optimal accuracy.
struct DecodedProblem {
  OProfile om;
  Dsq dsq;
  int L = 0;
  Omx fwd, bck, pp;
};

/// Builds a DecodedProblem for model h and sequence dsq[1..L] (forward, backward and decoding run with
/// flush-to-zero set, as in HMMER); decoding's success (no overflow) is checked with EXPECT_TRUE.
inline DecodedProblem make_decoded_problem(const Hmm& h, const Dsq& dsq, int L) {
  DecodedProblem p;
  Bg bg = make_bg(*h.abc);
  set_length(bg, L);
  const Profile gm = config_profile(h, bg, L, ProfileMode::kLocal);
  p.om = convert_profile(gm);
  reconfig_length(p.om, L);
  p.dsq = dsq;
  p.L = L;
  p.fwd = make_omx(h.M, L, true);
  p.bck = make_omx(h.M, L, true);
  p.pp = make_omx(h.M, L, true);
  FlushToZeroScope ftz;
  forward(p.dsq, L, p.om, p.fwd);
  backward(p.dsq, L, p.om, p.fwd, p.bck);
  EXPECT_TRUE(decoding(p.om, p.fwd, p.bck, p.pp));
  return p;
}

}  // namespace warpsearch::hmm::hmmtest
