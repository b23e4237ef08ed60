// IbMemory: a caller's buffer registered once (Transport::regMr) with the
// protection domain of every device the transport opened, so that messages
// inside it skip the ibv_reg_mr / ibv_dereg_mr pair each would cost
// otherwise (the pair pins and unpins every page: milliseconds for a buffer
// of tens of MiB, as long as the transfer itself at 100 Gbit/s).
//
// Registered for remote writes where the memory allows it, else read-only
// (a const buffer, mapped without write access): usable by sends only; a
// receive into it is registered per message as before, and fails as before.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "base/address_range.h"
#include "base/status.h"
#include "transports/ibverbs/ib_devices.h"

namespace braid::ibverbs {

class IbMemory {
 public:
  // Registers [data, data + size) with each device's protection domain.
  static Status create(const VerbsApi& api, const std::vector<IbPort>& ports, void* data, size_t size,
                       std::unique_ptr<IbMemory>* out);
  ~IbMemory();
  IbMemory(const IbMemory&) = delete;
  IbMemory& operator=(const IbMemory&) = delete;

  bool covers(const void* data, size_t size) const { return rangeCovers(begin_, size_, data, size); }
  bool writable() const { return writable_; }
  // The registration in `pd`, or null where the transport has no such device.
  ibv_mr* in(const ibv_pd* pd) const;

 private:
  IbMemory(const VerbsApi& api, uintptr_t begin, size_t size) : api_(api), begin_(begin), size_(size) {}

  const VerbsApi& api_;
  uintptr_t begin_;
  size_t size_;
  bool writable_ = true;
  std::vector<ibv_mr*> mrs_;  // one per device
};

}  // namespace braid::ibverbs
