// Little-endian encoding helpers for the bootstrap's wire formats (unique id,
// join request, root reply, peer message headers). Header-only: a writer that
// appends to a byte vector and a reader that never reads past its buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace braid::bootstrap::wire {

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void bytes(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_->insert(out_->end(), p, p + size);
  }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_->push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>* out_;
};

// Reads fixed-size fields; after any short read ok() is false and every later
// read yields zeros, so a parser checks ok() once at the end.
class Reader {
 public:
  Reader(const void* data, size_t size) : p_(static_cast<const uint8_t*>(data)), left_(size) {}
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  void bytes(void* out, size_t size) {
    if (!take(size)) {
      std::memset(out, 0, size);
      return;
    }
    std::memcpy(out, p_ - size, size);
  }
  std::string str(size_t size) {
    if (!take(size)) return {};
    return std::string(reinterpret_cast<const char*>(p_ - size), size);
  }
  bool ok() const { return ok_; }
  size_t left() const { return left_; }

 private:
  bool take(size_t size) {
    if (!ok_ || size > left_) {
      ok_ = false;
      return false;
    }
    p_ += size;
    left_ -= size;
    return true;
  }
  uint64_t le(int n) {
    if (!take(static_cast<size_t>(n))) return 0;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[i - n]) << (8 * i);
    return v;
  }
  const uint8_t* p_;
  size_t left_;
  bool ok_ = true;
};

}  // namespace braid::bootstrap::wire
