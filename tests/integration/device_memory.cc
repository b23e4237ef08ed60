#include "device_memory.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "base/types.h"
#include "kernels/device_module.h"

namespace braid::itest {
namespace {

const kernels::DeviceModule& table(const void* t) { return *static_cast<const kernels::DeviceModule*>(t); }

[[noreturn]] void die(const char* what, int err, const kernels::DeviceModule& m) {
  fprintf(stderr, "device memory: %s failed: %s\n", what, m.errorString(err));
  abort();
}

}  // namespace

bool DeviceMemory::open(const DeviceMemory** out, std::string* why) {
  const char* path = getenv("BRAID_CUDA_MODULE");
  if (path == nullptr || *path == '\0') {
    *why = "BRAID_CUDA_MODULE is not set";
    return false;
  }
  // The same handle libbraid gets (dlopen of one file is one instance), so
  // the fake module's registry is shared with braid's staging.
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    *why = std::string("dlopen ") + path + ": " + dlerror();
    return false;
  }
  auto entry = reinterpret_cast<kernels::DeviceModuleEntry>(dlsym(handle, kernels::kDeviceModuleEntryName));
  const kernels::DeviceModule* m = entry ? entry() : nullptr;
  if (m == nullptr || m->abi != kernels::kDeviceModuleAbi) {
    *why = std::string(path) + " is not a CUDA module of this build";
    return false;
  }
  int count = 0;
  if (m->deviceCount(&count) != 0 || count == 0) {
    *why = "no CUDA device";
    return false;
  }
  static DeviceMemory memory;
  memory.table_ = m;
  *out = &memory;
  return true;
}

void* DeviceMemory::alloc(size_t bytes) const {
  void* p = nullptr;
  if (int err = table(table_).alloc(&p, bytes ? bytes : 1); err != 0) die("alloc", err, table(table_));
  return p;
}

void DeviceMemory::release(void* p) const {
  if (p) (void)table(table_).release(p);
}

void DeviceMemory::copy(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  const kernels::DeviceModule& m = table(table_);
  if (int err = m.copy(dst, src, bytes, nullptr); err != 0) die("copy", err, m);
  if (int err = m.synchronize(nullptr); err != 0) die("synchronize", err, m);
}

void* DeviceMemory::createStream() const {
  void* s = nullptr;
  if (int err = table(table_).streamCreate(&s); err != 0) die("streamCreate", err, table(table_));
  return s;
}

void DeviceMemory::destroyStream(void* stream) const { (void)table(table_).streamDestroy(stream); }

void DeviceMemory::copyAsync(void* dst, const void* src, size_t bytes, void* stream) const {
  if (int err = table(table_).copy(dst, src, bytes, stream); err != 0) die("copy", err, table(table_));
}

void DeviceMemory::synchronize(void* stream) const {
  if (int err = table(table_).synchronize(stream); err != 0) die("synchronize", err, table(table_));
}

bool DeviceMemory::addFloats(float* dst, const float* a, const float* b, size_t count, void* stream) const {
  return table(table_).reduce(dst, a, b, count, static_cast<int>(DataType::kFloat32),
                              static_cast<int>(RedOp::kSum), stream) == 0;
}

std::string DeviceMemory::flagWaitMechanism() const { return table(table_).flagWaitMechanism(); }

std::string realCudaModulePath() {
#ifdef BRAID_REAL_CUDA_MODULE
  return BRAID_REAL_CUDA_MODULE;
#else
  return "";
#endif
}

std::string fakeCudaModulePath() {
#ifdef BRAID_FAKE_CUDA_MODULE
  return BRAID_FAKE_CUDA_MODULE;
#else
  return "";
#endif
}

}  // namespace braid::itest
