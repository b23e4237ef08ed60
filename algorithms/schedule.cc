#include "algorithms/schedule.h"

#include <sstream>

namespace braid::algo {

const char* stepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kSend: return "send";
    case StepKind::kRecv: return "recv";
    case StepKind::kRecvReduce: return "recv-reduce";
    case StepKind::kCopy: return "copy";
    case StepKind::kReduce: return "reduce";
    case StepKind::kDivide: return "divide";
    case StepKind::kScale:
      return "scale";
    case StepKind::kEncode: return "encode";
    case StepKind::kDecode: return "decode";
  }
  return "?";
}

static size_t movedBytes(const Step& s) {
  switch (s.kind) {
    case StepKind::kSend: return s.src.bytes;
    default: return s.dst.bytes;
  }
}

StepId Schedule::add(const Step& step, std::initializer_list<StepId> after, bool keepEmpty) {
  return add(step, std::vector<StepId>(after), keepEmpty);
}

StepId Schedule::add(const Step& step, const std::vector<StepId>& after, bool keepEmpty) {
  if (movedBytes(step) == 0 && !keepEmpty) return kNoStep;
  Step s = step;
  s.depBegin = static_cast<uint32_t>(deps.size());
  for (StepId d : after)
    if (d != kNoStep) deps.push_back(d);
  s.depCount = static_cast<uint32_t>(deps.size()) - s.depBegin;
  steps.push_back(s);
  return static_cast<StepId>(steps.size() - 1);
}

int Schedule::addScratch(size_t bytes) {
  scratchBytes.push_back(bytes);
  return scratchId(static_cast<int>(scratchBytes.size()) - 1);
}

StepId Schedule::append(const Schedule& other, int bufferShift) {
  StepId stepShift = static_cast<StepId>(steps.size());
  uint32_t depShift = static_cast<uint32_t>(deps.size());
  int scratchShift = static_cast<int>(scratchBytes.size());
  auto remap = [&](Region r) {
    if (isScratch(r.buffer))
      r.buffer = scratchId(scratchIndex(r.buffer) + scratchShift);
    else
      r.buffer += bufferShift;  // caller buffers shift into the group's table
    return r;
  };
  for (Step s : other.steps) {
    s.src = remap(s.src);
    s.dst = remap(s.dst);
    s.depBegin += depShift;
    steps.push_back(s);
  }
  for (StepId d : other.deps) deps.push_back(d + stepShift);
  for (size_t b : other.scratchBytes) scratchBytes.push_back(b);
  return stepShift;
}

// The host side must hold whole values and the wire side exactly their
// encoding, or encode / decode would run past a region.
static Status checkCodecStep(const Step& s, size_t i) {
  Status params = kernels::checkCodecParams(s.codec);
  if (!params.isOk()) return internalError("step " + std::to_string(i) + ": " + params.message());
  const bool enc = s.kind == StepKind::kEncode;
  const Region& host = enc ? s.src : s.dst;
  const Region& wire = enc ? s.dst : s.src;
  const size_t es = dataTypeSize(s.codec.hostType);
  if (host.bytes % es != 0 || wire.bytes != kernels::encodedBytes(s.codec, host.bytes / es))
    return internalError("step " + std::to_string(i) + " " + stepKindName(s.kind) + "s " +
                         std::to_string(host.bytes) + " host bytes to or from " + std::to_string(wire.bytes) +
                         " wire bytes, which is not their encoding");
  return Status::ok();
}

Status Schedule::validate(int nranks, const std::vector<size_t>& bufferBytes) const {
  auto checkRegion = [&](const Region& r, size_t i, const char* which) -> Status {
    size_t limit = 0;
    if (r.buffer >= 0 && static_cast<size_t>(r.buffer) < bufferBytes.size()) {
      limit = bufferBytes[r.buffer];
    } else if (isScratch(r.buffer) &&
               static_cast<size_t>(scratchIndex(r.buffer)) < scratchBytes.size()) {
      limit = scratchBytes[scratchIndex(r.buffer)];
    } else {
      return internalError("step " + std::to_string(i) + " " + which + " names unknown buffer " +
                           std::to_string(r.buffer));
    }
    if (r.offset > limit || r.bytes > limit - r.offset)
      return internalError("step " + std::to_string(i) + " " + which + " region [" +
                           std::to_string(r.offset) + ", +" + std::to_string(r.bytes) +
                           ") exceeds buffer " + std::to_string(r.buffer) + " of " +
                           std::to_string(limit) + " bytes");
    return Status::ok();
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    for (uint32_t k = 0; k < s.depCount; ++k)
      if (deps[s.depBegin + k] >= i)
        return internalError("step " + std::to_string(i) + " depends on a later step");
    bool comm = s.kind == StepKind::kSend || s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce;
    if (comm && (s.peer < 0 || s.peer >= nranks))
      return internalError("step " + std::to_string(i) + " has peer " + std::to_string(s.peer));
    if (s.kind != StepKind::kRecv && s.kind != StepKind::kDivide)
      BRAID_RETURN_IF_ERROR(checkRegion(s.src, i, "src"));
    if (s.kind != StepKind::kSend) BRAID_RETURN_IF_ERROR(checkRegion(s.dst, i, "dst"));
    if ((s.kind == StepKind::kRecvReduce || s.kind == StepKind::kScale) && s.src.bytes != s.dst.bytes)
      return internalError("step " + std::to_string(i) + " " + stepKindName(s.kind) +
                           "s regions of different sizes");
    if (s.kind == StepKind::kEncode || s.kind == StepKind::kDecode)
      BRAID_RETURN_IF_ERROR(checkCodecStep(s, i));
  }
  return Status::ok();
}

std::string Schedule::describe() const {
  std::ostringstream out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    out << i << ": " << stepKindName(s.kind);
    if (s.peer >= 0) out << " peer " << s.peer;
    out << " src " << s.src.buffer << "+" << s.src.offset << "/" << s.src.bytes;
    out << " dst " << s.dst.buffer << "+" << s.dst.offset << "/" << s.dst.bytes;
    if (s.depCount) {
      out << " after";
      for (uint32_t k = 0; k < s.depCount; ++k) out << " " << deps[s.depBegin + k];
    }
    out << "\n";
  }
  return out.str();
}

Step encodeStep(const kernels::CodecParams& codec, Region src, Region dst) {
  Step s;
  s.kind = StepKind::kEncode;
  s.src = src;
  s.dst = dst;
  s.codec = codec;
  return s;
}

Step decodeStep(const kernels::CodecParams& codec, Region src, Region dst) {
  Step s = encodeStep(codec, src, dst);
  s.kind = StepKind::kDecode;
  return s;
}

Step sendStep(int peer, Region src, uint8_t tagKind) {
  Step s;
  s.kind = StepKind::kSend;
  s.peer = peer;
  s.src = src;
  s.tagKind = tagKind;
  return s;
}

Step recvStep(int peer, Region dst, uint8_t tagKind) {
  Step s;
  s.kind = StepKind::kRecv;
  s.peer = peer;
  s.dst = dst;
  s.tagKind = tagKind;
  return s;
}

Step recvReduceStep(int peer, Region src, Region dst, DataType dtype, RedOp op, uint8_t tagKind) {
  Step s;
  s.kind = StepKind::kRecvReduce;
  s.peer = peer;
  s.src = src;
  s.dst = dst;
  s.dtype = dtype;
  s.op = op;
  s.tagKind = tagKind;
  return s;
}

Step copyStep(Region src, Region dst) {
  Step s;
  s.kind = StepKind::kCopy;
  s.src = src;
  s.dst = dst;
  return s;
}

Step divideStep(Region dst, DataType dtype, uint64_t divisor) {
  Step s;
  s.kind = StepKind::kDivide;
  s.dst = dst;
  s.dtype = dtype;
  s.divisor = divisor;
  return s;
}

Step scaleStep(Region src, Region dst, DataType dtype, uint64_t scalarBits) {
  Step s;
  s.kind = StepKind::kScale;
  s.src = src;
  s.dst = dst;
  s.dtype = dtype;
  s.scalarBits = scalarBits;
  return s;
}

}  // namespace braid::algo
