#include "transports/netplugin/net_api.h"

#include <dlfcn.h>

#include <climits>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace braid::netplugin {
namespace {

// NCCL's callback when no profiler plugin is loaded records nothing; a plugin
// may call it unconditionally, so it is never null.
ncclResult_t noProfiler(void** eHandle, int, void*, int64_t, void*) {
  if (eHandle) *eHandle = nullptr;
  return ncclSuccess;
}

template <typename Table>
bool entriesBraidCalls(const Table& t) {
  bool complete = t.name && t.init && t.devices && t.getProperties && t.listen && t.connect && t.accept &&
                  t.regMr && t.deregMr && t.isend && t.irecv && t.test && t.closeSend && t.closeRecv &&
                  t.closeListen;
  if constexpr (std::is_same_v<Table, ncclNet_v11_t>) complete = complete && t.finalize;
  return complete;
}

// Whether the table pointer a visitor was handed is a `Table`.
template <typename Pointer, typename Table>
constexpr bool isTable = std::is_same_v<std::remove_cv_t<std::remove_pointer_t<Pointer>>, Table>;

}  // namespace

Status NetApi::find(void* lib, const std::string& file, int64_t version, NetApi* out) {
  if (version != 0 && (version < kOldestVersion || version > kNewestVersion))
    return invalidArgument("netplugin: NCCL net API v" + std::to_string(version) +
                           " is not one braid loads (v" + std::to_string(kOldestVersion) + " to v" +
                           std::to_string(kNewestVersion) + ")");
  const int newest = version ? static_cast<int>(version) : kNewestVersion;
  const int oldest = version ? static_cast<int>(version) : kOldestVersion;
  for (int v = newest; v >= oldest; --v) {
    const std::string symbol = "ncclNetPlugin_v" + std::to_string(v);
    const void* table = dlsym(lib, symbol.c_str());
    if (!table) continue;
    NetApi found;
    switch (v) {
      case 8:
        found.table_ = static_cast<const ncclNet_v8_t*>(table);
        break;
      case 9:
        found.table_ = static_cast<const ncclNet_v9_t*>(table);
        break;
      case 10:
        found.table_ = static_cast<const ncclNet_v10_t*>(table);
        break;
      default:
        found.table_ = static_cast<const ncclNet_v11_t*>(table);
        break;
    }
    if (!std::visit([](auto* t) { return entriesBraidCalls(*t); }, found.table_))
      return notSupported("netplugin: " + file + "'s " + symbol +
                          " leaves an entry braid calls null (BRAID_NET_PLUGIN_VERSION picks another of its "
                          "tables)");
    *out = found;
    return Status::ok();
  }
  if (version)
    return notSupported("netplugin: " + file + " has no ncclNetPlugin_v" + std::to_string(version) +
                        " (BRAID_NET_PLUGIN_VERSION asks for it)");
  return notSupported("netplugin: " + file + " has no ncclNetPlugin_v" + std::to_string(kNewestVersion) +
                      " to v" + std::to_string(kOldestVersion) + " (the NCCL net API versions braid loads)");
}

int NetApi::version() const { return kOldestVersion + static_cast<int>(table_.index()); }

const char* NetApi::name() const {
  return std::visit([](auto* t) { return t->name; }, table_);
}

ncclResult_t NetApi::init(ncclDebugLogger_t logger) {
  return std::visit(
      [&](auto* t) -> ncclResult_t {
        using T = decltype(t);
        if constexpr (isTable<T, ncclNet_v11_t>) {
          // One context for the process: braid's comms all share the plugin's
          // connections, as a single NCCL communicator's would. commId 0 is
          // no NCCL communicator's hash.
          ncclNetCommConfig_v11_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
          return t->init(&context_, 0, &config, logger, noProfiler);
        } else if constexpr (isTable<T, ncclNet_v10_t>) {
          return t->init(logger, noProfiler);
        } else {
          return t->init(logger);
        }
      },
      table_);
}

ncclResult_t NetApi::devices(int* ndev) const {
  return std::visit([&](auto* t) { return t->devices(ndev); }, table_);
}

ncclResult_t NetApi::getProperties(int dev, ncclNetProperties_v11_t* props) const {
  *props = ncclNetProperties_v11_t{};
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = NCCL_NET_DEFAULT_MAX_P2P_BYTES;
  props->maxCollBytes = NCCL_NET_DEFAULT_MAX_COLL_BYTES;
  props->maxMultiRequestSize = 1;
  return std::visit(
      [&](auto* t) -> ncclResult_t {
        using T = decltype(t);
        if constexpr (isTable<T, ncclNet_v11_t>) {
          return t->getProperties(dev, props);
        } else if constexpr (isTable<T, ncclNet_v8_t>) {
          ncclNetProperties_v8_t p{};
          ncclResult_t r = t->getProperties(dev, &p);
          props->name = p.name;
          props->pciPath = p.pciPath;
          props->guid = p.guid;
          props->ptrSupport = p.ptrSupport;
          props->regIsGlobal = p.regIsGlobal;
          props->speed = p.speed;
          props->port = p.port;
          props->latency = p.latency;
          props->maxComms = p.maxComms;
          props->maxRecvs = p.maxRecvs;
          props->netDeviceType = p.netDeviceType;
          props->netDeviceVersion = p.netDeviceVersion;
          return r;
        } else {  // v9 and v10 share a layout, v11's without its last member
          ncclNetProperties_v9_t p{};
          ncclResult_t r = t->getProperties(dev, &p);
          static_assert(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize) ==
                        sizeof(ncclNetProperties_v9_t));
          const int multi = props->maxMultiRequestSize;
          std::memcpy(props, &p, sizeof(p));
          props->maxMultiRequestSize = multi;
          return r;
        }
      },
      table_);
}

ncclResult_t NetApi::listen(int dev, void* handle, void** listenComm) const {
  return std::visit(
      [&](auto* t) -> ncclResult_t {
        if constexpr (isTable<decltype(t), ncclNet_v11_t>)
          return t->listen(context_, dev, handle, listenComm);
        else
          return t->listen(dev, handle, listenComm);
      },
      table_);
}

ncclResult_t NetApi::connect(int dev, void* handle, void** sendComm) const {
  return std::visit(
      [&](auto* t) -> ncclResult_t {
        using T = decltype(t);
        if constexpr (isTable<T, ncclNet_v11_t>) {
          return t->connect(context_, dev, handle, sendComm, nullptr);
        } else if constexpr (isTable<T, ncclNet_v10_t>) {
          ncclNetCommConfig_v10_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
          return t->connect(dev, &config, handle, sendComm, nullptr);
        } else {
          return t->connect(dev, handle, sendComm, nullptr);
        }
      },
      table_);
}

ncclResult_t NetApi::accept(void* listenComm, void** recvComm) const {
  return std::visit([&](auto* t) { return t->accept(listenComm, recvComm, nullptr); }, table_);
}

ncclResult_t NetApi::regMr(void* comm, void* data, size_t size, int type, void** mhandle) const {
  return std::visit([&](auto* t) { return t->regMr(comm, data, size, type, mhandle); }, table_);
}

ncclResult_t NetApi::deregMr(void* comm, void* mhandle) const {
  return std::visit([&](auto* t) { return t->deregMr(comm, mhandle); }, table_);
}

ncclResult_t NetApi::isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                           void** request) const {
  return std::visit(
      [&](auto* t) -> ncclResult_t {
        using T = decltype(t);
        if constexpr (isTable<T, ncclNet_v8_t>) {
          if (size > static_cast<size_t>(INT_MAX)) return ncclInvalidArgument;
          return t->isend(sendComm, data, static_cast<int>(size), tag, mhandle, request);
        } else if constexpr (isTable<T, ncclNet_v9_t>) {
          return t->isend(sendComm, data, size, tag, mhandle, request);
        } else {
          return t->isend(sendComm, data, size, tag, mhandle, nullptr, request);
        }
      },
      table_);
}

ncclResult_t NetApi::irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                           void** request) const {
  if (n < 0 || n > NCCL_NET_MAX_REQUESTS) return ncclInvalidArgument;
  return std::visit(
      [&](auto* t) -> ncclResult_t {
        using T = decltype(t);
        if constexpr (isTable<T, ncclNet_v8_t>) {
          int narrow[NCCL_NET_MAX_REQUESTS];
          for (int i = 0; i < n; ++i) {
            if (sizes[i] > static_cast<size_t>(INT_MAX)) return ncclInvalidArgument;
            narrow[i] = static_cast<int>(sizes[i]);
          }
          return t->irecv(recvComm, n, data, narrow, tags, mhandles, request);
        } else if constexpr (isTable<T, ncclNet_v9_t>) {
          return t->irecv(recvComm, n, data, sizes, tags, mhandles, request);
        } else {
          void* phandles[NCCL_NET_MAX_REQUESTS] = {};
          return t->irecv(recvComm, n, data, sizes, tags, mhandles, phandles, request);
        }
      },
      table_);
}

ncclResult_t NetApi::test(void* request, int* done, int* sizes) const {
  return std::visit([&](auto* t) { return t->test(request, done, sizes); }, table_);
}

ncclResult_t NetApi::closeSend(void* sendComm) const {
  return std::visit([&](auto* t) { return t->closeSend(sendComm); }, table_);
}

ncclResult_t NetApi::closeRecv(void* recvComm) const {
  return std::visit([&](auto* t) { return t->closeRecv(recvComm); }, table_);
}

ncclResult_t NetApi::closeListen(void* listenComm) const {
  return std::visit([&](auto* t) { return t->closeListen(listenComm); }, table_);
}

ncclResult_t NetApi::finalize() {
  return std::visit(
      [&](auto* t) -> ncclResult_t {
        if constexpr (isTable<decltype(t), ncclNet_v11_t>) {
          void* context = context_;
          context_ = nullptr;
          return t->finalize(context);
        } else {
          return ncclSuccess;
        }
      },
      table_);
}

}  // namespace braid::netplugin
