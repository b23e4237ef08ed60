// reduce() and divideBy() through the public entry points (the implementation
// this CPU gets), every DataType x RedOp against reduce_reference.h, over counts
// that cover empty input, vector tails and several blocks, with dst distinct
// from, equal to a, or equal to b, and unaligned buffers.
#include "kernels/reduce.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/types.h"
#include "kernels/dispatch.h"
#include "reduce_reference.h"

namespace braid::kernels {
namespace {

constexpr size_t kCounts[] = {0, 1, 7, 31, 33, 1000, 4099};
constexpr uint8_t kGuard = 0xA5;
constexpr size_t kGuardBytes = 64;

enum class Alias { kNone, kDstIsA, kDstIsB, kAIsB };

const char* aliasName(Alias a) {
  switch (a) {
    case Alias::kNone: return "distinct";
    case Alias::kDstIsA: return "dst==a";
    case Alias::kDstIsB: return "dst==b";
    case Alias::kAIsB: return "a==b";
  }
  return "?";
}

class ReduceTest : public ::testing::TestWithParam<DataType> {};

// Runs reduce() on copies of a and b placed one element past an aligned start
// (so vector loads are unaligned), with guard bytes after dst, and checks every
// element against the reference.
void checkReduce(DataType type, RedOp op, size_t count, Alias alias, std::mt19937_64& rng) {
  const size_t size = dataTypeSize(type);
  std::vector<uint8_t> a = ref::randomBuffer(type, count, rng);
  std::vector<uint8_t> b = alias == Alias::kAIsB ? a : ref::randomBuffer(type, count, rng);
  std::vector<uint8_t> expected(count * size);
  for (size_t i = 0; i < count; ++i) {
    ref::storeRaw(expected.data(), i, size,
                  ref::combine(type, op, ref::loadRaw(a.data(), i, size), ref::loadRaw(b.data(), i, size)));
  }
  std::vector<uint8_t> storeA(size + count * size + kGuardBytes, kGuard);
  std::vector<uint8_t> storeB(size + count * size + kGuardBytes, kGuard);
  std::vector<uint8_t> storeD(size + count * size + kGuardBytes, kGuard);
  uint8_t* pa = storeA.data() + size;
  uint8_t* pb = storeB.data() + size;
  std::copy(a.begin(), a.end(), pa);
  std::copy(b.begin(), b.end(), pb);
  uint8_t* dst = storeD.data() + size;
  const uint8_t* srcB = pb;
  if (alias == Alias::kDstIsA) dst = pa;
  if (alias == Alias::kDstIsB) dst = pb;
  if (alias == Alias::kAIsB) srcB = pa;
  reduce(dst, pa, srcB, count, type, op);

  for (size_t i = 0; i < count; ++i) {
    const uint64_t want = ref::loadRaw(expected.data(), i, size);
    const uint64_t got = ref::loadRaw(dst, i, size);
    ASSERT_TRUE(ref::sameResult(type, op, want, got))
        << dataTypeName(type) << " " << redOpName(op) << " count " << count << " " << aliasName(alias)
        << " element " << i << std::hex << ": a 0x" << ref::loadRaw(a.data(), i, size) << " b 0x"
        << ref::loadRaw(b.data(), i, size) << " want 0x" << want << " got 0x" << got;
  }
  for (size_t i = 0; i < kGuardBytes; ++i) {
    ASSERT_EQ(dst[count * size + i], kGuard) << "wrote past the end, count " << count;
  }
}

TEST_P(ReduceTest, EveryOpMatchesReference) {
  const DataType type = GetParam();
  std::mt19937_64 rng(1000 + static_cast<int>(type));
  for (RedOp op : ref::allOps()) {
    for (size_t count : kCounts) {
      for (Alias alias : {Alias::kNone, Alias::kDstIsA, Alias::kDstIsB, Alias::kAIsB}) {
        checkReduce(type, op, count, alias, rng);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(ReduceTest, DivideByMatchesReference) {
  const DataType type = GetParam();
  const size_t size = dataTypeSize(type);
  std::mt19937_64 rng(2000 + static_cast<int>(type));
  const uint64_t divisors[] = {1,       2,       3,      7,         8, 255, 1000, (uint64_t{1} << 31) + 1,
                               uint64_t{1} << 32, uint64_t{1} << 40, uint64_t{1} << 63, ~uint64_t{0}};
  for (uint64_t divisor : divisors) {
    for (size_t count : kCounts) {
      std::vector<uint8_t> data = ref::randomBuffer(type, count, rng);
      if (!isFloatingPoint(type) && count > 2) {
        // Make sure the extremes are in there.
        ref::storeRaw(data.data(), 0, size, ~uint64_t{0});
        ref::storeRaw(data.data(), 1, size, uint64_t{1} << (size * 8 - 1));
      }
      std::vector<uint8_t> buf(size + data.size() + kGuardBytes, kGuard);
      std::copy(data.begin(), data.end(), buf.begin() + static_cast<std::ptrdiff_t>(size));
      divideBy(buf.data() + size, count, type, divisor);
      for (size_t i = 0; i < count; ++i) {
        const uint64_t in = ref::loadRaw(data.data(), i, size);
        const uint64_t want = ref::divide(type, in, divisor);
        const uint64_t got = ref::loadRaw(buf.data() + size, i, size);
        ASSERT_TRUE(ref::sameResult(type, RedOp::kMax, want, got))
            << dataTypeName(type) << " / " << divisor << " count " << count << " element " << i << std::hex
            << ": in 0x" << in << " want 0x" << want << " got 0x" << got;
      }
      for (size_t i = 0; i < kGuardBytes; ++i) ASSERT_EQ(buf[size + data.size() + i], kGuard);
    }
  }
}

TEST_P(ReduceTest, DivideByZeroLeavesDataUnchanged) {
  const DataType type = GetParam();
  std::mt19937_64 rng(3000);
  std::vector<uint8_t> data = ref::randomBuffer(type, 100, rng);
  const std::vector<uint8_t> before = data;
  divideBy(data.data(), 100, type, 0);
  EXPECT_EQ(data, before);
}

// PreMulSum's scaling: Prod of each element with the scalar, by the same
// reference, in place and out of place, on both implementations (the AVX2
// table where this CPU has it, and the baseline).
TEST_P(ReduceTest, ScaleByMatchesReference) {
  const DataType type = GetParam();
  const size_t size = dataTypeSize(type);
  std::mt19937_64 rng(4000 + static_cast<int>(type));
  std::vector<uint8_t> scalars = ref::randomBuffer(type, 6, rng);
  if (isFloatingPoint(type)) ref::storeRaw(scalars.data(), 0, size, 0);  // +0 among them
  for (bool baseline : {false, true}) {
    forceBaselineForTesting(baseline);
    for (size_t k = 0; k < scalars.size() / size; ++k) {
      const uint64_t scalar = ref::loadRaw(scalars.data(), k, size);
      for (size_t count : kCounts) {
        for (bool inPlace : {false, true}) {
          const std::vector<uint8_t> data = ref::randomBuffer(type, count, rng);
          std::vector<uint8_t> src(size, kGuard);  // one element before: unaligned
          src.insert(src.end(), data.begin(), data.end());
          src.insert(src.end(), kGuardBytes, kGuard);
          std::vector<uint8_t> dstStore(size + data.size() + kGuardBytes, kGuard);
          uint8_t* dst = inPlace ? src.data() + size : dstStore.data() + size;
          scaleBy(dst, src.data() + size, count, type, scalar);
          for (size_t i = 0; i < count; ++i) {
            const uint64_t in = ref::loadRaw(data.data(), i, size);
            const uint64_t want = ref::combine(type, RedOp::kProd, in, scalar);
            const uint64_t got = ref::loadRaw(dst, i, size);
            ASSERT_TRUE(ref::sameResult(type, RedOp::kProd, want, got))
                << dataTypeName(type) << (baseline ? " baseline" : " best") << " * 0x" << std::hex << scalar
                << " count " << std::dec << count << (inPlace ? " in place" : "") << " element " << i
                << std::hex << ": in 0x" << in << " want 0x" << want << " got 0x" << got;
          }
          for (size_t i = 0; i < kGuardBytes; ++i) ASSERT_EQ(dst[data.size() + i], kGuard);
        }
      }
    }
  }
  forceBaselineForTesting(false);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ReduceTest, ::testing::ValuesIn(ref::allTypes()),
                         [](const ::testing::TestParamInfo<DataType>& info) {
                           return std::string(dataTypeName(info.param));
                         });

TEST(Reduce, WrapsWithoutOverflowTraps) {
  int8_t a[2] = {127, -128};
  int8_t b[2] = {1, -1};
  reduce(a, a, b, 2, DataType::kInt8, RedOp::kSum);
  EXPECT_EQ(a[0], -128);
  EXPECT_EQ(a[1], 127);
  int64_t c[1] = {INT64_MIN};
  int64_t d[1] = {-1};
  reduce(c, c, d, 1, DataType::kInt64, RedOp::kProd);
  EXPECT_EQ(c[0], INT64_MIN);
}

TEST(Reduce, FloatMaxMinPropagateNanAndOrderZeros) {
  const float a[4] = {NAN, 1.0f, 0.0f, -0.0f};
  const float b[4] = {1.0f, NAN, -0.0f, 0.0f};
  float mx[4], mn[4];
  reduce(mx, a, b, 4, DataType::kFloat32, RedOp::kMax);
  reduce(mn, a, b, 4, DataType::kFloat32, RedOp::kMin);
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_FALSE(std::signbit(mx[2]));
  EXPECT_FALSE(std::signbit(mx[3]));
  EXPECT_TRUE(std::signbit(mn[2]));
  EXPECT_TRUE(std::signbit(mn[3]));
}

TEST(Reduce, NarrowSumOverflowsLikeTheFormat) {
  uint16_t h[1] = {0x7BFF};  // 65504 + 65504 -> inf
  reduce(h, h, h, 1, DataType::kFloat16, RedOp::kSum);
  EXPECT_EQ(h[0], 0x7C00);
  uint8_t e4[1] = {0x7E};  // 448 + 448 -> NaN (no inf in e4m3)
  reduce(e4, e4, e4, 1, DataType::kFloat8e4m3, RedOp::kSum);
  EXPECT_EQ(e4[0], 0x7F);
  uint8_t e5[1] = {0x7B};  // 57344 + 57344 -> inf
  reduce(e5, e5, e5, 1, DataType::kFloat8e5m2, RedOp::kSum);
  EXPECT_EQ(e5[0], 0x7C);
}

}  // namespace
}  // namespace braid::kernels
