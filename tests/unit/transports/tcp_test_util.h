// Helpers for the tests of the IP-addressed transports (tcp, ucx): two
// transports (the two ends) driven from one thread, as the executor drives
// its transport.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "base/deadline.h"
#include "tests/common/message_pattern.h"
#include "transports/registry.h"
#include "transports/transport.h"

namespace braid::transport::testing {

inline Options tcpOptions(int nSocks, uint8_t secretSeed = 1, int handshakeTimeoutMs = 2000) {
  Options o;
  for (size_t i = 0; i < o.secret.size(); ++i) o.secret[i] = static_cast<uint8_t>(secretSeed * 31 + i);
  o.nSocks = nSocks;
  o.ifname = "lo";
  o.handshakeTimeoutMs = handshakeTimeoutMs;
  return o;
}

using test::pattern;

struct Pending {
  explicit Pending(Transport* t) : transport(t) {}
  Transport* transport;
  Request* req = nullptr;
  bool done = false;
  size_t size = 0;
  Status status;
};

// Tests every request until all are done (or failed) or the deadline passes;
// between rounds without progress, waits on both transports.
inline void driveAll(std::vector<Pending>& reqs, Transport& a, Transport& b, int timeoutMs = 10000) {
  Deadline deadline(timeoutMs);
  while (!deadline.expired()) {
    bool all = true;
    for (Pending& p : reqs) {
      if (p.done) continue;
      p.status = p.transport->test(p.req, &p.done, &p.size);
      if (!p.status.isOk()) p.done = true;
      all &= p.done;
    }
    if (all) return;
    ASSERT_TRUE(a.wait(1).isOk());
    ASSERT_TRUE(b.wait(1).isOk());
  }
  FAIL() << "requests did not finish within " << timeoutMs << " ms";
}

// A connected sender / receiver pair and the calls every data-path test
// makes on it; test fixtures derive from it and fill the four members.
class ConnectedPair {
 protected:
  Pending postSend(const void* data, size_t size, uint32_t tag) {
    Pending p(sender_.get());
    Status st = send_->isend(data, size, tag, nullptr, &p.req);
    EXPECT_TRUE(st.isOk()) << st.message();
    return p;
  }
  Pending postRecv(void* data, size_t capacity, uint32_t tag) {
    Pending p(receiver_.get());
    Status st = recv_->irecv(data, capacity, tag, nullptr, &p.req);
    EXPECT_TRUE(st.isOk()) << st.message();
    return p;
  }
  void drive(std::vector<Pending>& reqs) { driveAll(reqs, *sender_, *receiver_); }

  std::unique_ptr<Transport> sender_, receiver_;
  std::unique_ptr<SendComm> send_;
  std::unique_ptr<RecvComm> recv_;
};

// Connects from `sender` to `listener` (whose handle is `handle`) and accepts
// on `receiver`, one thread, until both ends exist (5 s at most).
inline Status connectVia(Transport& sender, Transport& receiver, ListenComm& listener, const Handle& handle,
                         uint64_t connectorId, std::unique_ptr<SendComm>* sendComm,
                         std::unique_ptr<RecvComm>* recvComm, uint64_t* acceptedId = nullptr) {
  Deadline deadline(5000);
  uint64_t id = ~0ull;
  while (!(*sendComm && *recvComm)) {
    if (deadline.expired()) return timeoutError("connectPair");
    if (!*sendComm) BRAID_RETURN_IF_ERROR(sender.connect(0, handle, connectorId, sendComm));
    if (!*recvComm) BRAID_RETURN_IF_ERROR(receiver.accept(listener, recvComm, &id));
    BRAID_RETURN_IF_ERROR(sender.wait(1));
    BRAID_RETURN_IF_ERROR(receiver.wait(1));
  }
  if (acceptedId) *acceptedId = id;
  return Status::ok();
}

// Listens on `receiver`, connects from `sender` and accepts, one thread.
inline Status connectPair(Transport& sender, Transport& receiver, uint64_t connectorId,
                          std::unique_ptr<SendComm>* sendComm, std::unique_ptr<RecvComm>* recvComm,
                          uint64_t* acceptedId = nullptr) {
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  BRAID_RETURN_IF_ERROR(receiver.listen(0, &handle, &listener));
  return connectVia(sender, receiver, *listener, handle, connectorId, sendComm, recvComm, acceptedId);
}

}  // namespace braid::transport::testing
