// Inbox: the receiving half of one rank's bootstrap. It owns the rank's
// bootstrap listener and a thread that accepts peers (after they prove the
// secret, through a Gatekeeper), reads every framed message they send and files
// it by (peer, tag). Receiving on a thread of its own means a rank's sends
// never wait for the peer to be inside a recv: whatever arrives is drained and
// buffered, so two ranks sending to each other at once cannot deadlock.
//
// Frame on a peer connection: tag u32, size u64 (little-endian), payload;
// reassembled, with its size bounded, by InboxFrames (inbox_frame.h).
// Connections are one-way (the connector sends, the acceptor receives), and
// messages from one peer are filed in the order they were sent.
//
// Threading: take() and putLocal() may be called from any one thread at a
// time; the inbox's own thread only fills the queues. Lock: mu_ (leaf).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "core/bootstrap/gatekeeper.h"
#include "core/bootstrap/inbox_frame.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::bootstrap {

class Inbox {
 public:
  // A frame claiming more than this is treated as a broken peer.
  static constexpr uint64_t kMaxMessageBytes = InboxFrames::kMaxMessageBytes;

  Inbox(net::Fd listener, const transport::Secret& secret, int rank, int nranks,
        int handshakeTimeoutMs);
  ~Inbox();  // stops and joins the thread, closes every connection
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  Status start();
  // Removes the oldest message from `peer` with `tag` and copies it to data.
  // InvalidUsage when its size differs from `size` (the ranks disagree on what
  // they exchange), RemoteError when the peer closed its connection with no
  // such message left, Timeout at the deadline.
  Status take(int peer, uint32_t tag, void* data, size_t size, const Deadline& deadline,
              int timeoutMs);
  // A message to ourselves.
  void putLocal(uint32_t tag, const void* data, size_t size);

 private:
  struct Message {
    uint32_t tag;
    std::vector<uint8_t> bytes;
  };
  struct Conn {
    net::Fd fd;
    int peer = -1;
    InboxFrames frames;
  };
  struct PeerState {
    std::deque<Message> queue;
    bool connected = false;
    bool closed = false;
    std::string closeReason;
  };

  void run();
  void admit(Admitted& a);
  // Reads what is available; false when the connection ended (peer marked).
  bool readFrom(Conn& c);
  void markClosed(int peer, const std::string& reason);

  net::Fd listener_;
  net::Fd wake_;
  int rank_;
  int nranks_;
  Gatekeeper gate_;
  std::vector<Conn> conns_;  // the thread's only
  std::thread thread_;
  bool stop_ = false;        // guarded by mu_

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<PeerState> peers_;  // guarded by mu_
  Status fatal_;                  // guarded by mu_: the thread gave up
};

}  // namespace braid::bootstrap
