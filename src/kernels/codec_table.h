// Internal to src/kernels (and its tests): the per-ISA codec tables behind
// codec.h, and the choice among them. Same scheme as dispatch.h: codec_impl.h
// is compiled once per ISA into its own object and exposes one table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/codec.h"

namespace braid::kernels {

// What a codec function needs from CodecParams, already checked.
struct CodecArgs {
  float lossScale;     // fp16; 1 for the others
  uint32_t blockSize;  // fp8
};

using CodecFn = void (*)(const void* src, size_t count, void* dst, const CodecArgs& args);

// Row 0: fp32 host values; row 1: bf16.
constexpr int kNumCodecHosts = 2;

struct CodecTable {
  const char* name;
  CodecFn encode[kNumCodecHosts][kNumWireFormats];
  CodecFn decode[kNumCodecHosts][kNumWireFormats];
};

// The portable baseline, always present.
const CodecTable& baselineCodecs();
// AVX2 + F16C; nullptr where not compiled in. Only to be called when
// cpuSupportsAvx2() (dispatch.h).
const CodecTable* avx2Codecs();

// The table encode() / decode() use: the best this CPU supports, or the
// baseline while dispatch.h's forceBaselineForTesting(true) is in effect.
const CodecTable& activeCodecs();

}  // namespace braid::kernels
