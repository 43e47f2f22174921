// Construction of the optimized profile (HMMER 3.3.2 p7_oprofile.c: p7_oprofile_Convert with its
// mf_conversion / sf_conversion / vf_conversion / fb_conversion, and the Reconfig* length functions)
// and Easel's esl_sse_expf. Every quantity is computed with the same float/double operations in the
// same order as HMMER; see oprofile.hpp for the striped layout that the loops below fill.
#include "hmm/oprofile.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace warpsearch::hmm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// HMMER converts with SSE flush-to-zero and denormals-are-zero on (impl_Init in hmmsearch's main
/// thread). Odds ratios below 2^-126 therefore become 0; set the same mode while converting.
class FtzDazScope {
 public:
  FtzDazScope() {
#if defined(__SSE2__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040u);  // FTZ (bit 15) | DAZ (bit 6)
#endif
  }
  ~FtzDazScope() {
#if defined(__SSE2__)
    _mm_setcsr(saved_);
#endif
  }
  FtzDazScope(const FtzDazScope&) = delete;
  FtzDazScope& operator=(const FtzDazScope&) = delete;

 private:
  unsigned int saved_ = 0;
};

/// _mm_cvttps_epi32 on one lane: truncation, and the "integer indefinite" INT_MIN for NaN/out of range.
int32_t cvtt(float f) {
  if (!(f >= -2147483648.0f && f < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(f);
}

// Cephes constants of esl_sse_expf (float literals, as Easel writes them).
constexpr float kExpP[6] = {1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f,
                            4.1665795894E-2f, 1.6666665459E-1f, 5.0000001201E-1f};
constexpr float kExpC0 = 0.693359375f;
constexpr float kExpC1 = -2.12194440e-4f;
constexpr float kMaxLogf = 88.3762626647949f;
constexpr float kMinLogf = -88.3762626647949f;
constexpr float kLog2R = static_cast<float>(1.44269504088896341);  // eslCONST_LOG2R as _mm_set1_ps makes it

}  // namespace

float sse_expf_scalar(float x) {
  const bool maxmask = x > kMaxLogf;
  const bool minmask = x <= kMinLogf;
  // Range reduction: k = floor(0.5 + x/log2), computed as Easel does (truncate, then fix negatives).
  float fx = x * kLog2R;
  fx = fx + 0.5f;
  int32_t k = cvtt(fx);
  float tmp = static_cast<float>(k);
  const float mask = tmp > fx ? 1.0f : 0.0f;
  fx = tmp - mask;
  k = cvtt(fx);
  // Polynomial for e^f, f in [-0.5, 0.5].
  tmp = fx * kExpC0;
  float z = fx * kExpC1;
  x = x - tmp;
  x = x - z;
  z = x * x;
  float y = kExpP[0];
  y = y * x;
  y = y + kExpP[1];
  y = y * x;
  y = y + kExpP[2];
  y = y * x;
  y = y + kExpP[3];
  y = y * x;
  y = y + kExpP[4];
  y = y * x;
  y = y + kExpP[5];
  y = y * z;
  y = y + x;
  y = y + 1.0f;
  // 2^k built from its IEEE754 bits (k + 127) << 23 (32-bit wrapping arithmetic, as the SIMD ops).
  const uint32_t bits = (static_cast<uint32_t>(k) + 127u) << 23;
  y = y * std::bit_cast<float>(bits);
  if (maxmask) y = kInf;
  if (minmask) y = 0.0f;
  return y;
}

#if defined(__SSE2__)
__m128 sse_expf(__m128 x) {
  const __m128 maxmask = _mm_cmpgt_ps(x, _mm_set1_ps(kMaxLogf));
  const __m128 minmask = _mm_cmple_ps(x, _mm_set1_ps(kMinLogf));
  __m128 fx = _mm_mul_ps(x, _mm_set1_ps(kLog2R));
  fx = _mm_add_ps(fx, _mm_set1_ps(0.5f));
  __m128i k = _mm_cvttps_epi32(fx);
  __m128 tmp = _mm_cvtepi32_ps(k);
  __m128 mask = _mm_cmpgt_ps(tmp, fx);
  mask = _mm_and_ps(mask, _mm_set1_ps(1.0f));
  fx = _mm_sub_ps(tmp, mask);
  k = _mm_cvttps_epi32(fx);
  tmp = _mm_mul_ps(fx, _mm_set1_ps(kExpC0));
  __m128 z = _mm_mul_ps(fx, _mm_set1_ps(kExpC1));
  x = _mm_sub_ps(x, tmp);
  x = _mm_sub_ps(x, z);
  z = _mm_mul_ps(x, x);
  __m128 y = _mm_set1_ps(kExpP[0]);
  y = _mm_mul_ps(y, x);
  y = _mm_add_ps(y, _mm_set1_ps(kExpP[1]));
  y = _mm_mul_ps(y, x);
  y = _mm_add_ps(y, _mm_set1_ps(kExpP[2]));
  y = _mm_mul_ps(y, x);
  y = _mm_add_ps(y, _mm_set1_ps(kExpP[3]));
  y = _mm_mul_ps(y, x);
  y = _mm_add_ps(y, _mm_set1_ps(kExpP[4]));
  y = _mm_mul_ps(y, x);
  y = _mm_add_ps(y, _mm_set1_ps(kExpP[5]));
  y = _mm_mul_ps(y, z);
  y = _mm_add_ps(y, x);
  y = _mm_add_ps(y, _mm_set1_ps(1.0f));
  k = _mm_add_epi32(k, _mm_set1_epi32(127));
  k = _mm_slli_epi32(k, 23);
  y = _mm_mul_ps(y, _mm_castsi128_ps(k));
  // esl_sse_select_ps(a, b, mask) = (a & ~mask) | (b & mask).
  y = _mm_or_ps(_mm_andnot_ps(maxmask, y), _mm_and_ps(maxmask, _mm_set1_ps(kInf)));
  y = _mm_or_ps(_mm_andnot_ps(minmask, y), _mm_and_ps(minmask, _mm_set1_ps(0.0f)));
  return y;
}
#endif

namespace {

/// esl_sse_expf on 4 lanes through whichever implementation is compiled in.
void expf4(const float in[4], float out[4]) {
#if defined(__SSE2__)
  _mm_storeu_ps(out, sse_expf(_mm_loadu_ps(in)));
#else
  for (int z = 0; z < 4; z++) out[z] = sse_expf_scalar(in[z]);
#endif
}

/// sf_conversion: SSV scores from the MSV costs, sbv = ((bias+127) -sat rbv) ^ 127 as int8 bits,
/// i.e. min(rbv - bias, 127); then the 17 wrap-around vectors.
void sf_conversion(OProfile& om) {
  const int Q = om.Q16;
  const int Kp = om.abc->Kp;
  const int top = om.bias_b + 127;  // <= 255 since bias_b < 128 for any real profile (see mf_conversion)
  for (int x = 0; x < Kp; x++) {
    const uint8_t* r = om.rbv_row(x);
    uint8_t* s = om.sbv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q + kExtraSb) * 16;
    for (int i = 0; i < Q * 16; i++) {
      // Unsigned saturating subtraction in 8 bits ((uint8_t)(bias+127) as _mm_set1_epi8 makes it).
      const int a = static_cast<uint8_t>(top);
      const int d = a - r[i] < 0 ? 0 : a - r[i];
      s[i] = static_cast<uint8_t>(d ^ 127);
    }
    for (int q = Q; q < Q + kExtraSb; q++)
      std::memcpy(s + static_cast<std::size_t>(q) * 16, s + static_cast<std::size_t>(q % Q) * 16, 16);
  }
}

void mf_conversion(const Profile& gm, OProfile& om) {
  const int M = gm.M, Q = om.Q16;
  // Basis: 1/3-bit units, base 190; bias = cost of the best residue score (over canonical codes,
  // all match and insert entries, nodes 0..M, as esl_vec_FMax over rsc[x][0..(M+1)*2-1]).
  float max = 0.0f;
  for (int x = 0; x < gm.abc->K; x++)
    for (int j = 0; j < (M + 1) * 2; j++) max = std::max(max, gm.rsc[x][static_cast<std::size_t>(j)]);
  om.scale_b = static_cast<float>(3.0 / kLog2);
  om.base_b = 190;
  om.bias_b = unbiased_byteify(om, static_cast<float>(-1.0 * static_cast<double>(max)));

  for (int x = 0; x < gm.abc->Kp; x++) {
    uint8_t* row = om.rbv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q) * 16;
    for (int q = 0, k = 1; q < Q; q++, k++)
      for (int z = 0; z < 16; z++)
        row[q * 16 + z] = (k + z * Q <= M) ? biased_byteify(om, gm.msc(k + z * Q, x)) : uint8_t{255};
  }

  om.tbm_b = unbiased_byteify(om, std::log(2.0f / (static_cast<float>(gm.M) * static_cast<float>(gm.M + 1))));
  om.tec_b = unbiased_byteify(om, std::log(0.5f));
  om.tjb_b = unbiased_byteify(om, std::log(3.0f / static_cast<float>(gm.L + 3)));

  sf_conversion(om);
}

/// Generic transition index and source-node offset of each optimized transition kOBM..kOII:
/// B->M, MM, IM, DM are "rotated" (slot k holds source node k-1); MD, MI, II are straight.
struct TransMap {
  int tg;
  int koff;
};
constexpr TransMap kTransMap[7] = {{kPBM, -1}, {kPMM, -1}, {kPIM, -1}, {kPDM, -1},
                                   {kPMD, 0},  {kPMI, 0},  {kPII, 0}};

void vf_conversion(const Profile& gm, OProfile& om) {
  const int M = gm.M, Q = om.Q8;
  // Basis: 1/500-bit units, base 12000.
  om.scale_w = static_cast<float>(500.0 / kLog2);
  om.base_w = 12000;

  for (int x = 0; x < gm.abc->Kp; x++) {
    int16_t* row = om.rwv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q) * 8;
    for (int k = 1, q = 0; q < Q; q++, k++)
      for (int z = 0; z < 8; z++)
        row[q * 8 + z] = (k + z * Q <= M) ? wordify(om, gm.msc(k + z * Q, x)) : int16_t{-32768};
  }

  std::size_t j = 0;  // vector index into twv
  for (int k = 1, q = 0; q < Q; q++, k++) {
    for (int t = kOBM; t <= kOII; t++) {
      const int tg = kTransMap[t].tg;
      const int kb = k + kTransMap[t].koff;
      const int maxval = (t == kOII) ? -1 : 0;  // never a zero-cost II
      for (int z = 0; z < 8; z++) {
        const int16_t val = (kb + z * Q < M) ? wordify(om, gm.tsc_at(kb + z * Q, tg)) : int16_t{-32768};
        om.twv[j * 8 + static_cast<std::size_t>(z)] = (val <= maxval) ? val : static_cast<int16_t>(maxval);
      }
      j++;
    }
  }
  for (int k = 1, q = 0; q < Q; q++, k++, j++)
    for (int z = 0; z < 8; z++)
      om.twv[j * 8 + static_cast<std::size_t>(z)] =
          (k + z * Q < M) ? wordify(om, gm.tsc_at(k + z * Q, kPDD)) : int16_t{-32768};

  // Specials; N/C/J loops are 0 (HMMER's -3 nat approximation, see vitfilter.hpp).
  om.xw[kOE][kOLoop] = wordify(om, gm.xsc[kXE][kLoop]);
  om.xw[kOE][kOMove] = wordify(om, gm.xsc[kXE][kMove]);
  om.xw[kON][kOMove] = wordify(om, gm.xsc[kXN][kMove]);
  om.xw[kON][kOLoop] = 0;
  om.xw[kOC][kOMove] = wordify(om, gm.xsc[kXC][kMove]);
  om.xw[kOC][kOLoop] = 0;
  om.xw[kOJ][kOMove] = wordify(om, gm.xsc[kXJ][kMove]);
  om.xw[kOJ][kOLoop] = 0;
  om.ncj_roundoff = 0.0f;

  // Lazy-F bound (int arithmetic; stored into int16 with C's wrap-around, as HMMER's assignment).
  om.ddbound_w = -32768;
  for (int k = 2; k < M - 1; k++) {
    int ddtmp = static_cast<int>(wordify(om, gm.tsc_at(k, kPDD)));
    ddtmp += static_cast<int>(wordify(om, gm.tsc_at(k + 1, kPDM)));
    ddtmp -= static_cast<int>(wordify(om, gm.tsc_at(k + 1, kPBM)));
    om.ddbound_w = static_cast<int16_t>(std::max(static_cast<int>(om.ddbound_w), ddtmp));
  }
}

void fb_conversion(const Profile& gm, OProfile& om) {
  const int M = gm.M, Q = om.Q4;
  float in[4], out[4];
  for (int x = 0; x < gm.abc->Kp; x++) {
    float* row = om.rfv.data() + static_cast<std::size_t>(x) * static_cast<std::size_t>(Q) * 4;
    for (int k = 1, q = 0; q < Q; q++, k++) {
      for (int z = 0; z < 4; z++) in[z] = (k + z * Q <= M) ? gm.msc(k + z * Q, x) : -kInf;
      expf4(in, out);
      std::memcpy(row + q * 4, out, sizeof out);
    }
  }
  std::size_t j = 0;
  for (int k = 1, q = 0; q < Q; q++, k++) {
    for (int t = kOBM; t <= kOII; t++) {
      const int tg = kTransMap[t].tg;
      const int kb = k + kTransMap[t].koff;
      for (int z = 0; z < 4; z++) in[z] = (kb + z * Q < M) ? gm.tsc_at(kb + z * Q, tg) : -kInf;
      expf4(in, out);
      std::memcpy(om.tfv.data() + j * 4, out, sizeof out);
      j++;
    }
  }
  for (int k = 1, q = 0; q < Q; q++, k++, j++) {
    for (int z = 0; z < 4; z++) in[z] = (k + z * Q < M) ? gm.tsc_at(k + z * Q, kPDD) : -kInf;
    expf4(in, out);
    std::memcpy(om.tfv.data() + j * 4, out, sizeof out);
  }
  // Specials with libm expf.
  for (int s = 0; s < kNXStates; s++) {
    om.xf[s][kOLoop] = std::exp(gm.xsc[s][kLoop]);
    om.xf[s][kOMove] = std::exp(gm.xsc[s][kMove]);
  }
}

}  // namespace

uint8_t biased_byteify(const OProfile& om, float sc) {
  // Integer cost held in a float; saturate at 255 ("prohibited"), else add the bias. The cost may be
  // negative (down to -bias_b): HMMER's (uint8_t) cast of it wraps modulo 256 before the bias is
  // added, which the int arithmetic below reproduces.
  sc = -1.0f * std::round(om.scale_b * sc);
  if (sc > static_cast<float>(255 - om.bias_b)) return 255;
  return static_cast<uint8_t>(static_cast<int>(sc) + om.bias_b);
}

uint8_t unbiased_byteify(const OProfile& om, float sc) {
  sc = -1.0f * std::round(om.scale_b * sc);
  if (static_cast<double>(sc) > 255.) return 255;
  return static_cast<uint8_t>(static_cast<int>(sc));
}

int16_t wordify(const OProfile& om, float sc) {
  sc = std::round(om.scale_w * sc);
  if (static_cast<double>(sc) >= 32767.0) return 32767;
  if (static_cast<double>(sc) <= -32768.0) return -32768;
  return static_cast<int16_t>(sc);
}

OProfile convert_profile(const Profile& gm) {
  FtzDazScope ftz;
  OProfile om;
  om.abc = gm.abc;
  om.mode = gm.mode;
  om.L = gm.L;
  om.M = gm.M;
  om.nj = gm.nj;
  om.max_length = gm.max_length;
  om.Q4 = nqf(gm.M);
  om.Q8 = nqw(gm.M);
  om.Q16 = nqb(gm.M);
  const auto Kp = static_cast<std::size_t>(gm.abc->Kp);
  om.rbv.assign(Kp * static_cast<std::size_t>(om.Q16) * 16, 0);
  om.sbv.assign(Kp * static_cast<std::size_t>(om.Q16 + kExtraSb) * 16, 0);
  om.rwv.assign(Kp * static_cast<std::size_t>(om.Q8) * 8, 0);
  om.twv.assign(static_cast<std::size_t>(kONTrans * om.Q8) * 8, 0);
  om.rfv.assign(Kp * static_cast<std::size_t>(om.Q4) * 4, 0.0f);
  om.tfv.assign(static_cast<std::size_t>(kONTrans * om.Q4) * 4, 0.0f);

  mf_conversion(gm, om);
  vf_conversion(gm, om);
  fb_conversion(gm, om);

  om.name = gm.name;
  om.acc = gm.acc;
  om.desc = gm.desc;
  om.rf = gm.rf;
  om.mm = gm.mm;
  om.cs = gm.cs;
  om.consensus = gm.consensus;
  om.evparam = gm.evparam;
  om.cutoff = gm.cutoff;
  om.compo = gm.compo;
  return om;
}

void reconfig_length(OProfile& om, int L) {
  reconfig_msv_length(om, L);
  reconfig_rest_length(om, L);
}

uint8_t msv_tjb_for_length(const OProfile& om, int L) {
  return unbiased_byteify(om, std::log(3.0f / static_cast<float>(L + 3)));
}

float rest_move_probability(const OProfile& om, int L) {
  return (2.0f + om.nj) / (static_cast<float>(L) + 2.0f + om.nj);
}

int16_t vit_move_for_length(const OProfile& om, int L) {
  return wordify(om, std::log(rest_move_probability(om, L)));
}

void reconfig_msv_length(OProfile& om, int L) { om.tjb_b = msv_tjb_for_length(om, L); }

void reconfig_rest_length(OProfile& om, int L) {
  const float pmove = rest_move_probability(om, L);
  const float ploop = 1.0f - pmove;
  om.xf[kON][kOLoop] = om.xf[kOC][kOLoop] = om.xf[kOJ][kOLoop] = ploop;
  om.xf[kON][kOMove] = om.xf[kOC][kOMove] = om.xf[kOJ][kOMove] = pmove;
  om.xw[kON][kOMove] = om.xw[kOC][kOMove] = om.xw[kOJ][kOMove] = vit_move_for_length(om, L);
  om.L = L;
}

void reconfig_multihit(OProfile& om, int L) {
  om.xf[kOE][kOMove] = 0.5f;
  om.xf[kOE][kOLoop] = 0.5f;
  om.nj = 1.0f;
  om.xw[kOE][kOMove] = wordify(om, static_cast<float>(-kLog2));
  om.xw[kOE][kOLoop] = wordify(om, static_cast<float>(-kLog2));
  reconfig_length(om, L);
}

void reconfig_unihit(OProfile& om, int L) {
  om.xf[kOE][kOMove] = 1.0f;
  om.xf[kOE][kOLoop] = 0.0f;
  om.nj = 0.0f;
  om.xw[kOE][kOMove] = 0;
  om.xw[kOE][kOLoop] = -32768;
  reconfig_length(om, L);
}

}  // namespace warpsearch::hmm
