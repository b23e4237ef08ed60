// ncclNetPlugin_v9: sizes of isend / irecv as size_t, and the properties'
// transfer limits and virtual-device fields. makeVDevice is null: NCCL then
// fuses no NICs into virtual ones.
#include "entry_points.h"

namespace e = braid::ncclnet::entry;

extern "C" __attribute__((visibility("default"))) const ncclNet_v9_t ncclNetPlugin_v9 = {
    // One entry a line, in the order of NCCL's header.
    // clang-format off
    "braid",
    e::init,
    e::devices,
    e::getPropertiesV9,
    e::listen,
    e::connect,
    e::accept,
    e::regMr,
    e::regMrDmaBuf,
    e::deregMr,
    e::isend,
    e::irecv,
    e::iflush,
    e::test,
    e::closeSend,
    e::closeRecv,
    e::closeListen,
    // clang-format on
    nullptr,  // getDeviceMr: no device offload (see export_v8.cc)
    nullptr,  // irecvConsumed
    nullptr,  // makeVDevice
};
