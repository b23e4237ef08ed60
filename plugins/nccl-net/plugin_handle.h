// The handle NCCL carries from a listen() to the peer's connect(): which braid
// transport made it, the listening process's secret, and that transport's own
// handle.
//
// NCCL has no notion of a job secret, but its bootstrap already delivers this
// handle only to the rank that should connect. Putting a per-process random
// secret in it lets braid's transports keep their promise (every connection
// proves the secret before data flows) with nothing for the user to set: a
// stranger who did not see the handle cannot connect.
//
// Layout (NCCL_NET_HANDLE_MAXSIZE = 128 bytes):
//   [0, 4)    magic "BNNH" (little-endian u32)
//   [4]       version
//   [5]       transport (TransportKind)
//   [8, 24)   secret of the listening process
//   [24, 128) the transport's handle, whose remaining bytes must be zero
#pragma once

#include <cstdint>

#include "base/status.h"
#include "transports/transport.h"

namespace braid::ncclnet {

enum class TransportKind : uint8_t { kTcp = 1, kUcx = 2 };

// "tcp" / "ucx" (BRAID_NCCL_NET's spelling); NotSupported for anything else.
Status transportKindFromName(const std::string& name, TransportKind* kind);
const char* transportKindName(TransportKind kind);

constexpr size_t kPluginHandleBytes = 128;
constexpr size_t kTransportHandleOffset = 24;
constexpr size_t kTransportHandleRoom = kPluginHandleBytes - kTransportHandleOffset;

struct PluginHandle {
  TransportKind kind = TransportKind::kTcp;
  transport::Secret secret{};
  transport::Handle transportHandle;
};

// Fails (InternalError) when the transport's handle does not fit in the room.
Status packPluginHandle(const PluginHandle& handle, uint8_t out[kPluginHandleBytes]);
// Fails (InvalidUsage) on bytes that are not a braid handle of this version,
// saying what to check: the same plugin and version on every rank.
Status unpackPluginHandle(const uint8_t in[kPluginHandleBytes], PluginHandle* out);

}  // namespace braid::ncclnet
