// Watchdog: a communicator's control plane, off the data path. It carries two
// things between ranks: faults ("rank 2 died", "rank 1 aborted") so that every
// rank fails fast, not only the neighbour of the broken link, and heartbeats so
// that a stalled rank (SIGSTOP, a hung host) is noticed even when nobody waits
// on it directly.
//
// Shape: a star of one TCP connection per rank to the hub (rank 0), set up at
// init after the rendezvous and authenticated with the communicator's secret.
// Each rank has one thread that polls its connections, sends a heartbeat every
// heartbeatMs, and suspects a link silent for misses * heartbeatMs. The hub
// relays the first fault it learns to every other rank. Cost: one thread and
// one socket per rank (nranks - 1 on the hub), one 16-byte frame per period
// and link; nothing on the data path (the executor reads one relaxed atomic).
//
// Detection (what a rank learns, and how fast):
//  - a rank whose process ends without braidCommDestroy (killed, crashed):
//    its hub connection closes; every rank learns "rank k died" within one
//    relay (milliseconds);
//  - the hub itself ends: every rank sees its connection close;
//  - a rank stopped or cut off: silent for misses * heartbeatMs, then
//    "rank k is silent" as a Timeout on every rank; ranks that fell silent
//    with it (the other ranks of a cut host) are named in the same fault;
//  - a rank cut off from the hub (its host's link cut, or the hub's): the
//    hub is silent to it, so it fails on its own with "rank 0 is silent";
//  - a fault a rank reports itself (failed op, braidCommAbort): relayed.
// Only the first fault of a communicator travels; later ones are dropped.
// A rank that destroys its communicator says goodbye first, so leaving is
// never mistaken for dying. After the hub left, faults no longer travel.
//
// Threading: report() may be called from any thread. onFault runs on the
// watchdog's thread, at most once, and must not call back into the watchdog.
// The destructor stops the thread after flushing what was reported (bounded).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "core/control_frame.h"
#include "core/fault.h"
#include "transports/net/socket.h"

namespace braid::bootstrap {
class Bootstrap;
}

namespace braid::core {

struct WatchdogOptions {
  int heartbeatMs = 1000;  // BRAID_HEARTBEAT_MS; 0: no heartbeats (faults still travel)
  int misses = 10;         // BRAID_HEARTBEAT_MISSES: silent periods before a rank is suspected
  int setupTimeoutMs = 300000;
};

class Watchdog {
 public:
  using OnFault = std::function<void(const Fault&)>;

  // Collective over the bootstrap (every rank calls it at init). nranks == 1
  // gives a watchdog with no links.
  static Status create(bootstrap::Bootstrap& bs, const WatchdogOptions& options, OnFault onFault,
                       std::unique_ptr<Watchdog>* out);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Tells the other ranks (once per communicator; later reports are dropped).
  void report(const Fault& fault);

  // How long this rank's watchdog may still take to judge the hub silent, in
  // ms: 0 when the hub was heard within the last two heartbeat periods (it is
  // alive and relays any fault within milliseconds), when its link is gone,
  // when heartbeats are off, and on the hub itself. Thread-safe. When the hub's host is cut off, every
  // other rank reaches that verdict on its own timer, up to one period apart,
  // and one that reaches it first closes its data connections under its
  // neighbours; they use this to wait for their own verdict instead of
  // blaming that neighbour.
  int msUntilHubVerdict() const;

 private:
  struct Link {
    net::Fd fd;
    int rank = -1;
    std::string in, out;       // bytes received not yet parsed, to send not yet sent
    uint64_t lastHeardNs = 0;
    bool gone = false;         // closed, or said goodbye
  };

  Watchdog(int rank, const WatchdogOptions& options, OnFault onFault);
  Status connectStar(bootstrap::Bootstrap& bs);
  void run();
  void readFrom(size_t i);
  void lose(size_t i, const std::string& why);
  void raise(const Fault& fault, int fromLink);
  void queue(Link& link, const ControlFrame& frame);
  void flush(Link& link);
  void beatAndCheck(uint64_t now);
  void goodbye();

  const int rank_;
  const WatchdogOptions options_;
  const OnFault onFault_;
  std::vector<Link> links_;  // hub: ranks 1..n-1; others: the hub. Thread-only after start.
  std::atomic<uint64_t> hubHeardNs_{0};  // not the hub: when the hub was last heard (read by any thread)
  std::atomic<bool> hubGone_{false};     // not the hub: its link closed or it said goodbye
  bool faulted_ = false;     // thread-only: a fault was raised or reported
  net::Fd wake_;
  std::thread thread_;

  std::mutex mu_;            // guards outbox_, stop_
  std::vector<Fault> outbox_;
  bool stop_ = false;
};

}  // namespace braid::core
