#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "codec.h"
#include "types.h"
#include "values.h"

namespace braid::perf {
namespace {

const braidDataType_t kSmall[] = {braidFloat16, braidBfloat16, braidFloat8e4m3, braidFloat8e5m2};

TEST(PerfCodec, DecodesKnownBitPatterns) {
  EXPECT_EQ(decodeSmallFloat(braidFloat16, 0x3c00), 1.0);
  EXPECT_EQ(decodeSmallFloat(braidFloat16, 0xc000), -2.0);
  EXPECT_EQ(decodeSmallFloat(braidFloat16, 0x7bff), 65504.0);
  EXPECT_EQ(decodeSmallFloat(braidFloat16, 0x0001), std::ldexp(1.0, -24));  // subnormal
  EXPECT_TRUE(std::isinf(decodeSmallFloat(braidFloat16, 0x7c00)));
  EXPECT_TRUE(std::isnan(decodeSmallFloat(braidFloat16, 0x7e00)));
  EXPECT_EQ(decodeSmallFloat(braidBfloat16, 0x3f80), 1.0);
  EXPECT_EQ(decodeSmallFloat(braidBfloat16, 0x4380), 256.0);
  EXPECT_EQ(decodeSmallFloat(braidFloat8e4m3, 0x38), 1.0);
  EXPECT_EQ(decodeSmallFloat(braidFloat8e4m3, 0x7e), 448.0);         // max finite
  EXPECT_TRUE(std::isnan(decodeSmallFloat(braidFloat8e4m3, 0x7f)));  // the only NaN
  EXPECT_EQ(decodeSmallFloat(braidFloat8e4m3, 0x78), 256.0);         // no inf in e4m3fn
  EXPECT_EQ(decodeSmallFloat(braidFloat8e5m2, 0x3c), 1.0);
  EXPECT_EQ(decodeSmallFloat(braidFloat8e5m2, 0x7b), 57344.0);
  EXPECT_TRUE(std::isinf(decodeSmallFloat(braidFloat8e5m2, 0x7c)));
}

// The encoder is the exact inverse of the decoder on every integer pattern:
// checked against the whole code space of each small format.
TEST(PerfCodec, EncoderInvertsDecoderOnEveryIntegerPattern) {
  for (braidDataType_t t : kSmall) {
    const uint32_t patterns = typeInfo(t).size == 1 ? 256 : 65536;
    int integers = 0;
    for (uint32_t bits = 0; bits < patterns; ++bits) {
      const double d = decodeSmallFloat(t, static_cast<uint16_t>(bits));
      if (!std::isfinite(d) || d != std::trunc(d) || d == 0 || std::fabs(d) > 1e18) continue;
      std::optional<uint16_t> enc = encodeSmallFloat(t, static_cast<int64_t>(d));
      ASSERT_TRUE(enc.has_value()) << typeInfo(t).name << " " << d;
      EXPECT_EQ(*enc, bits) << typeInfo(t).name << " " << d;
      ++integers;
    }
    EXPECT_GT(integers, 20) << typeInfo(t).name;
  }
}

TEST(PerfCodec, ExactLimitsMatchTheFormats) {
  for (braidDataType_t t : kSmall) {
    const int64_t limit = typeInfo(t).exactLimit;
    for (int64_t v = -limit; v <= limit; ++v) {
      ASSERT_TRUE(isRepresentable(t, v)) << typeInfo(t).name << " " << v;
    }
    EXPECT_FALSE(isRepresentable(t, limit + 1)) << typeInfo(t).name;
    EXPECT_FALSE(isRepresentable(t, -limit - 1)) << typeInfo(t).name;
    EXPECT_TRUE(isRepresentable(t, int64_t{1} << typeInfo(t).maxPow2)) << typeInfo(t).name;
  }
  EXPECT_TRUE(isRepresentable(braidFloat8e4m3, 18));
  EXPECT_FALSE(isRepresentable(braidFloat8e4m3, 512));  // beyond 448
  EXPECT_TRUE(isRepresentable(braidFloat32, 1 << 24));
  EXPECT_FALSE(isRepresentable(braidFloat32, (1 << 24) + 1));
  EXPECT_FALSE(isRepresentable(braidInt8, 128));
  EXPECT_TRUE(isRepresentable(braidInt8, -128));
  EXPECT_FALSE(isRepresentable(braidUint32, -1));
}

TEST(PerfCodec, StoreAndLoadRoundTripInEveryType) {
  for (braidDataType_t t : allTypes()) {
    std::vector<char> buf(8 * typeInfo(t).size);
    const int64_t lim = genLimit(t);
    const int64_t values[] = {0, 1, lim, typeInfo(t).isSigned ? -lim : lim - 1, 2, 3, 4, 5};
    for (size_t i = 0; i < 8; ++i) storeInt(buf.data(), i, t, values[i]);
    for (size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(loadInt(buf.data(), i, t), values[i]) << typeInfo(t).name << " " << i;
    }
  }
}

TEST(PerfCodec, PoisonIsNeverAValueBraidPerfExpects) {
  for (braidDataType_t t : allTypes()) {
    std::vector<char> buf(4 * typeInfo(t).size);
    fillPoison(buf.data(), 4, t);
    for (size_t i = 0; i < 4; ++i) {
      std::optional<int64_t> v = loadInt(buf.data(), i, t);
      if (v) {
        EXPECT_TRUE(*v < -genLimit(t) || *v > genLimit(t)) << typeInfo(t).name << " " << *v;
      }
    }
  }
}

TEST(PerfCodec, LoadRejectsNonIntegers) {
  const float f[] = {0.5f, NAN, INFINITY};
  for (size_t i = 0; i < 3; ++i) EXPECT_FALSE(loadInt(f, i, braidFloat32).has_value());
  const uint64_t huge = ~uint64_t{0};
  EXPECT_FALSE(loadInt(&huge, 0, braidUint64).has_value());
}

}  // namespace
}  // namespace braid::perf
