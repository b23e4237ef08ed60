// Hints to the CPU that have no effect on results: pauses in spin loops, and
// when cache lines move.
#pragma once

namespace braid {

// A cheap pause inside spin loops.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Starts fetching the cache line at p in a state this core may write
// (x86 PREFETCHW; a no-op on cores without it), so that a store to a line a
// peer core last read need not wait for the line to come over.
inline void prefetchForWrite(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace braid
