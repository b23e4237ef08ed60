// Frames of the control plane (watchdog.h): heartbeats, faults and goodbyes
// between a rank and the hub. Small, fixed header; the parser never trusts a
// length it did not bound, so a corrupt or hostile stream only ends the link.
//
// Wire (little-endian): magic u16 0x4257 ("WB"), type u8, code u8,
// culprit i32, reporter i32, text length u32, then the text (<= kMaxText).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/fault.h"

namespace braid::core {

enum class ControlType : uint8_t { kHeartbeat = 1, kFault = 2, kBye = 3 };

struct ControlFrame {
  ControlType type = ControlType::kHeartbeat;
  Fault fault;  // kFault only
};

constexpr uint16_t kControlMagic = 0x4257;
constexpr size_t kControlHeaderBytes = 16;
constexpr size_t kControlMaxText = 4096;

// Appends the encoded frame to *out (the text is cut at kControlMaxText).
void encodeControlFrame(const ControlFrame& frame, std::string* out);

enum class ParseResult { kFrame, kNeedMore, kCorrupt };
// Parses the frame at the start of [data, data+size). kFrame: *frame filled
// and *consumed set; kNeedMore: an incomplete frame; kCorrupt: bad magic,
// type, code or length (the link must be dropped).
ParseResult parseControlFrame(const uint8_t* data, size_t size, ControlFrame* frame, size_t* consumed);

}  // namespace braid::core
