// Argument checks shared by the C entry points. Each returns InvalidArgument /
// InvalidUsage with a message naming the function and the argument, so that
// braidGetLastError tells the user exactly what to fix. They only read.
#pragma once

#include <braid/braid.h>

#include <cstddef>

#include "base/status.h"
#include "base/types.h"

namespace braid::api {

Status checkComm(const char* fn, braidComm_t comm);
Status checkDataType(const char* fn, braidDataType_t dtype);
Status checkRedOp(const char* fn, braidRedOp_t op);
// *bytes = count * elemSize(dtype) * multiple, or InvalidArgument on overflow
// (anything over PTRDIFF_MAX cannot be a real buffer).
Status checkBytes(const char* fn, const char* what, size_t count, braidDataType_t dtype,
                  size_t multiple, size_t* bytes);
// A buffer of `bytes` bytes is needed: it must not be NULL unless bytes == 0.
Status checkBuffer(const char* fn, const char* name, const void* p, size_t bytes);
Status checkRank(const char* fn, const char* name, int value, int nranks);
// The two regions must be disjoint unless `inPlace` (the documented in-place
// layout) holds.
Status checkOverlap(const char* fn, const void* a, size_t aBytes, const void* b, size_t bBytes,
                    bool inPlace, const char* inPlaceRule);

}  // namespace braid::api
