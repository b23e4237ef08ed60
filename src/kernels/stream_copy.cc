#include "kernels/stream_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace braid::kernels {

void copyStreaming(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
  // SSE2 is part of x86-64, so no dispatch: 16-byte streaming stores fill the
  // same write-combining line buffers as wider ones.
  constexpr size_t kUnroll = 64;  // one cache line per iteration
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (bytes < 2 * kUnroll) {
    std::memcpy(d, s, bytes);
    return;
  }
  const size_t head = (kUnroll - reinterpret_cast<uintptr_t>(d) % kUnroll) % kUnroll;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  const size_t body = bytes - bytes % kUnroll;
  for (size_t i = 0; i < body; i += kUnroll) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + body, s + body, bytes - body);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace braid::kernels
