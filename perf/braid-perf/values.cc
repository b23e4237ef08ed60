#include "values.h"

#include <algorithm>

#include "types.h"

namespace braid::perf {

namespace {

constexpr int64_t kCap = int64_t{1} << 20;

// splitmix64: a cheap, well-mixed hash of (rank, index).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash(int rank, uint64_t index) {
  return mix(index * 0x100000001b3ull + static_cast<uint64_t>(rank) + 1);
}

// Uniform-ish integer in [lo, hi].
int64_t pick(uint64_t h, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(h % static_cast<uint64_t>(hi - lo + 1));
}

// Where the "ones" of a sparse pattern sit: m(index) consecutive ranks
// starting at a position that moves with index, so every rank gets some.
bool inWindow(int rank, uint64_t index, int nranks, int64_t m) {
  const int64_t pos = static_cast<int64_t>((static_cast<uint64_t>(rank) + index) % nranks);
  return pos < m;
}

}  // namespace

int64_t genLimit(braidDataType_t type) {
  const TypeInfo& t = typeInfo(type);
  const int64_t limit = t.isSigned ? t.exactLimit : t.exactLimit - 1;
  return std::min(limit, kCap);
}

ValuePlan makePlan(braidDataType_t type, std::optional<braidRedOp_t> op, int nranks) {
  using Kind = ValuePlan::Kind;
  const TypeInfo& t = typeInfo(type);
  const int64_t limit = genLimit(type);
  const int64_t perRank = limit / nranks;
  ValuePlan p;
  p.type = type;
  p.nranks = nranks;
  p.op = op.value_or(braidSum);
  auto range = [&](int64_t bound, bool allowNegative) {
    p.hi = bound;
    p.lo = allowNegative && t.isSigned ? -bound : 0;
  };
  if (!op) {
    p.kind = Kind::kData;
    range(limit, true);
    return p;
  }
  switch (*op) {
    case braidMax:
    case braidMin:
      p.kind = Kind::kMinMax;
      range(limit, true);
      break;
    case braidProd:
      p.kind = Kind::kProd;
      p.maxTwos = std::min(t.maxPow2, nranks);
      break;
    case braidSum:
      p.kind = perRank > 0 ? Kind::kSum : Kind::kSumSparse;
      range(perRank, true);
      p.limit = limit;
      break;
    case kPreMulSumOp:
      p.scaled = perRank / 2 > 0;
      p.kind = p.scaled ? Kind::kSum : Kind::kSumSparse;
      range(perRank / 2, true);
      p.limit = limit;
      break;
    case braidAvg:
    default:
      if (!t.isFloat) {
        p.kind = perRank > 0 ? Kind::kAvgInt : Kind::kSumSparse;
        range(perRank, false);
        p.limit = limit;
      } else if (perRank >= 2) {
        p.kind = Kind::kAvgFloat;
        p.wobble = perRank / 2;
        p.centre = perRank - p.wobble;
      } else {
        p.kind = Kind::kAvgSparse;
      }
      break;
  }
  return p;
}

int64_t inputValue(const ValuePlan& p, int rank, uint64_t index) {
  using Kind = ValuePlan::Kind;
  const int n = p.nranks;
  switch (p.kind) {
    case Kind::kData:
    case Kind::kSum:
    case Kind::kMinMax:
    case Kind::kAvgInt:
      return pick(hash(rank, index), p.lo, p.hi);
    case Kind::kSumSparse: {
      const int64_t m = static_cast<int64_t>(mix(index) % static_cast<uint64_t>(p.limit + 1));
      return inWindow(rank, index, n, m) ? 1 : 0;
    }
    case Kind::kProd: {
      const int64_t m = static_cast<int64_t>(mix(index) % static_cast<uint64_t>(p.maxTwos + 1));
      const int64_t v = inWindow(rank, index, n, m) ? 2 : 1;
      return typeInfo(p.type).isSigned && (hash(rank, index) & 1) ? -v : v;
    }
    case Kind::kAvgFloat: {
      const int64_t c = pick(mix(index), -p.centre, p.centre);
      const int next = (rank + 1) % n;
      return c + pick(hash(rank, index), 0, p.wobble) - pick(hash(next, index), 0, p.wobble);
    }
    case Kind::kAvgSparse: {
      // +1 on one rank, -1 on the rank before it: the sum is 0.
      if (n == 1) return 0;
      const int plus = static_cast<int>(index % n);
      if (rank == plus) return 1;
      return rank == (plus + n - 1) % n ? -1 : 0;
    }
  }
  return 0;
}

int64_t preMulScalar(const ValuePlan& p, int rank) { return p.scaled ? 1 + rank % 2 : 1; }

int64_t reducedValue(const ValuePlan& p, uint64_t index) {
  const bool premul = p.op == kPreMulSumOp;
  int64_t acc = inputValue(p, 0, index) * (premul ? preMulScalar(p, 0) : 1);
  for (int r = 1; r < p.nranks; ++r) {
    const int64_t v = inputValue(p, r, index);
    switch (p.op) {
      case kPreMulSumOp:
        acc += v * preMulScalar(p, r);
        break;
      case braidSum:
      case braidAvg:
        acc += v;
        break;
      case braidProd:
        acc *= v;
        break;
      case braidMax:
        acc = std::max(acc, v);
        break;
      case braidMin:
        acc = std::min(acc, v);
        break;
      default:
        break;
    }
  }
  return p.op == braidAvg ? acc / p.nranks : acc;
}

}  // namespace braid::perf
