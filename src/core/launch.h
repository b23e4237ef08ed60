// Launching ops: inline (NULL stream), onto a stream, or into the calling
// thread's open group, which GroupEnd fuses into one schedule per communicator
// so that its sends and receives progress together.
#pragma once

#include <memory>

#include "base/status.h"
#include "core/communicator.h"
#include "core/op.h"
#include "core/stream.h"

namespace braid::core {

// Runs or queues `op`. stream == nullptr: runs now and returns its result.
// Inside a group: queued until the outermost groupEnd().
// staging: what a group member staged of device buffers (device_staging.h),
// run around the group's fused op.
struct GroupStaging;
Status launch(const std::shared_ptr<Communicator>& comm, Stream* stream, Op&& op,
              std::shared_ptr<GroupStaging> staging = nullptr);

// Point-to-point ops with a peer equal to the own rank are only valid inside a
// group, where they are paired with the matching self receive as a copy.
bool inGroup();
void groupStart();
Status groupEnd();

}  // namespace braid::core
