// Sizes and buffers shared by the microbenchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/types.h"

namespace braid::microbench {

// Message sizes every benchmark runs at: L2-resident, L3-resident, DRAM.
const std::vector<size_t>& messageSizes();
// "64KiB", "1MiB", "64MiB".
std::string sizeName(size_t bytes);

// A page-aligned buffer, touched once so page faults stay out of the timing.
struct Buffer {
  explicit Buffer(size_t bytes);
  uint8_t* data() { return ptr.get(); }
  const uint8_t* data() const { return ptr.get(); }
  size_t size;
  std::unique_ptr<uint8_t, void (*)(void*)> ptr;
};

// Fills buf with count values of type that every op keeps finite and normal
// (floats in [0.5, 2), integers random), seeded for repeatability.
void fillValues(Buffer& buf, size_t count, DataType type, uint32_t seed);
// count fp32 values drawn from N(0, 1).
void fillNormalFloats(float* out, size_t count, uint32_t seed);

}  // namespace braid::microbench
