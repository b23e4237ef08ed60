// The inputs braid-perf's check feeds to a collective, and the outputs it
// expects back: small integers chosen so that the exact result is reached
// whatever order, grouping or algorithm the library reduces in.
//
// Why that holds (the unit tests check each invariant):
//  - sum: every input's magnitude is at most limit/nranks, so every partial
//    sum of any subset of ranks is an integer of magnitude <= limit, which the
//    type represents exactly (limit: see genLimit); no rounding can happen.
//  - prod: inputs are +-1 and +-2 with at most maxPow2 twos per element, so
//    every partial product is +-2^k, exactly representable.
//  - max / min: no arithmetic, any representable inputs.
//  - avg: integer types use non-negative inputs as for sum (the library
//    divides the sum by nranks with integer division); float types use
//    v_r = c + w_r - w_{(r+1) mod n}, whose sum is exactly n*c, so the one
//    final division gives the integer c.
//  - premulsum: rank r's scalar is 1 or 2 (r odd) and the inputs are at most
//    half what sum allows, so every partial sum of products is as exact as
//    sum's; where that half is 0 (few exact integers, many ranks) the
//    scalars are all 1 and the sparse inputs of sum are used.
//  - data movement (broadcast, all-gather, all-to-all, send/recv): any
//    representable value, varying with rank and index so that a misplaced
//    block shows.
// No expected value equals the poison of codec.h, so an element the library
// never wrote is always counted wrong.
#pragma once

#include <braid/braid.h>

#include <cstdint>
#include <optional>

namespace braid::perf {

struct ValuePlan {
  enum class Kind { kData, kSum, kSumSparse, kProd, kMinMax, kAvgInt, kAvgFloat, kAvgSparse };
  braidDataType_t type = braidFloat32;
  braidRedOp_t op = braidSum;  // meaningful when kind != kData
  Kind kind = Kind::kData;
  int nranks = 1;
  int64_t lo = 0, hi = 0;  // kData, kSum, kMinMax, kAvgInt: inputs in [lo, hi]
  int64_t limit = 0;       // kSumSparse: ones per element, at most this many
  int maxTwos = 0;         // kProd
  int64_t centre = 0;      // kAvgFloat: |c| <= centre
  int64_t wobble = 0;      // kAvgFloat: w in [0, wobble]
  bool scaled = false;     // premulsum with scalars 1, 2, 1, ... (else all 1)
};

// Rank r's scalar of a premulsum plan.
int64_t preMulScalar(const ValuePlan& plan, int rank);

// The largest magnitude braid-perf puts in an element of this type: the
// type's exact-integer limit, capped at 2^20 (plenty to catch misplaced
// data), and one below the maximum of unsigned types (their poison).
int64_t genLimit(braidDataType_t type);

// op == std::nullopt: a data-movement collective.
ValuePlan makePlan(braidDataType_t type, std::optional<braidRedOp_t> op, int nranks);

// The input of rank at global element index (see collectives.cc for what
// "global" means per collective). Always isRepresentable(plan.type, ...).
int64_t inputValue(const ValuePlan& plan, int rank, uint64_t index);

// plan.op over inputValue(plan, r, index) for every rank r, computed exactly.
int64_t reducedValue(const ValuePlan& plan, uint64_t index);

}  // namespace braid::perf
