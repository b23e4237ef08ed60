// How many ibv_reg_mr calls this process made through the tests' fake
// libibverbs (tests/unit/transports/fake_verbs), which braid opened from
// `library` (BRAID_IB_LIBRARY); 0 before braid opened it.
#pragma once

#include <dlfcn.h>

#include <cstdint>

namespace braid::test {

inline uint64_t fakeVerbsRegistrations(const char* library) {
  void* lib = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return 0;
  auto count = reinterpret_cast<uint64_t (*)()>(dlsym(lib, "braid_fake_verbs_registrations"));
  const uint64_t n = count ? count() : 0;
  dlclose(lib);
  return n;
}

}  // namespace braid::test
