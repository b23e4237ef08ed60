// The fabric parameters the tuner's cost model runs on: defaults measured on
// loopback TCP, overridable from the environment, agreed on by every rank
// (picks must be identical on all ranks, so parameters that differ between
// ranks would desynchronise them: the communicator should take rank 0's).
//
//   BRAID_LINK_ALPHA_US   per-message latency in microseconds (default kLoopbackAlphaUs)
//   BRAID_LINK_BETA_GBPS  link bandwidth in GB/s, 1e9 bytes per second
//                         (default kLoopbackGBps); 0 turns the cost model off
//                         and the fixed fallback table decides
//   BRAID_LINK_INTRA_ALPHA_US, BRAID_LINK_INTRA_GBPS
//                         the same for two ranks of one host over shared
//                         memory (defaults kShmAlphaUs, kShmGBps)
//   BRAID_REDUCE_GBPS     reduction throughput in GB/s of output (default kReduceGBps)
//
// The network values serve both link classes where ranks of a host talk over
// the network too (BRAID_TRANSPORT forcing another transport than shm). With
// one class for both, the model could not see what a hierarchical algorithm
// gains by keeping traffic inside a host.
#pragma once

#include <string>

#include "algorithms/sim/cost_model.h"
#include "base/status.h"

namespace braid::algo {

// Measured on the 2-core Debian 12 VM the project is developed on, while
// other builds ran (so rounded towards the slow side):
//   alpha: braid-run -n 2 -- braid-perf sendrecv -b 8 -e 64M -f 8: 8 B takes
//          72 us (a ring shift: one message each way, wake-ups included);
//   beta:  the same sweep at 2 MiB runs at 1.6 GB/s (16 MiB: 0.7-1.6 GB/s);
//   gamma: kernels::reduce of 4 Mi floats (sum), best of 20: 15 GB/s of
//          output; 10 GB/s leaves room for ranks contending for memory.
constexpr double kLoopbackAlphaUs = 70.0;
constexpr double kLoopbackGBps = 1.5;
constexpr double kReduceGBps = 10.0;
// Shared memory on the same VM: braid-run -n 2 -- braid-perf sendrecv -b 8
// -e 16M -f 8 -n 200: 8 B in 3-4 us, 6.6 GB/s at 256 KiB, 10 at 2 MiB, 3 at
// 16 MiB (out of cache).
constexpr double kShmAlphaUs = 4.0;
constexpr double kShmGBps = 5.0;

struct LinkSettings {
  double alphaUs = kLoopbackAlphaUs;
  double betaGBps = kLoopbackGBps;
  double intraAlphaUs = kShmAlphaUs;
  double intraGBps = kShmGBps;
  double reduceGBps = kReduceGBps;

  bool modelEnabled() const { return betaGBps > 0; }
  // Both link classes, ranks placed ranksPerHost per host; the ranks of a
  // host talk over shared memory or, without it, over the network.
  CostParams costParams(int ranksPerHost, bool sharedMemory = true) const;
};

// Whether ranks of one host talk over shared memory, given BRAID_TRANSPORT's
// value: unless it forces a transport other than shm (see peer_connector.cc).
// A host that cannot create shm falls back to the network, which the model
// does not learn of.
inline bool sharedMemoryInsideHosts(const std::string& forcedTransport) {
  return forcedTransport.empty() || forcedTransport == "shm";
}

// Defaults overridden by the BRAID_LINK_* / BRAID_REDUCE_GBPS variables. A
// value that is not a non-negative number (or a zero reduce or intra-host
// rate) is an InvalidArgument naming the variable.
Status linkSettingsFromEnvironment(LinkSettings* out);

}  // namespace braid::algo
