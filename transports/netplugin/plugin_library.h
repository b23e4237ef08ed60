// A loaded NCCL net plugin: opened once per library per process (NCCL's
// plugins keep process-wide state and expect one init) and never unloaded.
#pragma once

#include <string>

#include "base/status.h"
#include "transports/netplugin/net_api.h"

namespace braid::netplugin {

class PluginLibrary {
 public:
  // spec is BRAID_NET_PLUGIN's value: a path (it has a '/'), or a name N for
  // libnccl-net-N.so on the library path, as NCCL_NET_PLUGIN does. The table
  // is BRAID_NET_PLUGIN_VERSION's, else the newest the library exports.
  static Status open(const std::string& spec, const PluginLibrary** out);

  const NetApi& net() const { return net_; }
  // "braid (libnccl-net-braid.so, NCCL net API v11)"
  const std::string& describe() const { return description_; }

 private:
  PluginLibrary(const NetApi& net, std::string description)
      : net_(net), description_(std::move(description)) {}
  NetApi net_;
  std::string description_;
};

// ok for ncclSuccess; otherwise the code braid gives it, with what the plugin
// logged as WARN on this thread since the last call (the ABI returns only a
// number, the reason is in the log line).
Status statusOf(ncclResult_t result, const std::string& call);

}  // namespace braid::netplugin
