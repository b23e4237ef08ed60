// The CUDA module: on a host without a GPU (CI) it must stay out of the way
// with a clear reason; on a GPU host its kernels must give the CPU kernels'
// bits for every dtype x op (the GPU half skips here, saying why).
#include <gtest/gtest.h>

#include <braid/braid.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/codec.h"
#include "kernels/convert.h"
#include "kernels/device_loader.h"
#include "kernels/reduce.h"

namespace braid::kernels {
namespace {

// Point the loader at the module of this build before its first use.
const bool kModulePathSet = [] {
#ifdef BRAID_CUDA_MODULE_PATH
  setenv("BRAID_CUDA_MODULE", BRAID_CUDA_MODULE_PATH, 1);
#endif
  return true;
}();

TEST(DeviceModule, AbsentDeviceIsExplainedAndHarmless) {
  ASSERT_TRUE(kModulePathSet);
  if (deviceModule() != nullptr) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_FALSE(deviceUnavailableReason().empty());
  int x = 0;
  EXPECT_EQ(deviceOfPointer(&x), -1);
  braidStream_t s = nullptr;
  EXPECT_EQ(braidStreamWrapCuda(nullptr, &s), braidNotSupported);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find(deviceUnavailableReason()), std::string::npos)
      << braidGetLastError(nullptr);
  EXPECT_EQ(s, nullptr);
}

TEST(DeviceModule, StreamWrapNeedsAnOutPointer) {
  EXPECT_EQ(braidStreamWrapCuda(nullptr, nullptr), braidInvalidArgument);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find("braidStreamWrapCuda"), std::string::npos);
}

// On a GPU host, the legacy default stream (NULL) can be bound too.
TEST(DeviceModule, StreamWrapBindsTheDefaultStream) {
  if (deviceModule() == nullptr) GTEST_SKIP() << "no CUDA device: " << deviceUnavailableReason();
  braidStream_t s = nullptr;
  ASSERT_EQ(braidStreamWrapCuda(nullptr, &s), braidSuccess) << braidGetLastError(nullptr);
  EXPECT_EQ(braidStreamSynchronize(s), braidSuccess);
  EXPECT_EQ(braidStreamDestroy(s), braidSuccess);
}

// Device buffer helpers for the GPU tests.
struct DeviceBuffer {
  const DeviceModule* m;
  void* p = nullptr;
  DeviceBuffer(const DeviceModule* mod, size_t bytes) : m(mod) { EXPECT_EQ(m->alloc(&p, bytes ? bytes : 1), 0); }
  ~DeviceBuffer() { m->release(p); }
};

size_t sizeOf(int dtype) { return dataTypeSize(static_cast<DataType>(dtype)); }

// The element as a double, for NaN tests (integers: never NaN).
double valueOf(const uint8_t* p, int dtype) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kFloat16: { uint16_t h; std::memcpy(&h, p, 2); return halfToFloat(h); }
    case DataType::kBfloat16: { uint16_t h; std::memcpy(&h, p, 2); return bf16ToFloat(h); }
    case DataType::kFloat8e4m3: return e4m3ToFloat(*p);
    case DataType::kFloat8e5m2: return e5m2ToFloat(*p);
    case DataType::kFloat32: { float f; std::memcpy(&f, p, 4); return f; }
    case DataType::kFloat64: { double d; std::memcpy(&d, p, 8); return d; }
    default: return 0;
  }
}

// Equal bytes; or, for an arithmetic op (Sum / Prod / Avg), both results
// NaN. IEEE 754 leaves a NaN's sign and payload to the hardware, and reduce.h
// follows it: the GPU's add, multiply and divide return the canonical NaN
// (0x7fffffff) where x86 keeps a NaN operand's sign and payload, and makes
// -inf + inf the negative "default NaN". (Seen on an H200: e5m2 -inf + inf
// gave 0x7f there and 0xfe here.)
bool sameElement(const uint8_t* got, const uint8_t* want, size_t es, int dtype, int op) {
  if (std::memcmp(got, want, es) == 0) return true;
  const bool arithmetic = op == 0 || op == 1 || op == 4;
  return arithmetic && std::isnan(valueOf(got, dtype)) && std::isnan(valueOf(want, dtype));
}

// Elements of `type` that differ other than as two NaNs (the payload of a
// NaN is the hardware's, as above); the first such index in *first.
size_t differentValues(const uint8_t* got, const uint8_t* want, size_t n, DataType type, size_t* first) {
  const size_t es = dataTypeSize(type);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t *g = got + i * es, *w = want + i * es;
    if (std::memcmp(g, w, es) == 0) continue;
    if (std::isnan(valueOf(g, static_cast<int>(type))) && std::isnan(valueOf(w, static_cast<int>(type))))
      continue;
    if (bad++ == 0) *first = i;
  }
  return bad;
}

TEST(DeviceModule, ReduceGivesTheCpuBitsForEveryTypeAndOp) {
  const DeviceModule* m = deviceModule();
  if (m == nullptr) GTEST_SKIP() << "no CUDA device: " << deviceUnavailableReason();
  std::mt19937_64 rng(42);
  const size_t n = 100003;
  for (int t = 0; t < kNumDataTypes; ++t) {
    const size_t es = sizeOf(t), bytes = n * es;
    // Random bits: every class of value (NaN, inf, subnormal) appears for the
    // narrow formats; plus small integers that stay exact under Sum.
    std::vector<uint8_t> a(bytes), b(bytes), want(bytes), got(bytes);
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    for (auto& v : b) v = static_cast<uint8_t>(rng());
    DeviceBuffer da(m, bytes), db(m, bytes), dd(m, bytes);
    ASSERT_EQ(m->copy(da.p, a.data(), bytes, nullptr), 0);
    ASSERT_EQ(m->copy(db.p, b.data(), bytes, nullptr), 0);
    for (int op = 0; op < kNumRedOps; ++op) {
      reduce(want.data(), a.data(), b.data(), n, static_cast<DataType>(t), static_cast<RedOp>(op));
      ASSERT_EQ(m->reduce(dd.p, da.p, db.p, n, t, op, nullptr), 0);
      ASSERT_EQ(m->copy(got.data(), dd.p, bytes, nullptr), 0);
      ASSERT_EQ(m->synchronize(nullptr), 0);
      size_t mismatches = 0, first = n;
      for (size_t i = 0; i < n; ++i) {
        if (sameElement(&got[i * es], &want[i * es], es, t, op)) continue;
        if (mismatches++ == 0) first = i;
      }
      EXPECT_EQ(mismatches, 0u) << "dtype " << t << " op " << op << ", first at element " << first;
    }
  }
}

// Values for the codecs: normal draws over many binades, a few specials, as
// fp32 or truncated to bf16.
std::vector<uint8_t> codecInput(size_t n, DataType host, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<uint8_t> out(n * dataTypeSize(host));
  for (size_t i = 0; i < n; ++i) {
    float f = normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 60) - 30);
    if (i % 501 == 3) f = NAN;
    if (i % 777 == 5) f = -INFINITY;
    if (i % 333 == 1) f = -0.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (host == DataType::kFloat32) std::memcpy(&out[4 * i], &bits, 4);
    else { const uint16_t h = static_cast<uint16_t>(bits >> 16); std::memcpy(&out[2 * i], &h, 2); }
  }
  return out;
}

TEST(DeviceModule, CodecsGiveTheCpuBytes) {
  const DeviceModule* m = deviceModule();
  if (m == nullptr) GTEST_SKIP() << "no CUDA device: " << deviceUnavailableReason();
  const size_t n = 70001;  // a short last fp8 block
  for (DataType host : {DataType::kFloat32, DataType::kBfloat16})
    for (int f = 0; f < kNumWireFormats; ++f)
      for (uint32_t block : {64u, 256u}) {
        CodecParams p;
        p.format = static_cast<WireFormat>(f);
        p.hostType = host;
        p.blockSize = block;
        p.lossScale = p.format == WireFormat::kFloat16 ? 1024.0f : 1.0f;
        SCOPED_TRACE(std::string(wireFormatName(p.format)) + " block " + std::to_string(block));
        const DeviceCodec dc{f, static_cast<int>(host), p.lossScale, block};
        const std::vector<uint8_t> in = codecInput(n, host, f * 10 + block);
        const size_t wireBytes = encodedBytes(p, n), hostBytes = in.size();
        std::vector<uint8_t> wantWire(wireBytes), gotWire(wireBytes), want(hostBytes), got(hostBytes);
        encode(p, in.data(), n, wantWire.data());
        decode(p, wantWire.data(), n, want.data());
        DeviceBuffer dIn(m, hostBytes), dWire(m, wireBytes), dOut(m, hostBytes);
        ASSERT_EQ(m->copy(dIn.p, in.data(), hostBytes, nullptr), 0);
        ASSERT_EQ(m->encode(&dc, dIn.p, n, dWire.p, nullptr), 0);
        ASSERT_EQ(m->copy(gotWire.data(), dWire.p, wireBytes, nullptr), 0);
        ASSERT_EQ(m->decode(&dc, dWire.p, n, dOut.p, nullptr), 0);
        ASSERT_EQ(m->copy(got.data(), dOut.p, hostBytes, nullptr), 0);
        ASSERT_EQ(m->synchronize(nullptr), 0);
        size_t first = 0;
        if (p.format == WireFormat::kFloat16 || p.format == WireFormat::kBfloat16) {
          const DataType wire = p.format == WireFormat::kFloat16 ? DataType::kFloat16 : DataType::kBfloat16;
          ASSERT_EQ(wireBytes, 2 * n);
          EXPECT_EQ(differentValues(gotWire.data(), wantWire.data(), n, wire, &first), 0u)
              << "encoded values differ, first at " << first;
        } else {
          // fp8: scaled blocks. The scale division on the GPU turns a NaN into
          // the canonical one, whose payload gives e5m2 another NaN code; so
          // the wires are compared by what they decode to here.
          std::vector<uint8_t> gotValues(hostBytes), wantValues(hostBytes);
          decode(p, gotWire.data(), n, gotValues.data());
          decode(p, wantWire.data(), n, wantValues.data());
          EXPECT_EQ(differentValues(gotValues.data(), wantValues.data(), n, host, &first), 0u)
              << "encoded blocks decode differently, first at " << first;
        }
        EXPECT_EQ(differentValues(got.data(), want.data(), n, host, &first), 0u)
            << "decoded values differ, first at " << first;
      }
}

// Which memory the collectives stage: device memory names its device, host
// memory (pageable or page-locked) and nullptr are -1.
TEST(DeviceModule, PointersAreClassified) {
  const DeviceModule* m = deviceModule();
  if (m == nullptr) GTEST_SKIP() << "no CUDA device: " << deviceUnavailableReason();
  DeviceBuffer d(m, 64);
  int current = -1;
  ASSERT_EQ(m->getDevice(&current), 0);
  EXPECT_EQ(deviceOfPointer(d.p), current);
  EXPECT_EQ(deviceOfPointer(static_cast<char*>(d.p) + 63), current);
  std::vector<char> pageable(64);
  EXPECT_EQ(deviceOfPointer(pageable.data()), -1);
  EXPECT_EQ(deviceOfPointer(nullptr), -1);
  void* pinned = nullptr;
  ASSERT_EQ(m->hostAlloc(&pinned, 64, 0), 0);
  EXPECT_EQ(deviceOfPointer(pinned), -1);
  EXPECT_EQ(m->hostRelease(pinned), 0);
}

}  // namespace
}  // namespace braid::kernels
