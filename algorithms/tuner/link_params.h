// The fabric parameters the tuner's cost model runs on: defaults measured on
// loopback TCP, overridable from the environment, agreed on by every rank
// (picks must be identical on all ranks, so parameters that differ between
// ranks would desynchronise them: the communicator should take rank 0's).
//
//   BRAID_LINK_ALPHA_US   per-message latency in microseconds (default kLoopbackAlphaUs)
//   BRAID_LINK_BETA_GBPS  link bandwidth in GB/s, 1e9 bytes per second
//                         (default kLoopbackGBps); 0 turns the cost model off
//                         and the fixed fallback table decides
//   BRAID_REDUCE_GBPS     reduction throughput in GB/s of output (default kReduceGBps)
//
// The same values serve the intra-host and the inter-host link class until
// topology discovery or a measured mode tells them apart.
#pragma once

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

struct LinkSettings {
  double alphaUs = kLoopbackAlphaUs;
  double betaGBps = kLoopbackGBps;
  double reduceGBps = kReduceGBps;

  bool modelEnabled() const { return betaGBps > 0; }
  // Both link classes from these settings, ranks placed ranksPerHost per host.
  CostParams costParams(int ranksPerHost) const;
};

// Defaults overridden by the BRAID_LINK_* / BRAID_REDUCE_GBPS variables. A
// value that is not a non-negative number (or a zero reduce rate) is an
// InvalidArgument naming the variable.
Status linkSettingsFromEnvironment(LinkSettings* out);

}  // namespace braid::algo
