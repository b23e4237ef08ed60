#include "transports/shm/segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "base/shareable_memory.h"  // pageBytes
#include "transports/net/auth.h"

namespace braid::shm {

namespace {

// Mappings are populated (MAP_POPULATE: every page faulted in at setup, in
// one batch) until this process has populated this many bytes. Left to fault
// on first use, a 1 MiB ring costs about 0.8 ms of page faults on its first
// pass, paid by the first calls (measured: a 2-rank 64 KiB all-gather over
// shm took 45 us a call in its first 20 calls, 8 us after). The budget bounds
// what many local ranks' all-pairs rings commit up front when most pairs may
// never carry much (64 ranks: 126 ring mappings each); past it, pages fault
// in as before.
constexpr size_t kPopulateBudgetBytes = size_t{64} << 20;
std::atomic<size_t> populatedBytes{0};

bool takeFromPopulateBudget(size_t size) {
  size_t used = populatedBytes.load(std::memory_order_relaxed);
  do {
    if (used + size > kPopulateBudgetBytes) return false;
  } while (!populatedBytes.compare_exchange_weak(used, used + size, std::memory_order_relaxed));
  return true;
}

void returnToPopulateBudget(size_t size) { populatedBytes.fetch_sub(size, std::memory_order_relaxed); }

}  // namespace

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    reset();
    addr_ = other.addr_, size_ = other.size_, populated_ = other.populated_;
    other.addr_ = nullptr, other.size_ = 0, other.populated_ = false;
  }
  return *this;
}

void Mapping::reset() {
  if (addr_) munmap(addr_, size_);
  if (populated_) returnToPopulateBudget(size_);
  addr_ = nullptr, size_ = 0, populated_ = false;
}

namespace {

// The creator's pid in the name lets a cleanup check tell a leftover (its
// creator is gone) from another live process's segment in its short window
// between shm_open and shm_unlink.
Status freshName(std::string* name) {
  uint8_t random[16];
  BRAID_RETURN_IF_ERROR(net::randomBytes(random, sizeof(random)));
  static const char kHex[] = "0123456789abcdef";
  char hex[2 * sizeof(random) + 1] = {};
  for (size_t i = 0; i < sizeof(random); ++i) hex[2 * i] = kHex[random[i] >> 4], hex[2 * i + 1] = kHex[random[i] & 15];
  *name = std::string("/") + kNamePrefix + std::to_string(getpid()) + "-" + hex;
  return Status::ok();
}

// Creates the object `name` (exclusive, 0600) of `size` zero bytes.
Status createObject(const std::string& name, size_t size, net::Fd* fd) {
  int raw = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (raw < 0) return systemError("shm: shm_open(" + name + ")", errno);
  net::Fd owned(raw);
  if (ftruncate(raw, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    shm_unlink(name.c_str());
    return systemError("shm: ftruncate of a " + std::to_string(size) + "-byte segment (is /dev/shm full?)",
                       err);
  }
  *fd = std::move(owned);
  return Status::ok();
}

}  // namespace

Status createSegment(size_t size, net::Fd* fd, Mapping* map) {
  std::string name;
  BRAID_RETURN_IF_ERROR(freshName(&name));
  net::Fd owned;
  BRAID_RETURN_IF_ERROR(createObject(name, size, &owned));
  shm_unlink(name.c_str());  // from here on only the descriptor keeps it alive
  BRAID_RETURN_IF_ERROR(mapSegment(owned.get(), size, map));
  *fd = std::move(owned);
  return Status::ok();
}

Status createNamedSegment(size_t size, std::string* name, Mapping* map) {
  std::string fresh;
  BRAID_RETURN_IF_ERROR(freshName(&fresh));
  net::Fd fd;
  BRAID_RETURN_IF_ERROR(createObject(fresh, size, &fd));
  Status mapped = mapSegment(fd.get(), size, map);
  if (!mapped.isOk()) {
    shm_unlink(fresh.c_str());
    return mapped;
  }
  *name = std::move(fresh);
  return Status::ok();  // the mapping keeps it alive once fd closes
}

Status openNamedSegment(const std::string& name, size_t size, Mapping* map) {
  if (name.rfind(std::string("/") + kNamePrefix, 0) != 0 || name.find('/', 1) != std::string::npos)
    return invalidArgument("shm: '" + name + "' is not a braid segment name");
  int raw = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (raw < 0) return systemError("shm: shm_open(" + name + ") of a peer's segment", errno);
  net::Fd fd(raw);
  return mapSegment(fd.get(), size, map);
}

void unlinkSegment(const std::string& name) { shm_unlink(name.c_str()); }

int removeLeftoverSegments() {
  DIR* dir = opendir("/dev/shm");
  if (!dir) return 0;
  int removed = 0;
  const std::string prefix = kNamePrefix;
  while (dirent* e = readdir(dir)) {
    const std::string entry = e->d_name;
    if (entry.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(entry.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || end == nullptr || *end != '-') continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    if (shm_unlink(("/" + entry).c_str()) == 0) ++removed;
  }
  closedir(dir);
  return removed;
}

void writeEveryPage(const Mapping& map, int member, int members) {
  const size_t page = pageBytes();
  auto* bytes = static_cast<unsigned char*>(map.get());  // page-aligned, as mmap returns it
  const size_t pages = map.size() / page + (map.size() % page >= sizeof(uint32_t) ? 1 : 0);
  const size_t firstPage =
      members > 0 && member > 0 ? pages * static_cast<size_t>(member) / static_cast<size_t>(members) : 0;
  for (size_t i = 0; i < pages; ++i) {
    const size_t at = (firstPage + i) % pages * page;
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(bytes + at))
        .fetch_add(0, std::memory_order_relaxed);
  }
}

Status mapSegment(int fd, size_t size, Mapping* map) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return systemError("shm: fstat of a received segment", errno);
  if (!S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) != size)
    return remoteError("shm: the peer's segment has " + std::to_string(st.st_size) + " bytes, expected " +
                       std::to_string(size));
  const bool populate = takeFromPopulateBudget(size);
  void* addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
  if (addr == MAP_FAILED) {
    const int err = errno;
    if (populate) returnToPopulateBudget(size);
    return systemError("shm: mmap of a " + std::to_string(size) + "-byte segment", err);
  }
  *map = Mapping(addr, size, populate);
  return Status::ok();
}

}  // namespace braid::shm
