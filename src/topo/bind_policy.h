// Where BRAID_BIND=1 puts a rank's engine (stream) thread: next to the NIC
// its traffic leaves through when it has peers on other hosts (the NUMA node
// of that NIC), else on its own NUMA node (its memory), else nowhere. A pure
// function of the communicator-wide topology, so the choice is testable on
// described machines this box is not.
#pragma once

#include <string>

#include "topo/comm_view.h"

namespace braid::topo {

struct BindTarget {
  enum class Kind { kNone, kNic, kNuma } kind = Kind::kNone;
  std::string nic;  // kNic
  int numa = -1;    // kNuma
  std::string why;  // for the log: what was chosen and why
};

// socketIfname: BRAID_SOCKET_IFNAME's value ("" when unset): a NIC whose name
// starts with it (or equals it after a leading '=') is preferred; a '^'
// (exclusion) prefix counts as unset.
BindTarget chooseBindTarget(const CommTopology& comm, int rank, const std::string& socketIfname);

}  // namespace braid::topo
