// Device memory for the integration tests, through the same CUDA module
// libbraid loads (BRAID_CUDA_MODULE): the real libbraid-cuda.so on a GPU host,
// or fake_cuda_module.so anywhere, whose "device memory" is host memory it
// keeps a registry of, so that the staging path runs in CI without a GPU.
#pragma once

#include <cstddef>
#include <string>

namespace braid::itest {

class DeviceMemory {
 public:
  // Opens the module BRAID_CUDA_MODULE names (in the calling process); false
  // with *why when it cannot, or when it sees no device.
  static bool open(const DeviceMemory** out, std::string* why);

  void* alloc(size_t bytes) const;  // aborts the test process on failure
  void release(void* p) const;
  // Synchronous copy in either direction (host <-> device).
  void copy(void* dst, const void* src, size_t bytes) const;
  // A CUDA stream of the current device, and work on it, for ordering tests.
  void* createStream() const;
  void destroyStream(void* stream) const;
  void copyAsync(void* dst, const void* src, size_t bytes, void* stream) const;
  void synchronize(void* stream) const;
  // dst = a + b over float32 with the module's reduction kernel; false when
  // the module has no kernels (the fake).
  bool addFloats(float* dst, const float* a, const float* b, size_t count, void* stream) const;
  // The module's stream wait mechanism so far ("" before any).
  std::string flagWaitMechanism() const;

 private:
  const void* table_ = nullptr;  // kernels::DeviceModule, kept out of this header
};

// Module paths of this build (compile definitions), "" when not built.
std::string realCudaModulePath();
std::string fakeCudaModulePath();

}  // namespace braid::itest
