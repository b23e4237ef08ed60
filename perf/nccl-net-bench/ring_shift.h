// A ring through an NCCL net plugin, driven the way NCCL's proxy drives it:
// each rank sends to the next and receives from the previous, a message cut
// into chunks with up to `depth` of them in flight each way (NCCL's
// NCCL_STEPS slots of NCCL_BUFFSIZE / NCCL_STEPS bytes). Knows the plugin's
// table only; how handles travel between ranks is the caller's business.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transports/netplugin/net_api.h"

namespace braid::netbench {

struct RingLinks {
  void* listen = nullptr;
  void* send = nullptr;  // to the next rank
  void* recv = nullptr;  // from the previous rank
};

// Connects to `nextHandle` and accepts on `links->listen` (made with listen()
// before the handles were exchanged) at once, so that no rank waits on a
// neighbour that is waiting too. "" on success, else what failed.
std::string connectRing(const netplugin::NetApi& net, int dev, void* nextHandle, RingLinks* links,
                        int timeoutMs);
void closeRing(const netplugin::NetApi& net, RingLinks* links);

struct ShiftPlan {
  size_t chunkBytes = 512 * 1024;
  int depth = 8;
  int sendTag = 0;  // NCCL tags with the sender's rank: ours,
  int recvTag = 0;  // and the previous rank's
};

// Sends send[0, bytes) to the next rank while receiving recv[0, bytes) from
// the previous one. mhandles from regMr on the two comms. "" on success.
std::string shift(const netplugin::NetApi& net, const RingLinks& links, const ShiftPlan& plan,
                  const uint8_t* send, uint8_t* recv, size_t bytes, void* sendMr, void* recvMr,
                  int timeoutMs);

}  // namespace braid::netbench
