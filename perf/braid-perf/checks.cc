#include "checks.h"

#include <algorithm>

#include "codec.h"
#include "types.h"

namespace braid::perf {

CallBuffers prepareBuffers(const Collective& c, const ValuePlan& plan, const Layout& l, int rank, int root,
                           bool inPlace, void* send, void* recv) {
  const size_t ts = typeInfo(plan.type).size;
  char* sendRegion = static_cast<char*>(send);
  char* recvRegion = static_cast<char*>(recv);
  if (inPlace) {
    fillPoison(recv, std::max(l.sendCount, l.recvCount), plan.type);
    sendRegion = static_cast<char*>(recv) + l.inPlaceSendOffset * ts;
    recvRegion = static_cast<char*>(recv) + l.inPlaceRecvOffset * ts;
  } else {
    fillPoison(send, l.sendCount, plan.type);
    fillPoison(recv, l.recvCount, plan.type);
  }
  for (size_t j = 0; j < l.sendCount; ++j) {
    if (std::optional<uint64_t> index = c.sendIndex(l, rank, root, j)) {
      storeInt(sendRegion, j, plan.type, inputValue(plan, rank, *index));
    }
  }
  return {sendRegion, recvRegion};
}

int64_t countWrong(const Collective& c, const ValuePlan& plan, const Layout& l, int rank, int root,
                   const void* result) {
  int64_t wrong = 0;
  for (size_t k = 0; k < l.recvCount; ++k) {
    std::optional<int64_t> want = c.expected(plan, l, rank, root, k);
    if (!want) continue;
    std::optional<int64_t> got = loadInt(result, k, plan.type);
    if (!got || *got != *want) ++wrong;
  }
  return wrong;
}

}  // namespace braid::perf
