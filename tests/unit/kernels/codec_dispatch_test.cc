// Every vector codec table this CPU supports gives the baseline's bytes, bit
// for bit: on random bit patterns (every special value class), on realistic
// data, on every count around the vector width and block size, on a sweep
// through fp32 bit patterns and every bf16 code, and when decoding arbitrary
// bytes (random block scales included; there only NaN payloads may differ).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "codec_reference.h"
#include "kernels/codec.h"
#include "kernels/codec_table.h"

namespace braid::kernels {
namespace {

std::vector<const CodecTable*> vectorTables() {
  std::vector<const CodecTable*> v = ref::supportedCodecTables();
  v.erase(v.begin());
  return v;
}

std::vector<CodecParams> allParams() {
  std::vector<CodecParams> out;
  for (DataType host : {DataType::kFloat32, DataType::kBfloat16}) {
    for (float s : {1.0f, 0x1p10f, 0.3f}) out.push_back({WireFormat::kFloat16, host, s, 256});
    out.push_back({WireFormat::kBfloat16, host, 1.0f, 256});
    for (WireFormat f : {WireFormat::kFloat8e4m3, WireFormat::kFloat8e5m2}) {
      for (uint32_t block : {8u, 24u, 128u, 256u}) out.push_back({f, host, 1.0f, block});
    }
  }
  return out;
}

std::string describe(const CodecParams& p) {
  return std::string(wireFormatName(p.format)) + " host " + dataTypeName(p.hostType) + " scale " +
         std::to_string(p.lossScale) + " block " + std::to_string(p.blockSize);
}

// Encodes src with the baseline and with t, and decodes the baseline's bytes
// (and, as arbitrary input, src's own bytes) with both.
void expectSame(const CodecTable& t, const CodecParams& p, const std::vector<uint8_t>& src, size_t count,
                const std::string& what) {
  const CodecTable& base = baselineCodecs();
  const std::vector<uint8_t> want = ref::encodeWith(base, p, src.data(), count);
  ASSERT_EQ(ref::firstDifference(ref::encodeWith(t, p, src.data(), count), want), "")
      << t.name << " encode " << what;
  ASSERT_EQ(ref::firstDifference(ref::decodeWith(t, p, want.data(), count),
                                 ref::decodeWith(base, p, want.data(), count)),
            "")
      << t.name << " decode " << what;
  if (src.size() >= encodedBytes(p, count)) {
    // Arbitrary fp8 scales may be NaN; a NaN code times a NaN scale may give
    // either payload (operand order is the compiler's), so any NaN matches one.
    const std::vector<float> got = ref::hostFloats(p, ref::decodeWith(t, p, src.data(), count));
    const std::vector<float> expect = ref::hostFloats(p, ref::decodeWith(base, p, src.data(), count));
    for (size_t i = 0; i < count; ++i) {
      if (std::isnan(got[i]) && std::isnan(expect[i])) continue;
      ASSERT_EQ(ref::floatBits(got[i]), ref::floatBits(expect[i]))
          << t.name << " decode of arbitrary bytes " << what << " element " << i;
    }
  }
}

TEST(CodecDispatch, VectorMatchesBaselineOnRandomData) {
  const auto tables = vectorTables();
  if (tables.empty()) GTEST_SKIP() << "no vector codec supported on this CPU";
  std::mt19937 rng(99);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t counts[] = {1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 127, 128, 129, 255, 256, 257, 1000, 4099};
  for (const CodecTable* t : tables) {
    for (const CodecParams& p : allParams()) {
      for (size_t count : counts) {
        for (int kind = 0; kind < 3; ++kind) {
          // 0: random bits; 1: normal values; 2: normal values with a few
          // infs, NaNs, zeros and huge values sprinkled in.
          std::vector<uint8_t> src(count * 4 + 8);
          for (size_t i = 0; i + 4 <= src.size(); i += 4) {
            float v = normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10);
            if (kind == 2 && rng() % 16 == 0) {
              const float specials[] = {INFINITY, -INFINITY, NAN, -0.0f, 0.0f, 3.4e38f, -1e-40f, 65520.0f};
              v = specials[rng() % 8];
            }
            const uint32_t bits = kind == 0 ? static_cast<uint32_t>(rng()) : ref::floatBits(v);
            std::memcpy(src.data() + i, &bits, 4);
          }
          if (p.hostType == DataType::kBfloat16 && kind != 0) {
            // Keep the values, not their low halves: bf16 of each float.
            std::vector<float> xs(count);
            for (size_t i = 0; i < count; ++i) std::memcpy(&xs[i], src.data() + 4 * i, 4);
            const std::vector<uint8_t> b = ref::hostBuffer(p, xs);
            std::memcpy(src.data(), b.data(), b.size());
          }
          expectSame(*t, p, src, count,
                     describe(p) + " count " + std::to_string(count) + " kind " + std::to_string(kind));
        }
      }
    }
  }
}

// A stride through all 2^32 fp32 bit patterns, and every bf16 code, in blocks
// of mixed magnitudes.
TEST(CodecDispatch, VectorMatchesBaselineOnBitPatternSweep) {
  const auto tables = vectorTables();
  if (tables.empty()) GTEST_SKIP() << "no vector codec supported on this CPU";
  std::vector<uint8_t> f32;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) {
    const uint32_t bits = static_cast<uint32_t>(b);
    f32.insert(f32.end(), reinterpret_cast<const uint8_t*>(&bits),
               reinterpret_cast<const uint8_t*>(&bits) + 4);
  }
  std::vector<uint8_t> bf16;
  for (uint32_t c = 0; c < 65536; ++c) {
    // Interleave the halves of the code space so blocks mix magnitudes.
    const uint16_t code = static_cast<uint16_t>((c >> 1) | ((c & 1) << 15));
    bf16.push_back(static_cast<uint8_t>(code));
    bf16.push_back(static_cast<uint8_t>(code >> 8));
  }
  for (const CodecTable* t : tables) {
    for (const CodecParams& p : allParams()) {
      const std::vector<uint8_t>& src = p.hostType == DataType::kBfloat16 ? bf16 : f32;
      expectSame(*t, p, src, src.size() / ref::hostBytes(p), describe(p) + " sweep");
    }
  }
}

}  // namespace
}  // namespace braid::kernels
