// The rendezvous protocol's decoders (core/bootstrap/protocol.h) on arbitrary
// bytes, as the root reads a join request and a rank reads the root's reply.
// Input: a selector byte, then
//   0: join     the fixed header (zero-padded), then the host id bytes
//   1: reply    the reply header (zero-padded), then the payload
//   2: table    nranks (one byte), then the table payload
// Properties: no decoder crashes or reads out of bounds (the decoders take raw
// pointers to fixed-size headers: the buffers here are exactly that size, so
// ASan sees any overread); the host id length a join may announce is bounded;
// an accepted join or table encodes back to what was decoded.
#include <algorithm>
#include <cstring>

#include "core/bootstrap/host_id.h"
#include "core/bootstrap/protocol.h"
#include "fuzz_input.h"
#include "fuzz_target.h"

namespace proto = braid::bootstrap::protocol;
using braid::fuzz::FuzzInput;

namespace {

bool sameAddress(const braid::net::SocketAddress& a, const braid::net::SocketAddress& b) {
  return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
}

void fuzzJoin(FuzzInput& in) {
  std::vector<uint8_t> header = in.padded(proto::kJoinHeaderBytes);
  proto::JoinRequest join;
  size_t hostIdBytes = 0;
  if (!proto::decodeJoinHeader(header.data(), &join, &hostIdBytes).isOk()) return;
  // The root sizes its receive buffer from this: it must stay small.
  BRAID_FUZZ_CHECK(hostIdBytes <= braid::bootstrap::kMaxHostIdBytes, "announced host id is bounded");
  std::vector<uint8_t> host = in.take(hostIdBytes);
  join.hostId.assign(host.begin(), host.end());

  std::vector<uint8_t> encoded;
  proto::encodeJoin(join, &encoded);
  BRAID_FUZZ_CHECK(encoded.size() == proto::kJoinHeaderBytes + join.hostId.size(), "join size");
  proto::JoinRequest back;
  size_t backBytes = 0;
  BRAID_FUZZ_CHECK(proto::decodeJoinHeader(encoded.data(), &back, &backBytes).isOk(), "re-encoded join decodes");
  BRAID_FUZZ_CHECK(back.rank == join.rank && back.nranks == join.nranks && back.timeoutMs == join.timeoutMs &&
                       back.remainingMs == join.remainingMs && backBytes == join.hostId.size() &&
                       sameAddress(back.listen, join.listen),
                   "join survives encode/decode");
}

void fuzzReply(FuzzInput& in) {
  std::vector<uint8_t> header = in.padded(proto::kReplyHeaderBytes);
  braid::Code code = braid::Code::kOk;
  size_t payloadBytes = 0;
  if (!proto::decodeReplyHeader(header.data(), &code, &payloadBytes).isOk()) return;
  BRAID_FUZZ_CHECK(static_cast<uint32_t>(code) <= static_cast<uint32_t>(braid::Code::kNotSupported),
                   "reply code is a known braid::Code");
  std::vector<uint8_t> payload = in.take(payloadBytes);
  // What the rank does with an error reply: the payload becomes the message.
  if (code != braid::Code::kOk) (void)braid::Status(code, std::string(payload.begin(), payload.end()));
}

void fuzzTable(FuzzInput& in) {
  int nranks = in.u8();
  std::vector<uint8_t> payload = in.rest();
  std::vector<proto::PeerInfo> peers;
  if (!proto::decodeTable(payload, nranks, &peers).isOk()) return;
  BRAID_FUZZ_CHECK(peers.size() == static_cast<size_t>(nranks), "one table entry per rank");
  std::vector<uint8_t> encoded;
  proto::encodeTable(peers, &encoded);
  BRAID_FUZZ_CHECK(encoded == payload, "encode(decode(table)) == table");
}

}  // namespace

BRAID_FUZZ_TARGET(bootstrap_protocol) {
  FuzzInput in(data, size);
  switch (in.u8() % 3) {
    case 0: fuzzJoin(in); break;
    case 1: fuzzReply(in); break;
    default: fuzzTable(in); break;
  }
  return 0;
}
