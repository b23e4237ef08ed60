// Process-wide CUDA resources for staging device buffers (device_staging.h):
// page-locked host blocks, copy streams, events and the flags a wrapped CUDA
// stream waits on. Creating any of these costs microseconds to milliseconds
// (page-locking is a system call per page range), far more than a small
// collective, so they are made on first need and reused by every later call.
//
// Everything here lives until the process ends and is never destroyed: CUDA
// objects released from a static destructor would race the runtime's own
// teardown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "kernels/device_module.h"

namespace braid::core {

// A CUDA failure as a Status (kCudaError), naming what was being done.
Status cudaFailure(const kernels::DeviceModule& m, int err, const std::string& what);

// Selects a device on the calling thread for a scope and puts the thread's
// previous choice back afterwards: a collective called from the user's thread
// must not change which device that thread works on.
class DeviceScope {
 public:
  DeviceScope(const kernels::DeviceModule& m, int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const Status& status() const { return status_; }

 private:
  const kernels::DeviceModule& m_;
  int previous_ = -1;
  Status status_;
};

// Page-locked host memory of at least `bytes`, for one staged call.
class PinnedBlock {
 public:
  PinnedBlock() = default;
  ~PinnedBlock() { reset(); }
  PinnedBlock(PinnedBlock&& other) noexcept : data_(other.data_), capacity_(other.capacity_) {
    other.data_ = nullptr;
  }
  PinnedBlock& operator=(PinnedBlock&& other) noexcept;
  static Status acquire(const kernels::DeviceModule& m, size_t bytes, PinnedBlock* out);
  uint8_t* data() const { return data_; }
  size_t capacity() const { return data_ ? capacity_ : 0; }
  void reset();  // back to the pool

 private:
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

// A copy stream or an event of one device, back to its pool when released.
// Must be acquired and released with that device current.
Status acquireStream(const kernels::DeviceModule& m, int device, void** stream);
void releaseStream(int device, void* stream);
Status acquireEvent(const kernels::DeviceModule& m, int device, void** event);
void releaseEvent(int device, void* event);

// A 32-bit flag in mapped page-locked memory, written by the host and waited
// on by a CUDA stream (DeviceModule::streamWaitFlag). A released flag keeps
// its value and the next owner counts on from it, so a wait left on some
// stream from an earlier owner can only be released early, never held.
Status acquireFlag(const kernels::DeviceModule& m, uint32_t** flag);
void releaseFlag(uint32_t* flag);

}  // namespace braid::core
