// Op: one launch on a communicator: a plan (its schedule, prepared) plus the
// buffers it runs over.
// A single collective has buffers {input, output}; a fused group has two per
// member op (see algo::Schedule::append).
#pragma once

#include <memory>
#include <vector>

#include "algorithms/collective.h"
#include "core/executor.h"
#include "core/plan.h"

namespace braid::core {

struct Op {
  algo::Collective collective = algo::Collective::kAllReduce;
  // What the user asked for, for the flight recorder and error messages.
  DataType dtype = DataType::kUint8;
  size_t count = 0;
  int rootOrPeer = -1;
  std::shared_ptr<const Plan> plan;  // shared with the communicator's plan cache
  std::vector<BufferBinding> buffers;
};

}  // namespace braid::core
