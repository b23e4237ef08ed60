// The device-direct workspaces of one communicator (device_direct.h): this
// rank's, allocated and exported with cudaIpcGetMemHandle, and every peer's,
// mapped here with cudaIpcOpenMemHandle. Each is two halves: a chunk's input
// and this rank's slice of the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/communicator.h"
#include "kernels/device_module.h"

namespace braid::core {

class IpcWorkspaces {
 public:
  IpcWorkspaces(const kernels::DeviceModule& m, int device) : m_(m), device_(device) {}
  ~IpcWorkspaces();
  IpcWorkspaces(const IpcWorkspaces&) = delete;
  IpcWorkspaces& operator=(const IpcWorkspaces&) = delete;

  // Collective: every rank of comm at the same call. A failure the ranks
  // agreed on leaves the workspaces unusable (usable() false, reason() why);
  // only a failing communicator is an error.
  Status setUp(Communicator& comm, size_t halfBytes);

  bool usable() const { return usable_; }
  const std::string& reason() const { return reason_; }
  int device() const { return device_; }
  size_t halfBytes() const { return halfBytes_; }
  // Rank r's input half (the chunk's input) and output half (its slice's result).
  uint8_t* in(int r) const { return bases_[r]; }
  uint8_t* out(int r) const { return bases_[r] + halfBytes_; }

 private:
  struct Record {
    uint8_t handle[kernels::kIpcHandleBytes];
    uint64_t base;  // for a peer in this same process, which cannot open its own handle
    int32_t pid;
    int32_t exported;  // 0: this rank could not allocate or export
  };
  Status allGather(Communicator& comm, const Record& mine, std::vector<Record>* all);
  Status agree(Communicator& comm, bool ok, bool* everyone);

  const kernels::DeviceModule& m_;
  const int device_;
  size_t halfBytes_ = 0;
  uint8_t* mine_ = nullptr;
  std::vector<uint8_t*> bases_;
  std::vector<bool> opened_;
  bool usable_ = false;
  std::string reason_;
};

// A one-integer all-reduce (min) in place on *value: the barrier of the
// device-direct steps, and the vote that tells every rank whether one failed.
Status buildMinOp(Communicator& comm, int32_t* value, Op* op);

}  // namespace braid::core
