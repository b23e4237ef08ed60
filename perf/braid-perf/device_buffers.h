// braid-perf's only contact with the CUDA runtime (--memory device): picking a
// device, device buffers, copies and one CUDA stream, behind plain pointers so
// that the rest of braid-perf compiles without CUDA headers.
// device_buffers_cuda.cc implements it over cudart_static when braid is built
// with CUDA (BRAID_HAVE_CUDA); device_buffers_none.cc otherwise, where every
// call fails with "braid-perf was built without CUDA".
//
// Every function returning a string returns "" on success, else a message
// for the user naming the CUDA call and its error. All are called from the
// rank's main thread only.
#pragma once

#include <cstddef>
#include <string>

namespace braid::perf::device {

// Makes device localRank % (device count) current (one GPU: every rank on
// device 0). *description: "cuda:N <device name>" for the rank lines.
std::string select(int localRank, std::string* description);

// cudaMalloc / cudaFree on the current device.
std::string allocate(size_t bytes, void** ptr);
void release(void* ptr);

// Synchronous copies. upload returns once the bytes are in device memory
// (a pageable cudaMemcpy may return before its DMA lands, and the library
// may read the buffer from a stream of its own); download waits for the
// device to be idle first, then copies.
std::string upload(void* deviceDst, const void* hostSrc, size_t bytes);
std::string download(void* hostDst, const void* deviceSrc, size_t bytes);

// A cudaStream_t (as void*) for braidStreamWrapCuda.
std::string streamCreate(void** stream);
std::string streamSynchronize(void* stream);
void streamDestroy(void* stream);

}  // namespace braid::perf::device
