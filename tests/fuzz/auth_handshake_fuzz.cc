// The secret handshake (transports/net/auth.h) fed arbitrary bytes by a peer
// that does not know the secret: both state machines, over a socketpair, with
// the bytes arriving in chunks of a fuzzed size (so the partial-read paths run).
// Input: flags (bit 0: play against the connector instead of the acceptor;
// bit 1: purpose), chunk size byte, then the peer's bytes.
// Properties: with a random secret neither side ever reports "finished"
// (an unauthenticated peer is never accepted); once the peer has closed, the
// handshake fails within a bounded number of steps instead of waiting forever.
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "fuzz_target.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"

namespace net = braid::net;

namespace {

const braid::transport::Secret& randomSecret() {
  static const braid::transport::Secret secret = [] {
    braid::transport::Secret s{};
    BRAID_FUZZ_CHECK(net::randomBytes(s.data(), s.size()).isOk(), "getrandom works");
    return s;
  }();
  return secret;
}

// Steps `hs` while the peer (the other end of the socketpair) writes `bytes` in
// chunks and then closes its side.
template <typename Handshake>
void drive(Handshake& hs, int fd, int peer, const std::vector<uint8_t>& bytes, size_t chunk) {
  size_t sent = 0;
  bool closed = false;
  // Every step after the close either fails or moves bytes, so this bound is
  // generous; running into it means the state machine stalls on a dead peer.
  for (int steps = 0; steps < 64 + static_cast<int>(bytes.size()); ++steps) {
    if (sent < bytes.size()) {
      size_t n = std::min(chunk, bytes.size() - sent);
      ssize_t w = send(peer, bytes.data() + sent, n, MSG_NOSIGNAL | MSG_DONTWAIT);
      BRAID_FUZZ_CHECK(w == static_cast<ssize_t>(n), "socketpair takes a small chunk whole");
      sent += n;
    } else if (!closed) {
      shutdown(peer, SHUT_WR);
      closed = true;
    }
    bool finished = false;
    braid::Status st = hs.step(fd, &finished);
    BRAID_FUZZ_CHECK(!finished, "handshake finished without the secret");
    if (!st.isOk()) return;
  }
  BRAID_FUZZ_CHECK(false, "handshake neither finished nor failed after the peer closed");
}

}  // namespace

BRAID_FUZZ_TARGET(auth_handshake) {
  braid::fuzz::FuzzInput in(data, size);
  uint8_t flags = in.u8();
  size_t chunk = 1 + in.u8() % 32;
  std::vector<uint8_t> bytes = in.take(512);
  net::Purpose purpose = (flags & 2) ? net::Purpose::kTcpData : net::Purpose::kBootstrap;

  int fds[2];
  BRAID_FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
  net::Fd mine(fds[0]), peer(fds[1]);
  if (flags & 1) {
    net::ConnectorHandshake hs(randomSecret(), purpose, /*connectorId=*/7);
    drive(hs, mine.get(), peer.get(), bytes, chunk);
  } else {
    net::AcceptorHandshake hs(randomSecret(), purpose);
    drive(hs, mine.get(), peer.get(), bytes, chunk);
  }
  return 0;
}
