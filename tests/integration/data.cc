#include "data.h"

#include <cmath>
#include <cstring>

#include "lowp.h"

namespace braid::itest {
namespace {

using i128 = __int128;

enum class Kind { kSigned, kUnsigned, kFloat };

struct TypeInfo {
  const char* name;
  size_t size;
  Kind kind;
  const FloatFormat* lowp;  // the 8/16-bit float formats; null otherwise
  double exactLimit;        // every integer of magnitude <= this is exact
  int max3, max2;           // prod: how many ranks may contribute a 3 / a 2
};

// Indexed by braidDataType_t. Limits for the integer types stay inside their
// ranges (wide ones well above 2^53, so a reduction through double fails).
const TypeInfo kTypes[braidNumTypes] = {
    {"int8", 1, Kind::kSigned, nullptr, 127, 2, 3},
    {"uint8", 1, Kind::kUnsigned, nullptr, 255, 2, 4},
    {"int32", 4, Kind::kSigned, nullptr, 2147483647.0, 8, 0},
    {"uint32", 4, Kind::kUnsigned, nullptr, 4294967295.0, 8, 0},
    {"int64", 8, Kind::kSigned, nullptr, 4611686018427387904.0, 8, 0},     // 2^62: no signed overflow
    {"uint64", 8, Kind::kUnsigned, nullptr, 9223372036854775808.0, 8, 0},  // 2^63
    {"float16", 2, Kind::kFloat, &kHalf, 2048, 6, 2},
    {"float32", 4, Kind::kFloat, nullptr, 16777216.0, 8, 0},
    {"float64", 8, Kind::kFloat, nullptr, 9007199254740992.0, 8, 0},
    {"bfloat16", 2, Kind::kFloat, &kBf16, 256, 4, 4},
    {"float8e4m3", 1, Kind::kFloat, &kE4m3, 16, 1, 7},
    {"float8e5m2", 1, Kind::kFloat, &kE5m2, 8, 1, 7},
};

const TypeInfo& info(braidDataType_t t) { return kTypes[static_cast<int>(t)]; }

// One value as the reference sees it: exact integer or exact double.
struct Num {
  i128 i = 0;
  double d = 0;
};

uint64_t rand64(uint64_t seed, int rank, int block, size_t j, uint64_t salt) {
  return mix(seed ^
             mix(static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull +
                 static_cast<uint64_t>(block) * 0xC2B2AE3D27D4EB4Full + j * 0x165667B19E3779F9ull + salt));
}

// Integer in [lo, hi] (hi - lo < 2^64).
i128 uniform(uint64_t r, i128 lo, i128 hi) {
  unsigned __int128 span = static_cast<unsigned __int128>(hi - lo) + 1;
  return lo + static_cast<i128>(r % span);
}

// Random bits of the type read as a number (finite, not -0 for floats).
Num anyValue(const TypeInfo& ti, uint64_t r) {
  Num n;
  for (uint64_t salt = 1;; ++salt, r = mix(r + salt)) {
    if (ti.kind != Kind::kFloat) {
      unsigned __int128 bits = r & (ti.size == 8 ? ~0ull : ((1ull << (8 * ti.size)) - 1));
      n.i = static_cast<i128>(bits);
      if (ti.kind == Kind::kSigned && (bits >> (8 * ti.size - 1)))
        n.i -= static_cast<i128>(static_cast<unsigned __int128>(1) << (8 * ti.size));
      return n;
    }
    if (ti.lowp) {
      uint32_t bits = static_cast<uint32_t>(r & ((1u << (8 * ti.size)) - 1));
      if (!isOrdinary(*ti.lowp, bits)) continue;
      n.d = decodeFloat(*ti.lowp, bits);
    } else if (ti.size == 4) {
      uint32_t bits = static_cast<uint32_t>(r);
      float f;
      memcpy(&f, &bits, 4);
      n.d = f;
    } else {
      memcpy(&n.d, &r, 8);
    }
    if (std::isfinite(n.d) && !(n.d == 0 && std::signbit(n.d))) return n;
  }
}

Num gen(const TypeInfo& ti, braidRedOp_t op, int nranks, int rank, int block, size_t j, uint64_t seed) {
  const uint64_t r = rand64(seed, rank, block, j, static_cast<uint64_t>(op));
  const bool isSigned = ti.kind != Kind::kUnsigned;
  Num n;
  if (op == braidMax || op == braidMin) return anyValue(ti, r);
  if (op == braidProd) {
    const int mag = rank < ti.max3 ? 3 : rank < ti.max3 + ti.max2 ? 2 : 1;
    static const int kSigned[8] = {1, -1, 1, -1, 3, -3, 3, 0};  // "3" means mag
    static const int kUnsignedSet[8] = {1, 1, 1, 3, 3, 3, 3, 0};
    int pick = (isSigned ? kSigned : kUnsignedSet)[r % 8];
    if ((r >> 8) % 2 == 0 && pick == 0) pick = 1;  // zeros in 1 of 16
    if (pick == 3) pick = mag;
    if (pick == -3) pick = -mag;
    n.i = pick;
    n.d = pick;
    return n;
  }
  // Sum and avg: every subset of nranks values stays within the exact range
  // (PreMulSum: every subset of their products with the scalars).
  const i128 bound = static_cast<i128>(ti.exactLimit / nranks / (op == kPreMulSum ? 3 : 1));
  n.i = uniform(r, isSigned ? -bound : 0, bound);
  n.d = static_cast<double>(n.i);
  return n;
}

void store(const TypeInfo& ti, Num n, uint8_t* out) {
  if (ti.kind != Kind::kFloat) {
    memcpy(out, &n.i, ti.size);  // little-endian two's complement truncation
  } else if (ti.lowp) {
    uint32_t bits = encodeFloat(*ti.lowp, n.d);
    memcpy(out, &bits, ti.size);
  } else if (ti.size == 4) {
    float f = static_cast<float>(n.d);
    memcpy(out, &f, 4);
  } else {
    memcpy(out, &n.d, 8);
  }
}

Num combine(const TypeInfo& ti, braidRedOp_t op, Num a, Num b) {
  const bool fl = ti.kind == Kind::kFloat;
  switch (op) {
    case braidSum:
    case braidAvg:
    case kPreMulSum:
      return {a.i + b.i, a.d + b.d};
    case braidProd:
      return {a.i * b.i, a.d * b.d};
    case braidMax:
      return fl ? (b.d > a.d ? b : a) : (b.i > a.i ? b : a);
    case braidMin:
      return fl ? (b.d < a.d ? b : a) : (b.i < a.i ? b : a);
    default:
      return a;
  }
}

int scalarOf(int rank) {
  static const int kScalars[6] = {2, -1, 3, 0, 1, -2};
  return kScalars[rank % 6];
}

}  // namespace

Bytes preMulScalar(braidDataType_t t, int rank) {
  const TypeInfo& ti = info(t);
  Num k;
  k.i = scalarOf(rank);
  k.d = scalarOf(rank);
  Bytes out(ti.size);
  store(ti, k, out.data());
  return out;
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

size_t typeSize(braidDataType_t t) { return info(t).size; }
const char* typeName(braidDataType_t t) { return info(t).name; }
const char* opName(braidRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg", "premulsum"};
  return kNames[static_cast<int>(op)];
}

Bytes reduceInput(braidDataType_t t, braidRedOp_t op, int nranks, int rank, int block, uint64_t seed) {
  const TypeInfo& ti = info(t);
  Bytes out(kPeriod * ti.size);
  for (size_t j = 0; j < kPeriod; ++j)
    store(ti, gen(ti, op, nranks, rank, block, j, seed), &out[j * ti.size]);
  return out;
}

Bytes reduceExpected(braidDataType_t t, braidRedOp_t op, int nranks, int block, uint64_t seed) {
  const TypeInfo& ti = info(t);
  Bytes out(kPeriod * ti.size);
  for (size_t j = 0; j < kPeriod; ++j) {
    auto input = [&](int r) {
      Num x = gen(ti, op, nranks, r, block, j, seed);
      if (op == kPreMulSum) x = {x.i * scalarOf(r), x.d * scalarOf(r)};
      return x;
    };
    Num acc = input(0);
    for (int r = 1; r < nranks; ++r) acc = combine(ti, op, acc, input(r));
    if (op == braidAvg) {
      if (ti.kind != Kind::kFloat) {
        acc.i /= nranks;  // truncates toward zero, as C does
      } else if (ti.size == 8) {
        acc.d = acc.d / nranks;
      } else {
        acc.d = static_cast<float>(acc.d) / static_cast<float>(nranks);  // fp32, rounded once
      }
    }
    store(ti, acc, &out[j * ti.size]);
  }
  return out;
}

Bytes movePattern(size_t elemSize, int from, int block, uint64_t seed) {
  Bytes out(kPeriod * elemSize);
  for (size_t j = 0; j < out.size(); j += 8) {
    uint64_t r = rand64(seed, from, block, j, 0x6d6f7665);
    memcpy(&out[j], &r, std::min<size_t>(8, out.size() - j));
  }
  return out;
}

void tile(uint8_t* dst, size_t count, size_t elemSize, const Bytes& pattern) {
  const size_t total = count * elemSize;
  for (size_t off = 0; off < total; off += pattern.size())
    memcpy(dst + off, pattern.data(), std::min(pattern.size(), total - off));
}

long long firstMismatch(const uint8_t* buf, size_t count, size_t elemSize, const Bytes& pattern) {
  const size_t total = count * elemSize;
  for (size_t off = 0; off < total; off += pattern.size()) {
    size_t n = std::min(pattern.size(), total - off);
    if (memcmp(buf + off, pattern.data(), n) == 0) continue;
    for (size_t k = 0; k < n; ++k)
      if (buf[off + k] != pattern[k]) return static_cast<long long>((off + k) / elemSize);
  }
  return -1;
}

std::string hexElem(const uint8_t* p, size_t elemSize) {
  static const char kHex[] = "0123456789abcdef";
  std::string s = "0x";
  for (size_t k = elemSize; k-- > 0;) {
    s += kHex[p[k] >> 4];
    s += kHex[p[k] & 15];
  }
  return s;
}

}  // namespace braid::itest
