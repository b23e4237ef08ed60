#include "timer.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "spin.h"

namespace braid::cudabench {

namespace {

using Clock = std::chrono::steady_clock;

double microsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// Spin at least this long, and twice what queueing the launches took in the
// warmup, so the queue is never drained while the host is still adding to it.
constexpr double kMinSpinUs = 50;

}  // namespace

Timer::Timer(cudaStream_t stream, int warmup, int iters, int reps)
    : stream_(stream), warmup_(warmup), iters_(iters), reps_(reps) {
  cudaEventCreate(&start_);
  cudaEventCreate(&stop_);
}

Timer::~Timer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

Timing Timer::measure(const Launch& launch, const Launch& before) {
  Timing t;
  auto failed = [&](int err, const char* where) {
    t.error = err;
    t.where = where;
    return err != 0;
  };
  if (start_ == nullptr || stop_ == nullptr) {
    failed(cudaErrorInvalidResourceHandle, "cudaEventCreate");
    return t;
  }
  if (before && failed(before(), "preparing the input")) return t;
  // The first launch alone (it may load the kernel), then the warmup, which
  // also measures how long queueing `iters` launches takes.
  if (failed(launch(), "the first launch")) return t;
  if (failed(cudaStreamSynchronize(stream_), "the first launch (on the device)")) return t;
  const int timedWarmup = std::max(warmup_ - 1, 1);
  const Clock::time_point q = Clock::now();
  for (int i = 0; i < timedWarmup; ++i)
    if (failed(launch(), "a warmup launch")) return t;
  const double queueUs = microsSince(q) * iters_ / timedWarmup;
  if (failed(cudaStreamSynchronize(stream_), "the warmup (on the device)")) return t;

  std::vector<double> perLaunch;
  for (int r = 0; r < reps_; ++r) {
    if (before && failed(before(), "preparing the input")) return t;
    if (failed(launchSpin(stream_, std::max(kMinSpinUs, 2 * queueUs)), "the spin kernel")) return t;
    if (failed(cudaEventRecord(start_, stream_), "cudaEventRecord")) return t;
    for (int i = 0; i < iters_; ++i)
      if (failed(launch(), "a timed launch")) return t;
    if (failed(cudaEventRecord(stop_, stream_), "cudaEventRecord")) return t;
    if (failed(cudaEventSynchronize(stop_), "a timed launch (on the device)")) return t;
    if (failed(cudaGetLastError(), "a timed launch (on the device)")) return t;
    float ms = 0;
    if (failed(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime")) return t;
    perLaunch.push_back(1000.0 * ms / iters_);
  }
  std::sort(perLaunch.begin(), perLaunch.end());
  t.us = perLaunch[perLaunch.size() / 2];
  return t;
}

}  // namespace braid::cudabench
