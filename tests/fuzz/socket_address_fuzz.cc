// net::SocketAddress::unpack on arbitrary 32-byte packed addresses (they arrive
// inside unique ids, join requests, rank tables and transport handles).
// Input: the packed address, zero-padded to 32 bytes.
// Properties: unpack never crashes; an accepted address packs back to exactly
// the input (the encoding has one form per address, so garbage is never taken
// as an address); printing it never crashes.
#include <cstring>

#include "fuzz_input.h"
#include "fuzz_target.h"
#include "transports/net/socket.h"

using braid::net::SocketAddress;

BRAID_FUZZ_TARGET(socket_address) {
  braid::fuzz::FuzzInput in(data, size);
  std::vector<uint8_t> bytes = in.padded(SocketAddress::kPackedBytes);
  SocketAddress addr;
  if (!SocketAddress::unpack(bytes.data(), &addr).isOk()) return 0;
  BRAID_FUZZ_CHECK(addr.family() == AF_INET || addr.family() == AF_INET6, "accepted address has a family");
  uint8_t again[SocketAddress::kPackedBytes];
  addr.pack(again);
  BRAID_FUZZ_CHECK(std::memcmp(again, bytes.data(), sizeof(again)) == 0, "pack(unpack(x)) == x");
  BRAID_FUZZ_CHECK(!addr.toString().empty(), "an accepted address prints");
  (void)addr.isLoopback();
  return 0;
}
