#include "buffers.h"

#include <cstdlib>
#include <cstring>
#include <random>

#include "kernels/convert.h"

namespace braid::microbench {

const std::vector<size_t>& messageSizes() {
  static const std::vector<size_t> kSizes = {size_t{64} << 10, size_t{1} << 20, size_t{64} << 20};
  return kSizes;
}

std::string sizeName(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return std::to_string(bytes >> 20) + "MiB";
  return std::to_string(bytes >> 10) + "KiB";
}

Buffer::Buffer(size_t bytes) : size(bytes), ptr(nullptr, &std::free) {
  const size_t rounded = (bytes + 4095) / 4096 * 4096;
  ptr.reset(static_cast<uint8_t*>(std::aligned_alloc(4096, rounded == 0 ? 4096 : rounded)));
  std::memset(ptr.get(), 0, rounded);
}

void fillValues(Buffer& buf, size_t count, DataType type, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  uint8_t* p = buf.data();
  for (size_t i = 0; i < count; ++i) {
    const float f = dist(rng);
    switch (type) {
      case DataType::kFloat32:
        std::memcpy(p + 4 * i, &f, 4);
        break;
      case DataType::kFloat64: {
        const double d = f;
        std::memcpy(p + 8 * i, &d, 8);
        break;
      }
      case DataType::kFloat16: {
        const uint16_t h = kernels::floatToHalf(f);
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
      case DataType::kBfloat16: {
        const uint16_t b = kernels::floatToBf16(f);
        std::memcpy(p + 2 * i, &b, 2);
        break;
      }
      case DataType::kFloat8e4m3:
        p[i] = kernels::floatToE4m3(f);
        break;
      case DataType::kFloat8e5m2:
        p[i] = kernels::floatToE5m2(f);
        break;
      default: {
        const size_t n = dataTypeSize(type);
        for (size_t b = 0; b < n; ++b) p[n * i + b] = static_cast<uint8_t>(rng());
      }
    }
  }
}

void fillNormalFloats(float* out, size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) out[i] = dist(rng);
}

}  // namespace braid::microbench
