// Plan: a schedule made ready to execute, immutable and shared.
//
// The executor needs more than the schedule's step list: who waits on each
// step (the reverse edges), the steps that can start at once, and each
// (peer, direction) channel's steps in order. A Plan computes that once. The
// communicator keeps the plans of recent collectives (plan_cache.h), so a
// training loop that repeats the same all-reduce skips the algorithm, the
// tuner and this preparation on every call after the first; what is left per
// call is the run's own state (executor.h), which reuses its memory too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "base/status.h"

namespace braid::core {

struct Plan {
  std::string algorithm;  // which builder made the schedule ("ring", "group", ...)
  algo::Schedule schedule;
  // Reverse edges as CSR: the steps that wait on step i are
  // dependents[dependentsBegin[i] .. dependentsBegin[i + 1]).
  std::vector<uint32_t> dependentsBegin;
  std::vector<algo::StepId> dependents;
  std::vector<algo::StepId> roots;  // steps without dependencies, in order
  // Comm steps per peer in schedule order, CSR by peer: sends to p are
  // sendQueue[sendBegin[p] .. sendBegin[p + 1]), likewise receives.
  std::vector<uint32_t> sendBegin, recvBegin;
  std::vector<algo::StepId> sendQueue, recvQueue;
  uint64_t bytesMoved = 0;  // sent + received by this rank, for the flight recorder

  size_t peerCount() const { return sendBegin.empty() ? 0 : sendBegin.size() - 1; }
};

// Builds the plan of `schedule` for `rank` of `nranks`. Fails (Internal) when a
// comm step names no valid peer or itself, or a dependency points forward:
// schedules come from braid's own algorithms, so that is a bug, caught before
// anything is sent.
Status makePlan(algo::Schedule&& schedule, std::string algorithm, int nranks, int rank,
                std::shared_ptr<const Plan>* out);

}  // namespace braid::core
