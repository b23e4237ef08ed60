// Op: one launch on a communicator: a schedule plus the buffers it runs over.
// A single collective has buffers {input, output}; a fused group has two per
// member op (see algo::Schedule::append).
#pragma once

#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/schedule.h"
#include "core/executor.h"

namespace braid::core {

struct Op {
  algo::Collective collective = algo::Collective::kAllReduce;
  std::string algorithm;  // which builder made the schedule ("ring", "group", ...)
  // What the user asked for, for the flight recorder and error messages.
  DataType dtype = DataType::kUint8;
  size_t count = 0;
  int rootOrPeer = -1;
  algo::Schedule schedule;
  std::vector<BufferBinding> buffers;
};

}  // namespace braid::core
