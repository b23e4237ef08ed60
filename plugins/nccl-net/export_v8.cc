// ncclNetPlugin_v8, for the NCCL releases (2.19 on) that know no newer
// table: sizes are int, and the properties end at netDeviceVersion.
#include "entry_points.h"

namespace braid::ncclnet::v8 {
namespace {

ncclResult_t getProperties(int dev, ncclNetProperties_v8_t* props) {
  if (!props) return entry::misuse("getProperties", "null props");
  ncclNetProperties_v11_t p;
  if (ncclResult_t r = entry::getProperties(dev, &p); r != ncclSuccess) return r;
  *props = ncclNetProperties_v8_t{p.name,        p.pciPath,  p.guid,          p.ptrSupport,
                                  p.regIsGlobal, p.speed,    p.port,          p.latency,
                                  p.maxComms,    p.maxRecvs, p.netDeviceType, p.netDeviceVersion};
  return ncclSuccess;
}

ncclResult_t isend(void* sendComm, void* data, int size, int tag, void* mhandle, void** request) {
  if (size < 0) return entry::misuse("isend", "negative size");
  return entry::isend(sendComm, data, static_cast<size_t>(size), tag, mhandle, request);
}

ncclResult_t irecv(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                   void** request) {
  if (!sizes) return entry::misuse("irecv", "null argument");
  if (n != 1)
    return entry::misuse("irecv", "grouped receives are not supported (the devices say maxRecvs = 1)");
  if (sizes[0] < 0) return entry::misuse("irecv", "negative size");
  size_t size = static_cast<size_t>(sizes[0]);
  return entry::irecv(recvComm, n, data, &size, tags, mhandles, request);
}

}  // namespace
}  // namespace braid::ncclnet::v8

namespace e = braid::ncclnet::entry;
namespace v8 = braid::ncclnet::v8;

extern "C" __attribute__((visibility("default"))) const ncclNet_v8_t ncclNetPlugin_v8 = {
    "braid",
    e::init,
    e::devices,
    v8::getProperties,
    e::listen,
    e::connect,
    e::accept,
    e::regMr,
    e::regMrDmaBuf,
    e::deregMr,
    v8::isend,
    v8::irecv,
    e::iflush,
    e::test,
    e::closeSend,
    e::closeRecv,
    e::closeListen,
    // Device offload (NCCL_NET_DEVICE_HOST only): no getDeviceMr and no
    // irecvConsumed, as NCCL's own Socket transport. NCCL calls irecvConsumed
    // after every completed receive whenever the entry is set (NCCL 2.28.9 on
    // an H200 failed its first all-reduce on the refusal that stood here).
    nullptr,
    nullptr,
};
