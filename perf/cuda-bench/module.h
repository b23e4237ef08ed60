// Opening libbraid-cuda.so from a path the user names (not through libbraid's
// loader, which searches), so the bench measures exactly that file.
#pragma once

#include <string>

#include "kernels/device_module.h"

namespace braid::cudabench {

// The module's table, or nullptr with *error saying why (no file, no entry
// point, another ABI). The module stays loaded for the life of the process.
const kernels::DeviceModule* loadModule(const std::string& path, std::string* error);

}  // namespace braid::cudabench
