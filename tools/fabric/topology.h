// What an emulated cluster is made of, as names and tool invocations. Pure: it
// runs nothing, so the exact ip(8) / tc(8) commands can be checked in tests.
//
// A fabric called NAME with H hosts is H + 1 network namespaces:
//   NAME-host0 .. NAME-host<H-1>  each with loopback and one veth "fab0",
//                                 address 10.77.0.(i+1)/24
//   NAME-br                       a bridge "br0" with one port "p<i>" per host
// Every interface lives inside those namespaces from the moment it is created
// (ip link add ... netns ...), so the root namespace's interfaces are never
// touched and 10.77.0.0/24 is never routed anywhere else. Each veth carries a
// tbf qdisc on both ends: fab0's egress shapes host -> switch, p<i>'s egress
// shapes switch -> host.
//
// Cutting host i's link (`fabric link --host i down`) sets the switch port p<i>
// down: the veth peer fab0 loses its carrier, and every packet in either
// direction is dropped without a word (no RST, no ICMP), as when a cable is
// pulled or a switch port dies. fab0 itself stays administratively up with its
// address and routes, so the host's own sockets see no error either.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braid::fabric {

inline constexpr const char* kHostIfname = "fab0";
inline constexpr const char* kBridgeIfname = "br0";
inline constexpr int kMaxHosts = 200;  // host addresses are 10.77.0.1 .. 10.77.0.200

struct FabricSpec {
  std::string name = "braidfab";
  int hosts = 0;
  uint64_t rateBits = 0;    // bits per second, both directions of every link
  uint64_t burstBytes = 0;  // tbf bucket
};

// Letters, digits and '_', 1..32 characters: no '-', so that no fabric's
// namespaces can look like another fabric's.
bool validFabricName(const std::string& name);

std::string hostNamespace(const std::string& fabric, int host);
std::string bridgeNamespace(const std::string& fabric);
std::string bridgePort(int host);
std::string hostAddress(int host);  // "10.77.0.<host+1>"

// True when ns is one of this fabric's namespaces (NAME-br or NAME-host<digits>),
// whatever its host count was.
bool ownsNamespace(const std::string& fabric, const std::string& ns);

// Every command, in order, that builds the fabric from nothing; each is an argv
// for ip or tc. Namespaces come first so that a failure part-way leaves only
// things that teardown (deleting the namespaces) removes.
std::vector<std::vector<std::string>> buildCommands(const FabricSpec& spec);

// The command that cuts (up == false) or restores host's link: its switch port.
std::vector<std::string> linkCommand(const std::string& fabric, int host, bool up);

}  // namespace braid::fabric
