// The TCP transport's frame header (transports/tcp/frame.h) on arbitrary
// bytes. Input: a control byte (bit 0: repair the check field, so the fields
// behind the SipHash are explored), then the 40-byte header, zero-padded.
// Properties: decodeFrame never crashes; an accepted header re-encodes to the
// same bytes; for any part count the receiver would accept (1..kMaxSocks),
// partRange splits the announced total into in-bounds, gapless parts.
#include <cstring>

#include "fixups.h"
#include "fuzz_input.h"
#include "fuzz_target.h"
#include "transports/tcp/frame.h"

using namespace braid::tcp;

BRAID_FUZZ_TARGET(tcp_frame) {
  braid::fuzz::FuzzInput in(data, size);
  uint8_t control = in.u8();
  std::vector<uint8_t> bytes = in.padded(kFrameHeaderBytes);
  if (control & 1) braid::fuzz::repairFrameCheck(bytes.data());

  FrameHeader h;
  if (!decodeFrame(bytes.data(), &h)) return 0;
  uint8_t again[kFrameHeaderBytes];
  encodeFrame(h, again);
  BRAID_FUZZ_CHECK(std::memcmp(again, bytes.data(), kFrameHeaderBytes) == 0, "encode(decode(h)) == h");

  if (h.nParts < 1 || h.nParts > kMaxSocks) return 0;  // tcp_recv.cc rejects these
  size_t expect = 0;
  for (int i = 0; i < h.nParts; ++i) {
    size_t offset = 0, partSize = 0;
    partRange(h.total, h.nParts, i, &offset, &partSize);
    BRAID_FUZZ_CHECK(offset == expect, "parts are contiguous");
    BRAID_FUZZ_CHECK(partSize <= h.total - offset, "part stays inside the message");
    expect = offset + partSize;
  }
  BRAID_FUZZ_CHECK(expect == h.total, "parts cover the message");
  return 0;
}
