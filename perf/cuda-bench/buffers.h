// Device memory for the timed kernels, and the values put in it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/types.h"

namespace braid::cudabench {

// cudaMalloc'd bytes (256-byte aligned), freed with the object.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) { status_ = cudaMalloc(&p_, bytes ? bytes : 1); }
  ~DeviceMemory() {
    if (p_) cudaFree(p_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  cudaError_t status() const { return status_; }
  uint8_t* get() const { return static_cast<uint8_t*>(p_); }

 private:
  void* p_ = nullptr;
  cudaError_t status_;
};

// Host values of `type` filling `bytes`: normal draws (mean 0, sd 1) rounded
// to the type for floats, uniform bits for integers. Deterministic per seed.
std::vector<uint8_t> sampleValues(DataType type, size_t bytes, uint64_t seed);

// Three buffers of `bytes` (plus room for the longest wire encoding): a and b
// the inputs, d the output.
class Buffers {
 public:
  explicit Buffers(size_t bytes);
  cudaError_t status() const;
  size_t bytes() const { return bytes_; }
  uint8_t* a() const { return a_.get(); }
  uint8_t* b() const { return b_.get(); }
  uint8_t* d() const { return d_.get(); }
  // Fills a and b with sampleValues(type) (different seeds), unless they hold
  // them already. Synchronous.
  cudaError_t fill(DataType type);

 private:
  size_t bytes_;
  DeviceMemory a_, b_, d_;
  int filled_ = -1;  // the DataType a and b hold
};

}  // namespace braid::cudabench
