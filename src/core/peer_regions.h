// PeerRegions: the peers' shareable regions (base/shareable_memory.h) this
// rank has mapped, so that a pulled collective reads a peer's braidMemAlloc
// input with plain loads instead of process_vm_readv. A mapping is made at
// the first read of a region and kept, as NCCL keeps a peer's IPC handle:
// a training loop reads the same buffers every step.
//
// A peer frees its region without telling anyone; the region's header says
// so, and the next mapping made lets go of every freed one (the memory lives
// until then). Whatever fails (a kernel without pidfd_getfd, a peer this
// process may not take descriptors from) is logged once per peer, and that
// peer is read with process_vm_readv from then on.
//
// Threads: one at a time (the communicator's turn, as HostSlots' views).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/shareable_memory.h"

namespace braid::core {

class PeerRegions {
 public:
  explicit PeerRegions(std::vector<pid_t> pids) : pids_(std::move(pids)), pidfds_(pids_.size(), kNotOpened) {}
  ~PeerRegions();
  PeerRegions(const PeerRegions&) = delete;
  PeerRegions& operator=(const PeerRegions&) = delete;

  // Where this process reads rank `peer`'s range (its first byte), or null
  // when it cannot map it: then read it with process_vm_readv.
  const char* find(int peer, const ShareableRange& range);

  // Mappings held now (for tests).
  size_t mapped() const { return maps_.size(); }

 private:
  static constexpr int kNotOpened = -1, kRefused = -2;
  struct Mapping {
    int peer;
    uint64_t regionId;
    const char* base;
    size_t bytes;
  };
  void releaseFreed();

  std::vector<pid_t> pids_;
  std::vector<int> pidfds_;  // per peer: a pidfd, kNotOpened, or kRefused (logged, not tried again)
  std::vector<Mapping> maps_;
};

}  // namespace braid::core
