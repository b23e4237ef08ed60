#include "kernels/device_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include "base/env.h"
#include "base/log.h"

namespace braid::kernels {
namespace {

struct Loaded {
  const DeviceModule* module = nullptr;
  std::string why;
};

#ifdef BRAID_HAVE_CUDA
// The directory libbraid itself was loaded from ("" when unknown).
std::string ownDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&deviceModule), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// Whether an NVIDIA driver is present, without loading anything: every
// process of a host-only job would otherwise pay for loading the CUDA runtime
// only to hear that there is no device.
bool driverPresent() { return access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0; }
#endif

Loaded load() {
  Loaded out;
#ifndef BRAID_HAVE_CUDA
  out.why = "braid was built without CUDA (BRAID_CUDA=off or no toolkit found)";
  return out;
#else
  const std::optional<std::string> configured = env::raw("BRAID_CUDA_MODULE");
  const bool chosen = configured && !configured->empty();
  // A module named explicitly is asked itself (it may stand in for CUDA in
  // tests: tests/integration/fake_cuda_module.cc).
  if (!chosen && !driverPresent()) {
    out.why = "no NVIDIA driver on this host (/dev/nvidiactl and /proc/driver/nvidia are missing)";
    return out;
  }
  // Where to look: next to libbraid.so; for a tool that links braid
  // statically (braid-info), the lib/ beside its bin/ once installed, and the
  // top of the build tree two folders up; then the loader's search path.
  std::vector<std::string> candidates;
  if (chosen) {
    candidates.push_back(*configured);
  } else {
    const std::string own = ownDirectory();
    for (const char* relative : {"", "../lib/", "../../"})
      candidates.push_back(own + relative + kDeviceModuleFileName);
    candidates.push_back(kDeviceModuleFileName);
  }
  // RTLD_LOCAL: the CUDA runtime stays private to the module.
  void* handle = nullptr;
  std::string path, firstError;
  for (const std::string& candidate : candidates) {
    path = candidate;
    if ((handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    const char* err = dlerror();
    if (firstError.empty()) firstError = err ? err : path;
  }
  if (handle == nullptr) {
    out.why = "the CUDA module could not be loaded (" + firstError + ")";
    return out;
  }
  auto entry = reinterpret_cast<DeviceModuleEntry>(dlsym(handle, kDeviceModuleEntryName));
  const DeviceModule* m = entry ? entry() : nullptr;
  if (m == nullptr || m->abi != kDeviceModuleAbi) {
    out.why = path + " is not a CUDA module of this braid (missing entry or ABI " +
              std::to_string(m ? m->abi : 0) + " != " + std::to_string(kDeviceModuleAbi) + ")";
    return out;  // the handle stays open: harmless, and closing could run foreign destructors
  }
  int count = 0;
  if (int err = m->deviceCount(&count); err != 0 || count == 0) {
    out.why = std::string("no CUDA device (") + (err ? m->errorString(err) : "0 devices") + ")";
    return out;
  }
  out.module = m;
  BRAID_INFO("CUDA module %s: %d device(s)", path.c_str(), count);
  return out;
#endif
}

// A function-local static, not std::call_once: every collective asks, and
// call_once writes thread-locals on each call before it looks at the flag.
const Loaded& loaded() {
  static const Loaded value = load();
  return value;
}

}  // namespace

const DeviceModule* deviceModule() { return loaded().module; }

const std::string& deviceUnavailableReason() { return loaded().why; }

int deviceOfPointer(const void* p) {
  const DeviceModule* m = deviceModule();
  if (m == nullptr || p == nullptr) return -1;
  int device = -1;
  return m->pointerDevice(p, &device) == 0 ? device : -1;
}

}  // namespace braid::kernels
