// The rendezvous root: a listener, served on a background thread, that forms
// exactly one communicator. Every rank connects, proves the secret
// (net::authenticateConnector, Purpose::kBootstrap, connector id = its rank),
// and sends (rank, nranks, its bootstrap listener address, its host id). When
// all nranks ranks have arrived the root sends each of them the table of every
// rank's address and host id, and its thread ends.
//
// Errors reach every rank that arrived, as the status its Bootstrap::create
// returns: ranks that disagree on nranks, a rank out of range or claimed twice
// (InvalidUsage); a rank that left before the table was sent (RemoteError); the
// earliest arrived rank's deadline passing first (Timeout, "ranks 3, 5 of 8
// never arrived at the rendezvous within 2000 ms"). After an error the root
// keeps answering late ranks with the same error until the last arrived rank's
// deadline; then it takes no new connections, answers those still proving the
// secret or sending their request (each within its handshake deadline), and ends.
//
// Strangers (wrong secret, garbage, silence) are dropped and logged without
// delaying genuine ranks. A root that no rank ever joins ends after its idle
// timeout. Root threads live in a process-wide registry: stopAllRoots() ends
// and joins them (the registry also does that at process exit).
#pragma once

#include <string>

#include "base/status.h"
#include "core/bootstrap/unique_id.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::bootstrap {

struct RootOptions {
  // The communicator size when the caller knows it (braidCommInitFromEnv);
  // 0: taken from the first rank that arrives.
  int nranks = 0;
  // How long the root waits for its first rank; < 0: BRAID_TIMEOUT_MS.
  int idleTimeoutMs = -1;
  // Handshake deadline for each incoming connection.
  int handshakeTimeoutMs = 5000;
};

// For braidGetUniqueId: picks an interface (selector as BRAID_SOCKET_IFNAME;
// family from BRAID_SOCKET_FAMILY), listens on an ephemeral port, draws a fresh
// secret and starts serving. *out names the root and carries the secret.
Status startRoot(const std::string& ifSelector, UniqueId* out, const RootOptions& options = {});

// For braidCommInitFromEnv, on rank 0: serves at addr's port, bound to addr
// itself or, when that address is not local (e.g. a NAT'd MASTER_ADDR), to the
// any-address of its family. *bound (optional) gets the address listened on.
Status startRootAt(const net::SocketAddress& addr, const transport::Secret& secret,
                   const RootOptions& options = {}, net::SocketAddress* bound = nullptr);

// Ends every root thread of this process and joins them; safe to call at any
// time (ranks still waiting on those roots see RemoteError). Idempotent.
void stopAllRoots();
// Roots whose thread has not ended yet (for tests and diagnostics).
int runningRoots();

}  // namespace braid::bootstrap
