// libbraid_reshaped_netplugin.so: braid's own NCCL net plugin seen through a
// plugin that describes its devices differently, as other vendors' plugins
// do. Its ncclNetPlugin_v11 is braid's plugin's table (loaded when this
// library is) with these changes, read from the environment at init:
//
//   BRAID_TEST_PLUGIN_MAX_P2P_BYTES=N   every device reports maxP2pBytes N,
//       and isend / irecv of more than N bytes fail: a loader that cuts
//       transfers at a size its peer did not expect is caught.
//   BRAID_TEST_PLUGIN_GPU_DEVICE_FIRST=1   a device that takes only GPU
//       memory comes first; the real devices follow it, numbered from 1, and
//       listen / connect on device 0 fail: a loader that skips device 0 must
//       still pass the plugin its own numbers.
//   BRAID_TEST_PLUGIN_STAGED_CONNECT=1   connect keeps its progress in the
//       handle's last byte, as NCCL's IB plugin keeps its stage in the
//       handle: the first call gives no comm and marks the handle, a later
//       one connects and leaves its mark. A loader that hands each call a
//       fresh copy of the handle never connects; one that proves anything
//       over the marked bytes is refused by the listener.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "transports/netplugin/nccl_net_abi.h"

extern "C" __attribute__((visibility("default"))) ncclNet_v11_t ncclNetPlugin_v11;

namespace {

const ncclNet_v11_t* braidTable = nullptr;
size_t maxP2pBytes = 0;  // 0: braid's own
int firstRealDevice = 0;
bool stagedConnect = false;
// Where a staged connect keeps its stage (braid's handles leave it zero).
constexpr size_t kStageByte = NCCL_NET_HANDLE_MAXSIZE - 1;
enum Stage : uint8_t { kFresh = 0, kStarted = 1, kConnected = 2 };

ncclResult_t init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t logger,
                  ncclProfilerCallback_t profiler) {
  const char* max = std::getenv("BRAID_TEST_PLUGIN_MAX_P2P_BYTES");
  maxP2pBytes = max ? std::strtoull(max, nullptr, 10) : 0;
  const char* gpuFirst = std::getenv("BRAID_TEST_PLUGIN_GPU_DEVICE_FIRST");
  firstRealDevice = gpuFirst && gpuFirst[0] == '1' ? 1 : 0;
  const char* staged = std::getenv("BRAID_TEST_PLUGIN_STAGED_CONNECT");
  stagedConnect = staged && staged[0] == '1';
  return braidTable->init(ctx, commId, config, logger, profiler);
}

ncclResult_t devices(int* ndev) {
  ncclResult_t r = braidTable->devices(ndev);
  *ndev += firstRealDevice;
  return r;
}

ncclResult_t getProperties(int dev, ncclNetProperties_v11_t* props) {
  if (dev < firstRealDevice) {
    ncclResult_t r = braidTable->getProperties(0, props);
    props->name = const_cast<char*>("gpu-only");
    props->ptrSupport = NCCL_PTR_CUDA;
    return r;
  }
  ncclResult_t r = braidTable->getProperties(dev - firstRealDevice, props);
  if (maxP2pBytes) props->maxP2pBytes = maxP2pBytes;
  return r;
}

ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) {
  if (dev < firstRealDevice) return ncclInvalidArgument;
  return braidTable->listen(ctx, dev - firstRealDevice, handle, listenComm);
}

ncclResult_t connect(void* ctx, int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v11_t** devComm) {
  if (dev < firstRealDevice) return ncclInvalidArgument;
  if (!stagedConnect) return braidTable->connect(ctx, dev - firstRealDevice, handle, sendComm, devComm);
  auto* stage = static_cast<uint8_t*>(handle) + kStageByte;
  *sendComm = nullptr;
  if (*stage == kFresh) {
    *stage = kStarted;
    return ncclSuccess;
  }
  if (*stage != kStarted) return ncclInvalidUsage;
  uint8_t listeners[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(listeners, handle, sizeof(listeners));
  listeners[kStageByte] = kFresh;
  ncclResult_t r = braidTable->connect(ctx, dev - firstRealDevice, listeners, sendComm, devComm);
  if (r == ncclSuccess && *sendComm) *stage = kConnected;
  return r;
}

bool tooLarge(size_t size) {
  if (maxP2pBytes == 0 || size <= maxP2pBytes) return false;
  std::fprintf(stderr, "reshaped netplugin: a message of %zu bytes, over maxP2pBytes %zu\n", size,
               maxP2pBytes);
  return true;
}

ncclResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                   void** request) {
  if (tooLarge(size)) return ncclInvalidUsage;
  return braidTable->isend(comm, data, size, tag, mhandle, phandle, request);
}

ncclResult_t irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles, void** phandles,
                   void** request) {
  for (int i = 0; i < n; ++i)
    if (tooLarge(sizes[i])) return ncclInvalidUsage;
  return braidTable->irecv(comm, n, data, sizes, tags, mhandles, phandles, request);
}

// Runs when the loader dlopens this library, before it looks the table up.
__attribute__((constructor)) void loadBraidPlugin() {
  void* braid = dlopen(BRAID_NCCL_NET_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (braid) braidTable = static_cast<const ncclNet_v11_t*>(dlsym(braid, "ncclNetPlugin_v11"));
  if (!braidTable) {
    std::fprintf(stderr, "reshaped netplugin: cannot load %s\n", BRAID_NCCL_NET_PLUGIN_PATH);
    return;  // the table stays all null: a loader refuses it
  }
  ncclNetPlugin_v11 = *braidTable;
  ncclNetPlugin_v11.name = "reshaped";
  ncclNetPlugin_v11.init = init;
  ncclNetPlugin_v11.devices = devices;
  ncclNetPlugin_v11.getProperties = getProperties;
  ncclNetPlugin_v11.listen = listen;
  ncclNetPlugin_v11.connect = connect;
  ncclNetPlugin_v11.isend = isend;
  ncclNetPlugin_v11.irecv = irecv;
}

}  // namespace

ncclNet_v11_t ncclNetPlugin_v11 = {};
