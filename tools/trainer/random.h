// Counter-based random numbers: a value is a pure function of (seed, keys),
// so every rank draws the same sample, weight or embedding row without
// talking, whatever the rank count and whoever owns the table.
#pragma once

#include <cstdint>

namespace braid::trainer {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint64_t hashKeys(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  return splitmix64(splitmix64(splitmix64(seed ^ a) ^ b) ^ c);
}

// Uniform in [0, 1).
inline double unit(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  return static_cast<double>(hashKeys(seed, a, b, c) >> 11) * 0x1.0p-53;
}

// Uniform in [-r, r).
inline float symmetric(float r, uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  return static_cast<float>((2 * unit(seed, a, b, c) - 1) * r);
}

}  // namespace braid::trainer
