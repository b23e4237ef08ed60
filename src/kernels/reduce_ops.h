// The element-wise operations of reduce.h, on scalars, shared by every ISA's
// loops. Internal to src/kernels; internal linkage per ISA (see reduce_impl.h).
#pragma once

#include <cstdint>
#include <type_traits>

namespace braid::kernels {
namespace {  // NOLINT: internal linkage per ISA.

// Integer arithmetic happens in an unsigned type at least as wide as unsigned
// int, so it wraps modulo 2^n with no signed overflow and no promotion to int.
template <class T>
using WideUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
constexpr T wrap(WideUnsigned<T> v) { return static_cast<T>(v); }  // modulo 2^n since C++20

// Bitwise and / or of two floats of the same value: for equal operands this
// picks +0 over -0 (and) or -0 over +0 (or) and is the identity otherwise.
template <class F>
constexpr F andBits(F a, F b) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  return __builtin_bit_cast(F, static_cast<U>(__builtin_bit_cast(U, a) & __builtin_bit_cast(U, b)));
}
template <class F>
constexpr F orBits(F a, F b) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  return __builtin_bit_cast(F, static_cast<U>(__builtin_bit_cast(U, a) | __builtin_bit_cast(U, b)));
}

struct SumOp {
  template <class T>
  static constexpr T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using W = WideUnsigned<T>;
      return wrap<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  template <class T>
  static constexpr T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using W = WideUnsigned<T>;
      return wrap<T>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
    } else {
      return a * b;
    }
  }
};

// Max / Min: NaN if either is NaN (a's first), -0 < +0, otherwise the usual.
struct MaxOp {
  template <class T>
  static constexpr T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a > b ? a : b;
    } else {
      const T m = (a > b || a != a) ? a : b;
      return a == b ? andBits(a, b) : m;
    }
  }
};

struct MinOp {
  template <class T>
  static constexpr T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a < b ? a : b;
    } else {
      const T m = (a < b || a != a) ? a : b;
      return a == b ? orBits(a, b) : m;
    }
  }
};

}  // namespace
}  // namespace braid::kernels
