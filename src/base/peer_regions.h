// PeerRegions: the other processes' shareable regions (base/
// shareable_memory.h) this process has mapped, so that a range a peer says
// lies in one is read with plain loads instead of process_vm_readv: the
// shared slots' pulls and direct folds (core/slot_collectives.h) and the shm
// transport's large messages. A reduce's ranks also write into its root's
// output this way (findWritable). A peer's shareable file is taken once
// (pidfd_getfd), and a region of it mapped at the first read and kept, as NCCL keeps a peer's IPC
// handle: a training loop reads the same buffers every step.
//
// A peer frees its region without telling anyone: its memory goes back at
// once (shareable_memory.h), and the next mapping made lets go of the
// mappings of every freed region. A peer this process may not take
// descriptors from (or a kernel without pidfd_getfd) is logged once, and
// read with process_vm_readv from then on.
//
// A pid names the process the caller met only while that process lives: a
// later one may get it, and must not be read through the mappings of the
// first. So a PeerRegions lives no longer than the caller's tie to its
// peers: one per communicator (HostSlots: a communicator's peers never
// change) or per connection (the shm transport's receive ends).
//
// Thread-safe (a mutex: the callers move tens of KiB and more per lookup).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "base/shareable_memory.h"

namespace braid {

class PeerRegions {
 public:
  // `user` names the caller in the log lines ("slots", "shm").
  explicit PeerRegions(std::string user) : user_(std::move(user)) {}
  ~PeerRegions();
  PeerRegions(const PeerRegions&) = delete;
  PeerRegions& operator=(const PeerRegions&) = delete;

  // Where this process reads `bytes` at `address` of process `pid`, which
  // announced that they lie in its region `regionId` (of its shareable file,
  // its descriptor `fd`);
  // null when it cannot map it or the range is not inside it: then read it
  // with process_vm_readv. `pid` must be inside the call that announced the
  // range (so not yet anybody else's pid).
  const char* find(pid_t pid, uint64_t regionId, int32_t fd, uint64_t address, size_t bytes);
  // The same, for writing there: the peer's region is mapped writable (a
  // mapping made for reads is made writable), for collectives whose ranks
  // write their part straight into one rank's output (a reduce's root's).
  // Null when it cannot (core/slot_collectives.cc's reduces then leave the
  // write to the root: a late process_vm_writev would write at an address
  // the peer may have given to another mapping since).
  char* findWritable(pid_t pid, uint64_t regionId, int32_t fd, uint64_t address, size_t bytes);

  // For tests: findWritable finds nothing from now on, as where the kernel
  // refuses to make a mapping writable.
  void refuseWritesForTests() { writesRefused_ = true; }

  size_t mapped() const;  // mappings held now (for tests)
  size_t files() const;   // peers' shareable files held now (for tests)
  size_t made() const;    // mappings made so far (for tests)

 private:
  // A peer's shareable file: its descriptor there and here. (A process
  // with two copies of braid loaded has two.)
  struct PeerFile {
    pid_t pid;
    int32_t theirs;
    int ours;  // -1: refused (logged, not tried again)
  };
  struct Mapping {
    const PeerFile* file;  // in files_ (a deque: never moves)
    uint64_t regionId;
    PeerMapping view;
    bool writable;
  };
  static const char* locate(const Mapping& m, uint64_t address, size_t bytes);
  // The mapping of the peer's region, made now if need be; null when it
  // cannot be made. Called with mu_ held.
  Mapping* mappingOf(pid_t pid, uint64_t regionId, int32_t fd);
  void releaseFreed();
  PeerFile& fileOf(pid_t pid, int32_t theirs);
  // Takes the peer's shareable file again; true when it is another file than
  // the one held (which it then replaces).
  bool retake(PeerFile* file);

  const std::string user_;
  mutable std::mutex mu_;
  std::deque<PeerFile> files_;
  std::vector<Mapping> maps_;
  size_t made_ = 0;
  bool writesRefused_ = false;
};

}  // namespace braid
