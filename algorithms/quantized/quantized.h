// Quantized collectives: all-to-all(v) and all-gather whose values cross the
// wire in a narrower format (kernels/codec.h), encoded and decoded inside the
// schedule so that the three stages overlap chunk by chunk: while chunk j is
// on the wire, chunk j+1 is being encoded and chunk j-1 decoded. Never a
// convert-all, send-all, convert-all sequence.
//
// Result contract: every rank's output equals decode(encode(x)) of the value
// the owner sent, bit for bit, whatever the rank count, chunking or transport
// (the wire adds no error beyond the codec's; all-gather forwards encoded
// bytes without re-encoding). The own block goes through the codec too, so
// every rank sees the same numbers.
//
// These are not in the algorithm registry: the API calls them directly when a
// codec is asked for, since the tuner's choices are for plain collectives.
#pragma once

#include "algorithms/collective.h"
#include "algorithms/schedule.h"

namespace braid::algo {

// Encoded chunks in flight per direction: encoding chunk j + window waits
// until chunk j has left, which bounds scratch and forces the executor to
// interleave encoding with progress on the wire. The window must still hold
// a link's bandwidth-delay product, or the codec's saving is lost to a
// stalled pipe (1 Gbit/s behind a few ms of queue needs about a megabyte in
// flight): so about kQuantInFlightBytes of wire, at least kQuantMinWindow
// chunks.
constexpr size_t kQuantMinWindow = 4;
constexpr size_t kQuantMaxWindow = 256;
constexpr size_t kQuantInFlightBytes = 4u << 20;
size_t quantizedWindow(size_t slotBytes);

// Wire tag kind of a quantized collective: distinct per collective and wire
// format, so ranks that disagree on the codec fail with a tag mismatch
// instead of decoding each other's bytes as the wrong format.
uint8_t quantizedTagKind(Collective collective, kernels::WireFormat format);

// Elements per pipelined chunk: chunkBytes of host values rounded down to the
// codec's alignment (at least one aligned block). The same on every rank.
size_t quantizedChunkElems(const CollectiveArgs& args);

// args.collective kAllToAll or kAllToAllv, args.quantized set.
Status buildQuantizedAllToAll(const CollectiveArgs& args, Schedule* out);
// args.collective kAllGather, args.quantized set.
Status buildQuantizedAllGather(const CollectiveArgs& args, Schedule* out);

}  // namespace braid::algo
