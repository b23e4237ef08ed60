#include "core/bootstrap/rendezvous.h"

#include <sys/socket.h>

#include <climits>
#include <string>

#include "base/env.h"
#include "base/log.h"
#include "core/bootstrap/host_id.h"
#include "transports/net/auth.h"

namespace braid::bootstrap {
namespace {

// The listener goes where peers can reach it: the interface the user chose,
// else the local address this rank's route to the root uses (for a root on
// loopback that is loopback, for a root across the network the NIC facing it).
Status chooseListenAddress(int rootFd, int rootFamily, net::SocketAddress* out) {
  std::string selector = env::getString("BRAID_SOCKET_IFNAME");
  if (!selector.empty()) {
    std::vector<net::Interface> ifaces;
    BRAID_RETURN_IF_ERROR(net::findInterfaces(selector, rootFamily, &ifaces));
    if (ifaces.empty())
      return invalidUsage("no network interface that is up matches BRAID_SOCKET_IFNAME='" +
                          selector + "' for the bootstrap listener");
    *out = ifaces[0].address;
    return Status::ok();
  }
  net::SocketAddress local;
  local.length = sizeof(local.storage);
  if (getsockname(rootFd, reinterpret_cast<sockaddr*>(&local.storage), &local.length) != 0)
    return systemError("getsockname on the connection to the rendezvous root", errno);
  local.setPort(0);
  *out = local;
  return Status::ok();
}

// *answered: the root's reply arrived (a non-ok status is then the root's verdict).
Status readReply(int fd, const Deadline& deadline, int nranks,
                 std::vector<protocol::PeerInfo>* peers, bool* answered) {
  *answered = false;
  uint8_t header[protocol::kReplyHeaderBytes];
  BRAID_RETURN_IF_ERROR(net::recvAll(fd, header, sizeof(header), deadline));
  Code code = Code::kOk;
  size_t length = 0;
  BRAID_RETURN_IF_ERROR(protocol::decodeReplyHeader(header, &code, &length));
  // Bound what a broken root can make us allocate: a table entry is at most
  // 32 + 2 + 255 bytes, an error message a few KiB.
  size_t limit = static_cast<size_t>(nranks) * 289 + 65536;
  if (length > limit) return remoteError("oversized reply from the rendezvous root");
  std::vector<uint8_t> payload(length);
  BRAID_RETURN_IF_ERROR(net::recvAll(fd, payload.data(), length, deadline));
  *answered = true;
  if (code != Code::kOk) return Status(code, std::string(payload.begin(), payload.end()));
  return protocol::decodeTable(payload, nranks, peers);
}

}  // namespace

Status joinRendezvous(const UniqueId& id, int rank, int nranks, int timeoutMs,
                      const Deadline& deadline, net::Fd* listener,
                      std::vector<protocol::PeerInfo>* peers) {
  const std::string root = id.root.toString();
  const std::string who = "rank " + std::to_string(rank);
  net::Fd conn;
  Status st = net::connectTo(id.root, deadline, &conn);
  if (!st.isOk()) {
    if (st.code() == Code::kTimeout)
      return timeoutError(who + " could not reach the rendezvous root at " + root + " within " +
                          std::to_string(timeoutMs) + " ms: " + st.message());
    return st.prefix(who + " connecting to the rendezvous root at " + root);
  }
  net::SocketAddress want, bound;
  BRAID_RETURN_IF_ERROR(chooseListenAddress(conn.get(), id.root.family(), &want));
  BRAID_RETURN_IF_ERROR(net::listenOn(want, 1024, listener, &bound)
                            .prefix(who + " opening its bootstrap listener"));
  st = net::authenticateConnector(conn.get(), id.secret, net::Purpose::kBootstrap,
                                  static_cast<uint64_t>(rank), deadline);
  if (!st.isOk())
    return st.prefix(who + " could not authenticate to the rendezvous root at " + root +
                     " (is the unique id from this job's braidGetUniqueId?)");

  protocol::JoinRequest join;
  join.rank = rank;
  join.nranks = nranks;
  join.timeoutMs = static_cast<uint32_t>(timeoutMs);
  join.remainingMs = static_cast<uint32_t>(deadline.remainingMs(INT_MAX));
  join.listen = bound;
  join.hostId = localHostId();
  std::vector<uint8_t> bytes;
  protocol::encodeJoin(join, &bytes);
  BRAID_RETURN_IF_ERROR(net::sendAll(conn.get(), bytes.data(), bytes.size(), deadline)
                            .prefix(who + " sending its join request to " + root));
  BRAID_TRACE("%s joined the rendezvous at %s, listening at %s", who.c_str(), root.c_str(),
              bound.toString().c_str());

  Deadline answer(static_cast<int64_t>(join.remainingMs) + kRootAnswerGraceMs);
  bool answered = false;
  st = readReply(conn.get(), answer, nranks, peers, &answered);
  if (st.isOk() || answered) return st;
  if (st.code() == Code::kTimeout)
    return timeoutError(who + ": no answer from the rendezvous root at " + root + " within " +
                        std::to_string(timeoutMs) + " ms");
  if (st.code() == Code::kRemoteError)
    return remoteError(who + ": the rendezvous root at " + root +
                       " went away before the communicator formed (" + st.message() + ")");
  return st.prefix(who + " waiting for the rendezvous root at " + root);
}

}  // namespace braid::bootstrap
