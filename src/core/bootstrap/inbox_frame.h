// InboxFrames: reassembles the frames of one peer's bootstrap connection from
// the bytes as they arrive, for the Inbox (inbox.h), which owns the socket.
//
// Frame: tag u32, size u64 (little-endian), then size payload bytes.
//
// The bytes come from another rank and are not trusted: a size above
// kMaxMessageBytes is refused before anything is allocated, and the payload
// buffer grows with the bytes that actually arrived (starting at 64 KiB, at
// most doubling), so a peer that announces a large frame and sends nothing
// costs no memory. After an error the stream cannot be resynchronised: the
// caller drops the connection.
//
// Use: loop { p = next(&room); read up to room bytes into p; advance(n);
//             while ready() take(); }
// Not thread-safe (the inbox thread's only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace braid::bootstrap {

class InboxFrames {
 public:
  static constexpr size_t kHeaderBytes = 12;
  // The largest message a rank may send over the bootstrap (Bootstrap::send
  // refuses larger ones). The largest braid sends is one rank's topology slot
  // (topo::kMaxRankViewBytes, 1 MiB); the margin is for callers of send().
  static constexpr uint64_t kMaxMessageBytes = uint64_t{64} << 20;

  struct Frame {
    uint32_t tag = 0;
    std::vector<uint8_t> bytes;
  };

  // Where the next bytes go; *room (> 0) is how many fit there. Not to be
  // called while ready() or after an error.
  uint8_t* next(size_t* room);
  // n (<= room) bytes were written at next(). RemoteError when they complete
  // a header announcing more than kMaxMessageBytes.
  Status advance(size_t n);
  // A whole frame has arrived.
  bool ready() const { return ready_; }
  // Moves the frame out (ready() only) and starts on the next one.
  Frame take();
  // Bytes held for the frame in progress (its buffer's capacity), for tests.
  size_t bufferedCapacity() const { return payload_.capacity(); }

 private:
  uint8_t header_[kHeaderBytes] = {};
  size_t have_ = 0;  // bytes of the header, then of the payload
  bool inPayload_ = false;
  bool ready_ = false;
  uint32_t tag_ = 0;
  uint64_t size_ = 0;
  std::vector<uint8_t> payload_;  // size() = bytes that may be written so far
};

}  // namespace braid::bootstrap
