// braid-cuda-bench: see options.cc for the flags, cases.h for what is timed
// and how bytes are counted, timer.h for how.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "buffers.h"
#include "cases.h"
#include "module.h"
#include "options.h"
#include "report.h"
#include "timer.h"
#include "verify.h"

namespace braid::cudabench {
namespace {

constexpr int kExitEnvironment = 2, kExitKernelFailed = 3;

std::string errorText(int err) {
  const cudaError_t e = static_cast<cudaError_t>(err);
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

// Measures one case into a row; a refusal of the first launch with
// cudaErrorInvalidValue is the module saying it does not do this one.
Row measure(Timer& timer, Buffers& buf, const Case& c, double copyGbps) {
  Row row{c.kernel, c.dtype, c.op, buf.bytes(), c.traffic, 0, copyGbps, "ok"};
  if (cudaError_t err = buf.fill(c.fill); err != cudaSuccess) {
    row.status = "failed: filling the inputs: " + errorText(err);
    return row;
  }
  if (c.setup) {
    if (int err = c.setup(); err != 0) {
      row.status = "failed: setting up: " + errorText(err);
      return row;
    }
  }
  const Timing t = timer.measure(c.launch, c.before);
  if (t.error == cudaErrorInvalidValue && t.where == "the first launch")
    row.status = "rejected: " + errorText(t.error);
  else if (t.error != 0)
    row.status = "failed: " + t.where + ": " + errorText(t.error);
  else
    row.us = t.us;
  return row;
}

// The device and the module, or a message on stderr and nullptr.
struct Setup {
  const kernels::DeviceModule* module = nullptr;
  cudaStream_t stream = nullptr;
  std::string device;  // for the report's header
};

Setup open(const Options& o) {
  Setup s;
  std::string why;
  const kernels::DeviceModule* m = loadModule(o.module, &why);
  if (m == nullptr) {
    std::fprintf(stderr, "braid-cuda-bench: %s\n", why.c_str());
    return s;
  }
  int devices = 0;
  if (cudaError_t err = cudaGetDeviceCount(&devices); err != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "braid-cuda-bench: no CUDA device (%s)\n",
                 err != cudaSuccess ? errorText(err).c_str() : "cudaGetDeviceCount found none");
    return s;
  }
  int moduleDevices = 0;
  if (int err = m->deviceCount(&moduleDevices); err != 0 || moduleDevices == 0) {
    std::fprintf(stderr, "braid-cuda-bench: the module sees no device (%s)\n",
                 err ? m->errorString(err) : "none");
    return s;
  }
  cudaDeviceProp prop{};
  cudaError_t err = cudaGetDeviceProperties(&prop, 0);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "braid-cuda-bench: device 0: %s\n", errorText(err).c_str());
    return s;
  }
  s.module = m;
  s.device = std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
             std::to_string(prop.l2CacheSize >> 20) + " MiB L2; module " + o.module;
  return s;
}

// Every size: the copy, then the module's cases. The exit status.
int sweep(const Options& o, const Setup& s, Report& report) {
  Timer timer(s.stream, o.warmup, o.iters, o.reps);
  bool failed = false;
  for (size_t size : o.sizes) {
    Buffers buf(size);
    if (cudaError_t err = buf.status(); err != cudaSuccess) {
      std::fprintf(stderr, "braid-cuda-bench: 3 buffers of %s: %s\n", sizeName(size).c_str(),
                   errorText(err).c_str());
      failed = true;
      continue;
    }
    const Row copy = measure(timer, buf, copyCase(buf, s.stream), 0);
    report.add(copy);
    failed |= copy.status != "ok";
    for (const Case& c : moduleCases(o, *s.module, buf, s.stream)) {
      const Row row = measure(timer, buf, c, copy.status == "ok" ? copy.gbps() : 0);
      report.add(row);
      if (row.status.rfind("failed", 0) != 0) continue;
      failed = true;
      // A fault poisons the context: every later row would fail the same way.
      if (cudaError_t err = cudaDeviceSynchronize(); err != cudaSuccess) {
        std::fprintf(stderr, "braid-cuda-bench: the device is unusable after that (%s); stopping\n",
                     errorText(err).c_str());
        return kExitKernelFailed;
      }
    }
  }
  return failed ? kExitKernelFailed : 0;
}

int run(const Options& o) {
  const Setup s = open(o);
  if (s.module == nullptr) return kExitEnvironment;
  if (o.verify) {
    std::printf("# %s\n", s.device.c_str());
    return verifyAll(*s.module, s.stream, o.kernels) ? 0 : kExitKernelFailed;
  }
  Report report(o.csv);
  if (!report.ok()) {
    std::fprintf(stderr, "braid-cuda-bench: cannot write %s\n", o.csv.c_str());
    return 1;
  }
  report.header(s.device + "; median of " + std::to_string(o.reps) + " x " + std::to_string(o.iters) +
                " launches after " + std::to_string(o.warmup) + " warmup");
  return sweep(o, s, report);
}

}  // namespace
}  // namespace braid::cudabench

int main(int argc, char** argv) {
  int exitCode = 0;
  const auto opts = braid::cudabench::parseOptions(argc, argv, &exitCode);
  if (!opts) return exitCode;
  return braid::cudabench::run(*opts);
}
