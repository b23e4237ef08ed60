// Wire format of the TCP transport.
//
// Connection setup, per socket: the auth handshake (net/auth.h, Purpose::kTcpData),
// then a ConnHeader telling the acceptor which connection and which socket index
// this is, so it can group the nSocks sockets of one connection.
//
// Data, per message: one part (small messages) or nParts equal parts (striped
// messages), each sent on its own socket as FrameHeader + payload. Message seq's
// part i travels on socket (seq + i) % nSocks, so the lead socket rotates and
// every socket carries its frames in message order. The lead header (part 0)
// tells the receiver the size and layout; the other parts' headers repeat it so
// a desynchronised or corrupted stream is detected, never trusted.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "transports/net/auth.h"

namespace braid::tcp {

static_assert(std::endian::native == std::endian::little, "the wire format is encoded as host order (little-endian)");

constexpr int kMaxSocks = 16;
// Messages at least this large are striped over all sockets. Below it the
// per-part cost (a header and a syscall per socket) outweighs the gain.
constexpr size_t kStripeThreshold = 256 << 10;

constexpr uint32_t kHandleMagic = 0x54445242;  // "BRDT"
constexpr uint32_t kConnMagic = 0x43445242;    // "BRDC"
constexpr uint32_t kFrameMagic = 0x46445242;   // "BRDF"

struct ConnHeader {
  uint32_t magic = kConnMagic;
  uint16_t nSocks = 0;
  uint16_t index = 0;
  uint64_t connId = 0;  // random per connection, chosen by the connector
};
static_assert(sizeof(ConnHeader) == 16);

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint32_t tag = 0;
  uint64_t total = 0;     // message size
  uint64_t partSize = 0;  // payload bytes following this header
  uint32_t seq = 0;       // message number on this connection (wraps)
  uint16_t partIndex = 0;
  uint16_t nParts = 1;
  uint32_t reserved = 0;
  uint32_t check = 0;  // over all fields above: a corrupted header is caught
};
constexpr size_t kFrameHeaderBytes = 40;
static_assert(sizeof(FrameHeader) == kFrameHeaderBytes);

inline uint32_t frameCheck(const FrameHeader& h) {
  static const transport::Secret kKey = {'b', 'r', 'a', 'i', 'd', '-', 't', 'c', 'p', '-', 'f', 'r', 'a', 'm', 'e', 1};
  return static_cast<uint32_t>(net::sipHash24(kKey, &h, offsetof(FrameHeader, check)));
}

inline void encodeFrame(FrameHeader h, uint8_t out[kFrameHeaderBytes]) {
  h.check = frameCheck(h);
  std::memcpy(out, &h, kFrameHeaderBytes);
}

// False when the bytes are not an intact frame header.
inline bool decodeFrame(const uint8_t in[kFrameHeaderBytes], FrameHeader* h) {
  std::memcpy(h, in, kFrameHeaderBytes);
  return h->magic == kFrameMagic && h->reserved == 0 && h->check == frameCheck(*h);
}

// How the sender splits `total` bytes over nSocks sockets.
inline uint16_t partsFor(size_t total, int nSocks) {
  return (nSocks > 1 && total >= kStripeThreshold) ? static_cast<uint16_t>(nSocks) : 1;
}

// Part i of nParts: equal parts, the last one takes the remainder. Both sides
// compute it from (total, nParts) alone.
inline void partRange(size_t total, int nParts, int i, size_t* offset, size_t* size) {
  size_t each = total / nParts;
  *offset = each * i;
  *size = (i == nParts - 1) ? total - *offset : each;
}

}  // namespace braid::tcp
