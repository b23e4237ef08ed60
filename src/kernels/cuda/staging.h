// The module's runtime calls for staging device buffers through host memory
// (device_module.h, second half of the table).
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::kernels::cuda {

int getDevice(int* device);
int setDevice(int device);
int hostAlloc(void** p, size_t bytes, int mapped);
int hostRelease(void* p);
int streamCreate(void** stream);
int streamDestroy(void* stream);
int eventCreate(void** event);
int eventDestroy(void* event);
int eventRecord(void* event, void* stream);
int eventSynchronize(void* event);
int streamWaitEvent(void* stream, void* event);
int streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value);
const char* flagWaitMechanism();

}  // namespace braid::kernels::cuda
