#include "transports/shm/peer.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace braid::shm {

PeerProcess::PeerProcess(pid_t pid) : pid_(pid) {
#ifdef SYS_pidfd_open
  long fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) pidfd_.reset(static_cast<int>(fd));
#endif
}

bool PeerProcess::exited() const {
  if (pid_ <= 0) return false;
  if (pidfd_.valid()) {
    pollfd p{pidfd_.get(), POLLIN, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
  }
  return kill(pid_, 0) != 0 && errno == ESRCH;
}

}  // namespace braid::shm
