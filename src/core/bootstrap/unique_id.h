// UniqueId: what braidGetUniqueId hands out and every rank passes to
// braidCommInitRank. It names the rendezvous root (its packed socket address)
// and carries the communicator's random 128-bit secret, which every bootstrap
// and transport connection must prove before any data is accepted.
//
// Packed into the 128 bytes of braidUniqueId (little-endian):
//   [0,4)   magic "BRID"      [4,6)  version      [6,8)  reserved (0)
//   [8,40)  root address (net::SocketAddress::pack)
//   [40,56) secret            [56,64) check: SipHash-2-4 of bytes [0,56) and
//   [64,128) under a fixed key; [64,128) reserved (0)
// The check catches ids that were truncated, zeroed or overwritten on the way
// (e.g. a user who broadcast only part of the struct); it is not a signature.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::bootstrap {

struct UniqueId {
  static constexpr size_t kBytes = 128;
  static constexpr uint32_t kMagic = 0x44495242;  // "BRID" in little-endian bytes
  static constexpr uint16_t kVersion = 1;

  net::SocketAddress root;
  transport::Secret secret{};

  void pack(uint8_t out[kBytes]) const;
  // InvalidArgument naming what is wrong: not a braid id at all, an id from
  // another braid version, a corrupted id, or an unusable address.
  static Status unpack(const uint8_t in[kBytes], UniqueId* out);
};

}  // namespace braid::bootstrap
