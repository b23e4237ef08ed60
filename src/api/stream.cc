// C entry points of streams and events.
#include <braid/braid.h>

#include <new>

#include "api/handles.h"
#include "kernels/device_loader.h"

using braid::Status;
namespace api = braid::api;

namespace {
braidResult_t nullArg(const char* fn, const char* arg) {
  return api::report(nullptr, braid::invalidArgument(std::string(fn) + ": " + arg + " is NULL"));
}
}  // namespace

extern "C" {

braidResult_t braidStreamCreate(braidStream_t* stream) {
  if (stream == nullptr) return nullArg("braidStreamCreate", "stream");
  *stream = new (std::nothrow) braidStream();
  if (*stream == nullptr) return api::report(nullptr, braid::systemError("braidStreamCreate", ENOMEM));
  return braidSuccess;
}

braidResult_t braidStreamWrapCuda(void* cudaStream, braidStream_t* stream) {
  if (stream == nullptr) return nullArg("braidStreamWrapCuda", "stream");
  const braid::kernels::DeviceModule* m = braid::kernels::deviceModule();
  if (m == nullptr)
    return api::report(
        nullptr, braid::notSupported("braidStreamWrapCuda: " + braid::kernels::deviceUnavailableReason()));
  std::unique_ptr<braid::core::CudaStreamOrder> order;
  Status st = braid::core::CudaStreamOrder::create(*m, cudaStream, &order);
  if (!st.isOk()) return api::report(nullptr, st.prefix("braidStreamWrapCuda"));
  auto* s = new (std::nothrow) braidStream();
  if (s == nullptr) return api::report(nullptr, braid::systemError("braidStreamWrapCuda", ENOMEM));
  s->stream.bindCuda(std::move(order));
  *stream = s;
  return braidSuccess;
}

braidResult_t braidStreamDestroy(braidStream_t stream) {
  if (stream == nullptr) return nullArg("braidStreamDestroy", "stream");
  delete stream;  // the destructor lets queued work finish first
  return braidSuccess;
}

braidResult_t braidStreamSynchronize(braidStream_t stream) {
  if (stream == nullptr) return nullArg("braidStreamSynchronize", "stream");
  return api::report(nullptr, stream->stream.synchronize());
}

braidResult_t braidStreamQuery(braidStream_t stream) {
  if (stream == nullptr) return nullArg("braidStreamQuery", "stream");
  Status st = stream->stream.query();
  if (st.code() == braid::Code::kInProgress) return braidInProgress;
  return api::report(nullptr, st);
}

braidResult_t braidEventCreate(braidEvent_t* event) {
  if (event == nullptr) return nullArg("braidEventCreate", "event");
  *event = new (std::nothrow) braidEvent();
  if (*event == nullptr) return api::report(nullptr, braid::systemError("braidEventCreate", ENOMEM));
  return braidSuccess;
}

braidResult_t braidEventRecord(braidEvent_t event, braidStream_t stream) {
  if (event == nullptr) return nullArg("braidEventRecord", "event");
  // A NULL stream runs everything inline: the point is reached already.
  if (stream == nullptr) return braidSuccess;
  event->event.record(stream->stream);
  return braidSuccess;
}

braidResult_t braidEventQuery(braidEvent_t event) {
  if (event == nullptr) return nullArg("braidEventQuery", "event");
  return event->event.reached() ? braidSuccess : braidInProgress;
}

braidResult_t braidEventSynchronize(braidEvent_t event) {
  if (event == nullptr) return nullArg("braidEventSynchronize", "event");
  event->event.synchronize();
  return braidSuccess;
}

braidResult_t braidEventDestroy(braidEvent_t event) {
  if (event == nullptr) return nullArg("braidEventDestroy", "event");
  delete event;
  return braidSuccess;
}

}  // extern "C"
