// The bootstrap inbox's framing (core/bootstrap/inbox_frame.h): the bytes an
// authenticated peer rank sends on its bootstrap connection, as a stream cut
// into reads of varying size. Input: a control byte (read size: 1 + byte, or
// whatever fits when 0xff), then the stream.
// Properties: no crash; frames come out in order with exactly the payload
// bytes that followed their header; a header announcing more than
// kMaxMessageBytes is refused, anything else accepted; the buffer held for an
// unfinished frame never exceeds max(64 KiB, twice the bytes that arrived).
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/bootstrap/inbox_frame.h"
#include "fuzz_input.h"
#include "fuzz_target.h"

using braid::bootstrap::InboxFrames;

BRAID_FUZZ_TARGET(bootstrap_inbox) {
  braid::fuzz::FuzzInput in(data, size);
  const uint8_t control = in.u8();
  const size_t piece = control == 0xff ? SIZE_MAX : size_t{1} + control;
  const std::vector<uint8_t> stream = in.rest();

  InboxFrames frames;
  size_t at = 0, frameStart = 0;
  while (at < stream.size()) {
    size_t room = 0;
    uint8_t* p = frames.next(&room);
    BRAID_FUZZ_CHECK(room > 0, "the reader always wants bytes until a frame is ready");
    const size_t n = std::min({room, piece, stream.size() - at});
    std::memcpy(p, stream.data() + at, n);
    at += n;
    braid::Status st = frames.advance(n);
    if (!st.isOk()) {
      // Only an oversized announced size is an error, and only once the header is whole.
      BRAID_FUZZ_CHECK(at - frameStart == InboxFrames::kHeaderBytes,
                       "refused exactly at the end of a header");
      uint64_t announced = 0;
      for (int i = 0; i < 8; ++i) announced |= uint64_t{stream[frameStart + 4 + i]} << (8 * i);
      BRAID_FUZZ_CHECK(announced > InboxFrames::kMaxMessageBytes, "only an oversized frame is refused");
      return 0;
    }
    const size_t arrived = at - frameStart;
    if (arrived > InboxFrames::kHeaderBytes)
      BRAID_FUZZ_CHECK(frames.bufferedCapacity() <= std::max<size_t>(size_t{64} << 10, 2 * arrived),
                       "memory follows the bytes that arrived");
    while (frames.ready()) {
      InboxFrames::Frame f = frames.take();
      uint32_t tag = 0;
      uint64_t announced = 0;
      for (int i = 0; i < 4; ++i) tag |= uint32_t{stream[frameStart + i]} << (8 * i);
      for (int i = 0; i < 8; ++i) announced |= uint64_t{stream[frameStart + 4 + i]} << (8 * i);
      BRAID_FUZZ_CHECK(f.tag == tag, "the frame's tag is its header's");
      BRAID_FUZZ_CHECK(
          f.bytes.size() == announced && frameStart + InboxFrames::kHeaderBytes + announced == at,
          "the frame ends where its header said");
      BRAID_FUZZ_CHECK(std::equal(f.bytes.begin(), f.bytes.end(), stream.begin() + frameStart + 12),
                       "the payload is the bytes after the header");
      frameStart = at;
    }
  }
  return 0;
}
