#include "core/peer_regions.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace braid::core {

PeerRegions::~PeerRegions() {
  for (const Mapping& m : maps_) munmap(const_cast<char*>(m.base), m.bytes);
  for (int fd : pidfds_)
    if (fd >= 0) close(fd);
}

void PeerRegions::releaseFreed() {
  size_t kept = 0;
  for (const Mapping& m : maps_) {
    if (shareableHeader(m.base).freed.load(std::memory_order_acquire) != 0)
      munmap(const_cast<char*>(m.base), m.bytes);
    else
      maps_[kept++] = m;
  }
  maps_.resize(kept);
}

const char* PeerRegions::find(int peer, const ShareableRange& range) {
  if (!range.shareable() || peer < 0 || static_cast<size_t>(peer) >= pids_.size()) return nullptr;
  for (const Mapping& m : maps_)
    if (m.peer == peer && m.regionId == range.regionId && m.bytes == range.mapBytes && range.offset < m.bytes)
      return m.base + range.offset;
  int& pidfd = pidfds_[static_cast<size_t>(peer)];
  if (pidfd == kRefused) return nullptr;
  if (pidfd == kNotOpened) {
#ifdef SYS_pidfd_open
    // The peer is inside the call that announced the range, so its pid is
    // not yet anybody else's.
    const long fd = syscall(SYS_pidfd_open, pids_[static_cast<size_t>(peer)], 0);
    const int err = errno;
#else
    const long fd = -1;
    const int err = ENOSYS;
#endif
    if (fd < 0) {
      pidfd = kRefused;
      BRAID_INFO("slots: rank %d's braidMemAlloc memory is read with process_vm_readv (pidfd_open: %s)", peer,
                 std::strerror(err));
      return nullptr;
    }
    pidfd = static_cast<int>(fd);
  }
  releaseFreed();
  const char* base = nullptr;
  if (Status st = mapPeerShareable(pidfd, range, &base); !st.isOk()) {
    if (st.code() == Code::kInvalidArgument) {  // not the region announced: this call only
      BRAID_TRACE("slots: rank %d's region %llu: %s", peer, static_cast<unsigned long long>(range.regionId),
                  st.message().c_str());
      return nullptr;
    }
    BRAID_INFO("slots: rank %d's braidMemAlloc memory is read with process_vm_readv from now on (%s)", peer,
               st.message().c_str());
    close(pidfd);
    pidfd = kRefused;
    return nullptr;
  }
  maps_.push_back({peer, range.regionId, base, range.mapBytes});
  BRAID_INFO("slots: reading rank %d's braidMemAlloc region %llu (%llu bytes) with plain loads", peer,
             static_cast<unsigned long long>(range.regionId),
             static_cast<unsigned long long>(range.mapBytes));
  return base + range.offset;
}

}  // namespace braid::core
