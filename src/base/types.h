// Datatypes and reduction ops as used inside braid. The numbering matches
// braidDataType_t / braidRedOp_t (static_asserts in src/api keep them in step),
// so the C boundary converts with a range check and a cast.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid {

enum class DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
  kFloat8e4m3 = 10,
  kFloat8e5m2 = 11,
};
constexpr int kNumDataTypes = 12;

enum class RedOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
constexpr int kNumRedOps = 5;

constexpr size_t dataTypeSize(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFloat8e4m3:
    case DataType::kFloat8e5m2: return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16: return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64: return 8;
  }
  return 0;
}

const char* dataTypeName(DataType t);  // "float32", "bfloat16", ... (nccl-tests style names in perf)
const char* redOpName(RedOp op);       // "sum", "prod", "max", "min", "avg"
inline bool isValidDataType(int t) { return t >= 0 && t < kNumDataTypes; }
inline bool isValidRedOp(int op) { return op >= 0 && op < kNumRedOps; }
constexpr bool isFloatingPoint(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kFloat32 || t == DataType::kFloat64 ||
         t == DataType::kBfloat16 || t == DataType::kFloat8e4m3 || t == DataType::kFloat8e5m2;
}

}  // namespace braid
