#include "kernels/convert.h"

#include "kernels/convert_impl.h"

namespace braid::kernels {

float halfToFloat(uint16_t h) { return decodeHalf(h); }
uint16_t floatToHalf(float f) { return encodeHalf(f); }
float bf16ToFloat(uint16_t b) { return decodeBf16(b); }
uint16_t floatToBf16(float f) { return encodeBf16(f); }
float e4m3ToFloat(uint8_t v) { return kE4m3Table.v[v]; }
uint8_t floatToE4m3(float f) { return encodeE4m3(f); }
float e5m2ToFloat(uint8_t v) { return kE5m2Table.v[v]; }
uint8_t floatToE5m2(float f) { return encodeE5m2(f); }

}  // namespace braid::kernels
