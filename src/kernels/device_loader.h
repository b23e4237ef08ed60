// Finding the CUDA module at run time (device_module.h). The first call
// dlopen()s libbraid-cuda.so (BRAID_CUDA_MODULE, else next to libbraid.so,
// else the loader's search path) and asks it for a device; the answer is kept
// for the life of the process, so later calls cost one atomic load.
//
// No module, no CUDA driver or no device: deviceModule() is nullptr and
// deviceUnavailableReason() says which, for NotSupported messages. Nothing
// here fails a host-only program.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "base/status.h"
#include "kernels/device_module.h"

namespace braid::kernels {

// The module when it loaded and sees at least one device, else nullptr.
// Thread-safe.
const DeviceModule* deviceModule();

// Why deviceModule() is nullptr ("braid was built without CUDA", "no CUDA
// device: ..."); empty when it is not.
const std::string& deviceUnavailableReason();

// Ok when every pointer is host memory (or no device is present, when no
// pointer can be device memory); NotSupported naming the first device
// pointer (`names[i]` for pointers[i]) otherwise: device buffers are not
// handled by the collectives yet.
Status checkHostPointers(const char* fn, std::initializer_list<std::pair<const char*, const void*>> pointers);

}  // namespace braid::kernels
