// The seed generator (seeds.h). Deterministic: fixed addresses, secrets and
// nonces, so the checked-in corpus can be compared byte for byte.
#include "seeds.h"

#include <cstring>

#include "core/bootstrap/protocol.h"
#include "core/control_frame.h"
#include "core/bootstrap/unique_id.h"
#include "transports/net/auth.h"
#include "transports/tcp/frame.h"

namespace braid::fuzz {
namespace {

using Bytes = std::vector<uint8_t>;
namespace proto = bootstrap::protocol;

net::SocketAddress address(const char* hostPort, uint32_t scope = 0) {
  net::SocketAddress a;
  (void)net::parseAddress(hostPort, &a);  // numeric: no resolver involved
  if (scope && a.family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_scope_id = scope;
  return a;
}

Bytes packed(const net::SocketAddress& a) {
  Bytes b(net::SocketAddress::kPackedBytes);
  a.pack(b.data());
  return b;
}

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void le(Bytes* b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void uniqueIdSeeds(std::vector<Seed>* out) {
  auto id = [](const char* root) {
    bootstrap::UniqueId u;
    u.root = address(root);
    for (size_t i = 0; i < u.secret.size(); ++i) u.secret[i] = static_cast<uint8_t>(0xa0 + i);
    Bytes b(bootstrap::UniqueId::kBytes);
    u.pack(b.data());
    return b;
  };
  Bytes v4 = id("10.1.2.3:29500"), v6 = id("[fd00::1]:1234");
  out->push_back({"unique_id", "valid_v4", cat({0}, v4)});
  out->push_back({"unique_id", "valid_v6", cat({0}, v6)});
  Bytes bad = v4;
  bad[0] ^= 1;
  out->push_back({"unique_id", "bad_magic", cat({0}, bad)});
  bad = v4, bad[4] = 2;
  out->push_back({"unique_id", "bad_version_repaired", cat({1}, bad)});
  bad = v4, bad[100] = 0xff;  // damage in the reserved tail: the check catches it
  out->push_back({"unique_id", "damaged_tail", cat({0}, bad)});
  bad = v4, bad[8] = 9;  // unknown address family behind a valid check
  out->push_back({"unique_id", "bad_family_repaired", cat({1}, bad)});
  out->push_back({"unique_id", "truncated", cat({0}, Bytes(v4.begin(), v4.begin() + 40))});
  out->push_back({"unique_id", "empty", {}});
}

void socketAddressSeeds(std::vector<Seed>* out) {
  Bytes v4 = packed(address("127.0.0.1:80")), v6 = packed(address("[fe80::1]:65535", 3));
  out->push_back({"socket_address", "valid_v4", v4});
  out->push_back({"socket_address", "valid_v6_scope", v6});
  Bytes bad = v4;
  bad[0] = 5;
  out->push_back({"socket_address", "unknown_family", bad});
  bad = v4, bad[10] = 1;
  out->push_back({"socket_address", "v4_padding", bad});
  bad = v6, bad[31] = 1;
  out->push_back({"socket_address", "tail_garbage", bad});
  out->push_back({"socket_address", "empty", {}});
}

void protocolSeeds(std::vector<Seed>* out) {
  proto::JoinRequest join;
  join.rank = 3, join.nranks = 8, join.timeoutMs = 300000, join.remainingMs = 299000;
  join.listen = address("10.0.0.7:40000");
  join.hostId = "node7:6f1e0c2a-boot";
  Bytes j;
  proto::encodeJoin(join, &j);
  out->push_back({"bootstrap_protocol", "join_valid", cat({0}, j)});
  Bytes bad = j;
  bad[6] = 0, bad[7] = 1;  // host id length 256 > kMaxHostIdBytes
  out->push_back({"bootstrap_protocol", "join_oversized_host", cat({0}, bad)});
  bad = j, bad[0] ^= 0xff;
  out->push_back({"bootstrap_protocol", "join_bad_magic", cat({0}, bad)});

  std::vector<proto::PeerInfo> peers = {{address("10.0.0.1:1000"), "a"},
                                        {address("[fd00::2]:2000"), "host-b"},
                                        {address("10.0.0.3:3000"), ""}};
  Bytes table;
  proto::encodeTable(peers, &table);
  Bytes reply;
  proto::encodeReply(Code::kOk, table, &reply);
  out->push_back({"bootstrap_protocol", "reply_table", cat({1}, reply)});
  Bytes message = {'r', 'a', 'n', 'k', ' ', '2', ' ', 'm', 'i', 's', 's', 'i', 'n', 'g'};
  reply.clear();
  proto::encodeReply(Code::kTimeout, message, &reply);
  out->push_back({"bootstrap_protocol", "reply_error", cat({1}, reply)});
  bad = reply, bad[4] = 99;  // unknown code
  out->push_back({"bootstrap_protocol", "reply_bad_code", cat({1}, bad)});
  out->push_back({"bootstrap_protocol", "table_valid", cat({2, 3}, table)});
  out->push_back({"bootstrap_protocol", "table_truncated", cat({2, 3}, Bytes(table.begin(), table.end() - 1))});
  out->push_back({"bootstrap_protocol", "table_trailing", cat(cat({2, 3}, table), {0})});
  out->push_back({"bootstrap_protocol", "table_empty", {2, 0}});
}

Bytes frame(uint32_t tag, uint64_t total, uint64_t partSize, uint32_t seq, uint16_t index, uint16_t nParts) {
  tcp::FrameHeader h;
  h.tag = tag, h.total = total, h.partSize = partSize, h.seq = seq, h.partIndex = index, h.nParts = nParts;
  Bytes b(tcp::kFrameHeaderBytes);
  tcp::encodeFrame(h, b.data());
  return b;
}

void frameSeeds(std::vector<Seed>* out) {
  out->push_back({"tcp_frame", "single_part", cat({0}, frame(7, 100, 100, 0, 0, 1))});
  out->push_back({"tcp_frame", "striped_part", cat({0}, frame(7, 1 << 20, 1 << 18, 5, 2, 4))});
  Bytes bad = frame(7, 100, 100, 0, 0, 1);
  bad[39] ^= 1;
  out->push_back({"tcp_frame", "bad_check", cat({0}, bad)});
  bad[28] = 1;  // reserved field set, check repaired
  out->push_back({"tcp_frame", "reserved_repaired", cat({1}, bad)});
  out->push_back({"tcp_frame", "huge_total", cat({0}, frame(1, ~0ull, 1, 0, 0, 16))});
}

Bytes connHeader(uint16_t nSocks, uint16_t index, uint64_t connId) {
  Bytes b;
  le(&b, tcp::kConnMagic, 4), le(&b, nSocks, 2), le(&b, index, 2), le(&b, connId, 8);
  return b;
}

// One socket of the tcp_conn_header input: control byte, then the bytes it sends.
Bytes sock(const Bytes& bytes, int connector = 0) {
  return cat({static_cast<uint8_t>(bytes.size() | (connector << 5))}, bytes);
}

void connHeaderSeeds(std::vector<Seed>* out) {
  out->push_back({"tcp_conn_header", "one_socket", sock(connHeader(1, 0, 42))});
  out->push_back({"tcp_conn_header", "two_sockets", cat(sock(connHeader(2, 1, 42)), sock(connHeader(2, 0, 42)))});
  out->push_back({"tcp_conn_header", "duplicate_index",
                  cat(cat(sock(connHeader(2, 0, 9)), sock(connHeader(2, 0, 9))), sock(connHeader(2, 1, 9)))});
  out->push_back({"tcp_conn_header", "nsocks_mismatch", cat(sock(connHeader(2, 0, 9)), sock(connHeader(3, 1, 9)))});
  out->push_back({"tcp_conn_header", "two_connectors",
                  cat(sock(connHeader(2, 0, 5), 0), cat(sock(connHeader(2, 1, 5), 1), sock(connHeader(2, 1, 5), 0)))});
  Bytes h = connHeader(1, 0, 1);
  out->push_back({"tcp_conn_header", "short_header", sock(Bytes(h.begin(), h.begin() + 9))});
  out->push_back({"tcp_conn_header", "header_and_data", sock(cat(h, {1, 2, 3, 4, 5, 6, 7, 8}))});
  out->push_back({"tcp_conn_header", "index_out_of_range", sock(connHeader(2, 2, 1))});
  out->push_back({"tcp_conn_header", "no_header", sock({})});
}

void authSeeds(std::vector<Seed>* out) {
  auto hello = [](uint32_t magic, uint16_t version, uint16_t purpose) {
    Bytes b;
    le(&b, magic, 4), le(&b, version, 2), le(&b, purpose, 2), le(&b, 0x0123456789abcdefull, 8);
    return b;
  };
  Bytes answer(net::kAnswerBytes, 0x11);
  // flags: bit 0 = against the connector, bit 1 = kTcpData; then the chunk size byte.
  out->push_back({"auth_handshake", "acceptor_hello_answer", cat({0, 31}, cat(hello(net::kAuthMagic, 1, 1), answer))});
  out->push_back({"auth_handshake", "acceptor_tcp_bytewise", cat({2, 0}, cat(hello(net::kAuthMagic, 1, 2), answer))});
  out->push_back({"auth_handshake", "acceptor_wrong_purpose", cat({0, 31}, hello(net::kAuthMagic, 1, 2))});
  out->push_back({"auth_handshake", "acceptor_bad_version", cat({0, 31}, hello(net::kAuthMagic, 2, 1))});
  out->push_back({"auth_handshake", "acceptor_bad_magic", cat({0, 31}, hello(0x12345678, 1, 1))});
  out->push_back({"auth_handshake", "acceptor_silent", {0, 31}});
  Bytes challenge;
  le(&challenge, net::kAuthMagic, 4), le(&challenge, 42, 8), le(&challenge, 0xfeedull, 8);
  out->push_back({"auth_handshake", "connector_challenge", cat({1, 31}, challenge)});
  out->push_back({"auth_handshake", "connector_short", cat({3, 4}, Bytes(challenge.begin(), challenge.begin() + 12))});
}

// tcp_recv records: control byte (socket | kind << 4), then the kind's fields.
Bytes header(int s, uint8_t tag, uint16_t total, uint16_t part, uint8_t seq, uint8_t index, uint8_t nParts) {
  Bytes b = {static_cast<uint8_t>(s | 1 << 4), tag};
  le(&b, total, 2), le(&b, part, 2), b.push_back(seq), b.push_back(index), b.push_back(nParts);
  return b;
}
Bytes filler(int s, uint16_t n) {
  Bytes b = {static_cast<uint8_t>(s | 2 << 4)};
  le(&b, n, 2);
  return b;
}
Bytes raw(int s, const Bytes& bytes) {
  return cat({static_cast<uint8_t>(s), static_cast<uint8_t>(bytes.size())}, bytes);
}

void recvSeeds(std::vector<Seed>* out) {
  // Prefix: nSocks byte (1 + b % 4), nRecvs byte (1 + b % 4), per receive capacity u16 + tag u8.
  Bytes one = {0, 0, 100, 0, 7};
  out->push_back({"tcp_recv", "one_message", cat(cat(one, header(0, 7, 10, 10, 0, 0, 1)), filler(0, 10))});
  out->push_back({"tcp_recv", "tag_mismatch", cat(cat(one, header(0, 8, 10, 10, 0, 0, 1)), filler(0, 10))});
  out->push_back({"tcp_recv", "too_large", cat(cat(one, header(0, 7, 101, 101, 0, 0, 1)), filler(0, 101))});
  out->push_back({"tcp_recv", "garbage", cat(one, raw(0, Bytes(40, 0x42)))});
  Bytes striped = {1, 0, 0xe8, 0x03, 9};  // 2 sockets, one receive of 1000 bytes
  striped = cat(striped, cat(header(0, 9, 1000, 500, 0, 0, 2), filler(0, 500)));
  striped = cat(striped, cat(header(1, 9, 1000, 500, 0, 1, 2), filler(1, 500)));
  out->push_back({"tcp_recv", "striped", striped});
  Bytes two = {1, 1, 16, 0, 1, 16, 0, 2};  // 2 sockets, two receives of 16 bytes; message 1 leads on socket 1
  two = cat(two, cat(header(0, 1, 16, 16, 0, 0, 1), filler(0, 16)));
  two = cat(two, cat(header(1, 2, 4, 4, 1, 0, 1), filler(1, 4)));
  out->push_back({"tcp_recv", "two_messages", two});
  out->push_back({"tcp_recv", "part_size_mismatch", cat(cat(one, header(0, 7, 10, 9, 0, 0, 1)), filler(0, 9))});
  out->push_back({"tcp_recv", "truncated_payload", cat(one, header(0, 7, 10, 10, 0, 0, 1))});
}

// Control-plane frames, alone and back to back, and the edges of the parser.
void controlSeeds(std::vector<Seed>* out) {
  auto encoded = [](core::ControlType type, core::Fault fault) {
    std::string s;
    core::ControlFrame f;
    f.type = type;
    f.fault = std::move(fault);
    core::encodeControlFrame(f, &s);
    return Bytes(s.begin(), s.end());
  };
  const Bytes beat = encoded(core::ControlType::kHeartbeat, {});
  const Bytes fault = encoded(core::ControlType::kFault, {Code::kRemoteError, 2, 0, "rank 2 died (connection reset)"});
  const Bytes bye = encoded(core::ControlType::kBye, {});
  out->push_back({"control_frame", "heartbeat", beat});
  out->push_back({"control_frame", "fault", fault});
  out->push_back({"control_frame", "stream", cat(cat(beat, fault), bye)});
  out->push_back({"control_frame", "truncated_fault", Bytes(fault.begin(), fault.end() - 3)});
  Bytes badMagic = beat;
  badMagic[0] ^= 0xff;
  out->push_back({"control_frame", "bad_magic", badMagic});
  Bytes hugeText = fault;
  hugeText[12] = hugeText[13] = hugeText[14] = hugeText[15] = 0xff;  // text length 4 GiB
  out->push_back({"control_frame", "huge_text_length", hugeText});
}

}  // namespace

std::vector<Seed> generateSeeds() {
  std::vector<Seed> seeds;
  uniqueIdSeeds(&seeds);
  socketAddressSeeds(&seeds);
  protocolSeeds(&seeds);
  frameSeeds(&seeds);
  connHeaderSeeds(&seeds);
  authSeeds(&seeds);
  recvSeeds(&seeds);
  controlSeeds(&seeds);
  peerSeeds(&seeds);
  return seeds;
}

}  // namespace braid::fuzz
