#include "plugin_handle.h"

#include <cstring>
#include <string>

namespace braid::ncclnet {
namespace {

constexpr uint32_t kMagic = 0x484e4e42;  // "BNNH": braid nccl-net handle
constexpr uint8_t kVersion = 1;
constexpr size_t kSecretOffset = 8;
static_assert(kSecretOffset + transport::kSecretBytes <= kTransportHandleOffset);

}  // namespace

Status transportKindFromName(const std::string& name, TransportKind* kind) {
  if (name == "tcp")
    *kind = TransportKind::kTcp;
  else if (name == "ucx")
    *kind = TransportKind::kUcx;
  else
    return notSupported("BRAID_NCCL_NET='" + name + "': the NCCL net plugin runs over tcp or ucx");
  return Status::ok();
}

const char* transportKindName(TransportKind kind) { return kind == TransportKind::kUcx ? "ucx" : "tcp"; }

Status packPluginHandle(const PluginHandle& handle, uint8_t out[kPluginHandleBytes]) {
  const auto& inner = handle.transportHandle.bytes;
  for (size_t i = kTransportHandleRoom; i < inner.size(); ++i)
    if (inner[i] != 0)
      return internalError(std::string("nccl-net: the ") + transportKindName(handle.kind) +
                           " handle uses byte " + std::to_string(i) + ", past the " +
                           std::to_string(kTransportHandleRoom) + " bytes a plugin handle has room for");
  std::memset(out, 0, kPluginHandleBytes);
  std::memcpy(out, &kMagic, sizeof(kMagic));
  out[4] = kVersion;
  out[5] = static_cast<uint8_t>(handle.kind);
  std::memcpy(out + kSecretOffset, handle.secret.data(), handle.secret.size());
  std::memcpy(out + kTransportHandleOffset, inner.data(), kTransportHandleRoom);
  return Status::ok();
}

Status unpackPluginHandle(const uint8_t in[kPluginHandleBytes], PluginHandle* out) {
  uint32_t magic = 0;
  std::memcpy(&magic, in, sizeof(magic));
  if (magic != kMagic || in[4] != kVersion)
    return invalidUsage(
        "nccl-net: the peer's handle was not made by this version of braid's NCCL net plugin "
        "(NCCL_NET_PLUGIN and the braid version must be the same on every rank)");
  uint8_t kind = in[5];
  if (kind != static_cast<uint8_t>(TransportKind::kTcp) && kind != static_cast<uint8_t>(TransportKind::kUcx))
    return invalidUsage("nccl-net: the peer's handle names an unknown transport (" + std::to_string(kind) +
                        ")");
  out->kind = static_cast<TransportKind>(kind);
  std::memcpy(out->secret.data(), in + kSecretOffset, out->secret.size());
  out->transportHandle = transport::Handle{};
  std::memcpy(out->transportHandle.bytes.data(), in + kTransportHandleOffset, kTransportHandleRoom);
  return Status::ok();
}

}  // namespace braid::ncclnet
