// The codec loops of codec.h, written once and compiled once per ISA:
// codec_baseline.cc and codec_avx2.cc include this header under their own -m
// flags and export the table makeCodecTable() builds. The baseline runs the
// scalar code of codec_scalar.h (which the compiler may auto-vectorise); with
// AVX2 + F16C the loops of codec_avx2_ops.h run instead. Internal linkage on
// purpose, for the reason given in reduce_impl.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/codec_scalar.h"
#include "kernels/codec_table.h"

#if defined(__AVX2__) && defined(__F16C__)
#include "kernels/codec_avx2_ops.h"
#define BRAID_CODEC_AVX2 1
#endif

namespace braid::kernels {
namespace {  // NOLINT: internal linkage per ISA.

#if defined(BRAID_CODEC_AVX2)
template <class Host>
struct VecOf;
template <>
struct VecOf<HostF32> {
  using Host = HostF32Vec;
  using Fp8 = HostF32Fp8;
};
template <>
struct VecOf<HostBf16> {
  using Host = HostBf16Vec;
  using Fp8 = HostBf16Fp8;
};
template <>
struct VecOf<E4m3Wire> {
  using Wire = E4m3Vec;
};
template <>
struct VecOf<E5m2Wire> {
  using Wire = E5m2Vec;
};
#endif

// --- fp16 and bf16: one code per element. -------------------------------------

template <class Host>
void encodeHalfFn(const void* src, size_t n, void* dst, const CodecArgs& args) {
  const auto* s = static_cast<const typename Host::T*>(src);
  auto* d = static_cast<uint16_t*>(dst);
#if defined(BRAID_CODEC_AVX2)
  encodeHalfVec<typename VecOf<Host>::Host>(s, n, d, args.lossScale);
#else
  for (size_t i = 0; i < n; ++i) d[i] = encodeHalfWire(Host::load(s[i]), args.lossScale);
#endif
}

template <class Host>
void decodeHalfFn(const void* src, size_t n, void* dst, const CodecArgs& args) {
  const auto* s = static_cast<const uint16_t*>(src);
  auto* d = static_cast<typename Host::T*>(dst);
#if defined(BRAID_CODEC_AVX2)
  decodeHalfVec<typename VecOf<Host>::Host>(s, n, d, args.lossScale);
#else
  for (size_t i = 0; i < n; ++i) d[i] = Host::store(decodeHalfWire(s[i], args.lossScale));
#endif
}

template <class Host>
void encodeBf16Fn(const void* src, size_t n, void* dst, const CodecArgs&) {
  const auto* s = static_cast<const typename Host::T*>(src);
  auto* d = static_cast<uint16_t*>(dst);
#if defined(BRAID_CODEC_AVX2)
  encodeBf16Vec<typename VecOf<Host>::Host>(s, n, d);
#else
  for (size_t i = 0; i < n; ++i) d[i] = encodeBf16Wire(Host::load(s[i]));
#endif
}

template <class Host>
void decodeBf16Fn(const void* src, size_t n, void* dst, const CodecArgs&) {
  const auto* s = static_cast<const uint16_t*>(src);
  auto* d = static_cast<typename Host::T*>(dst);
#if defined(BRAID_CODEC_AVX2)
  decodeBf16Vec<typename VecOf<Host>::Host>(s, n, d);
#else
  for (size_t i = 0; i < n; ++i) d[i] = Host::store(decodeBf16Wire(s[i]));
#endif
}

// --- fp8: blocks of a 4-byte scale and blockSize codes. -------------------------

template <class Host, class Wire>
void encodeFp8Fn(const void* src, size_t n, void* dst, const CodecArgs& args) {
  const auto* s = static_cast<const typename Host::T*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  const size_t block = args.blockSize;
#if defined(BRAID_CODEC_AVX2)
  encodeFp8BlocksVec<typename VecOf<Host>::Fp8, Wire>(s, n, d, block);
#else
  for (size_t i = 0; i < n; i += block) {
    const size_t m = n - i < block ? n - i : block;
    encodeFp8BlockScalar<Host, Wire>(s + i, m, d);
    d += 4 + m;
  }
#endif
}

template <class Host, class Wire>
void decodeFp8Fn(const void* src, size_t n, void* dst, const CodecArgs& args) {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<typename Host::T*>(dst);
  const size_t block = args.blockSize;
  for (size_t i = 0; i < n; i += block) {
    const size_t m = n - i < block ? n - i : block;
#if defined(BRAID_CODEC_AVX2)
    decodeFp8BlockVec<typename VecOf<Host>::Host, Wire, typename VecOf<Wire>::Wire>(s, m, d + i);
#else
    decodeFp8Codes<Host, Wire>(s + 4, readScale(s), 0, m, d + i);
#endif
    s += 4 + m;
  }
}

// --- The table. -------------------------------------------------------------------

template <class Host>
constexpr void fillHost(CodecTable& t, int row) {
  t.encode[row][static_cast<int>(WireFormat::kFloat16)] = &encodeHalfFn<Host>;
  t.decode[row][static_cast<int>(WireFormat::kFloat16)] = &decodeHalfFn<Host>;
  t.encode[row][static_cast<int>(WireFormat::kBfloat16)] = &encodeBf16Fn<Host>;
  t.decode[row][static_cast<int>(WireFormat::kBfloat16)] = &decodeBf16Fn<Host>;
  t.encode[row][static_cast<int>(WireFormat::kFloat8e4m3)] = &encodeFp8Fn<Host, E4m3Wire>;
  t.decode[row][static_cast<int>(WireFormat::kFloat8e4m3)] = &decodeFp8Fn<Host, E4m3Wire>;
  t.encode[row][static_cast<int>(WireFormat::kFloat8e5m2)] = &encodeFp8Fn<Host, E5m2Wire>;
  t.decode[row][static_cast<int>(WireFormat::kFloat8e5m2)] = &decodeFp8Fn<Host, E5m2Wire>;
}

constexpr CodecTable makeCodecTable(const char* name) {
  CodecTable t{};
  t.name = name;
  fillHost<HostF32>(t, 0);
  fillHost<HostBf16>(t, 1);
  return t;
}

}  // namespace
}  // namespace braid::kernels
