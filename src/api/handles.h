// What the opaque C handles point to, and the last-error bookkeeping shared by
// every entry point. Errors become braidResult_t here and nowhere else.
#pragma once

#include <braid/braid.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "api/user_ops.h"
#include "base/status.h"
#include "core/communicator.h"
#include "core/device_staging.h"
#include "core/stream.h"

struct braidComm {
  std::shared_ptr<braid::core::Communicator> impl;
  std::mutex errorMu;
  std::string lastError;  // guarded by errorMu
  // The user's reference plus one per collective call in progress, so that
  // braidCommAbort (or Destroy) on another thread never frees the handle under
  // a call that is still running and about to record its error here.
  std::atomic<int> pins{1};
  braid::api::UserRedOps userOps;  // braidRedOpCreatePreMulSum's
};

struct braidStream {
  braid::core::Stream stream;  // holds braidStreamWrapCuda's binding, if any
};

struct braidEvent {
  braid::core::Event event;
  bool recorded = false;
};

namespace braid::api {

// Records `status` as the last error of `comm` (or of this thread when comm is
// null) and returns its code as a braidResult_t. Ok clears nothing.
braidResult_t report(braidComm_t comm, const Status& status);
braidResult_t toResult(Code code);

// Holds a braidComm for the length of one call (a no-op for NULL).
class CommPin {
 public:
  explicit CommPin(braidComm_t comm) : comm_(comm) {
    if (comm_) comm_->pins.fetch_add(1, std::memory_order_relaxed);
  }
  ~CommPin() { release(comm_); }
  CommPin(const CommPin&) = delete;
  CommPin& operator=(const CommPin&) = delete;
  // Drops one reference; the last one frees the handle.
  static void release(braidComm_t comm) {
    if (comm && comm->pins.fetch_sub(1, std::memory_order_acq_rel) == 1) delete comm;
  }

 private:
  braidComm_t comm_;
};

}  // namespace braid::api
