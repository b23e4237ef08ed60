#include "transports/net/address_handle.h"

#include <cstring>

namespace braid::net {
namespace {

constexpr size_t kAddressOffset = 8;
static_assert(kAddressOffset + SocketAddress::kPackedBytes <= transport::kHandleBytes);

}  // namespace

void packAddressHandle(uint32_t magic, uint8_t version, const SocketAddress& address,
                       transport::Handle* out) {
  *out = transport::Handle{};
  std::memcpy(out->bytes.data(), &magic, sizeof(magic));
  out->bytes[4] = version;
  address.pack(out->bytes.data() + kAddressOffset);
}

bool unpackAddressHandle(uint32_t magic, uint8_t version, const transport::Handle& handle,
                         SocketAddress* out) {
  uint32_t got = 0;
  std::memcpy(&got, handle.bytes.data(), sizeof(got));
  return got == magic && handle.bytes[4] == version &&
         SocketAddress::unpack(handle.bytes.data() + kAddressOffset, out).isOk();
}

void describeInterface(const Interface& itf, transport::DeviceProperties* props) {
  props->name = itf.name;
  std::string addr = itf.address.toString();
  props->address = addr.substr(0, addr.rfind(':'));  // without the port
  if (!props->address.empty() && props->address[0] == '[')
    props->address = props->address.substr(1, props->address.size() - 2);
  props->speedMbps = itf.speedMbps;
  props->latencyUs = itf.loopback ? 10 : 50;
  props->maxComms = 65536;
}

}  // namespace braid::net
