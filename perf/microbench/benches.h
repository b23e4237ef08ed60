// The benchmark families of braid-microbench, registered from main().
//
// Every benchmark reports bytes per second of the MESSAGE: the size in its
// name (64KiB, 1MiB, 64MiB) of one input in its host type, per iteration.
// memcpy/<size> copies that many bytes; reduce/<type>/<op>/<size> computes
// dst = a op b over that many bytes per operand (so it moves 3x the bytes a
// memcpy moves 2x of); codec/<wire>/<host>/<encode|decode>/<impl>/<size>
// reads (encode) or writes (decode) that many host bytes.
#pragma once

namespace braid::microbench {

void registerMemcpy();
void registerReduce();
void registerCodec();

}  // namespace braid::microbench
