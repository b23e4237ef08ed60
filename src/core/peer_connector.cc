#include "core/peer_connector.h"

#include <algorithm>

#include "base/deadline.h"
#include "base/log.h"
#include "core/bootstrap/bootstrap.h"
#include "transports/registry.h"

namespace braid::core {
namespace {

// The transports a rank may use, in the order of their slot in the exchanged
// handle table. ucx, netplugin and ibverbs are made only when BRAID_NET or
// BRAID_TRANSPORT names them.
const char* const kCandidates[] = {"tcp", "shm", "ucx", "netplugin", "ibverbs"};
constexpr int kNumCandidates = 5;

int slotOf(const std::string& name) {
  for (int i = 0; i < kNumCandidates; ++i)
    if (name == kCandidates[i]) return i;
  return -1;
}

// The tighter of two message limits, where 0 is none.
uint64_t smallestLimit(uint64_t a, uint64_t b) { return a == 0 ? b : b == 0 ? a : std::min(a, b); }

bool registered(const std::string& name) {
  auto names = transport::registeredTransports();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Status connectPeers(bootstrap::Bootstrap& bs, const PeerSetup& s, Connections* out) {
  out->peers.resize(s.nranks);
  const int me = s.rank;

  // Which transport every pair uses. The decision only reads data every rank
  // has (host ids, the environment's override), so both ends agree... provided
  // shm can be created on every rank of a host; a rank that cannot create it
  // tells the others through the handle table (an empty shm slot), below.
  const bool wantShm = s.forcedTransport.empty() && registered("shm");
  // The network: what pairs on different hosts use (BRAID_NET, as NCCL_NET).
  const std::string network = s.network.empty() ? "tcp" : s.network;
  const int netSlot = slotOf(network);
  if (netSlot < 0 || network == "shm")
    return invalidArgument("BRAID_NET='" + network +
                           "': expected tcp, ucx, netplugin or ibverbs (the transport between hosts)");
  std::vector<int> slotFor(s.nranks, netSlot);
  if (!s.forcedTransport.empty()) {
    int slot = slotOf(s.forcedTransport);
    if (slot < 0 && !registered(s.forcedTransport))
      return invalidArgument("BRAID_TRANSPORT='" + s.forcedTransport + "' names no transport built into braid");
    if (slot < 0) return notSupported("BRAID_TRANSPORT='" + s.forcedTransport + "' cannot carry a communicator yet");
    std::fill(slotFor.begin(), slotFor.end(), slot);
  }

  // Create and listen on each transport this rank might use.
  std::vector<std::unique_ptr<transport::Transport>> made(kNumCandidates);
  std::vector<std::unique_ptr<transport::ListenComm>> listeners(kNumCandidates);
  // Every rank's row of the exchanged table: its endpoint on each transport
  // (all zeros where it has none) and its message limit there (the
  // transport's or BRAID_MAX_MESSAGE_BYTES, the smaller). Limits may differ
  // between ranks (a plugin's per-device maxP2pBytes, the variable set on
  // one host only); a pair cuts at the smaller of its two.
  struct Row {
    uint8_t handles[kNumCandidates][transport::kHandleBytes];
    uint64_t maxMessageBytes[kNumCandidates];
  };
  std::vector<Row> table(static_cast<size_t>(s.nranks), Row{});
  auto handleAt = [&](int rank, int slot) { return table[rank].handles[slot]; };
  for (int slot = 0; slot < kNumCandidates; ++slot) {
    const bool isShm = slot == slotOf("shm");
    const bool needed =
        s.forcedTransport.empty() ? (slot == netSlot || (isShm && wantShm)) : slot == slotFor[0];
    if (!needed || s.nranks == 1) continue;
    Status st = transport::createTransport(kCandidates[slot], s.options, &made[slot]);
    if (!st.isOk()) {
      if (!s.forcedTransport.empty() || slot == netSlot)
        return st.prefix(std::string("creating ") + kCandidates[slot]);
      BRAID_INFO("%s transport unavailable, peers on this host use %s: %s", kCandidates[slot],
                 network.c_str(), st.message().c_str());
      continue;
    }
    transport::Handle h;
    BRAID_RETURN_IF_ERROR(made[slot]->listen(0, &h, &listeners[slot]));
    std::copy(h.bytes.begin(), h.bytes.end(), handleAt(me, slot));
    table[me].maxMessageBytes[slot] =
        smallestLimit(made[slot]->capabilities().maxMessageBytes, s.maxMessageBytes);
  }
  if (s.nranks == 1) return Status::ok();
  BRAID_RETURN_IF_ERROR(bs.allGather(table.data(), sizeof(Row)));

  auto present = [&](int rank, int slot) {
    const uint8_t* h = handleAt(rank, slot);
    return std::any_of(h, h + transport::kHandleBytes, [](uint8_t b) { return b != 0; });
  };
  if (s.forcedTransport.empty()) {
    const int shm = slotOf("shm");
    for (int p = 0; p < s.nranks; ++p)
      slotFor[p] =
          (p != me && bs.hostId(p) == bs.hostId(me) && present(me, shm) && present(p, shm)) ? shm : netSlot;
  }
  for (int p = 0; p < s.nranks; ++p)
    if (p != me && !present(p, slotFor[p]))
      return invalidArgument("rank " + std::to_string(p) + " offers no " + kCandidates[slotFor[p]] +
                             " endpoint: BRAID_TRANSPORT and BRAID_NET must be the same on every rank");
  for (int p = 0; p < s.nranks; ++p) {
    if (p == me) continue;
    PeerLink& link = out->peers[p];
    link.transport = made[slotFor[p]].get();
    link.registersMemory = link.transport->capabilities().registersMemory;
    const int slot = slotFor[p];
    link.maxMessageBytes = smallestLimit(table[me].maxMessageBytes[slot], table[p].maxMessageBytes[slot]);
  }

  Deadline deadline(s.timeoutMs);
  int connected = 0, accepted = 0;
  const int others = s.nranks - 1;
  while (connected < others || accepted < others) {
    bool progressed = false;
    for (int k = 1; k < s.nranks; ++k) {  // nearest right neighbour first: rings start sooner
      const int p = (me + k) % s.nranks;
      PeerLink& link = out->peers[p];
      if (link.send) continue;
      transport::Handle h;
      std::copy_n(handleAt(p, slotFor[p]), transport::kHandleBytes, h.bytes.begin());
      Status st = link.transport->connect(0, h, static_cast<uint64_t>(me), &link.send);
      if (!st.isOk()) return st.prefix("connecting to rank " + std::to_string(p));
      if (link.send) ++connected, progressed = true;
    }
    for (int slot = 0; slot < kNumCandidates; ++slot) {
      if (!listeners[slot]) continue;
      std::unique_ptr<transport::RecvComm> recv;
      uint64_t from = 0;
      BRAID_RETURN_IF_ERROR(made[slot]->accept(*listeners[slot], &recv, &from));
      if (!recv) continue;
      progressed = true;
      if (from >= static_cast<uint64_t>(s.nranks) || static_cast<int>(from) == me || out->peers[from].recv ||
          slotFor[from] != slot) {
        // It proved the secret, so it is one of ours behaving wrongly.
        return remoteError("a peer connected over " + std::string(kCandidates[slot]) + " claiming to be rank " +
                           std::to_string(from) + ", which is out of range, already connected or expected elsewhere");
      }
      out->peers[from].recv = std::move(recv);
      ++accepted;
    }
    if (progressed) continue;
    if (s.aborted && s.aborted->load()) return abortedError("communicator init aborted");
    if (deadline.expired()) {
      std::string missing;
      for (int p = 0; p < s.nranks; ++p) {
        if (p == me) continue;
        if (!out->peers[p].send) missing += " to " + std::to_string(p);
        if (!out->peers[p].recv) missing += " from " + std::to_string(p);
      }
      return timeoutError("connecting to peers timed out after " + std::to_string(s.timeoutMs) +
                          " ms; still missing connections" + missing);
    }
    for (auto& t : made)
      if (t) BRAID_RETURN_IF_ERROR(t->wait(1));
  }
  for (int slot = 0; slot < kNumCandidates; ++slot) {
    if (!made[slot]) continue;
    bool used = false;
    for (const PeerLink& l : out->peers) used |= l.transport == made[slot].get();
    listeners[slot].reset();
    if (used) out->transports.push_back(std::move(made[slot]));
  }
  return Status::ok();
}

}  // namespace braid::core
