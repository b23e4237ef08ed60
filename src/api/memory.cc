// C entry points of braid's shareable host memory (base/shareable_memory.h).
#include <braid/braid.h>

#include <string>

#include "api/handles.h"
#include "base/shareable_memory.h"

namespace api = braid::api;

extern "C" {

braidResult_t braidMemAlloc(void** ptr, size_t size) {
  if (ptr == nullptr) return api::report(nullptr, braid::invalidArgument("braidMemAlloc: ptr is NULL"));
  void* p = nullptr;
  braid::Status st = braid::allocateShareable(size, &p);
  if (!st.isOk()) return api::report(nullptr, st.prefix("braidMemAlloc"));
  *ptr = p;
  return braidSuccess;
}

braidResult_t braidMemFree(void* ptr) {
  if (ptr == nullptr) return api::report(nullptr, braid::invalidArgument("braidMemFree: ptr is NULL"));
  return api::report(nullptr, braid::freeShareable(ptr).prefix("braidMemFree"));
}

}  // extern "C"
