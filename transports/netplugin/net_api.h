// NetApi: one NCCL net plugin table of any version braid loads (v8 to v11),
// called through one interface in the newest version's terms (sizes as
// size_t, properties as v11's), so that nothing above it knows which table
// the plugin exported. What an older table lacks is filled in as NCCL fills
// it; what a newer one wants (a context, a comm config, profiler handles) is
// given as NCCL gives it with no profiler plugin loaded.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "base/status.h"
#include "transports/netplugin/nccl_net_abi.h"

namespace braid::netplugin {

class NetApi {
 public:
  static constexpr int kOldestVersion = 8;
  static constexpr int kNewestVersion = 11;

  // The table ncclNetPlugin_v<version> of the opened library `lib` (named
  // `file` in messages); version 0 takes the newest it exports, as NCCL
  // does. NotSupported when there is none, or when it leaves null an entry
  // that braid or NCCL calls.
  static Status find(void* lib, const std::string& file, int64_t version, NetApi* out);

  int version() const;
  const char* name() const;

  // v11 makes a context here (one per NetApi: braid opens a plugin once per
  // process, as NCCL 2.27 and earlier did); the others are told only the logger.
  ncclResult_t init(ncclDebugLogger_t logger);
  ncclResult_t devices(int* ndev) const;
  // The fields v8 lacks come back as NCCL gives them to a v8 plugin: one
  // physical device, 1 GiB point-to-point transfers, one request at a time.
  ncclResult_t getProperties(int dev, ncclNetProperties_v11_t* props) const;
  ncclResult_t listen(int dev, void* handle, void** listenComm) const;
  // No device offload: the device handle NCCL may ask for is always null.
  ncclResult_t connect(int dev, void* handle, void** sendComm) const;
  ncclResult_t accept(void* listenComm, void** recvComm) const;
  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) const;
  ncclResult_t deregMr(void* comm, void* mhandle) const;
  // A v8 table takes int sizes: larger ones are refused with
  // ncclInvalidArgument before the plugin sees them.
  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) const;
  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** request) const;
  ncclResult_t test(void* request, int* done, int* sizes) const;
  ncclResult_t closeSend(void* sendComm) const;
  ncclResult_t closeRecv(void* recvComm) const;
  ncclResult_t closeListen(void* listenComm) const;
  // v11 only: ends the context init made (the others have none: ncclSuccess).
  ncclResult_t finalize();

 private:
  std::variant<const ncclNet_v8_t*, const ncclNet_v9_t*, const ncclNet_v10_t*, const ncclNet_v11_t*> table_;
  void* context_ = nullptr;  // v11's, from init
};

}  // namespace braid::netplugin
