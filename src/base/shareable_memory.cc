#include "base/shareable_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>

#include "base/log.h"

namespace braid {

namespace {

struct Region {
  char* base;  // the header page
  size_t mapBytes;
  uint64_t id;
};

// Every live region, by the user's pointer. Collectives look their inputs
// up here (a shared lock), while user threads allocate and free.
struct Registry {
  std::shared_mutex mu;
  std::map<uintptr_t, Region> byUserBegin;
  // The shareable file: made at an allocation when there is none, closed
  // when its last region is freed, so that a process holds no descriptor
  // while it uses no shareable memory (a communicator's blocks included).
  int fd = -1;
  // Where the next region starts. It goes on across files: a region's id is
  // never given out again in this process, so that a peer's mapping of a
  // freed region never passes for a later one.
  uint64_t nextOffset = 0;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: frees may run in static destructors
  return *r;
}

// The region whose header page starts at `offset` of the file, and back.
uint64_t regionIdAt(uint64_t offset) { return offset / pageBytes() + 1; }
bool regionOffset(uint64_t regionId, uint64_t* offset) {
  return regionId != 0 && !__builtin_mul_overflow(regionId - 1, uint64_t{pageBytes()}, offset);
}

}  // namespace

size_t pageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

Status allocateShareable(size_t bytes, void** out) {
  const size_t page = pageBytes();
  if (bytes == 0) return invalidArgument("size is 0");
  // Whole pages, plus the header's.
  if (bytes > (SIZE_MAX >> 2)) return invalidArgument("size " + std::to_string(bytes) + " is too large");
  const size_t mapBytes = (bytes + page - 1) / page * page + page;
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  if (r.fd < 0) {
    const int fd = static_cast<int>(syscall(SYS_memfd_create, "braid-shareable", MFD_CLOEXEC));
    if (fd < 0) return systemError("memfd_create", errno);
    r.fd = fd;
  }
  const uint64_t offset = r.nextOffset;
  uint64_t end = 0;
  if (__builtin_add_overflow(offset, uint64_t{mapBytes}, &end) || end > uint64_t{INT64_MAX})
    return invalidArgument("the shareable file's offsets are used up");
  // The file grows by every region and never shrinks (freed regions, and
  // the offsets of the files before it, are holes, which cost nothing).
  if (ftruncate(r.fd, static_cast<off_t>(end)) != 0)
    return systemError("growing the shareable file to " + std::to_string(end) + " bytes", errno);
  void* base = mmap(nullptr, mapBytes, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, static_cast<off_t>(offset));
  if (base == MAP_FAILED)
    return systemError("mmap of " + std::to_string(mapBytes) + " shareable bytes", errno);
  r.nextOffset = end;
  const uint64_t id = regionIdAt(offset);
  new (base)
      ShareableRegionHeader{ShareableRegionHeader::kMagic,     id,       static_cast<uint64_t>(getpid()),
                            reinterpret_cast<uintptr_t>(base), mapBytes, {0}};
  char* user = static_cast<char*>(base) + page;
  r.byUserBegin.emplace(reinterpret_cast<uintptr_t>(user), Region{static_cast<char*>(base), mapBytes, id});
  *out = user;
  return Status::ok();
}

Status freeShareable(void* p) {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  auto it = r.byUserBegin.find(reinterpret_cast<uintptr_t>(p));
  if (it == r.byUserBegin.end())
    return invalidArgument("the pointer was not allocated by braidMemAlloc (or was freed)");
  const Region region = it->second;
  r.byUserBegin.erase(it);
  reinterpret_cast<ShareableRegionHeader*>(region.base)->freed.store(1, std::memory_order_release);
  munmap(region.base, region.mapBytes);
  // The pages go back now, whoever still maps them (or holds the file).
  // Failing that, they would live until the file's last holder lets go:
  // worth a line, not a failed free.
  uint64_t offset = 0;
  regionOffset(region.id, &offset);
  if (fallocate(r.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                static_cast<off_t>(region.mapBytes)) != 0) {
    static std::once_flag warned;
    const int err = errno;
    std::call_once(warned, [&] {
      BRAID_WARN("braidMemFree: freed shareable memory lives until its file is closed (fallocate: %s)",
                 std::strerror(err));
    });
  }
  if (r.byUserBegin.empty()) {
    close(r.fd);
    r.fd = -1;
  }
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
  return {region.id, r.fd};
}

Status takePeerShareableFile(int pidfd, int32_t fd, int* file) {
#ifdef SYS_pidfd_getfd
  if (fd < 0) return invalidArgument("not a shareable file");
  const int mine = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  if (mine < 0) return systemError("pidfd_getfd", errno);
  struct stat st {};
  if (fstat(mine, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(mine);
    return invalidArgument("the peer's descriptor " + std::to_string(fd) + " is not its shareable file");
  }
  *file = mine;
  return Status::ok();
#else
  (void)pidfd;
  (void)fd;
  (void)file;
  return notSupported("pidfd_getfd is not known to this build's headers");
#endif
}

namespace {

// Reads region `regionId`'s header from `file` into *h: false when it is
// not there (past the file's end, or a hole: a freed region).
bool readHeader(int file, uint64_t regionId, ShareableRegionHeader* h, uint64_t* offset) {
  if (!regionOffset(regionId, offset) || *offset > uint64_t{INT64_MAX}) return false;
  if (pread(file, h, sizeof(*h), static_cast<off_t>(*offset)) != static_cast<ssize_t>(sizeof(*h)))
    return false;
  return h->magic == ShareableRegionHeader::kMagic && h->regionId == regionId &&
         h->freed.load(std::memory_order_acquire) == 0;
}

}  // namespace

bool peerShareableFreed(int file, uint64_t regionId) {
  ShareableRegionHeader h{};
  uint64_t offset = 0;
  return !readHeader(file, regionId, &h, &offset);
}

Status mapPeerShareable(int file, uint64_t regionId, PeerMapping* out) {
  ShareableRegionHeader h{};
  uint64_t offset = 0;
  if (!readHeader(file, regionId, &h, &offset))
    return invalidArgument("the peer has no region " + std::to_string(regionId));
  // The size comes from the header, but the mapping must stay inside the
  // file (a read past its end would fault).
  struct stat st {};
  const size_t page = pageBytes();
  if (fstat(file, &st) != 0 || h.mapBytes < page || h.mapBytes % page != 0 ||
      h.mapBytes > static_cast<uint64_t>(st.st_size) ||
      offset > static_cast<uint64_t>(st.st_size) - h.mapBytes)
    return invalidArgument("the peer's region " + std::to_string(regionId) + " runs past its file");
  // Populated at once up to 64 MiB: faulting page by page costs a trap per
  // page on a VM; past that the reader may use a small part of a region.
  constexpr size_t kPopulateMaxBytes = size_t{64} << 20;
  const auto bytes = static_cast<size_t>(h.mapBytes);
  const int populate = bytes <= kPopulateMaxBytes ? MAP_POPULATE : 0;
  void* mapped = mmap(nullptr, bytes, PROT_READ, MAP_SHARED | populate, file, static_cast<off_t>(offset));
  if (mapped == MAP_FAILED) return systemError("mmap of a peer's region", errno);
  // The header as read before, not through the mapping: a page the owner
  // freed meanwhile would come back if read there.
  *out = {static_cast<const char*>(mapped), bytes, h.ownerBase};
  return Status::ok();
}

Status makePeerMappingWritable(const PeerMapping& mapping) {
  // The header page stays read-only: it is the owner's to write.
  const size_t page = pageBytes();
  if (mapping.bytes <= page) return invalidArgument("a peer's region without a page past its header");
  if (mprotect(const_cast<char*>(mapping.base) + page, mapping.bytes - page, PROT_READ | PROT_WRITE) != 0)
    return systemError("mprotect of a peer's region for writing", errno);
  return Status::ok();
}

Status probeShareableMapping() {
  void* p = nullptr;
  BRAID_RETURN_IF_ERROR(allocateShareable(1, &p));
  const ShareableRange range = findShareable(p, 1);
  Status st = Status::ok();
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  int file = -1;
  if (pidfd < 0) {
    st = systemError("pidfd_open", errno);
  } else if (st = takePeerShareableFile(pidfd, range.fd, &file); st.isOk()) {
    PeerMapping m;
    st = mapPeerShareable(file, range.regionId, &m);
    if (st.isOk()) munmap(const_cast<char*>(m.base), m.bytes);
    close(file);
  }
  if (pidfd >= 0) close(pidfd);
#else
  st = notSupported("pidfd_open is not known to this build's headers");
#endif
  (void)freeShareable(p);
  return st;
}

}  // namespace braid
