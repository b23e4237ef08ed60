// The portable codecs: codec_impl.h under the build's default flags.
#include "kernels/codec_impl.h"

namespace braid::kernels {

const CodecTable& baselineCodecs() {
  static constexpr CodecTable kTable = makeCodecTable("baseline");
  return kTable;
}

}  // namespace braid::kernels
