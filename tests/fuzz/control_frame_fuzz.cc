// The control plane's frames (core/control_frame.h: heartbeats, faults and
// goodbyes between a rank and the hub) on arbitrary bytes, as a stream: the
// input is parsed frame after frame the way the watchdog consumes its
// buffer. Properties: no crash; a frame is accepted only with a consumed
// size inside the input and at least a header; an accepted frame re-encodes
// to exactly the bytes consumed; kNeedMore only for a prefix shorter than the
// frame it announces (never for a full header announcing more than the cap).
#include <cstring>
#include <string>

#include "core/control_frame.h"
#include "fuzz_target.h"

using namespace braid::core;

BRAID_FUZZ_TARGET(control_frame) {
  size_t at = 0;
  while (at < size) {
    ControlFrame frame;
    size_t consumed = 0;
    const ParseResult r = parseControlFrame(data + at, size - at, &frame, &consumed);
    if (r == ParseResult::kCorrupt) return 0;
    if (r == ParseResult::kNeedMore) {
      BRAID_FUZZ_CHECK(size - at < kControlHeaderBytes + kControlMaxText, "need more only below the largest frame");
      return 0;
    }
    BRAID_FUZZ_CHECK(consumed >= kControlHeaderBytes && consumed <= size - at, "a frame lies inside the input");
    BRAID_FUZZ_CHECK(frame.fault.what.size() <= kControlMaxText, "fault text within its cap");
    std::string again;
    encodeControlFrame(frame, &again);
    BRAID_FUZZ_CHECK(again.size() == consumed && std::memcmp(again.data(), data + at, consumed) == 0,
                     "encode(parse(bytes)) == bytes");
    at += consumed;
  }
  return 0;
}
