#include "module.h"

#include <dlfcn.h>

namespace braid::cudabench {

const kernels::DeviceModule* loadModule(const std::string& path, std::string* error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = "cannot load " + path + ": " + (why ? why : "unknown dlopen error");
    return nullptr;
  }
  auto entry = reinterpret_cast<kernels::DeviceModuleEntry>(dlsym(handle, kernels::kDeviceModuleEntryName));
  if (entry == nullptr) {
    *error = path + " has no " + kernels::kDeviceModuleEntryName + "()";
    return nullptr;
  }
  const kernels::DeviceModule* m = entry();
  if (m == nullptr || m->abi != kernels::kDeviceModuleAbi) {
    *error = path + ": module ABI " + (m ? std::to_string(m->abi) : std::string("?")) +
             ", this bench needs " + std::to_string(kernels::kDeviceModuleAbi) +
             " (a module from another build?)";
    return nullptr;
  }
  return m;
}

}  // namespace braid::cudabench
