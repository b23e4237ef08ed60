// ncclNetPlugin_v11 (NCCL 2.28 on, which looks for it first): init runs once
// per NCCL communicator and returns a context that listen, connect and
// finalize take back. braid's connections belong to the process (net_plugin.h),
// so a context proves that NCCL got it from init and has not finalized it, and
// carries the communicator's trafficClass to its connects.
#include "entry_points.h"

namespace braid::ncclnet::v11 {
namespace {

ncclResult_t init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t logFunction,
                  ncclProfilerCallback_t /*profFunction*/) {
  if (!ctx) return entry::misuse("init", "null ctx");
  *ctx = nullptr;
  if (ncclResult_t r = entry::init(logFunction); r != ncclSuccess) return r;
  return entry::openContext(commId, config, ctx);
}

ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) {
  if (ncclResult_t r = entry::checkContext("listen", ctx); r != ncclSuccess) return r;
  return entry::listen(dev, handle, listenComm);
}

ncclResult_t connect(void* ctx, int dev, void* handle, void** sendComm,
                     ncclNetDeviceHandle_v11_t** sendDevComm) {
  int trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;
  if (ncclResult_t r = entry::checkContext("connect", ctx, &trafficClass); r != ncclSuccess) return r;
  return entry::connectWithTrafficClass(dev, handle, sendComm, sendDevComm, trafficClass);
}

// Comms made under a context outlive it if NCCL closes them later: they are
// the process's, as the context's connections are.
ncclResult_t finalize(void* ctx) { return entry::closeContext(ctx); }

}  // namespace
}  // namespace braid::ncclnet::v11

namespace e = braid::ncclnet::entry;
namespace v11 = braid::ncclnet::v11;

extern "C" __attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {
    // One entry a line, in the order of NCCL's header.
    // clang-format off
    "braid",
    v11::init,
    e::devices,
    e::getProperties,
    v11::listen,
    v11::connect,
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
    // clang-format on
    nullptr,  // getDeviceMr: no device offload (see export_v8.cc)
    nullptr,  // irecvConsumed
    nullptr,  // makeVDevice: no virtual NICs
    v11::finalize,
    nullptr,  // setNetAttr: hints on traffic to come, which sockets cannot act on
};
