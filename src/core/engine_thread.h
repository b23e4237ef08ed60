// Engine threads: the threads braid itself owns that run collectives (stream
// workers). Only these are ever bound by BRAID_BIND; a thread of the user's
// that runs a collective inline (NULL stream) keeps the affinity it has.
#pragma once

#include "topo/comm_view.h"

namespace braid::core {

// Called by a stream worker when it starts.
void markEngineThread();
bool isEngineThread();

// With BRAID_BIND on, binds the calling engine thread once, for the first
// communicator it runs an op of (topo/bind_policy.h); later calls and other
// threads do nothing. Failures are logged, never fatal: binding is an
// optimisation.
void bindEngineThreadOnce(const topo::CommTopology& comm, int rank);

}  // namespace braid::core
