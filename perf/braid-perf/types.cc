#include "types.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace braid::perf {

namespace {

constexpr int64_t kInt64Max = INT64_MAX;

// Indexed by braidDataType_t.
const std::array<TypeInfo, braidNumTypes> kTypes = {{
    {braidInt8, "int8", 1, true, false, 127, 6},
    {braidUint8, "uint8", 1, false, false, 255, 7},
    {braidInt32, "int32", 4, true, false, INT32_MAX, 30},
    {braidUint32, "uint32", 4, false, false, UINT32_MAX, 31},
    {braidInt64, "int64", 8, true, false, kInt64Max, 62},
    {braidUint64, "uint64", 8, false, false, kInt64Max, 62},  // capped to what int64_t holds
    {braidFloat16, "half", 2, true, true, 2048, 15},
    {braidFloat32, "float", 4, true, true, 1 << 24, 62},            // 2^127 really; values are int64_t
    {braidFloat64, "double", 8, true, true, int64_t{1} << 53, 62},  // capped: int64_t values
    {braidBfloat16, "bfloat16", 2, true, true, 256, 62},            // likewise
    {braidFloat8e4m3, "f8e4m3", 1, true, true, 16, 8},              // max finite 448
    {braidFloat8e5m2, "f8e5m2", 1, true, true, 8, 15},              // max finite 57344
}};

const std::array<std::pair<const char*, braidDataType_t>, 9> kTypeAliases = {{
    {"char", braidInt8},
    {"int", braidInt32},
    {"float16", braidFloat16},
    {"fp16", braidFloat16},
    {"float32", braidFloat32},
    {"fp32", braidFloat32},
    {"float64", braidFloat64},
    {"fp64", braidFloat64},
    {"bf16", braidBfloat16},
}};

// Indexed by op; the last is kPreMulSumOp.
const std::array<const char*, braidNumOps + 1> kOpNames = {"sum", "prod", "max", "min", "avg", "premulsum"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

const TypeInfo& typeInfo(braidDataType_t type) { return kTypes.at(static_cast<size_t>(type)); }

const std::vector<braidDataType_t>& allTypes() {
  static const std::vector<braidDataType_t> types = [] {
    std::vector<braidDataType_t> v;
    for (const TypeInfo& t : kTypes) v.push_back(t.type);
    return v;
  }();
  return types;
}

std::optional<braidDataType_t> parseType(const std::string& name) {
  const std::string n = lower(name);
  for (const TypeInfo& t : kTypes) {
    if (n == t.name) return t.type;
  }
  for (const auto& [alias, type] : kTypeAliases) {
    if (n == alias) return type;
  }
  return std::nullopt;
}

const char* opName(braidRedOp_t op) { return kOpNames.at(static_cast<size_t>(op)); }

const std::vector<braidRedOp_t>& allOps() {
  static const std::vector<braidRedOp_t> ops = {braidSum, braidProd, braidMax,
                                                braidMin, braidAvg,  kPreMulSumOp};
  return ops;
}

std::optional<braidRedOp_t> parseOp(const std::string& name) {
  const std::string n = lower(name);
  for (size_t i = 0; i < kOpNames.size(); ++i) {
    if (n == kOpNames[i]) return static_cast<braidRedOp_t>(i);
  }
  if (n == "mulsum") return kPreMulSumOp;  // nccl-tests' name
  return std::nullopt;
}

}  // namespace braid::perf
