#include "core/control_frame.h"

#include <vector>

#include "core/bootstrap/wire.h"

namespace braid::core {

void encodeControlFrame(const ControlFrame& frame, std::string* out) {
  const std::string& text = frame.fault.what;
  const size_t n = text.size() < kControlMaxText ? text.size() : kControlMaxText;
  std::vector<uint8_t> bytes;
  bootstrap::wire::Writer w(&bytes);
  w.u16(kControlMagic);
  bytes.push_back(static_cast<uint8_t>(frame.type));
  bytes.push_back(static_cast<uint8_t>(frame.fault.code));
  w.u32(static_cast<uint32_t>(frame.fault.culprit));
  w.u32(static_cast<uint32_t>(frame.fault.reporter));
  w.u32(static_cast<uint32_t>(frame.type == ControlType::kFault ? n : 0));
  if (frame.type == ControlType::kFault) w.bytes(text.data(), n);
  out->append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

ParseResult parseControlFrame(const uint8_t* data, size_t size, ControlFrame* frame, size_t* consumed) {
  if (size < kControlHeaderBytes) return ParseResult::kNeedMore;
  bootstrap::wire::Reader r(data, size);
  const uint16_t magic = r.u16();
  uint8_t type = 0, code = 0;
  r.bytes(&type, 1);
  r.bytes(&code, 1);
  const int32_t culprit = static_cast<int32_t>(r.u32());
  const int32_t reporter = static_cast<int32_t>(r.u32());
  const uint32_t length = r.u32();
  if (magic != kControlMagic || type < 1 || type > 3 || code > static_cast<uint8_t>(Code::kNotSupported) ||
      length > kControlMaxText || (type != static_cast<uint8_t>(ControlType::kFault) && length != 0))
    return ParseResult::kCorrupt;
  if (size < kControlHeaderBytes + length) return ParseResult::kNeedMore;
  frame->type = static_cast<ControlType>(type);
  frame->fault.code = static_cast<Code>(code);
  frame->fault.culprit = culprit;
  frame->fault.reporter = reporter;
  frame->fault.what.assign(reinterpret_cast<const char*>(data) + kControlHeaderBytes, length);
  *consumed = kControlHeaderBytes + length;
  return ParseResult::kFrame;
}

}  // namespace braid::core
