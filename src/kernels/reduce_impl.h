// The reduction kernels, written once and compiled once per ISA:
// reduce_baseline.cc and reduce_avx2.cc each include this header under their
// own -m flags and export the table makeKernelTable() builds. Integer, fp32 and
// fp64 loops are plain loops shaped for the auto-vectoriser (restrict pointers,
// no early exits, selects instead of branches). The narrow floats go through
// fp32 blocks on the stack in the baseline, and with AVX2 + F16C through the
// register-resident codecs of reduce_avx2_ops.h, 8 elements at a time, with
// the scalar path for tails (the two give the same bits).
//
// Internal linkage on purpose (see convert_impl.h): nothing defined here may be
// shared between the per-ISA objects. Do not call inline functions with
// external linkage from here (std:: algorithms, base/ helpers): the linker
// could keep this ISA's copy for everyone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/convert_impl.h"
#include "kernels/dispatch.h"
#include "kernels/reduce_ops.h"

#if defined(__AVX2__) && defined(__F16C__)
#include "kernels/reduce_avx2_ops.h"
#define BRAID_KERNELS_NARROW_AVX2 1
#endif

namespace braid::kernels {
namespace {  // NOLINT: internal linkage per ISA, see above.

// --- Loops over one element type. -----------------------------------------

template <class T, class Op>
void loop3(T* __restrict d, const T* __restrict a, const T* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = Op::apply(a[i], b[i]);
}
// d = d op b.
template <class T, class Op>
void loopInto(T* __restrict d, const T* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = Op::apply(d[i], b[i]);
}
// d = a op d (keeps the operand order, which decides the NaN that survives).
template <class T, class Op>
void loopIntoRev(T* __restrict d, const T* __restrict a, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = Op::apply(a[i], d[i]);
}
// d = d op d.
template <class T, class Op>
void loopSelf(T* d, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = Op::apply(d[i], d[i]);
}

// Exact aliasing gets its own loop so every loop can promise restrict (and the
// vectoriser needs no overlap check that would send dst == a to scalar code).
template <class T, class Op>
void reduceSame(void* dst, const void* a, const void* b, size_t n) {
  T* d = static_cast<T*>(dst);
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  if (d == pa && d == pb) {
    loopSelf<T, Op>(d, n);
  } else if (d == pa) {
    loopInto<T, Op>(d, pb, n);
  } else if (d == pb) {
    loopIntoRev<T, Op>(d, pa, n);
  } else {
    loop3<T, Op>(d, pa, pb, n);
  }
}

template <class T>
void divideSame(void* data, size_t n, uint64_t divisor) {
  T* p = static_cast<T*>(data);
  if constexpr (std::is_floating_point_v<T>) {
    const T dv = static_cast<T>(divisor);
    for (size_t i = 0; i < n; ++i) p[i] = p[i] / dv;
  } else if constexpr (sizeof(T) <= 4) {
    // Through fp64, which vectorises: |x| < 2^32 and divisor < 2^32 make the
    // rounded quotient truncate to the exact integer quotient.
    if (divisor > 0xFFFFFFFFu) {
      for (size_t i = 0; i < n; ++i) p[i] = 0;  // |x| < divisor
      return;
    }
    const double dv = static_cast<double>(divisor);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<double>(p[i]) / dv);
  } else if constexpr (std::is_signed_v<T>) {
    if (divisor > static_cast<uint64_t>(INT64_MAX)) {
      // Only INT64_MIN / 2^63 is non-zero.
      for (size_t i = 0; i < n; ++i) {
        p[i] = (p[i] == INT64_MIN && divisor == (uint64_t{1} << 63)) ? -1 : 0;
      }
      return;
    }
    const int64_t dv = static_cast<int64_t>(divisor);
    for (size_t i = 0; i < n; ++i) p[i] = p[i] / dv;
  } else {
    for (size_t i = 0; i < n; ++i) p[i] = p[i] / divisor;
  }
}

// The scalar of a PreMulSum as a T: its bytes are the first sizeof(T) of bits.
template <class T>
T scalarAs(uint64_t bits) {
  T v;
  __builtin_memcpy(&v, &bits, sizeof(T));
  return v;
}

// d = s * scalar (ProdOp's rules: integers wrap, floats one IEEE multiply).
template <class T>
void scaleSame(void* dst, const void* src, size_t n, uint64_t scalarBits) {
  const T k = scalarAs<T>(scalarBits);
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  if (d == s) {
    for (size_t i = 0; i < n; ++i) d[i] = ProdOp::apply(d[i], k);
  } else {
    T* __restrict rd = d;
    const T* __restrict rs = s;
    for (size_t i = 0; i < n; ++i) rd[i] = ProdOp::apply(rs[i], k);
  }
}

// --- Narrow floats: blocks widened to fp32 on the stack. ----------------------

// Scalar codecs, for the baseline and for tails under 8 elements.
struct HalfCodec {
  using Storage = uint16_t;
  static void decode(const uint16_t* __restrict in, float* __restrict out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = decodeHalf(in[i]);
  }
  static void encode(const float* __restrict in, uint16_t* __restrict out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = encodeHalf(in[i]);
  }
};

struct Bf16Codec {
  using Storage = uint16_t;
  static void decode(const uint16_t* __restrict in, float* __restrict out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = decodeBf16(in[i]);
  }
  static void encode(const float* __restrict in, uint16_t* __restrict out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = encodeBf16(in[i]);
  }
};

template <class Format, const auto& kTable>
struct Fp8Codec {
  using Storage = uint8_t;
  static void decode(const uint8_t* __restrict in, float* __restrict out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = kTable.v[in[i]];
  }
  static void encode(const float* __restrict in, uint8_t* __restrict out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(Format::encode(bitsOf(in[i])));
  }
};
using E4m3Codec = Fp8Codec<E4m3Format, kE4m3Table>;
using E5m2Codec = Fp8Codec<E5m2Format, kE5m2Table>;

// Elements per block: two fp32 blocks (2 KiB) stay in L1 between the passes.
constexpr size_t kNarrowBlock = 256;

// Each block is fully read before it is written, so dst may alias a or b.
template <class Codec, class Op>
void reduceNarrow(void* dst, const void* a, const void* b, size_t n) {
  using S = typename Codec::Storage;
  S* d = static_cast<S*>(dst);
  const S* pa = static_cast<const S*>(a);
  const S* pb = static_cast<const S*>(b);
  alignas(64) float fa[kNarrowBlock];
  alignas(64) float fb[kNarrowBlock];
  for (size_t i = 0; i < n; i += kNarrowBlock) {
    const size_t m = n - i < kNarrowBlock ? n - i : kNarrowBlock;
    Codec::decode(pa + i, fa, m);
    Codec::decode(pb + i, fb, m);
    loopInto<float, Op>(fa, fb, m);
    Codec::encode(fa, d + i, m);
  }
}

template <class Codec>
void divideNarrow(void* data, size_t n, uint64_t divisor) {
  using S = typename Codec::Storage;
  S* p = static_cast<S*>(data);
  const float dv = static_cast<float>(divisor);
  alignas(64) float f[kNarrowBlock];
  for (size_t i = 0; i < n; i += kNarrowBlock) {
    const size_t m = n - i < kNarrowBlock ? n - i : kNarrowBlock;
    Codec::decode(p + i, f, m);
    for (size_t j = 0; j < m; ++j) f[j] = f[j] / dv;
    Codec::encode(f, p + i, m);
  }
}

// The scalar is a value of the format too: widened like the data, so that the
// product is the one ProdOp gives two elements of the format.
template <class Codec>
float narrowScalar(uint64_t scalarBits) {
  using S = typename Codec::Storage;
  const S code = scalarAs<S>(scalarBits);
  float k;
  Codec::decode(&code, &k, 1);
  return k;
}

// Each block is fully read before it is written, so dst may alias src.
template <class Codec>
void scaleNarrow(void* dst, const void* src, size_t n, uint64_t scalarBits) {
  using S = typename Codec::Storage;
  S* d = static_cast<S*>(dst);
  const S* s = static_cast<const S*>(src);
  const float k = narrowScalar<Codec>(scalarBits);
  alignas(64) float f[kNarrowBlock];
  for (size_t i = 0; i < n; i += kNarrowBlock) {
    const size_t m = n - i < kNarrowBlock ? n - i : kNarrowBlock;
    Codec::decode(s + i, f, m);
    for (size_t j = 0; j < m; ++j) f[j] = f[j] * k;
    Codec::encode(f, d + i, m);
  }
}

#if defined(BRAID_KERNELS_NARROW_AVX2)
// Eight elements per step entirely in registers; the tail (< 8) goes through
// the blocked scalar path, which gives the same bits.
template <class Vec, class Codec, class Op>
void reduceNarrowVec(void* dst, const void* a, const void* b, size_t n) {
  using S = typename Vec::Storage;
  S* d = static_cast<S*>(dst);
  const S* pa = static_cast<const S*>(a);
  const S* pb = static_cast<const S*>(b);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) Vec::store(d + i, vecApply(Op{}, Vec::load(pa + i), Vec::load(pb + i)));
  if (i < n) reduceNarrow<Codec, Op>(d + i, pa + i, pb + i, n - i);
}

template <class Vec, class Codec>
void divideNarrowVec(void* data, size_t n, uint64_t divisor) {
  using S = typename Vec::Storage;
  S* p = static_cast<S*>(data);
  const __m256 dv = _mm256_set1_ps(static_cast<float>(divisor));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) Vec::store(p + i, _mm256_div_ps(Vec::load(p + i), dv));
  if (i < n) divideNarrow<Codec>(p + i, n - i, divisor);
}

template <class Vec, class Codec>
void scaleNarrowVec(void* dst, const void* src, size_t n, uint64_t scalarBits) {
  using S = typename Vec::Storage;
  S* d = static_cast<S*>(dst);
  const S* s = static_cast<const S*>(src);
  const __m256 k = _mm256_set1_ps(narrowScalar<Codec>(scalarBits));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) Vec::store(d + i, _mm256_mul_ps(Vec::load(s + i), k));
  if (i < n) scaleNarrow<Codec>(d + i, s + i, n - i, scalarBits);
}
#endif

// --- The table. --------------------------------------------------------------

template <class T>
constexpr void fillSame(KernelTable& t, DataType type) {
  auto& row = t.reduce[static_cast<int>(type)];
  row[static_cast<int>(RedOp::kSum)] = &reduceSame<T, SumOp>;
  row[static_cast<int>(RedOp::kProd)] = &reduceSame<T, ProdOp>;
  row[static_cast<int>(RedOp::kMax)] = &reduceSame<T, MaxOp>;
  row[static_cast<int>(RedOp::kMin)] = &reduceSame<T, MinOp>;
  row[static_cast<int>(RedOp::kAvg)] = &reduceSame<T, SumOp>;
  t.divide[static_cast<int>(type)] = &divideSame<T>;
  t.scale[static_cast<int>(type)] = &scaleSame<T>;
}

// Vec: the register-resident codec where this ISA has one, else void.
template <class Codec, class Vec>
constexpr void fillNarrow(KernelTable& t, DataType type) {
  auto& row = t.reduce[static_cast<int>(type)];
#if defined(BRAID_KERNELS_NARROW_AVX2)
  if constexpr (!std::is_void_v<Vec>) {
    row[static_cast<int>(RedOp::kSum)] = &reduceNarrowVec<Vec, Codec, SumOp>;
    row[static_cast<int>(RedOp::kProd)] = &reduceNarrowVec<Vec, Codec, ProdOp>;
    row[static_cast<int>(RedOp::kMax)] = &reduceNarrowVec<Vec, Codec, MaxOp>;
    row[static_cast<int>(RedOp::kMin)] = &reduceNarrowVec<Vec, Codec, MinOp>;
    row[static_cast<int>(RedOp::kAvg)] = &reduceNarrowVec<Vec, Codec, SumOp>;
    t.divide[static_cast<int>(type)] = &divideNarrowVec<Vec, Codec>;
    t.scale[static_cast<int>(type)] = &scaleNarrowVec<Vec, Codec>;
    return;
  }
#endif
  row[static_cast<int>(RedOp::kSum)] = &reduceNarrow<Codec, SumOp>;
  row[static_cast<int>(RedOp::kProd)] = &reduceNarrow<Codec, ProdOp>;
  row[static_cast<int>(RedOp::kMax)] = &reduceNarrow<Codec, MaxOp>;
  row[static_cast<int>(RedOp::kMin)] = &reduceNarrow<Codec, MinOp>;
  row[static_cast<int>(RedOp::kAvg)] = &reduceNarrow<Codec, SumOp>;
  t.divide[static_cast<int>(type)] = &divideNarrow<Codec>;
  t.scale[static_cast<int>(type)] = &scaleNarrow<Codec>;
}

constexpr KernelTable makeKernelTable(const char* name) {
  KernelTable t{};
  t.name = name;
  fillSame<int8_t>(t, DataType::kInt8);
  fillSame<uint8_t>(t, DataType::kUint8);
  fillSame<int32_t>(t, DataType::kInt32);
  fillSame<uint32_t>(t, DataType::kUint32);
  fillSame<int64_t>(t, DataType::kInt64);
  fillSame<uint64_t>(t, DataType::kUint64);
  fillSame<float>(t, DataType::kFloat32);
  fillSame<double>(t, DataType::kFloat64);
#if defined(BRAID_KERNELS_NARROW_AVX2)
  fillNarrow<HalfCodec, HalfVec>(t, DataType::kFloat16);
  fillNarrow<Bf16Codec, Bf16Vec>(t, DataType::kBfloat16);
  fillNarrow<E4m3Codec, E4m3Vec>(t, DataType::kFloat8e4m3);
  fillNarrow<E5m2Codec, E5m2Vec>(t, DataType::kFloat8e5m2);
#else
  fillNarrow<HalfCodec, void>(t, DataType::kFloat16);
  fillNarrow<Bf16Codec, void>(t, DataType::kBfloat16);
  fillNarrow<E4m3Codec, void>(t, DataType::kFloat8e4m3);
  fillNarrow<E5m2Codec, void>(t, DataType::kFloat8e5m2);
#endif
  return t;
}

}  // namespace
}  // namespace braid::kernels
