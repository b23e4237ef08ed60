// The braid call behind each collective of the table in collectives.h.
#pragma once

#include <braid/braid.h>

#include <cstddef>

#include "collectives.h"

namespace braid::perf {

struct CallArgs {
  const void* send;
  void* recv;
  size_t count;
  braidDataType_t type;
  braidRedOp_t op;
  int root;
  int rank;
  int nranks;
  braidComm_t comm;
  braidStream_t stream;
};

// Issues one call of kind (sendrecv: a group of one send and one receive).
braidResult_t callCollective(CollectiveKind kind, const CallArgs& a);

}  // namespace braid::perf
