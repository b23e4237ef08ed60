// Sets up a communicator's Connections: picks a transport for every pair of
// ranks, exchanges listening handles over the bootstrap, and connects the full
// mesh (one SendComm to and one RecvComm from every peer).
//
// Choice per pair, the same on both ends: BRAID_TRANSPORT when set; otherwise
// "shm" when the two ranks report the same host id (BRAID_HOSTID) and the shm
// transport can be created here, else the network (BRAID_NET: "tcp" by
// default, or "ucx").
#pragma once

#include <atomic>
#include <string>

#include "base/status.h"
#include "core/connections.h"

namespace braid::bootstrap {
class Bootstrap;
}

namespace braid::core {

struct PeerSetup {
  int rank = 0;
  int nranks = 1;
  int timeoutMs = 300000;
  std::string forcedTransport;  // "" = choose per pair
  std::string network;          // between hosts: "" (tcp) or a transport's name
  size_t maxMessageBytes = 0;   // BRAID_MAX_MESSAGE_BYTES (0: each transport's own limit)
  transport::Options options;   // secret, sockets, interface, ...
  const std::atomic<bool>* aborted = nullptr;
};

Status connectPeers(bootstrap::Bootstrap& bootstrap, const PeerSetup& setup, Connections* out);

}  // namespace braid::core
