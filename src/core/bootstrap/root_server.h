// RootServer: the state machine behind root.h, run by one thread. See root.h
// for what it promises; this file is how. All sockets are non-blocking and
// driven from one poll() loop, so no one connection can hold up another.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "core/bootstrap/gatekeeper.h"
#include "core/bootstrap/protocol.h"
#include "core/bootstrap/root.h"
#include "transports/net/socket.h"

namespace braid::bootstrap {

class RootServer {
 public:
  // Takes a listening socket; `where` names it in log lines.
  RootServer(net::Fd listener, const transport::Secret& secret, const RootOptions& options,
             std::string where);
  ~RootServer();
  Status init();  // creates the wake-up eventfd; call before run()
  // The thread body: returns when the communicator formed (and every rank got
  // its table), after an error was answered and the linger time passed, after
  // the idle timeout, or after stop().
  void run();
  // Any thread: makes run() return soon.
  void stop();
  bool finished() const { return finished_.load(); }

 private:
  enum class Phase { kReadHeader, kReadHostId, kJoined, kReplying, kClosed };
  struct Member {
    net::Fd fd;
    net::SocketAddress peer;
    uint64_t connectorId = 0;
    Phase phase = Phase::kReadHeader;
    std::vector<uint8_t> in;
    size_t have = 0;
    std::vector<uint8_t> out;
    size_t sent = 0;
    Deadline readDeadline{0};  // for its join request
    Deadline rankDeadline{0};  // when the rank stops waiting for our reply
    protocol::JoinRequest join;
  };

  int pollTimeoutMs() const;
  void readJoin(size_t index);
  void onJoined(size_t index);
  void watchJoined(Member& m);
  void reply(Member& m, Code code, const std::string& message);
  void reply(Member& m, Code code, const std::vector<uint8_t>& payload);
  void writeReply(Member& m);
  void closeMember(Member& m);
  // Answers every arrived rank (and later ones) with this error, once.
  void fail(Code code, const std::string& message);
  void maybeComplete();
  void checkDeadlines();
  std::string missingRanksMessage(const Member& expired) const;
  bool done() const;

  net::Fd listener_;
  net::Fd wake_;
  RootOptions options_;
  std::string where_;
  Gatekeeper gate_;
  std::vector<Member> members_;
  std::vector<int> memberOfRank_;  // index into members_, -1 while missing
  int nranks_ = 0;
  int nranksFrom_ = -1;  // the rank that set nranks_ (-1: the caller)
  Deadline idle_;
  bool formed_ = false;
  bool failed_ = false;
  Code failCode_ = Code::kOk;
  std::string failMessage_;
  Deadline linger_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
};

}  // namespace braid::bootstrap
