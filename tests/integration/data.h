// Inputs and references for the correctness matrix.
//
// Every buffer is a period of kPeriod elements tiled over the count: the
// period is prime, so data moved to a wrong offset (any shift that is not a
// multiple of 251 elements) or from a wrong rank or block shows up, while the
// reference costs O(nranks * kPeriod) per case instead of O(nranks * count).
//
// Reducing ops get inputs that every reduction order reduces exactly, so the
// comparison is bit-exact: small integers whose partial sums stay inside the
// type's exact range, products of at most a few 2s and 3s, arbitrary values for
// max/min (whose result is one of the inputs), and for PreMulSum small
// integers whose products with the scalars (at most 3 in magnitude) sum exactly. The reference is computed in
// __int128 / double, exact by construction, and only avg rounds: once, as the
// header specifies (integer division truncating toward zero for integer types;
// for floats sum / nranks in fp64 for double and fp32 otherwise, then rounded
// to the type with the suite's own encoder).
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace braid::itest {

constexpr size_t kPeriod = 251;
using Bytes = std::vector<uint8_t>;

// In a Case's op: a PreMulSum, made on the communicator for the call with
// preMulScalar(type, rank) (braidRedOpCreatePreMulSum) and destroyed after it.
constexpr braidRedOp_t kPreMulSum = static_cast<braidRedOp_t>(braidNumOps);

size_t typeSize(braidDataType_t t);
const char* typeName(braidDataType_t t);
const char* opName(braidRedOp_t op);

// The kPeriod elements rank `rank` contributes to block `block` of a reduction.
Bytes reduceInput(braidDataType_t t, braidRedOp_t op, int nranks, int rank, int block, uint64_t seed);
// The kPeriod elements the reduction of block `block` over all ranks must give.
Bytes reduceExpected(braidDataType_t t, braidRedOp_t op, int nranks, int block, uint64_t seed);
// Rank `rank`'s PreMulSum scalar, one value of t: 2, -1, 3, 0, 1, -2, 2, ...
// (negative ones wrap in unsigned types, as the products then do).
Bytes preMulScalar(braidDataType_t t, int rank);
// Arbitrary bytes (any bit pattern) that rank `from` moves as block `block`.
Bytes movePattern(size_t elemSize, int from, int block, uint64_t seed);

// dst[i] = pattern[i % kPeriod] for i < count.
void tile(uint8_t* dst, size_t count, size_t elemSize, const Bytes& pattern);
// First i < count with buf[i] != pattern[i % kPeriod], or -1.
long long firstMismatch(const uint8_t* buf, size_t count, size_t elemSize, const Bytes& pattern);
// "0x..." of one element (little-endian bytes shown most significant first).
std::string hexElem(const uint8_t* p, size_t elemSize);

uint64_t mix(uint64_t x);  // splitmix64 finaliser

}  // namespace braid::itest
