// The two ends of a connection through an NCCL net plugin. Each message is
// registered with the plugin for as long as it is in flight (an RDMA plugin
// needs its buffers registered; braid's buffers come and go, so nothing is
// cached that could outlive them). Requests complete in posting order, as the
// transport contract promises; one the plugin cannot take yet (it may answer
// "come back later") is posted by a later test(), still in order.
//
// After an error the comm is dead: what follows on it fails with that error.
#pragma once

#include <deque>
#include <memory>
#include <string>

#include "transports/netplugin/plugin_library.h"
#include "transports/transport.h"

namespace braid::netplugin {

class NetPluginComm;

struct NetPluginRequest : transport::Request {
  NetPluginComm* comm = nullptr;
  void* data = nullptr;
  size_t size = 0;  // send: the size; receive: the capacity, then the bytes received
  uint32_t tag = 0;
  void* mhandle = nullptr;  // the plugin's registration of data
  void* request = nullptr;  // the plugin's request, once posted
  bool done = false;
};

class NetPluginComm {
 public:
  NetPluginComm(const PluginLibrary* lib, void* pluginComm, bool receiving, std::string peer)
      : lib_(lib), comm_(pluginComm), receiving_(receiving), peer_(std::move(peer)) {}
  ~NetPluginComm();
  NetPluginComm(const NetPluginComm&) = delete;
  NetPluginComm& operator=(const NetPluginComm&) = delete;

  Status post(void* data, size_t size, uint32_t tag, transport::Request** out);
  Status test(NetPluginRequest* r, bool* done, size_t* size);

 private:
  Status start(NetPluginRequest* r);  // registers and hands r to the plugin
  Status poll(NetPluginRequest* r);   // asks the plugin whether r finished
  Status fail(Status st);             // the comm is dead from now on
  void forget(NetPluginRequest* r);   // r leaves the queue, freed

  const PluginLibrary* lib_;
  void* comm_;
  bool receiving_;
  std::string peer_;
  Status broken_;
  std::deque<std::unique_ptr<NetPluginRequest>> inFlight_;  // oldest first
};

class NetPluginSendComm final : public transport::SendComm {
 public:
  NetPluginSendComm(const PluginLibrary* lib, void* pluginComm, std::string peer)
      : comm_(lib, pluginComm, false, std::move(peer)) {}
  Status isend(const void* data, size_t size, uint32_t tag, void*, transport::Request** req) override {
    return comm_.post(const_cast<void*>(data), size, tag, req);
  }

 private:
  NetPluginComm comm_;
};

class NetPluginRecvComm final : public transport::RecvComm {
 public:
  NetPluginRecvComm(const PluginLibrary* lib, void* pluginComm, std::string peer)
      : comm_(lib, pluginComm, true, std::move(peer)) {}
  Status irecv(void* data, size_t capacity, uint32_t tag, void*, transport::Request** req) override {
    return comm_.post(data, capacity, tag, req);
  }

 private:
  NetPluginComm comm_;
};

}  // namespace braid::netplugin
