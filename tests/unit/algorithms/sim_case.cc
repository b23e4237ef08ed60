#include "sim_case.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/premul/pre_multiply.h"
#include "algorithms/sim/simulator.h"

namespace braid::algo::test {
namespace {

// int32 inputs keep every reduction exact (no Prod: it would overflow), so the
// reference is unambiguous whatever order an algorithm combines in.
int32_t inputValue(int rank, size_t i) { return static_cast<int32_t>((rank + 1) * 3 + i % 7) - 5; }

int32_t combine(int32_t a, int32_t b, RedOp op) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return a + b;
    case RedOp::kProd: return a * b;
    case RedOp::kMax: return std::max(a, b);
    case RedOp::kMin: return std::min(a, b);
  }
  return 0;
}

// Buffer sizes (elements) of input and output per collective.
void sizes(const SimCase& c, size_t* in, size_t* out) {
  const size_t n = c.n, k = c.count;
  switch (c.algorithm->collective) {
    case Collective::kAllGather: *in = k, *out = k * n; break;
    case Collective::kReduceScatter: *in = k * n, *out = k; break;
    case Collective::kAllToAll: *in = k * n, *out = k * n; break;
    case Collective::kGather:
      *in = k, *out = k * n;
      break;  // the root's output; the others have none
    case Collective::kScatter:
      *in = k * n, *out = k;
      break;  // the root's input; the others have none
    default: *in = k, *out = k;
  }
}

// reduced[i]: element i of the vector reduced over all ranks (computed once
// per case: recomputing it per output element is O(N) each at N = 1024).
std::vector<int32_t> reference(const SimCase& c, size_t elems) {
  std::vector<int32_t> ref(elems);
  auto value = [&](int r, size_t i) {
    return c.preMultiply ? preMulScalar(r) * inputValue(r, i) : inputValue(r, i);
  };
  for (size_t i = 0; i < elems; ++i) {
    int32_t acc = value(0, i);
    for (int r = 1; r < c.n; ++r) acc = combine(acc, value(r, i), c.op);
    ref[i] = c.op == RedOp::kAvg ? acc / c.n : acc;
  }
  return ref;
}

}  // namespace

int32_t preMulScalar(int rank) { return rank % 5 - 2; }

bool reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduce || c == Collective::kReduceScatter;
}
bool rooted(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kGather ||
         c == Collective::kScatter;
}
bool blockwise(Collective c) {
  return c == Collective::kAllGather || c == Collective::kReduceScatter || c == Collective::kAllToAll ||
         c == Collective::kGather || c == Collective::kScatter;
}

std::string describe(const SimCase& c) {
  return std::string(collectiveName(c.algorithm->collective)) + ":" + c.algorithm->name +
         " n=" + std::to_string(c.n) + " count=" + std::to_string(c.count) + " op=" + redOpName(c.op) +
         " root=" + std::to_string(c.root) + (c.preMultiply ? " premulsum" : "") +
         (c.inPlace ? " in-place" : "") + " seed=" + std::to_string(c.seed);
}

void runSimCase(const SimCase& c) {
  SCOPED_TRACE(describe(c));
  const Collective coll = c.algorithm->collective;
  size_t inCount, outCount;
  sizes(c, &inCount, &outCount);
  std::vector<std::vector<int32_t>> in(c.n), out(c.n);
  std::vector<Schedule> schedules(c.n);
  std::vector<SimRank> ranks(c.n);
  const bool rootOnlyOutput = coll == Collective::kReduce || coll == Collective::kGather;
  const bool rootOnlyInput = coll == Collective::kScatter;
  for (int r = 0; r < c.n; ++r) {
    in[r].resize(inCount);
    for (size_t i = 0; i < inCount; ++i) in[r][i] = inputValue(r, i);
    CollectiveArgs a;
    a.collective = coll;
    a.nranks = c.n;
    a.rank = r;
    a.count = c.count;
    a.dtype = DataType::kInt32;
    a.op = c.op;
    a.root = c.root;
    a.chunkBytes = c.chunkBytes;
    a.hostOf = c.hostOf;
    if (c.preMultiply) {
      const int32_t scalar = preMulScalar(r);
      a.preMultiply = true;
      std::memcpy(&a.preMulScalar, &scalar, sizeof scalar);
    }
    Status built = c.preMultiply ? buildPreMultiplied(*c.algorithm, a, &schedules[r])
                                 : c.algorithm->build(a, &schedules[r]);
    ASSERT_TRUE(built.isOk()) << built.message();
    void* inPtr = in[r].data();
    void* outPtr;
    if (c.inPlace) {
      // The documented in-place layouts.
      switch (coll) {
        case Collective::kAllGather:
          out[r].assign(outCount, -999);
          std::copy(in[r].begin(), in[r].end(), out[r].begin() + r * c.count);
          inPtr = out[r].data() + r * c.count;
          outPtr = out[r].data();
          break;
        case Collective::kReduceScatter:
          outPtr = in[r].data() + r * c.count;
          break;
        case Collective::kGather:  // in place on the root only; elsewhere there is no output
          out[r].assign(outCount, -999);
          if (r == c.root) std::copy(in[r].begin(), in[r].end(), out[r].begin() + r * c.count);
          inPtr = r == c.root ? out[r].data() + r * c.count : in[r].data();
          outPtr = out[r].data();
          break;
        case Collective::kScatter:  // in place on the root only; elsewhere there is no input
          out[r].assign(outCount, -999);
          outPtr = r == c.root ? in[r].data() + r * c.count : out[r].data();
          break;
        default:
          outPtr = inPtr;
      }
    } else {
      out[r].assign(outCount, -999);
      outPtr = out[r].data();
    }
    // A non-root's reduce output may be NULL: its schedule must not touch it,
    // which validating against a zero-byte output checks.
    // The same for a non-root's scatter input.
    const bool noOutput = rootOnlyOutput && r != c.root;
    const bool noInput = rootOnlyInput && r != c.root;
    if (noOutput) outPtr = nullptr;
    if (noInput) inPtr = nullptr;
    std::vector<size_t> bytes = {noInput ? 0 : inCount * 4, noOutput ? 0 : outCount * 4};
    Status valid = schedules[r].validate(c.n, bytes);
    ASSERT_TRUE(valid.isOk()) << "rank " << r << ": " << valid.message();
    ranks[r] = {&schedules[r], {inPtr, outPtr}};
  }
  SimOptions options;
  options.seed = c.seed;
  Status st = simulate(ranks, options);
  ASSERT_TRUE(st.isOk()) << st.message();

  std::vector<int32_t> ref;
  if (reduces(coll)) ref = reference(c, coll == Collective::kReduceScatter ? c.count * c.n : c.count);
  const size_t k = c.count;
  for (int r = 0; r < c.n; ++r) {
    if (rootOnlyOutput && r != c.root) continue;
    const int32_t* result = static_cast<const int32_t*>(ranks[r].buffers[1]);
    for (size_t i = 0; i < outCount; ++i) {
      int32_t want = 0;
      switch (coll) {
        case Collective::kAllReduce:
        case Collective::kReduce: want = ref[i]; break;
        case Collective::kReduceScatter: want = ref[r * k + i]; break;
        case Collective::kBroadcast: want = inputValue(c.root, i); break;
        case Collective::kAllGather: want = inputValue(static_cast<int>(i / k), i % k); break;
        case Collective::kAllToAll: want = inputValue(static_cast<int>(i / k), r * k + i % k); break;
        case Collective::kGather:
          want = inputValue(static_cast<int>(i / k), i % k);
          break;
        case Collective::kScatter:
          want = inputValue(c.root, r * k + i);
          break;
        default: break;
      }
      ASSERT_EQ(result[i], want) << "rank " << r << " element " << i;
    }
  }
}

}  // namespace braid::algo::test
