// Where a rank's buffers live (--memory). With host memory the collectives
// read and write the host buffers that prepareBuffers fills and countWrong
// reads. With device memory those host buffers are the staging copies: the
// regions prepareBuffers wrote are copied up before the call, the call gets
// device addresses at the same offsets, and the received region is copied
// down before the check, so the pattern and the check stay the pure code of
// checks.h. The copies are never inside the timed loop.
#pragma once

#include <cstddef>
#include <string>

#include "checks.h"
#include "collectives.h"
#include "options.h"

namespace braid::perf {

struct Buffers {
  void* send = nullptr;  // host: what prepareBuffers writes and countWrong reads
  void* recv = nullptr;
  size_t bytes = 0;            // of each buffer
  void* deviceSend = nullptr;  // --memory device: what the calls get; else nullptr
  void* deviceRecv = nullptr;
  bool shareable = false;  // send and recv came from braidMemAlloc
};

// Two page-aligned host buffers of bytes each (from braidMemAlloc with
// MemoryKind::kShareable), plus two device buffers with MemoryKind::kDevice (on the device made current by
// device::select).
// "" on success, else the reason; *out holds what was allocated either way.
std::string allocateBuffers(MemoryKind kind, size_t bytes, Buffers* out);
void freeBuffers(Buffers& b);

// The pointers to pass to the call, given the host regions prepareBuffers
// returned: those themselves with host memory; with device memory the device
// addresses at the same offsets, after copying up what prepareBuffers wrote
// (in place: max(sendCount, recvCount) elements of recv; out of place:
// sendCount of send and recvCount of recv, poison included).
std::string stageInputs(const Buffers& b, const Layout& l, size_t typeSize, bool inPlace,
                        const CallBuffers& host, CallBuffers* call);

// Makes the received region (l.recvCount elements at call.recv) readable at
// host.recv: a copy down with device memory, nothing with host memory.
std::string fetchResult(const Buffers& b, const Layout& l, size_t typeSize, const CallBuffers& host,
                        const CallBuffers& call);

// The rank's index among the ranks of its host, from the launcher's
// environment, read before the communicator exists: LOCAL_RANK (braid-run,
// torchrun), OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID
// (MPICH), else the global RANK / BRAID_RANK (one host), else 0.
int localRank();

}  // namespace braid::perf
