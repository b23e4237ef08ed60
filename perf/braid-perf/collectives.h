// The table of collectives braid-perf measures: for each, how a message size
// maps onto counts and buffers (as nccl-tests defines them), its bus-bandwidth
// factor, the inputs every rank provides and the output every rank expects.
// Pure: the braid calls themselves are in calls.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "values.h"

namespace braid::perf {

struct Layout {
  size_t count = 0;      // the count argument of the call (the "count" column)
  size_t sendCount = 0;  // elements in the send buffer
  size_t recvCount = 0;  // elements in the receive buffer
  size_t bytes = 0;      // the "size" column: the larger buffer, in bytes
  // In place, both pointers lie in one buffer of max(sendCount, recvCount)
  // elements, at these element offsets (braid.h's in-place conventions).
  size_t inPlaceSendOffset = 0;
  size_t inPlaceRecvOffset = 0;
};

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  kGather,
  kScatter
};

struct Collective {
  CollectiveKind kind;
  const char* name;  // the sub-command, also the key of BRAID_ALGO
  bool reduces;      // takes -o; its inputs follow the op's value plan
  bool rooted;       // takes -r
  bool hasInPlace;   // false: the in-place columns print N/A
  double (*busFactor)(int nranks);
  Layout (*layout)(size_t bytes, size_t typeSize, int nranks, int rank, int root);
  // The global element index (for inputValue) of send element j on rank, or
  // std::nullopt when rank's send buffer is not read (non-root broadcast,
  // scatter).
  std::optional<uint64_t> (*sendIndex)(const Layout& l, int rank, int root, size_t j);
  // The value receive element k must hold on rank, or std::nullopt when it
  // is unspecified (a non-root rank of reduce, gather).
  std::optional<int64_t> (*expected)(const ValuePlan& plan, const Layout& l, int rank, int root, size_t k);
};

const std::vector<Collective>& collectives();
const Collective* findCollective(const std::string& name);

}  // namespace braid::perf
