// Finding the CUDA module at run time (device_module.h). The first call
// dlopen()s libbraid-cuda.so (BRAID_CUDA_MODULE, else next to libbraid.so,
// else the loader's search path) and asks it for a device; the answer is kept
// for the life of the process, so later calls cost one atomic load.
//
// No module, no CUDA driver or no device: deviceModule() is nullptr and
// deviceUnavailableReason() says which, for NotSupported messages. Nothing
// here fails a host-only program.
#pragma once

#include <string>

#include "base/status.h"
#include "kernels/device_module.h"

namespace braid::kernels {

// The module when it loaded and sees at least one device, else nullptr.
// Thread-safe.
const DeviceModule* deviceModule();

// Why deviceModule() is nullptr ("braid was built without CUDA", "no CUDA
// device: ..."); empty when it is not.
const std::string& deviceUnavailableReason();

// The CUDA device owning p, or -1 for host memory (pageable, pinned or
// unknown to CUDA), for nullptr, and for every pointer when no device is
// present.
int deviceOfPointer(const void* p);

}  // namespace braid::kernels
