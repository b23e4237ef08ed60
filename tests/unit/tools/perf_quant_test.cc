// braid-perf -q's pure half: codec names, options, inputs and the error
// statistics that decide whether a quantized run passes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "options.h"
#include "quant_error.h"

namespace braid::perf {
namespace {

TEST(PerfQuant, CodecNamesRoundTrip) {
  for (const char* name : {"none", "fp16", "bf16", "e4m3", "e5m2"}) {
    auto c = parseCodec(name);
    ASSERT_TRUE(c.has_value()) << name;
    EXPECT_STREQ(codecName(*c), name);
  }
  EXPECT_FALSE(parseCodec("fp8").has_value());
}

TEST(PerfQuant, OptionsOnlyForExchangeCollectivesAndFloatTypes) {
  int code = 0;
  const char* ok[] = {"braid-perf", "alltoall", "-q", "e4m3", "--fp8-block", "128"};
  auto o = parseOptions(6, ok, &code);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->quant.codec, braidCodecFloat8e4m3);
  EXPECT_EQ(o->quant.blockSize, 128u);
  const char* reduce[] = {"braid-perf", "allreduce", "-q", "fp16"};
  EXPECT_FALSE(parseOptions(4, reduce, &code).has_value());
  EXPECT_EQ(code, 2);
  const char* ints[] = {"braid-perf", "allgather", "-q", "fp16", "-d", "int32"};
  EXPECT_FALSE(parseOptions(6, ints, &code).has_value());
  const char* unknown[] = {"braid-perf", "allgather", "-q", "fp12"};
  EXPECT_FALSE(parseOptions(4, unknown, &code).has_value());
}

TEST(PerfQuant, InputsAreExactInTheirHostTypeAndSpreadOverBinades) {
  int lo = 100, hi = -100;
  for (uint64_t i = 0; i < 4096; ++i) {
    const float f = quantInput(3, i, braidFloat32);
    ASSERT_TRUE(std::isfinite(f) && f != 0);
    int e;
    std::frexp(f, &e);
    lo = std::min(lo, e), hi = std::max(hi, e);
    const float b = quantInput(3, i, braidBfloat16);
    char buf[2];
    storeHost(buf, 0, braidBfloat16, b);
    EXPECT_EQ(loadHost(buf, 0, braidBfloat16), b);
  }
  EXPECT_EQ(hi - lo, 8);  // 2^-4 .. 2^4
  EXPECT_NE(quantInput(0, 5, braidFloat32), quantInput(1, 5, braidFloat32));
}

TEST(PerfQuant, ErrorWithinTheBoundPassesBeyondItFails) {
  QuantSettings q;
  q.codec = braidCodecFloat16;
  std::vector<float> sent = {1.0f, -3.0f, 0.5f}, got = sent;
  got[0] = 1.0f + 0x1p-12f;  // a quarter ulp of fp16 at 1: within
  QuantError err;
  accumulateError(q, braidFloat32, sent, got, &err);
  EXPECT_EQ(err.violations, 0);
  EXPECT_DOUBLE_EQ(err.maxRel, 0x1p-12);
  EXPECT_DOUBLE_EQ(err.count, 3);
  EXPECT_NEAR(err.rms(), 0x1p-12 / std::sqrt(3.0), 1e-12);
  got[1] = -3.0f * (1 + 0x1p-9f);  // four half-ulps off: beyond
  accumulateError(q, braidFloat32, sent, got, &err);
  EXPECT_EQ(err.violations, 1);
  got = sent;
  got[2] = NAN;  // a NaN where a number was sent fails
  accumulateError(q, braidFloat32, sent, got, &err);
  EXPECT_EQ(err.violations, 2);
}

TEST(PerfQuant, Fp8BoundScalesWithTheBlockMaximum) {
  QuantSettings q;
  q.codec = braidCodecFloat8e4m3;
  // A tiny value beside a large one may lose everything below 2^-17 amax.
  std::vector<float> sent = {0x1p-20f, 256.0f}, got = {0.0f, 256.0f};
  QuantError err;
  accumulateError(q, braidFloat32, sent, got, &err);
  EXPECT_EQ(err.violations, 0);
  EXPECT_DOUBLE_EQ(err.maxRel, 1.0);  // reported, even though within the promise
  sent = {0x1p-10f, 1.0f};  // amax 1: 2^-10 is far above 2^-17 amax and must survive
  got = {0.0f, 1.0f};
  QuantError err2;
  accumulateError(q, braidFloat32, sent, got, &err2);
  EXPECT_EQ(err2.violations, 1);
}

TEST(PerfQuant, PromisedRelativeErrors) {
  EXPECT_DOUBLE_EQ(promisedRelativeError(braidCodecBfloat16, braidFloat32), 0x1p-8);
  EXPECT_DOUBLE_EQ(promisedRelativeError(braidCodecFloat8e4m3, braidFloat32), 0x1p-4);
  EXPECT_DOUBLE_EQ(promisedRelativeError(braidCodecFloat8e5m2, braidFloat32), 0x1p-3);
  EXPECT_GT(promisedRelativeError(braidCodecFloat16, braidBfloat16), promisedRelativeError(braidCodecFloat16, braidFloat32));
  EXPECT_EQ(promisedRelativeError(braidCodecNone, braidFloat32), 0.0);
}

}  // namespace
}  // namespace braid::perf
