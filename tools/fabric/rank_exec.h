// `fabric _rank NAME P -- program args...`: the first thing each rank runs.
// braid-run's supervisor starts every rank with the same command, so the
// placement happens here: rank k (from BRAID_RANK) goes into NAME-host(k / P)
// through `ip netns exec`, with BRAID_HOSTID naming that host (all namespaces
// share one hostname and boot id, which braid would otherwise take for one
// machine) and LOCAL_RANK / LOCAL_WORLD_SIZE describing the host's ranks.
// Not for users; hidden from --help.
#pragma once

namespace braid::fabric {

// argv[0] is "fabric", argv[1] "_rank". Execs on success; returns 127 after
// printing why otherwise.
int rankExec(int argc, char** argv);

}  // namespace braid::fabric
