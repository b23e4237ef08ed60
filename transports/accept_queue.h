// What the non-blocking listeners (tcp, shm, ibverbs) share: every setup in
// progress is driven at each accept(), so one stalled stranger never delays a
// genuine peer, and the connections it yields wait in the order they came up.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "transports/transport.h"

namespace braid::transport {

// Calls drive(p) on every pending setup and drops those it is finished with
// (drive returned false: handed over or refused). Order is not kept.
template <typename T, typename Drive>
void driveEach(std::vector<T>& pending, Drive&& drive) {
  for (size_t i = 0; i < pending.size();) {
    if (drive(pending[i])) {
      ++i;
    } else {
      pending[i] = std::move(pending.back());
      pending.pop_back();
    }
  }
}

// Accepted connections with their connectors' ids, oldest first.
class AcceptQueue {
 public:
  void push(std::unique_ptr<RecvComm> comm, uint64_t connectorId) {
    ready_.emplace_back(std::move(comm), connectorId);
  }
  bool empty() const { return ready_.empty(); }
  // Hands out the oldest; leaves *comm null when none is ready.
  void pop(std::unique_ptr<RecvComm>* comm, uint64_t* connectorId) {
    comm->reset();
    if (ready_.empty()) return;
    *comm = std::move(ready_.front().first);
    if (connectorId) *connectorId = ready_.front().second;
    ready_.pop_front();
  }

 private:
  std::deque<std::pair<std::unique_ptr<RecvComm>, uint64_t>> ready_;
};

}  // namespace braid::transport
