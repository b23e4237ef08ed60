#include "transports/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transports/net/auth.h"

namespace braid::shm {

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    reset();
    addr_ = other.addr_, size_ = other.size_;
    other.addr_ = nullptr, other.size_ = 0;
  }
  return *this;
}

void Mapping::reset() {
  if (addr_) munmap(addr_, size_);
  addr_ = nullptr, size_ = 0;
}

Status createSegment(size_t size, net::Fd* fd, Mapping* map) {
  uint8_t random[16];
  BRAID_RETURN_IF_ERROR(net::randomBytes(random, sizeof(random)));
  static const char kHex[] = "0123456789abcdef";
  char hex[2 * sizeof(random) + 1] = {};
  for (size_t i = 0; i < sizeof(random); ++i) hex[2 * i] = kHex[random[i] >> 4], hex[2 * i + 1] = kHex[random[i] & 15];
  // The creator's pid in the name lets a cleanup check tell a leftover (its
  // creator is gone) from another live process's segment in its one-instant
  // window between shm_open and shm_unlink.
  std::string name = std::string("/") + kNamePrefix + std::to_string(getpid()) + "-" + hex;
  int raw = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (raw < 0) return systemError("shm: shm_open(" + name + ")", errno);
  shm_unlink(name.c_str());  // from here on only the descriptor keeps it alive
  net::Fd owned(raw);
  if (ftruncate(raw, static_cast<off_t>(size)) != 0)
    return systemError("shm: ftruncate of a " + std::to_string(size) + "-byte segment (is /dev/shm full?)", errno);
  BRAID_RETURN_IF_ERROR(mapSegment(raw, size, map));
  *fd = std::move(owned);
  return Status::ok();
}

Status mapSegment(int fd, size_t size, Mapping* map) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return systemError("shm: fstat of a received segment", errno);
  if (!S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) != size)
    return remoteError("shm: the peer's segment has " + std::to_string(st.st_size) + " bytes, expected " +
                       std::to_string(size));
  void* addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return systemError("shm: mmap of a " + std::to_string(size) + "-byte segment", errno);
  *map = Mapping(addr, size);
  return Status::ok();
}

}  // namespace braid::shm
