// NetPluginTransport: braid over any NCCL net plugin (ncclNetPlugin_v8 to _v11),
// registered as "netplugin" and chosen with BRAID_NET=netplugin; which plugin
// is BRAID_NET_PLUGIN's (e.g. aws-ofi-nccl's libnccl-net.so for EFA, or braid's
// own). So braid reaches every fabric that has an NCCL plugin.
//
// What braid adds on top: every connection proves the communicator's secret
// before it is accepted (connector_proof.h), requests complete in posting
// order, registrations live exactly as long as their message. Tag and size
// checks are the plugin's: braid's own plugin checks both, others may only
// check what NCCL needs.
//
// Progress happens in test(); a plugin has no descriptor to wait on, so
// wait() only yields the CPU.
#pragma once

#include <memory>
#include <vector>

#include "transports/connect_attempts.h"
#include "transports/netplugin/connector_proof.h"
#include "transports/netplugin/plugin_library.h"
#include "transports/transport.h"

namespace braid::netplugin {

class NetPluginTransport final : public transport::Transport {
 public:
  static Status create(const transport::Options& options, std::unique_ptr<transport::Transport>* out);
  ~NetPluginTransport() override;

  const char* name() const override { return "netplugin"; }
  transport::Capabilities capabilities() const override {
    transport::Capabilities c;
    c.mutualAuthentication = false;  // connector_proof.h
    // Device 0's: the one braid's communicators connect over.
    c.maxMessageBytes = devices_[0].maxMessageBytes;
    return c;
  }
  int deviceCount() const override { return static_cast<int>(devices_.size()); }
  Status deviceProperties(int dev, transport::DeviceProperties* props) const override;

  Status listen(int dev, transport::Handle* handle,
                std::unique_ptr<transport::ListenComm>* listenComm) override;
  Status connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                 std::unique_ptr<transport::SendComm>* sendComm) override;
  Status accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                uint64_t* connectorId) override;
  Status test(transport::Request* req, bool* done, size_t* size) override;
  Status wait(int timeoutMs) override;

 private:
  // A connect under way: the plugin's connect until it gives a comm, then the
  // proof's send until it completed. NCCL's connect() must not block, so this
  // lives between calls. connects_ keeps its key (dev, the listener's
  // handle, connectorId), which step() is given. `handle` is the plugin's
  // copy, not the key: plugins keep their connect's progress in the handle
  // between calls (NCCL's IB plugin its stage), so it stays in place and
  // writable, and the proof is made over the key, the bytes the listener has.
  struct PendingConnect {
    transport::Handle handle;
    void* comm = nullptr;
    void* mhandle = nullptr;
    void* request = nullptr;
    uint8_t proof[kProofBytes] = {};
  };
  // A plugin device braid can use (one that takes host memory). braid numbers
  // them densely; the plugin's own number may be higher.
  struct Device {
    int pluginDev;
    transport::DeviceProperties props;
    // The plugin's maxP2pBytes (v9 on; v8's: NCCL's 1 GiB default), and
    // never over 1 GiB: test() reports sizes as int.
    size_t maxMessageBytes;
  };
  NetPluginTransport(const transport::Options& options, const PluginLibrary* lib, std::vector<Device> devices)
      : options_(options), lib_(lib), devices_(std::move(devices)) {}
  Status checkDevice(int dev) const;
  Status step(int dev, const transport::Handle& listener, uint64_t connectorId, PendingConnect& c,
              bool* finished);
  void abandon(PendingConnect& c);

  transport::Options options_;
  const PluginLibrary* lib_;
  std::vector<Device> devices_;  // never empty
  transport::ConnectAttempts<PendingConnect> connects_;
};

}  // namespace braid::netplugin
