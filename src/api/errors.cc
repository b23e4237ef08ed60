// Result codes, error strings and last-error storage.
#include "api/handles.h"
#include "base/log.h"

static_assert(static_cast<int>(braid::Code::kNotSupported) == braidNotSupported);
static_assert(static_cast<int>(braid::Code::kAborted) == braidAborted);
static_assert(static_cast<int>(braid::Code::kCudaError) == braidUnhandledCudaError);
static_assert(static_cast<int>(braid::DataType::kFloat8e5m2) == braidFloat8e5m2);
static_assert(static_cast<int>(braid::DataType::kBfloat16) == braidBfloat16);
static_assert(static_cast<int>(braid::RedOp::kAvg) == braidAvg);

namespace braid::api {

thread_local std::string tlsLastError;  // errors not tied to a communicator

braidResult_t toResult(Code code) { return static_cast<braidResult_t>(code); }

braidResult_t report(braidComm_t comm, const Status& status) {
  if (status.isOk()) return braidSuccess;
  // The code's name is what braidGetErrorString gives; the message says the rest.
  const std::string& text = status.message();
  if (status.code() != Code::kInProgress) BRAID_INFO("%s: %s", codeName(status.code()), text.c_str());
  if (comm != nullptr) {
    std::lock_guard<std::mutex> lock(comm->errorMu);
    comm->lastError = text;
  } else {
    tlsLastError = text;
  }
  return toResult(status.code());
}

}  // namespace braid::api

extern "C" {

braidResult_t braidGetVersion(int* version) {
  if (version == nullptr)
    return braid::api::report(nullptr, braid::invalidArgument("braidGetVersion: version is NULL"));
  *version = BRAID_VERSION_CODE;
  return braidSuccess;
}

const char* braidGetErrorString(braidResult_t result) {
  switch (result) {
    case braidSuccess: return "no error";
    case braidUnhandledCudaError: return "unhandled CUDA error";
    case braidSystemError: return "unhandled system error (a system call failed)";
    case braidInternalError: return "internal error (a bug in braid, please report it)";
    case braidInvalidArgument: return "invalid argument";
    case braidInvalidUsage: return "invalid usage";
    case braidRemoteError: return "remote process exited or there was a network error";
    case braidInProgress: return "operation in progress";
    case braidTimeout: return "timeout (a deadline passed)";
    case braidAborted: return "communicator aborted";
    case braidNotSupported: return "not supported";
    default: return "unknown result code";
  }
}

const char* braidGetLastError(braidComm_t comm) {
  if (comm == nullptr) return braid::api::tlsLastError.c_str();
  std::lock_guard<std::mutex> lock(comm->errorMu);
  if (comm->lastError.empty() && comm->impl) {
    braid::Status async = comm->impl->asyncError();
    if (!async.isOk()) comm->lastError = async.message();
  }
  // Valid until the next failing call on this communicator, as documented.
  return comm->lastError.c_str();
}

}  // extern "C"
