#include "transports/netplugin/plugin_library.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "base/env.h"
#include "base/log.h"

namespace braid::netplugin {
namespace {

thread_local std::string lastWarning;

// The plugin's log lines go to braid's log; its WARN lines are also kept to
// explain the error code of the call that wrote them.
void logFromPlugin(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (level == NCCL_LOG_WARN) {
    lastWarning = line;
    BRAID_WARN("netplugin: %s", line);
  } else if (level == NCCL_LOG_TRACE) {
    BRAID_TRACE("netplugin: %s", line);
  } else if (level != NCCL_LOG_NONE) {
    BRAID_INFO("netplugin: %s", line);
  }
}

std::mutex openMu;
std::map<std::string, std::unique_ptr<PluginLibrary>>& opened() {
  static auto* libraries = new std::map<std::string, std::unique_ptr<PluginLibrary>>;
  return *libraries;
}

}  // namespace

Status statusOf(ncclResult_t result, const std::string& call) {
  if (result == ncclSuccess) {
    lastWarning.clear();
    return Status::ok();
  }
  std::string why = lastWarning.empty() ? "" : " (" + lastWarning + ")";
  lastWarning.clear();
  std::string message = "netplugin " + call + ": ncclResult_t " + std::to_string(result) + why;
  switch (result) {
    case ncclSystemError:
      return {Code::kSystemError, message};
    case ncclRemoteError:
      return remoteError(message);
    case ncclInvalidUsage:
      return invalidUsage(message);
    case ncclUnhandledCudaError:
      return {Code::kCudaError, message};
    default:
      return internalError(message);
  }
}

Status PluginLibrary::open(const std::string& spec, const PluginLibrary** out) {
  std::lock_guard lock(openMu);
  auto& libraries = opened();
  if (auto it = libraries.find(spec); it != libraries.end()) {
    *out = it->second.get();
    return Status::ok();
  }
  std::string file = spec.find('/') != std::string::npos ? spec : "libnccl-net-" + spec + ".so";
  void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return notSupported("netplugin: cannot open " + file + ": " + dlerror());
  std::string error;
  const int64_t version = env::getInt("BRAID_NET_PLUGIN_VERSION", &error);
  if (!error.empty()) return invalidArgument(error);
  NetApi net;
  if (Status st = NetApi::find(lib, file, version, &net); !st.isOk()) {
    dlclose(lib);
    return st;
  }
  BRAID_RETURN_IF_ERROR(statusOf(net.init(logFromPlugin), "init").prefix(file));
  std::string description =
      std::string(net.name()) + " (" + file + ", NCCL net API v" + std::to_string(net.version()) + ")";
  BRAID_INFO("netplugin: loaded %s", description.c_str());
  auto library = std::unique_ptr<PluginLibrary>(new PluginLibrary(net, std::move(description)));
  *out = library.get();
  libraries.emplace(spec, std::move(library));
  return Status::ok();
}

}  // namespace braid::netplugin
