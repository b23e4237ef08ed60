// 64-bit integer division by a divisor fixed for a whole call, as a multiply
// by a precomputed reciprocal and shifts: Granlund and Montgomery, "Division
// by invariant integers using multiplication" (PLDI 1994), figure 4.1
// (unsigned) and figure 5.2 (signed, here with a positive divisor). The
// device has no 64-bit divide instruction; its division routine ran at 0.74
// of a copy on an H200, the multiply-high form at the copy's pace. Exact for
// every dividend (the paper's theorems 4.2 and 5.1); verified against the
// CPU's division by braid-cuda-bench --verify and tests/unit/kernels.
//
// The reciprocal is computed on the host (128-bit arithmetic), the quotient
// on either side (hostMulHi / __umul64hi). Internal to the CUDA module and
// its tests.
#pragma once

#include <cstdint>

namespace braid::kernels::cuda {

// ceil(log2 d) for d >= 1.
constexpr int ceilLog2(uint64_t d) {
  int l = 0;
  while (l < 64 && (uint64_t{1} << l) < d) ++l;
  return l;
}

struct UnsignedDivisor {
  uint64_t multiplier;  // m' = floor(2^64 (2^l - d) / d) + 1
  int shift1, shift2;   // min(l, 1), max(l - 1, 0)
};

struct SignedDivisor {
  int64_t multiplier;  // m - 2^64, m = 1 + floor(2^(63 + l) / d)
  int shift;           // l - 1
};

inline UnsignedDivisor unsignedDivisor(uint64_t d) {  // d >= 1
  const int l = ceilLog2(d);
  const uint64_t twoToLMinusD = l == 64 ? uint64_t{0} - d : (uint64_t{1} << l) - d;  // 2^l - d, mod 2^64
  const unsigned __int128 m = ((static_cast<unsigned __int128>(twoToLMinusD) << 64) / d) + 1;
  return {static_cast<uint64_t>(m), l < 1 ? l : 1, l > 1 ? l - 1 : 0};
}

inline SignedDivisor signedDivisor(uint64_t d) {  // 1 <= d <= 2^63 - 1
  const int l = ceilLog2(d) > 1 ? ceilLog2(d) : 1;
  const unsigned __int128 m = 1 + ((static_cast<unsigned __int128>(1) << (63 + l)) / d);
  return {static_cast<int64_t>(static_cast<uint64_t>(m)), l - 1};  // m - 2^64, taken mod 2^64
}

#if defined(__CUDACC__)
#define BRAID_HOST_DEVICE __host__ __device__
#else
#define BRAID_HOST_DEVICE
#endif

BRAID_HOST_DEVICE inline uint64_t mulHiUnsigned(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

BRAID_HOST_DEVICE inline int64_t mulHiSigned(int64_t a, int64_t b) {
#if defined(__CUDA_ARCH__)
  return __mul64hi(a, b);
#else
  return static_cast<int64_t>((static_cast<__int128>(a) * b) >> 64);
#endif
}

BRAID_HOST_DEVICE inline uint64_t quotient(uint64_t n, UnsignedDivisor d) {
  const uint64_t t = mulHiUnsigned(d.multiplier, n);
  return (t + ((n - t) >> d.shift1)) >> d.shift2;
}

// Truncates toward zero, as C's division. The sums wrap as the paper's N-bit
// arithmetic does (only INT64_MIN / 1 wraps, back to INT64_MIN).
BRAID_HOST_DEVICE inline int64_t quotient(int64_t n, SignedDivisor d) {
  const uint64_t q0 = static_cast<uint64_t>(n) + static_cast<uint64_t>(mulHiSigned(d.multiplier, n));
  const int64_t shifted = static_cast<int64_t>(q0) >> d.shift;  // arithmetic shift
  return static_cast<int64_t>(static_cast<uint64_t>(shifted) + (n < 0 ? 1u : 0u));
}

#undef BRAID_HOST_DEVICE

}  // namespace braid::kernels::cuda
