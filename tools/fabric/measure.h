// The raw link, measured: one plain TCP stream from one fabric host to
// another, sender and receiver both inside this process, so the number is
// what the shaped veths carry with no braid code involved.
#pragma once

#include <csignal>
#include <cstdint>
#include <optional>
#include <string>

namespace braid::fabric {

struct LinkMeasurement {
  double bitsPerSec = 0;  // payload rate at the receiver, after the warm-up
  double seconds = 0;     // the span the rate was measured over
  uint64_t bytes = 0;     // payload bytes in that span
};

// Streams from host `from` to host `to` of the fabric for `seconds` (0.2 ..
// 30). The first quarter (at most 250 ms) is left out, so tbf's initial burst
// and TCP's slow start do not inflate or deflate the figure; the rate is taken
// at the receiver up to end of stream, so data still queued when the sender
// stops counts at the rate it really crossed the link. Bounded: connecting
// waits at most 3 s, the whole measurement at most seconds + 5 s, and it stops
// early (nullopt, "interrupted") once *stop is non-zero.
std::optional<LinkMeasurement> measureLink(const std::string& fabric, int from, int to, double seconds,
                                           const volatile std::sig_atomic_t* stop, std::string* error);

}  // namespace braid::fabric
