#include "transports/ibverbs/ib_devices.h"

#include <cstring>
#include <sstream>

#include "base/env.h"
#include "base/log.h"

namespace braid::ibverbs {
namespace {

// Gbit/s per lane of ibv_port_attr::active_speed's codes (SDR .. NDR).
double laneGbps(uint8_t speed) {
  switch (speed) {
    case 1:
      return 2.5;
    case 2:
      return 5.0;
    case 4:
      return 10.0;  // QDR (and FDR10 below, as RDMA libraries count it)
    case 8:
      return 10.3125;
    case 16:
      return 14.0625;
    case 32:
      return 25.78125;
    case 64:
      return 53.125;
    case 128:
      return 106.25;
    default:
      return 0;
  }
}

int lanes(uint8_t width) {
  switch (width) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Whether BRAID_IB_HCA lets port `port` of device `name` in.
bool selected(const std::vector<std::string>& wanted, const std::string& name, int port) {
  if (wanted.empty()) return true;
  for (const std::string& w : wanted)
    if (w == name || w == name + ":" + std::to_string(port)) return true;
  return false;
}

int gidIndexFor(const VerbsApi& api, ibv_context* ctx, uint8_t port, const ibv_port_attr& attr) {
  std::string error;
  const int64_t configured = env::getInt("BRAID_IB_GID_INDEX", &error);
  if (error.empty() && !env::getString("BRAID_IB_GID_INDEX").empty()) return static_cast<int>(configured);
  if (attr.link_layer != IBV_LINK_LAYER_ETHERNET || attr.gid_tbl_len <= 3) return 0;
  ibv_gid gid{};
  return api.queryGid(ctx, port, 3, &gid) == 0 && gid.global.interface_id != 0 ? 3 : 0;
}

}  // namespace

OpenDevice::~OpenDevice() {
  if (pd_ && api_.deallocPd(pd_) != 0)
    BRAID_WARN("ibverbs: %s: could not free its protection domain", name_.c_str());
  if (context_ && api_.closeDevice(context_) != 0)
    BRAID_WARN("ibverbs: %s: could not close the device", name_.c_str());
}

Status findPorts(const VerbsApi& api, std::vector<IbPort>* out) {
  out->clear();
  int count = 0;
  ibv_device** list = api.getDeviceList(&count);
  if (list == nullptr) return Status::ok();  // no RDMA subsystem: no devices
  const std::vector<std::string> wanted = split(env::getString("BRAID_IB_HCA"));
  for (int d = 0; d < count; ++d) {
    const std::string name = api.getDeviceName(list[d]);
    ibv_context* ctx = api.openDevice(list[d]);
    if (ctx == nullptr) {
      BRAID_WARN("ibverbs: cannot open %s: %s", name.c_str(), std::strerror(errno));
      continue;
    }
    ibv_device_attr dev{};
    ibv_pd* pd = api.queryDevice(ctx, &dev) == 0 ? api.allocPd(ctx) : nullptr;
    auto device = std::make_shared<OpenDevice>(api, ctx, pd, name);
    if (pd == nullptr) {
      BRAID_WARN("ibverbs: %s: cannot query it or allocate a protection domain", name.c_str());
      continue;
    }
    for (int p = 1; p <= dev.phys_port_cnt; ++p) {
      if (!selected(wanted, name, p)) continue;
      ibv_port_attr attr;
      std::memset(&attr, 0, sizeof(attr));
      if (api.queryPort(ctx, static_cast<uint8_t>(p), reinterpret_cast<_compat_ibv_port_attr*>(&attr)) != 0 ||
          attr.state != IBV_PORT_ACTIVE)
        continue;
      IbPort port;
      port.device = device;
      port.port = static_cast<uint8_t>(p);
      port.lid = attr.lid;
      port.ethernet = attr.link_layer == IBV_LINK_LAYER_ETHERNET;
      port.gidIndex = gidIndexFor(api, ctx, port.port, attr);
      if (api.queryGid(ctx, port.port, port.gidIndex, &port.gid) != 0) {
        BRAID_WARN("ibverbs: %s:%d: cannot read GID %d", name.c_str(), p, port.gidIndex);
        continue;
      }
      port.mtu = attr.active_mtu;
      port.maxMessageBytes = attr.max_msg_sz;
      port.speedMbps = 1000.0 * laneGbps(attr.active_speed) * lanes(attr.active_width);
      port.name = name + ":" + std::to_string(p);
      out->push_back(std::move(port));
    }
  }
  api.freeDeviceList(list);
  return Status::ok();
}

void describePort(const IbPort& port, transport::DeviceProperties* props) {
  props->name = port.name;
  char gid[40];
  const uint8_t* g = port.gid.raw;
  std::snprintf(gid, sizeof(gid), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
                g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14],
                g[15]);
  props->address = port.ethernet ? std::string("gid ") + gid : "lid " + std::to_string(port.lid);
  props->speedMbps = port.speedMbps;
  props->latencyUs = 2;
}

}  // namespace braid::ibverbs
