// Timing one operation the same way for every row: `warmup` untimed
// launches, then `reps` repetitions of `iters` launches between two
// cudaEvents, behind a spin kernel that holds the stream until all of them
// are queued (spin.h); the median repetition, per launch.
//
// Every launch's return code is checked, and the stream is synchronised and
// checked after each repetition, so a launch that fails (at once or while it
// runs) turns the row into an error instead of a fast number.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>

namespace braid::cudabench {

// One launch: 0 or a cudaError_t value (the module returns those too).
using Launch = std::function<int()>;

struct Timing {
  double us = 0;      // median time per launch
  int error = 0;      // the first failure's code, 0 when every launch succeeded
  std::string where;  // which step failed
};

class Timer {
 public:
  Timer(cudaStream_t stream, int warmup, int iters, int reps);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // `before` (may be empty) runs ahead of the warmup and of every repetition,
  // untimed: divide restores its input there.
  Timing measure(const Launch& launch, const Launch& before = {});

 private:
  cudaStream_t stream_;
  int warmup_, iters_, reps_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace braid::cudabench
