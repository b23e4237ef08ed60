// A kernel that holds the stream for a while, so that the launches queued
// behind it run back to back: the timed window then measures the device, not
// how fast this thread can enqueue.
#include "spin.h"

namespace braid::cudabench {
namespace {

__global__ void spinKernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

cudaError_t launchSpin(cudaStream_t stream, double us) {
  spinKernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(us * 1000.0));
  return cudaGetLastError();
}

}  // namespace braid::cudabench
