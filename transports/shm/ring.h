// Layout of one connection's segment: a single-producer / single-consumer byte
// ring from the SendComm (producer) to the RecvComm (consumer).
//
//   [RingControl: 4 KiB, one cache line per writer] [data: ringBytes, power of two]
//
// The ring is a byte pipe of frames. Each frame starts on a 64-byte boundary
// with a 64-byte FrameHeader (so a header never wraps); an inline frame's
// payload follows, padded to 64 bytes, and may be written and read in pieces
// (messages larger than the ring stream through it). A CMA frame is the header
// alone: it describes (address, size) in the sender's memory. One copy moves
// the message, made by the end that claims it first (cmaClaimed): the
// receiver pulls it with process_vm_readv, or a sender with fewer copies
// ahead than the receiver (a gather's root's peers) pushes it with
// process_vm_writev into the receive the receiver offered (offer*). The
// copier then advances cmaDone.
//
// head / tail count bytes since the start (never wrap in practice: 2^64), the
// producer publishes head with release after writing, the consumer tail after
// reading; each side caches the other's counter and refreshes it only when it
// seems to lack space / data, so the fast path touches no line the peer writes
// more than needed and makes no syscall.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace braid::shm {

static_assert(std::endian::native == std::endian::little, "frames are host order; both ends share a host");

constexpr uint32_t kRingMagic = 0x52534252;   // "RBSR"
constexpr uint32_t kFrameMagic = 0x46534252;  // "RBSF"
constexpr size_t kLine = 64;
constexpr size_t kControlBytes = 4096;
constexpr uint32_t kRingVersion = 2;

enum class EndState : uint32_t { kOpen = 0, kClosed = 1, kFailed = 2 };

struct RingControl {
  // Written once by the connector before the segment is shared.
  alignas(kLine) uint32_t magic;
  uint32_t version;
  uint64_t dataBytes;
  // Producer's line.
  alignas(kLine) std::atomic<uint64_t> head;
  std::atomic<uint32_t> senderState;  // EndState
  // Consumer's line.
  alignas(kLine) std::atomic<uint64_t> tail;
  std::atomic<uint64_t> cmaDone;  // CMA frames copied so far (by either end)
  std::atomic<uint32_t> receiverState;
  // The receiver's next receive large enough for a CMA frame, offered for the
  // sender to push into: a seqlock (offerSeq is 0 while it is rewritten or
  // when nothing is offered, else the receive's message number + 1).
  alignas(kLine) std::atomic<uint64_t> offerSeq;
  std::atomic<uint64_t> offerCmaIndex;  // the CMA ordinal the message has if it is one
  std::atomic<uint64_t> offerAddress;
  std::atomic<uint64_t> offerCapacity;
  std::atomic<uint32_t> offerTag;
  // CMA frame k is claimed by the end that moves this from k to k + 1; the
  // loser leaves the copy to the winner and waits for cmaDone.
  alignas(kLine) std::atomic<uint64_t> cmaClaimed;
};
static_assert(sizeof(RingControl) <= kControlBytes);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

enum class FrameKind : uint16_t { kInline = 1, kCma = 2 };

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t kind = 0;  // FrameKind
  uint16_t reserved = 0;
  uint32_t tag = 0;
  uint32_t seq = 0;       // message number on this connection (wraps)
  uint64_t total = 0;     // message size
  uint64_t address = 0;   // CMA: where the message lies in the sender
  uint64_t cmaIndex = 0;  // CMA: ordinal among this connection's CMA frames
  // CMA from braidMemAlloc memory: its region and the sender's descriptor of
  // its shareable file, for a receiver that maps it (base/peer_regions.h);
  // 0: other memory.
  uint64_t regionId = 0;
  int32_t regionFd = 0;
  uint32_t reserved2 = 0;
  uint32_t check = 0;  // over all fields above: a corrupted ring is caught, never trusted
  uint32_t zero = 0;
};
static_assert(sizeof(FrameHeader) == kLine);

// Not a MAC (a peer on this host that wants to lie can write anything into
// our memory anyway): a check that stray writes or a torn header cannot pass
// by chance. A multiply-xorshift mix over the header's 56 bytes costs a few
// nanoseconds, a fraction of SipHash's on every small message.
inline uint32_t frameCheck(const FrameHeader& h) {
  static_assert(offsetof(FrameHeader, check) == 56);
  uint64_t words[7];
  std::memcpy(words, &h, sizeof(words));
  uint64_t x = 0x62726169642d7368ull;  // "braid-sh"
  for (uint64_t w : words) {
    x = (x ^ w) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
  }
  x *= 0xbf58476d1ce4e5b9ull;
  return static_cast<uint32_t>(x ^ (x >> 32));
}

inline bool frameIntact(const FrameHeader& h) {
  return h.magic == kFrameMagic && h.reserved == 0 && h.reserved2 == 0 && h.zero == 0 &&
         (h.kind == 1 || h.kind == 2) && h.check == frameCheck(h);
}

inline uint64_t padded(uint64_t n) { return (n + kLine - 1) & ~uint64_t{kLine - 1}; }

// The data area seen as a circular buffer; offsets are absolute byte counts.
struct RingData {
  uint8_t* base = nullptr;
  uint64_t mask = 0;

  void copyIn(uint64_t at, const void* src, size_t n) const {
    size_t off = at & mask, first = n < mask + 1 - off ? n : mask + 1 - off;
    std::memcpy(base + off, src, first);
    if (n > first) std::memcpy(base, static_cast<const uint8_t*>(src) + first, n - first);
  }
  void copyOut(uint64_t at, void* dst, size_t n) const {
    size_t off = at & mask, first = n < mask + 1 - off ? n : mask + 1 - off;
    std::memcpy(dst, base + off, first);
    if (n > first) std::memcpy(static_cast<uint8_t*>(dst) + first, base, n - first);
  }
};

}  // namespace braid::shm
