// What braid-perf knows about each datatype and reduction op: names as
// nccl-tests prints them, sizes, and the limits within which small integers are
// exactly representable (the basis of the check, see values.h).
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braid::perf {

struct TypeInfo {
  braidDataType_t type;
  const char* name;  // nccl-tests' column name: "float", "half", "bfloat16", ...
  size_t size;       // bytes per element
  bool isSigned;     // floats count as signed
  bool isFloat;
  // Every integer k with |k| <= exactLimit (0 <= k for unsigned) is exactly
  // representable: 2^(mantissa bits + 1) for floats, the max value for ints.
  int64_t exactLimit;
  // 2^maxPow2 (and -2^maxPow2 for signed types) is exactly representable.
  int maxPow2;
};

const TypeInfo& typeInfo(braidDataType_t type);
const std::vector<braidDataType_t>& allTypes();  // braid's order (NCCL's)

// Accepts the nccl-tests names plus common aliases (float32, fp16, bf16, ...),
// case-insensitive. std::nullopt when unknown.
std::optional<braidDataType_t> parseType(const std::string& name);

// braid-perf's name for a PreMulSum: each call uses one made on the
// communicator with the rank's scalar (values.h's preMulScalar).
constexpr braidRedOp_t kPreMulSumOp = static_cast<braidRedOp_t>(braidNumOps);

const char* opName(braidRedOp_t op);  // "sum", "prod", "max", "min", "avg", "premulsum"
const std::vector<braidRedOp_t>& allOps();
std::optional<braidRedOp_t> parseOp(const std::string& name);

}  // namespace braid::perf
