// Copies whose destination bypasses the caches. A plain memcpy into memory
// that is not in cache first reads every destination line (the store must own
// it), so a copy of N bytes moves 3N over the memory bus; streaming stores
// write whole lines without reading them: 2N. Collectives whose outputs are
// far larger than the last-level cache are bound by that bus (on the 2-core
// VM every library sits at the same busbw from 16 MiB), so their copy-outs
// stream. Into memory that is read again soon, or that fits the cache, a
// plain memcpy is faster: the caller decides (core/slot_collectives.h).
#pragma once

#include <cstddef>

namespace braid::kernels {

// memcpy(dst, src, bytes) with streaming (non-temporal) stores on x86-64 for
// all but an unaligned head and a short tail; a plain memcpy elsewhere. The
// buffers must not overlap. Ends with a store fence, so that the bytes are
// visible to another thread or process before any later store (a flag saying
// they are there): streaming stores are not ordered with ordinary ones.
void copyStreaming(void* dst, const void* src, size_t bytes);

}  // namespace braid::kernels
