// Scalar conversions (kernels/convert.h) against literal bit patterns and the
// independent reference in reference_formats.h: every code of every format,
// every midpoint between neighbours (ties to even), and random fp32 inputs.
#include "kernels/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>

#include "reference_formats.h"

namespace braid::kernels {
namespace {

using ref::bitsFloat;
using ref::floatBits;
using ref::RefFormat;

struct Codec {
  const char* name;
  const RefFormat& ref;
  std::function<float(uint32_t)> decode;
  std::function<uint32_t(float)> encode;
  uint32_t quietBit;  // set on NaNs by a round trip (0: single NaN, e4m3)
};

std::vector<Codec> allCodecs() {
  return {
      {"fp16", ref::refHalf(), [](uint32_t c) { return halfToFloat(static_cast<uint16_t>(c)); },
       [](float f) { return uint32_t{floatToHalf(f)}; }, 0x200},
      {"bf16", ref::refBf16(), [](uint32_t c) { return bf16ToFloat(static_cast<uint16_t>(c)); },
       [](float f) { return uint32_t{floatToBf16(f)}; }, 0x40},
      {"e4m3", ref::refE4m3(), [](uint32_t c) { return e4m3ToFloat(static_cast<uint8_t>(c)); },
       [](float f) { return uint32_t{floatToE4m3(f)}; }, 0},
      {"e5m2", ref::refE5m2(), [](uint32_t c) { return e5m2ToFloat(static_cast<uint8_t>(c)); },
       [](float f) { return uint32_t{floatToE5m2(f)}; }, 0x2},
  };
}

TEST(Convert, HalfSpecialValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);             // max finite
  EXPECT_EQ(floatToHalf(65519.99f), 0x7BFF);            // below the overflow midpoint
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);             // midpoint: ties to even = inf
  EXPECT_EQ(floatToHalf(1e10f), 0x7C00);
  EXPECT_EQ(floatToHalf(-1e10f), 0xFC00);
  EXPECT_EQ(floatToHalf(INFINITY), 0x7C00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xFC00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 1 -> 0
  EXPECT_EQ(floatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp -> 2 (even)
  EXPECT_EQ(floatToHalf(std::ldexp(5.0f, -25)), 0x0002);  // 2.5 ulp -> 2 (even)
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);       // tie -> even
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3C02);       // tie -> even
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -140)), 0x0000);             // far below: +0
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -140)), 0x8000);            // ... -0
  EXPECT_EQ(floatToHalf(bitsFloat(0x7FC00000)), 0x7E00);              // quiet NaN
  EXPECT_EQ(floatToHalf(bitsFloat(0xFF800001)), 0xFE00);              // sNaN -> quiet, sign kept
  EXPECT_EQ(floatToHalf(bitsFloat(0x7F802000)), 0x7E01);              // top payload bits kept
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(floatBits(halfToFloat(0x8000)), 0x80000000u);
  EXPECT_EQ(floatBits(halfToFloat(0x7C01)), 0x7FC02000u);  // sNaN comes back quiet
  EXPECT_EQ(halfToFloat(0xFC00), -INFINITY);
}

TEST(Convert, Bf16SpecialValues) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBf16(bitsFloat(0x3F808000)), 0x3F80);  // tie -> even
  EXPECT_EQ(floatToBf16(bitsFloat(0x3F818000)), 0x3F82);  // tie -> even
  EXPECT_EQ(floatToBf16(bitsFloat(0x3F808001)), 0x3F81);
  EXPECT_EQ(floatToBf16(bitsFloat(0x7F7F7FFF)), 0x7F7F);  // max finite stays
  EXPECT_EQ(floatToBf16(bitsFloat(0x7F7F8000)), 0x7F80);  // overflow midpoint -> inf
  EXPECT_EQ(floatToBf16(3.4028235e38f), 0x7F80);          // FLT_MAX -> inf
  EXPECT_EQ(floatToBf16(-INFINITY), 0xFF80);
  EXPECT_EQ(floatToBf16(bitsFloat(0x00010000)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToBf16(bitsFloat(0x00008000)), 0x0000);  // tie -> 0
  EXPECT_EQ(floatToBf16(bitsFloat(0x00018000)), 0x0002);  // tie -> even
  EXPECT_EQ(floatToBf16(bitsFloat(0x007FFFFF)), 0x0080);  // largest fp32 subnormal rounds to min normal
  EXPECT_EQ(floatToBf16(bitsFloat(0x7F800001)), 0x7FC0);  // sNaN -> quiet
  EXPECT_EQ(floatToBf16(bitsFloat(0xFFC00001)), 0xFFC0);
  EXPECT_EQ(floatBits(bf16ToFloat(0x0001)), 0x00010000u);
  EXPECT_EQ(floatBits(bf16ToFloat(0xFF80)), 0xFF800000u);
}

TEST(Convert, E4m3SpecialValues) {
  EXPECT_EQ(floatToE4m3(0.0f), 0x00);
  EXPECT_EQ(floatToE4m3(-0.0f), 0x80);
  EXPECT_EQ(floatToE4m3(1.0f), 0x38);
  EXPECT_EQ(floatToE4m3(448.0f), 0x7E);   // max finite
  EXPECT_EQ(floatToE4m3(464.0f), 0x7E);   // overflow midpoint: 448 is even
  EXPECT_EQ(floatToE4m3(465.0f), 0x7F);   // beyond: NaN, no inf in e4m3
  EXPECT_EQ(floatToE4m3(-500.0f), 0xFF);
  EXPECT_EQ(floatToE4m3(INFINITY), 0x7F);
  EXPECT_EQ(floatToE4m3(-INFINITY), 0xFF);
  EXPECT_EQ(floatToE4m3(NAN), 0x7F);
  EXPECT_EQ(floatToE4m3(256.0f), 0x78);   // exponent field 1111 is a normal number
  EXPECT_EQ(floatToE4m3(std::ldexp(1.0f, -9)), 0x01);  // smallest subnormal
  EXPECT_EQ(floatToE4m3(std::ldexp(7.0f, -9)), 0x07);  // largest subnormal
  EXPECT_EQ(floatToE4m3(std::ldexp(1.0f, -10)), 0x00);  // tie -> 0
  EXPECT_EQ(floatToE4m3(std::ldexp(3.0f, -10)), 0x02);  // tie -> even
  EXPECT_EQ(floatToE4m3(1.0625f), 0x38);  // 1 + half ulp: tie -> even
  EXPECT_EQ(floatToE4m3(1.1875f), 0x3A);  // 1 + 3 half ulps -> even
  EXPECT_EQ(e4m3ToFloat(0x7E), 448.0f);
  EXPECT_EQ(e4m3ToFloat(0x01), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(e4m3ToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3ToFloat(0xFF)));
  EXPECT_TRUE(std::signbit(e4m3ToFloat(0xFF)));
}

TEST(Convert, E5m2SpecialValues) {
  EXPECT_EQ(floatToE5m2(1.0f), 0x3C);
  EXPECT_EQ(floatToE5m2(57344.0f), 0x7B);  // max finite
  EXPECT_EQ(floatToE5m2(61439.0f), 0x7B);
  EXPECT_EQ(floatToE5m2(61440.0f), 0x7C);  // overflow midpoint -> inf (even)
  EXPECT_EQ(floatToE5m2(-INFINITY), 0xFC);
  EXPECT_EQ(floatToE5m2(std::ldexp(1.0f, -16)), 0x01);  // smallest subnormal
  EXPECT_EQ(floatToE5m2(std::ldexp(1.0f, -17)), 0x00);  // tie -> 0
  EXPECT_EQ(floatToE5m2(std::ldexp(3.0f, -17)), 0x02);  // tie -> even
  EXPECT_EQ(floatToE5m2(1.125f), 0x3C);                 // tie -> even
  EXPECT_EQ(floatToE5m2(NAN), 0x7E);
  EXPECT_EQ(floatToE5m2(bitsFloat(0xFF800001)), 0xFE);
  EXPECT_EQ(e5m2ToFloat(0x7B), 57344.0f);
  EXPECT_EQ(e5m2ToFloat(0x7C), INFINITY);
  EXPECT_TRUE(std::isnan(e5m2ToFloat(0x7D)));
}

// Every code decodes to the reference value, and converting back is the identity
// (NaNs: same sign and payload, quiet bit set).
TEST(Convert, EveryCodeRoundTrips) {
  for (const Codec& c : allCodecs()) {
    SCOPED_TRACE(c.name);
    for (uint32_t code = 0; code < c.ref.codes(); ++code) {
      const float f = c.decode(code);
      ASSERT_EQ(floatBits(f), floatBits(c.ref.decode(code))) << std::hex << "code 0x" << code;
      const uint32_t back = c.encode(f);
      if (c.ref.isNan(code)) {
        ASSERT_EQ(back, code | c.quietBit) << std::hex << "code 0x" << code;
      } else {
        ASSERT_EQ(back, code) << std::hex << "code 0x" << code;
      }
    }
  }
}

// Exact midpoints between neighbours (ties) and the fp32 values on either side.
TEST(Convert, EveryMidpointRoundsToEven) {
  for (const Codec& c : allCodecs()) {
    SCOPED_TRACE(c.name);
    for (uint32_t code = 0; code < c.ref.maxFiniteCode(); ++code) {
      const float mid = static_cast<float>(c.ref.midpoint(code));
      ASSERT_EQ(static_cast<double>(mid), c.ref.midpoint(code)) << "midpoint not exact in fp32";
      const uint32_t even = (code & 1) == 0 ? code : code + 1;
      for (float sign : {1.0f, -1.0f}) {
        const uint32_t s = sign < 0 ? c.ref.signBit() : 0;
        ASSERT_EQ(c.encode(sign * mid), s | even) << std::hex << "tie after 0x" << code;
        ASSERT_EQ(c.encode(sign * std::nextafter(mid, 0.0f)), s | code);
        ASSERT_EQ(c.encode(sign * std::nextafter(mid, INFINITY)), s | (code + 1));
      }
    }
  }
}

// Random fp32 inputs: uniformly random bit patterns, and values spread over the
// narrow format's range (random exponent around it, random mantissa).
TEST(Convert, RandomFloatsMatchReference) {
  std::mt19937 rng(12345);
  for (const Codec& c : allCodecs()) {
    SCOPED_TRACE(c.name);
    const int maxExp = static_cast<int>(std::ilogb(c.ref.value(c.ref.maxFiniteCode())));
    const int minExp = static_cast<int>(std::ilogb(c.ref.value(1)));
    std::uniform_int_distribution<int> expDist(minExp - 3, maxExp + 2);
    for (int i = 0; i < 200000; ++i) {
      float f;
      if (i % 2 == 0) {
        f = bitsFloat(static_cast<uint32_t>(rng()));
      } else {
        const uint32_t mant = static_cast<uint32_t>(rng()) & 0x7FFFFF;
        f = std::ldexp(1.0f + static_cast<float>(mant) * 0x1p-23f, expDist(rng));
        if (rng() & 1) f = -f;
      }
      ASSERT_EQ(c.encode(f), c.ref.encode(f)) << std::hex << "input 0x" << floatBits(f);
    }
  }
}

}  // namespace
}  // namespace braid::kernels
