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
  // One copy instead of the ring's two. On the 2-core VM, 2 ranks, 64 KiB
  // against the ring: all-gather 8 MiB 1116 against 1660 us, reduce-scatter
  // 8 MiB 1537 against 2805 us, all-to-all 1 MiB 97 against 174 us. 32 KiB
  // messages pull faster too (20 calls, medians of 3-5): a 2-rank all-gather
  // of 64 KiB 4.4 us against 6.6 (500 calls) and 6.1 against 18.4 (20
  // calls), a 4-rank all-to-all of 128 KiB 46 against 101 us. From 16 KiB
  // down the two are level, and below 16 KiB the ring wins: a pull pins the
  // sender's pages and costs a system call, while a small message goes
  // through the ring in cache (a threshold of 8 KiB: 16 KiB messages 9.4
  // against 6.5-6.9 us).
  size_t cmaThreshold = size_t{32} << 10;
  // Whether this end, sending, may push a CMA message into the receive its
  // peer offered (process_vm_writev) when it has fewer copies ahead than the
  // peer (ShmSendComm::tryPush): a gather's peers push into the root's output
  // in parallel instead of waiting for the root to pull each block. Used
  // where the connector's probe of the acceptor passes too.
  bool push = true;
  // How long wait() spins on the rings before it sleeps on the futex.
  int spinUs = 20;

  bool cma() const { return cmaThreshold > 0; }

  // BRAID_SHM_RING_BYTES, BRAID_SHM_CMA_THRESHOLD, BRAID_SHM_SPIN_US, BRAID_SHM_PUSH;
  // an unset variable keeps the default above, a malformed one is InvalidArgument.
  static Status fromEnv(ShmConfig* out);
  Status validate() const;
};

}  // namespace braid::shm
