// The AVX2 fp8 encoders against the scalar encode they must equal bit for bit:
// encodeNarrow (the fp8 reductions' store, built from the same steps as the
// codec's path for blocks holding inf or NaN) on all 2^32 fp32 bit patterns,
// and the fp8 block encoder, both paths, for every block exponent on every
// binade (every bf16 code). The codec tests (codec_dispatch_test.cc) compare
// whole encodes with the baseline on sampled data; these sweep the rounding.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>

#include "kernels/dispatch.h"
#include "narrow_avx2_check.h"

namespace braid::kernels::avx2check {

std::string name(Fp8 f) { return f == Fp8::kE4m3 ? "e4m3" : "e5m2"; }
void PrintTo(Fp8 f, std::ostream* os) { *os << name(f); }

namespace {

void expectNone(const Mismatches& r, const std::string& what) {
  EXPECT_GT(r.checked, 0u) << what;
  EXPECT_EQ(r.count, 0u) << what << ": " << r.count << " of " << r.checked << " differ; first: input bits 0x"
                         << std::hex << r.bits << " k " << std::dec << r.k << " got 0x" << std::hex << r.got
                         << " want 0x" << r.want;
}

class NarrowEncodeTest : public ::testing::TestWithParam<Fp8> {
 protected:
  void SetUp() override {
    if (!cpuSupportsAvx2()) GTEST_SKIP() << "no AVX2 + F16C on this CPU";
  }
};

// Split by sign so the two halves (about 2 s each) can run side by side.
TEST_P(NarrowEncodeTest, EncodeNarrowMatchesScalarOnEveryPositiveFp32) {
  expectNone(encodeNarrowRange(GetParam(), 0, uint64_t{1} << 31), name(GetParam()) + " positive");
}
TEST_P(NarrowEncodeTest, EncodeNarrowMatchesScalarOnEveryNegativeFp32) {
  expectNone(encodeNarrowRange(GetParam(), uint64_t{1} << 31, uint64_t{1} << 32),
             name(GetParam()) + " negative");
}

TEST_P(NarrowEncodeTest, BlockEncoderMatchesScalarForEveryExponent) {
  for (int k = minBlockExponent(GetParam()); k <= 126; ++k) {
    expectNone(fp8BlockF32(GetParam(), k), name(GetParam()) + " fp32 k " + std::to_string(k));
    expectNone(fp8BlockBf16(GetParam(), k), name(GetParam()) + " bf16 k " + std::to_string(k));
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, NarrowEncodeTest, ::testing::Values(Fp8::kE4m3, Fp8::kE5m2),
                         [](const ::testing::TestParamInfo<Fp8>& i) { return name(i.param); });

}  // namespace
}  // namespace braid::kernels::avx2check
