// Straightforward element-by-element reference for reduce() / divideBy(), and
// helpers to fill and compare typed buffers, for the kernel tests. Elements are
// handled as raw bits (zero-extended to 64), so one set of helpers serves all
// twelve types.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/types.h"
#include "reference_formats.h"

namespace braid::kernels::ref {

inline const RefFormat* narrowFormat(DataType t) {
  switch (t) {
    case DataType::kFloat16: return &refHalf();
    case DataType::kBfloat16: return &refBf16();
    case DataType::kFloat8e4m3: return &refE4m3();
    case DataType::kFloat8e5m2: return &refE5m2();
    default: return nullptr;
  }
}

inline std::vector<DataType> allTypes() {
  std::vector<DataType> v;
  for (int t = 0; t < kNumDataTypes; ++t) v.push_back(static_cast<DataType>(t));
  return v;
}
inline std::vector<RedOp> allOps() {
  return {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg};
}

inline uint64_t loadRaw(const void* p, size_t i, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + i * size, size);  // little-endian
  return v;
}
inline void storeRaw(void* p, size_t i, size_t size, uint64_t v) {
  std::memcpy(static_cast<uint8_t*>(p) + i * size, &v, size);
}

template <class F>
F floatOp(RedOp op, F a, F b) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return a + b;
    case RedOp::kProd: return a * b;
    case RedOp::kMax:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a == b) return std::signbit(a) ? b : a;  // +0 beats -0
      return a > b ? a : b;
    case RedOp::kMin:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a == b) return std::signbit(a) ? a : b;  // -0 beats +0
      return a < b ? a : b;
  }
  return a;
}

// Integers: exact arithmetic in 128 bits, then reduced modulo 2^bits.
inline uint64_t intOp(RedOp op, uint64_t rawA, uint64_t rawB, size_t size, bool isSigned) {
  const int bits = static_cast<int>(size * 8);
  auto widen = [&](uint64_t raw) -> __int128 {
    if (!isSigned || bits == 64) return isSigned ? static_cast<__int128>(static_cast<int64_t>(raw)) : raw;
    const uint64_t signBit = uint64_t{1} << (bits - 1);
    return static_cast<__int128>(static_cast<int64_t>((raw ^ signBit) - signBit));
  };
  const __int128 a = widen(rawA), b = widen(rawB);
  unsigned __int128 r = 0;
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: r = static_cast<unsigned __int128>(a) + static_cast<unsigned __int128>(b); break;
    case RedOp::kProd: r = static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b); break;
    case RedOp::kMax: r = static_cast<unsigned __int128>(a > b ? a : b); break;
    case RedOp::kMin: r = static_cast<unsigned __int128>(a < b ? a : b); break;
  }
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
  return static_cast<uint64_t>(r) & mask;
}

inline bool isSignedInt(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt32 || t == DataType::kInt64;
}

inline uint64_t combine(DataType t, RedOp op, uint64_t a, uint64_t b) {
  if (const RefFormat* f = narrowFormat(t)) {
    return f->encode(floatOp<float>(op, f->decode(static_cast<uint32_t>(a)), f->decode(static_cast<uint32_t>(b))));
  }
  if (t == DataType::kFloat32) {
    return floatBits(floatOp<float>(op, bitsFloat(static_cast<uint32_t>(a)), bitsFloat(static_cast<uint32_t>(b))));
  }
  if (t == DataType::kFloat64) {
    double x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    const double r = floatOp<double>(op, x, y);
    uint64_t u;
    std::memcpy(&u, &r, 8);
    return u;
  }
  return intOp(op, a, b, dataTypeSize(t), isSignedInt(t));
}

inline uint64_t divide(DataType t, uint64_t raw, uint64_t divisor) {
  if (const RefFormat* f = narrowFormat(t)) {
    return f->encode(f->decode(static_cast<uint32_t>(raw)) / static_cast<float>(divisor));
  }
  if (t == DataType::kFloat32) return floatBits(bitsFloat(static_cast<uint32_t>(raw)) / static_cast<float>(divisor));
  if (t == DataType::kFloat64) {
    double x;
    std::memcpy(&x, &raw, 8);
    x /= static_cast<double>(divisor);
    uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
  }
  const size_t size = dataTypeSize(t);
  const int bits = static_cast<int>(size * 8);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
  if (!isSignedInt(t)) return (raw / divisor) & mask;
  const uint64_t signBit = uint64_t{1} << (bits - 1);
  const __int128 x = static_cast<int64_t>((raw ^ signBit) - signBit);
  const __int128 q = x / static_cast<__int128>(divisor);  // truncates toward zero
  return static_cast<uint64_t>(q) & mask;
}

inline bool isNanRaw(DataType t, uint64_t raw) {
  if (const RefFormat* f = narrowFormat(t)) return f->isNan(static_cast<uint32_t>(raw));
  if (t == DataType::kFloat32) return std::isnan(bitsFloat(static_cast<uint32_t>(raw)));
  if (t == DataType::kFloat64) {
    double x;
    std::memcpy(&x, &raw, 8);
    return std::isnan(x);
  }
  return false;
}

// Equal bits; except that under Sum/Prod/Avg any NaN matches a NaN (which input's
// payload survives two NaNs is the hardware's choice, see reduce.h).
inline bool sameResult(DataType t, RedOp op, uint64_t expected, uint64_t actual) {
  if (expected == actual) return true;
  return op != RedOp::kMax && op != RedOp::kMin && isNanRaw(t, expected) && isNanRaw(t, actual);
}

// Random elements: integers uniformly random; floats a mix of moderate values
// (so Sum / Prod stay mostly finite), uniformly random bit patterns, and specials.
inline std::vector<uint8_t> randomBuffer(DataType t, size_t count, std::mt19937_64& rng) {
  const size_t size = dataTypeSize(t);
  std::vector<uint8_t> buf(count * size);
  std::uniform_real_distribution<double> moderate(-8.0, 8.0);
  for (size_t i = 0; i < count; ++i) {
    uint64_t raw = rng();
    if (isFloatingPoint(t)) {
      const uint64_t pick = rng() % 16;
      float f = static_cast<float>(moderate(rng));
      if (pick == 0) f = 0.0f;
      if (pick == 1) f = -0.0f;
      if (pick == 2) f = (rng() & 1) ? INFINITY : -INFINITY;
      if (pick == 3) f = NAN;
      if (pick < 12) {  // else: keep the random bits
        if (const RefFormat* fmt = narrowFormat(t)) {
          raw = fmt->encode(f);
        } else if (t == DataType::kFloat32) {
          raw = floatBits(f);
        } else {
          const double d = pick < 4 ? static_cast<double>(f) : moderate(rng);
          std::memcpy(&raw, &d, 8);
        }
      }
    }
    storeRaw(buf.data(), i, size, raw);
  }
  return buf;
}

}  // namespace braid::kernels::ref
