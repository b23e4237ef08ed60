#include "entry_points.h"

#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "base/status.h"
#include "net_plugin.h"

namespace braid::ncclnet::entry {
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

NetPlugin& plugin() { return NetPlugin::instance(); }

// v11's contexts. NCCL makes one per communicator and holds it as an opaque
// pointer; braid's connections are the process's, so a context carries only
// what init was told.
struct Context {
  uint64_t commId;
  int trafficClass;  // what the communicator's connects ask for (NetPlugin::connect)
};
std::mutex contextsMu;
std::unordered_set<void*>& contexts() {
  static auto* live = new std::unordered_set<void*>;  // never destroyed: NCCL may finalize at exit
  return *live;
}

}  // namespace

ncclResult_t misuse(const char* call, const char* what) { return report(call, internalError(what)); }

ncclResult_t openContext(uint64_t commId, const ncclNetCommConfig_v11_t* config, void** ctx) {
  auto* context = new Context{commId, config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  std::lock_guard lock(contextsMu);
  contexts().insert(context);
  *ctx = context;
  return ncclSuccess;
}

ncclResult_t checkContext(const char* call, void* ctx, int* trafficClass) {
  std::lock_guard lock(contextsMu);
  if (!contexts().count(ctx)) return misuse(call, "a context init did not make, or one already finalized");
  if (trafficClass) *trafficClass = static_cast<const Context*>(ctx)->trafficClass;
  return ncclSuccess;
}

ncclResult_t closeContext(void* ctx) {
  {
    std::lock_guard lock(contextsMu);
    if (!contexts().erase(ctx)) ctx = nullptr;
  }
  if (!ctx) return misuse("finalize", "a context init did not make, or one already finalized");
  delete static_cast<Context*>(ctx);
  return ncclSuccess;
}

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

ncclResult_t getProperties(int dev, ncclNetProperties_v11_t* props) {
  if (!props) return misuse("getProperties", "null props");
  *props = ncclNetProperties_v11_t{};
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
  // No flush: receives land in host memory. Each device is a physical one
  // (makeVDevice is null, so NCCL fuses none). Transfers as large as NCCL
  // lets a v8 plugin's be: test() reports sizes as int, and the transports'
  // chunking gains nothing from larger ones.
  props->forceFlush = 0;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = NCCL_NET_DEFAULT_MAX_P2P_BYTES;
  props->maxCollBytes = NCCL_NET_DEFAULT_MAX_COLL_BYTES;
  props->maxMultiRequestSize = 1;  // no multi-requests (NCCL_NET_MULTI_REQUEST)
  return ncclSuccess;
}

ncclResult_t getPropertiesV9(int dev, ncclNetProperties_v9_t* props) {
  if (!props) return misuse("getProperties", "null props");
  ncclNetProperties_v11_t p;
  if (ncclResult_t r = getProperties(dev, &p); r != ncclSuccess) return r;
  static_assert(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize) == sizeof(ncclNetProperties_v9_t));
  std::memcpy(props, &p, sizeof(*props));
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

ncclResult_t connect(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v8_t** sendDevComm) {
  return connectWithTrafficClass(dev, handle, sendComm, sendDevComm, NCCL_NET_TRAFFIC_CLASS_UNDEF);
}

ncclResult_t connectWithTrafficClass(int dev, void* handle, void** sendComm,
                                     ncclNetDeviceHandle_v8_t** /*sendDevComm*/, int trafficClass) {
  if (!handle || !sendComm) return misuse("connect", "null handle or sendComm");
  *sendComm = nullptr;
  std::unique_ptr<SendComm> comm;
  if (ncclResult_t r = report("connect", plugin().connect(dev, static_cast<const uint8_t*>(handle),
                                                          trafficClass == NCCL_NET_TRAFFIC_CLASS_UNDEF
                                                              ? NetPlugin::kDefaultTrafficClass
                                                              : trafficClass,
                                                          &comm));
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

ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) {
  if (!sendComm || !request) return misuse("isend", "null sendComm or request");
  if (size > static_cast<size_t>(INT_MAX))
    return misuse("isend", "a size over 2 GiB - 1 (test() reports int sizes)");
  Request* out = nullptr;
  ncclResult_t r =
      report("isend", plugin().isend(*static_cast<SendComm*>(sendComm), data, size,
                                     static_cast<uint32_t>(tag), static_cast<MemoryRegion*>(mhandle), &out));
  *request = out;
  return r;
}

ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                   void** request) {
  if (!recvComm || !request || !data || !sizes || !tags) return misuse("irecv", "null argument");
  if (n != 1) return misuse("irecv", "grouped receives are not supported (the devices say maxRecvs = 1)");
  if (sizes[0] > static_cast<size_t>(INT_MAX))
    return misuse("irecv", "a size over 2 GiB - 1 (test() reports int sizes)");
  Request* out = nullptr;
  auto* region = mhandles ? static_cast<MemoryRegion*>(mhandles[0]) : nullptr;
  ncclResult_t r = report("irecv", plugin().irecv(*static_cast<RecvComm*>(recvComm), data[0], sizes[0],
                                                  static_cast<uint32_t>(tags[0]), region, &out));
  *request = out;
  return r;
}

// NCCL flushes only receives into GPU memory, which this plugin never accepts
// (regMr refuses it): host memory holds the data once test() said done, so
// there is nothing to wait for, which a null request tells NCCL.
ncclResult_t isendProfiled(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* /*phandle*/,
                           void** request) {
  return isend(sendComm, data, size, tag, mhandle, request);
}

ncclResult_t irecvProfiled(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                           void** /*phandles*/, void** request) {
  return irecv(recvComm, n, data, sizes, tags, mhandles, request);
}

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

}  // namespace braid::ncclnet::entry
