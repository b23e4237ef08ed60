// The RDMA ports this host offers: every active port of every device
// libibverbs lists, opened once per transport with one protection domain per
// device (so that a comm's memory registrations work on any of its QPs).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "transports/ibverbs/ib_path.h"
#include "transports/ibverbs/verbs_api.h"
#include "transports/transport.h"

namespace braid::ibverbs {

// One open device: its context and protection domain, closed with it.
class OpenDevice {
 public:
  OpenDevice(const VerbsApi& api, ibv_context* context, ibv_pd* pd, std::string name)
      : api_(api), context_(context), pd_(pd), name_(std::move(name)) {}
  ~OpenDevice();
  OpenDevice(const OpenDevice&) = delete;
  OpenDevice& operator=(const OpenDevice&) = delete;

  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  const std::string& name() const { return name_; }

 private:
  const VerbsApi& api_;
  ibv_context* context_;
  ibv_pd* pd_;
  std::string name_;
};

// An active port: what a QP on it needs, and what braid reports of it.
struct IbPort {
  std::shared_ptr<OpenDevice> device;
  uint8_t port = 1;
  uint16_t lid = 0;
  ibv_gid gid{};
  int gidIndex = 0;
  bool ethernet = false;  // RoCE: addressed by GID, no LID
  ibv_mtu mtu = IBV_MTU_1024;
  uint32_t maxMessageBytes = 0;
  double speedMbps = 0;
  std::string name;  // "mlx5_0:1"
  IbPath path;       // BRAID_IB_TC and the rest, the same for every port
};

// Every active port; an empty list when the library finds no device.
// BRAID_IB_HCA keeps only the devices it names (comma-separated, a device
// name or device:port); BRAID_IB_GID_INDEX picks the GID for RoCE ports
// (default 0, or 3 where present: RoCE v2 over IPv4 on the usual tables).
Status findPorts(const VerbsApi& api, std::vector<IbPort>* out);

void describePort(const IbPort& port, transport::DeviceProperties* props);

}  // namespace braid::ibverbs
