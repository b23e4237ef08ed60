// Every implementation compiled in and supported by this CPU (baseline, AVX2)
// called through its own table: bit-identical to the baseline on
// random data, and exhaustively right on the narrow formats (every fp8 pair,
// every fp16 / bf16 code). Plus the force-baseline test hook.
#include "kernels/dispatch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "reduce_reference.h"

namespace braid::kernels {
namespace {

std::vector<const KernelTable*> supportedTables() {
  std::vector<const KernelTable*> v{&baselineKernels()};
  if (cpuSupportsAvx2() && avx2Kernels() != nullptr) v.push_back(avx2Kernels());
  return v;
}

std::vector<const KernelTable*> vectorTables() {
  std::vector<const KernelTable*> v = supportedTables();
  v.erase(v.begin());
  return v;
}

TEST(Dispatch, ForceBaselineHook) {
  const std::string best = implementationName();
  forceBaselineForTesting(true);
  EXPECT_STREQ(implementationName(), "baseline");
  EXPECT_EQ(&activeKernels(), &baselineKernels());
  forceBaselineForTesting(false);
  EXPECT_EQ(implementationName(), best);
  EXPECT_EQ(best, supportedTables().back()->name) << "the best supported table is chosen";
}

TEST(Dispatch, VectorTablesMatchBaselineBitForBit) {
  const auto tables = vectorTables();
  if (tables.empty()) GTEST_SKIP() << "no vector implementation supported on this CPU";
  std::mt19937_64 rng(77);
  const size_t counts[] = {1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 4099};
  for (const KernelTable* table : tables) {
    for (DataType type : ref::allTypes()) {
      const size_t size = dataTypeSize(type);
      const int t = static_cast<int>(type);
      for (RedOp op : ref::allOps()) {
        for (size_t count : counts) {
          const std::vector<uint8_t> a = ref::randomBuffer(type, count, rng);
          const std::vector<uint8_t> b = ref::randomBuffer(type, count, rng);
          std::vector<uint8_t> want(a.size()), got(a.size());
          baselineKernels().reduce[t][static_cast<int>(op)](want.data(), a.data(), b.data(), count);
          table->reduce[t][static_cast<int>(op)](got.data(), a.data(), b.data(), count);
          for (size_t i = 0; i < count; ++i) {
            const uint64_t w = ref::loadRaw(want.data(), i, size), g = ref::loadRaw(got.data(), i, size);
            ASSERT_TRUE(ref::sameResult(type, op, w, g))
                << table->name << " " << dataTypeName(type) << " " << redOpName(op) << " count " << count
                << " element " << i << std::hex << " baseline 0x" << w << " got 0x" << g;
          }
        }
      }
      for (uint64_t divisor : {uint64_t{3}, uint64_t{8}, uint64_t{1} << 33}) {
        std::vector<uint8_t> want = ref::randomBuffer(type, 4099, rng);
        std::vector<uint8_t> got = want;
        baselineKernels().divide[t](want.data(), 4099, divisor);
        table->divide[t](got.data(), 4099, divisor);
        ASSERT_EQ(want, got) << table->name << " " << dataTypeName(type) << " / " << divisor;
      }
    }
  }
}

// Every (a, b) pair of fp8 codes under every op, on every implementation.
TEST(Dispatch, Fp8AllPairsMatchReference) {
  std::vector<uint8_t> a(65536), b(65536), d(65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    a[i] = static_cast<uint8_t>(i >> 8);
    b[i] = static_cast<uint8_t>(i);
  }
  for (const KernelTable* table : supportedTables()) {
    for (DataType type : {DataType::kFloat8e4m3, DataType::kFloat8e5m2}) {
      for (RedOp op : ref::allOps()) {
        table->reduce[static_cast<int>(type)][static_cast<int>(op)](d.data(), a.data(), b.data(), 65536);
        for (uint32_t i = 0; i < 65536; ++i) {
          const uint64_t want = ref::combine(type, op, a[i], b[i]);
          ASSERT_TRUE(ref::sameResult(type, op, want, d[i]))
              << table->name << " " << dataTypeName(type) << " " << redOpName(op) << std::hex << " a 0x"
              << int{a[i]} << " b 0x" << int{b[i]} << " want 0x" << want << " got 0x" << int{d[i]};
        }
      }
    }
  }
}

// Every fp16 / bf16 code: Max(x, x) is a round trip through the vector
// conversions (NaN stays, quieted); Sum with random partners checks rounding.
TEST(Dispatch, SixteenBitAllCodesMatchReference) {
  std::mt19937_64 rng(99);
  std::vector<uint16_t> a(65536), b(65536), d(65536);
  for (uint32_t i = 0; i < 65536; ++i) a[i] = static_cast<uint16_t>(i);
  for (const KernelTable* table : supportedTables()) {
    for (DataType type : {DataType::kFloat16, DataType::kBfloat16}) {
      const int t = static_cast<int>(type);
      for (RedOp op : {RedOp::kMax, RedOp::kSum, RedOp::kProd, RedOp::kMin}) {
        for (int round = 0; round < 2; ++round) {
          if (round == 0) b = a;
          else
            for (auto& x : b) x = static_cast<uint16_t>(rng());
          table->reduce[t][static_cast<int>(op)](d.data(), a.data(), b.data(), 65536);
          for (uint32_t i = 0; i < 65536; ++i) {
            const uint64_t want = ref::combine(type, op, a[i], b[i]);
            ASSERT_TRUE(ref::sameResult(type, op, want, d[i]))
                << table->name << " " << dataTypeName(type) << " " << redOpName(op) << std::hex << " a 0x"
                << a[i] << " b 0x" << b[i] << " want 0x" << want << " got 0x" << d[i];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace braid::kernels
