// Whether a buffer lies inside a range of addresses: the one test behind
// registered memory (core/registrations.h, the ibverbs transport's
// registrations, the NCCL plugin's memory regions). Written once because the
// obvious `data + bytes <= begin + size` overflows near the top of the
// address space and lets a buffer that wraps around pass.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid {

// [data, data + bytes) inside [begin, begin + size); bytes 0 at the end counts.
inline bool rangeCovers(uintptr_t begin, size_t size, const void* data, size_t bytes) {
  const auto at = reinterpret_cast<uintptr_t>(data);
  return at >= begin && bytes <= size && at - begin <= size - bytes;
}

}  // namespace braid
