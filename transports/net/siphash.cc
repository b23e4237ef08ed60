// SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012),
// constant-time comparison and getrandom-based nonces.
#include <sys/random.h>

#include <cstring>

#include "transports/net/auth.h"

namespace braid::net {
namespace {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline uint64_t load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

struct State {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
    v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
  }
  void compress(uint64_t m) {
    v3 ^= m;
    round(), round();  // c = 2
    v0 ^= m;
  }
};

}  // namespace

uint64_t sipHash24(const transport::Secret& key, const void* data, size_t size) {
  const uint64_t k0 = load64(key.data()), k1 = load64(key.data() + 8);
  State s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
          k1 ^ 0x7465646279746573ULL};
  const uint8_t* p = static_cast<const uint8_t*>(data);
  size_t full = size & ~size_t{7};
  for (size_t i = 0; i < full; i += 8) s.compress(load64(p + i));
  // Last block: the remaining bytes, with the length mod 256 in the top byte.
  uint64_t last = static_cast<uint64_t>(size & 0xff) << 56;
  for (size_t i = 0; i < (size & 7); ++i) last |= static_cast<uint64_t>(p[full + i]) << (8 * i);
  s.compress(last);
  s.v2 ^= 0xff;
  s.round(), s.round(), s.round(), s.round();  // d = 4
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

bool constantTimeEqual(const void* a, const void* b, size_t size) {
  // volatile keeps the compiler from turning this into an early-exit memcmp.
  const volatile uint8_t* x = static_cast<const volatile uint8_t*>(a);
  const volatile uint8_t* y = static_cast<const volatile uint8_t*>(b);
  uint8_t diff = 0;
  for (size_t i = 0; i < size; ++i) diff |= x[i] ^ y[i];
  return diff == 0;
}

Status randomBytes(void* out, size_t size) {
  uint8_t* p = static_cast<uint8_t*>(out);
  while (size > 0) {
    ssize_t n = getrandom(p, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return systemError("getrandom", errno);
    }
    p += n, size -= n;
  }
  return Status::ok();
}

}  // namespace braid::net
