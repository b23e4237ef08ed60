#include "netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace braid::fabric {

int tcpSocketIn(const std::string& ns, int typeFlags, std::string* error) {
  const int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) {
    *error = std::string("open own network namespace: ") + std::strerror(errno);
    return -1;
  }
  const std::string path = "/run/netns/" + ns;
  const int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    *error = "open " + path + ": " + std::strerror(errno);
    close(home);
    return -1;
  }
  int fd = -1;
  if (setns(target, CLONE_NEWNET) != 0) {
    *error = "setns " + ns + ": " + std::strerror(errno);
  } else {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | typeFlags, 0);
    if (fd < 0) *error = std::string("socket: ") + std::strerror(errno);
    if (setns(home, CLONE_NEWNET) != 0) {
      // Staying in a host's namespace would silently misroute everything
      // that follows; there is no sane way to go on.
      std::perror("fabric: setns back to the root namespace");
      std::abort();
    }
  }
  close(target);
  close(home);
  return fd;
}

int freePortIn(const std::string& ns, const std::string& addr, std::string* error) {
  const int fd = tcpSocketIn(ns, 0, error);
  if (fd < 0) return 0;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  inet_pton(AF_INET, addr.c_str(), &sa.sin_addr);
  socklen_t len = sizeof(sa);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    *error = "bind " + addr + " in " + ns + ": " + std::strerror(errno);
  } else if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    *error = std::string("getsockname: ") + std::strerror(errno);
  } else {
    port = ntohs(sa.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace braid::fabric
