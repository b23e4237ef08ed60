// Where the trainer's exchange buffers live: braidMemAlloc memory by default,
// which the other ranks on this host read through mappings of it (the
// all-to-alls' large blocks without a system call per transfer: README,
// "Launching"), or the heap (--memory host). Results are the same either way.
#pragma once

#include <braid/braid.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace braid::trainer {

template <typename T>
class ExchangeAllocator {
 public:
  using value_type = T;
  explicit ExchangeAllocator(bool shareable = false) : shareable_(shareable) {}
  template <typename U>
  ExchangeAllocator(const ExchangeAllocator<U>& other)
      : shareable_(other.shareable()) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    if (!shareable_) return std::allocator<T>().allocate(n);
    void* p = nullptr;
    if (n > SIZE_MAX / sizeof(T) || braidMemAlloc(&p, std::max<size_t>(1, n * sizeof(T))) != braidSuccess)
      throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (shareable_)
      (void)braidMemFree(p);
    else
      std::allocator<T>().deallocate(p, n);
  }
  bool shareable() const { return shareable_; }
  friend bool operator==(const ExchangeAllocator& a, const ExchangeAllocator& b) {
    return a.shareable_ == b.shareable_;
  }

 private:
  bool shareable_;
};

template <typename T>
using ExchangeBuffer = std::vector<T, ExchangeAllocator<T>>;

}  // namespace braid::trainer
