// Socket settings for TCP data sockets, applied on both ends.
#pragma once

#include "base/status.h"
#include "transports/net/socket.h"

namespace braid::tcp {

// 0 leaves the kernel's buffer autotuning on (tcp_rmem / tcp_wmem grow up to
// their max, 32 / 4 MiB on Debian). A fixed size turns autotuning off and is
// capped at net.core.{r,w}mem_max; on loopback a fixed 4 MiB measured no
// faster than autotuning, so autotuning stays on.
constexpr int kSocketBufferBytes = 0;

// trafficClass: Options::trafficClass (-1: the system's).
inline Status configureDataSocket(int fd, int trafficClass) {
  BRAID_RETURN_IF_ERROR(net::setNoDelay(fd));
  if (trafficClass >= 0) BRAID_RETURN_IF_ERROR(net::setTrafficClass(fd, trafficClass));
  if (kSocketBufferBytes > 0) BRAID_RETURN_IF_ERROR(net::setBufferSizes(fd, kSocketBufferBytes));
  return Status::ok();
}

}  // namespace braid::tcp
