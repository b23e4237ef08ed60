// kernels::copyStreaming (kernels/stream_copy.h) copies exactly what memcpy
// does, for every alignment of either side and every length around the
// points where it switches between memcpy and streaming stores, and touches
// nothing outside the destination.
#include "kernels/stream_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace braid::kernels {
namespace {

constexpr size_t kGuard = 128;  // bytes checked untouched on both sides

std::vector<uint8_t> pattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>((i * 2654435761u + seed) >> 13);
  return v;
}

// Copies `bytes` from a source at offset srcShift to a destination at offset
// dstShift (both from 64-byte aligned bases) and checks the whole area.
void checkCopy(size_t bytes, size_t srcShift, size_t dstShift) {
  const std::vector<uint8_t> src = pattern(bytes + 64, 7);
  alignas(64) static uint8_t area[2 * kGuard + 64 + 4096 + 64];
  std::vector<uint8_t> big;
  uint8_t* base = area;
  if (2 * kGuard + dstShift + bytes > sizeof(area)) {
    big.resize(2 * kGuard + 64 + bytes + 64);
    base = big.data() + (64 - reinterpret_cast<uintptr_t>(big.data()) % 64) % 64;
  }
  const size_t total = 2 * kGuard + dstShift + bytes;
  for (size_t i = 0; i < total; ++i) base[i] = 0xa5;
  uint8_t* dst = base + kGuard + dstShift;
  copyStreaming(dst, src.data() + srcShift, bytes);
  for (size_t i = 0; i < kGuard + dstShift; ++i)
    ASSERT_EQ(base[i], 0xa5) << "wrote before the destination: bytes " << bytes << " shifts " << srcShift
                             << "/" << dstShift;
  for (size_t i = 0; i < bytes; ++i)
    ASSERT_EQ(dst[i], src[srcShift + i])
        << "byte " << i << " of " << bytes << " shifts " << srcShift << "/" << dstShift;
  for (size_t i = 0; i < kGuard; ++i)
    ASSERT_EQ(dst[bytes + i], 0xa5) << "wrote after the destination: bytes " << bytes << " shifts "
                                    << srcShift << "/" << dstShift;
}

TEST(StreamCopy, EveryAlignmentAndLengthAroundTheSwitches) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{127}, size_t{128}, size_t{129},
                       size_t{191}, size_t{192}, size_t{255}, size_t{256}, size_t{1000}, size_t{4096}})
    for (size_t srcShift = 0; srcShift < 64; srcShift += 3)
      for (size_t dstShift = 0; dstShift < 64; ++dstShift) checkCopy(bytes, srcShift, dstShift);
}

TEST(StreamCopy, LargeCopies) {
  for (size_t bytes : {size_t{1} << 20, (size_t{3} << 20) + 17}) {
    checkCopy(bytes, 0, 0);
    checkCopy(bytes, 5, 33);
  }
}

}  // namespace
}  // namespace braid::kernels
