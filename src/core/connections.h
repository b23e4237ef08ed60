// Connections: this rank's one-way links to every peer, each over the transport
// chosen for that pair (shared memory on the same host, the network otherwise),
// plus the per-direction message counters that make wire tags. Owned by the
// communicator; the executor is its only user once set up.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "transports/transport.h"

namespace braid::core {

struct PeerLink {
  transport::Transport* transport = nullptr;  // owned by Connections::transports
  std::unique_ptr<transport::SendComm> send;
  std::unique_ptr<transport::RecvComm> recv;
  // Messages sent to / received from this peer so far. Both ends count the same
  // messages, so (collective kind, counter) is a tag the receiver can verify.
  uint32_t sent = 0;
  uint32_t received = 0;
  // The largest message to hand this link's transport (0: any): the smallest
  // of the transport's limit and BRAID_MAX_MESSAGE_BYTES at this end and at
  // the peer's (exchanged at init), so both ends cut a transfer into the
  // same messages.
  size_t maxMessageBytes = 0;
  // The transport's Capabilities::registersMemory: its messages go with the
  // handles of registered memory (registrations.h).
  bool registersMemory = false;
};

struct Connections {
  std::vector<std::unique_ptr<transport::Transport>> transports;  // those some peer uses
  std::vector<PeerLink> peers;  // indexed by rank; the own entry stays empty

  // Blocks up to timeoutMs until some transport may progress. With one
  // transport that is its own wait(); with several, each gets a short turn,
  // since their wake-up mechanisms (poll, futex) cannot be waited on together.
  Status wait(int timeoutMs) {
    if (transports.size() == 1) return transports[0]->wait(timeoutMs);
    for (auto& t : transports) BRAID_RETURN_IF_ERROR(t->wait(timeoutMs > 0 ? 1 : 0));
    return Status::ok();
  }

  // Drops every link (in-flight requests die with them). Used after a failure,
  // when a transport may still hold pointers into user buffers, and at the
  // end. `failed`: the communicator failed or was aborted, so what the links
  // sent need not reach the peers (Transport::dropUndelivered).
  void closeAll(bool failed) {
    if (failed)
      for (auto& t : transports) t->dropUndelivered();
    for (PeerLink& p : peers) {
      p.send.reset();
      p.recv.reset();
    }
  }
};

// Wire tag of the n-th message of a direction: the collective kind in the top
// byte catches ranks that called different collectives; the counter catches
// ranks that got out of step.
inline uint32_t wireTag(uint8_t kind, uint32_t counter) {
  return (static_cast<uint32_t>(kind) << 24) | (counter & 0xffffffu);
}

}  // namespace braid::core
