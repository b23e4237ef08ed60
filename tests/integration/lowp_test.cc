// The suite's own fp16/bf16/fp8 encoder against values from the formats'
// specifications, so that the matrix's reference is itself checked.
#include "lowp.h"

#include <gtest/gtest.h>

#include <cmath>

namespace braid::itest {
namespace {

TEST(LowPrecisionReference, KnownEncodings) {
  EXPECT_EQ(encodeFloat(kHalf, 1.0), 0x3C00u);
  EXPECT_EQ(encodeFloat(kHalf, -2.0), 0xC000u);
  EXPECT_EQ(encodeFloat(kHalf, 65504.0), 0x7BFFu);
  EXPECT_EQ(encodeFloat(kHalf, std::ldexp(1.0, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(encodeFloat(kHalf, 2049.0), 0x6800u);                // tie, to even (2048)
  EXPECT_EQ(encodeFloat(kHalf, 2051.0), 0x6802u);                // tie, to even (2052)
  EXPECT_EQ(encodeFloat(kBf16, 1.0), 0x3F80u);
  EXPECT_EQ(encodeFloat(kBf16, 257.0), 0x4380u);  // tie to even: 256
  EXPECT_EQ(encodeFloat(kBf16, 259.0), 0x4382u);  // tie to even: 260
  EXPECT_EQ(encodeFloat(kE4m3, 1.0), 0x38u);
  EXPECT_EQ(encodeFloat(kE4m3, 448.0), 0x7Eu);
  EXPECT_EQ(encodeFloat(kE4m3, -448.0), 0xFEu);
  EXPECT_EQ(encodeFloat(kE4m3, std::ldexp(1.0, -9)), 0x01u);
  EXPECT_EQ(encodeFloat(kE4m3, 17.0), 0x58u);  // tie between 16 and 18: 16
  EXPECT_EQ(encodeFloat(kE5m2, 1.0), 0x3Cu);
  EXPECT_EQ(encodeFloat(kE5m2, 57344.0), 0x7Bu);
  EXPECT_EQ(encodeFloat(kE5m2, std::ldexp(1.0, -16)), 0x01u);
  EXPECT_EQ(encodeFloat(kE5m2, 9.0), 0x48u);        // tie between 8 and 10: 8
  EXPECT_EQ(encodeFloat(kE5m2, 11.0), 0x4Au);       // tie between 10 and 12: 12
  EXPECT_EQ(encodeFloat(kE5m2, 5.0 / 3.0), 0x3Fu);  // 1.666..: nearest is 1.75
  EXPECT_EQ(encodeFloat(kE5m2, -0.0), 0x80u);
}

TEST(LowPrecisionReference, RoundTripsEveryFiniteValue) {
  for (const FloatFormat* f : {&kHalf, &kBf16, &kE4m3, &kE5m2}) {
    const uint32_t n = 1u << (1 + f->expBits + f->manBits);
    for (uint32_t bits = 0; bits < n; ++bits) {
      double v = decodeFloat(*f, bits);
      if (!std::isfinite(v)) continue;
      ASSERT_EQ(encodeFloat(*f, v), bits) << "format e" << f->expBits << "m" << f->manBits << " value " << v;
    }
  }
}

TEST(LowPrecisionReference, SmallIntegers) {
  for (int i = -8; i <= 8; ++i) EXPECT_EQ(decodeFloat(kE5m2, encodeFloat(kE5m2, i)), i);
  for (int i = -16; i <= 16; ++i) EXPECT_EQ(decodeFloat(kE4m3, encodeFloat(kE4m3, i)), i);
  for (int i = -256; i <= 256; ++i) EXPECT_EQ(decodeFloat(kBf16, encodeFloat(kBf16, i)), i);
  for (int i = -2048; i <= 2048; ++i) EXPECT_EQ(decodeFloat(kHalf, encodeFloat(kHalf, i)), i);
}

}  // namespace
}  // namespace braid::itest
