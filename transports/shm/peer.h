// PeerProcess: the process at the other end of a connection, watched so that a
// peer that dies turns into an error instead of a hang.
//
// Uses a pidfd (Linux 5.3+): it becomes readable when the process exits,
// zombies included, and never confuses the peer with a later process that
// reused its pid. Falls back to kill(pid, 0) where pidfds are unavailable.
#pragma once

#include <sys/types.h>

#include "transports/net/socket.h"

namespace braid::shm {

class PeerProcess {
 public:
  PeerProcess() = default;
  explicit PeerProcess(pid_t pid);
  pid_t pid() const { return pid_; }
  // One syscall; call it only when a wait made no progress.
  bool exited() const;

 private:
  pid_t pid_ = 0;
  net::Fd pidfd_;
};

}  // namespace braid::shm
