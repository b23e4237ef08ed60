// --verify for the codecs: encode and decode against codec.h's CPU codecs,
// for every format and host type, fp8 block sizes on both sides of the
// module's group / fallback split, and offset values and wire pointers.
#include <cmath>
#include <cstring>
#include <random>

#include "buffers.h"
#include "kernels/codec.h"
#include "verify.h"

namespace braid::cudabench {

namespace {

// Normal draws over many binades, some NaN, -inf, -0 and raw bits, as fp32
// or cut to bf16.
std::vector<uint8_t> codecInput(size_t n, DataType host, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<uint8_t> out(n * dataTypeSize(host));
  for (size_t i = 0; i < n; ++i) {
    float f = normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 60) - 30);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (i % 501 == 3) bits = 0x7FC00000u | static_cast<uint32_t>(rng() & 0x3FFFFF);
    if (i % 777 == 5) bits = 0xFF800000u;
    if (i % 333 == 1) bits = 0x80000000u;
    if (i % 97 == 7) bits = static_cast<uint32_t>(rng());
    if (host == DataType::kFloat32) {
      std::memcpy(&out[4 * i], &bits, 4);
    } else {
      const uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

constexpr size_t kCounts[] = {1, 3, 4, 5, 8, 9, 100, 4097, 70001, 3000001};
constexpr size_t kBig = 1000000;  // only aligned pointers at this count

struct Offsets {
  size_t values;  // elements
  size_t wire;    // bytes
};

void verifyOne(const kernels::DeviceModule& m, cudaStream_t s, VerifyLog& log,
               const kernels::CodecParams& p) {
  const bool fp8 =
      p.format == kernels::WireFormat::kFloat8e4m3 || p.format == kernels::WireFormat::kFloat8e5m2;
  const size_t hs = dataTypeSize(p.hostType);
  // fp8 wire: 4-byte multiples (the group kernels) and odd bytes (the
  // fallback); fp16 / bf16 codes are 2-byte values.
  const std::vector<Offsets> offsets = fp8 ? std::vector<Offsets>{{0, 0}, {1, 4}, {4, 1}, {0, 2}, {4, 8}}
                                           : std::vector<Offsets>{{0, 0}, {1, 2}, {3, 10}, {0, 6}, {8, 16}};
  const kernels::DeviceCodec dc{static_cast<int>(p.format), static_cast<int>(p.hostType), p.lossScale,
                                p.blockSize};
  const std::string name = std::string(kernels::wireFormatName(p.format)) + " " + dataTypeName(p.hostType) +
                           (fp8 ? " block " + std::to_string(p.blockSize) : "") +
                           (p.lossScale != 1.0f ? " scale " + std::to_string(p.lossScale) : "");
  const std::string key = std::string(kernels::wireFormatName(p.format)) + " " + dataTypeName(p.hostType);
  // The wire's elements: 2-byte codes, or bytes (fp8: a block's 4 header
  // bytes, then its codes).
  const size_t codeBytes = fp8 ? 1 : 2;
  const DataType codeType = p.format == kernels::WireFormat::kFloat16      ? DataType::kFloat16
                            : p.format == kernels::WireFormat::kBfloat16   ? DataType::kBfloat16
                            : p.format == kernels::WireFormat::kFloat8e4m3 ? DataType::kFloat8e4m3
                                                                           : DataType::kFloat8e5m2;
  const auto codeIsNan = [&](const uint8_t* c, size_t i) {
    return !(fp8 && i % (p.blockSize + 4) < 4) && isNanOf(c, codeType);
  };
  const auto never = [](size_t) { return false; };
  for (size_t n : kCounts) {
    const std::vector<uint8_t> in =
        codecInput(n, p.hostType, n * 31 + p.blockSize + static_cast<int>(p.format));
    const size_t wireBytes = kernels::encodedBytes(p, n);
    std::vector<uint8_t> wantWire(wireBytes), want(n * hs), gotWire(wireBytes), got(n * hs);
    kernels::encode(p, in.data(), n, wantWire.data());
    kernels::decode(p, wantWire.data(), n, want.data());
    DeviceMemory dIn((n + 16) * hs), dWire(wireBytes + 32), dOut((n + 16) * hs);
    if (!log.check(dIn.status(), "cudaMalloc") || !log.check(dWire.status(), "cudaMalloc") ||
        !log.check(dOut.status(), "cudaMalloc"))
      return;
    for (const Offsets& o : offsets) {
      if (n > kBig && o.values + o.wire > 0) break;
      const std::string where = name + " n=" + std::to_string(n) + " values+" + std::to_string(o.values) +
                                " wire+" + std::to_string(o.wire) + "B";
      uint8_t* values = dIn.get() + o.values * hs;
      uint8_t* wire = dWire.get() + o.wire;
      uint8_t* out = dOut.get() + o.values * hs;
      if (!toDevice(log, s, values, in) || !log.check(m.encode(&dc, values, n, wire, s), "encode") ||
          !log.check(cudaStreamSynchronize(s), "encode (on the device)") ||
          !fromDevice(log, s, gotWire, wire))
        return;
      log.compare("encode " + key, "encode " + where, gotWire, wantWire, codeBytes, never, codeIsNan);
      // Decode the CPU's wire, so that a wrong encode cannot hide a decode.
      if (!toDevice(log, s, wire, wantWire) || !log.check(m.decode(&dc, wire, n, out, s), "decode") ||
          !log.check(cudaStreamSynchronize(s), "decode (on the device)") || !fromDevice(log, s, got, out))
        return;
      log.compare("decode " + key, "decode " + where, got, want, hs, never,
                  [&p](const uint8_t* v, size_t) { return isNanOf(v, p.hostType); });
    }
  }
}

}  // namespace

void verifyCodecs(const kernels::DeviceModule& m, cudaStream_t s, VerifyLog& log) {
  for (DataType host : {DataType::kFloat32, DataType::kBfloat16}) {
    for (int f = 0; f < kernels::kNumWireFormats && !log.broken(); ++f) {
      kernels::CodecParams p;
      p.format = static_cast<kernels::WireFormat>(f);
      p.hostType = host;
      if (p.format == kernels::WireFormat::kFloat16) {
        for (float scale : {1.0f, 1024.0f}) {
          p.lossScale = scale;
          verifyOne(m, s, log, p);
        }
      } else if (p.format == kernels::WireFormat::kBfloat16) {
        verifyOne(m, s, log, p);
      } else {
        for (uint32_t block : {8u, 24u, 64u, 256u, 1000u, 4096u, 8192u, 65536u}) {
          p.blockSize = block;
          verifyOne(m, s, log, p);
        }
      }
    }
  }
}

}  // namespace braid::cudabench
