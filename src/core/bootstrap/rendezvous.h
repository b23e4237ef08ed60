// The rank's side of the rendezvous (see root.h for the root's): open this
// rank's bootstrap listener, meet the root, and get the table of every rank.
#pragma once

#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "core/bootstrap/protocol.h"
#include "core/bootstrap/unique_id.h"
#include "transports/net/socket.h"

namespace braid::bootstrap {

// How long past its own deadline a rank keeps waiting for the root's answer:
// the root sends "ranks ... never arrived" at that deadline, and it must get
// here for the rank to report which ranks were missing.
constexpr int kRootAnswerGraceMs = 500;

// On success *listener is this rank's listening socket and *peers holds every
// rank's listener address and host id (index = rank). Errors are those of
// Bootstrap::create.
Status joinRendezvous(const UniqueId& id, int rank, int nranks, int timeoutMs,
                      const Deadline& deadline, net::Fd* listener,
                      std::vector<protocol::PeerInfo>* peers);

}  // namespace braid::bootstrap
