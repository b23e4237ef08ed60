#include "api/validate.h"

#include <cstdint>
#include <string>

#include "api/handles.h"

namespace braid::api {

static std::string in(const char* fn) { return std::string(fn) + ": "; }

Status checkComm(const char* fn, braidComm_t comm) {
  if (comm == nullptr || !comm->impl) return invalidArgument(in(fn) + "comm is NULL");
  return Status::ok();
}

Status checkDataType(const char* fn, braidDataType_t dtype) {
  if (!isValidDataType(static_cast<int>(dtype)))
    return invalidArgument(in(fn) + "datatype " + std::to_string(static_cast<int>(dtype)) +
                           " is not a braidDataType_t (0.." + std::to_string(kNumDataTypes - 1) + ")");
  return Status::ok();
}

Status checkRedOp(const char* fn, braidRedOp_t op) {
  if (!isValidRedOp(static_cast<int>(op)))
    return invalidArgument(in(fn) + "op " + std::to_string(static_cast<int>(op)) +
                           " is not a braidRedOp_t (0.." + std::to_string(kNumRedOps - 1) + ")");
  return Status::ok();
}

Status checkBytes(const char* fn, const char* what, size_t count, braidDataType_t dtype,
                  size_t multiple, size_t* bytes) {
  size_t total = 0;
  if (__builtin_mul_overflow(count, dataTypeSize(static_cast<DataType>(dtype)), &total) ||
      __builtin_mul_overflow(total, multiple, &total) || total > static_cast<size_t>(PTRDIFF_MAX))
    return invalidArgument(in(fn) + what + " = " + std::to_string(count) + " elements of " +
                           dataTypeName(static_cast<DataType>(dtype)) +
                           (multiple > 1 ? " x " + std::to_string(multiple) + " ranks" : "") +
                           " overflows the address space");
  *bytes = total;
  return Status::ok();
}

Status checkBuffer(const char* fn, const char* name, const void* p, size_t bytes) {
  if (p == nullptr && bytes > 0)
    return invalidArgument(in(fn) + name + " is NULL but " + std::to_string(bytes) + " bytes are needed");
  return Status::ok();
}

Status checkRank(const char* fn, const char* name, int value, int nranks) {
  if (value < 0 || value >= nranks)
    return invalidArgument(in(fn) + name + " = " + std::to_string(value) + " is outside [0, " +
                           std::to_string(nranks) + ")");
  return Status::ok();
}

Status checkOverlap(const char* fn, const void* a, size_t aBytes, const void* b, size_t bBytes,
                    bool inPlace, const char* inPlaceRule) {
  if (inPlace || aBytes == 0 || bBytes == 0) return Status::ok();
  auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  if (pa < pb + bBytes && pb < pa + aBytes)
    return invalidArgument(in(fn) + "sendbuff and recvbuff overlap without being in place (" +
                           inPlaceRule + ")");
  return Status::ok();
}

}  // namespace braid::api
