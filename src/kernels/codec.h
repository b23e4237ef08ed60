// Wire codecs for quantized collectives: fp32 or bf16 values are encoded into
// a narrower wire format before they are sent and decoded after they land.
// Vectorised (AVX2 + F16C, chosen at run time like reduce.h) with a portable
// baseline; both give the same bytes (tests/unit/kernels/codec_*_test.cc).
//
// Wire formats and what they promise (x: input, d: decode(encode(x))):
//
//   fp16   IEEE binary16, round to nearest even, SATURATING: a finite input
//          never becomes inf. An optional loss scale s multiplies the input
//          before rounding and divides the output after decoding:
//            wire = RNE16(clamp(x * s, +-65504)),  d = wire / s.
//          So finite |x| >= 65504 / s saturate to +-65504 / s (the scale moves
//          the saturation point along with the resolution: a larger s keeps
//          more small values out of fp16's subnormals and zero, and saturates
//          sooner). For |x| <= 65504 / s:
//            |d - x| <= 2^-11 |x| (1 + 2^-9) + 2^-25 / s
//          (2^-11: half an fp16 ulp; 2^-25 / s: half the smallest subnormal;
//          the (1 + 2^-9) covers the fp32 roundings of x * s and of wire / s,
//          which vanish when s is a power of two, the recommended choice).
//   bf16   the top half of an fp32, RNE, saturating at +-bf16 max
//          (0x7F7F = 3.3895e38): |d - x| <= 2^-8 |x| + 2^-134. No loss scale
//          (bf16 has fp32's range: it would buy nothing).
//   e4m3   OCP FP8 (max 448, no inf) and e5m2 (max 57344) with one scale per
//   e5m2   block of blockSize elements. The scale is a power of two 2^-k,
//          chosen from the block's largest finite |x| (amax) as the largest
//          multiplier 2^k with amax * 2^k <= the format's max, so amax lands in
//          the format's top binade and nothing in the block can overflow:
//            wire_i = RNE8(x_i * 2^k),  d_i = wire_i * 2^-k.
//          A power of two rather than amax / max because multiplying by it is
//          exact: the error is the fp8 rounding alone, decode is exact, every
//          value of the form code * 2^-k survives a round trip, and scalar and
//          vector code agree trivially. The price is at most one binade of
//          headroom (amax maps into (max / 2, max]), which costs range only at
//          the subnormal end. Per element, block-relative:
//            e4m3: |d - x| <= max(2^-4 |x|, 2^-17 amax) + 2^-135
//            e5m2: |d - x| <= max(2^-3 |x|, 2^-31 amax) + 2^-142
//          (2^-4 / 2^-3: half an ulp; the amax terms: half the smallest
//          subnormal under the block's scale; the last term matters only for
//          blocks with amax below about 2^-118, where the multiplier is capped
//          at 2^126 so that 2^k and 2^-k are both normal fp32 numbers, and
//          covers the fp32 subnormal rounding of their decoded values).
//
// Special values, every format: NaN stays NaN (on the CPU the sign is kept and
// fp16 / bf16 / e5m2 keep the top payload bits, quieted; the GPU kernels' fp8
// scaling canonicalises a NaN first, so its sign and payload may differ); +-0 keep their sign; inf stays inf,
// except in e4m3, which has no inf: +-inf becomes e4m3's NaN (sign kept), so
// a non-finite value stays non-finite and a loss scaler's overflow check
// still fires (saturating it to max * scale would hide the overflow). NaN and
// inf are ignored when choosing a block's scale. A finite input never decodes
// to a non-finite value (fp8 decode clamps the rare product that would pass
// fp32's max, e.g. FLT_MAX rounded up in e4m3). Subnormals of the wire format
// are produced and decoded as the format defines (gradual underflow); fp32
// subnormals follow the FPU's FTZ / DAZ mode where a multiply touches them,
// identically on every implementation.
//
// bf16 host values are widened exactly to fp32, encoded as above, and decoded
// values are rounded to nearest-even bf16 with the same saturation as the bf16
// wire format. (Encoding bf16 to bf16 is a copy that quiets signalling NaNs.)
//
// Layout on the wire (host byte order, like every buffer braid sends):
//   fp16 / bf16: count 2-byte codes, no header.
//   fp8: for each block of blockSize elements (the last may be shorter):
//        the decode scale 2^-k as a 4-byte fp32, then one byte per element.
//
// Streaming: encode / decode work on any run of whole blocks. A chunk starting
// at element i, where i is a multiple of codecAlignment(), encodes to
// dst + encodedBytes(params, i) and yields exactly the bytes encoding the
// whole buffer at once would; only the last chunk of a buffer may end off a
// block boundary. So a pipeline can encode chunk j while chunk j-1 is on the
// wire, with chunk sizes that are multiples of the alignment.
//
// Thread-safe: no shared state besides the one-time CPU detection.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "base/types.h"

namespace braid::kernels {

enum class WireFormat : int { kFloat16 = 0, kBfloat16 = 1, kFloat8e4m3 = 2, kFloat8e5m2 = 3 };
constexpr int kNumWireFormats = 4;

// "fp16", "bf16", "e4m3", "e5m2"; "?" for an invalid value.
const char* wireFormatName(WireFormat format);

constexpr uint32_t kDefaultFp8BlockSize = 256;
constexpr uint32_t kMaxFp8BlockSize = 65536;
// encodedBytes() cannot overflow for counts up to this; callers check first.
constexpr size_t kMaxCodecCount = SIZE_MAX / 4;

struct CodecParams {
  WireFormat format = WireFormat::kFloat16;
  // What encode() reads and decode() writes: kFloat32 or kBfloat16.
  DataType hostType = DataType::kFloat32;
  // fp16 only (1 for the other formats): finite, 2^-64 <= lossScale <= 2^64.
  float lossScale = 1.0f;
  // fp8 only: elements per scaled block, a multiple of 8 in [8, 65536].
  uint32_t blockSize = kDefaultFp8BlockSize;
};

// Ok, or InvalidArgument naming the field that is wrong. Every other function
// here requires params that pass this check.
Status checkCodecParams(const CodecParams& params);

// Chunks must start at a multiple of this many elements: blockSize for fp8,
// 1 otherwise.
size_t codecAlignment(const CodecParams& params);

// Bytes that count elements occupy on the wire (count <= kMaxCodecCount). For
// count a multiple of codecAlignment() it is also the wire offset of element
// count. Never more than 2 * count + 4 bytes (fp16 / bf16: exactly 2 * count).
size_t encodedBytes(const CodecParams& params, size_t count);

// src: count host values. dst: encodedBytes(params, count) bytes. The buffers
// must not overlap. Any alignment. count 0 writes nothing.
void encode(const CodecParams& params, const void* src, size_t count, void* dst);

// src: the encodedBytes(params, count) bytes encode() wrote for count values
// (or a block-aligned run of them). dst: count host values. The buffers must
// not overlap. Any bytes are accepted (a corrupted fp8 scale gives wrong
// numbers, never undefined behaviour; which NaN payload comes out of a NaN
// code times a NaN scale is then left to the hardware).
void decode(const CodecParams& params, const void* src, size_t count, void* dst);

// "avx2+f16c" or "baseline", as for reduce.h. Static string.
const char* codecImplementationName();

}  // namespace braid::kernels
