// Shared memory segments: POSIX shm objects that live only as long as their
// mappings and open descriptors.
//
// createSegment makes an object under a random 128-bit name in /dev/shm with
// mode 0600 and O_EXCL, maps it and unlinks the name at once: the segment then
// exists only as the returned descriptor and mapping, which travel to the peer
// over a unix socket (SCM_RIGHTS). So no name is ever left in /dev/shm, even
// by a crash, except for the few instructions between shm_open and shm_unlink.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"
#include "transports/net/socket.h"

namespace braid::shm {

// Every name this transport creates in /dev/shm starts with this.
constexpr const char* kNamePrefix = "braid-shm-";

// A shared mapping, unmapped on destruction.
class Mapping {
 public:
  Mapping() = default;
  // populated: counted in the process's budget of populated mappings
  // (segment.cc), which reset() gives back.
  Mapping(void* addr, size_t size, bool populated = false)
      : addr_(addr), size_(size), populated_(populated) {}
  Mapping(Mapping&& other) noexcept : addr_(other.addr_), size_(other.size_), populated_(other.populated_) {
    other.addr_ = nullptr, other.size_ = 0, other.populated_ = false;
  }
  Mapping& operator=(Mapping&& other) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }
  void reset();
  void* get() const { return addr_; }
  size_t size() const { return size_; }

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
  bool populated_ = false;
};

// A new zero-filled segment of `size` bytes: *fd keeps it alive, *map maps it.
Status createSegment(size_t size, net::Fd* fd, Mapping* map);
// Maps a segment received from a peer; fails unless it is exactly `size` bytes.
Status mapSegment(int fd, size_t size, Mapping* map);

// Writes every page of `map` once through this process's mapping, without
// changing a byte (an atomic add of 0 to each page's first word, so only
// while nobody writes those words other than atomically), for memory every
// op touches. Populating a shared mapping (MAP_POPULATE) only reads the pages
// in, and on a VM that tracks each process's pages itself, as the 2-core
// Firecracker VM braid is tested on seems to, each process's first read and
// first write of a page then trap to the host, about 8 us each there, paid
// by whichever op touches the page first. Measured there: 2-rank 1 MiB
// all-to-alls and all-gathers on the shared slots took 1.5-2x their time
// over their first 64 ops (one pass through the cells), and a 20-call
// benchmark of them 1.6x, until each process wrote every page once; the
// creator writing them did not help. Not for the transport's rings: a 1 MiB
// ring per pair costs 256 traps a process at setup, for calls the
// benchmarks did not measure faster. The `members` processes that map the
// same segment each start at their own share of the pages (member's), so
// that they do not take each line from one another in step.
void writeEveryPage(const Mapping& map, int member = 0, int members = 1);

// Named segments, for a group of processes that have no unix socket between
// them to pass a descriptor: the creator makes one under a fresh random name
// (same prefix and pid as above), the others open it by that name, and the
// creator unlinks it as soon as everyone has it mapped. The name exists only
// for that window; a crash inside it leaves a name that
// removeLeftoverSegments() of a later run takes away.
Status createNamedSegment(size_t size, std::string* name, Mapping* map);
Status openNamedSegment(const std::string& name, size_t size, Mapping* map);
void unlinkSegment(const std::string& name);
// Unlinks every braid segment name in /dev/shm whose creating process (the pid
// in the name) no longer exists. Returns how many it removed.
int removeLeftoverSegments();

}  // namespace braid::shm
