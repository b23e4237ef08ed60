// The rendezvous protocol between a rank and the root, spoken only after the
// connection passed net::authenticateConnector (Purpose::kBootstrap, connector id
// = the rank), so everything here comes from a holder of the secret.
//
//   rank -> root  join  : magic u32 "BRJN", version u16, hostIdLen u16,
//                         rank u32, nranks u32, timeoutMs u32, remainingMs u32,
//                         listen address [32], hostId [hostIdLen]
//   root -> rank  reply : magic u32 "BRRP", code u32 (braid::Code), length u32,
//                         payload [length]
// On code kOk the payload is the table: per rank, address [32], hostIdLen u16,
// hostId. Otherwise it is the error message the rank returns with that code.
// remainingMs is how long the rank will still wait for the reply: the root
// answers with the missing ranks just before that runs out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "transports/net/socket.h"

namespace braid::bootstrap::protocol {

constexpr uint32_t kJoinMagic = 0x4e4a5242;   // "BRJN"
constexpr uint32_t kReplyMagic = 0x50525242;  // "BRRP"
constexpr uint16_t kVersion = 1;
constexpr size_t kJoinHeaderBytes = 24 + net::SocketAddress::kPackedBytes;
constexpr size_t kReplyHeaderBytes = 12;

struct JoinRequest {
  int rank = -1;
  int nranks = 0;
  uint32_t timeoutMs = 0;
  uint32_t remainingMs = 0;
  net::SocketAddress listen;
  std::string hostId;
};

struct PeerInfo {
  net::SocketAddress address;  // the rank's bootstrap listener
  std::string hostId;
};

void encodeJoin(const JoinRequest& join, std::vector<uint8_t>* out);
// Parses the fixed header (kJoinHeaderBytes); *hostIdBytes gets how many bytes
// follow it. RemoteError on a bad magic / version.
Status decodeJoinHeader(const uint8_t* data, JoinRequest* join, size_t* hostIdBytes);

void encodeReply(Code code, const std::vector<uint8_t>& payload, std::vector<uint8_t>* out);
// Parses the reply header; *payloadBytes gets the length that follows.
Status decodeReplyHeader(const uint8_t* data, Code* code, size_t* payloadBytes);

void encodeTable(const std::vector<PeerInfo>& peers, std::vector<uint8_t>* out);
Status decodeTable(const std::vector<uint8_t>& payload, int nranks, std::vector<PeerInfo>* peers);

}  // namespace braid::bootstrap::protocol
