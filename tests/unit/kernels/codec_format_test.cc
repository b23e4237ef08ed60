// The wire codecs (kernels/codec.h) against literal bit patterns and the
// independent reference of codec_reference.h, on every implementation this CPU
// supports: parameters and sizes, special values, saturation, rounding ties,
// the round trip of every representable value, and chunked streaming.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codec_reference.h"
#include "kernels/codec.h"
#include "kernels/reduce.h"

namespace braid::kernels {
namespace {

using ref::bitsFloat;
using ref::floatBits;

CodecParams params(WireFormat f, DataType host = DataType::kFloat32, float scale = 1.0f,
                   uint32_t block = 256) {
  return CodecParams{f, host, scale, block};
}

uint32_t code16(const std::vector<uint8_t>& w, size_t i) { return w[2 * i] | (uint32_t{w[2 * i + 1]} << 8); }
float scaleOf(const std::vector<uint8_t>& w, size_t offset = 0) {
  float s;
  std::memcpy(&s, w.data() + offset, 4);
  return s;
}

TEST(CodecParams, Validation) {
  EXPECT_TRUE(checkCodecParams(params(WireFormat::kFloat16)).isOk());
  EXPECT_TRUE(checkCodecParams(params(WireFormat::kFloat16, DataType::kBfloat16, 0x1p64f)).isOk());
  EXPECT_TRUE(checkCodecParams(params(WireFormat::kFloat8e4m3, DataType::kFloat32, 1.0f, 8)).isOk());
  EXPECT_TRUE(checkCodecParams(params(WireFormat::kFloat8e5m2, DataType::kFloat32, 1.0f, 65536)).isOk());
  const CodecParams bad[] = {
      params(static_cast<WireFormat>(4)),
      params(WireFormat::kFloat16, DataType::kFloat16),
      params(WireFormat::kFloat16, DataType::kFloat32, 0.0f),
      params(WireFormat::kFloat16, DataType::kFloat32, -1.0f),
      params(WireFormat::kFloat16, DataType::kFloat32, NAN),
      params(WireFormat::kFloat16, DataType::kFloat32, INFINITY),
      params(WireFormat::kFloat16, DataType::kFloat32, 0x1p65f),
      params(WireFormat::kBfloat16, DataType::kFloat32, 2.0f),
      params(WireFormat::kFloat8e4m3, DataType::kFloat32, 2.0f),
      params(WireFormat::kFloat8e4m3, DataType::kFloat32, 1.0f, 0),
      params(WireFormat::kFloat8e4m3, DataType::kFloat32, 1.0f, 12),
      params(WireFormat::kFloat8e5m2, DataType::kFloat32, 1.0f, 65544),
  };
  for (const CodecParams& p : bad) {
    const Status st = checkCodecParams(p);
    EXPECT_EQ(st.code(), Code::kInvalidArgument)
        << wireFormatName(p.format) << " " << p.lossScale << " " << p.blockSize;
    EXPECT_FALSE(st.message().empty());
  }
}

TEST(CodecParams, SizesAndAlignment) {
  const CodecParams half = params(WireFormat::kFloat16);
  EXPECT_EQ(codecAlignment(half), 1u);
  EXPECT_EQ(encodedBytes(half, 0), 0u);
  EXPECT_EQ(encodedBytes(half, 1001), 2002u);
  const CodecParams fp8 = params(WireFormat::kFloat8e4m3, DataType::kBfloat16, 1.0f, 128);
  EXPECT_EQ(codecAlignment(fp8), 128u);
  EXPECT_EQ(encodedBytes(fp8, 0), 0u);
  EXPECT_EQ(encodedBytes(fp8, 1), 5u);
  EXPECT_EQ(encodedBytes(fp8, 128), 132u);
  EXPECT_EQ(encodedBytes(fp8, 129), 137u);
  EXPECT_EQ(encodedBytes(fp8, 1000), 1000u + 8 * 4);
}

TEST(Codec, HalfSpecialValues) {
  const std::vector<float> in = {0.0f,
                                 -0.0f,
                                 1.0f,
                                 65504.0f,
                                 65519.99f,
                                 65520.0f,
                                 1e10f,
                                 -1e10f,
                                 FLT_MAX,
                                 INFINITY,
                                 -INFINITY,
                                 std::ldexp(1.0f, -24),
                                 std::ldexp(1.0f, -25),
                                 std::ldexp(3.0f, -25),
                                 1.0f + 0x1p-11f,
                                 1.0f + 3 * 0x1p-11f,
                                 bitsFloat(0x7FC00000),
                                 bitsFloat(0xFFA00001)};
  const std::vector<uint32_t> want = {0x0000, 0x8000, 0x3C00, 0x7BFF, 0x7BFF, 0x7BFF, 0x7BFF, 0xFBFF, 0x7BFF,
                                      0x7C00, 0xFC00, 0x0001, 0x0000, 0x0002, 0x3C00, 0x3C02, 0x7E00, 0xFF00};
  const CodecParams p = params(WireFormat::kFloat16);
  for (const CodecTable* t : ref::supportedCodecTables()) {
    const std::vector<uint8_t> w = ref::encodeWith(*t, p, in.data(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(code16(w, i), want[i]) << t->name << std::hex << " input 0x" << floatBits(in[i]);
    }
  }
}

// The loss scale is applied before rounding and undone after decoding; the
// saturation point moves with it.
TEST(Codec, HalfLossScale) {
  const std::vector<float> in = {64.0f, 63.96875f, std::ldexp(1.0f, -34), 1e36f, -1e36f, -INFINITY, 3.0f};
  for (const CodecTable* t : ref::supportedCodecTables()) {
    const CodecParams p = params(WireFormat::kFloat16, DataType::kFloat32, 1024.0f);
    const std::vector<uint8_t> w = ref::encodeWith(*t, p, in.data(), in.size());
    const std::vector<float> out = ref::hostFloats(p, ref::decodeWith(*t, p, w.data(), in.size()));
    EXPECT_EQ(code16(w, 0), 0x7BFFu) << "64 * 1024 saturates";
    EXPECT_EQ(out[0], 63.96875f);
    EXPECT_EQ(out[1], 63.96875f) << "65504 / 1024 is exact";
    EXPECT_EQ(code16(w, 2), 0x0001u) << "2^-34 * 2^10 is fp16's smallest subnormal";
    EXPECT_EQ(out[2], std::ldexp(1.0f, -34));
    EXPECT_EQ(code16(w, 3), 0x7BFFu) << "fp32 overflow of x * s still saturates";
    EXPECT_EQ(code16(w, 4), 0xFBFFu);
    EXPECT_EQ(code16(w, 5), 0xFC00u);
    EXPECT_EQ(out[5], -INFINITY);
    EXPECT_EQ(out[6], 3.0f);
    // A scale that is not a power of two: still within a few fp32 ulps.
    const CodecParams q = params(WireFormat::kFloat16, DataType::kFloat32, 3.0f);
    const std::vector<uint8_t> w3 = ref::encodeWith(*t, q, in.data(), in.size());
    const std::vector<float> out3 = ref::hostFloats(q, ref::decodeWith(*t, q, w3.data(), in.size()));
    EXPECT_EQ(out3[6], 3.0f);
    EXPECT_EQ(out3[3], 65504.0f / 3.0f);
  }
}

TEST(Codec, Bf16SpecialValues) {
  const std::vector<float> in = {0.0f,
                                 -0.0f,
                                 FLT_MAX,
                                 -FLT_MAX,
                                 bitsFloat(0x7F7F8000),
                                 bitsFloat(0x7F7F7FFF),
                                 INFINITY,
                                 bitsFloat(0x3F818000),
                                 bitsFloat(0x00018000),
                                 bitsFloat(0x7F800001)};
  const std::vector<uint32_t> want = {0x0000, 0x8000, 0x7F7F, 0xFF7F, 0x7F7F,
                                      0x7F7F, 0x7F80, 0x3F82, 0x0002, 0x7FC0};
  const CodecParams p = params(WireFormat::kBfloat16);
  for (const CodecTable* t : ref::supportedCodecTables()) {
    const std::vector<uint8_t> w = ref::encodeWith(*t, p, in.data(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(code16(w, i), want[i]) << t->name << std::hex << " input 0x" << floatBits(in[i]);
    }
  }
}

// Block scales: the block's max |x| lands in the top binade; inf and NaN are
// ignored for the scale; e4m3 turns inf into NaN; nothing finite overflows.
TEST(Codec, Fp8BlockScaleAndSpecials) {
  for (const CodecTable* t : ref::supportedCodecTables()) {
    SCOPED_TRACE(t->name);
    const CodecParams e4 = params(WireFormat::kFloat8e4m3, DataType::kFloat32, 1.0f, 8);
    const CodecParams e5 = params(WireFormat::kFloat8e5m2, DataType::kFloat32, 1.0f, 8);
    // Block 0: amax 1 -> k = 8. Block 1: amax 449 -> k = -1. Block 2: only
    // non-finite and zeros -> scale 1. Block 3: FLT_MAX. Block 4: fp32 subnormals.
    std::vector<float> in = {1.0f,      -0.5f,      0x1p-17f,  0x1p-18f, INFINITY, NAN,  -0.0f, 0.0f,
                             449.0f,    1.0f,       -448.0f,   3.0f,     0.0f,     0.0f, 0.0f,  0.0f,
                             INFINITY,  -INFINITY,  NAN,       -0.0f,    0.0f,     0.0f, 0.0f,  0.0f,
                             FLT_MAX,   -FLT_MAX,   1.0f,      0.0f,     0.0f,     0.0f, 0.0f,  0.0f,
                             0x1p-149f, -0x1p-140f, 0x1p-130f, 0.0f,     0.0f,     0.0f, 0.0f,  0.0f};
    const std::vector<uint8_t> w4 = ref::encodeWith(*t, e4, in.data(), in.size());
    EXPECT_EQ(scaleOf(w4, 0), 0x1p-8f);
    EXPECT_EQ(w4[4], 0x78) << "1 * 2^8 = 256";
    EXPECT_EQ(w4[6], 0x01) << "2^-17 * 2^8: smallest subnormal";
    EXPECT_EQ(w4[7], 0x00) << "2^-18 * 2^8: tie to zero";
    EXPECT_EQ(w4[8], 0x7F) << "inf -> NaN (e4m3 has no inf)";
    EXPECT_EQ(w4[9], 0x7F);
    EXPECT_EQ(w4[10], 0x80) << "-0 keeps its sign";
    EXPECT_EQ(scaleOf(w4, 12), 2.0f);
    EXPECT_EQ(w4[16], 0x76) << "449 / 2 = 224.5 -> 224";
    EXPECT_EQ(scaleOf(w4, 24), 1.0f);
    EXPECT_EQ(w4[28], 0x7F);
    EXPECT_EQ(w4[29], 0xFF);
    EXPECT_EQ(scaleOf(w4, 36), 0x1p120f);
    EXPECT_EQ(scaleOf(w4, 48), 0x1p-126f) << "multiplier capped at 2^126";
    const std::vector<float> d4 = ref::hostFloats(e4, ref::decodeWith(*t, e4, w4.data(), in.size()));
    EXPECT_EQ(d4[0], 1.0f);
    EXPECT_EQ(d4[2], 0x1p-17f);
    EXPECT_TRUE(std::isnan(d4[4]));
    EXPECT_TRUE(std::signbit(d4[6]));
    EXPECT_EQ(d4[8], 448.0f);
    EXPECT_EQ(d4[24], FLT_MAX) << "2^128 after rounding is clamped, not inf";
    EXPECT_EQ(d4[25], -FLT_MAX);
    EXPECT_EQ(d4[32], 0.0f);

    const std::vector<uint8_t> w5 = ref::encodeWith(*t, e5, in.data(), in.size());
    EXPECT_EQ(scaleOf(w5, 0), 0x1p-15f);
    EXPECT_EQ(w5[8], 0x7C) << "inf stays inf in e5m2";
    EXPECT_EQ(w5[9], 0x7E);
    const std::vector<float> d5 = ref::hostFloats(e5, ref::decodeWith(*t, e5, w5.data(), in.size()));
    EXPECT_EQ(d5[4], INFINITY);
    EXPECT_EQ(d5[17], -INFINITY);
    EXPECT_EQ(d5[24], FLT_MAX);
  }
}

// Every code of fp16 and bf16 survives a round trip, also under loss scales
// (NaNs come back quiet with their payload); bf16 -> bf16 is the identity.
TEST(Codec, EverySixteenBitCodeRoundTrips) {
  for (const CodecTable* t : ref::supportedCodecTables()) {
    for (WireFormat f : {WireFormat::kFloat16, WireFormat::kBfloat16}) {
      const ref::RefFormat& r = ref::wireRef(f);
      const uint32_t quiet = f == WireFormat::kFloat16 ? 0x200 : 0x40;
      for (float scale : {1.0f, 0x1p12f, 0x1p-7f}) {
        if (f == WireFormat::kBfloat16 && scale != 1.0f) continue;
        for (DataType host : {DataType::kFloat32, DataType::kBfloat16}) {
          // A bf16 host cannot hold every fp16 value: only the fp32 host there.
          if (f == WireFormat::kFloat16 && host == DataType::kBfloat16) continue;
          const CodecParams p = params(f, host, scale);
          std::vector<float> values;
          for (uint32_t c = 0; c < 65536; ++c) values.push_back(r.decode(c) / scale);
          const std::vector<uint8_t> w =
              ref::encodeWith(*t, p, ref::hostBuffer(p, values).data(), values.size());
          const std::vector<uint8_t> back = ref::decodeWith(*t, p, w.data(), values.size());
          const std::vector<float> d = ref::hostFloats(p, back);
          for (uint32_t c = 0; c < 65536; ++c) {
            const uint32_t want = r.isNan(c) ? (c | quiet) : c;
            ASSERT_EQ(code16(w, c), want)
                << t->name << " " << wireFormatName(f) << std::hex << " code 0x" << c;
            if (!r.isNan(c)) {
              ASSERT_EQ(floatBits(d[c]), floatBits(values[c])) << std::hex << "code 0x" << c;
            }
          }
        }
      }
    }
  }
}

// Every fp8 code times 2^j, in a block whose max is the format's max times
// 2^j, encodes to itself with scale 2^j and decodes exactly.
TEST(Codec, EveryFp8CodeRoundTripsUnderEveryScale) {
  for (const CodecTable* t : ref::supportedCodecTables()) {
    for (WireFormat f : {WireFormat::kFloat8e4m3, WireFormat::kFloat8e5m2}) {
      const ref::RefFormat& r = ref::wireRef(f);
      for (int j : {-100, -20, -8, 0, 8, 40, 100}) {
        for (DataType host : {DataType::kFloat32, DataType::kBfloat16}) {
          const CodecParams p = params(f, host, 1.0f, 256);
          std::vector<float> values;
          for (uint32_t c = 0; c < 256; ++c) values.push_back(std::ldexp(r.decode(c), j));
          values[1] = std::ldexp(static_cast<float>(ref::fp8Max(f)), j);  // pins the scale
          const std::vector<uint8_t> w = ref::encodeWith(*t, p, ref::hostBuffer(p, values).data(), 256);
          ASSERT_EQ(scaleOf(w), std::ldexp(1.0f, j)) << t->name << " " << wireFormatName(f) << " j " << j;
          const std::vector<float> d = ref::hostFloats(p, ref::decodeWith(*t, p, w.data(), 256));
          for (uint32_t c = 2; c < 256; ++c) {
            if (r.isNan(c)) {
              ASSERT_TRUE(std::isnan(d[c]));
              ASSERT_EQ(std::signbit(d[c]), (c & 0x80) != 0);
              continue;
            }
            ASSERT_EQ(w[4 + c], c) << t->name << " " << wireFormatName(f) << " j " << j << std::hex
                                   << " code 0x" << c;
            ASSERT_EQ(floatBits(d[c]), floatBits(values[c])) << std::hex << "code 0x" << c;
          }
        }
      }
    }
  }
}

// Exact midpoints between neighbouring codes go to the even code, and the
// fp32 values on either side to the nearer one.
TEST(Codec, MidpointsRoundToEven) {
  for (const CodecTable* t : ref::supportedCodecTables()) {
    for (WireFormat f : {WireFormat::kFloat16, WireFormat::kFloat8e4m3, WireFormat::kFloat8e5m2}) {
      const ref::RefFormat& r = ref::wireRef(f);
      const CodecParams p = params(f, DataType::kFloat32, 1.0f, 8);
      for (uint32_t c = 0; c < r.maxFiniteCode(); ++c) {
        const float mid = static_cast<float>(r.midpoint(c));
        const uint32_t even = (c & 1) == 0 ? c : c + 1;
        // Each value in its own block beside the format's max, so the scale is 1.
        const float m = ref::isFp8(f) ? static_cast<float>(ref::fp8Max(f)) : 1.0f;
        const std::vector<float> in = {
            mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), -mid, m, 0.0f, 0.0f, 0.0f};
        const std::vector<uint8_t> w = ref::encodeWith(*t, p, in.data(), in.size());
        const bool fp8 = ref::isFp8(f);
        auto code = [&](size_t i) { return fp8 ? uint32_t{w[4 + i]} : code16(w, i); };
        ASSERT_EQ(code(0), even) << t->name << " " << wireFormatName(f) << std::hex << " tie after 0x" << c;
        ASSERT_EQ(code(1), c);
        ASSERT_EQ(code(2), c + 1);
        ASSERT_EQ(code(3), r.signBit() | even);
      }
    }
  }
}

// Random bit patterns (every special value class) and realistic data, every
// format, host type and implementation: the bytes match the reference.
TEST(Codec, MatchesReference) {
  std::mt19937 rng(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const CodecTable* t : ref::supportedCodecTables()) {
    for (WireFormat f :
         {WireFormat::kFloat16, WireFormat::kBfloat16, WireFormat::kFloat8e4m3, WireFormat::kFloat8e5m2}) {
      for (DataType host : {DataType::kFloat32, DataType::kBfloat16}) {
        const float scale = f == WireFormat::kFloat16 ? 0x1p8f : 1.0f;
        const CodecParams p = params(f, host, scale, 64);
        std::vector<uint8_t> src(4099 * ref::hostBytes(p));
        for (size_t i = 0; i < src.size(); i += 4) {
          const uint32_t bits = i < src.size() / 2 ? static_cast<uint32_t>(rng()) : floatBits(normal(rng));
          std::memcpy(src.data() + i, &bits, std::min<size_t>(4, src.size() - i));
        }
        const size_t n = src.size() / ref::hostBytes(p);
        const std::vector<uint8_t> w = ref::encodeWith(*t, p, src.data(), n);
        ASSERT_EQ(ref::firstDifference(w, ref::encode(p, src.data(), n)), "")
            << t->name << " " << wireFormatName(f) << " host " << dataTypeName(host);
        ASSERT_EQ(ref::firstDifference(ref::decodeWith(*t, p, w.data(), n), ref::decode(p, w.data(), n)), "")
            << t->name << " " << wireFormatName(f) << " host " << dataTypeName(host);
      }
    }
  }
}

// Encoding or decoding block-aligned chunks one after another gives the same
// bytes as doing the whole buffer at once (through the public entry points).
TEST(Codec, ChunksConcatenate) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  for (WireFormat f :
       {WireFormat::kFloat16, WireFormat::kBfloat16, WireFormat::kFloat8e4m3, WireFormat::kFloat8e5m2}) {
    const CodecParams p = params(f, DataType::kFloat32, 1.0f, 128);
    const size_t count = 128 * 37 + 45;
    std::vector<float> in(count);
    for (float& x : in) x = u(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
    std::vector<uint8_t> whole(encodedBytes(p, count));
    encode(p, in.data(), count, whole.data());
    std::vector<uint8_t> chunked(whole.size(), 0);
    std::vector<float> back(count, -1.0f);
    const size_t align = codecAlignment(p);
    for (size_t i = 0; i < count;) {
      const size_t n =
          std::min(count - i, align * (1 + rng() % 5) + (f == WireFormat::kFloat16 ? rng() % 3 : 0));
      encode(p, in.data() + i, n, chunked.data() + encodedBytes(p, i));
      decode(p, whole.data() + encodedBytes(p, i), n, back.data() + i);
      i += n;
    }
    EXPECT_EQ(chunked, whole) << wireFormatName(f);
    std::vector<float> all(count);
    decode(p, whole.data(), count, all.data());
    EXPECT_EQ(std::memcmp(all.data(), back.data(), count * 4), 0) << wireFormatName(f);
  }
}

TEST(Codec, ForceBaselineHookCoversCodecs) {
  const std::string best = codecImplementationName();
  forceBaselineForTesting(true);
  EXPECT_STREQ(codecImplementationName(), "baseline");
  forceBaselineForTesting(false);
  EXPECT_EQ(best, ref::supportedCodecTables().back()->name);
  EXPECT_STREQ(codecImplementationName(), implementationName()) << "codecs follow reduce.h's choice";
}

}  // namespace
}  // namespace braid::kernels
