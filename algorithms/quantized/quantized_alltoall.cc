// Quantized pairwise all-to-all(v). Every block is cut into chunks of
// quantizedChunkElems(); each chunk is encoded into a send slot, sent, and on
// the other side received into a receive slot and decoded into the output.
//
// Order: chunk-major across peers. Sends go chunk 0 of the own block (encoded
// and decoded straight from the slot into the output), chunk 0 for rank r+1,
// r+2, ..., then chunk 1 for each, and so on; receives go chunk 0 from r-1,
// r-2, ..., then chunk 1. So every peer's flow advances at once, as in the
// plain pairwise exchange, instead of one peer per round: on a shaped or
// shared link no flow waits for the slowest peer of its round. Both sequences
// cycle through a window of slots (quantizedWindow), a slot reused only once
// the chunk that held it has left (send) or been decoded (receive), so at most
// a window of chunks is encoded ahead of the wire and scratch stays a few
// megabytes whatever N is.
//
// No deadlock: a message is (chunk j, distance k), the same pair on its sender
// and its receiver, and every rank issues its sends and receives in (j, k)
// order, a step waiting only for steps earlier in that order. The earliest
// unfinished message therefore always has its send and its receive posted.
//
// Pre-encoded (args.preEncoded: the GPU encodes and decodes), the same
// messages in the same order go straight from and to the caller's wire
// buffers.
#include <algorithm>
#include <string>

#include "algorithms/quantized/quantized.h"

namespace braid::algo {
namespace {

struct Block {
  size_t offset = 0;  // bytes into the caller's buffer
  size_t count = 0;   // elements
};

class AllToAllBuilder {
 public:
  AllToAllBuilder(const CollectiveArgs& a, Schedule* out)
      : a_(a), out_(out), es_(a.elemSize()), chunk_(quantizedChunkElems(a)),
        tag_(quantizedTagKind(a.collective, a.codec.format)) {}

  Status build() {
    if (a_.preEncoded) return buildPreEncoded();
    const int n = a_.nranks, r = a_.rank;
    if (sendBlock(r).count != recvBlock(r).count)
      return invalidArgument("quantized all-to-all-v: sendcounts[own rank] (" + std::to_string(sendBlock(r).count) +
                             ") differs from recvcounts[own rank] (" + std::to_string(recvBlock(r).count) + ")");
    size_t largest = 0, sendChunks = 0, recvChunks = 0;
    for (int p = 0; p < n; ++p) {
      largest = std::max({largest, sendBlock(p).count, recvBlock(p).count});
      sendChunks += chunks(sendBlock(p).count);
      if (p != r) recvChunks += chunks(recvBlock(p).count);
    }
    slotBytes_ = kernels::encodedBytes(a_.codec, std::min(largest, chunk_));
    window_ = quantizedWindow(slotBytes_);
    sendSlots_ = std::min(window_, sendChunks);
    recvSlots_ = std::min(window_, recvChunks);
    if (sendSlots_) sendScratch_ = out_->addScratch(sendSlots_ * slotBytes_);
    if (recvSlots_) recvScratch_ = out_->addScratch(recvSlots_ * slotBytes_);
    // Receives first, so the first window of them is posted before any encoding.
    size_t maxChunks = 0;
    for (int p = 0; p < n; ++p) maxChunks = std::max({maxChunks, chunks(sendBlock(p).count), chunks(recvBlock(p).count)});
    for (size_t j = 0; j < maxChunks; ++j)
      for (int k = 1; k < n; ++k) addReceive((r - k + n) % n, j);
    for (size_t j = 0; j < maxChunks; ++j)
      for (int k = 0; k < n; ++k) addSend((r + k) % n, j);
    return Status::ok();
  }

 private:
  // Wire in, wire out: the same (chunk, distance) order, each chunk sent from
  // and received into its place in the caller's wire buffers, the own block
  // copied. No slots, so no window.
  Status buildPreEncoded() {
    if (a_.collective != Collective::kAllToAll)
      return internalError("quantized all-to-all-v has no pre-encoded form");
    const int n = a_.nranks, r = a_.rank;
    const size_t blockWire = kernels::encodedBytes(a_.codec, a_.count), nChunks = chunks(a_.count);
    const Block whole{0, a_.count};
    auto wire = [&](int buffer, int p, size_t j) {
      return Region{buffer, p * blockWire + kernels::encodedBytes(a_.codec, j * chunk_),
                    kernels::encodedBytes(a_.codec, chunkCount(whole, j))};
    };
    for (size_t j = 0; j < nChunks; ++j)
      for (int k = 1; k < n; ++k)
        out_->add(recvStep((r - k + n) % n, wire(kOutput, (r - k + n) % n, j), tag_));
    for (size_t j = 0; j < nChunks; ++j)
      for (int k = 0; k < n; ++k) {
        const int p = (r + k) % n;
        out_->add(p == r ? copyStep(wire(kInput, r, j), wire(kOutput, r, j))
                         : sendStep(p, wire(kInput, p, j), tag_));
      }
    return Status::ok();
  }

  Block sendBlock(int p) const {
    if (a_.collective == Collective::kAllToAllv) return {a_.sendDispls[p] * es_, a_.sendCounts[p]};
    return {p * a_.count * es_, a_.count};
  }
  Block recvBlock(int p) const {
    if (a_.collective == Collective::kAllToAllv) return {a_.recvDispls[p] * es_, a_.recvCounts[p]};
    return {p * a_.count * es_, a_.count};
  }
  size_t chunks(size_t count) const { return (count + chunk_ - 1) / chunk_; }
  size_t chunkCount(const Block& b, size_t j) const { return std::min(chunk_, b.count - j * chunk_); }
  Region slot(int scratch, size_t g, size_t slots, size_t count) const {
    return {scratch, (g % slots) * slotBytes_, kernels::encodedBytes(a_.codec, count)};
  }
  StepId after(const std::vector<StepId>& released, size_t g) const {
    return g >= window_ ? released[g - window_] : kNoStep;
  }

  // Chunk j of the block from p, if the block has one.
  void addReceive(int p, size_t j) {
    const Block b = recvBlock(p);
    if (j >= chunks(b.count)) return;
    const size_t g = recvReleased_.size(), m = chunkCount(b, j);
    const Region wire = slot(recvScratch_, g, recvSlots_, m);
    StepId got = out_->add(recvStep(p, wire, tag_), {after(recvReleased_, g)});
    recvReleased_.push_back(
        out_->add(decodeStep(a_.codec, wire, {kOutput, b.offset + j * chunk_ * es_, m * es_}), {got}));
  }

  // Chunk j of the block for p, if the block has one.
  void addSend(int p, size_t j) {
    const Block b = sendBlock(p);
    if (j >= chunks(b.count)) return;
    const size_t g = sendReleased_.size(), m = chunkCount(b, j);
    const Region wire = slot(sendScratch_, g, sendSlots_, m);
    StepId encoded = out_->add(encodeStep(a_.codec, {kInput, b.offset + j * chunk_ * es_, m * es_}, wire),
                               {after(sendReleased_, g)});
    if (p == a_.rank) {
      const Region own{kOutput, recvBlock(p).offset + j * chunk_ * es_, m * es_};
      sendReleased_.push_back(out_->add(decodeStep(a_.codec, wire, own), {encoded}));
    } else {
      sendReleased_.push_back(out_->add(sendStep(p, wire, tag_), {encoded}));
    }
  }

  const CollectiveArgs& a_;
  Schedule* out_;
  const size_t es_, chunk_;
  const uint8_t tag_;
  size_t slotBytes_ = 0, window_ = kQuantMinWindow, sendSlots_ = 0, recvSlots_ = 0;
  int sendScratch_ = 0, recvScratch_ = 0;
  std::vector<StepId> sendReleased_, recvReleased_;  // by sequence index: the step that frees the slot
};

}  // namespace

Status buildQuantizedAllToAll(const CollectiveArgs& a, Schedule* out) {
  if (!a.quantized || (a.collective != Collective::kAllToAll && a.collective != Collective::kAllToAllv))
    return internalError("buildQuantizedAllToAll called for a non-quantized or non-all-to-all collective");
  BRAID_RETURN_IF_ERROR(kernels::checkCodecParams(a.codec));
  if (a.codec.hostType != a.dtype) return internalError("quantized all-to-all: codec host type differs from dtype");
  return AllToAllBuilder(a, out).build();
}

}  // namespace braid::algo
