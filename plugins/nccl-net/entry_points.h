// NCCL's net plugin calls in the newest API's terms (sizes as size_t,
// properties as v11's), checked and handed to NetPlugin, its Status turned
// into an ncclResult_t and its message into a WARN line in NCCL's log
// (NCCL_DEBUG=WARN shows it next to NCCL's own). The export_vN.cc files lay
// these out as the table of one API version each, converting what differs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transports/netplugin/nccl_net_abi.h"

namespace braid::ncclnet::entry {

ncclResult_t init(ncclDebugLogger_t logFunction);
ncclResult_t devices(int* ndev);
ncclResult_t getProperties(int dev, ncclNetProperties_v11_t* props);
// The same in v9's layout, which v10's shares: v11's without its last member.
ncclResult_t getPropertiesV9(int dev, ncclNetProperties_v9_t* props);
ncclResult_t listen(int dev, void* handle, void** listenComm);
// No device offload: the devices say NCCL_NET_DEVICE_HOST, so NCCL asks for
// no device handle (v8 to v11 share its type).
ncclResult_t connect(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v8_t** sendDevComm);
// v11's: with the communicator's traffic class (NetPlugin::connect).
ncclResult_t connectWithTrafficClass(int dev, void* handle, void** sendComm,
                                     ncclNetDeviceHandle_v8_t** sendDevComm, int trafficClass);
ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v8_t** recvDevComm);
ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                         void** mhandle);
ncclResult_t deregMr(void* comm, void* mhandle);
ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                   void** request);
// v10 on: the same with the handles of NCCL's profiler, which braid's plugin
// records no events for.
ncclResult_t isendProfiled(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                           void** request);
ncclResult_t irecvProfiled(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                           void** phandles, void** request);
ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
ncclResult_t test(void* request, int* done, int* sizes);
ncclResult_t closeSend(void* sendComm);
ncclResult_t closeRecv(void* recvComm);
ncclResult_t closeListen(void* listenComm);

// A refusal of a call NCCL should not have made, logged as the others are.
ncclResult_t misuse(const char* call, const char* what);

// v11's per-communicator contexts: what init made, until finalize ends it.
// A context NCCL did not get from init (or already finalized) is refused;
// *trafficClass (when asked) gets the one init was given.
ncclResult_t openContext(uint64_t commId, const ncclNetCommConfig_v11_t* config, void** ctx);
ncclResult_t checkContext(const char* call, void* ctx, int* trafficClass = nullptr);
ncclResult_t closeContext(void* ctx);

}  // namespace braid::ncclnet::entry
