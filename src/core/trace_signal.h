// SIGUSR1 -> every live communicator of the process dumps its flight recorder
// into BRAID_TRACE_DIR, so an operator can ask a hung job where each rank is
// (`kill -USR1 <pids>`) without stopping it.
//
// Installed only when BRAID_TRACE_DIR is set and SIGUSR1 still has its default
// disposition (a handler of the application is never replaced). The signal
// handler only writes a byte to a pipe; a watcher thread does the dumping.
#pragma once

#include <memory>

namespace braid::core {

class Communicator;

void watchForTraceSignal(const std::shared_ptr<Communicator>& comm);

}  // namespace braid::core
