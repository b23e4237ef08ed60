// What the opaque C handles point to, and the last-error bookkeeping shared by
// every entry point. Errors become braidResult_t here and nowhere else.
#pragma once

#include <braid/braid.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "core/communicator.h"
#include "core/stream.h"

struct braidComm {
  std::shared_ptr<braid::core::Communicator> impl;
  std::mutex errorMu;
  std::string lastError;  // guarded by errorMu
};

struct braidStream {
  braid::core::Stream stream;
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

}  // namespace braid::api
