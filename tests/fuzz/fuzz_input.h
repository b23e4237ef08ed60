// A cursor over a fuzz input: targets take control bytes (which parser, how
// many sockets, chunk sizes) from the front and feed the rest to the parser.
// Reading past the end yields zeros and empty spans, never an error, so every
// byte string is a valid input.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace braid::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : p_(data), left_(size) {}

  uint8_t u8() {
    if (left_ == 0) return 0;
    --left_;
    return *p_++;
  }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }
  uint64_t u64() { return u32() | (static_cast<uint64_t>(u32()) << 32); }
  // Up to n bytes (fewer at the end of the input).
  std::vector<uint8_t> take(size_t n) {
    n = std::min(n, left_);
    std::vector<uint8_t> out(p_, p_ + n);
    p_ += n, left_ -= n;
    return out;
  }
  // Exactly n bytes: what is left of the input, zero-padded. Fixed-size
  // decoders read whole buffers, so this is how a short input reaches them.
  std::vector<uint8_t> padded(size_t n) {
    std::vector<uint8_t> out = take(n);
    out.resize(n, 0);
    return out;
  }
  std::vector<uint8_t> rest() { return take(left_); }
  size_t left() const { return left_; }

 private:
  const uint8_t* p_;
  size_t left_;
};

}  // namespace braid::fuzz
