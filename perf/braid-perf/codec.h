// Reading and writing elements of every braid datatype as small integers.
//
// braid-perf only ever stores integers that the type represents exactly, so
// the encoders here are exact by construction and refuse anything else; they
// need no rounding logic. The decoders are complete (subnormals, inf, NaN) so
// that whatever the library wrote can be compared with the expected integer.
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace braid::perf {

// True when v is exactly representable in type (for the 64-bit integer
// types: when it fits; uint64 values are limited to int64_t's range).
bool isRepresentable(braidDataType_t type, int64_t v);

// buf[index] = v. Precondition: isRepresentable(type, v).
void storeInt(void* buf, size_t index, braidDataType_t type, int64_t v);

// The integer held by buf[index], or std::nullopt when it is not an integer
// in int64_t's range (NaN, inf, a fraction, a huge uint64).
std::optional<int64_t> loadInt(const void* buf, size_t index, braidDataType_t type);

// Fills count elements with a value no check ever expects: NaN for floats,
// the type's minimum for signed integers, its maximum for unsigned ones.
void fillPoison(void* buf, size_t count, braidDataType_t type);

// Bit-level codecs of the small float formats, exposed for the unit tests.
// encodeSmallFloat returns std::nullopt when v is not exactly representable.
std::optional<uint16_t> encodeSmallFloat(braidDataType_t type, int64_t v);
double decodeSmallFloat(braidDataType_t type, uint16_t bits);

}  // namespace braid::perf
