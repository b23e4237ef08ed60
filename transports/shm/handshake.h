// Connection setup of the shm transport: the handle, the listener's socket and
// the two messages exchanged on it.
//
// A listener is a SOCK_SEQPACKET unix socket in the abstract namespace under a
// random 128-bit name (no file anywhere; the kernel removes it with the last
// descriptor). The connector connects and sends one Hello carrying, as
// SCM_RIGHTS, the ring segment it created and its transport's doorbell; the
// acceptor checks the MAC before it maps anything, probes cross-memory attach
// (can it read the connector?), and answers with a Reply carrying its own
// doorbell and a probe word of its own, which the connector reads in turn to
// learn whether it may push into the acceptor (cross-memory access is granted
// per direction: a non-dumpable process can read its peer but not be read). Both messages are MACs
// under the communicator's secret over the listener's name and a fresh nonce,
// so each side proves the secret to the other; a stranger is dropped and logged.
// Peer pids come from SO_PEERCRED (the kernel's word, not the peer's).
//
// Handle (128 bytes, little-endian):
//   0  u32 magic "RBSH"      4  u8 version (1)     5..7 zero
//   8  u32 listener pid      12 u32 zero
//   16 u8[16] socket name (random; the abstract address is "\0braid-shm-<32 hex>")
//   32 u64 locality: SipHash of boot id and network namespace; connect() refuses
//      a handle from another host or namespace at once instead of timing out
//   40..127 zero
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::shm {

using ListenerName = std::array<uint8_t, 16>;

struct HandleInfo {
  pid_t pid = 0;
  ListenerName name{};
  uint64_t locality = 0;
};
void encodeHandle(const HandleInfo& info, transport::Handle* handle);
// False when the bytes were not made by an shm listen().
bool decodeHandle(const transport::Handle& handle, HandleInfo* info);
// This process's host + network namespace key (see the handle layout).
uint64_t localityKey();

// Non-blocking SOCK_SEQPACKET sockets on the abstract address of `name`.
Status listenAbstract(const ListenerName& name, net::Fd* fd);
// *err: 0 connected, else the errno (EAGAIN / ECONNREFUSED: retry later).
Status connectAbstract(const ListenerName& name, net::Fd* fd, int* err);
std::string describe(const ListenerName& name);  // "braid-shm-<hex>" for log lines

constexpr uint16_t kFlagCma = 1;  // Hello: connector allows CMA; Reply: the connection uses it

struct Hello {
  uint32_t magic = 0x48534252;  // "RBSH"
  uint16_t version = 2;
  uint16_t flags = 0;
  uint64_t nonce = 0;
  uint64_t connectorId = 0;
  uint64_t ringBytes = 0;   // data bytes of the ring segment (its size is kControlBytes more)
  uint64_t probeAddr = 0;   // a word in the connector the acceptor reads to test CMA
  uint64_t probeValue = 0;  // what it must find there
  uint64_t mac = 0;
};
struct Reply {
  uint32_t magic = 0x52534252;  // "RBSR"
  uint16_t version = 2;
  uint16_t flags = 0;
  uint64_t nonce = 0;       // the Hello's
  uint64_t probeAddr = 0;   // a word in the acceptor the connector reads to test pushes
  uint64_t probeValue = 0;  // what it must find there
  uint64_t mac = 0;
};
uint64_t helloMac(const transport::Secret& secret, const ListenerName& name, const Hello& h);
uint64_t replyMac(const transport::Secret& secret, const ListenerName& name, const Reply& r);

// One message with descriptors; a full socket buffer is an error (these are the
// first and only messages on a fresh socket).
Status sendWithFds(int sock, const void* data, size_t size, const int* fds, int nfds);
// *got false when no message is there yet. A message of another size or with
// more than maxFds descriptors is RemoteError (received descriptors are closed).
// A closed peer is RemoteError "closed".
Status recvWithFds(int sock, void* data, size_t size, int maxFds, std::vector<net::Fd>* fds, bool* got);
// The peer's pid as the kernel recorded it at connect / listen time.
Status peerPid(int sock, pid_t* pid);

}  // namespace braid::shm
