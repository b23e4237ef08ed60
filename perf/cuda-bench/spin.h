// Holding a stream busy for a given time (spin.cu).
#pragma once

#include <cuda_runtime.h>

namespace braid::cudabench {

// Queues one single-thread kernel on `stream` that returns after `us`
// microseconds of device time.
cudaError_t launchSpin(cudaStream_t stream, double us);

}  // namespace braid::cudabench
