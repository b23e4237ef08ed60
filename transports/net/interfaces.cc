// findInterfaces: the network interfaces braid may use, chosen by a
// BRAID_SOCKET_IFNAME selector (the same syntax as NCCL_SOCKET_IFNAME).
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "transports/net/socket.h"

namespace braid::net {
namespace {

struct Selector {
  bool exclude = false;  // "^..."
  bool exact = false;    // "=..."
  std::vector<std::string> names;

  // -1 when the interface is not selected, else its rank (lower is preferred).
  int rank(const std::string& name) const {
    if (names.empty()) return 0;
    for (size_t i = 0; i < names.size(); ++i) {
      bool hit = exact ? name == names[i] : name.compare(0, names[i].size(), names[i]) == 0;
      if (hit) return exclude ? -1 : static_cast<int>(i);
    }
    return exclude ? 0 : -1;
  }
};

Selector parseSelector(std::string text) {
  Selector s;
  if (!text.empty() && text[0] == '^') s.exclude = true, text.erase(0, 1);
  if (!text.empty() && text[0] == '=') s.exact = true, text.erase(0, 1);
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) s.names.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return s;
}

double linkSpeedMbps(const std::string& name) {
  std::ifstream in("/sys/class/net/" + name + "/speed");
  long speed = 0;
  if (!(in >> speed) || speed <= 0) return 0;  // virtual links report -1 or fail to read
  return static_cast<double>(speed);
}

}  // namespace

Status findInterfaces(const std::string& selector, int family, std::vector<Interface>* out) {
  if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6)
    return invalidArgument("findInterfaces: family must be AF_UNSPEC, AF_INET or AF_INET6");
  Selector sel = parseSelector(selector);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return systemError("getifaddrs", errno);

  struct Candidate {
    Interface itf;
    int rank;
  };
  std::vector<Candidate> found;
  for (const ifaddrs* ifa = list; ifa; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || !(ifa->ifa_flags & IFF_UP)) continue;
    int fam = ifa->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (family != AF_UNSPEC && fam != family) continue;
    if (fam == AF_INET6) {
      // Link-local addresses need a scope and are not routable between hosts.
      auto* a6 = reinterpret_cast<const sockaddr_in6*>(ifa->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) continue;
    }
    int rank = sel.rank(ifa->ifa_name);
    if (rank < 0) continue;
    bool loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    // Without a selector, loopback comes last: it only reaches this host.
    if (sel.names.empty() && loopback) rank = 1;

    // One address per interface; IPv4 wins over IPv6 when both are allowed.
    auto same = std::find_if(found.begin(), found.end(),
                             [&](const Candidate& c) { return c.itf.name == ifa->ifa_name; });
    if (same != found.end()) {
      if (same->itf.address.family() == AF_INET || fam != AF_INET) continue;
      found.erase(same);
    }
    Candidate c;
    c.itf.name = ifa->ifa_name;
    std::memcpy(&c.itf.address.storage, ifa->ifa_addr, fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    c.itf.address.length = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    c.itf.address.setPort(0);
    c.itf.loopback = loopback;
    c.rank = rank;
    found.push_back(std::move(c));
  }
  freeifaddrs(list);

  std::stable_sort(found.begin(), found.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  out->clear();
  for (Candidate& c : found) {
    c.itf.speedMbps = linkSpeedMbps(c.itf.name);
    out->push_back(std::move(c.itf));
  }
  return Status::ok();
}

}  // namespace braid::net
