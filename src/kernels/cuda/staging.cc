// Runtime calls behind the staging half of the module's table (staging.h).
#include "kernels/cuda/staging.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace braid::kernels::cuda {
namespace {

int err(cudaError_t e) { return static_cast<int>(e); }
cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t asEvent(void* e) { return static_cast<cudaEvent_t>(e); }

// cuStreamWaitValue32 through the runtime's driver entry points, so the module
// links only libcudart. Null when the driver does not offer it, or when
// BRAID_CUDA_FLAG_WAIT=hostfn asks for the fallback (tests of both paths).
using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
std::atomic<WaitValue32> gWaitValue{nullptr};
std::atomic<const char*> gMechanism{""};
std::once_flag gWaitValueOnce;

void findWaitValue() {
  const char* forced = std::getenv("BRAID_CUDA_FLAG_WAIT");
  if (forced && std::strcmp(forced, "hostfn") == 0) return;
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    gWaitValue.store(reinterpret_cast<WaitValue32>(fn));
}

bool reached(const uint32_t* flag, uint32_t value) {
  const uint32_t now = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
  return static_cast<int32_t>(now - value) >= 0;
}

struct FlagWait {
  const uint32_t* flag;
  uint32_t value;
};

// Runs on the CUDA runtime's callback thread and holds the stream until the
// flag is reached: collectives take microseconds to seconds, so it yields
// first and then sleeps in short steps rather than burning a core.
void CUDART_CB pollFlag(void* arg) {
  auto* wait = static_cast<FlagWait*>(arg);
  for (unsigned spins = 0; !reached(wait->flag, wait->value); ++spins) {
    if (spins < 1000) {
      sched_yield();
    } else {
      timespec step{0, 20000};
      nanosleep(&step, nullptr);
    }
  }
  delete wait;
}

}  // namespace

int getDevice(int* device) { return err(cudaGetDevice(device)); }
int setDevice(int device) { return err(cudaSetDevice(device)); }

int hostAlloc(void** p, size_t bytes, int mapped) {
  return err(cudaHostAlloc(p, bytes, cudaHostAllocPortable | (mapped ? cudaHostAllocMapped : 0)));
}
int hostRelease(void* p) { return err(cudaFreeHost(p)); }

int streamCreate(void** stream) {
  cudaStream_t s = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  *stream = s;
  return err(e);
}
int streamDestroy(void* stream) { return err(cudaStreamDestroy(asStream(stream))); }

int eventCreate(void** event) {
  cudaEvent_t e = nullptr;
  cudaError_t r = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  *event = e;
  return err(r);
}
int eventDestroy(void* event) { return err(cudaEventDestroy(asEvent(event))); }
int eventRecord(void* event, void* stream) { return err(cudaEventRecord(asEvent(event), asStream(stream))); }
int eventSynchronize(void* event) { return err(cudaEventSynchronize(asEvent(event))); }
int streamWaitEvent(void* stream, void* event) {
  return err(cudaStreamWaitEvent(asStream(stream), asEvent(event), 0));
}

int streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value) {
  std::call_once(gWaitValueOnce, findWaitValue);
  if (WaitValue32 waitValue = gWaitValue.load()) {
    void* devicePtr = nullptr;
    if (cudaHostGetDevicePointer(&devicePtr, const_cast<uint32_t*>(flag), 0) == cudaSuccess &&
        waitValue(static_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(devicePtr), value,
                  CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS) {
      gMechanism.store("stream memory operation");
      return 0;
    }
    // Refused (stream memory operations off in this driver): the host
    // function below from now on.
    gWaitValue.store(nullptr);
    cudaGetLastError();
  }
  auto* wait = new FlagWait{flag, value};
  cudaError_t e = cudaLaunchHostFunc(asStream(stream), pollFlag, wait);
  if (e != cudaSuccess) {
    delete wait;
    return err(e);
  }
  gMechanism.store("host function");
  return 0;
}

const char* flagWaitMechanism() { return gMechanism.load(); }

}  // namespace braid::kernels::cuda
