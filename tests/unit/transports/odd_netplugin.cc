// libbraid_odd_netplugin.so: an NCCL net plugin whose tables a loader must
// tell apart. Its ncclNetPlugin_v11 leaves finalize null (NCCL 2.28 would
// call it unchecked); its ncclNetPlugin_v9 is whole; it has no v10 or v8.
// Nothing here is ever called: NetApi::find only looks at the tables.
#include "transports/netplugin/nccl_net_abi.h"

namespace {

ncclResult_t refuse() { return ncclInternalError; }
template <typename... Args>
ncclResult_t stub(Args...) {
  return refuse();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {
    "odd",   stub, stub, stub, stub, stub, stub, stub,    stub,    stub,
    stub,    stub, stub, stub, stub, stub, stub, nullptr, nullptr, nullptr,
    nullptr,  // finalize
    nullptr,
};

extern "C" __attribute__((visibility("default"))) const ncclNet_v9_t ncclNetPlugin_v9 = {
    "odd", stub, stub, stub, stub, stub, stub, stub,    stub,    stub,
    stub,  stub, stub, stub, stub, stub, stub, nullptr, nullptr, nullptr,
};
