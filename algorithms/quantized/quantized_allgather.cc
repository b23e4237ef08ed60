// Quantized ring all-gather. Each rank encodes its block once, chunk by
// chunk, into its slot of a wire-format copy of the whole gathered vector;
// the ring then moves encoded chunks (r -> r+1, N-1 rounds), each rank
// forwarding what it received without decoding and re-encoding it, and
// decoding every chunk into the output as it lands. The own block is decoded
// from its encoding too, so all ranks hold identical outputs.
//
// Pipelining: encoding chunk j + window (quantizedWindow) waits for chunk j's first send,
// so encoding interleaves with the wire; a chunk is forwarded as soon as it
// has arrived, and decoded while later chunks are still in flight.
//
// Scratch: the wire copy, N * encodedBytes(sendcount) bytes (half the
// output for fp16 / bf16 from fp32, about a quarter for fp8).
//
// Pre-encoded (args.preEncoded: the GPU encodes and decodes): the input is
// the own block's wire and the output the wire copy itself; the steps are
// the same but for the codec's.
#include <algorithm>
#include <vector>

#include "algorithms/quantized/quantized.h"

namespace braid::algo {

Status buildQuantizedAllGather(const CollectiveArgs& a, Schedule* out) {
  if (!a.quantized || a.collective != Collective::kAllGather)
    return internalError("buildQuantizedAllGather called for a non-quantized or non-all-gather collective");
  BRAID_RETURN_IF_ERROR(kernels::checkCodecParams(a.codec));
  if (a.codec.hostType != a.dtype) return internalError("quantized all-gather: codec host type differs from dtype");
  const int n = a.nranks, r = a.rank;
  const size_t es = a.elemSize(), chunk = quantizedChunkElems(a);
  const size_t nChunks = (a.count + chunk - 1) / chunk;
  if (nChunks == 0) return Status::ok();
  const size_t slotBytes = kernels::encodedBytes(a.codec, a.count);
  // Pre-encoded: the output is the wire copy, and the own block's wire the input.
  const int wire = a.preEncoded ? kOutput : out->addScratch(n * slotBytes);
  const uint8_t tag = quantizedTagKind(a.collective, a.codec.format);
  const int next = (r + 1) % n, prev = (r - 1 + n) % n;
  const size_t window = quantizedWindow(kernels::encodedBytes(a.codec, std::min(chunk, a.count)));

  auto elems = [&](size_t j) { return std::min(chunk, a.count - j * chunk); };
  auto wireChunk = [&](int owner, size_t j) {
    return Region{wire, owner * slotBytes + kernels::encodedBytes(a.codec, j * chunk),
                  kernels::encodedBytes(a.codec, elems(j))};
  };
  auto outputChunk = [&](int owner, size_t j) {
    return Region{kOutput, (owner * a.count + j * chunk) * es, elems(j) * es};
  };

  // Own block: encode, decode into place, first send.
  std::vector<StepId> firstSend(nChunks, kNoStep);
  for (size_t j = 0; a.preEncoded && j < nChunks; ++j) {
    const Region own = wireChunk(r, j);
    StepId copied = out->add(copyStep({kInput, own.offset - r * slotBytes, own.bytes}, own));
    if (n > 1) out->add(sendStep(next, own, tag), {copied});
  }
  for (size_t j = 0; !a.preEncoded && j < nChunks; ++j) {
    StepId slot = j >= window ? firstSend[j - window] : kNoStep;
    // In place (input == own output block) is safe: chunk j's decode waits for
    // its encode, and nothing reads input chunk j afterwards.
    StepId encoded = out->add(encodeStep(a.codec, {kInput, j * chunk * es, elems(j) * es}, wireChunk(r, j)), {slot});
    out->add(decodeStep(a.codec, wireChunk(r, j), outputChunk(r, j)), {encoded});
    if (n > 1) firstSend[j] = out->add(sendStep(next, wireChunk(r, j), tag), {encoded});
    else firstSend[j] = encoded;
  }
  // Round s: receive the block of rank r-s-1 from prev, decode it, and pass it
  // on in round s+1 (the block of rank r-(N-1) is the last and is not passed).
  for (int s = 0; s + 1 < n; ++s) {
    const int owner = (r - s - 1 + n) % n;
    for (size_t j = 0; j < nChunks; ++j) {
      StepId got = out->add(recvStep(prev, wireChunk(owner, j), tag));
      if (!a.preEncoded) out->add(decodeStep(a.codec, wireChunk(owner, j), outputChunk(owner, j)), {got});
      if (s + 2 < n) out->add(sendStep(next, wireChunk(owner, j), tag), {got});
    }
  }
  return Status::ok();
}

}  // namespace braid::algo
