#include "codec.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "types.h"

namespace braid::perf {

namespace {

// Layout of a small binary float: 1 sign bit, exp bits, man bits.
struct SmallFormat {
  int exp;
  int man;
  int bias;
  bool finiteOnly;  // OCP e4m3 "fn": no inf; only S.1111.111 is NaN
};

SmallFormat formatOf(braidDataType_t type) {
  switch (type) {
    case braidFloat16:
      return {5, 10, 15, false};
    case braidBfloat16:
      return {8, 7, 127, false};
    case braidFloat8e4m3:
      return {4, 3, 7, true};
    case braidFloat8e5m2:
      return {5, 2, 15, false};
    default:
      return {0, 0, 0, false};
  }
}

template <typename T>
void put(void* buf, size_t index, T v) {
  std::memcpy(static_cast<char*>(buf) + index * sizeof(T), &v, sizeof(T));
}

template <typename T>
T get(const void* buf, size_t index) {
  T v;
  std::memcpy(&v, static_cast<const char*>(buf) + index * sizeof(T), sizeof(T));
  return v;
}

// An integral double within int64_t's range, else nullopt.
std::optional<int64_t> integral(double d) {
  if (!std::isfinite(d) || d != std::trunc(d)) return std::nullopt;
  if (d < -9.2233720368547758e18 || d >= 9.2233720368547758e18) return std::nullopt;
  return static_cast<int64_t>(d);
}

}  // namespace

std::optional<uint16_t> encodeSmallFloat(braidDataType_t type, int64_t v) {
  const SmallFormat f = formatOf(type);
  if (f.exp == 0) return std::nullopt;
  const uint16_t sign = v < 0 ? uint16_t(1u << (f.exp + f.man)) : 0;
  if (v == 0) return sign;
  const uint64_t mag = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  const int e = 63 - __builtin_clzll(mag);  // mag = 1.xxx * 2^e
  // The bits below the leading one must fit the mantissa.
  uint64_t frac = mag - (uint64_t{1} << e);
  if (e > f.man) {
    if (frac & ((uint64_t{1} << (e - f.man)) - 1)) return std::nullopt;
    frac >>= (e - f.man);
  } else {
    frac <<= (f.man - e);
  }
  const int biased = e + f.bias;
  const int maxBiased = (1 << f.exp) - (f.finiteOnly ? 1 : 2);
  if (biased > maxBiased) return std::nullopt;
  if (f.finiteOnly && biased == maxBiased && frac == (uint64_t{1} << f.man) - 1) {
    return std::nullopt;  // that pattern is e4m3's NaN
  }
  return uint16_t(sign | (biased << f.man) | frac);
}

double decodeSmallFloat(braidDataType_t type, uint16_t bits) {
  const SmallFormat f = formatOf(type);
  const bool neg = (bits >> (f.exp + f.man)) & 1;
  const int biased = (bits >> f.man) & ((1 << f.exp) - 1);
  const int frac = bits & ((1 << f.man) - 1);
  const int maxBiased = (1 << f.exp) - 1;
  double mag;
  if (f.finiteOnly && biased == maxBiased && frac == (1 << f.man) - 1) {
    return std::numeric_limits<double>::quiet_NaN();
  } else if (!f.finiteOnly && biased == maxBiased) {
    mag = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (biased == 0) {
    mag = std::ldexp(frac, 1 - f.bias - f.man);
  } else {
    mag = std::ldexp(frac + (1 << f.man), biased - f.bias - f.man);
  }
  return neg ? -mag : mag;
}

bool isRepresentable(braidDataType_t type, int64_t v) {
  constexpr int64_t kBig = int64_t{1} << 62;
  switch (type) {
    case braidInt8:
      return v >= INT8_MIN && v <= INT8_MAX;
    case braidUint8:
      return v >= 0 && v <= UINT8_MAX;
    case braidInt32:
      return v >= INT32_MIN && v <= INT32_MAX;
    case braidUint32:
      return v >= 0 && v <= int64_t{UINT32_MAX};
    case braidInt64:
      return true;
    case braidUint64:
      return v >= 0;
    // Beyond 2^62 the round trip through the float could overflow int64_t.
    case braidFloat32:
      return v >= -kBig && v <= kBig && static_cast<int64_t>(static_cast<float>(v)) == v;
    case braidFloat64:
      return v >= -kBig && v <= kBig && static_cast<int64_t>(static_cast<double>(v)) == v;
    default:
      return encodeSmallFloat(type, v).has_value();
  }
}

void storeInt(void* buf, size_t index, braidDataType_t type, int64_t v) {
  switch (type) {
    case braidInt8:
      put<int8_t>(buf, index, static_cast<int8_t>(v));
      return;
    case braidUint8:
      put<uint8_t>(buf, index, static_cast<uint8_t>(v));
      return;
    case braidInt32:
      put<int32_t>(buf, index, static_cast<int32_t>(v));
      return;
    case braidUint32:
      put<uint32_t>(buf, index, static_cast<uint32_t>(v));
      return;
    case braidInt64:
      put<int64_t>(buf, index, v);
      return;
    case braidUint64:
      put<uint64_t>(buf, index, static_cast<uint64_t>(v));
      return;
    case braidFloat32:
      put<float>(buf, index, static_cast<float>(v));
      return;
    case braidFloat64:
      put<double>(buf, index, static_cast<double>(v));
      return;
    case braidFloat16:
    case braidBfloat16:
      put<uint16_t>(buf, index, encodeSmallFloat(type, v).value_or(0xffff));
      return;
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      put<uint8_t>(buf, index, static_cast<uint8_t>(encodeSmallFloat(type, v).value_or(0xff)));
      return;
    default:
      return;
  }
}

std::optional<int64_t> loadInt(const void* buf, size_t index, braidDataType_t type) {
  switch (type) {
    case braidInt8:
      return get<int8_t>(buf, index);
    case braidUint8:
      return get<uint8_t>(buf, index);
    case braidInt32:
      return get<int32_t>(buf, index);
    case braidUint32:
      return get<uint32_t>(buf, index);
    case braidInt64:
      return get<int64_t>(buf, index);
    case braidUint64: {
      const uint64_t u = get<uint64_t>(buf, index);
      if (u > uint64_t{INT64_MAX}) return std::nullopt;
      return static_cast<int64_t>(u);
    }
    case braidFloat32:
      return integral(get<float>(buf, index));
    case braidFloat64:
      return integral(get<double>(buf, index));
    case braidFloat16:
    case braidBfloat16:
      return integral(decodeSmallFloat(type, get<uint16_t>(buf, index)));
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      return integral(decodeSmallFloat(type, get<uint8_t>(buf, index)));
    default:
      return std::nullopt;
  }
}

void fillPoison(void* buf, size_t count, braidDataType_t type) {
  const TypeInfo& t = typeInfo(type);
  if (t.isFloat || !t.isSigned) {
    // All ones: NaN in every float format braid has, the max of unsigned ints.
    std::memset(buf, 0xff, count * t.size);
    return;
  }
  const int64_t minValue = type == braidInt8 ? INT8_MIN : type == braidInt32 ? INT32_MIN : INT64_MIN;
  for (size_t i = 0; i < count; ++i) storeInt(buf, i, type, minValue);
}

}  // namespace braid::perf
