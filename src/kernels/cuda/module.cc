// libbraid-cuda.so's table (device_module.h): thin wrappers over the CUDA
// runtime plus the kernels of this folder.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/staging.h"
#include "kernels/device_module.h"

namespace braid::kernels::cuda {
namespace {

const char* errorString(int err) { return cudaGetErrorString(static_cast<cudaError_t>(err)); }

int deviceCount(int* count) {
  *count = 0;
  return static_cast<int>(cudaGetDeviceCount(count));
}

int pointerDevice(const void* p, int* device) {
  *device = -1;
  cudaPointerAttributes attr{};
  cudaError_t err = cudaPointerGetAttributes(&attr, p);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) *device = attr.device;
  return 0;
}

int alloc(void** p, size_t bytes) { return static_cast<int>(cudaMalloc(p, bytes)); }
int release(void* p) { return static_cast<int>(cudaFree(p)); }
int copy(void* dst, const void* src, size_t bytes, void* stream) {
  return static_cast<int>(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
}
int synchronize(void* stream) { return static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream))); }

static_assert(sizeof(cudaIpcMemHandle_t) == kIpcHandleBytes, "device_module.h's IPC handle size");
int ipcGetHandle(void* p, void* handle) {
  return static_cast<int>(cudaIpcGetMemHandle(static_cast<cudaIpcMemHandle_t*>(handle), p));
}
int ipcOpenHandle(const void* handle, void** p) {
  cudaIpcMemHandle_t h;
  __builtin_memcpy(&h, handle, sizeof(h));
  return static_cast<int>(cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess));
}
int ipcCloseHandle(void* p) { return static_cast<int>(cudaIpcCloseMemHandle(p)); }

const DeviceModule kModule = {kDeviceModuleAbi,
                              errorString,
                              deviceCount,
                              pointerDevice,
                              alloc,
                              release,
                              copy,
                              synchronize,
                              reduce,
                              divide,
                              encode,
                              decode,
                              getDevice,
                              setDevice,
                              hostAlloc,
                              hostRelease,
                              streamCreate,
                              streamDestroy,
                              eventCreate,
                              eventDestroy,
                              eventRecord,
                              eventSynchronize,
                              streamWaitEvent,
                              streamWaitFlag,
                              flagWaitMechanism,
                              ipcGetHandle,
                              ipcOpenHandle,
                              ipcCloseHandle,
                              preloadReduceKernels};

}  // namespace
}  // namespace braid::kernels::cuda

extern "C" __attribute__((visibility("default"))) const braid::kernels::DeviceModule* braidDeviceModule() {
  return &braid::kernels::cuda::kModule;
}
