// Deterministic message bytes for transport tests: every size and seed gives
// different bytes, so a message landing in the wrong buffer, shifted or cut
// short, is caught by comparing with the pattern it was sent as.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::test {

inline std::vector<uint8_t> pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> v(size);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

}  // namespace braid::test
