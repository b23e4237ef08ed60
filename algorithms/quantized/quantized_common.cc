#include <algorithm>

#include "algorithms/quantized/quantized.h"

namespace braid::algo {

uint8_t quantizedTagKind(Collective collective, kernels::WireFormat format) {
  // Plain collectives use their enum value (< 16) as tag kind; these live above.
  return static_cast<uint8_t>(0x80 | (static_cast<unsigned>(collective) << 2) | static_cast<unsigned>(format));
}

size_t quantizedWindow(size_t slotBytes) {
  const size_t byBytes = slotBytes ? kQuantInFlightBytes / slotBytes : kQuantMaxWindow;
  return std::clamp(byBytes, kQuantMinWindow, kQuantMaxWindow);
}

size_t quantizedChunkElems(const CollectiveArgs& a) {
  const size_t align = kernels::codecAlignment(a.codec);
  const size_t elems = a.chunkBytes / dataTypeSize(a.codec.hostType);
  return std::max(align, elems / align * align);
}

}  // namespace braid::algo
