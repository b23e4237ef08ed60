// What the IP-addressed transports (tcp, ucx) share about their devices and
// handles: a device is a network interface, and a listener's handle names its
// socket address.
//
// Handle layout: the transport's magic u32, a version u8 at offset 4, the
// address packed (SocketAddress::pack) at offset 8.
#pragma once

#include <cstdint>

#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::net {

void packAddressHandle(uint32_t magic, uint8_t version, const SocketAddress& address, transport::Handle* out);
// False when the handle is not `magic` / `version`'s or holds no valid address.
bool unpackAddressHandle(uint32_t magic, uint8_t version, const transport::Handle& handle,
                         SocketAddress* out);

// An interface as a transport device: its name, its address without the
// port, its speed when the OS knows it, and a rough latency for the cost
// model (10 us on loopback, 50 elsewhere).
void describeInterface(const Interface& itf, transport::DeviceProperties* props);

}  // namespace braid::net
