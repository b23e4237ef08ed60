// The boundary between libbraid and its CUDA module (libbraid-cuda.so).
//
// libbraid never links the CUDA runtime: a host without a GPU driver (or a
// build without the toolkit) must load and run braid unchanged. Everything
// that touches CUDA lives in the module, which libbraid opens with dlopen()
// the first time device memory could matter (device_loader.h) and reaches
// through this one table of plain C functions. The module's kernels include
// the same scalar code as the CPU kernels (convert_impl.h, reduce_ops.h,
// compiled for the device), so GPU and CPU results agree bit for bit.
//
// Every function returns 0 on success or a cudaError_t value, which
// errorString() describes. Streams are cudaStream_t passed as void* (nullptr:
// the legacy default stream). dtype / op are braid's DataType / RedOp values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::kernels {

// Bumped whenever the table changes shape; the loader refuses other versions
// (a libbraid-cuda.so from another build must not be called through a
// mismatched table).
constexpr uint32_t kDeviceModuleAbi = 4;

// cudaIpcMemHandle_t, carried as bytes between processes.
constexpr size_t kIpcHandleBytes = 64;

// codec.h's CodecParams as plain fields: format (WireFormat), hostType
// (DataType: Float32 or Bfloat16), lossScale (fp16), blockSize (fp8). The
// caller checks them (checkCodecParams) first.
struct DeviceCodec {
  int format;
  int hostType;
  float lossScale;
  uint32_t blockSize;
};

struct DeviceModule {
  uint32_t abi;
  const char* (*errorString)(int err);
  int (*deviceCount)(int* count);
  // *device: the device owning p when p is device or managed memory, -1 when
  // p is host memory (pageable, pinned or unknown to CUDA).
  int (*pointerDevice)(const void* p, int* device);
  int (*alloc)(void** p, size_t bytes);
  int (*release)(void* p);
  // cudaMemcpyDefault: either side may be host or device.
  int (*copy)(void* dst, const void* src, size_t bytes, void* stream);
  int (*synchronize)(void* stream);
  // dst = a op b elementwise (reduce.h's semantics; dst may alias a or b exactly).
  int (*reduce)(void* dst, const void* a, const void* b, size_t count, int dtype, int op, void* stream);
  // data /= divisor (reduce.h's divideBy semantics).
  int (*divide)(void* data, size_t count, int dtype, uint64_t divisor, void* stream);
  // codec.h's encode / decode with the same layout and bits; count values.
  int (*encode)(const DeviceCodec* codec, const void* src, size_t count, void* dst, void* stream);
  int (*decode)(const DeviceCodec* codec, const void* src, size_t count, void* dst, void* stream);

  // What staging device buffers through host memory needs (core/device_staging.h).
  // The calling thread's current device (cudaGetDevice / cudaSetDevice).
  int (*getDevice)(int* device);
  int (*setDevice)(int device);
  // Page-locked host memory usable from every device (cudaHostAllocPortable),
  // also mapped into the devices' address space when `mapped` is nonzero.
  int (*hostAlloc)(void** p, size_t bytes, int mapped);
  int (*hostRelease)(void* p);
  // A stream that does not synchronise with the legacy default stream.
  int (*streamCreate)(void** stream);
  int (*streamDestroy)(void* stream);
  // Events without timing (the cheap kind): record, wait on the host, or
  // make a stream wait for one.
  int (*eventCreate)(void** event);
  int (*eventDestroy)(void* event);
  int (*eventRecord)(void* event, void* stream);
  int (*eventSynchronize)(void* event);
  int (*streamWaitEvent)(void* stream, void* event);
  // Makes `stream` wait, without blocking the calling thread, until
  // (int32_t)(*flag - value) >= 0, where flag lies in memory from
  // hostAlloc(mapped) and the host writes it. cuStreamWaitValue32 where the
  // driver offers it, else a host function on the stream that polls the flag.
  int (*streamWaitFlag)(void* stream, const uint32_t* flag, uint32_t value);
  // How streamWaitFlag waits in this process: "stream memory operation",
  // "host function", or "" before its first use.
  const char* (*flagWaitMechanism)();

  // CUDA IPC, for ranks of one host that reach each other's device memory
  // (core/device_direct.h). handle: kIpcHandleBytes for the allocation that
  // starts at p (cudaIpcGetMemHandle). Open maps a handle of another process
  // into this one (peer access enabled as needed); close unmaps it.
  int (*ipcGetHandle)(void* p, void* handle);
  int (*ipcOpenHandle)(const void* handle, void** p);
  int (*ipcCloseHandle)(void* p);
  // Loads every reduce and divide kernel for the current device now. CUDA
  // loads kernels lazily, at their first launch, under locks that a thread
  // blocked in another CUDA call may hold; callers that will launch from a
  // braid worker (core/device_direct.h) preload on the user's thread.
  int (*preloadKernels)();
};

// The one symbol the module exports.
using DeviceModuleEntry = const DeviceModule* (*)();
constexpr const char* kDeviceModuleEntryName = "braidDeviceModule";
constexpr const char* kDeviceModuleFileName = "libbraid-cuda.so";

}  // namespace braid::kernels
