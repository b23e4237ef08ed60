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

// Where a rank's engine threads go when BRAID_BIND is unset: its own share of
// the CPUs it may run on, split evenly among the ranks of its host that may
// run on exactly those CPUs, so that two ranks' progress threads never take
// turns on one core. (Left to the scheduler, the stream threads of two ranks
// ping-ponging data often start on one core, woken where their waker ran, and
// stay there for milliseconds: measured on this 2-core VM, 2 ranks, a 256 KiB
// broadcast or 512 KiB scatter on streams took 130-155 us an op in about
// half the runs of 20 calls against 17-25 us; with the shares, 17-25 us in
// every run.) Empty, with *why saying so, when there is nothing to split: the
// CPUs are not known, no other rank shares them, or the ranks outnumber them
// (they compete for CPUs anyway; see CommTopology::competesForCpus).
CpuList engineCpuShare(const CommTopology& comm, int rank, std::string* why);

}  // namespace braid::topo
