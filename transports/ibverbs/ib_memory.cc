#include "transports/ibverbs/ib_memory.h"

#include <algorithm>
#include <cerrno>
#include <string>

#include "base/log.h"

namespace braid::ibverbs {

Status IbMemory::create(const VerbsApi& api, const std::vector<IbPort>& ports, void* data, size_t size,
                        std::unique_ptr<IbMemory>* out) {
  if (data == nullptr || size == 0) return invalidArgument("ibverbs regMr: null or empty buffer");
  std::unique_ptr<IbMemory> memory(new IbMemory(api, reinterpret_cast<uintptr_t>(data), size));
  std::vector<ibv_pd*> pds;
  for (const IbPort& port : ports)
    if (std::find(pds.begin(), pds.end(), port.device->pd()) == pds.end()) pds.push_back(port.device->pd());
  constexpr int kWritable = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  for (ibv_pd* pd : pds) {
    ibv_mr* mr = api.regMr(pd, data, size, memory->writable_ ? kWritable : 0);
    // Memory mapped without write access refuses a writable registration
    // (EFAULT; EACCES on some drivers); sends may still use it read-only.
    if (mr == nullptr && memory->writable_ && memory->mrs_.empty() && (errno == EFAULT || errno == EACCES)) {
      memory->writable_ = false;
      mr = api.regMr(pd, data, size, 0);
    }
    if (mr == nullptr) {
      const int err = errno;
      return systemError("ibverbs: ibv_reg_mr of " + std::to_string(size) + " bytes", err);
    }
    memory->mrs_.push_back(mr);
  }
  *out = std::move(memory);
  return Status::ok();
}

IbMemory::~IbMemory() {
  for (ibv_mr* mr : mrs_)
    if (api_.deregMr(mr) != 0) BRAID_WARN("ibverbs: ibv_dereg_mr of a registered buffer failed");
}

ibv_mr* IbMemory::in(const ibv_pd* pd) const {
  for (ibv_mr* mr : mrs_)
    if (mr->pd == pd) return mr;
  return nullptr;
}

}  // namespace braid::ibverbs
