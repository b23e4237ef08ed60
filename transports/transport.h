// The transport interface: how bytes move between two processes.
//
// A transport knows nothing about collectives. It offers devices, one-way
// connections (a SendComm on one side, a RecvComm on the other) set up by
// exchanging an opaque handle of at most 128 bytes out of band, and tagged
// non-blocking sends and receives matched in order per connection. The shape is
// NCCL's net plugin API (v6+) on purpose: plugins/nccl-net is a thin adapter over
// it, and a loaded NCCL net plugin can be wrapped as a braid transport.
//
// Threading: a Transport and its comms are used by one thread at a time (the
// communicator's executor); the transport makes progress only inside its calls
// (test / wait / accept / connect), never on threads of its own, unless a
// transport documents otherwise.
//
// Security: every connection proves knowledge of the communicator's secret
// (Options::secret) during connect/accept, before any payload is accepted; a peer
// that fails, sends garbage or stalls past the handshake deadline is dropped and
// logged, and accept simply keeps waiting for genuine connections.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace braid::transport {

constexpr size_t kHandleBytes = 128;
struct Handle {
  std::array<uint8_t, kHandleBytes> bytes{};
};

constexpr size_t kSecretBytes = 16;
using Secret = std::array<uint8_t, kSecretBytes>;

// What the communicator hands a transport when it creates one.
struct Options {
  Secret secret{};          // every connection must prove knowledge of it
  int nSocks = 0;           // TCP: sockets per connection (striping); 0: 1 to a peer on this
                            // host (loopback has no per-flow limit to stripe around), else 2
  std::string ifname;       // TCP: interface selector, BRAID_SOCKET_IFNAME syntax
  int handshakeTimeoutMs = 5000;  // a connecting peer that stalls longer is dropped
  int rank = -1;            // for log lines only
  // TCP: the traffic class of every socket the transport opens (IP TOS /
  // IPv6 traffic class byte, DSCP << 2 | ECN; net::setTrafficClass), so a
  // fabric's switches can queue collectives apart from other traffic; -1:
  // the system's default. BRAID_SOCKET_TC for communicators; a v11 NCCL
  // communicator's trafficClass in the net plugin. Other transports ignore
  // it (ibverbs takes BRAID_IB_TC, per port).
  int trafficClass = -1;
};

struct DeviceProperties {
  std::string name;     // e.g. "eth0"
  std::string address;  // printable local address, e.g. "10.0.0.1" or "fe80::1%eth0"
  double speedMbps = 0; // link speed as far as the OS tells (0: unknown)
  double latencyUs = 0; // rough one-way latency estimate
  int maxComms = 65536;
};

// What a transport can do, so callers ask instead of crashing on a stub.
struct Capabilities {
  bool needsRegistration = false;  // regMr must be called before isend/irecv
  // regMr makes handles that spare isend / irecv a registration of their
  // own (ibverbs: ibv_reg_mr pins pages, milliseconds for a large buffer);
  // elsewhere it is a no-op and callers need not call it.
  bool registersMemory = false;
  bool deviceMemory = false;       // can send from / receive into GPU memory
  // Both ends prove the secret to each other. Where only the connector can
  // (netplugin: its connections carry data one way), a connector without the
  // secret is still never accepted, but its connect() may succeed and its
  // sends fail later instead.
  bool mutualAuthentication = true;
  // The largest message isend / irecv take (0: any). The executor sends a
  // larger transfer as several messages of this size and a last smaller one.
  size_t maxMessageBytes = 0;
};

// An in-flight isend / irecv. Each transport derives its own request type from
// this; owned by the transport: valid until test() reports it done (or its comm
// is closed), then freed by the transport. Callers only pass it back.
class Request {
 protected:
  Request() = default;
  ~Request() = default;
};

class SendComm {
 public:
  virtual ~SendComm() = default;
  // Starts sending `size` bytes with `tag`. `data` must stay valid and unchanged
  // until test() reports the request done. Requests on one comm complete in order.
  virtual Status isend(const void* data, size_t size, uint32_t tag, void* mhandle, Request** req) = 0;
};

class RecvComm {
 public:
  virtual ~RecvComm() = default;
  // Posts a receive of at most `capacity` bytes. Receives match sends on this
  // connection in order; the sender's tag must equal `tag` and its size must be
  // <= capacity, or test() fails with RemoteError naming both (this is how a
  // rank calling a different collective than its peer is noticed).
  virtual Status irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, Request** req) = 0;
};

class ListenComm {
 public:
  virtual ~ListenComm() = default;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual Capabilities capabilities() const = 0;
  virtual int deviceCount() const = 0;
  virtual Status deviceProperties(int dev, DeviceProperties* props) const = 0;

  // Opens a listening endpoint on `dev` and fills `handle` for peers to connect to.
  virtual Status listen(int dev, Handle* handle, std::unique_ptr<ListenComm>* listenComm) = 0;
  // Non-blocking. Returns ok with *sendComm still null while the connection is
  // being set up: call again. `connectorId` (e.g. the caller's rank) is told to the
  // accepting side. Fails on a refused / unauthenticated connection.
  virtual Status connect(int dev, const Handle& handle, uint64_t connectorId,
                         std::unique_ptr<SendComm>* sendComm) = 0;
  // Non-blocking. Returns ok with *recvComm null when no authenticated connection
  // is ready yet. Strangers are dropped inside and logged, never returned.
  virtual Status accept(ListenComm& listenComm, std::unique_ptr<RecvComm>* recvComm,
                        uint64_t* connectorId) = 0;

  // Memory registration hooks (a no-op returning a null handle where
  // capabilities() has neither needsRegistration nor registersMemory).
  // A handle covers [data, data + size): isend / irecv take it for a message
  // inside that range (a message outside it is refused), and null for any
  // other. Unlike the rest of a transport, these two may be called from any
  // thread while the executor uses the transport's comms, as long as a handle
  // is deregistered only once no request posted with it is in flight.
  virtual Status regMr(void* data, size_t size, void** mhandle) {
    (void)data, (void)size;
    *mhandle = nullptr;
    return Status::ok();
  }
  virtual Status deregMr(void* mhandle) {
    (void)mhandle;
    return Status::ok();
  }

  // Makes progress; *done = true once the request completed (then *size holds
  // the bytes actually moved and the request is freed). An error completes and
  // frees the request too.
  virtual Status test(Request* req, bool* done, size_t* size) = 0;
  // Blocks up to timeoutMs until one of this transport's pending requests may be
  // able to make progress (e.g. poll() on its sockets). Returns early on
  // activity; spurious returns are allowed.
  virtual Status wait(int timeoutMs) = 0;

  // The caller is about to do local work (a copy, a reduction) and will not
  // test this transport's requests until it calls again with false: a
  // transport may let a peer make a copy this end would otherwise make
  // (shm: a sender pushes into this end's offered receive). A hint only.
  virtual void noteLocalWork(bool busy) { (void)busy; }

  // The communicator failed or was aborted: what its connections sent need
  // not reach the peers any more. A transport whose close waits for delivery
  // (ucx: a flush the peer must take part in) stops waiting from now on.
  virtual void dropUndelivered() {}
};

}  // namespace braid::transport
