// Connections: this rank's one-way links to every peer over one transport,
// plus the per-direction message counters that make wire tags. Owned by the
// communicator; the executor is its only user once set up.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "transports/transport.h"

namespace braid::core {

struct PeerLink {
  std::unique_ptr<transport::SendComm> send;
  std::unique_ptr<transport::RecvComm> recv;
  // Messages sent to / received from this peer so far. Both ends count the same
  // messages, so (collective kind, counter) is a tag the receiver can verify.
  uint32_t sent = 0;
  uint32_t received = 0;
};

struct Connections {
  std::unique_ptr<transport::Transport> transport;
  std::vector<PeerLink> peers;  // indexed by rank; the own entry stays empty

  // Drops every link (in-flight requests die with them). Used after a failure,
  // when the transport may still hold pointers into user buffers.
  void closeAll() {
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
