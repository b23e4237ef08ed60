#include "base/cross_memory.h"

#include <sys/uio.h>

#include <cerrno>

namespace braid {

int readProcessMemory(pid_t pid, const void* remote, void* local, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec to{static_cast<char*>(local) + done, bytes - done};
    iovec from{const_cast<char*>(static_cast<const char*>(remote)) + done, bytes - done};
    const ssize_t n = process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EFAULT;
    done += static_cast<size_t>(n);
  }
  return 0;
}

bool probeCrossMemory(pid_t pid, const void* remote, uint64_t expected, int* err) {
  uint64_t value = 0;
  *err = readProcessMemory(pid, remote, &value, sizeof(value));
  return *err == 0 && value == expected;
}

}  // namespace braid
