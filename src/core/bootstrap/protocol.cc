#include "core/bootstrap/protocol.h"

#include "core/bootstrap/host_id.h"
#include "core/bootstrap/wire.h"

namespace braid::bootstrap::protocol {

void encodeJoin(const JoinRequest& join, std::vector<uint8_t>* out) {
  wire::Writer w(out);
  w.u32(kJoinMagic);
  w.u16(kVersion);
  w.u16(static_cast<uint16_t>(join.hostId.size()));
  w.u32(static_cast<uint32_t>(join.rank));
  w.u32(static_cast<uint32_t>(join.nranks));
  w.u32(join.timeoutMs);
  w.u32(join.remainingMs);
  uint8_t addr[net::SocketAddress::kPackedBytes];
  join.listen.pack(addr);
  w.bytes(addr, sizeof(addr));
  w.bytes(join.hostId.data(), join.hostId.size());
}

Status decodeJoinHeader(const uint8_t* data, JoinRequest* join, size_t* hostIdBytes) {
  wire::Reader r(data, kJoinHeaderBytes);
  uint32_t magic = r.u32();
  uint16_t version = r.u16();
  uint16_t hostLen = r.u16();
  if (magic != kJoinMagic || version != kVersion)
    return remoteError("malformed join request (bad magic or version)");
  if (hostLen > kMaxHostIdBytes) return remoteError("join request with an oversized host id");
  join->rank = static_cast<int>(r.u32());
  join->nranks = static_cast<int>(r.u32());
  join->timeoutMs = r.u32();
  join->remainingMs = r.u32();
  uint8_t addr[net::SocketAddress::kPackedBytes];
  r.bytes(addr, sizeof(addr));
  Status st = net::SocketAddress::unpack(addr, &join->listen);
  if (!st.isOk()) return remoteError("join request with a bad listener address: " + st.message());
  *hostIdBytes = hostLen;
  return Status::ok();
}

void encodeReply(Code code, const std::vector<uint8_t>& payload, std::vector<uint8_t>* out) {
  wire::Writer w(out);
  w.u32(kReplyMagic);
  w.u32(static_cast<uint32_t>(code));
  w.u32(static_cast<uint32_t>(payload.size()));
  w.bytes(payload.data(), payload.size());
}

Status decodeReplyHeader(const uint8_t* data, Code* code, size_t* payloadBytes) {
  wire::Reader r(data, kReplyHeaderBytes);
  uint32_t magic = r.u32();
  uint32_t c = r.u32();
  uint32_t length = r.u32();
  if (magic != kReplyMagic || c > static_cast<uint32_t>(Code::kNotSupported))
    return remoteError("malformed reply from the rendezvous root");
  *code = static_cast<Code>(c);
  *payloadBytes = length;
  return Status::ok();
}

void encodeTable(const std::vector<PeerInfo>& peers, std::vector<uint8_t>* out) {
  wire::Writer w(out);
  for (const PeerInfo& p : peers) {
    uint8_t addr[net::SocketAddress::kPackedBytes];
    p.address.pack(addr);
    w.bytes(addr, sizeof(addr));
    w.u16(static_cast<uint16_t>(p.hostId.size()));
    w.bytes(p.hostId.data(), p.hostId.size());
  }
}

Status decodeTable(const std::vector<uint8_t>& payload, int nranks, std::vector<PeerInfo>* peers) {
  wire::Reader r(payload.data(), payload.size());
  std::vector<PeerInfo> out(static_cast<size_t>(nranks));
  for (int i = 0; i < nranks; ++i) {
    uint8_t addr[net::SocketAddress::kPackedBytes];
    r.bytes(addr, sizeof(addr));
    uint16_t hostLen = r.u16();
    out[i].hostId = r.str(hostLen);
    if (!r.ok()) break;
    Status st = net::SocketAddress::unpack(addr, &out[i].address);
    if (!st.isOk())
      return remoteError("rendezvous table holds a bad address for rank " + std::to_string(i));
  }
  if (!r.ok() || r.left() != 0)
    return remoteError("malformed rank table from the rendezvous root");
  *peers = std::move(out);
  return Status::ok();
}

}  // namespace braid::bootstrap::protocol
