// A listener of the netplugin transport: the plugin's listen comm, and the
// connections it accepted that have not yet proven the secret
// (connector_proof.h). A connection whose first message is not a fresh proof
// for this listener, or that sends none within the handshake deadline, is
// closed and logged; accept() never returns it.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "base/deadline.h"
#include "transports/netplugin/connector_proof.h"
#include "transports/netplugin/plugin_library.h"
#include "transports/transport.h"

namespace braid::netplugin {

class NetPluginListenComm final : public transport::ListenComm {
 public:
  NetPluginListenComm(const PluginLibrary* lib, void* pluginListen, const transport::Handle& mine,
                      const transport::Options& options);
  ~NetPluginListenComm() override;

  Status accept(std::unique_ptr<transport::RecvComm>* out, uint64_t* connectorId);
  // Connections accepted by the plugin that have not proven the secret yet.
  size_t unproven() const { return unproven_.size(); }

 private:
  struct Unproven {
    void* comm = nullptr;
    void* mhandle = nullptr;
    void* request = nullptr;
    uint8_t proof[kProofBytes] = {};
    Deadline deadline = Deadline::never();
  };
  // Posts the proof's receive if the plugin had no room for it yet.
  Status expectProof(Unproven& u);
  void drop(Unproven& u, const std::string& why);

  const PluginLibrary* lib_;
  void* listen_;
  transport::Handle mine_;
  transport::Options options_;
  std::vector<std::unique_ptr<Unproven>> unproven_;
  std::set<uint64_t> seenNonces_;
};

}  // namespace braid::netplugin
