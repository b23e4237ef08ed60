// Launch geometry shared by the module's kernels: grid-stride loops over a
// grid sized to the data, capped so that huge vectors reuse threads instead
// of launching millions of blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/device_module.h"

namespace braid::kernels::cuda {

constexpr unsigned kBlockThreads = 256;
constexpr size_t kMaxBlocks = 4096;

inline unsigned gridFor(size_t n) {
  size_t blocks = (n + kBlockThreads - 1) / kBlockThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

int reduce(void* d, const void* a, const void* b, size_t n, int dtype, int op, void* stream);
int divide(void* p, size_t n, int dtype, uint64_t divisor, void* stream);
int encode(const DeviceCodec* p, const void* src, size_t n, void* dst, void* stream);
int decode(const DeviceCodec* p, const void* src, size_t n, void* dst, void* stream);

}  // namespace braid::kernels::cuda
