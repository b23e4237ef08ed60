// codec.h's entry points: parameter checks, wire sizes, and the run-time
// choice of implementation (the same choice reduce.h makes).
#include "kernels/codec.h"

#include <string>

#include "kernels/codec_table.h"
#include "kernels/dispatch.h"

namespace braid::kernels {

#if !defined(BRAID_KERNELS_X86)
const CodecTable* avx2Codecs() { return nullptr; }
#endif

const CodecTable& activeCodecs() {
  // Follows reduce.h's choice, so forceBaselineForTesting() covers both.
  if (&activeKernels() == &baselineKernels()) return baselineCodecs();
  static const CodecTable* const kBest = [] {
    if (cpuSupportsAvx2() && avx2Codecs() != nullptr) return avx2Codecs();
    return &baselineCodecs();
  }();
  return *kBest;
}

const char* wireFormatName(WireFormat format) {
  switch (format) {
    case WireFormat::kFloat16:
      return "fp16";
    case WireFormat::kBfloat16:
      return "bf16";
    case WireFormat::kFloat8e4m3:
      return "e4m3";
    case WireFormat::kFloat8e5m2:
      return "e5m2";
  }
  return "?";
}

namespace {

bool isFp8(WireFormat f) { return f == WireFormat::kFloat8e4m3 || f == WireFormat::kFloat8e5m2; }
int hostRow(DataType t) { return t == DataType::kBfloat16 ? 1 : 0; }

}  // namespace

Status checkCodecParams(const CodecParams& p) {
  const int f = static_cast<int>(p.format);
  if (f < 0 || f >= kNumWireFormats) {
    return invalidArgument("codec: unknown wire format " + std::to_string(f));
  }
  if (p.hostType != DataType::kFloat32 && p.hostType != DataType::kBfloat16) {
    return invalidArgument(std::string("codec: host values must be float32 or bfloat16, not ") +
                           dataTypeName(p.hostType));
  }
  if (p.format == WireFormat::kFloat16) {
    // The range keeps 65504 / s and s * FLT_MAX's clamp meaningful and wire / s
    // far from overflow and fp32 subnormals.
    if (!(p.lossScale >= 0x1p-64f && p.lossScale <= 0x1p64f)) {
      return invalidArgument("codec: fp16 loss scale " + std::to_string(p.lossScale) +
                             " is outside [2^-64, 2^64] (or not a number)");
    }
  } else if (p.lossScale != 1.0f) {
    return invalidArgument(std::string("codec: a loss scale applies to the fp16 wire format only (") +
                           wireFormatName(p.format) +
                           (isFp8(p.format) ? " scales each block itself)" : " has fp32's range)"));
  }
  if (isFp8(p.format) && (p.blockSize < 8 || p.blockSize > kMaxFp8BlockSize || p.blockSize % 8 != 0)) {
    return invalidArgument("codec: fp8 block size " + std::to_string(p.blockSize) +
                           " must be a multiple of 8 in [8, " + std::to_string(kMaxFp8BlockSize) + "]");
  }
  return Status::ok();
}

size_t codecAlignment(const CodecParams& p) { return isFp8(p.format) ? p.blockSize : 1; }

size_t encodedBytes(const CodecParams& p, size_t count) {
  if (!isFp8(p.format)) return 2 * count;
  const size_t blocks = count / p.blockSize + (count % p.blockSize != 0 ? 1 : 0);
  return count + 4 * blocks;
}

void encode(const CodecParams& p, const void* src, size_t count, void* dst) {
  if (count == 0) return;
  const CodecArgs args{p.lossScale, p.blockSize};
  activeCodecs().encode[hostRow(p.hostType)][static_cast<int>(p.format)](src, count, dst, args);
}

void decode(const CodecParams& p, const void* src, size_t count, void* dst) {
  if (count == 0) return;
  const CodecArgs args{p.lossScale, p.blockSize};
  activeCodecs().decode[hostRow(p.hostType)][static_cast<int>(p.format)](src, count, dst, args);
}

const char* codecImplementationName() { return activeCodecs().name; }

}  // namespace braid::kernels
