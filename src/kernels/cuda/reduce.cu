// Reductions on device memory, one grid-stride kernel per dtype x op. Each
// element goes through the scalar code of the CPU kernels (reduce_ops.h for
// the operation, compiled here for the device with --expt-relaxed-constexpr)
// and the narrow formats through the device's conversion instructions,
// patched to convert_impl.h's bits (convert_fast.h); the module is built with
// -fmad=false and IEEE division, so a device reduction gives the bits the
// host one gives. Where that code would leave a kernel issue-bound, a faster
// form with provably the same bits takes its place: fp8 four codes a word
// (fp8_words.h), one-byte divides through a 256-entry map, 64-bit divides by
// a multiply (invariant_divide.h), fp16 divides by the reciprocal. The loops
// are launch.h's element-wise kernel: 16-byte vectors where the pointers
// allow, the scalar path elsewhere. Aliasing: dst may equal a or b (each
// thread reads its elements before writing them).
#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "kernels/convert_impl.h"
#include "kernels/cuda/convert_fast.h"
#include "kernels/cuda/fp8_words.h"
#include "kernels/cuda/invariant_divide.h"
#include "kernels/cuda/launch.h"
#include "kernels/reduce_ops.h"

namespace braid::kernels::cuda {
namespace {

// Host values <-> the fp32 (or native) compute type, per storage type.
template <class T>
struct Plain {
  using Storage = T;
  __device__ static T load(T v) { return v; }
  __device__ static T store(T v) { return v; }
};
struct Half {
  using Storage = uint16_t;
  __device__ static float load(uint16_t v) { return fastDecodeHalf(v); }
  __device__ static uint16_t store(float v) { return fastEncodeHalf(v); }
};
struct Bf16 {
  using Storage = uint16_t;
  __device__ static float load(uint16_t v) { return decodeBf16(v); }
  __device__ static uint16_t store(float v) { return encodeBf16(v); }
};
template <class Format>
struct Fp8 {
  using Storage = uint8_t;
  __device__ static float load(uint8_t v) { return Format::decode(v); }
  __device__ static uint8_t store(float v) { return Format::encode(v); }
};

// The fp8 formats' four-codes-a-word forms (fp8_words.h), void elsewhere.
template <class S>
struct Fp8WordsOf {
  using type = void;
};
template <>
struct Fp8WordsOf<Fp8<FastE4m3>> {
  using type = E4m3Words;
};
template <>
struct Fp8WordsOf<Fp8<FastE5m2>> {
  using type = E5m2Words;
};

// dst = a op b. The per-element expression is the one the scalar kernel always
// ran; the vector loop only moves 16 bytes of elements at a time, except for
// fp8, whose vectors go a word at a time through fp8_words.h (same bits).
template <class S, class Op>
struct ReduceElems {
  using T = typename S::Storage;
  static constexpr int kPer = kVectorBytes / sizeof(T), kUnroll = 2;
  struct In {
    Pack<T, kPer> a, b;
  };
  T* d;
  const T* a;
  const T* b;

  __device__ static T apply(T x, T y) { return S::store(Op::apply(S::load(x), S::load(y))); }
  __device__ In load(size_t i) const { return {loadPack<T, kPer>(a + i), loadPack<T, kPer>(b + i)}; }
  __device__ void store(size_t i, const In& in) const {
    using Words = typename Fp8WordsOf<S>::type;
    Pack<T, kPer> out;
    if constexpr (!std::is_void_v<Words> && kFp8WordsOnDevice) {
      constexpr int kWords = kVectorBytes / 4;
      uint32_t wa[kWords], wb[kWords], wd[kWords];
      __builtin_memcpy(wa, in.a.v, kVectorBytes);
      __builtin_memcpy(wb, in.b.v, kVectorBytes);
      bool ambiguous = false;
#pragma unroll
      for (int k = 0; k < kWords; ++k) wd[k] = Fp8WordOp<Words, Op>::apply(wa[k], wb[k], &ambiguous);
      __builtin_memcpy(out.v, wd, kVectorBytes);
      if (ambiguous) {  // a result on the overflow limit: rare, so the whole vector again
#pragma unroll
        for (int k = 0; k < kPer; ++k) out.v[k] = apply(in.a.v[k], in.b.v[k]);
      }
    } else {
#pragma unroll
      for (int k = 0; k < kPer; ++k) out.v[k] = apply(in.a.v[k], in.b.v[k]);
    }
    storePack(d + i, out);
  }
  __device__ void one(size_t i) const { d[i] = apply(a[i], b[i]); }
};

template <class S, class Op>
int launchReduce(void* d, const void* a, const void* b, size_t n, cudaStream_t s) {
  using E = ReduceElems<S, Op>;
  using T = typename E::T;
  const Split split = splitFor(n, E::kPer, {d, a, b}, {sizeof(T), sizeof(T), sizeof(T)});
  return launchElementwise(E{static_cast<T*>(d), static_cast<const T*>(a), static_cast<const T*>(b)}, n,
                           split, s);
}

template <class S>
int byOp(int op, void* d, const void* a, const void* b, size_t n, cudaStream_t s) {
  switch (op) {
    case 0: return launchReduce<S, SumOp>(d, a, b, n, s);
    case 1: return launchReduce<S, ProdOp>(d, a, b, n, s);
    case 2: return launchReduce<S, MaxOp>(d, a, b, n, s);
    case 3: return launchReduce<S, MinOp>(d, a, b, n, s);
    case 4: return launchReduce<S, SumOp>(d, a, b, n, s);  // Avg: Sum, divided once at the end
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

// p /= divisor in place. Integers truncate toward zero, as the CPU; floats
// divide in the compute type F by the divisor converted once.
template <class T>
struct DivideInt {
  __device__ static T apply(T x, T dv) { return static_cast<T>(x / dv); }
  using Storage = T;
  using Divisor = T;
};
// 64-bit integers: a multiply-high and shifts (invariant_divide.h) instead of
// the device's division routine.
template <class T>
struct DivideInt64 {
  using Storage = T;
  using Divisor = std::conditional_t<std::is_signed_v<T>, SignedDivisor, UnsignedDivisor>;
  __device__ static T apply(T x, Divisor d) { return quotient(x, d); }
};
// A divisor above T's max (which a cast to T would wrap) has |x| < divisor
// for every x but T's min over 2^(bits-1), the CPU's -1; the rest give 0.
template <class T>
struct DivideIntBig {
  __device__ static T apply(T x, bool minByItself) {
    return static_cast<T>(minByItself && x == std::numeric_limits<T>::min() ? -1 : 0);
  }
  using Storage = T;
  using Divisor = bool;
};
template <class S, class F>
struct DivideFloat {
  __device__ static typename S::Storage apply(typename S::Storage x, F dv) {
    return S::store(S::load(x) / dv);
  }
  using Storage = typename S::Storage;
  using Divisor = F;
};
// A power-of-two divisor (2 or 4 ranks' Avg): the product with its exact
// reciprocal is the same real number as the quotient, so the same rounded
// bits, for a multiply instead of a dozen instructions of IEEE division.
template <class S, class F>
struct ScaleFloat {
  __device__ static typename S::Storage apply(typename S::Storage x, F reciprocal) {
    return S::store(S::load(x) * reciprocal);
  }
  using Storage = typename S::Storage;
  using Divisor = F;
};

// fp16 by a divisor that is not a power of two, without a division per
// element (a dozen instructions; an H200 ran it at 0.53 of a copy): q = x *
// (1 / d) is within 2 ulp of x / d (two roundings of 2^-24 each), and the
// fp16 rounding of q is the quotient's unless an fp16 rounding boundary (a
// midpoint: the 13 bits fp16 drops are 0x1000) lies within those 2 ulp, or
// the result is an fp16 subnormal (fp16 drops more bits there). Those
// elements, rare, divide. Zeros and infinities multiply exactly.
struct HalfDivisor {
  float divisor, reciprocal;
};
struct DivideHalfByReciprocal {
  using Storage = uint16_t;
  using Divisor = HalfDivisor;
  // Whether fp16's rounding of q may differ from that of the quotient q
  // stands for.
  __device__ static bool needsDivision(float q) {
    const uint32_t magnitude = bitsOf(q) & 0x7FFFFFFFu;
    const uint32_t fromMidpoint = (magnitude & 0x1FFFu) - 0x1000u + 3u;  // wraps: <= 6 when within 3 ulp
    const bool fp16Subnormal = magnitude - 1u < 0x38800000u - 1u;        // 0 < |q| < 2^-14
    return fromMidpoint <= 6u || fp16Subnormal;
  }
  __device__ static uint16_t apply(uint16_t h, HalfDivisor d) {
    const float x = fastDecodeHalf(h);
    float q = x * d.reciprocal;
    if (needsDivision(q)) q = x / d.divisor;
    return fastEncodeHalf(q);
  }
  // Eight at once where none is inf or NaN: no NaN selects, two conversions
  // per instruction; an element that needs it still divides on its own.
  static constexpr bool kHasPack = true;
  __device__ static bool pack(uint16_t (&v)[8], HalfDivisor d) {
    uint32_t w[4], o[4];
    __builtin_memcpy(w, v, sizeof(w));
    if (anyInfOrNan16<kHalfExponent>(w)) return false;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float xlo = hwHalfToFloat(static_cast<uint16_t>(w[k]));
      const float xhi = hwHalfToFloat(static_cast<uint16_t>(w[k] >> 16));
      float lo = xlo * d.reciprocal, hi = xhi * d.reciprocal;
      if (needsDivision(lo)) lo = xlo / d.divisor;
      if (needsDivision(hi)) hi = xhi / d.divisor;
      asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(o[k]) : "f"(hi), "f"(lo));
    }
    __builtin_memcpy(v, o, sizeof(o));
    return true;
  }
};

template <class D>
struct DivideElems {
  using T = typename D::Storage;
  static constexpr int kPer = kVectorBytes / sizeof(T), kUnroll = 2;
  T* p;
  typename D::Divisor dv;

  __device__ Pack<T, kPer> load(size_t i) const { return loadPack<T, kPer>(p + i); }
  __device__ void store(size_t i, Pack<T, kPer> in) const {
    if constexpr (HasPack<D>::value) {
      if (D::pack(in.v, dv)) {
        storePack(p + i, in);
        return;
      }
    }
#pragma unroll
    for (int k = 0; k < kPer; ++k) in.v[k] = D::apply(in.v[k], dv);
    storePack(p + i, in);
  }
  __device__ void one(size_t i) const { p[i] = D::apply(p[i], dv); }
};

// One-byte types: a divide by a fixed divisor maps 256 codes to 256 codes, so
// each block computes that map once, with D's own code (the bits are D's by
// construction), into shared memory, and its elements are looked up. The
// per-element division (a dozen instructions for floats, with two
// conversions for fp8, and an integer divide routine for int8 / uint8) ran
// at 0.2 to 0.6 of a copy on an H200. A lookup hits at most two words of one
// bank per warp (codes 128 apart), so it costs at most two shared-memory
// passes.
template <class D>
struct ByteMapElems {
  using T = typename D::Storage;
  static_assert(sizeof(T) == 1, "a byte map needs one-byte elements");
  static_assert(kBlockThreads >= 256, "one table entry per thread");
  static constexpr int kPer = kVectorBytes, kUnroll = 2;
  T* p;
  typename D::Divisor dv;

  __device__ static uint8_t* table() {
    __shared__ uint8_t map[256];
    return map;
  }
  __device__ void prepareBlock() const {
    if (threadIdx.x < 256) {
      const T out = D::apply(static_cast<T>(threadIdx.x), dv);
      uint8_t bits;
      __builtin_memcpy(&bits, &out, 1);
      table()[threadIdx.x] = bits;
    }
    __syncthreads();
  }
  __device__ static T lookUp(T x) {
    uint8_t bits;
    __builtin_memcpy(&bits, &x, 1);
    const uint8_t mapped = table()[bits];
    T out;
    __builtin_memcpy(&out, &mapped, 1);
    return out;
  }
  __device__ Pack<T, kPer> load(size_t i) const { return loadPack<T, kPer>(p + i); }
  __device__ void store(size_t i, Pack<T, kPer> in) const {
#pragma unroll
    for (int k = 0; k < kPer; ++k) in.v[k] = lookUp(in.v[k]);
    storePack(p + i, in);
  }
  __device__ void one(size_t i) const { p[i] = lookUp(p[i]); }
};

template <class D>
using DivideKernelOf = std::conditional_t<sizeof(typename D::Storage) == 1, ByteMapElems<D>, DivideElems<D>>;

template <class D, class Divisor>
int launchDivide(void* p, size_t n, Divisor divisor, cudaStream_t s) {
  using E = DivideKernelOf<D>;
  using T = typename E::T;
  const Split split = splitFor(n, E::kPer, {p}, {sizeof(T)});
  return launchElementwise(E{static_cast<T*>(p), static_cast<typename D::Divisor>(divisor)}, n, split, s);
}

// Float divides: by a power of two (up to 2^62) as a multiply, else a true division.
template <class S, class F>
int launchDivideFloat(void* p, size_t n, uint64_t divisor, cudaStream_t s) {
  if ((divisor & (divisor - 1)) == 0 && divisor <= (uint64_t{1} << 62))
    return launchDivide<ScaleFloat<S, F>>(p, n, F(1) / static_cast<F>(divisor), s);
  if constexpr (std::is_same_v<S, Half>) {
    const float d = static_cast<float>(divisor);
    return launchDivide<DivideHalfByReciprocal>(p, n, HalfDivisor{d, 1.0f / d}, s);
  }
  return launchDivide<DivideFloat<S, F>>(p, n, static_cast<F>(divisor), s);
}

template <class T>
int launchDivideInt(void* p, size_t n, uint64_t divisor, cudaStream_t s) {
  if (divisor <= static_cast<uint64_t>(std::numeric_limits<T>::max())) {
    if constexpr (std::is_same_v<T, int64_t>)
      return launchDivide<DivideInt64<T>>(p, n, signedDivisor(divisor), s);
    if constexpr (std::is_same_v<T, uint64_t>)
      return launchDivide<DivideInt64<T>>(p, n, unsignedDivisor(divisor), s);
    return launchDivide<DivideInt<T>>(p, n, divisor, s);
  }
  const uint64_t minMagnitude = uint64_t{1} << (8 * sizeof(T) - 1);  // -(T's min) for signed T
  const bool minByItself = std::is_signed_v<T> && divisor == minMagnitude;
  return launchDivide<DivideIntBig<T>>(p, n, minByItself, s);
}

template <class S>
int prepareReduce() {
  for (int err : {prepareElementwise<ReduceElems<S, SumOp>>(), prepareElementwise<ReduceElems<S, ProdOp>>(),
                  prepareElementwise<ReduceElems<S, MaxOp>>(), prepareElementwise<ReduceElems<S, MinOp>>()})
    if (err) return err;
  return 0;
}
template <class T>
int prepareDivideInt() {
  using Small = std::conditional_t<sizeof(T) == 8, DivideInt64<T>, DivideInt<T>>;
  const int err = prepareElementwise<DivideKernelOf<Small>>();
  return err ? err : prepareElementwise<DivideKernelOf<DivideIntBig<T>>>();
}
template <class S, class F>
int prepareDivideFloat() {
  int err = prepareElementwise<DivideKernelOf<DivideFloat<S, F>>>();
  if (!err && std::is_same_v<S, Half>) err = prepareElementwise<DivideElems<DivideHalfByReciprocal>>();
  return err ? err : prepareElementwise<DivideKernelOf<ScaleFloat<S, F>>>();
}

}  // namespace

int preloadReduceKernels() {
  for (int err : {prepareReduce<Plain<int8_t>>(), prepareReduce<Plain<uint8_t>>(), prepareReduce<Plain<int32_t>>(),
                  prepareReduce<Plain<uint32_t>>(), prepareReduce<Plain<int64_t>>(),
                  prepareReduce<Plain<uint64_t>>(), prepareReduce<Half>(), prepareReduce<Plain<float>>(),
                  prepareReduce<Plain<double>>(), prepareReduce<Bf16>(), prepareReduce<Fp8<FastE4m3>>(),
                  prepareReduce<Fp8<FastE5m2>>(), prepareDivideInt<int8_t>(), prepareDivideInt<uint8_t>(),
                  prepareDivideInt<int32_t>(), prepareDivideInt<uint32_t>(), prepareDivideInt<int64_t>(),
                  prepareDivideInt<uint64_t>(), prepareDivideFloat<Half, float>(),
                  prepareDivideFloat<Plain<float>, float>(), prepareDivideFloat<Plain<double>, double>(),
                  prepareDivideFloat<Bf16, float>(), prepareDivideFloat<Fp8<FastE4m3>, float>(),
                  prepareDivideFloat<Fp8<FastE5m2>, float>()})
    if (err) return err;
  return 0;
}

// DataType order (base/types.h, NCCL's): Int8, Uint8, Int32, Uint32, Int64,
// Uint64, Float16, Float32, Float64, Bfloat16, Float8e4m3, Float8e5m2.
int reduce(void* d, const void* a, const void* b, size_t n, int dtype, int op, void* stream) {
  if (n == 0) return 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case 0: return byOp<Plain<int8_t>>(op, d, a, b, n, s);
    case 1: return byOp<Plain<uint8_t>>(op, d, a, b, n, s);
    case 2: return byOp<Plain<int32_t>>(op, d, a, b, n, s);
    case 3: return byOp<Plain<uint32_t>>(op, d, a, b, n, s);
    case 4: return byOp<Plain<int64_t>>(op, d, a, b, n, s);
    case 5: return byOp<Plain<uint64_t>>(op, d, a, b, n, s);
    case 6: return byOp<Half>(op, d, a, b, n, s);
    case 7: return byOp<Plain<float>>(op, d, a, b, n, s);
    case 8: return byOp<Plain<double>>(op, d, a, b, n, s);
    case 9: return byOp<Bf16>(op, d, a, b, n, s);
    case 10: return byOp<Fp8<FastE4m3>>(op, d, a, b, n, s);
    case 11: return byOp<Fp8<FastE5m2>>(op, d, a, b, n, s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int divide(void* p, size_t n, int dtype, uint64_t divisor, void* stream) {
  if (n == 0 || divisor == 0) return 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case 0: return launchDivideInt<int8_t>(p, n, divisor, s);
    case 1: return launchDivideInt<uint8_t>(p, n, divisor, s);
    case 2: return launchDivideInt<int32_t>(p, n, divisor, s);
    case 3: return launchDivideInt<uint32_t>(p, n, divisor, s);
    case 4: return launchDivideInt<int64_t>(p, n, divisor, s);
    case 5: return launchDivideInt<uint64_t>(p, n, divisor, s);
    case 6: return launchDivideFloat<Half, float>(p, n, divisor, s);
    case 7: return launchDivideFloat<Plain<float>, float>(p, n, divisor, s);
    case 8: return launchDivideFloat<Plain<double>, double>(p, n, divisor, s);
    case 9: return launchDivideFloat<Bf16, float>(p, n, divisor, s);
    case 10: return launchDivideFloat<Fp8<FastE4m3>, float>(p, n, divisor, s);
    case 11: return launchDivideFloat<Fp8<FastE5m2>, float>(p, n, divisor, s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace braid::kernels::cuda
