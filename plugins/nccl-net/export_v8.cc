// ncclNetPlugin_v8: NCCL's calls, checked and handed to NetPlugin; its Status
// comes back as an ncclResult_t, its message as a WARN line in NCCL's log
// (NCCL_DEBUG=WARN shows it next to NCCL's own).
#include <cstdarg>
#include <cstdio>
#include <memory>

#include "base/status.h"
#include "net_plugin.h"
#include "transports/netplugin/nccl_net_abi.h"

namespace braid::ncclnet {
namespace {

ncclDebugLogger_t logger = nullptr;

#define PLUGIN_LOG(level, flags, ...)                                  \
  do {                                                                 \
    if (logger) logger(level, flags, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

ncclResult_t resultOf(Code code) {
  switch (code) {
    case Code::kOk:
      return ncclSuccess;
    case Code::kCudaError:
      return ncclUnhandledCudaError;
    case Code::kSystemError:
    case Code::kTimeout:
      return ncclSystemError;
    case Code::kRemoteError:
    case Code::kAborted:
      return ncclRemoteError;
    case Code::kInvalidUsage:
      return ncclInvalidUsage;
    default:  // NCCL called us in a way the API does not allow
      return ncclInternalError;
  }
}

ncclResult_t report(const char* call, const Status& st) {
  if (st.isOk()) return ncclSuccess;
  PLUGIN_LOG(NCCL_LOG_WARN, NCCL_NET, "NET/braid : %s failed: %s", call, st.message().c_str());
  return resultOf(st.code());
}

ncclResult_t misuse(const char* call, const char* what) { return report(call, internalError(what)); }

NetPlugin& plugin() { return NetPlugin::instance(); }

ncclResult_t init(ncclDebugLogger_t logFunction) {
  logger = logFunction;
  Status st = plugin().init();
  if (!st.isOk()) {
    // Not a failure of the job: NCCL goes on with its own networks.
    PLUGIN_LOG(NCCL_LOG_INFO, NCCL_INIT | NCCL_NET, "NET/braid : not used: %s", st.message().c_str());
    return resultOf(st.code());
  }
  for (int dev = 0; dev < plugin().deviceCount(); ++dev) {
    const DeviceInfo* info = nullptr;
    if (plugin().device(dev, &info).isOk())
      PLUGIN_LOG(NCCL_LOG_INFO, NCCL_INIT | NCCL_NET, "NET/braid : device %d: %s over %s, %d Mbit/s%s", dev,
                 info->name.c_str(), plugin().transportName(), info->speedMbps,
                 info->pciPath.empty() ? ", virtual" : "");
  }
  return ncclSuccess;
}

ncclResult_t devices(int* ndev) {
  if (!ndev) return misuse("devices", "null ndev");
  *ndev = plugin().deviceCount();
  return ncclSuccess;
}

ncclResult_t getProperties(int dev, ncclNetProperties_v8_t* props) {
  if (!props) return misuse("getProperties", "null props");
  const DeviceInfo* info = nullptr;
  if (ncclResult_t r = report("getProperties", plugin().device(dev, &info)); r != ncclSuccess) return r;
  // NCCL keeps these pointers; they point into the plugin's device list, which
  // lives as long as the process.
  props->name = const_cast<char*>(info->name.c_str());
  props->pciPath = info->pciPath.empty() ? nullptr : const_cast<char*>(info->pciPath.c_str());
  props->guid = static_cast<uint64_t>(dev);
  props->ptrSupport = NCCL_PTR_HOST;
  props->regIsGlobal = 0;
  props->speed = info->speedMbps;
  props->port = 0;
  // NCCL's own Socket and IB transports say 0: its tuner's constants hold the
  // network's latency already, so another value would skew its choices.
  props->latency = 0;
  props->maxComms = info->maxComms;
  props->maxRecvs = 1;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  return ncclSuccess;
}

ncclResult_t listen(int dev, void* handle, void** listenComm) {
  if (!handle || !listenComm) return misuse("listen", "null handle or listenComm");
  std::unique_ptr<ListenComm> comm;
  if (ncclResult_t r = report("listen", plugin().listen(dev, static_cast<uint8_t*>(handle), &comm));
      r != ncclSuccess)
    return r;
  *listenComm = comm.release();
  return ncclSuccess;
}

// Device offload (sendDevComm / recvDevComm) is never asked for: the devices
// say NCCL_NET_DEVICE_HOST.
ncclResult_t connect(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v8_t** /*sendDevComm*/) {
  if (!handle || !sendComm) return misuse("connect", "null handle or sendComm");
  *sendComm = nullptr;
  std::unique_ptr<SendComm> comm;
  if (ncclResult_t r = report("connect", plugin().connect(dev, static_cast<const uint8_t*>(handle), &comm));
      r != ncclSuccess)
    return r;
  *sendComm = comm.release();
  return ncclSuccess;
}

ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v8_t** /*recvDevComm*/) {
  if (!listenComm || !recvComm) return misuse("accept", "null listenComm or recvComm");
  *recvComm = nullptr;
  std::unique_ptr<RecvComm> comm;
  if (ncclResult_t r = report("accept", plugin().accept(*static_cast<ListenComm*>(listenComm), &comm));
      r != ncclSuccess)
    return r;
  *recvComm = comm.release();
  return ncclSuccess;
}

// Registration has nothing to pin for sockets; it keeps the range so that a
// buffer outside it is refused rather than moved.
ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (!comm || !mhandle || (size > 0 && !data)) return misuse("regMr", "null comm, mhandle or buffer");
  if (type != NCCL_PTR_HOST)
    return misuse("regMr", "only host memory can be registered (the devices say ptrSupport = NCCL_PTR_HOST)");
  auto* region = new MemoryRegion;
  region->begin = reinterpret_cast<uintptr_t>(data);
  region->size = size;
  *mhandle = region;
  return ncclSuccess;
}

ncclResult_t regMrDmaBuf(void*, void*, size_t, int, uint64_t, int, void**) {
  return misuse("regMrDmaBuf", "DMA-BUF registration is not supported (ptrSupport has no NCCL_PTR_DMABUF)");
}

ncclResult_t deregMr(void* /*comm*/, void* mhandle) {
  delete static_cast<MemoryRegion*>(mhandle);
  return ncclSuccess;
}

ncclResult_t isend(void* sendComm, void* data, int size, int tag, void* mhandle, void** request) {
  if (!sendComm || !request) return misuse("isend", "null sendComm or request");
  if (size < 0) return misuse("isend", "negative size");
  Request* out = nullptr;
  ncclResult_t r =
      report("isend", plugin().isend(*static_cast<SendComm*>(sendComm), data, static_cast<size_t>(size),
                                     static_cast<uint32_t>(tag), static_cast<MemoryRegion*>(mhandle), &out));
  *request = out;
  return r;
}

ncclResult_t irecv(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                   void** request) {
  if (!recvComm || !request || !data || !sizes || !tags) return misuse("irecv", "null argument");
  if (n != 1) return misuse("irecv", "grouped receives are not supported (the devices say maxRecvs = 1)");
  if (sizes[0] < 0) return misuse("irecv", "negative size");
  Request* out = nullptr;
  auto* region = mhandles ? static_cast<MemoryRegion*>(mhandles[0]) : nullptr;
  ncclResult_t r = report(
      "irecv", plugin().irecv(*static_cast<RecvComm*>(recvComm), data[0], static_cast<size_t>(sizes[0]),
                              static_cast<uint32_t>(tags[0]), region, &out));
  *request = out;
  return r;
}

// NCCL flushes only receives into GPU memory, which this plugin never accepts
// (regMr refuses it): host memory holds the data once test() said done, so
// there is nothing to wait for, which a null request tells NCCL.
ncclResult_t iflush(void* recvComm, int, void**, int*, void**, void** request) {
  if (!recvComm || !request) return misuse("iflush", "null recvComm or request");
  *request = nullptr;
  return ncclSuccess;
}

ncclResult_t test(void* request, int* done, int* sizes) {
  if (!request || !done) return misuse("test", "null request or done");
  bool finished = false;
  size_t bytes = 0;
  ncclResult_t r = report("test", plugin().test(*static_cast<Request*>(request), &finished, &bytes));
  *done = finished ? 1 : 0;
  if (r == ncclSuccess && finished && sizes) sizes[0] = static_cast<int>(bytes);
  return r;
}

ncclResult_t closeSend(void* sendComm) {
  delete static_cast<SendComm*>(sendComm);
  return ncclSuccess;
}

ncclResult_t closeRecv(void* recvComm) {
  delete static_cast<RecvComm*>(recvComm);
  return ncclSuccess;
}

ncclResult_t closeListen(void* listenComm) {
  delete static_cast<ListenComm*>(listenComm);
  return ncclSuccess;
}

}  // namespace
}  // namespace braid::ncclnet

extern "C" __attribute__((visibility("default"))) const ncclNet_v8_t ncclNetPlugin_v8 = {
    "braid",
    braid::ncclnet::init,
    braid::ncclnet::devices,
    braid::ncclnet::getProperties,
    braid::ncclnet::listen,
    braid::ncclnet::connect,
    braid::ncclnet::accept,
    braid::ncclnet::regMr,
    braid::ncclnet::regMrDmaBuf,
    braid::ncclnet::deregMr,
    braid::ncclnet::isend,
    braid::ncclnet::irecv,
    braid::ncclnet::iflush,
    braid::ncclnet::test,
    braid::ncclnet::closeSend,
    braid::ncclnet::closeRecv,
    braid::ncclnet::closeListen,
    // Device offload (NCCL_NET_DEVICE_HOST only): no getDeviceMr and no
    // irecvConsumed, as NCCL's own Socket transport. NCCL calls irecvConsumed
    // after every completed receive whenever the entry is set (NCCL 2.28.9 on
    // an H200 failed its first all-reduce on the refusal that stood here).
    nullptr,
    nullptr,
};
