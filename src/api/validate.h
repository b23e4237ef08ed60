// Argument checks shared by the C entry points. Each returns InvalidArgument /
// InvalidUsage with a message naming the function and the argument, so that
// braidGetLastError tells the user exactly what to fix. They only read.
//
// Every collective runs them, so the test itself is inline and costs a compare
// or two; only a failure calls out to build its message (validate.cc).
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <cstdint>

#include "api/handles.h"
#include "api/user_ops.h"
#include "base/status.h"
#include "base/types.h"

namespace braid::api {

// The messages, one per check, out of line and off the hot path.
namespace failed {
[[gnu::cold]] Status comm(const char* fn);
[[gnu::cold]] Status dataType(const char* fn, braidDataType_t dtype);
[[gnu::cold]] Status redOp(const char* fn, braidRedOp_t op);
[[gnu::cold]] Status bytes(const char* fn, const char* what, size_t count, braidDataType_t dtype,
                           size_t multiple);
[[gnu::cold]] Status buffer(const char* fn, const char* name, size_t bytes);
[[gnu::cold]] Status rank(const char* fn, const char* name, int value, int nranks);
[[gnu::cold]] Status overlap(const char* fn, const char* inPlaceRule);
}  // namespace failed

inline Status checkComm(const char* fn, braidComm_t comm) {
  if (comm == nullptr || !comm->impl) [[unlikely]]
    return failed::comm(fn);
  return Status::ok();
}

inline Status checkDataType(const char* fn, braidDataType_t dtype) {
  if (!isValidDataType(static_cast<int>(dtype))) [[unlikely]]
    return failed::dataType(fn, dtype);
  return Status::ok();
}

// A built-in op, or one made on comm (api/user_ops.h) for dtype, which must be
// valid: *out says how the call runs it.
[[gnu::cold]] Status resolveMadeOp(const char* fn, braidComm_t comm, braidRedOp_t op, braidDataType_t dtype,
                                   ResolvedOp* out);
inline Status checkRedOp(const char* fn, braidComm_t comm, braidRedOp_t op, braidDataType_t dtype,
                         ResolvedOp* out) {
  if (!isValidRedOp(static_cast<int>(op))) [[unlikely]]
    return resolveMadeOp(fn, comm, op, dtype, out);
  out->op = static_cast<RedOp>(op);
  return Status::ok();
}

// *bytes = count * elemSize(dtype) * multiple, or InvalidArgument on overflow
// (anything over PTRDIFF_MAX cannot be a real buffer). dtype must be valid.
inline Status checkBytes(const char* fn, const char* what, size_t count, braidDataType_t dtype,
                         size_t multiple, size_t* bytes) {
  size_t total = 0;
  if (__builtin_mul_overflow(count, dataTypeSize(static_cast<DataType>(dtype)), &total) ||
      __builtin_mul_overflow(total, multiple, &total) || total > static_cast<size_t>(PTRDIFF_MAX))
      [[unlikely]]
    return failed::bytes(fn, what, count, dtype, multiple);
  *bytes = total;
  return Status::ok();
}

// A buffer of `bytes` bytes is needed: it must not be NULL unless bytes == 0.
inline Status checkBuffer(const char* fn, const char* name, const void* p, size_t bytes) {
  if (p == nullptr && bytes > 0) [[unlikely]]
    return failed::buffer(fn, name, bytes);
  return Status::ok();
}

inline Status checkRank(const char* fn, const char* name, int value, int nranks) {
  if (value < 0 || value >= nranks) [[unlikely]]
    return failed::rank(fn, name, value, nranks);
  return Status::ok();
}

// The two regions must be disjoint unless `inPlace` (the documented in-place
// layout) holds.
inline Status checkOverlap(const char* fn, const void* a, size_t aBytes, const void* b, size_t bBytes,
                           bool inPlace, const char* inPlaceRule) {
  if (inPlace || aBytes == 0 || bBytes == 0) return Status::ok();
  const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  if (pa < pb + bBytes && pb < pa + aBytes) [[unlikely]]
    return failed::overlap(fn, inPlaceRule);
  return Status::ok();
}

}  // namespace braid::api
