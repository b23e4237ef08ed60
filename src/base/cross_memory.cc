#include "base/cross_memory.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <random>

namespace braid {

namespace {

using CrossCopy = ssize_t (*)(pid_t, const iovec*, unsigned long, const iovec*, unsigned long, unsigned long);

int copyAcross(CrossCopy copy, pid_t pid, char* local, char* remote, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec mine{local + done, bytes - done};
    iovec theirs{remote + done, bytes - done};
    const ssize_t n = copy(pid, &mine, 1, &theirs, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EFAULT;
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

int readProcessMemory(pid_t pid, const void* remote, void* local, size_t bytes) {
  return copyAcross(process_vm_readv, pid, static_cast<char*>(local),
                    const_cast<char*>(static_cast<const char*>(remote)), bytes);
}

int writeProcessMemory(pid_t pid, void* remote, const void* local, size_t bytes) {
  return copyAcross(process_vm_writev, pid, const_cast<char*>(static_cast<const char*>(local)),
                    static_cast<char*>(remote), bytes);
}

bool probeCrossMemory(pid_t pid, const void* remote, uint64_t expected, int* err) {
  uint64_t value = 0;
  *err = readProcessMemory(pid, remote, &value, sizeof(value));
  return *err == 0 && value == expected;
}

const volatile uint64_t& processProbeWord() {
  // Not secret (a peer that may read it may read anything here): unlikely to
  // be found by chance at this address in another process.
  static const volatile uint64_t word = [] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd() ^ static_cast<uint64_t>(getpid());
  }();
  return word;
}

}  // namespace braid
