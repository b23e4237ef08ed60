// The traffic classes of this process's connected TCP sockets, read back from
// the kernel (IP_TOS, or IPV6_TCLASS on an IPv6 socket): what the tests of
// transport::Options::trafficClass check, without reaching into a transport.
// Only where no other thread opens or closes descriptors meanwhile (a
// communicator's bootstrap thread does): the scan's fstat on a number being
// closed is a race, which ThreadSanitizer reports.
#pragma once

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>

namespace braid::test {

// Traffic class -> how many connected (not listening) TCP sockets carry it.
inline std::map<int, int> connectedTcpTrafficClasses() {
  std::map<int, int> out;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    struct stat st {};
    if (e->d_name[0] == '.' || fd == dirfd(dir) || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int type = 0, listening = 0, family = 0, tclass = 0;
    socklen_t len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening) continue;
    len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &len) != 0) continue;
    if (family != AF_INET && family != AF_INET6) continue;
    len = sizeof(int);
    const bool read = family == AF_INET6 ? getsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tclass, &len) == 0
                                         : getsockopt(fd, IPPROTO_IP, IP_TOS, &tclass, &len) == 0;
    if (read) out[tclass]++;
  }
  closedir(dir);
  return out;
}

}  // namespace braid::test
