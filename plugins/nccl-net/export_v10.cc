// ncclNetPlugin_v10: init takes NCCL's profiler callback, connect a comm
// config, isend / irecv the profiler's handles. braid's plugin records no
// profiler events (so it keeps neither) and has no traffic classes (TCP and
// UCX here carry all traffic alike), so the config changes nothing.
#include "entry_points.h"

namespace braid::ncclnet::v10 {
namespace {

ncclResult_t init(ncclDebugLogger_t logFunction, ncclProfilerCallback_t /*profFunction*/) {
  return entry::init(logFunction);
}

// NCCL's own probes pass a null config.
ncclResult_t connect(int dev, ncclNetCommConfig_v10_t* /*config*/, void* handle, void** sendComm,
                     ncclNetDeviceHandle_v10_t** sendDevComm) {
  return entry::connect(dev, handle, sendComm, sendDevComm);
}

}  // namespace
}  // namespace braid::ncclnet::v10

namespace e = braid::ncclnet::entry;
namespace v10 = braid::ncclnet::v10;

extern "C" __attribute__((visibility("default"))) const ncclNet_v10_t ncclNetPlugin_v10 = {
    "braid",
    v10::init,
    e::devices,
    e::getPropertiesV9,  // v10's properties are v9's
    e::listen,
    v10::connect,
    e::accept,
    e::regMr,
    e::regMrDmaBuf,
    e::deregMr,
    e::isendProfiled,
    e::irecvProfiled,
    e::iflush,
    e::test,
    e::closeSend,
    e::closeRecv,
    e::closeListen,
    nullptr,  // getDeviceMr: no device offload (see export_v8.cc)
    nullptr,  // irecvConsumed
    nullptr,  // makeVDevice: no virtual NICs
};
