// LocalEnd: what one ShmTransport shares with its listeners and pending
// connects: options, tunables, its doorbell (the segment every peer gets a
// descriptor of) and its WaitSet. Shared, so endpoints may outlive the transport.
#pragma once

#include <memory>

#include "transports/shm/config.h"
#include "transports/shm/doorbell.h"
#include "transports/shm/segment.h"
#include "transports/shm/wait_set.h"
#include "transports/transport.h"

namespace braid::shm {

struct LocalEnd {
  transport::Options options;
  ShmConfig config;
  net::Fd bellFd;  // sent to every peer
  Mapping bell;
  std::shared_ptr<WaitSet> waitSet = std::make_shared<WaitSet>();
  DoorbellPage* page() const { return static_cast<DoorbellPage*>(bell.get()); }
};

}  // namespace braid::shm
