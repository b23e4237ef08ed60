// Queuing a device call on a braid stream: what staged calls
// (device_staging.cc) and device-direct calls (device_direct.cc) do alike,
// on the enqueueing thread and in queue order:
//   1. on a stream bound to a CUDA stream, an event at the CUDA stream's end
//      (the call's input is ready when it fires) and the sequence number the
//      call's completion will carry (CudaStreamOrder::markReady);
//   2. a ticket for each op the call will run, so that the communicator
//      orders them where the call was made, not where the worker runs it;
//   3. the call queued, to run on the stream's worker;
//   4. later work on the CUDA stream made to wait for that completion
//      (CudaStreamOrder::holdStream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/status.h"
#include "core/communicator.h"
#include "core/device_staging.h"
#include "core/op.h"
#include "core/stream.h"

namespace braid::core {

// Call: holds `CudaStreamOrder* order`, `void* ready` and `uint32_t
// sequence`, and runs with `Status run(Communicator&, const uint64_t*
// tickets)` the opCount ops it holds, in the order of their tickets, taken
// here (in call order, among the communicator's other calls).
template <typename Call>
Status queueDeviceCall(const std::shared_ptr<Communicator>& comm, Stream& stream, CudaStreamOrder* order,
                       std::shared_ptr<Call> call, size_t opCount) {
  if (order) {
    BRAID_RETURN_IF_ERROR(order->markReady(&call->ready, &call->sequence));
    call->order = order;
  }
  std::vector<uint64_t> tickets;
  tickets.reserve(opCount);
  for (size_t k = 0; k < opCount; ++k) tickets.push_back(comm->takeTicket());
  const uint32_t sequence = call->sequence;
  stream.enqueue([comm, queued = std::move(call), tickets = std::move(tickets)]() mutable {
    Status s = queued->run(*comm, tickets.data());
    queued.reset();  // back to the pools before the stream reports idle
    return s;
  });
  return order ? order->holdStream(sequence) : Status::ok();
}

}  // namespace braid::core
