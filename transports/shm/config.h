// ShmConfig: the tunables of the shm transport, read once per transport from
// BRAID_SHM_* (see fromEnv) or set directly by tests.
#pragma once

#include <cstddef>

#include "base/status.h"

namespace braid::shm {

struct ShmConfig {
  // Bytes of each connection's ring (a power of two, 64 KiB .. 256 MiB). Small
  // messages and the ring fallback of large ones stream through it.
  size_t ringBytes = size_t{1} << 20;
  // Messages of at least this many bytes go single-copy through cross-memory
  // attach (the receiver pulls with process_vm_readv); 0: never (the ring
  // only). A connection uses CMA only when both ends allow it and the
  // acceptor's probe read succeeds (else it falls back to the ring, logged).
  // Off by default: on the machines measured so far process_vm_readv copies
  // at a fraction of memcpy's speed and the pipelined ring wins at every size.
  size_t cmaThreshold = 0;
  // How long wait() spins on the rings before it sleeps on the futex.
  int spinUs = 20;

  bool cma() const { return cmaThreshold > 0; }

  // BRAID_SHM_RING_BYTES, BRAID_SHM_CMA_THRESHOLD, BRAID_SHM_SPIN_US;
  // an unset variable keeps the default above, a malformed one is InvalidArgument.
  static Status fromEnv(ShmConfig* out);
  Status validate() const;
};

}  // namespace braid::shm
