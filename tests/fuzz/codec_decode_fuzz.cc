// The quantized collectives' wire decoder (kernels/codec.h) on arbitrary
// payloads: what a peer sends for a quantized all-to-all lands here, fp8 block
// scales included. Input: a control byte (bits 0-1: wire format, bit 2: bf16
// host values), a byte choosing the fp8 block size (8 * (1 + b % 32)), a byte
// choosing the fp16 loss scale (2^(b % 129 - 64)), then the wire bytes; as many
// elements are decoded as those bytes hold (a short last fp8 block included).
// Properties: no crash and no read or write outside the buffers (ASan; the
// buffers are sized exactly); the vectorised and baseline decoders agree bit
// for bit except among NaNs; a finite code decodes to a finite value (fp8:
// under a finite scale); decoding in block-aligned chunks gives the same
// values as decoding the whole payload.
#include <cmath>
#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "fuzz_target.h"
#include "kernels/codec.h"
#include "kernels/codec_table.h"
#include "kernels/dispatch.h"

namespace {

using namespace braid::kernels;

bool isFp8(WireFormat f) { return f == WireFormat::kFloat8e4m3 || f == WireFormat::kFloat8e5m2; }

// How many elements `bytes` wire bytes encode (a short last fp8 block allowed).
size_t countFor(const CodecParams& p, size_t bytes) {
  if (!isFp8(p.format)) return bytes / 2;
  const size_t block = p.blockSize + 4;
  const size_t full = bytes / block, rest = bytes % block;
  return full * p.blockSize + (rest > 4 ? rest - 4 : 0);
}

float hostValue(const CodecParams& p, const std::vector<uint8_t>& out, size_t i) {
  if (p.hostType == braid::DataType::kFloat32) {
    float f;
    std::memcpy(&f, out.data() + 4 * i, 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, out.data() + 2 * i, 2);
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Is wire element i a finite code (under a finite scale, for fp8)?
bool finiteCode(const CodecParams& p, const std::vector<uint8_t>& wire, size_t i) {
  if (!isFp8(p.format)) {
    uint16_t c;
    std::memcpy(&c, wire.data() + 2 * i, 2);
    const uint16_t expMask = p.format == WireFormat::kFloat16 ? 0x7c00 : 0x7f80;
    return (c & expMask) != expMask;
  }
  const size_t block = i / p.blockSize, at = block * (p.blockSize + 4);
  float scale;
  std::memcpy(&scale, wire.data() + at, 4);
  const uint8_t c = wire[at + 4 + i % p.blockSize];
  const bool finite = p.format == WireFormat::kFloat8e4m3 ? (c & 0x7f) != 0x7f : (c & 0x7c) != 0x7c;
  return finite && std::isfinite(scale);
}

bool sameValue(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, 4) == 0;
}

}  // namespace

BRAID_FUZZ_TARGET(codec_decode) {
  braid::fuzz::FuzzInput in(data, size);
  const uint8_t control = in.u8();
  CodecParams p;
  p.format = static_cast<WireFormat>(control & 3);
  p.hostType = (control & 4) ? braid::DataType::kBfloat16 : braid::DataType::kFloat32;
  p.blockSize = 8 * (1 + in.u8() % 32);
  const int scaleExp = in.u8() % 129 - 64;
  p.lossScale = p.format == WireFormat::kFloat16 ? std::ldexp(1.0f, scaleExp) : 1.0f;
  BRAID_FUZZ_CHECK(checkCodecParams(p).isOk(), "the target only builds valid params");

  const std::vector<uint8_t> rest = in.rest();
  const size_t count = countFor(p, rest.size());
  if (count == 0) return 0;
  const size_t wireBytes = encodedBytes(p, count);
  BRAID_FUZZ_CHECK(wireBytes <= rest.size(), "encodedBytes fits the payload it was derived from");
  // Exactly sized copies, so ASan sees any read or write past either end.
  const std::vector<uint8_t> wire(rest.begin(), rest.begin() + static_cast<ptrdiff_t>(wireBytes));
  const size_t hostBytes = count * (p.hostType == braid::DataType::kFloat32 ? 4 : 2);

  std::vector<uint8_t> out(hostBytes);
  decode(p, wire.data(), count, out.data());

  const CodecArgs args{p.lossScale, p.blockSize};
  const int row = p.hostType == braid::DataType::kBfloat16 ? 1 : 0, col = static_cast<int>(p.format);
  std::vector<uint8_t> base(hostBytes);
  baselineCodecs().decode[row][col](wire.data(), count, base.data(), args);
  for (size_t i = 0; i < count; ++i) {
    const float v = hostValue(p, out, i);
    BRAID_FUZZ_CHECK(sameValue(v, hostValue(p, base, i)), "vectorised and baseline decode agree");
    if (finiteCode(p, wire, i)) BRAID_FUZZ_CHECK(std::isfinite(v), "a finite code decodes to a finite value");
  }

  // Streaming: two chunks split at a multiple of codecAlignment().
  const size_t align = codecAlignment(p);
  const size_t split = (count / 2) / align * align;
  if (split > 0 && split < count) {
    std::vector<uint8_t> first(hostBytes / count * split), second(hostBytes - first.size());
    decode(p, wire.data(), split, first.data());
    decode(p, wire.data() + encodedBytes(p, split), count - split, second.data());
    first.insert(first.end(), second.begin(), second.end());
    for (size_t i = 0; i < count; ++i)
      BRAID_FUZZ_CHECK(sameValue(hostValue(p, first, i), hostValue(p, out, i)),
                       "chunked decode equals whole decode");
  }
  return 0;
}
