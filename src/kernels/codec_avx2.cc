// codec_impl.h compiled with -mavx2 -mf16c -mfma (see CMakeLists.txt). Only
// called after cpuSupportsAvx2() said yes.
#if !defined(__AVX2__) || !defined(__F16C__)
#error "codec_avx2.cc must be compiled with -mavx2 -mf16c"
#endif

#include "kernels/codec_impl.h"

namespace braid::kernels {

const CodecTable* avx2Codecs() {
  static constexpr CodecTable kTable = makeCodecTable("avx2+f16c");
  return &kTable;
}

}  // namespace braid::kernels
