// Bootstrap: one rank's out-of-band channel to the other ranks of a
// communicator, used while the communicator is set up (exchanging transport
// handles, host ids, topology) and never on the data path.
//
// create() meets the other ranks at the rendezvous root named by the UniqueId
// (see root.h), learns every rank's bootstrap listener address and host id,
// and returns. After that, ranks message each other directly: each rank
// connects lazily to a peer the first time it sends to it, proving the secret
// (net::authenticateConnector, Purpose::kBootstrap); incoming messages are
// drained by the Inbox thread, so sends never deadlock against each other.
//
// Every call has a deadline of timeoutMs from its start. A peer that closed
// its connection gives RemoteError naming it; a peer that stays silent gives
// Timeout naming it.
//
// Threading: one caller thread at a time (the communicator's init or the
// executor). Tags at or above kReservedTagBase belong to allGather/barrier.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/bootstrap/inbox.h"
#include "core/bootstrap/protocol.h"
#include "core/bootstrap/unique_id.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::bootstrap {

class Bootstrap {
 public:
  static constexpr uint32_t kReservedTagBase = 0x80000000u;

  // Blocks until all nranks ranks met at the root or timeoutMs (> 0) passed.
  // InvalidArgument on bad arguments; Timeout naming the ranks that never
  // arrived; InvalidUsage when ranks disagree (nranks, duplicate rank);
  // RemoteError when the root or a rank went away during the rendezvous.
  // The bootstrap listener binds the interface chosen by BRAID_SOCKET_IFNAME
  // when set, else the local address this rank uses to reach the root.
  static Status create(const UniqueId& id, int rank, int nranks, int timeoutMs,
                       std::unique_ptr<Bootstrap>* out);
  ~Bootstrap();

  // `data` is copied before send returns. tag < kReservedTagBase; size at most
  // Inbox::kMaxMessageBytes (64 MiB; InvalidArgument beyond, as for allGather).
  Status send(int peer, uint32_t tag, const void* data, size_t size);
  // Receives the oldest message from `peer` with `tag`; its size must be `size`
  // (InvalidUsage otherwise). Messages with other tags stay buffered.
  Status recv(int peer, uint32_t tag, void* data, size_t size);
  // data holds nranks slots of sizePerRank bytes, this rank's slot filled;
  // fills the others. Ring: nranks-1 messages per rank.
  Status allGather(void* data, size_t sizePerRank);
  // Returns once every rank has entered the barrier (dissemination, log2 rounds).
  Status barrier();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const transport::Secret& secret() const { return secret_; }
  // The host id rank `r` reported (see host_id.h); same string: same host.
  const std::string& hostId(int r) const { return peers_[static_cast<size_t>(r)].hostId; }
  // Where rank `r`'s bootstrap listener is (for log lines and diagnostics).
  const net::SocketAddress& address(int r) const { return peers_[static_cast<size_t>(r)].address; }

 private:
  Bootstrap(int rank, int nranks, int timeoutMs, const transport::Secret& secret);
  Status sendTo(int peer, uint32_t tag, const void* data, size_t size, const Deadline& deadline);
  Status recvFrom(int peer, uint32_t tag, void* data, size_t size, const Deadline& deadline);
  Status checkPeer(int peer, const char* what) const;

  int rank_;
  int nranks_;
  int timeoutMs_;
  transport::Secret secret_;
  std::vector<protocol::PeerInfo> peers_;
  std::unique_ptr<Inbox> inbox_;
  std::vector<net::Fd> out_;       // lazily connected, one per peer
  std::vector<Status> outError_;   // a broken outgoing stream stays broken
};

}  // namespace braid::bootstrap
