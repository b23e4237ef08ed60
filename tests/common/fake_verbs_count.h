// What the tests' fake libibverbs (tests/unit/transports/fake_verbs), which
// braid opened from `library` (BRAID_IB_LIBRARY), saw this process do.
#pragma once

#include <dlfcn.h>

#include <cstdint>

namespace braid::test {

// ibv_reg_mr calls so far; 0 before braid opened the library.
inline uint64_t fakeVerbsRegistrations(const char* library) {
  void* lib = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return 0;
  auto count = reinterpret_cast<uint64_t (*)()>(dlsym(lib, "braid_fake_verbs_registrations"));
  const uint64_t n = count ? count() : 0;
  dlclose(lib);
  return n;
}

// The last queue pair transitions' path: service level, traffic class,
// global route (0/1), timeout, retry count; -1 where none happened yet.
struct FakeVerbsPath {
  int serviceLevel = -1, trafficClass = -1, global = -1, timeout = -1, retryCount = -1;
};
inline FakeVerbsPath fakeVerbsLastPath(const char* library) {
  FakeVerbsPath path;
  void* lib = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return path;
  if (auto get = reinterpret_cast<void (*)(int*)>(dlsym(lib, "braid_fake_verbs_last_path"))) {
    int v[5];
    get(v);
    path = {v[0], v[1], v[2], v[3], v[4]};
  }
  dlclose(lib);
  return path;
}

// Runs fn(arg) once, on this process's next ibv_poll_cq that finds nothing,
// just after that poll; false when the library is not loaded.
inline bool fakeVerbsAfterEmptyPoll(const char* library, void (*fn)(void*), void* arg) {
  void* lib = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  auto arm =
      reinterpret_cast<void (*)(void (*)(void*), void*)>(dlsym(lib, "braid_fake_verbs_after_empty_poll"));
  if (arm) arm(fn, arg);
  dlclose(lib);
  return arm != nullptr;
}

}  // namespace braid::test
