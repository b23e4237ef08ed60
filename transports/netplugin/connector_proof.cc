#include "transports/netplugin/connector_proof.h"

#include <cstring>

#include "transports/net/auth.h"

namespace braid::netplugin {
namespace {

constexpr uint32_t kMagic = 0x41504e42;  // "BNPA": braid net plugin auth
constexpr uint16_t kVersion = 1;
constexpr uint16_t kPurpose = static_cast<uint16_t>(net::Purpose::kNetPluginData);

uint64_t listenerDigest(const transport::Secret& secret, const transport::Handle& listener) {
  return net::sipHash24(secret, listener.bytes.data(), listener.bytes.size());
}

uint64_t proofMac(const transport::Secret& secret, uint64_t listener, uint64_t nonce, uint64_t connectorId) {
  uint8_t buf[1 + 8 + 8 + 8 + 2];
  buf[0] = 'C';
  std::memcpy(buf + 1, &listener, 8);
  std::memcpy(buf + 9, &nonce, 8);
  std::memcpy(buf + 17, &connectorId, 8);
  std::memcpy(buf + 25, &kPurpose, 2);
  return net::sipHash24(secret, buf, sizeof(buf));
}

}  // namespace

Status makeProof(const transport::Secret& secret, const transport::Handle& listener, uint64_t connectorId,
                 uint8_t out[kProofBytes]) {
  uint64_t nonce = 0;
  BRAID_RETURN_IF_ERROR(net::randomBytes(&nonce, sizeof(nonce)));
  uint64_t digest = listenerDigest(secret, listener);
  uint64_t mac = proofMac(secret, digest, nonce, connectorId);
  std::memcpy(out, &kMagic, 4);
  std::memcpy(out + 4, &kVersion, 2);
  std::memcpy(out + 6, &kPurpose, 2);
  std::memcpy(out + 8, &connectorId, 8);
  std::memcpy(out + 16, &nonce, 8);
  std::memcpy(out + 24, &digest, 8);
  std::memcpy(out + 32, &mac, 8);
  return Status::ok();
}

Status checkProof(const transport::Secret& secret, const transport::Handle& listener,
                  const uint8_t in[kProofBytes], uint64_t* connectorId, uint64_t* nonce) {
  uint32_t magic = 0;
  uint16_t version = 0, purpose = 0;
  uint64_t id = 0, n = 0, digest = 0, mac = 0;
  std::memcpy(&magic, in, 4);
  std::memcpy(&version, in + 4, 2);
  std::memcpy(&purpose, in + 6, 2);
  std::memcpy(&id, in + 8, 8);
  std::memcpy(&n, in + 16, 8);
  std::memcpy(&digest, in + 24, 8);
  std::memcpy(&mac, in + 32, 8);
  if (magic != kMagic || version != kVersion || purpose != kPurpose)
    return remoteError("not a braid connection proof (another program, or another braid version)");
  uint64_t expectDigest = listenerDigest(secret, listener);
  uint64_t expectMac = proofMac(secret, expectDigest, n, id);
  if (!net::constantTimeEqual(&digest, &expectDigest, 8) || !net::constantTimeEqual(&mac, &expectMac, 8))
    return remoteError("the connector does not know the communicator's secret");
  *connectorId = id;
  *nonce = n;
  return Status::ok();
}

}  // namespace braid::netplugin
