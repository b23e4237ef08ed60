#include "quant_error.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "report.h"

namespace braid::perf {

std::optional<braidCodec_t> parseCodec(const std::string& name) {
  if (name == "none") return braidCodecNone;
  if (name == "fp16") return braidCodecFloat16;
  if (name == "bf16") return braidCodecBfloat16;
  if (name == "e4m3") return braidCodecFloat8e4m3;
  if (name == "e5m2") return braidCodecFloat8e5m2;
  return std::nullopt;
}

const char* codecName(braidCodec_t codec) {
  switch (codec) {
    case braidCodecNone: return "none";
    case braidCodecFloat16: return "fp16";
    case braidCodecBfloat16: return "bf16";
    case braidCodecFloat8e4m3: return "e4m3";
    case braidCodecFloat8e5m2: return "e5m2";
    default: return "?";
  }
}

double promisedRelativeError(braidCodec_t codec, braidDataType_t hostType) {
  double wire = codec == braidCodecFloat16     ? std::ldexp(1.0, -11) * (1 + std::ldexp(1.0, -9))
                : codec == braidCodecBfloat16  ? std::ldexp(1.0, -8)
                : codec == braidCodecFloat8e4m3 ? std::ldexp(1.0, -4)
                : codec == braidCodecFloat8e5m2 ? std::ldexp(1.0, -3)
                                                : 0.0;
  // bf16 host values: the decoded value is rounded to bf16 (half an ulp, 2^-9) again.
  if (hostType == braidBfloat16 && codec != braidCodecNone && codec != braidCodecBfloat16)
    wire = wire + std::ldexp(1.0, -9) * (1 + wire);
  return wire;
}

static uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float quantInput(int owner, uint64_t index, braidDataType_t hostType) {
  const uint64_t h = mix(index * 0x100000001b3ull ^ (static_cast<uint64_t>(owner) << 48));
  const float mantissa = 1.0f + static_cast<float>(h & 0xffffff) / 16777216.0f;  // [1, 2)
  const int exponent = static_cast<int>((h >> 24) % 9) - 4;
  float v = std::ldexp(mantissa, exponent) * ((h >> 40) & 1 ? -1.0f : 1.0f);
  if (hostType == braidBfloat16) {  // truncate to a bf16 value
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits &= 0xffff0000u;
    std::memcpy(&v, &bits, 4);
  }
  return v;
}

void storeHost(void* buf, size_t i, braidDataType_t hostType, float v) {
  if (hostType == braidFloat32) {
    std::memcpy(static_cast<char*>(buf) + 4 * i, &v, 4);
    return;
  }
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  const uint16_t h = static_cast<uint16_t>(bits >> 16);  // inputs are bf16 values already
  std::memcpy(static_cast<char*>(buf) + 2 * i, &h, 2);
}

float loadHost(const void* buf, size_t i, braidDataType_t hostType) {
  float v;
  if (hostType == braidFloat32) {
    std::memcpy(&v, static_cast<const char*>(buf) + 4 * i, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, static_cast<const char*>(buf) + 2 * i, 2);
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  std::memcpy(&v, &bits, 4);
  return v;
}

// The absolute error braid.h promises for x (amax: its fp8 block's largest |x|).
static double bound(const QuantSettings& q, braidDataType_t hostType, double x, double amax) {
  const double ax = std::fabs(x);
  double b = 0;
  switch (q.codec) {
    case braidCodecFloat16:
      b = std::ldexp(ax, -11) * (1 + std::ldexp(1.0, -9)) + std::ldexp(1.0, -25) / q.lossScale;
      break;
    case braidCodecBfloat16: b = std::ldexp(ax, -8) + std::ldexp(1.0, -134); break;
    case braidCodecFloat8e4m3: b = std::max(std::ldexp(ax, -4), std::ldexp(amax, -17)) + std::ldexp(1.0, -135); break;
    case braidCodecFloat8e5m2: b = std::max(std::ldexp(ax, -3), std::ldexp(amax, -31)) + std::ldexp(1.0, -142); break;
    default: break;
  }
  if (hostType == braidBfloat16 && q.codec != braidCodecBfloat16 && q.codec != braidCodecNone)
    b += std::ldexp(ax + b, -9);  // the final rounding to bf16
  return b;
}

void accumulateError(const QuantSettings& q, braidDataType_t hostType, const std::vector<float>& sent,
                     const std::vector<float>& got, QuantError* err) {
  double amax = 0;
  for (float v : sent)
    if (std::isfinite(v)) amax = std::max(amax, static_cast<double>(std::fabs(v)));
  for (size_t i = 0; i < sent.size(); ++i) {
    const double x = sent[i], d = got[i];
    const double e = std::fabs(d - x);
    if (!(e <= bound(q, hostType, x, amax))) err->violations++;  // NaN counts as a violation
    if (x != 0) {
      const double rel = e / std::fabs(x);
      err->maxRel = std::isnan(rel) ? INFINITY : std::max(err->maxRel, rel);
      err->sumSqRel += rel * rel;
    }
    err->count += 1;
  }
}

std::string quantTableHeader(const QuantSettings& q, braidDataType_t hostType) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "# codec %s (fp8 block %u, fp16 loss scale %g): busbw counts the %s payload the caller sees;\n"
                "# maxrel / rmsrel: relative error against the unquantized values, promised <= %.3g "
                "(violations of the absolute bound fail the run)\n",
                codecName(q.codec), q.blockSize, static_cast<double>(q.lossScale),
                hostType == braidFloat32 ? "fp32" : "bf16", promisedRelativeError(q.codec, hostType));
  std::string out = buf;
  out += "#                                                         out-of-place                       in-place\n";
  out += "#       size         count      type   codec     time   algbw   busbw   maxrel   rmsrel     time   algbw   busbw   maxrel   rmsrel\n";
  out += "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)                         (us)  (GB/s)  (GB/s)\n";
  return out;
}

std::string quantCells(bool skipped, double timeUs, double algBw, double busBw, const QuantError& err) {
  char buf[160];
  if (skipped) {
    std::snprintf(buf, sizeof(buf), "  %7s  %6s  %6s  %7s  %7s", "N/A", "N/A", "N/A", "N/A", "N/A");
    return buf;
  }
  std::snprintf(buf, sizeof(buf), "  %s  %s  %s  %7.1e  %7.1e", floatCell(timeUs, 7).c_str(), floatCell(algBw, 6).c_str(),
                floatCell(busBw, 6).c_str(), err.maxRel, err.rms());
  return buf;
}

}  // namespace braid::perf
