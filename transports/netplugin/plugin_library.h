// A loaded NCCL net plugin: opened once per library per process (NCCL's
// plugins keep process-wide state and expect one init) and never unloaded.
#pragma once

#include <string>

#include "base/status.h"
#include "transports/netplugin/nccl_net_abi.h"

namespace braid::netplugin {

class PluginLibrary {
 public:
  // spec is BRAID_NET_PLUGIN's value: a path (it has a '/'), or a name N for
  // libnccl-net-N.so on the library path, as NCCL_NET_PLUGIN does.
  static Status open(const std::string& spec, const PluginLibrary** out);

  const ncclNet_v8_t& net() const { return *net_; }
  const std::string& describe() const { return description_; }  // "braid (libnccl-net-braid.so)"

 private:
  PluginLibrary(const ncclNet_v8_t* net, std::string description)
      : net_(net), description_(std::move(description)) {}
  const ncclNet_v8_t* net_;
  std::string description_;
};

// ok for ncclSuccess; otherwise the code braid gives it, with what the plugin
// logged as WARN on this thread since the last call (the ABI returns only a
// number, the reason is in the log line).
Status statusOf(ncclResult_t result, const std::string& call);

}  // namespace braid::netplugin
