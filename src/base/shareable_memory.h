// Shareable memory: the host memory braidMemAlloc hands out. Each allocation
// is its own memfd, mapped shared, so that another process of the host that
// may read this one's memory anyway (the kernel's ptrace check, as for
// process_vm_readv) can take the descriptor with pidfd_getfd, map the region
// and read it with plain loads. On the 2-core VM a 1 MiB read that way took
// 50 us where process_vm_readv took 138 (the kernel pins and maps every
// page of every call); the shared slots' pulls use it (core/peer_regions.h).
//
// A region's first page is a header its readers check before they trust a
// mapping: the magic, the region's id (unique in its process, never reused)
// and a flag set when it is freed, so that a reader holding a mapping of a
// freed region can let it go. The user's pointer is the page after it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace braid {

// The region of this process that holds a range: what a peer needs to map
// it (the id and descriptor, announced with the range's address), and where
// the range lies in it.
struct ShareableRange {
  uint64_t regionId = 0;  // 0: the range is not inside one shareable region
  int32_t fd = -1;        // the region's descriptor in this process
  uint64_t mapBytes = 0;  // the whole region, header page included
  uint64_t offset = 0;    // of the range's start from the region's start

  bool shareable() const { return regionId != 0; }
};

struct ShareableRegionHeader {
  static constexpr uint64_t kMagic = 0x6272616964726567;  // "braidreg"
  uint64_t magic;
  uint64_t regionId;
  uint64_t ownerPid;
  uint64_t ownerBase;  // the region's address in its owner: a peer finds an announced address with it
  std::atomic<uint32_t> freed;  // set by the owner before it unmaps
};

// Allocates `bytes` (> 0) of shareable memory, zeroed and page aligned.
Status allocateShareable(size_t bytes, void** out);
// Frees what allocateShareable returned; any other pointer is
// InvalidArgument and changes nothing.
Status freeShareable(void* p);
// The region holding all of [p, p + bytes), or one with regionId 0.
ShareableRange findShareable(const void* p, size_t bytes);

// Maps region `regionId` of the process `pidfd` refers to (its descriptor
// there: `fd`), read-only, after checking the descriptor and the region's
// header; *base and *mapBytes describe the mapping (munmap them to end it).
// Fails with the errno's system error (EPERM: this process may not take the
// owner's descriptors) or InvalidArgument for a descriptor that is not the
// region announced.
Status mapPeerShareable(int pidfd, uint64_t regionId, int32_t fd, const char** base, size_t* mapBytes);

// Whether this kernel lets a process map shareable memory the way a peer
// would (pidfd_open, pidfd_getfd, mmap), tried on a region of this process;
// the error says why not (then peers read it with process_vm_readv).
Status probeShareableMapping();

// The header of a region mapped with mapPeerShareable.
inline const ShareableRegionHeader& shareableHeader(const char* base) {
  return *reinterpret_cast<const ShareableRegionHeader*>(base);
}

}  // namespace braid
