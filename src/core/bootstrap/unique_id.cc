#include "core/bootstrap/unique_id.h"

#include <cstring>
#include <string>

#include "core/bootstrap/wire.h"
#include "transports/net/auth.h"

namespace braid::bootstrap {
namespace {

constexpr size_t kCheckAt = 56;
// A fixed key: the check detects damage, not forgery (forging needs the secret
// anyway to get past the handshake).
constexpr transport::Secret kCheckKey = {'b', 'r', 'a', 'i', 'd', '-', 'u', 'n',
                                         'i', 'q', 'u', 'e', '-', 'i', 'd', '1'};

uint64_t checkOf(const uint8_t bytes[UniqueId::kBytes]) {
  uint8_t copy[UniqueId::kBytes];
  std::memcpy(copy, bytes, UniqueId::kBytes);
  std::memset(copy + kCheckAt, 0, 8);
  return net::sipHash24(kCheckKey, copy, sizeof(copy));
}

}  // namespace

void UniqueId::pack(uint8_t out[kBytes]) const {
  std::vector<uint8_t> buf;
  wire::Writer w(&buf);
  w.u32(kMagic);
  w.u16(kVersion);
  w.u16(0);
  uint8_t addr[net::SocketAddress::kPackedBytes];
  root.pack(addr);
  w.bytes(addr, sizeof(addr));
  w.bytes(secret.data(), secret.size());
  buf.resize(kBytes, 0);
  uint64_t check = checkOf(buf.data());
  std::vector<uint8_t> tail;
  wire::Writer(&tail).u64(check);
  std::memcpy(buf.data() + kCheckAt, tail.data(), 8);
  std::memcpy(out, buf.data(), kBytes);
}

Status UniqueId::unpack(const uint8_t in[kBytes], UniqueId* out) {
  wire::Reader r(in, kBytes);
  uint32_t magic = r.u32();
  uint16_t version = r.u16();
  uint16_t reserved = r.u16();
  if (magic != kMagic)
    return invalidArgument(
        "not a braid unique id (bad magic): pass the braidUniqueId filled by braidGetUniqueId, "
        "all 128 bytes of it");
  if (version != kVersion)
    return invalidArgument("braid unique id has version " + std::to_string(version) +
                           " but this library understands version " + std::to_string(kVersion) +
                           ": all ranks must use the same braid version");
  uint8_t addr[net::SocketAddress::kPackedBytes];
  r.bytes(addr, sizeof(addr));
  UniqueId id;
  r.bytes(id.secret.data(), id.secret.size());
  uint64_t check = r.u64();
  if (reserved != 0 || check != checkOf(in))
    return invalidArgument(
        "braid unique id is corrupted (checksum mismatch): it was changed or only partly "
        "copied on its way to this rank");
  Status st = net::SocketAddress::unpack(addr, &id.root);
  if (!st.isOk()) return st.prefix("braid unique id holds an unusable root address");
  *out = id;
  return Status::ok();
}

}  // namespace braid::bootstrap
