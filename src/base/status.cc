#include "base/status.h"

#include <cstring>

namespace braid {

const char* codeName(Code code) {
  switch (code) {
    case Code::kOk: return "success";
    case Code::kCudaError: return "unhandled CUDA error";
    case Code::kSystemError: return "system error";
    case Code::kInternalError: return "internal error";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kInvalidUsage: return "invalid usage";
    case Code::kRemoteError: return "remote error";
    case Code::kInProgress: return "in progress";
    case Code::kTimeout: return "timeout";
    case Code::kAborted: return "aborted";
    case Code::kNotSupported: return "not supported";
  }
  return "unknown result code";
}

const std::string& Status::emptyMessage() {
  static const std::string empty;
  return empty;
}

Status systemError(const std::string& what, int err) {
  char buf[128];
  // GNU strerror_r may return a static string instead of filling buf.
  const char* text = strerror_r(err, buf, sizeof(buf));
  return {Code::kSystemError, what + ": " + text + " (errno " + std::to_string(err) + ")"};
}

}  // namespace braid
