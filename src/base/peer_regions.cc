#include "base/peer_regions.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "base/shareable_memory.h"

namespace braid {

PeerRegions::~PeerRegions() {
  for (const Mapping& m : maps_) munmap(const_cast<char*>(m.base), m.bytes);
  for (const Peer& p : peers_)
    if (p.pidfd >= 0) close(p.pidfd);
}

size_t PeerRegions::mapped() const {
  std::lock_guard lock(mu_);
  return maps_.size();
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

const char* PeerRegions::locate(const Mapping& m, uint64_t address, size_t bytes) const {
  // Past the header page, and all of it inside the region.
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (address < m.ownerBase + page || address - m.ownerBase > m.bytes ||
      bytes > m.bytes - (address - m.ownerBase))
    return nullptr;
  return m.base + (address - m.ownerBase);
}

int PeerRegions::pidfdOf(pid_t pid) {
  for (const Peer& p : peers_)
    if (p.pid == pid) return p.pidfd;
#ifdef SYS_pidfd_open
  const long fd = syscall(SYS_pidfd_open, pid, 0);
  const int err = errno;
#else
  const long fd = -1;
  const int err = ENOSYS;
#endif
  if (fd < 0)
    BRAID_INFO("%s: process %d's braidMemAlloc memory is read with process_vm_readv (pidfd_open: %s)",
               user_.c_str(), static_cast<int>(pid), std::strerror(err));
  peers_.push_back({pid, fd < 0 ? -1 : static_cast<int>(fd)});
  return peers_.back().pidfd;
}

const char* PeerRegions::find(pid_t pid, uint64_t regionId, int32_t fd, uint64_t address, size_t bytes) {
  if (regionId == 0 || fd < 0) return nullptr;
  std::lock_guard lock(mu_);
  for (const Mapping& m : maps_)
    if (m.pid == pid && m.regionId == regionId) return locate(m, address, bytes);
  const int pidfd = pidfdOf(pid);
  if (pidfd < 0) return nullptr;
  releaseFreed();
  const char* base = nullptr;
  size_t mapBytes = 0;
  if (Status st = mapPeerShareable(pidfd, regionId, fd, &base, &mapBytes); !st.isOk()) {
    if (st.code() == Code::kInvalidArgument) {  // not the region announced: this call only
      BRAID_TRACE("%s: process %d's region %llu: %s", user_.c_str(), static_cast<int>(pid),
                  static_cast<unsigned long long>(regionId), st.message().c_str());
      return nullptr;
    }
    BRAID_INFO("%s: process %d's braidMemAlloc memory is read with process_vm_readv from now on (%s)",
               user_.c_str(), static_cast<int>(pid), st.message().c_str());
    for (Peer& p : peers_)
      if (p.pid == pid) {
        close(p.pidfd);
        p.pidfd = -1;
      }
    return nullptr;
  }
  const uint64_t ownerBase = shareableHeader(base).ownerBase;
  maps_.push_back({pid, regionId, base, mapBytes, ownerBase});
  BRAID_INFO("%s: reading process %d's braidMemAlloc region %llu (%zu bytes) with plain loads", user_.c_str(),
             static_cast<int>(pid), static_cast<unsigned long long>(regionId), mapBytes);
  return locate(maps_.back(), address, bytes);
}

}  // namespace braid
