// The exchange collectives (all-gather, all-to-all, all-to-all-v) with an
// optional codec: nullptr runs the plain collective, a codec the quantized one
// (algorithms/quantized). Shared by the plain entry points (collectives.cc)
// and the quantized ones (quantized.cc); fn names the C entry in messages.
#pragma once

#include <braid/braid.h>

#include "base/status.h"
#include "kernels/codec.h"

namespace braid::api {

Status allGather(const char* fn, const void* send, void* recv, size_t sendcount, braidDataType_t t,
                 const kernels::CodecParams* codec, braidComm_t comm, braidStream_t stream);
Status allToAll(const char* fn, const void* send, void* recv, size_t count, braidDataType_t t,
                const kernels::CodecParams* codec, braidComm_t comm, braidStream_t stream);
Status allToAllv(const char* fn, const void* send, const size_t sendcounts[], const size_t sdispls[],
                 void* recv, const size_t recvcounts[], const size_t rdispls[], braidDataType_t t,
                 const kernels::CodecParams* codec, braidComm_t comm, braidStream_t stream);

}  // namespace braid::api
