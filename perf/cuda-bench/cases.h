// What is timed at one size, and how much memory traffic each launch makes.
//
// Traffic is what the kernel must read plus what it must write, for N bytes
// of host-typed values (the size column):
//   copy    N read + N written                          = 2N
//   reduce  a and b read, d written                     = 3N
//   divide  read and written in place                   = 2N
//   encode  N of values read, the wire format written   = N + encodedBytes
//   decode  the wire format read, N of values written   = encodedBytes + N
// (encodedBytes: codec.h's, N/2 for fp32 -> fp16 / bf16, about N/4 plus 4
// bytes per block for fp32 -> fp8).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "base/types.h"
#include "buffers.h"
#include "kernels/device_module.h"
#include "options.h"
#include "timer.h"

namespace braid::cudabench {

struct Case {
  std::string kernel, dtype, op;
  size_t traffic = 0;
  DataType fill = DataType::kFloat32;  // what a and b must hold (Buffers::fill)
  Launch setup;                        // once before timing, untimed; may be empty
  Launch before;                       // before each repetition, untimed; may be empty
  Launch launch;
};

// The device-to-device copy of buffers.bytes() from a to d: the reference.
Case copyCase(const Buffers& buffers, cudaStream_t stream);

// The module's kernels chosen by opts.kernels, grouped by what they need in
// a and b so that each fill is done once.
std::vector<Case> moduleCases(const Options& opts, const kernels::DeviceModule& m, const Buffers& buffers,
                              cudaStream_t stream);

}  // namespace braid::cudabench
