// Link rates and byte sizes as tc(8) spells them ("1gbit", "200mbit", "625kb"),
// parsed once so that the rest of fabric works in plain numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace braid::fabric {

// "<number><unit>" with unit bit, kbit, mbit, gbit, tbit (powers of 1000) or
// bps, kbps, mbps, gbps (bytes per second, as tc). Case-insensitive. Returns
// bits per second, or nullopt for anything else (including 0 and values below
// 8 kbit/s, which tbf cannot shape usefully).
std::optional<uint64_t> parseRate(const std::string& text);

// "<number>[unit]" with unit b, k/kb, m/mb, g/gb (powers of 1024, bytes, as
// tc's sizes). Returns bytes, or nullopt when malformed or 0.
std::optional<uint64_t> parseSize(const std::string& text);

// The tbf bucket fabric uses when --burst is not given: 4 ms worth of the rate
// (a 250 Hz tick, so the bucket never empties between two timer wake-ups),
// and at least 64 KiB so that one GSO super-packet fits.
uint64_t defaultBurstBytes(uint64_t bitsPerSec);

// 1.5e9 -> "1.5 Gbit/s", 2e8 -> "200 Mbit/s".
std::string formatRate(double bitsPerSec);

}  // namespace braid::fabric
