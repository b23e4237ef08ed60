// Shareable memory: the host memory braidMemAlloc hands out. All of a
// process's live allocations are pages of one memfd (its "shareable file",
// closed when the last of them is freed), mapped shared, so that another process of the host that may read
// this one's memory anyway (the kernel's ptrace check, as for process_vm_readv) can take the file's
// descriptor once with pidfd_getfd, map a region of it and read it with plain loads. On the 2-core VM a 1 MiB
// read that way took 50 us where process_vm_readv took 138 (the kernel pins and maps every page of every
// call); the shared slots' pulls and the shm transport use it
// (base/peer_regions.h).
//
// One file, not one per allocation: a process holds one descriptor however
// many buffers it allocates (a framework's caching allocator would run out of
// descriptors at the usual limit of 1024 otherwise), and a peer one per
// process it reads. Regions take fresh offsets, never reused in the process,
// not even by the file after a closed one (files are sparse: offsets cost
// nothing), so a region's id is its offset and a stale mapping never shows
// another region's data. A free punches the region
// out of the file: its memory goes back at once, even while peers still map
// it (they read zeros from then on, as the owner's bug deserves).
//
// A region's first page is a header its readers check before they trust a
// mapping: the magic, the region's id, its size and a flag set when it is
// freed. The user's pointer is the page after it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace braid {

// What a peer needs to map the region that holds a range of this process,
// announced with the range's address.
struct ShareableRange {
  uint64_t regionId = 0;  // 0: the range is not inside one shareable region
  int32_t fd = -1;        // this process's shareable file

  bool shareable() const { return regionId != 0; }
};

struct ShareableRegionHeader {
  static constexpr uint64_t kMagic = 0x6272616964726567;  // "braidreg"
  uint64_t magic;
  uint64_t regionId;
  uint64_t ownerPid;
  uint64_t ownerBase;  // the region's address in its owner: a peer finds an announced address with it
  uint64_t mapBytes;   // the whole region, header page included
  std::atomic<uint32_t> freed;  // set by the owner before it punches the region out
};

// The system's page size.
size_t pageBytes();

// Allocates `bytes` (> 0) of shareable memory, zeroed and page aligned.
Status allocateShareable(size_t bytes, void** out);
// Frees what allocateShareable returned; any other pointer is
// InvalidArgument and changes nothing.
Status freeShareable(void* p);
// The region holding all of [p, p + bytes), or one with regionId 0.
ShareableRange findShareable(const void* p, size_t bytes);

// Takes the shareable file of the process `pidfd` refers to (its descriptor
// there: `fd`) into this process, as *file (close it when done). Fails with
// the errno's system error (EPERM: this process may not take the owner's
// descriptors) or InvalidArgument for a descriptor that is not a file.
Status takePeerShareableFile(int pidfd, int32_t fd, int* file);

// A peer's region mapped here: munmap(base, bytes) ends it.
struct PeerMapping {
  const char* base = nullptr;
  size_t bytes = 0;
  uint64_t ownerBase = 0;  // where the region starts in its owner
};

// Maps region `regionId` of a peer's shareable `file`, read-only, after
// checking its header. InvalidArgument when the region is not there
// (another id, or freed).
Status mapPeerShareable(int file, uint64_t regionId, PeerMapping* out);

// Lets this process write through `mapping` too (the peer's file is open for
// writing: pidfd_getfd shares the memfd's open file).
Status makePeerMappingWritable(const PeerMapping& mapping);

// Whether region `regionId` of a peer's shareable `file` is gone (freed, or
// never there). Read from the file, not a mapping: a read through a mapping
// of a punched page would bring the page back.
bool peerShareableFreed(int file, uint64_t regionId);

// Whether this kernel lets a process map shareable memory the way a peer
// would (pidfd_open, pidfd_getfd, mmap), tried on a region of this process;
// the error says why not (then peers read it with process_vm_readv).
Status probeShareableMapping();

}  // namespace braid
