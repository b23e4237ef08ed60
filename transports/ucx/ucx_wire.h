// What the UCX transport puts on the wire besides UCX's own protocols.
//
// Handle (transport::Handle, exchanged out of band): the listener's socket
// address, as net/address_handle.h lays it out, under magic "BUCX".
//
// Connection setup, over the endpoint's UCP stream: the secret handshake
// (net/auth.h, Purpose::kUcxData), then the acceptor's reply:
//   A->C  accepted : magic u32 "BUCX", key u32
// The key is this connection's, unique among the acceptor's live ones and
// random, so it is not guessable by strangers.
//
// Data: one UCP tagged message per isend, tag = key << 32 | braid tag. The
// receiver matches on the key alone (mask 0xffffffff00000000): UCP matches
// one sender's messages in order, and the braid tag is then checked, as the
// transport contract asks (a rank in another collective is told so, not
// silently paired). Strangers never learn a key: their endpoints exist only
// until their handshake fails.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::ucx {

constexpr uint32_t kMagic = 0x58435542;  // "BUCX" little-endian
constexpr uint8_t kHandleVersion = 1;
constexpr size_t kAcceptedBytes = 8;

constexpr uint64_t kKeyMask = 0xffffffff00000000ull;
inline uint64_t wireTag(uint32_t key, uint32_t tag) { return static_cast<uint64_t>(key) << 32 | tag; }
inline uint32_t braidTagOf(uint64_t wire) { return static_cast<uint32_t>(wire); }

}  // namespace braid::ucx
