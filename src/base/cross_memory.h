// Reads and writes another process's memory with process_vm_readv / writev
// (cross-memory attach): one copy, between its pages and ours, done by the
// kernel. The shm transport moves large messages this way (pulled by the
// receiver or pushed by the sender), and the shared slots pull all-to-all
// blocks (core/slot_collectives.h).
//
// The kernel allows it when we could ptrace the process (same user and no
// Yama restriction, or CAP_SYS_PTRACE); containers often forbid it, so every
// user probes first (probeCrossMemory) and keeps another path.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace braid {

// Copies `bytes` from `remote` in process `pid` to `local`, looping over
// partial reads and EINTR. Returns 0, or the errno of the read that failed
// (EFAULT for a read that made no progress: the remote range ends early).
int readProcessMemory(pid_t pid, const void* remote, void* local, size_t bytes);

// Copies `bytes` from `local` to `remote` in process `pid`; as above.
int writeProcessMemory(pid_t pid, void* remote, const void* local, size_t bytes);

// Whether process `pid` holds `expected` at `remote`: true only when the read
// is allowed and finds it (a recycled pid or another pid namespace does not).
// *err gets the errno of a refused read, 0 otherwise.
// The kernel grants writes on the same terms as reads, so one probe covers both.
bool probeCrossMemory(pid_t pid, const void* remote, uint64_t expected, int* err);

// A word with a random value, the same for the life of this process, for peers
// to probe: its address and value go in a handshake.
const volatile uint64_t& processProbeWord();

}  // namespace braid
