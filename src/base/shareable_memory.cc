#include "base/shareable_memory.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>

namespace braid {

namespace {

struct Region {
  char* base;  // the header page
  size_t mapBytes;
  int fd;
  uint64_t id;
};

// Every live region, by the user's pointer. Collectives look their inputs
// up here (a shared lock), while user threads allocate and free.
struct Registry {
  std::shared_mutex mu;
  std::map<uintptr_t, Region> byUserBegin;
  uint64_t lastId = 0;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: frees may run in static destructors
  return *r;
}

size_t pageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

Status allocateShareable(size_t bytes, void** out) {
  const size_t page = pageBytes();
  if (bytes == 0) return invalidArgument("size is 0");
  // Whole pages, plus the header's.
  if (bytes > (SIZE_MAX >> 2)) return invalidArgument("size " + std::to_string(bytes) + " is too large");
  const size_t mapBytes = (bytes + page - 1) / page * page + page;
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "braid-shareable", MFD_CLOEXEC));
  if (fd < 0) return systemError("memfd_create", errno);
  if (ftruncate(fd, static_cast<off_t>(mapBytes)) != 0) {
    const int err = errno;
    close(fd);
    return systemError("ftruncate of a " + std::to_string(mapBytes) + "-byte memfd", err);
  }
  void* base = mmap(nullptr, mapBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return systemError("mmap of a " + std::to_string(mapBytes) + "-byte memfd", err);
  }
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  const uint64_t id = ++r.lastId;
  new (base) ShareableRegionHeader{ShareableRegionHeader::kMagic,
                                   id,
                                   static_cast<uint64_t>(getpid()),
                                   reinterpret_cast<uintptr_t>(base),
                                   {0}};
  char* user = static_cast<char*>(base) + page;
  r.byUserBegin.emplace(reinterpret_cast<uintptr_t>(user),
                        Region{static_cast<char*>(base), mapBytes, fd, id});
  *out = user;
  return Status::ok();
}

Status freeShareable(void* p) {
  Registry& r = registry();
  Region region;
  {
    std::unique_lock lock(r.mu);
    auto it = r.byUserBegin.find(reinterpret_cast<uintptr_t>(p));
    if (it == r.byUserBegin.end())
      return invalidArgument("the pointer was not allocated by braidMemAlloc (or was freed)");
    region = it->second;
    r.byUserBegin.erase(it);
  }
  // Readers that still map the region see the flag and let it go; the
  // memory lives until the last of them does.
  reinterpret_cast<ShareableRegionHeader*>(region.base)->freed.store(1, std::memory_order_release);
  munmap(region.base, region.mapBytes);
  close(region.fd);
  return Status::ok();
}

ShareableRange findShareable(const void* p, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  auto it = r.byUserBegin.upper_bound(begin);
  if (it == r.byUserBegin.begin()) return {};
  --it;
  const Region& region = it->second;
  const uintptr_t regionBegin = reinterpret_cast<uintptr_t>(region.base);
  const size_t offset = begin - regionBegin;
  if (offset > region.mapBytes || bytes > region.mapBytes - offset) return {};
  return {region.id, region.fd, region.mapBytes, offset};
}

Status mapPeerShareable(int pidfd, uint64_t regionId, int32_t fd, const char** base, size_t* mapBytes) {
  if (regionId == 0 || fd < 0) return invalidArgument("not a shareable region");
#ifdef SYS_pidfd_getfd
  const int mine = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  if (mine < 0) return systemError("pidfd_getfd", errno);
  auto notTheRegion = [&] {
    return invalidArgument("the peer's descriptor " + std::to_string(fd) + " is not its region " +
                           std::to_string(regionId));
  };
  // The size comes from the descriptor, so the mapping never runs past the
  // file (a read there would fault).
  struct stat st {};
  const size_t page = pageBytes();
  if (fstat(mine, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < static_cast<off_t>(page) ||
      static_cast<uint64_t>(st.st_size) % page != 0) {
    close(mine);
    return notTheRegion();
  }
  const auto bytes = static_cast<size_t>(st.st_size);
  // Populated at once up to 64 MiB: faulting page by page costs a trap per
  // page on a VM; past that the reader may use a small part of a region.
  constexpr size_t kPopulateMaxBytes = size_t{64} << 20;
  const int populate = bytes <= kPopulateMaxBytes ? MAP_POPULATE : 0;
  void* mapped = mmap(nullptr, bytes, PROT_READ, MAP_SHARED | populate, mine, 0);
  const int err = errno;
  close(mine);
  if (mapped == MAP_FAILED) return systemError("mmap of a peer's region", err);
  const auto& header = shareableHeader(static_cast<const char*>(mapped));
  if (header.magic != ShareableRegionHeader::kMagic || header.regionId != regionId ||
      header.freed.load(std::memory_order_acquire) != 0) {
    munmap(mapped, bytes);
    return notTheRegion();
  }
  *base = static_cast<const char*>(mapped);
  *mapBytes = bytes;
  return Status::ok();
#else
  (void)pidfd;
  (void)base;
  (void)mapBytes;
  return notSupported("pidfd_getfd is not known to this build's headers");
#endif
}

Status probeShareableMapping() {
  void* p = nullptr;
  BRAID_RETURN_IF_ERROR(allocateShareable(1, &p));
  const ShareableRange range = findShareable(p, 1);
  Status st = Status::ok();
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (pidfd < 0) {
    st = systemError("pidfd_open", errno);
  } else {
    const char* base = nullptr;
    size_t bytes = 0;
    st = mapPeerShareable(pidfd, range.regionId, range.fd, &base, &bytes);
    if (st.isOk()) munmap(const_cast<char*>(base), bytes);
    close(pidfd);
  }
#else
  st = notSupported("pidfd_open is not known to this build's headers");
#endif
  (void)freeShareable(p);
  return st;
}

}  // namespace braid
