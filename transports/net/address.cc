// SocketAddress and parseAddress: printable, packable IPv4 / IPv6 addresses.
#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>

#include <cstring>

#include "transports/net/socket.h"

namespace braid::net {
namespace {

// Family codes on the wire (not AF_* values, which differ between systems).
constexpr uint8_t kPackedV4 = 4;
constexpr uint8_t kPackedV6 = 6;

void putU16(uint8_t* p, uint16_t v) { p[0] = v & 0xff, p[1] = v >> 8; }
void putU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (v >> (8 * i)) & 0xff;
}
uint16_t getU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t getU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SocketAddress::setPort(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

std::string SocketAddress::toString() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text, sizeof(text));
    return std::string(text) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    std::string host = text;
    if (a->sin6_scope_id != 0) {
      char ifname[IF_NAMESIZE] = {};
      host += "%";
      host += if_indextoname(a->sin6_scope_id, ifname) ? ifname : std::to_string(a->sin6_scope_id);
    }
    return "[" + host + "]:" + std::to_string(port());
  }
  return "<no address>";
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET) {
    uint32_t a = ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr);
    return (a >> 24) == 127;
  }
  if (family() == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;
  }
  return false;
}

void SocketAddress::pack(uint8_t out[kPackedBytes]) const {
  std::memset(out, 0, kPackedBytes);
  if (family() == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&storage);
    out[0] = kPackedV4;
    putU16(out + 1, port());
    std::memcpy(out + 3, &a->sin_addr, 4);
  } else if (family() == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage);
    out[0] = kPackedV6;
    putU16(out + 1, port());
    std::memcpy(out + 3, &a->sin6_addr, 16);
    putU32(out + 19, a->sin6_scope_id);
  }
}

Status SocketAddress::unpack(const uint8_t in[kPackedBytes], SocketAddress* out) {
  // Everything past the used bytes must be zero: a cheap check that this really
  // is a packed address and not some other bytes.
  for (size_t i = 23; i < kPackedBytes; ++i)
    if (in[i] != 0) return invalidArgument("packed socket address has garbage in its padding");
  SocketAddress addr;
  if (in[0] == kPackedV4) {
    for (size_t i = 7; i < 23; ++i)
      if (in[i] != 0) return invalidArgument("packed IPv4 address has garbage in its padding");
    auto* a = reinterpret_cast<sockaddr_in*>(&addr.storage);
    a->sin_family = AF_INET;
    std::memcpy(&a->sin_addr, in + 3, 4);
    addr.length = sizeof(sockaddr_in);
  } else if (in[0] == kPackedV6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr.storage);
    a->sin6_family = AF_INET6;
    std::memcpy(&a->sin6_addr, in + 3, 16);
    a->sin6_scope_id = getU32(in + 19);
    addr.length = sizeof(sockaddr_in6);
  } else {
    return invalidArgument("packed socket address has unknown family code " + std::to_string(in[0]));
  }
  addr.setPort(getU16(in + 1));
  *out = addr;
  return Status::ok();
}

Status parseAddress(const std::string& hostPort, SocketAddress* out) {
  std::string host, port;
  if (!hostPort.empty() && hostPort[0] == '[') {
    size_t close = hostPort.find(']');
    if (close == std::string::npos || close + 1 >= hostPort.size() || hostPort[close + 1] != ':')
      return invalidArgument("cannot parse address '" + hostPort + "': expected [v6addr]:port");
    host = hostPort.substr(1, close - 1);
    port = hostPort.substr(close + 2);
  } else {
    size_t colon = hostPort.rfind(':');
    if (colon == std::string::npos || hostPort.find(':') != colon)
      return invalidArgument("cannot parse address '" + hostPort +
                             "': expected host:port (write IPv6 addresses as [addr]:port)");
    host = hostPort.substr(0, colon);
    port = hostPort.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    return invalidArgument("cannot parse address '" + hostPort + "': bad host or port");

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0 || result == nullptr)
    return invalidArgument("cannot resolve '" + host + "': " + gai_strerror(rc));
  // Prefer IPv4 for names that resolve both ways: it is what peers most often listen on.
  const addrinfo* pick = result;
  for (const addrinfo* ai = result; ai; ai = ai->ai_next)
    if (ai->ai_family == AF_INET) {
      pick = ai;
      break;
    }
  SocketAddress addr;
  std::memcpy(&addr.storage, pick->ai_addr, pick->ai_addrlen);
  addr.length = pick->ai_addrlen;
  freeaddrinfo(result);
  *out = addr;
  return Status::ok();
}

}  // namespace braid::net
