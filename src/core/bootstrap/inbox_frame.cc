#include "core/bootstrap/inbox_frame.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/bootstrap/wire.h"

namespace braid::bootstrap {
namespace {
constexpr size_t kFirstChunkBytes = size_t{64} << 10;
}  // namespace

uint8_t* InboxFrames::next(size_t* room) {
  if (!inPayload_) {
    *room = kHeaderBytes - have_;
    return header_ + have_;
  }
  if (have_ == payload_.size()) {
    // Grow with what arrived, never past the announced size.
    const size_t grown = std::max(kFirstChunkBytes, 2 * payload_.size());
    payload_.resize(static_cast<size_t>(std::min<uint64_t>(size_, grown)));
  }
  *room = payload_.size() - have_;
  return payload_.data() + have_;
}

Status InboxFrames::advance(size_t n) {
  have_ += n;
  if (!inPayload_) {
    if (have_ < kHeaderBytes) return Status::ok();
    wire::Reader r(header_, kHeaderBytes);
    tag_ = r.u32();
    size_ = r.u64();
    if (size_ > kMaxMessageBytes)
      return remoteError("it sent a malformed frame (" + std::to_string(size_) + " bytes, over the " +
                         std::to_string(kMaxMessageBytes) + "-byte limit)");
    have_ = 0;
    inPayload_ = true;
  }
  ready_ = have_ == size_;
  return Status::ok();
}

InboxFrames::Frame InboxFrames::take() {
  Frame f{tag_, std::move(payload_)};
  f.bytes.resize(static_cast<size_t>(size_));  // a no-op unless size_ is 0
  payload_ = {};
  have_ = 0;
  inPayload_ = false;
  ready_ = false;
  return f;
}

}  // namespace braid::bootstrap
