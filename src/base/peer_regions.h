// PeerRegions: the other processes' shareable regions (base/
// shareable_memory.h) this process has mapped, so that a range a peer says
// lies in one is read with plain loads instead of process_vm_readv: the
// shared slots' pulls (core/slot_collectives.h) and the shm transport's
// large messages. A mapping is made at the first read of a region and kept,
// as NCCL keeps a peer's IPC handle: a training loop reads the same buffers
// every step.
//
// A peer frees its region without telling anyone; the region's header says
// so, and the next mapping made lets go of every freed one (the memory lives
// until then). A peer this process may not take descriptors from (or a
// kernel without pidfd_getfd) is logged once, and read with
// process_vm_readv from then on.
//
// Thread-safe (a mutex: the callers move tens of KiB and more per lookup).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace braid {

class PeerRegions {
 public:
  // `user` names the caller in the log lines ("slots", "shm").
  explicit PeerRegions(std::string user) : user_(std::move(user)) {}
  ~PeerRegions();
  PeerRegions(const PeerRegions&) = delete;
  PeerRegions& operator=(const PeerRegions&) = delete;

  // Where this process reads `bytes` at `address` of process `pid`, which
  // announced that they lie in its region `regionId` (its descriptor `fd`);
  // null when it cannot map it or the range is not inside it: then read it
  // with process_vm_readv. `pid` must be inside the call that announced the
  // range (so not yet anybody else's pid).
  const char* find(pid_t pid, uint64_t regionId, int32_t fd, uint64_t address, size_t bytes);

  size_t mapped() const;  // mappings held now (for tests)

 private:
  struct Mapping {
    pid_t pid;
    uint64_t regionId;
    const char* base;
    size_t bytes;
    uint64_t ownerBase;  // where the region starts in its owner
  };
  struct Peer {
    pid_t pid;
    int pidfd;  // -1: refused (logged, not tried again)
  };
  const char* locate(const Mapping& m, uint64_t address, size_t bytes) const;
  void releaseFreed();
  int pidfdOf(pid_t pid);

  const std::string user_;
  mutable std::mutex mu_;
  std::vector<Peer> peers_;
  std::vector<Mapping> maps_;
};

}  // namespace braid
