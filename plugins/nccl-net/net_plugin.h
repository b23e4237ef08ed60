// braid's transports behind NCCL's net plugin calls, in braid's own types.
// export_v8.cc turns NCCL's C calls into these and their Status into
// ncclResult_t; this file knows nothing of NCCL's structs.
//
// Threads: NCCL calls a plugin from its proxy threads, one per communicator,
// so several at once; a braid transport is used by one thread at a time. Each
// transport therefore sits in an Endpoint with a lock that every call on it,
// or on a comm or request it made, holds.
//
// Transports: one (the local endpoint, with this process's random secret)
// listens and accepts for every NCCL connection to this process. Connecting
// needs the listener's secret, which its handle carries (plugin_handle.h), so
// connections go out through one endpoint per peer process and traffic class,
// made at the first connect to it and kept for the life of the process: a
// transport holds the state of connects under way between NCCL's repeated
// connect() calls, and its options (the traffic class among them) are the
// same for every connection it makes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin_handle.h"
#include "transports/transport.h"

namespace braid::ncclnet {

struct Endpoint {
  std::mutex mu;
  std::unique_ptr<transport::Transport> transport;
};

// What regMr hands out: the range, so sends and receives outside it are
// caught instead of silently moving memory NCCL never registered.
struct MemoryRegion {
  uintptr_t begin = 0;
  size_t size = 0;
  bool contains(const void* data, size_t bytes) const;
};

class Comm;

struct Request {
  Comm* comm = nullptr;
  transport::Request* inner = nullptr;
};

// What sends and receives share: the endpoint whose lock guards them, and a
// pool of requests (NCCL keeps up to NCCL_NET_MAX_REQUESTS in flight per comm;
// the pool grows to whatever it is asked for and reuses them).
class Comm {
 public:
  explicit Comm(std::shared_ptr<Endpoint> endpoint) : endpoint_(std::move(endpoint)) {}
  virtual ~Comm() = default;
  Endpoint& endpoint() { return *endpoint_; }
  // Both under the endpoint's lock.
  Request* takeRequest();
  void giveBack(Request* request);

 private:
  std::shared_ptr<Endpoint> endpoint_;
  std::vector<std::unique_ptr<Request>> requests_;
  std::vector<Request*> free_;
};

// A braid send or receive comm as NCCL holds it. The braid comm is the
// transport's to destroy under its one-thread rule, and its requests die
// with it.
template <typename Inner>
class TransportComm final : public Comm {
 public:
  TransportComm(std::shared_ptr<Endpoint> endpoint, std::unique_ptr<Inner> inner)
      : Comm(std::move(endpoint)), inner(std::move(inner)) {}
  ~TransportComm() override {
    std::lock_guard lock(endpoint().mu);
    inner.reset();
  }
  std::unique_ptr<Inner> inner;
};
using SendComm = TransportComm<transport::SendComm>;
using RecvComm = TransportComm<transport::RecvComm>;

struct ListenComm {
  ListenComm(std::shared_ptr<Endpoint> endpoint, std::unique_ptr<transport::ListenComm> inner)
      : endpoint(std::move(endpoint)), inner(std::move(inner)) {}
  ~ListenComm();
  std::shared_ptr<Endpoint> endpoint;
  std::unique_ptr<transport::ListenComm> inner;
};

struct DeviceInfo {
  std::string name;     // the interface, e.g. "eth0"
  std::string pciPath;  // its PCI device in /sys; empty for a virtual one (veth, lo)
  int speedMbps = 0;
  int maxComms = 0;
};

class NetPlugin {
 public:
  // The process's one plugin. Never destroyed: NCCL may still hold comms when
  // static destructors run.
  static NetPlugin& instance();

  // Idempotent. Picks the transport (BRAID_NCCL_NET: tcp or ucx) and its devices
  // (BRAID_SOCKET_IFNAME, BRAID_NSOCKS as for braid's communicators). Fails when
  // no device is usable, so NCCL falls back to its own networks.
  Status init();
  const char* transportName() const { return transportKindName(kind_); }
  int deviceCount() const { return static_cast<int>(devices_.size()); }
  Status device(int dev, const DeviceInfo** info) const;

  Status listen(int dev, uint8_t handle[kPluginHandleBytes], std::unique_ptr<ListenComm>* out);
  // Non-blocking: ok with *out null while the connection is being set up.
  // trafficClass: the NCCL communicator's (v11's ncclNetCommConfig_t), 0-255,
  // marking the connection's packets (transport::Options::trafficClass; TCP
  // only, UCX has no such setting and ignores it); kDefaultTrafficClass:
  // BRAID_SOCKET_TC's.
  static constexpr int kDefaultTrafficClass = -1;
  Status connect(int dev, const uint8_t handle[kPluginHandleBytes], int trafficClass,
                 std::unique_ptr<SendComm>* out);
  // Non-blocking: ok with *out null until a connector proved the secret.
  Status accept(ListenComm& listener, std::unique_ptr<RecvComm>* out);

  Status isend(SendComm& comm, const void* data, size_t size, uint32_t tag, const MemoryRegion* region,
               Request** out);
  Status irecv(RecvComm& comm, void* data, size_t capacity, uint32_t tag, const MemoryRegion* region,
               Request** out);
  // *done with *size the bytes moved; the request is then gone, as it is after
  // an error.
  Status test(Request& request, bool* done, size_t* size);

 private:
  NetPlugin() = default;
  Status checkDevice(int dev) const;
  Status createTransport(const transport::Secret& secret, int trafficClass,
                         std::unique_ptr<transport::Transport>* out) const;
  Status endpointFor(const transport::Secret& secret, int trafficClass, std::shared_ptr<Endpoint>* out);
  template <typename Post>
  Status post(Comm& comm, Post&& start, Request** out);

  std::mutex mu_;  // init and remotes_; everything else is fixed after init
  bool initialized_ = false;
  TransportKind kind_ = TransportKind::kTcp;
  transport::Options options_;  // with this process's secret
  std::shared_ptr<Endpoint> local_;
  std::map<std::pair<transport::Secret, int>, std::shared_ptr<Endpoint>> remotes_;  // by secret, class
  std::vector<DeviceInfo> devices_;
};

}  // namespace braid::ncclnet
