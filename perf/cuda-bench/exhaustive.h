// Every input of the module's narrow-format conversions (kernels/cuda/
// convert_fast.h: the device's instructions, patched) against convert_impl.h's
// software conversions, on the device: all 2^32 fp32 bit patterns for the
// encodes, all codes for the decodes. Part of --verify.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace braid::cudabench {

struct ConversionCheck {
  std::string name;  // "encode fp16", "decode e4m3", ...
  uint64_t inputs;   // how many were compared
  uint64_t mismatches;
  uint32_t firstInput, gotBits, wantBits;  // the lowest input that differs, if any
};

// One entry per conversion; empty with *err set when CUDA failed.
std::vector<ConversionCheck> checkConversionsExhaustively(cudaStream_t stream, cudaError_t* err);

}  // namespace braid::cudabench
