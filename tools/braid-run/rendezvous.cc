#include "rendezvous.h"

#include <netdb.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace braid::run {

int pickFreePort(const std::string& host, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), "0", &hints, &res); rc != 0) {
    *error = "cannot resolve --addr " + host + ": " + gai_strerror(rc);
    return 0;
  }
  int port = 0;
  std::string lastError = "no address";
  for (addrinfo* ai = res; ai != nullptr && port == 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      lastError = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      lastError = std::string("bind: ") + std::strerror(errno);
    } else if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      lastError = std::string("getsockname: ") + std::strerror(errno);
    } else if (bound.ss_family == AF_INET) {
      port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else if (bound.ss_family == AF_INET6) {
      port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    }
    close(fd);
  }
  freeaddrinfo(res);
  if (port == 0) *error = "cannot find a free port on " + host + ": " + lastError;
  return port;
}

std::string toHex(const uint8_t* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

std::string generateSecret(std::string* error) {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = std::string("getrandom: ") + std::strerror(errno);
      return "";
    }
    got += static_cast<size_t>(n);
  }
  return toHex(bytes, sizeof(bytes));
}

}  // namespace braid::run
