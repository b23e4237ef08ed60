// How a connection through an NCCL net plugin proves the communicator's
// secret. Plugin connections are one-way (data flow from the connector only),
// so the challenge-response of net/auth.h cannot run on them; instead the
// connector's first message is a proof:
//
//   magic u32, version u16, purpose u16, connectorId u64, nonce u64,
//   listener u64 = MAC(secret, the listener's handle),
//   mac u64      = MAC(secret, "C", listener, nonce, connectorId, purpose)
//
// (little-endian, 40 bytes; MAC is net/auth.h's SipHash-2-4). The listener
// digest binds a proof to one listener, and a listener takes each nonce once,
// so a proof seen on the wire cannot be replayed to it or used elsewhere.
// What this does not give is the connector's assurance about the listener:
// the handle it connects to came through braid's authenticated bootstrap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "transports/transport.h"

namespace braid::netplugin {

constexpr size_t kProofBytes = 40;
constexpr int kProofTag = 0;  // the plugin tag of that first message

// A fresh proof (new random nonce) for connecting to `listener`.
Status makeProof(const transport::Secret& secret, const transport::Handle& listener, uint64_t connectorId,
                 uint8_t out[kProofBytes]);
// RemoteError unless `in` proves `secret` for `listener`; then *connectorId and
// *nonce say who and which proof.
Status checkProof(const transport::Secret& secret, const transport::Handle& listener,
                  const uint8_t in[kProofBytes], uint64_t* connectorId, uint64_t* nonce);

}  // namespace braid::netplugin
