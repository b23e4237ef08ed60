// What the two ends of an ibverbs connection tell each other.
//
// Setup, over a TCP side channel once the secret is proven both ways: each
// end sends its QpInfo, moves its queue pair to ready-to-send with the peer's,
// posts its receives and then sends one ready byte. Neither end sends on the
// queue pair before it has the peer's ready byte, so nothing reaches a queue
// pair that cannot take it. The side channel then stays open only to notice a
// peer process that dies (its end closes).
//
// Data, receiver-driven, one RDMA write per message (NCCL's IB transport
// works the same way): for each posted receive, in order, the receiver sends
// a clear-to-send naming the buffer the data goes to (its own if large, a
// registered bounce slot if small) with its tag and capacity; the sender
// matches it with its next send, checks tag and size, and writes the data
// with RDMA WRITE WITH IMMEDIATE (the immediate is the size), which completes
// the receive at the receiver. A mismatch is refused with a control message
// naming what was sent, and both ends fail.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::ibverbs {

// A listen handle: the side channel's address (net/address_handle.h).
constexpr uint32_t kHandleMagic = 0x42494248;  // "HBIB"
constexpr uint8_t kHandleVersion = 1;

constexpr uint32_t kQpInfoMagic = 0x42494256;  // "VBIB"
constexpr uint16_t kQpInfoVersion = 1;

struct QpInfo {
  uint32_t magic = kQpInfoMagic;
  uint16_t version = kQpInfoVersion;
  uint16_t lid = 0;
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint8_t gid[16] = {};
  uint8_t mtu = 0;       // ibv_mtu
  uint8_t ethernet = 0;  // RoCE: address by GID
  uint8_t gidIndex = 0;
  uint8_t pad[5] = {};
};
static_assert(sizeof(QpInfo) == 40);

enum class CtrlKind : uint32_t { kClearToSend = 1, kRefused = 2, kClose = 3 };
enum class Refusal : uint32_t { kNone = 0, kTagMismatch = 1, kTooLarge = 2 };

// One control message, sent into the peer's control slots.
struct CtrlMsg {
  CtrlKind kind = CtrlKind::kClose;
  uint32_t tag = 0;  // clear-to-send: the receive's tag; refused: the send's
  uint64_t seq = 0;  // the message's number on this connection
  uint64_t addr = 0;
  uint64_t size = 0;  // clear-to-send: capacity; refused: the send's size
  uint32_t rkey = 0;
  Refusal refusal = Refusal::kNone;
};
static_assert(sizeof(CtrlMsg) == 40);

// Messages in flight on a connection: clear-to-sends not yet answered, and so
// the receives posted for data and the bounce slots of each end.
constexpr uint32_t kDepth = 32;
// Control slots posted for receives: one per message in flight (an RDMA
// write with immediate takes one too) plus the refusal and the close.
constexpr uint32_t kRecvSlots = kDepth + 4;
constexpr uint32_t kSendSlots = kDepth + 4;
// Messages up to this size go through registered bounce slots (a copy at
// each end); larger ones are written straight into the receive's buffer.
constexpr size_t kBounceBytes = size_t{8} << 10;
// The immediate carries the size: larger messages are refused by isend.
constexpr uint64_t kMaxMessageBytes = UINT32_MAX;

}  // namespace braid::ibverbs
