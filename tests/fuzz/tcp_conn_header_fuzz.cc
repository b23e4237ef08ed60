// The TCP transport's connection header (tcp_listen.cc), the first bytes a
// peer sends after proving the secret. It is parsed inside TcpListenComm, not
// by a free function, so this target drives a real listener on loopback: each
// fuzzed socket connects, completes a genuine handshake, sends its bytes as the
// header and closes its sending side; the listener is settled after every socket
// so the order it sees them in is the order here.
// Input: per socket (up to kMaxSockets), a control byte (bits 0-4: how many
// header bytes follow, so short, exact and long headers all occur; bit 5: which
// of two connector ids it authenticates as), then those bytes.
// Properties: the listener never crashes, never stalls on a closed socket, and
// hands out exactly the connections a simple model of the grouping rules
// predicts (valid header; same nSocks within a connection; each index once),
// each with the connector id that was authenticated.
#include <poll.h>
#include <sys/socket.h>

#include <map>
#include <set>
#include <utility>

#include "fuzz_input.h"
#include "fuzz_target.h"
#include "transports/net/auth.h"
#include "transports/tcp/tcp_listen.h"

namespace net = braid::net;
namespace tcp = braid::tcp;
using braid::fuzz::FuzzInput;

namespace {

constexpr int kMaxSockets = 8;
constexpr int kPollMs = 5000;  // a stall this long is a bug, not a slow machine

// Quiet: every malformed header is logged as a dropped connection.
const bool kQuiet = setenv("BRAID_DEBUG", "NONE", /*overwrite=*/0) == 0;

const braid::transport::Secret kSecret = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

struct Harness {
  std::shared_ptr<tcp::PollSet> pollSet = std::make_shared<tcp::PollSet>();
  std::unique_ptr<tcp::TcpListenComm> listener;
  std::vector<net::Fd> clients;  // kept open until the end: only their sending side is shut
  std::map<uint64_t, int> handedOut;  // connector id -> connections the listener handed out

  Harness() {
    net::SocketAddress bind, bound;
    BRAID_FUZZ_CHECK(net::parseAddress("127.0.0.1:0", &bind).isOk(), "loopback address");
    net::Fd fd;
    BRAID_FUZZ_CHECK(net::listenOn(bind, 64, &fd, &bound).isOk(), "listen on loopback");
    braid::transport::Options options;
    options.secret = kSecret;
    options.handshakeTimeoutMs = 60000;  // nothing here may time out
    listener = std::make_unique<tcp::TcpListenComm>(std::move(fd), bound, options, pollSet);
  }

  // One accept() call; counts what it hands out. Returns whether sockets are
  // still pending (waiting for bytes).
  bool acceptOnce() {
    std::unique_ptr<braid::transport::RecvComm> comm;
    uint64_t connectorId = ~0ull;
    BRAID_FUZZ_CHECK(listener->accept(&comm, &connectorId).isOk(), "accept never fails on a bad peer");
    if (comm) ++handedOut[connectorId];
    std::vector<pollfd> fds;
    bool readyNow = listener->addPollFds(&fds);
    return readyNow || fds.size() > 1;
  }

  void waitForListener() {
    std::vector<pollfd> fds;
    listener->addPollFds(&fds);
    BRAID_FUZZ_CHECK(poll(fds.data(), fds.size(), kPollMs) > 0, "listener stalled");
  }

  void connectOne(uint64_t connectorId, const std::vector<uint8_t>& header) {
    net::Fd fd;
    BRAID_FUZZ_CHECK(net::connectTo(listener->address(), braid::Deadline(kPollMs), &fd).isOk(), "connect");
    net::ConnectorHandshake hs(kSecret, net::Purpose::kTcpData, connectorId);
    for (;;) {
      bool finished = false;
      BRAID_FUZZ_CHECK(hs.step(fd.get(), &finished).isOk(), "genuine handshake succeeds");
      if (finished) break;
      // The listener answers only inside accept(): step it, then wait for either side.
      acceptOnce();
      std::vector<pollfd> fds{{fd.get(), static_cast<short>(hs.wantsWrite() ? POLLOUT : POLLIN), 0}};
      listener->addPollFds(&fds);
      BRAID_FUZZ_CHECK(poll(fds.data(), fds.size(), kPollMs) > 0, "handshake stalled");
    }
    if (!header.empty())
      BRAID_FUZZ_CHECK(net::sendAll(fd.get(), header.data(), header.size(), braid::Deadline(kPollMs)).isOk(),
                       "send header");
    shutdown(fd.get(), SHUT_WR);
    clients.push_back(std::move(fd));
    while (acceptOnce()) waitForListener();
  }
};

// What the listener should do, written from its contract (tcp_listen.h, frame.h).
struct Model {
  struct Group {
    uint16_t nSocks;
    std::set<uint16_t> indexes;
  };
  std::map<std::pair<uint64_t, uint64_t>, Group> groups;  // (connector id, conn id)
  std::map<uint64_t, int> complete;

  void socket(uint64_t connectorId, const std::vector<uint8_t>& bytes) {
    if (bytes.size() < sizeof(tcp::ConnHeader)) return;  // closed before a whole header
    tcp::ConnHeader h;
    std::memcpy(&h, bytes.data(), sizeof(h));
    if (h.magic != tcp::kConnMagic || h.nSocks < 1 || h.nSocks > tcp::kMaxSocks || h.index >= h.nSocks) return;
    auto key = std::make_pair(connectorId, h.connId);
    auto it = groups.try_emplace(key, Group{h.nSocks, {}}).first;
    if (it->second.nSocks != h.nSocks || !it->second.indexes.insert(h.index).second) return;
    if (it->second.indexes.size() == h.nSocks) {
      ++complete[connectorId];
      groups.erase(it);
    }
  }
};

}  // namespace

BRAID_FUZZ_TARGET(tcp_conn_header) {
  (void)kQuiet;
  FuzzInput in(data, size);
  Harness harness;
  Model model;
  for (int i = 0; i < kMaxSockets && in.left() > 0; ++i) {
    uint8_t control = in.u8();
    uint64_t connectorId = 100 + ((control >> 5) & 1);
    std::vector<uint8_t> header = in.take(control & 0x1f);
    model.socket(connectorId, header);
    harness.connectOne(connectorId, header);
  }
  BRAID_FUZZ_CHECK(harness.handedOut == model.complete, "listener hands out exactly the complete connections");
  return 0;
}
