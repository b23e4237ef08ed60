#include "base/peer_regions.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "base/shareable_memory.h"

namespace braid {

PeerRegions::~PeerRegions() {
  for (const Mapping& m : maps_) munmap(const_cast<char*>(m.view.base), m.view.bytes);
  for (const PeerFile& f : files_)
    if (f.ours >= 0) close(f.ours);
}

size_t PeerRegions::mapped() const {
  std::lock_guard lock(mu_);
  return maps_.size();
}

size_t PeerRegions::made() const {
  std::lock_guard lock(mu_);
  return made_;
}

size_t PeerRegions::files() const {
  std::lock_guard lock(mu_);
  size_t held = 0;
  for (const PeerFile& f : files_) held += f.ours >= 0 ? 1 : 0;
  return held;
}

void PeerRegions::releaseFreed() {
  size_t kept = 0;
  for (const Mapping& m : maps_) {
    if (peerShareableFreed(m.file->ours, m.regionId))
      munmap(const_cast<char*>(m.view.base), m.view.bytes);
    else
      maps_[kept++] = m;
  }
  maps_.resize(kept);
}

const char* PeerRegions::locate(const Mapping& m, uint64_t address, size_t bytes) {
  // Past the header page, and all of it inside the region.
  const uint64_t page = pageBytes();
  const PeerMapping& v = m.view;
  if (address < v.ownerBase + page || address - v.ownerBase > v.bytes ||
      bytes > v.bytes - (address - v.ownerBase))
    return nullptr;
  return v.base + (address - v.ownerBase);
}

PeerRegions::PeerFile& PeerRegions::fileOf(pid_t pid, int32_t theirs) {
  for (PeerFile& f : files_)
    if (f.pid == pid && f.theirs == theirs) return f;
  // The pidfd is wanted only to take the file: the caller's call keeps the
  // pid from naming anybody else meanwhile.
  int ours = -1;
#ifdef SYS_pidfd_open
  const long pidfd = syscall(SYS_pidfd_open, pid, 0);
  Status st = pidfd < 0 ? systemError("pidfd_open", errno)
                        : takePeerShareableFile(static_cast<int>(pidfd), theirs, &ours);
  if (pidfd >= 0) close(static_cast<int>(pidfd));
#else
  Status st = notSupported("pidfd_open is not known to this build's headers");
#endif
  if (!st.isOk()) {
    ours = -1;
    BRAID_INFO("%s: process %d's braidMemAlloc memory is read with process_vm_readv (%s)", user_.c_str(),
               static_cast<int>(pid), st.message().c_str());
  }
  files_.push_back({pid, theirs, ours});
  return files_.back();
}

bool PeerRegions::retake(PeerFile* file) {
  // The peer closed the file it had when its last region was freed, and
  // made another since, maybe under the same descriptor number: take that.
#ifdef SYS_pidfd_open
  const long pidfd = syscall(SYS_pidfd_open, file->pid, 0);
  if (pidfd < 0) return false;
  int now = -1;
  const Status st = takePeerShareableFile(static_cast<int>(pidfd), file->theirs, &now);
  close(static_cast<int>(pidfd));
  if (!st.isOk()) return false;
  struct stat held {
  }, taken{};
  if (fstat(file->ours, &held) != 0 || fstat(now, &taken) != 0 ||
      (held.st_dev == taken.st_dev && held.st_ino == taken.st_ino)) {
    close(now);
    return false;
  }
  // The old file's regions are all freed: its mappings go at the next
  // releaseFreed, which reads their headers in the new file (holes there).
  close(file->ours);
  file->ours = now;
  return true;
#else
  (void)file;
  return false;
#endif
}

PeerRegions::Mapping* PeerRegions::mappingOf(pid_t pid, uint64_t regionId, int32_t fd) {
  for (Mapping& m : maps_)
    if (m.file->pid == pid && m.file->theirs == fd && m.regionId == regionId) return &m;
  PeerFile& file = fileOf(pid, fd);
  if (file.ours < 0) return nullptr;
  releaseFreed();
  PeerMapping view;
  Status st = mapPeerShareable(file.ours, regionId, &view);
  if (!st.isOk() && st.code() == Code::kInvalidArgument && retake(&file))
    st = mapPeerShareable(file.ours, regionId, &view);
  if (!st.isOk()) {
    // Not the region announced (or a mapping refused): this call only.
    BRAID_TRACE("%s: process %d's region %llu: %s", user_.c_str(), static_cast<int>(pid),
                static_cast<unsigned long long>(regionId), st.message().c_str());
    return nullptr;
  }
  maps_.push_back({&file, regionId, view, false});
  ++made_;
  BRAID_INFO("%s: reading process %d's braidMemAlloc region %llu (%zu bytes) with plain loads", user_.c_str(),
             static_cast<int>(pid), static_cast<unsigned long long>(regionId), view.bytes);
  return &maps_.back();
}

const char* PeerRegions::find(pid_t pid, uint64_t regionId, int32_t fd, uint64_t address, size_t bytes) {
  if (regionId == 0 || fd < 0) return nullptr;
  std::lock_guard lock(mu_);
  const Mapping* m = mappingOf(pid, regionId, fd);
  return m == nullptr ? nullptr : locate(*m, address, bytes);
}

char* PeerRegions::findWritable(pid_t pid, uint64_t regionId, int32_t fd, uint64_t address, size_t bytes) {
  if (regionId == 0 || fd < 0 || writesRefused_) return nullptr;
  std::lock_guard lock(mu_);
  Mapping* m = mappingOf(pid, regionId, fd);
  if (m == nullptr) return nullptr;
  // Read-only until a write is wanted: a stray store into a buffer that is
  // only read then faults instead of corrupting the peer.
  if (!m->writable) {
    if (Status st = makePeerMappingWritable(m->view); !st.isOk()) {
      BRAID_TRACE("%s: process %d's region %llu stays read-only: %s", user_.c_str(), static_cast<int>(pid),
                  static_cast<unsigned long long>(regionId), st.message().c_str());
      return nullptr;
    }
    m->writable = true;
  }
  return const_cast<char*>(locate(*m, address, bytes));
}

}  // namespace braid
