// An independent reference for the wire codecs of kernels/codec.h, written
// from codec.h's contract on top of reference_formats.h (nearest-value search
// over every code). It shares no code with src/kernels: the block scale is
// found by search rather than from exponent bits, saturation is applied after
// rounding rather than by clamping before it, and fp8 decoding is done in
// double.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/codec.h"
#include "kernels/codec_table.h"
#include "kernels/dispatch.h"
#include "reference_formats.h"

namespace braid::kernels::ref {

inline const RefFormat& wireRef(WireFormat f) {
  switch (f) {
    case WireFormat::kFloat16:
      return refHalf();
    case WireFormat::kBfloat16:
      return refBf16();
    case WireFormat::kFloat8e4m3:
      return refE4m3();
    case WireFormat::kFloat8e5m2:
      return refE5m2();
  }
  return refHalf();
}
inline bool isFp8(WireFormat f) { return f == WireFormat::kFloat8e4m3 || f == WireFormat::kFloat8e5m2; }
inline size_t hostBytes(const CodecParams& p) { return p.hostType == DataType::kBfloat16 ? 2 : 4; }

// Rounds to the format and turns an inf that came from a finite value into
// the largest finite code of that sign.
inline uint32_t encodeSaturating(const RefFormat& f, float x) {
  const uint32_t c = f.encode(x);
  if (std::isfinite(x) && f.isInf(c)) return (c & f.signBit()) | f.maxFiniteCode();
  return c;
}

// Host element i of buf as fp32 (bf16 widened exactly).
inline float loadHost(const CodecParams& p, const void* buf, size_t i) {
  if (p.hostType == DataType::kBfloat16) {
    uint16_t c;
    std::memcpy(&c, static_cast<const uint8_t*>(buf) + 2 * i, 2);
    return refBf16().decode(c);
  }
  float x;
  std::memcpy(&x, static_cast<const uint8_t*>(buf) + 4 * i, 4);
  return x;
}
inline void storeHost(const CodecParams& p, void* buf, size_t i, float v) {
  if (p.hostType == DataType::kBfloat16) {
    const uint16_t c = static_cast<uint16_t>(encodeSaturating(refBf16(), v));
    std::memcpy(static_cast<uint8_t*>(buf) + 2 * i, &c, 2);
  } else {
    std::memcpy(static_cast<uint8_t*>(buf) + 4 * i, &v, 4);
  }
}

inline double fp8Max(WireFormat f) { return wireRef(f).value(wireRef(f).maxFiniteCode()); }

// The block exponent k by search: the largest k <= 126 with amax * 2^k <= max.
inline int blockExponent(WireFormat f, const std::vector<float>& x) {
  double amax = 0;
  for (float v : x) {
    if (std::isfinite(v)) amax = std::fmax(amax, std::fabs(static_cast<double>(v)));
  }
  if (amax == 0) return 0;
  int k = 126;
  while (std::ldexp(amax, k) > fp8Max(f)) --k;
  return k;
}

inline std::vector<uint8_t> encode(const CodecParams& p, const void* src, size_t count) {
  std::vector<uint8_t> out;
  const RefFormat& f = wireRef(p.format);
  if (!isFp8(p.format)) {
    for (size_t i = 0; i < count; ++i) {
      const float x = loadHost(p, src, i);
      // The scale may overflow fp32 (x * s = inf): saturation follows x.
      const float y = p.format == WireFormat::kFloat16 ? x * p.lossScale : x;
      uint32_t c = f.encode(y);
      if (std::isfinite(x) && f.isInf(c)) c = (c & f.signBit()) | f.maxFiniteCode();
      out.push_back(static_cast<uint8_t>(c));
      out.push_back(static_cast<uint8_t>(c >> 8));
    }
    return out;
  }
  for (size_t b = 0; b < count; b += p.blockSize) {
    const size_t n = std::min<size_t>(p.blockSize, count - b);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = loadHost(p, src, b + i);
    const int k = blockExponent(p.format, x);
    const float scale = std::ldexp(1.0f, -k);
    uint8_t h[4];
    std::memcpy(h, &scale, 4);
    out.insert(out.end(), h, h + 4);
    for (float v : x) out.push_back(static_cast<uint8_t>(f.encode(std::ldexp(v, k))));
  }
  return out;
}

// Host values, as bytes, from count encoded values.
inline std::vector<uint8_t> decode(const CodecParams& p, const uint8_t* wire, size_t count) {
  std::vector<uint8_t> out(count * hostBytes(p));
  const RefFormat& f = wireRef(p.format);
  if (!isFp8(p.format)) {
    for (size_t i = 0; i < count; ++i) {
      const uint32_t c = wire[2 * i] | (uint32_t{wire[2 * i + 1]} << 8);
      const float v = f.decode(c);
      storeHost(p, out.data(), i, p.format == WireFormat::kFloat16 ? v / p.lossScale : v);
    }
    return out;
  }
  for (size_t b = 0; b < count; b += p.blockSize) {
    const size_t n = std::min<size_t>(p.blockSize, count - b);
    float scale;
    std::memcpy(&scale, wire, 4);
    for (size_t i = 0; i < n; ++i) {
      const float q = f.decode(wire[4 + i]);
      double v = static_cast<double>(q) * static_cast<double>(scale);  // exact
      if (std::isfinite(q) && !std::isnan(v))
        v = std::fmin(std::fmax(v, -static_cast<double>(FLT_MAX)), FLT_MAX);
      storeHost(p, out.data(), b + i, std::isnan(v) ? q * scale : static_cast<float>(v));
    }
    wire += 4 + n;
  }
  return out;
}

// --- Helpers shared by the codec tests. ----------------------------------------

// Every codec table compiled in and supported by this CPU, baseline first.
inline std::vector<const CodecTable*> supportedCodecTables() {
  std::vector<const CodecTable*> v{&baselineCodecs()};
  if (cpuSupportsAvx2() && avx2Codecs() != nullptr) v.push_back(avx2Codecs());
  return v;
}

// "" when a == b, else where they first differ (for ASSERT_EQ(..., "")).
inline std::string firstDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a == b) return "";
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  char buf[128];
  std::snprintf(buf, sizeof(buf), "sizes %zu / %zu, first difference at byte %zu: 0x%02x / 0x%02x", a.size(),
                b.size(), i, i < a.size() ? a[i] : 0, i < b.size() ? b[i] : 0);
  return buf;
}

// Bytes past the end of an output that must stay untouched.
constexpr size_t kCanary = 16;
constexpr uint8_t kCanaryByte = 0xCD;

inline bool canaryIntact(const std::vector<uint8_t>& v) {
  for (size_t i = v.size() - kCanary; i < v.size(); ++i) {
    if (v[i] != kCanaryByte) return false;
  }
  return true;
}

// Runs one table's encoder; the result is encodedBytes(p, n) long (the
// canary is checked and stripped; a damaged one fails the calling test).
inline std::vector<uint8_t> encodeWith(const CodecTable& t, const CodecParams& p, const void* src, size_t n) {
  std::vector<uint8_t> out(encodedBytes(p, n) + kCanary, kCanaryByte);
  const int row = p.hostType == DataType::kBfloat16 ? 1 : 0;
  t.encode[row][static_cast<int>(p.format)](src, n, out.data(), CodecArgs{p.lossScale, p.blockSize});
  EXPECT_TRUE(canaryIntact(out)) << t.name << " wrote past encodedBytes()";
  out.resize(out.size() - kCanary);
  return out;
}
inline std::vector<uint8_t> decodeWith(const CodecTable& t, const CodecParams& p, const uint8_t* wire,
                                       size_t n) {
  std::vector<uint8_t> out(n * hostBytes(p) + kCanary, kCanaryByte);
  const int row = p.hostType == DataType::kBfloat16 ? 1 : 0;
  t.decode[row][static_cast<int>(p.format)](wire, n, out.data(), CodecArgs{p.lossScale, p.blockSize});
  EXPECT_TRUE(canaryIntact(out)) << t.name << " wrote past the host buffer";
  out.resize(out.size() - kCanary);
  return out;
}

// Host buffer holding xs (rounded to bf16, saturating, for a bf16 host).
inline std::vector<uint8_t> hostBuffer(const CodecParams& p, const std::vector<float>& xs) {
  std::vector<uint8_t> out(xs.size() * hostBytes(p));
  for (size_t i = 0; i < xs.size(); ++i) storeHost(p, out.data(), i, xs[i]);
  return out;
}
inline std::vector<float> hostFloats(const CodecParams& p, const std::vector<uint8_t>& buf) {
  std::vector<float> out(buf.size() / hostBytes(p));
  for (size_t i = 0; i < out.size(); ++i) out[i] = loadHost(p, buf.data(), i);
  return out;
}

}  // namespace braid::kernels::ref
