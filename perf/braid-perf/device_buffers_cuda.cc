// device_buffers.h over the CUDA runtime (cudart_static: braid-perf needs no
// libcudart at run time). Device memory and streams live in the device's
// primary context, which the runtime libbraid's CUDA module links shares, so
// the pointers and the stream mean the same thing on both sides.
#include <cuda_runtime_api.h>

#include "device_buffers.h"

namespace braid::perf::device {

namespace {

std::string failed(const char* call, cudaError_t err) {
  return std::string(call) + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
}

}  // namespace

std::string select(int localRank, std::string* description) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return failed("cudaGetDeviceCount", err);
  if (count < 1) return "cudaGetDeviceCount: no CUDA device";
  const int dev = (localRank < 0 ? 0 : localRank) % count;
  if ((err = cudaSetDevice(dev)) != cudaSuccess) return failed("cudaSetDevice", err);
  cudaDeviceProp prop{};
  if ((err = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess)
    return failed("cudaGetDeviceProperties", err);
  *description = "cuda:" + std::to_string(dev) + " " + prop.name;
  return "";
}

std::string allocate(size_t bytes, void** ptr) {
  cudaError_t err = cudaMalloc(ptr, bytes ? bytes : 1);
  if (err != cudaSuccess) {
    *ptr = nullptr;
    return failed("cudaMalloc", err) + " (" + std::to_string(bytes) + " bytes)";
  }
  return "";
}

void release(void* ptr) {
  if (ptr != nullptr) cudaFree(ptr);
}

std::string upload(void* deviceDst, const void* hostSrc, size_t bytes) {
  cudaError_t err = cudaMemcpy(deviceDst, hostSrc, bytes, cudaMemcpyHostToDevice);
  if (err != cudaSuccess) return failed("cudaMemcpy(host to device)", err);
  if ((err = cudaDeviceSynchronize()) != cudaSuccess) return failed("cudaDeviceSynchronize", err);
  return "";
}

std::string download(void* hostDst, const void* deviceSrc, size_t bytes) {
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return failed("cudaDeviceSynchronize", err);
  if ((err = cudaMemcpy(hostDst, deviceSrc, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
    return failed("cudaMemcpy(device to host)", err);
  return "";
}

std::string streamCreate(void** stream) {
  cudaStream_t s = nullptr;
  // Non-blocking, as PyTorch's side streams are: nothing on the legacy
  // default stream orders the library's work for it, so braid's own ordering
  // is what the check sees. The copies above synchronize the whole device.
  cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (err != cudaSuccess) return failed("cudaStreamCreate", err);
  *stream = s;
  return "";
}

std::string streamSynchronize(void* stream) {
  cudaError_t err = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  return err == cudaSuccess ? "" : failed("cudaStreamSynchronize", err);
}

void streamDestroy(void* stream) {
  if (stream != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

}  // namespace braid::perf::device
